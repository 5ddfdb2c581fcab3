/* clcone command line. Turns library errors into messages on stderr and
 * exit codes: 0 converged, 1 not converged, 2 bad input or usage. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"
#include "cli/shared_problems.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* solve's default wall-clock cap: a default solve of a generated scene of
 * 10^4 contacts ends within a minute, kernel compilation included, and
 * says whether it converged (a larger --max-iter or --max-seconds goes
 * further). */
#define CLI_SOLVE_MAX_SECONDS 30.0

static const char *const USAGE_MAIN =
    "usage: clcone <command> [options]\n"
    "\n"
    "commands:\n"
    "  solve FILE   solve a contact problem file (Siconos .dat, FCLib .hdf5 or\n"
    "               a clcone scene file)\n"
    "  gen NAME     write a generated scene (pile, stack, wall, grid, incline)\n"
    "  simulate S   time-step a scene, every contact solve on the device\n"
    "  mujoco M     step a MuJoCo model with clcone as its constraint solver\n"
    "  export S     write a scene's contact problem as a Siconos .dat file\n"
    "  devices      list the OpenCL platforms and devices\n"
    "  solvers      which solver serves which model on which backend\n"
    "  check FILE R print the error of reactions R for problem FILE\n"
    "  demo         the main job: a 20,000-sphere pile stepped on the device,\n"
    "               the last solve compared with the reference, and a picture;\n"
    "               `demo --siconos` tabulates the shared Siconos problems\n"
    "  help         this text; `clcone <command> --help` for a command\n"
    "  --version    the library's version\n"
    "\n"
    "No output may name an input (by any path: a link, ./x, a path through ..)\n"
    "or another output, and no option may be given twice: such a run is\n"
    "refused before anything is read (exit 2).\n"
    "Exit codes: 0 converged, 1 not converged, 2 bad input or usage.\n";

static const char *const USAGE_SOLVE =
    "usage: clcone solve FILE [options]\n"
    "       clcone solve FILE FILE... [options]   (a batch)\n"
    "FILE: a Siconos .dat or FCLib .hdf5 local problem, or a clcone scene file\n"
    "(`clcone gen`), whose contact problem at its current state is solved, or a\n"
    "general-block problem (clcone-blocks 1, docs/formats.md section 7), solved\n"
    "alone by apgd (pgs on ref) with --out/--warm its forces, one a row, and\n"
    "contacts= its blocks.\n"
    "Several problem files are solved as one batch on the chosen backend (on\n"
    "ref one after another; a scene file each as alone, after them): a line\n"
    "per file, then the last line for the\n"
    "batch (worst status, largest error, summed iterations, wall time of the\n"
    "batch solve, all contacts); --out DIR writes DIR/<file name>.r per problem\n"
    "  --device D                    ref = CPU reference (double); N = index in\n"
    "                                `clcone devices`; or part of a device name.\n"
    "                                Default: $CLCONE_DEVICE, else the first GPU,\n"
    "                                else the first CPU OpenCL device (POCL);\n"
    "                                cpu / gpu: the first device of that type\n"
    "  --precision float|double      device precision (default float; double\n"
    "                                needs cl_khr_fp64). ref is always double\n"
    "  --compare                     also solve with the CPU reference and print\n"
    "                                both, the max reaction difference and the\n"
    "                                speed ratio\n"
    "  --model M                     contact law, a model of the table below\n"
    "                                (default coulomb); sap only for scene files\n"
    "                                (body velocities)\n"
    "  --soft-timeconst T --soft-dampratio Z --soft-impedance D --soft-dt H\n"
    "                                soft model's solref/solimp (defaults 0.02, 1,\n"
    "                                0.9, 0.01)\n"
    "  --sap-beta B                  sap's near-rigid parameter (default 1)\n"
    "  --solver S                    a solver of the model on the backend, as the\n"
    "                                table below lists them with the defaults\n"
    "  --facets N                    pyramid facets, N >= 3 (default 8)\n"
    "  --fit outer|inner             pyramid fit to the circle (default outer)\n"
    "  --tol T                       stop at error <= T, T > 0 (default 1e-8; 1e-5\n"
    "                                on a float device, whose rounding floor is ~1e-7)\n"
    "  --max-iter K                  iteration (pivot) cap (default 1000000)\n"
    "  --check-every K               error evaluated every K iterations (default 10)\n"
    "  --max-seconds S               wall-clock cap (default 30; 0 = none)\n"
    "  --progress                    iteration and error on stderr during a long\n"
    "                                solve even when stderr is not a terminal\n"
    "  --warm R0.txt                 start from these reactions\n"
    "  --out R.txt, -o R.txt         write the reactions (atomically), with the\n"
    "                                model, solver, tolerance and precision in\n"
    "                                their header; never over an input\n"
    "  --mpi                         the files as a batch over the ranks of\n"
    "                                `mpirun -np K clcone-mpi` (each rank its own\n"
    "                                device; the same results as one process);\n"
    "                                one scene file alone: that scene cut over\n"
    "                                the ranks (jacobi or apgd)\n"
    "  --plot FILE.png               error against iteration and against time\n"
    "                                (log axes) with the tolerance; with\n"
    "                                --compare both backends on one plot\n"
    "Options the model or device does not use are refused. The last line printed\n"
    "is machine-readable (exit code 0 converged, 1 otherwise, 2 bad input):\n"
    "  status=<converged|maxiter|diverged|failed> error=<e> iters=<k> time_ms=<t> contacts=<n>\n";

static const char *const USAGE_SOLVERS =
    "usage: clcone solvers [--markdown]\n"
    "Prints which solver serves which model on the reference and on OpenCL\n"
    "devices, each backend's default, and what each pair does: the library's\n"
    "own table, which its defaults and option checks follow (--markdown: the\n"
    "table of docs/solvers.md).\n";

static const char *const USAGE_CHECK =
    "usage: clcone check FILE R.txt [--model coulomb|ccp|pyramid] [--facets N] [--fit outer|inner] [--tol T]\n"
    "FILE: anything `solve` takes (for a scene file, its contact problem at its\n"
    "state, whose reactions `solve SCENE --out R.txt` writes; for a general-block\n"
    "problem, the forces `solve FILE --out F.txt` writes, under its own sets).\n"
    "Prints the model's error of the given reactions (Siconos's current measure;\n"
    "for coulomb also the old ||q||+1 normalisation). The model is --model,\n"
    "else the one R.txt's header records (`solve --out` writes it, with a\n"
    "pyramid's facets and fit), else coulomb; a --model other than the recorded\n"
    "one measures the reactions under the law it names, and says so. T is\n"
    "--tol, else the tolerance R.txt's header records (`solve --out` writes it),\n"
    "else 1e-8. The last line is status=converged when error <= T, maxiter when\n"
    "it is over T, diverged when it is not finite; exit code 0 or 1 accordingly.\n";

static const char *const USAGE_DEMO =
    "usage: clcone demo --siconos [--dir DIR] [--tol T] [--device D]\n"
    "Solves every Siconos problem in DIR (default $CLCONE_PROBLEMS, else\n"
    "tests/data/problems, the repository's copy, when run from its root) with\n"
    "the reference's default Coulomb solver (to T, default 1e-8; `clcone solvers`\n"
    "names it) and with coloured Gauss-Seidel (cgs) on the OpenCL device (double\n"
    "to 1e-6 where the device has fp64, else float to 1e-5), and prints both side\n"
    "by side, each named as run.\n";

/* The file name without its directories. */
static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Where the batch's --out DIR puts problem k's reactions: DIR/<file
 * name>.r; 0, or EXIT_USAGE after saying why not. */
static int batch_reactions_path(const cli_args *a, int k, char *path, size_t len)
{
    int n = snprintf(path, len, "%s/%s.r", a->out, base_name(a->positional[k]));
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "clcone: --out %s: path too long for %s\n", a->out, a->positional[k]);
        return EXIT_USAGE;
    }
    return 0;
}

/* Before the batch is solved: --out DIR must take a file per problem,
 * told apart by name. */
static int check_batch_outputs(const cli_args *a)
{
    char path[4096];
    for (int k = 0; k < a->npos; ++k) {
        int rc = batch_reactions_path(a, k, path, sizeof path);
        if (rc) return rc;
        for (int j = 0; j < k; ++j)
            if (strcmp(base_name(a->positional[j]), base_name(a->positional[k])) == 0) {
                fprintf(stderr, "clcone: %s and %s: two files of the batch have the same name, so --out %s "
                                "cannot tell their reactions apart\n", a->positional[j], a->positional[k], a->out);
                return EXIT_USAGE;
            }
    }
    return 0;
}

/* Whether the batch's --out DIR writes a file of this name: <file
 * name>.r of one of its files (a is the cli_args). */
static int batch_writes(const char *name, const void *a)
{
    const cli_args *args = a;
    size_t n = strlen(name);
    if (n < 2 || strcmp(name + n - 2, ".r") != 0) return 0;
    for (int k = 0; k < args->npos; ++k) {
        const char *b = base_name(args->positional[k]);
        if (strlen(b) == n - 2 && strncmp(b, name, n - 2) == 0) return 1;
    }
    return 0;
}

/* solve's outputs against each other and its inputs (the files and
 * --warm), before any is read; 0 or EXIT_USAGE after saying why. */
static int check_solve_files(const cli_args *a)
{
    /* solve --mpi is a batch even of one file: --out names a directory */
    const int batch = a->npos > 1 || a->mpi;
    const cli_output outs[] = {{"--out", a->out, batch, batch ? batch_writes : NULL, a},
                               {"--plot", a->plot, 0, NULL, NULL}};
    cli_input *ins = calloc((size_t)a->npos + 1, sizeof *ins);
    int rc;
    if (!ins) {
        fprintf(stderr, "clcone: out of memory for %d files\n", a->npos);
        return EXIT_USAGE;
    }
    for (int k = 0; k < a->npos; ++k) ins[k] = (cli_input){"FILE", a->positional[k]};
    ins[a->npos] = (cli_input){"--warm", a->warm};
    rc = cli_check_outputs(outs, 2, ins, a->npos + 1);
    free(ins);
    return rc;
}

/* Reactions of each file of the batch (n[k] contacts, r[k]) into
 * DIR/<file name>.r, the directory made when missing (its parent was
 * checked to exist). */
static int write_batch_reactions(const cli_args *a, const int *n, double *const *r,
                                 const clcone_reactions_info *info)
{
    clcone_error e;
    char path[4096];
    int rc = cli_make_dir("--out", a->out);
    for (int k = 0; k < a->npos && !rc; ++k)
        if (!(rc = batch_reactions_path(a, k, path, sizeof path))
            && clcone_write_reactions_info(path, n[k], r[k], info, &e))
            rc = lib_error(&e);
    return rc;
}

/* The scenes of a batch that did not join its launch (scene_joins_batch),
 * each solved as `solve SCENE` solves it alone: the body form has no
 * batched kernels, so they take one scene plan in turn (clcone_plan_set_scene keeps its device buffers and kernels; a
 * new plan where the time step, which soft and sap read, changes).
 * Fills out[k], n[k], r[k] and adds the solve times to *ms, the batch's
 * so far on entry. */
static int solve_batch_scenes(cli_args *a, clcone_context *ctx, clcone_world *worlds, clcone_prob_result *out,
                              int *n, double **r, double *ms)
{
    clcone_plan *pl = NULL;
    clcone_error e;
    double plan_dt = 0;
    int rc = 0;
    for (int k = 0; k < a->npos && !rc; ++k) {
        clcone_scene sc;
        clcone_result res;
        double t0;
        int spent;
        if (!worlds[k].s.bodies) continue;
        memset(&sc, 0, sizeof sc);
        memset(&e, 0, sizeof e);
        a->o.soft_dt = worlds[k].dt;
        rc = clcone_world_contact_scene(&worlds[k], &sc, &e) || !(r[k] = calloc(3 * (size_t)sc.ncontacts + 1, sizeof **r));
        if (!rc && pl && plan_dt == worlds[k].dt) rc = clcone_plan_set_scene(pl, &sc, &e);
        else if (!rc) {
            clcone_plan_free(pl);
            pl = NULL;
            plan_dt = worlds[k].dt;
            rc = clcone_plan_create_scene(ctx, &sc, &a->o, &pl, &e);
        }
        /* on a device the cap is the batch's, as for problem files: each
         * scene gets what the batch has left (a scene past it runs until
         * its first check), on the reference each its own */
        spent = ctx && a->o.max_seconds > 0 && 1e-3 * *ms >= a->o.max_seconds;
        if (!rc && ctx && a->o.max_seconds > 0)
            rc = clcone_plan_set_max_seconds(pl, spent ? 1e-9 : a->o.max_seconds - 1e-3 * *ms, &e);
        t0 = cli_now_ms();
        if (!rc && !(rc = clcone_plan_solve(pl, r[k], &res, &e))) {
            *ms += cli_now_ms() - t0;
            out[k] = res.items[0];
            if (spent)
                snprintf(out[k].reason, sizeof out[k].reason, "the batch's time cap %g s was spent before it",
                         a->o.max_seconds);
            clcone_result_free(&res);
        }
        n[k] = sc.ncontacts;
        clcone_scene_free(&sc);
        if (rc) {
            if (!e.msg[0]) snprintf(e.msg, sizeof e.msg, "out of memory for the reactions");
            cli_name_file(&e, a->positional[k]);
            rc = lib_error(&e);
        }
    }
    clcone_plan_free(pl);
    return rc;
}

/* Scenes of at most this many contacts join a batch's problem files in
 * their local form (scene_joins_batch). */
#define CLI_BATCH_LOCAL_MAX 512

/* A scene small enough, with a model that reads nothing but W, q and mu
 * (not soft, whose a_ref needs the gaps, nor sap), joins the problem
 * files' batch as its local form (*joined = 1, the world freed, *p the
 * form): one device batch for all of them, where scene plans in turn
 * spent their time launching (40 tiny piles, coulomb at 1e-4: 1,101 ms
 * in turn, 34 ms as one batch). Past the limit the body form, solved in
 * turn, keeps W unassembled. 0, or the exit code after saying why. */
static int scene_joins_batch(const cli_args *a, clcone_world *w, clcone_problem *p, const char *path, int *joined)
{
    clcone_scene sc;
    clcone_error e;
    int rc = 0;
    *joined = 0;
    if (a->mpi || a->o.model == CLCONE_MODEL_SOFT || a->o.model == CLCONE_MODEL_SAP) return 0;
    memset(&sc, 0, sizeof sc);
    memset(&e, 0, sizeof e);
    if (clcone_world_contact_scene(w, &sc, &e)) {
        cli_name_file(&e, path);
        return lib_error(&e);
    }
    if (sc.ncontacts > 0 && sc.ncontacts <= CLI_BATCH_LOCAL_MAX) {
        if (clcone_scene_to_local(&sc, p, &e)) {
            cli_name_file(&e, path);
            rc = lib_error(&e);
        } else {
            clcone_world_free(w);
            memset(w, 0, sizeof *w);
            *joined = 1;
        }
    }
    clcone_scene_free(&sc);
    return rc;
}

/* The problem files' batch (NULL: none) in this process: the device
 * opened into *ctx, the options resolved, the batch solved through a plan
 * (*pl) into r and res, *ms the solve's time. 0, or the exit code after
 * saying why. */
static int solve_batch_here(cli_args *a, const clcone_problem *batch, clcone_context **ctx, clcone_plan **pl,
                            double *r, clcone_result *res, double *ms)
{
    clcone_error e;
    double t0;
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, ctx, &e)) return lib_error(&e);
    clcone_options_resolve(&a->o, *ctx);
    if (!batch) return 0;
    if (clcone_plan_create(*ctx, batch, &a->o, pl, &e)) return lib_error(&e);
    t0 = cli_now_ms();
    if (clcone_plan_solve(*pl, r, res, &e)) return lib_error(&e);
    *ms = cli_now_ms() - t0;
    return 0;
}

/* `solve FILE FILE...`: the problem files and the small scenes' local
 * forms as one batch (clcone_batch_concat) on one backend, the other
 * scene files each as alone (solve_batch_scenes); a line per file and
 * the batch's last line. */
static int solve_batch(cli_args *a)
{
    static const char *const not_in_batch[] = {"--warm", "--compare", "--plot", NULL};
    int nf = a->npos, rc = EXIT_USAGE, worst = CLCONE_CONVERGED, iters = 0, nlocal = 0, total = 0;
    clcone_problem *probs = calloc((size_t)nf, sizeof *probs), batch;
    clcone_world *worlds = calloc((size_t)nf, sizeof *worlds);
    const clcone_problem **parts = calloc((size_t)nf, sizeof *parts);
    clcone_prob_result *out = calloc((size_t)nf, sizeof *out);
    int *n = calloc((size_t)nf, sizeof *n);
    double **rk = calloc((size_t)nf, sizeof *rk);
    clcone_context *ctx = NULL;
    clcone_plan *pl = NULL;
    clcone_result res;
    clcone_error e;
    double *r = NULL, emax = 0, ms = 0;
    char backend[400];
    int nread = 0;
    memset(&batch, 0, sizeof batch);
    memset(&res, 0, sizeof res);
    if ((rc = cli_refuse(a, USAGE_SOLVE, not_in_batch, "a batch starts from r = 0 and prints no comparison"))
        || (a->out && (rc = check_batch_outputs(a))))
        goto out;
    rc = EXIT_USAGE;
    if (!probs || !parts || !worlds || !out || !n || !rk) {
        fprintf(stderr, "clcone: out of memory for %d files\n", nf);
        goto out;
    }
    for (; nread < nf; ++nread) {
        clcone_input in;
        int joined = 0;
        if (cli_read_input(a, a->positional[nread], USAGE_SOLVE, CLI_BLOCKS_REFUSE, &in, NULL)) goto out;
        if (in.is_world) {
            worlds[nread] = in.world;
            if ((rc = scene_joins_batch(a, &worlds[nread], &probs[nread], a->positional[nread], &joined))) goto out;
            rc = EXIT_USAGE;
            if (joined) parts[nlocal++] = &probs[nread];
        } else {
            probs[nread] = in.problem;
            parts[nlocal++] = &probs[nread];
        }
    }
    if (nlocal > 0) {
        if (clcone_batch_concat(parts, nlocal, &batch, &e)) {
            lib_error(&e);
            goto out;
        }
        if (!(r = calloc(3 * (size_t)batch.n + 1, sizeof *r))) {
            fprintf(stderr, "clcone: out of memory for %d contacts\n", batch.n);
            goto out;
        }
    }
#ifdef CLCONE_MPI
    if (a->mpi) {
        cli_mpi_batch mb = {nlocal ? &batch : NULL, r, &res, worlds, nf, out, n, rk, &ms};
        rc = cli_mpi_solve(a, &mb, &ctx);
    } else
#endif
        rc = solve_batch_here(a, nlocal ? &batch : NULL, &ctx, &pl, r, &res, &ms);
    if (rc) goto out;
    describe_backend(ctx, backend, sizeof backend);
    for (int k = 0, j = 0; k < nf && nlocal > 0; ++k)
        if (!worlds[k].s.bodies) {
            out[k] = res.items[j];
            n[k] = probs[k].n;
            rk[k] = r + 3 * (size_t)batch.prob_off[j++];
        }
    if (!a->mpi && (rc = solve_batch_scenes(a, ctx, worlds, out, n, rk, &ms))) goto out;
    for (int k = 0; k < nf; ++k) total += n[k];
    printf("batch:    %d files, %d contacts\nmodel:    %s, solver %s, device %s\n", nf, total,
           clcone_model_name(a->o.model), clcone_solver_name(a->o.solver), backend);
    for (int k = 0; k < nf; ++k) {
        const clcone_prob_result *it = &out[k];
        printf("problem %d: %s status=%s error=%.6e iters=%d contacts=%d%s%s\n", k, a->positional[k],
               clcone_run_status_name(it->status), it->error, it->iters, n[k], it->reason[0] ? " reason=" : "",
               it->reason);
        if ((int)it->status > worst) worst = (int)it->status;
        if (!(it->error <= emax)) emax = it->error;
        iters += it->iters;
    }
    if (a->out) {
        clcone_reactions_info info = cli_reactions_info(a, ctx);
        if ((rc = write_batch_reactions(a, n, rk, &info))) goto out;
    }
    if (a->out) printf("reactions written to %s/<file name>.r\n", a->out);
    print_last_line(clcone_run_status_name((clcone_run_status)worst), emax, iters, ms, total);
    rc = worst == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
out:
    clcone_result_free(&res);
    clcone_plan_free(pl);
    clcone_context_free(ctx);
    clcone_problem_free(&batch);
    for (int k = 0; k < nread; ++k) {
        if (!probs[k].row_ptr) free(rk[k]); /* a scene's own reactions */
        clcone_problem_free(&probs[k]);
        clcone_world_free(&worlds[k]);
    }
    free(probs);
    free(worlds);
    free(parts);
    free(out);
    free(n);
    free(rk);
    free(r);
    return rc;
}

static int cmd_solve(int argc, char **argv)
{
    cli_args a;
    clcone_input in;
    clcone_problem p;
    clcone_result res;
    clcone_error e;
    clcone_context *ctx = NULL;
    double *r, *r0 = NULL;
    char backend[400];
    cli_progress prog;
    clcone_history hist[2]; /* --plot: the solve's, the reference's with --compare */
    static const char *const no_dir[] = {"--dir", NULL};
    int scene, blocks = 0, rc = parse_args(argc, argv, USAGE_SOLVE, CLI_MAX_FILES, &a);
    memset(hist, 0, sizeof hist);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.npos == 0) return usage_error(USAGE_SOLVE, "solve needs a problem FILE%s", "");
    if ((rc = check_solve_files(&a))) return rc;
    if (!cli_given(&a, "--max-seconds")) a.o.max_seconds = CLI_SOLVE_MAX_SECONDS;
    if (a.npos > 1 || a.mpi) return solve_batch(&a);
    if ((rc = cli_read_input(&a, a.positional[0], USAGE_SOLVE, CLI_BLOCKS_SOLVE, &in, &blocks)) || blocks) return rc;
    scene = in.is_world;
    if ((rc = cli_check_applicable(&a, USAGE_SOLVE, scene))
        || (rc = cli_refuse(&a, USAGE_SOLVE, no_dir, "solve takes one FILE"))) {
        clcone_input_free(&in);
        return rc;
    }
    if (scene) return cli_solve_world(&a, &in.world);
    p = in.problem;
    r = calloc((size_t)p.n * 3 + 1, sizeof *r);
    r0 = calloc((size_t)p.n * 3 + 1, sizeof *r0);
    if (!r || !r0) {
        clcone_problem_free(&p);
        free(r);
        free(r0);
        fprintf(stderr, "clcone: out of memory\n");
        return EXIT_USAGE;
    }
    if (a.warm) {
        if (clcone_read_reactions(a.warm, p.n, r, &e)) goto fail;
        a.o.warm_start = 1;
        memcpy(r0, r, sizeof(double) * 3 * (size_t)p.n);
    }
    if (!is_ref(a.device) && cli_open_device(a.device, a.prec, &ctx, &e)) goto fail;
    describe_backend(ctx, backend, sizeof backend);
    clcone_options_resolve(&a.o, ctx);
    if (a.plot) a.o.history = &hist[0];
    cli_progress_attach(&a, &a.o, &prog);
    rc = cli_plan_solve(ctx, &p, NULL, &a.o, r, &res, &e);
    cli_progress_end(&prog);
    if (rc) {
        cli_name_file(&e, a.positional[0]);
        goto fail;
    }
    {
        const clcone_prob_result *it = &res.items[0];
        printf("problem:  %s (%d contacts, %d W blocks)\n", a.positional[0], p.n, p.nnzb);
        printf("model:    %s, solver %s, device %s\n", clcone_model_name(a.o.model),
               clcone_solver_name(a.o.solver), backend);
        if (a.o.model == CLCONE_MODEL_PYRAMID)
            printf("pyramid:  %d facets, %s fit\n", a.o.facets, a.o.fit == CLCONE_FIT_INNER ? "inner" : "outer");
        if (a.o.model == CLCONE_MODEL_COULOMB) {
            double q1;
            clcone_error_coulomb(&p, r, 0, p.n, &q1);
            printf("old measure ||F||/(||q||+1): %.3e\n", q1);
        }
        if (!(rc = cli_print_result(&a, ctx, &p, p.n, r, it))) rc = cli_finish_solve(&a, ctx, &p, NULL, r0, r, it, hist);
    }
    clcone_result_free(&res);
    goto done;
fail:
    rc = lib_error(&e);
done:
    cli_solve_release(hist, ctx, r, r0);
    clcone_problem_free(&p);
    return rc;
}

static int cmd_solvers(int argc, char **argv)
{
    int markdown = argc == 1 && strcmp(argv[0], "--markdown") == 0;
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("%s", USAGE_SOLVERS);
        return 0;
    }
    if (argc > 0 && !markdown) return usage_error(USAGE_SOLVERS, "unexpected argument '%s'", argv[0]);
    cli_print_solvers(stdout, markdown ? CLI_SOLVERS_MARKDOWN : CLI_SOLVERS_HELP);
    return 0;
}

static int cmd_devices(int argc, char **argv)
{
    clcone_device_info *list;
    clcone_error e;
    int n;
    if (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: clcone devices\nLists every OpenCL device with the index that --device N takes.\n");
        return 0;
    }
    if (argc > 0) return usage_error("usage: clcone devices\n", "unexpected argument '%s'", argv[0]);
    if (clcone_list_devices(&list, &n, &e)) return lib_error(&e);
    printf("%-3s %-5s %-40s %-28s %4s %10s %5s\n", "#", "type", "device", "platform", "CUs", "memory", "fp64");
    for (int i = 0; i < n; ++i)
        printf("%-3d %-5s %-40.40s %-28.28s %4d %7.1f GiB %5s\n", list[i].index,
               list[i].is_gpu ? "GPU" : list[i].is_cpu ? "CPU" : "other",
               list[i].name, list[i].platform, list[i].compute_units, (double)list[i].global_mem / 1073741824.0,
               list[i].fp64 ? "yes" : "no");
    printf("device 'ref' is the CPU reference solver (double, one thread)\n");
    clcone_device_list_free(list);
    return 0;
}

/* The local problem of a scene file (its contact problem at the current
 * state, as `solve` forms it) into sp. */
static clcone_status scene_problem(const clcone_world *w, clcone_problem *sp, clcone_error *e)
{
    clcone_scene sc;
    clcone_status st = clcone_world_contact_scene(w, &sc, e);
    if (st) return st;
    st = clcone_scene_to_local(&sc, sp, e);
    clcone_scene_free(&sc);
    return st;
}

/* check's model: --model, else the one R's header records (rfile; with
 * the pyramid's facets and fit unless given), else coulomb; a->o.model
 * set and the options checked against it, what it came from in note.
 * 0, or EXIT_USAGE after saying why. */
static int check_model(cli_args *a, const clcone_reactions_info *info, const char *rfile, char *note, size_t len)
{
    clcone_error e;
    clcone_model recorded = CLCONE_MODEL_COULOMB;
    int rc;
    if (info->model[0] && clcone_parse_model(info->model, &recorded, &e)) {
        fprintf(stderr, "clcone: %s: its header records model '%s', which this clcone does not know; "
                "--model M measures the reactions under M\n", rfile, info->model);
        return EXIT_USAGE;
    }
    if (cli_given(a, "--model") && info->model[0])
        snprintf(note, len, "--model; %s records %s", rfile, info->model);
    else if (cli_given(a, "--model"))
        snprintf(note, len, "--model");
    else if (info->model[0]) {
        a->o.model = recorded;
        snprintf(note, len, "recorded in %s's header; --model M measures under another", rfile);
    } else snprintf(note, len, "the default: %s records none; --model M sets another", rfile);
    if (info->model[0] && recorded == a->o.model) {
        if (!cli_given(a, "--facets") && info->facets >= 3) a->o.facets = info->facets;
        if (!cli_given(a, "--fit") && info->fit[0]) a->o.fit = strcmp(info->fit, "inner") == 0 ? CLCONE_FIT_INNER
                                                                                              : CLCONE_FIT_OUTER;
    }
    if ((rc = cli_check_applicable(a, USAGE_CHECK, 0))) return rc;
    if (a->o.model == CLCONE_MODEL_SOFT || a->o.model == CLCONE_MODEL_SAP) {
        fprintf(stderr, "clcone: check measures the coulomb, ccp and pyramid laws of a (W, q) problem; %s solves "
                "another problem (see solve's own error)%s\n", clcone_model_name(a->o.model),
                cli_given(a, "--model") ? "" : " and is what the reactions' header records: --model M measures "
                "them under M");
        cli_usage_hint(USAGE_CHECK);
        return EXIT_USAGE;
    }
    clcone_options_resolve(&a->o, NULL);
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    static const char *const unused[] = {"--solver", "--device", "--precision", "--max-iter", "--check-every",
                                         "--max-seconds", "--soft-timeconst", "--soft-dampratio", "--soft-impedance",
                                         "--soft-dt", "--sap-beta", "--out", "--warm", "--dir", "--compare",
                                         "--progress", "--plot", NULL};
    cli_args a;
    clcone_input in;
    clcone_problem sp, *p;
    clcone_error e;
    clcone_reactions_info info;
    double *r = NULL, error, q1 = 0, t0 = cli_now_ms();
    char note[600];
    int blocks = 0;
    int rc = parse_args(argc, argv, USAGE_CHECK, 2, &a);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.npos != 2) return usage_error(USAGE_CHECK, "check needs a problem FILE and a reactions file%s", "");
    if ((rc = cli_refuse(&a, USAGE_CHECK, unused, "check measures given reactions, it solves nothing"))
        || (cli_given(&a, "--model") && (rc = cli_check_applicable(&a, USAGE_CHECK, 0))))
        return rc;
    memset(&sp, 0, sizeof sp);
    if ((rc = cli_read_input(&a, a.positional[0], USAGE_CHECK, CLI_BLOCKS_CHECK, &in, &blocks)) || blocks) return rc;
    p = &in.problem;
    if (in.is_world) {
        if (scene_problem(&in.world, &sp, &e)) {
            rc = lib_error(&e);
            goto done;
        }
        p = &sp;
    }
    r = calloc((size_t)p->n * 3 + 1, sizeof *r);
    if (!r || clcone_read_reactions_info(a.positional[1], p->n, r, &info, &e)) {
        if (!r) snprintf(e.msg, sizeof e.msg, "out of memory");
        rc = lib_error(&e);
        goto done;
    }
    if ((rc = check_model(&a, &info, a.positional[1], note, sizeof note))) goto done;
    error = a.o.model == CLCONE_MODEL_COULOMB ? clcone_error_coulomb(p, r, 0, p->n, &q1)
                                               : clcone_error_of(p, &a.o, r, 0, p->n);
    printf("problem:   %s (%d contacts%s)\n", a.positional[0], p->n,
           in.is_world ? ", the scene's contact problem at its state" : "");
    printf("reactions: %s\n", a.positional[1]);
    printf("model:     %s (%s)\n", clcone_model_name(a.o.model), note);
    if (a.o.model == CLCONE_MODEL_PYRAMID)
        printf("pyramid:   %d facets, %s fit\n", a.o.facets, a.o.fit == CLCONE_FIT_INNER ? "inner" : "outer");
    printf("error:     %.6e (Siconos current measure, ||F||/max(||q||,||r||,||u||))\n", error);
    if (a.o.model == CLCONE_MODEL_COULOMB) printf("err_q1:    %.6e (old measure ||F||/(||q||+1))\n", q1);
    rc = cli_check_verdict(&a, &info, a.positional[1], error, p->n, t0);
done:
    clcone_problem_free(&sp);
    clcone_input_free(&in);
    free(r);
    return rc;
}

/* Solves one file on one backend; returns 0 or prints why not. */
static int demo_solve(clcone_context *ctx, const clcone_problem *p, const clcone_options *o,
                      clcone_prob_result *out, const char *file)
{
    clcone_result res;
    clcone_error e;
    double *r = calloc((size_t)p->n * 3 + 1, sizeof *r);
    if (!r || cli_plan_solve(ctx, p, NULL, o, r, &res, &e)) {
        fprintf(stderr, "clcone: %s: %s\n", file, r ? e.msg : "out of memory");
        free(r);
        return EXIT_USAGE;
    }
    *out = res.items[0];
    clcone_result_free(&res);
    free(r);
    return 0;
}

static int cmd_demo_siconos(int argc, char **argv)
{
    static const char *const demo_unused[] = {"--model", "--solver", "--facets", "--fit", "--precision", "--max-iter",
                                              "--check-every", "--max-seconds", "--soft-timeconst", "--soft-dampratio",
                                              "--soft-impedance", "--soft-dt", "--sap-beta", "--out", "--warm",
                                              "--compare", "--progress", NULL};
    cli_args a;
    const char *dir;
    clcone_context *ctx = NULL;
    clcone_error e;
    clcone_options od;
    char backend[400];
    static const char *const no_plot[] = {"--plot", NULL};
    int rc = parse_args(argc, argv, USAGE_DEMO, 0, &a), nconv = 0, dconv = 0, nfiles = 0, worst = 0, iters = 0,
        contacts = 0;
    double ref_ms = 0, dev_ms = 0, max_err = 0;
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_refuse(&a, USAGE_DEMO, no_plot, "the Siconos table is text; solve FILE --plot draws one problem"))
        || (rc = cli_refuse(&a, USAGE_DEMO, demo_unused, "the demo picks its own solvers and options")))
        return rc;
    clcone_options_resolve(&a.o, NULL);
    dir = a.dir ? a.dir : getenv("CLCONE_PROBLEMS");
    if (!dir || !*dir) dir = "tests/data/problems";
    /* the device part: CGS in double where the device has fp64 */
    if (cli_open_device(a.device, CLCONE_DOUBLE, &ctx, &e) && cli_open_device(a.device, CLCONE_FLOAT, &ctx, &e)) {
        fprintf(stderr, "clcone: no OpenCL device for the device columns: %s\n", e.msg);
        ctx = NULL;
    }
    od = a.o;
    od.solver = CLCONE_SOLVER_CGS;
    od.tol = ctx && clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-6 : 1e-5;
    describe_backend(ctx, backend, sizeof backend);
    printf("clcone demo: the %d Siconos problems in %s\n", NSHARED_PROBLEMS, dir);
    /* the solvers' names as run: the reference's default is the library's to choose */
    printf("reference: %s, double, 1 thread, tol %.0e | device: %s on %s, tol %.0e\n", clcone_solver_name(a.o.solver),
           a.o.tol, clcone_solver_name(od.solver), ctx ? backend : "(none)", od.tol);
    printf("%-34s %5s | %9s %8s %9s | %9s %8s %9s\n", "file", "n", "ref err", "sweeps", "ref ms", "dev err", "sweeps",
           "dev ms");
    for (int i = 0; i < NSHARED_PROBLEMS; ++i) {
        char path[4096];
        clcone_problem p;
        clcone_prob_result rr, dr;
        const char *name = SHARED_PROBLEMS[i];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (clcone_read_problem_hdf5(path, &p, &e)) {
            fprintf(stderr, "clcone: %s\n", e.msg);
            worst = EXIT_USAGE;
            continue;
        }
        if (demo_solve(NULL, &p, &a.o, &rr, name) || (ctx && demo_solve(ctx, &p, &od, &dr, name))) {
            clcone_problem_free(&p);
            worst = EXIT_USAGE;
            continue;
        }
        printf("%-34s %5d | %9.2e %8d %9.1f |", name, p.n, rr.error, rr.iters, rr.time_ms);
        if (ctx) {
            printf(" %9.2e %8d %9.1f\n", dr.error, dr.iters, dr.time_ms);
            dconv += dr.status == CLCONE_CONVERGED;
            dev_ms += dr.time_ms;
        } else {
            printf(" %9s %8s %9s\n", "-", "-", "-");
        }
        ++nfiles;
        iters += rr.iters;
        contacts += p.n;
        nconv += rr.status == CLCONE_CONVERGED;
        ref_ms += rr.time_ms;
        if (rr.error > max_err) max_err = rr.error;
        clcone_problem_free(&p);
    }
    printf("reference: %d of %d converged, %.1f ms in all", nconv, nfiles, ref_ms);
    if (ctx) printf(" | device: %d of %d converged, %.1f ms in all", dconv, nfiles, dev_ms);
    printf("\n");
    clcone_context_free(ctx);
    /* the reference's run, over every problem it solved */
    print_last_line(worst ? "failed" : nconv == nfiles ? "converged" : "maxiter", max_err, iters, ref_ms, contacts);
    if (worst) return worst;
    return nconv == nfiles ? 0 : EXIT_NOTCONV;
}

/* The default demo is the simulated pile; --siconos gives the table of
 * the shared Siconos problems. */
static int cmd_demo(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--siconos") == 0) {
            for (int k = i; k + 1 < argc; ++k) argv[k] = argv[k + 1];
            return cmd_demo_siconos(argc - 1, argv);
        }
    return cmd_demo_pile(argc, argv);
}

static int run_command(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd) {
        fprintf(stderr, "%s", USAGE_MAIN);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        printf("%s", USAGE_MAIN);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        /* the loaded library's, which a shared build may have from elsewhere */
        printf("clcone %s\n", clcone_version());
        return 0;
    }
    if (strcmp(cmd, "solve") == 0) return cmd_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "devices") == 0) return cmd_devices(argc - 2, argv + 2);
    if (strcmp(cmd, "solvers") == 0) return cmd_solvers(argc - 2, argv + 2);
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 2, argv + 2);
    if (strcmp(cmd, "gen") == 0) return cmd_gen(argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0) return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "simulate") == 0) return cmd_simulate(argc - 2, argv + 2);
    if (strcmp(cmd, "mujoco") == 0) return cmd_mujoco(argc - 2, argv + 2);
    fprintf(stderr, "clcone: unknown command '%s'\n", cmd);
    cli_usage_hint(USAGE_MAIN);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
#ifdef CLCONE_MPI
    return cli_mpi_main(argc, argv, run_command);
#else
    return run_command(argc, argv);
#endif
}
