/* Section 7: Siconos itself as the peer. The .dat files of the problems
 * directory (Debian's Siconos 4.4 reads .dat, not HDF5) solved by
 * Siconos's numerics library from C, NSGS and the Alart-Curnier
 * semismooth Newton NSN with their default options, beside clcone's
 * default coulomb solvers on the reference and on the device in double
 * and, when the library offers it, newton. One tolerance, the caps
 * (300,000 sweeps, 1,000 Newton steps), and one judge: every solver's
 * reactions measured by clcone_error_coulomb, never by the solver's own
 * report. Siconos is linked into build/bench only (BENCH_SICONOS, set by
 * the Makefile when libsiconos-numerics-dev is installed). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS: shared memory with the Siconos child */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_SICONOS
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <numerics/FrictionContactProblem.h>
#include <numerics/Friction_cst.h>
#include <numerics/NonSmoothDrivers.h>
#include <numerics/NumericsVerbose.h>
#include <numerics/SolverOptions.h>

#define PEER_TOL 1e-8
#define PEER_SWEEPS 300000 /* issue 23's caps, for every solver of the table */
#define PEER_NEWTON 1000
#define PEER_MAXFILES 64
#define PEER_MAXSOLVERS 6
#define PEER_EQUAL_MS 0.5 /* solves this short on both sides count as equal */

typedef struct peer_solver {
    char label[96];
    int siconos_id;       /* Siconos's solver id, or -1 for clcone */
    clcone_context *ctx;  /* clcone: NULL is the reference */
    clcone_solver solver; /* clcone: resolved, never DEFAULT */
    int newton;           /* counts Newton steps: capped at PEER_NEWTON */
    int dev_default;      /* clcone's default on the device */
} peer_solver;

typedef struct peer_run {
    int ran;       /* 0: no reactions (note says why) */
    int iters;
    double ms;     /* the solve alone; without reactions, what it cost the bench */
    double error;  /* clcone_error_coulomb of its reactions */
    int capped;    /* the solver itself reported no convergence */
    int guarded;   /* stopped by the time guard, not by the caps */
    char note[160];
} peer_run;

static int peer_converged(const peer_run *r) { return r->ran && r->error <= PEER_TOL; }

/* Seconds any one solve may take: a hang guard in a full run; in a quick
 * one also the cap that keeps it short. */
static int peer_guard(const bench *b) { return b->quick ? 2 : 120; }

/* A solver's iteration cap. */
static int peer_cap(const peer_solver *s) { return s->newton ? PEER_NEWTON : PEER_SWEEPS; }

/* What the forked Siconos solve hands back, in memory shared with the
 * parent; its reactions follow it. */
typedef struct sico_shared {
    double ms;
    int done, info, iters, n3;
} sico_shared;

enum { SICO_EXIT_READ = 3, SICO_EXIT_SIZE, SICO_EXIT_NOMEM };

/* The child: reads the file with Siconos's own reader (untimed), solves
 * it from r = 0 (timed, short solves repeated) and leaves the result in sh
 * and r. Never returns.
 * Its stdout and stderr go to the log, so that nothing Siconos prints
 * (verbosity off, but its warnings and fatal errors print regardless)
 * reaches the bench's output. */
static void sico_child(const char *path, int id, int cap, int n3, int logfd, sico_shared *sh, double *r)
{
    FrictionContactProblem *p;
    SolverOptions *o;
    double *u, t, last;
    int runs = 0;
    if (logfd >= 0) {
        dup2(logfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
    }
    numerics_set_verbose(0);
    p = frictionContact_new_from_filename(path);
    if (!p) _exit(SICO_EXIT_READ);
    sh->n3 = p->dimension * p->numberOfContacts;
    if (p->dimension != 3 || sh->n3 != n3) _exit(SICO_EXIT_SIZE);
    o = solver_options_create(id);
    u = calloc((size_t)n3 + 1, sizeof *u);
    if (!o || !u) _exit(SICO_EXIT_NOMEM);
    o->dparam[SICONOS_DPARAM_TOL] = PEER_TOL;
    o->iparam[SICONOS_IPARAM_MAX_ITER] = cap;
    sh->ms = INFINITY;
    do { /* repeated as clcone's solves are (bench_repeat) */
        memset(r, 0, (size_t)n3 * sizeof *r);
        memset(u, 0, (size_t)n3 * sizeof *u);
        t = bench_now();
        sh->info = fc3d_driver(p, r, u, o);
        last = (bench_now() - t) * 1e3;
        sh->ms = fmin(sh->ms, last);
    } while (bench_repeat(++runs, last));
    sh->iters = o->iparam[SICONOS_IPARAM_ITER_DONE];
    sh->done = 1;
    fflush(NULL);
    _exit(0);
}

/* Why a child that left no result stopped. */
static void sico_why(int ws, int guard, const sico_shared *sh, int n3, char *note, size_t len)
{
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
        snprintf(note, len, "killed at the %d s guard", guard);
    else if (WIFSIGNALED(ws))
        snprintf(note, len, "Siconos crashed (signal %d, %s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else if (WEXITSTATUS(ws) == SICO_EXIT_READ)
        snprintf(note, len, "Siconos cannot read the file");
    else if (WEXITSTATUS(ws) == SICO_EXIT_SIZE)
        snprintf(note, len, "Siconos reads %d unknowns, clcone %d", sh->n3, n3);
    else if (WEXITSTATUS(ws) == SICO_EXIT_NOMEM)
        snprintf(note, len, "out of memory in the Siconos child");
    else
        snprintf(note, len, "Siconos exited with status %d", WEXITSTATUS(ws));
}

/* One Siconos solve in a child process, so that a crash or an exit() in
 * Siconos ends the child, not the bench; alarm() bounds it in time. r gets
 * its reactions (3n). The problem is read in the child: reading it in the
 * bench would put Siconos's reader, too, in the bench's process. */
static void sico_run(const char *path, const peer_solver *s, int n3, int guard, int logfd, double *r, peer_run *out)
{
    size_t len = sizeof(sico_shared) + (size_t)n3 * sizeof(double);
    sico_shared *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int ws = 0;
    double t = bench_now();
    pid_t pid;
    if (sh == MAP_FAILED) {
        snprintf(out->note, sizeof out->note, "mmap: %s", strerror(errno));
        return;
    }
    /* what the bench's streams hold must not be written twice, once by the child */
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        /* the parent's handlers (POCL's LLVM installs some) would swallow
         * or misreport a crash of Siconos: it must end the child */
        static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM};
        for (size_t i = 0; i < sizeof crash / sizeof *crash; ++i) signal(crash[i], SIG_DFL);
        alarm((unsigned)guard);
        sico_child(path, s->siconos_id, peer_cap(s), n3, logfd, sh, (double *)(sh + 1));
    }
    if (pid < 0) snprintf(out->note, sizeof out->note, "fork: %s", strerror(errno));
    else {
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
        out->ms = (bench_now() - t) * 1e3;
        if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && sh->done) {
            out->ran = 1;
            out->iters = sh->iters;
            out->ms = sh->ms;
            out->capped = sh->info != 0;
            memcpy(r, sh + 1, (size_t)n3 * sizeof *r);
        } else {
            sico_why(ws, guard, sh, n3, out->note, sizeof out->note);
            out->guarded = WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM;
        }
    }
    munmap(sh, len);
}

/* One clcone solve: a plan made untimed, its solve timed (short ones
 * repeated, bench_repeat), as section 4. */
static void clc_run(const clcone_problem *p, const peer_solver *s, int guard, double *r, peer_run *out)
{
    clcone_plan *plan;
    clcone_result res;
    clcone_error err;
    clcone_status st;
    if (bench_coulomb_plan(s->ctx, p, s->solver, PEER_TOL, peer_cap(s), guard, &plan, &err)) {
        snprintf(out->note, sizeof out->note, "set-up: %.140s", err.msg);
        return;
    }
    st = bench_plan_solve_best(plan, r, 3 * (size_t)p->n, &res, &out->ms, &err);
    clcone_plan_free(plan);
    if (st) {
        snprintf(out->note, sizeof out->note, "%.150s", err.msg);
        return;
    }
    out->ran = 1;
    out->iters = res.items[0].iters;
    out->capped = res.items[0].status != CLCONE_CONVERGED;
    /* maxiter short of the iteration cap: the time cap, which is the guard */
    out->guarded = res.items[0].status == CLCONE_MAXITER && res.items[0].iters < peer_cap(s);
    clcone_result_free(&res);
}

/* Adds clcone's solver v (CLCONE_SOLVER_DEFAULT: the backend's default at
 * PEER_TOL) on ctx, unless the table has it already. */
static void add_clcone(peer_solver *s, int *n, clcone_context *ctx, clcone_solver v)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.solver = v;
    o.tol = PEER_TOL;
    clcone_options_resolve(&o, ctx);
    for (int i = 0; i < *n; ++i)
        if (s[i].siconos_id < 0 && s[i].ctx == ctx && s[i].solver == o.solver) return;
    memset(&s[*n], 0, sizeof s[*n]);
    s[*n].siconos_id = -1;
    s[*n].ctx = ctx;
    s[*n].solver = o.solver;
    s[*n].newton = strcmp(clcone_solver_name(o.solver), "newton") == 0;
    s[*n].dev_default = ctx && v == CLCONE_SOLVER_DEFAULT;
    snprintf(s[*n].label, sizeof s[*n].label, "clcone %s %s%s", ctx ? "device" : "reference",
             clcone_solver_name(o.solver), v == CLCONE_SOLVER_DEFAULT ? " (default)" : "");
    (*n)++;
}

/* Whether the library's solver table offers solver v for coulomb on the
 * reference (device 0) or on devices. */
static int offered(clcone_solver v, int device)
{
    for (int i = 0; clcone_offer_at(i); ++i) {
        const clcone_offer *o = clcone_offer_at(i);
        if (o->model == CLCONE_MODEL_COULOMB && o->solver == v && (device ? o->device : o->reference)) return 1;
    }
    return 0;
}

/* The table's columns: Siconos's two, clcone's defaults and, found by
 * name at run time so that this section runs before and after the library
 * has it, newton. */
static int peer_solvers(bench *b, peer_solver *s)
{
    int n = 2;
    clcone_solver newton;
    clcone_error err;
    memset(s, 0, 2 * sizeof *s);
    s[0].siconos_id = SICONOS_FRICTION_3D_NSGS;
    snprintf(s[0].label, sizeof s[0].label, "Siconos NSGS");
    s[1].siconos_id = SICONOS_FRICTION_3D_NSN_AC;
    s[1].newton = 1;
    snprintf(s[1].label, sizeof s[1].label, "Siconos NSN (Alart-Curnier)");
    add_clcone(s, &n, NULL, CLCONE_SOLVER_DEFAULT);
    if (b->dctx) add_clcone(s, &n, b->dctx, CLCONE_SOLVER_DEFAULT);
    if (clcone_parse_solver("newton", &newton, &err) == CLCONE_OK) {
        if (offered(newton, 0)) add_clcone(s, &n, NULL, newton);
        if (b->dctx && offered(newton, 1)) add_clcone(s, &n, b->dctx, newton);
    }
    return n;
}

/* Every solver on the file at path (read by clcone as p), each judged by
 * clcone_error_coulomb. */
static void peer_file(const char *path, const clcone_problem *p, const peer_solver *s, int ns, int guard, int logfd,
                      peer_run *runs)
{
    double *r = calloc(3 * (size_t)p->n + 3, sizeof *r);
    if (!r) {
        for (int k = 0; k < ns; ++k) snprintf(runs[k].note, sizeof runs[k].note, "out of memory");
        return;
    }
    for (int k = 0; k < ns; ++k) {
        memset(&runs[k], 0, sizeof runs[k]);
        if (s[k].siconos_id >= 0) sico_run(path, &s[k], 3 * p->n, guard, logfd, r, &runs[k]);
        else clc_run(p, &s[k], guard, r, &runs[k]);
        if (runs[k].ran) runs[k].error = clcone_error_coulomb(p, r, 0, p->n, NULL);
    }
    free(r);
}

static void peer_cell(FILE *f, const peer_run *r)
{
    char t[64];
    if (!r->ran) fprintf(f, " **failed**: %s |", r->note[0] ? r->note : "not run");
    else
        fprintf(f, " %s%d / %s / %.1e%s |", peer_converged(r) ? "" : "**failed** ", r->iters,
                bench_fmt_ms(r->ms, t, sizeof t), r->error,
                peer_converged(r) ? "" : r->guarded ? " (guard)" : r->capped ? " (cap)" : " (own test met)");
}

/* Index of the faster of Siconos's two runs on a file that converged, -1
 * when neither did. */
static int sico_best(const peer_run *runs)
{
    int a = peer_converged(&runs[0]), c = peer_converged(&runs[1]);
    if (!a && !c) return -1;
    return !c || (a && runs[0].ms <= runs[1].ms) ? 0 : 1;
}

/* The column of clcone's default on the device, -1 without a device. */
static int dev_column(const peer_solver *s, int ns)
{
    for (int k = 0; k < ns; ++k)
        if (s[k].dev_default) return k;
    return -1;
}

/* Files x solvers, then per solver the number converged and the time. */
static void peer_table(FILE *f, char *const *files, const int *nctc, int nf, const peer_solver *s, int ns,
                       peer_run (*runs)[PEER_MAXSOLVERS])
{
    char t[64];
    int dev = dev_column(s, ns);
    fprintf(f, "| file | contacts |");
    for (int k = 0; k < ns; ++k) fprintf(f, " %s |", s[k].label);
    fprintf(f, "%s\n|---|---|", dev >= 0 ? " device default / best Siconos (within 2x?) |" : "");
    for (int k = 0; k <= ns - (dev < 0); ++k) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int i = 0; i < nf; ++i) {
        int best = sico_best(runs[i]);
        fprintf(f, "| %s | %d |", files[i], nctc[i]);
        for (int k = 0; k < ns; ++k) peer_cell(f, &runs[i][k]);
        if (dev >= 0 && best >= 0 && peer_converged(&runs[i][dev])) {
            double a = runs[i][dev].ms, c = runs[i][best].ms;
            if (a < PEER_EQUAL_MS && c < PEER_EQUAL_MS) fprintf(f, " equal (both < 0.5 ms) |");
            else fprintf(f, " %.2f (%s) |", a / c, a <= 2 * c ? "yes" : "**no**");
        } else if (dev >= 0) fprintf(f, " - |");
        fprintf(f, "\n");
    }
    fprintf(f, "| **converged** | |");
    for (int k = 0; k < ns; ++k) {
        int c = 0;
        for (int i = 0; i < nf; ++i) c += peer_converged(&runs[i][k]);
        fprintf(f, " %d / %d |", c, nf);
    }
    fprintf(f, "%s\n| **time, all files** | |", dev >= 0 ? " |" : "");
    for (int k = 0; k < ns; ++k) {
        double sum = 0;
        int lost = 0; /* a run without its own time: the total is a lower bound */
        for (int i = 0; i < nf; ++i) {
            sum += runs[i][k].ms;
            lost += !runs[i][k].ran;
        }
        fprintf(f, " %s%s |", lost ? ">= " : "", bench_fmt_ms(sum, t, sizeof t));
    }
    fprintf(f, "%s\n\n", dev >= 0 ? " |" : "");
}

/* Which files each solver fails, and the files neither Siconos solver
 * reaches the tolerance on, with the clcone solvers that do. `(guard)`
 * marks a run the time guard stopped before its caps. */
static void peer_fails(FILE *f, char *const *files, int nf, const peer_solver *s, int ns,
                       peer_run (*runs)[PEER_MAXSOLVERS])
{
    int hard = 0;
    for (int k = 0; k < ns; ++k) {
        int c = 0;
        fprintf(f, "- %s fails:", s[k].label);
        for (int i = 0; i < nf; ++i)
            if (!peer_converged(&runs[i][k]))
                fprintf(f, "%s %s%s", c++ ? "," : "", files[i], runs[i][k].guarded ? " (guard)" : "");
        fprintf(f, "%s\n", c ? "" : " none");
    }
    fprintf(f, "\nFiles on which neither Siconos solver reaches %.0e:", PEER_TOL);
    for (int i = 0; i < nf; ++i) {
        int c = 0;
        if (sico_best(runs[i]) >= 0) continue;
        fprintf(f, "%s %s%s (clcone converges with:", hard++ ? ";" : "", files[i],
                runs[i][0].guarded || runs[i][1].guarded ? " (within the guard)" : "");
        for (int k = 2; k < ns; ++k)
            if (peer_converged(&runs[i][k])) fprintf(f, "%s %s", c++ ? "," : "", s[k].label);
        fprintf(f, "%s)", c ? "" : " none");
    }
    fprintf(f, "%s\n", hard ? "." : " none.");
}

/* The device default's standing against Siconos's faster converged
 * solver on each file (issue 23's terms), and its time on BoxesStack1
 * (the bound: 100 ms). */
static void peer_standing(FILE *f, char *const *files, int nf, const peer_solver *s, int ns,
                          peer_run (*runs)[PEER_MAXSOLVERS])
{
    int dev = dev_column(s, ns), within = 0, both = 0;
    double best_sum = 0, dev_sum = 0;
    char t[64], t2[64];
    if (dev < 0) return;
    for (int i = 0; i < nf; ++i) {
        int best = sico_best(runs[i]);
        if (best < 0) continue;
        best_sum += runs[i][best].ms;
        if (!peer_converged(&runs[i][dev])) continue;
        both++;
        dev_sum += runs[i][dev].ms;
        within += runs[i][dev].ms <= 2 * runs[i][best].ms
                  || (runs[i][dev].ms < PEER_EQUAL_MS && runs[i][best].ms < PEER_EQUAL_MS);
    }
    fprintf(f, "\nOn the files where a Siconos solver converges, %s converges on %d, within 2x of Siconos's faster "
               "converged solver on %d (both under 0.5 ms counts as equal); its time on them %s, Siconos's best per "
               "file summed %s.\n",
            s[dev].label, both, within, bench_fmt_ms(dev_sum, t, sizeof t), bench_fmt_ms(best_sum, t2, sizeof t2));
    for (int i = 0; i < nf; ++i)
        if (strstr(files[i], "BoxesStack1") && runs[i][dev].ran)
            fprintf(f, "%s on %s: %s, %s (issue 23's bound: 100 ms).\n", s[dev].label, files[i],
                    bench_fmt_ms(runs[i][dev].ms, t, sizeof t), peer_converged(&runs[i][dev]) ? "converged" : "**failed**");
}

/* Reads and solves every file, within the section's budget. */
static void peer_solve_all(bench *b, FILE *f, char *const *files, int nf, const peer_solver *s, int ns, int *nctc,
                           peer_run (*runs)[PEER_MAXSOLVERS], int logfd)
{
    int guard = peer_guard(b);
    double budget = b->quick ? 60 : 900, t0 = bench_now();
    for (int i = 0; i < nf; ++i) {
        char path[4096];
        clcone_problem p;
        clcone_error err;
        snprintf(path, sizeof path, "%s/%s", b->problems, files[i]);
        const char *why = NULL;
        nctc[i] = 0;
        if (bench_now() - t0 > budget) why = "skipped (section budget)";
        else if (clcone_read_problem_hdf5(path, &p, &err)) {
            bench_fail(b, f, "%s: %s", files[i], err.msg);
            why = "clcone cannot read it";
        }
        if (why) {
            for (int k = 0; k < ns; ++k) snprintf(runs[i][k].note, sizeof runs[i][k].note, "%s", why);
            continue;
        }
        nctc[i] = p.n;
        fprintf(stderr, "bench:   peer %s (%d contacts, %.0f s)\n", files[i], p.n, bench_elapsed(b));
        peer_file(path, &p, s, ns, guard, logfd, runs[i]);
        clcone_problem_free(&p);
    }
}

/* The section's terms, before its table. */
static void peer_intro(const bench *b, FILE *f, int nf, const char *log)
{
    fprintf(f, "The %d `.dat` files of `%s`, model coulomb, tolerance %.0e, from r = 0, solved by Siconos %s "
               "(its numerics library from C: NSGS, and NSN with the Alart-Curnier formulation, both with "
               "`solver_options_create`'s defaults but for the tolerance and the caps) and by clcone's defaults for "
               "coulomb on the reference (double, one thread) and on the device in double (%s), and `newton` where "
               "the library offers it. Caps: %d sweeps for first-order methods, %d Newton steps for Newton's, and "
               "a %d s guard on every solve.\n\n"
               "**One judge**: every solver's reactions are measured by `clcone_error_coulomb` (Siconos's current "
               "relative natural-map error, FORMATS.md section 2); a run converges when that error is at most %.0e, "
               "whatever the solver itself reports: `(cap)` marks a run stopped by a cap, `(own test met)` one "
               "whose own test said converged. Time: the solve alone, the problem read before the clock starts "
               "(Siconos: `fc3d_driver`; clcone: `clcone_plan_solve` on a plan made untimed, as in section 4); a "
               "solve under %.0f ms runs again, up to %d runs in all, on either side, and its time is the shortest "
               "(a single sub-millisecond time swung 2x between runs of the bench). Each "
               "Siconos solve runs in a forked child, so that a crash or an exit() in Siconos costs its cell, not "
               "the bench; a killed run's time is what it cost before it was killed, and a total with one is a lower "
               "bound (`>=`). Siconos's own output goes to `%s`. Cells: iterations (sweeps or Newton steps) / time "
               "/ error.\n\n",
            nf, b->problems, PEER_TOL, BENCH_SICONOS_VERSION, b->dctx ? b->dev_name : "no double context",
            PEER_SWEEPS, PEER_NEWTON, peer_guard(b), PEER_TOL, BENCH_REPEAT_MS, BENCH_REPEATS, log);
}

void bench_section_peer(bench *b, FILE *f)
{
    char *files[PEER_MAXFILES], log[4096];
    int nf = bench_problem_files(b, f, 1, files, PEER_MAXFILES), ns, logfd, nctc[PEER_MAXFILES];
    peer_solver s[PEER_MAXSOLVERS];
    peer_run (*runs)[PEER_MAXSOLVERS];
    if (nf < 0) return;
    ns = peer_solvers(b, s);
    runs = calloc((size_t)nf + 1, sizeof *runs);
    snprintf(log, sizeof log, "%s/siconos.log", b->out);
    peer_intro(b, f, nf, log);
    logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0) {
        fprintf(f, "(cannot write %s: %s; Siconos's output is discarded)\n\n", log, strerror(errno));
        logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    }
    if (!runs) bench_fail(b, f, "out of memory");
    else {
        peer_solve_all(b, f, files, nf, s, ns, nctc, runs, logfd);
        peer_table(f, files, nctc, nf, s, ns, runs);
        peer_fails(f, files, nf, s, ns, runs);
        peer_standing(f, files, nf, s, ns, runs);
    }
    if (logfd >= 0) close(logfd);
    free(runs);
    for (int i = 0; i < nf; ++i) free(files[i]);
}

#else

void bench_section_peer(bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "**Skipped**: build/bench was built without Siconos (libsiconos-numerics-dev was not installed and "
               "`make bench` could not install it: it installs it when run as root, else it prints the "
               "`sudo apt-get install` line).\n");
    fprintf(stderr, "bench: section 7 skipped: built without Siconos (libsiconos-numerics-dev)\n");
}

#endif
