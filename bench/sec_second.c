/* Section 10: second order where first-order methods stall, on the
 * second-order issue's cases: 256 tiny pile scenes solved as one batch,
 * stacks of 80 and 600 contacts, a 3,600-contact wall and piles of
 * 3,000 and 10,200 contacts, to 1e-8 in
 * double, each model's default on the device and on the reference. The
 * CLI runs them as a user does (`clcone solve SCENE...`); its lines give
 * the statuses, iterations and the solve's time (set-up and kernel
 * compiles left out). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "core/newton_limits.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TINY_PILES 256

/* One `clcone solve` run: its last line, and for a batch its problems'. */
typedef struct solve_run {
    int rc;              /* exit status; -1: not run */
    int problems, converged;
    char status[32];
    double error, ms;
    long iters;
    int contacts;
    char message[600];   /* the CLI's error, if any */
} solve_run;

static void run_solve(const char *cli, const char *args, solve_run *r)
{
    char cmd[8192], line[4096];
    FILE *p;
    memset(r, 0, sizeof *r);
    r->rc = -1;
    snprintf(cmd, sizeof cmd, "'%s' solve %s 2>&1", cli, args);
    if (!(p = popen(cmd, "r"))) return;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "problem ", 8) == 0) {
            r->problems++;
            r->converged += strstr(line, " status=converged ") != NULL;
        } else if (strncmp(line, "status=", 7) == 0)
            sscanf(line, "status=%31s error=%lf iters=%ld time_ms=%lf contacts=%d", r->status, &r->error, &r->iters,
                   &r->ms, &r->contacts);
        else if (strncmp(line, "clcone: ", 8) == 0)
            snprintf(r->message, sizeof r->message, "%.590s", line);
    }
    r->rc = pclose(p);
    r->rc = r->rc >= 0 && WIFEXITED(r->rc) ? WEXITSTATUS(r->rc) : -1;
}

/* `gen NAME --n n --seed seed` written to path; 0, or -1 after a note. */
static int write_scene(bench *b, FILE *f, const char *name, int n, unsigned seed, const char *path)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_error e;
    int rc = 0;
    memset(&w, 0, sizeof w);
    clcone_gen_params_default(&gp);
    gp.n = n;
    gp.seed = seed;
    if (clcone_world_generate(name, &gp, &w, &e) || clcone_write_world(path, &w, &e)) {
        bench_fail(b, f, "%s: %s", path, e.msg);
        rc = -1;
    }
    clcone_world_free(&w);
    return rc;
}

static const char *const MODELS[] = {"coulomb", "ccp", "soft"};
/* The third: the device's multi-launch loop, which --plot's history
 * takes, as a batch with a problem past the whole-problem kernels (4,096
 * contacts on a GPU) does; its plot is written to the scratch folder. */
static const char *const BACKENDS[] = {"--precision double", "--device ref", "--precision double --plot"};
static const char *const BACKEND_NAMES[] = {"device, double", "reference", "device, double, multi-launch loop"};

/* The 256 tiny piles in dir as one batch per model and backend. */
static void tiny_piles(bench *b, FILE *f, const char *cli, const char *dir)
{
    char args[4096];
    fprintf(f, "### %d tiny piles as one batch\n\n"
               "`gen pile --n $((3 + i %% 10)) --seed $i`, i = 1..%d (9-36 contacts each), one `clcone solve` "
               "of all the scene files at tol 1e-8 with each model's default solver (a cap of 60 s on the "
               "batch). On %s and on the reference. The time is the batch's solve (`time_ms`).\n\n"
               "| model | backend | batch ms | converged | iterations, all problems |\n|---|---|---|---|---|\n",
            TINY_PILES, TINY_PILES, b->dev_short);
    for (int m = 0; m < 3; ++m)
        for (int k = 0; k < 2; ++k) {
            solve_run r;
            snprintf(args, sizeof args, "'%s'/s*.scene --model %s --tol 1e-8 --max-seconds 60 %s", dir, MODELS[m],
                     BACKENDS[k]);
            run_solve(cli, args, &r);
            if (r.rc != 0 && r.rc != 1) {
                bench_fail(b, f, "%s on the %s: exit %d, %s", MODELS[m], BACKEND_NAMES[k], r.rc, r.message);
                continue;
            }
            fprintf(f, "| %s | %s | %.0f | %d of %d | %ld |\n", MODELS[m], BACKEND_NAMES[k], r.ms, r.converged,
                    r.problems, r.iters);
        }
}

/* The stacks, the wall and the large piles, one scene a run, coulomb and ccp. */
static void large_scenes(bench *b, FILE *f, const char *cli, const char *dir)
{
    static const struct {
        const char *gen;
        int n;
        unsigned seed;
        const char *file;
    } SCENES[] = {{"stack", 20, 1, "stack20.scene"},   {"stack", 150, 1, "stack150.scene"},
                  {"wall", 30, 1, "wall30.scene"},     {"pile", 1000, 5, "pile1000.scene"},
                  {"pile", 3400, 5, "pile3400.scene"}};
    int nscenes = b->quick ? 4 : 5, cap = b->quick ? 10 : 60;
    char args[8192], path[4096];
    fprintf(f, "\n### Stacks, a wall and large piles\n\n"
               "`gen stack --n 20`, `gen stack --n 150`, `gen wall --n 30`, `gen pile --n 1000 --seed 5` and%s "
               "`gen pile --n 3400 --seed 5`, each solved alone at tol 1e-8 with the model's default solver, "
               "capped at %d s. Newton's dense factor stops at 512 contacts: past it the hybrid hands over after "
               "its sweeps to a sparse second phase (on the host for a device): ipm for ccp, De Saxce's fixed "
               "point over ipm for coulomb, and the sweeps again where that stops above tol (coulomb's watched "
               "for a second hand-over, to the sparse Newton). Past 512 contacts "
               "each scene runs a third time on the device's multi-launch loop (`--plot`), the path a GPU "
               "takes past 4,096 contacts, which hands over the same way.\n\n"
               "| scene | contacts | model | backend | status | error | iterations | ms |\n"
               "|---|---|---|---|---|---|---|---|\n",
            b->quick ? " (not in a quick run)" : "", cap);
    for (int s = 0; s < nscenes; ++s) {
        snprintf(path, sizeof path, "%s/%s", dir, SCENES[s].file);
        if (write_scene(b, f, SCENES[s].gen, SCENES[s].n, SCENES[s].seed, path)) continue;
        for (int m = 0, contacts = 0; m < 2; ++m)
            for (int k = 0; k < 3 && (k < 2 || contacts > CLCONE_NEWTON_REF_MAX_CONTACTS); ++k) {
                solve_run r;
                snprintf(args, sizeof args, "'%s' --model %s --tol 1e-8 --max-seconds %d %s%s%s%s", path, MODELS[m],
                         cap, BACKENDS[k], k == 2 ? " '" : "", k == 2 ? dir : "", k == 2 ? "/loop.png'" : "");
                run_solve(cli, args, &r);
                if (r.rc != 0 && r.rc != 1) {
                    bench_fail(b, f, "%s %s on the %s: exit %d, %s", SCENES[s].file, MODELS[m], BACKEND_NAMES[k],
                               r.rc, r.message);
                    continue;
                }
                contacts = r.contacts;
                fprintf(f, "| `gen %s --n %d` | %d | %s | %s | %s | %.1e | %ld | %.0f |\n", SCENES[s].gen,
                        SCENES[s].n, r.contacts, MODELS[m], BACKEND_NAMES[k], r.status, r.error, r.iters, r.ms);
            }
        remove(path);
    }
    snprintf(path, sizeof path, "%s/loop.png", dir);
    remove(path);
}

void bench_section_second(bench *b, FILE *f)
{
    char cli[4096], dir[] = "/tmp/clcone-bench-second-XXXXXX", path[4200];
    if (!b->dctx) {
        fprintf(f, "(skipped: the device has no double precision: %s)\n", b->dctx_err);
        return;
    }
    bench_cli_path(cli, sizeof cli);
    if (access(cli, X_OK) != 0 || !mkdtemp(dir)) {
        bench_fail(b, f, "no CLI at %s or no scratch folder", cli);
        return;
    }
    for (int i = 1; i <= TINY_PILES; ++i) {
        snprintf(path, sizeof path, "%s/s%03d.scene", dir, i);
        if (write_scene(b, f, "pile", 3 + i % 10, (unsigned)i, path)) break;
    }
    tiny_piles(b, f, cli, dir);
    for (int i = 1; i <= TINY_PILES; ++i) {
        snprintf(path, sizeof path, "%s/s%03d.scene", dir, i);
        remove(path);
    }
    large_scenes(b, f, cli, dir);
    rmdir(dir);
}
