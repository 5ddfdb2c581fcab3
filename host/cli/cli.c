/* clcone command line. Turns library errors into messages on stderr and
 * exit codes: 0 converged, 1 not converged, 2 bad input or usage. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"
#include "cli/shared_problems.h"

#include <dirent.h>
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
    "Exit codes: 0 converged, 1 not converged, 2 bad input or usage,\n"
    "130 stopped by SIGINT or SIGTERM (outputs written from where it stopped).\n";

static const char *const USAGE_SOLVE =
    "usage: clcone solve FILE [options]\n"
    "       clcone solve FILE FILE... [options]   (a batch)\n"
    "FILE: a Siconos .dat or FCLib .hdf5 local problem, or a clcone scene file\n"
    "(`clcone gen`), whose contact problem at its current state is solved, or a\n"
    "general-block problem (clcone-blocks 1, docs/formats.md section 7), solved\n"
    "alone by apgd (--solver pgs on ref) with --out/--warm its forces, one a row,\n"
    "and contacts= its blocks.\n"
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
    "  --sap-stiffness K             sap: each contact's stiffness in N/m (default:\n"
    "                                rigid); Rn >= 1/(dt K (dt + tau_d)) as Drake's\n"
    "  --sap-dissipation T           sap: dissipation time scale tau_d in s\n"
    "                                (default beta dt / pi)\n"
    "  --solver S                    a solver of the model on the backend, as the\n"
    "                                table below lists them with the defaults\n"
    "  --facets N                    pyramid facets, N >= 3 (default 8)\n"
    "  --fit outer|inner             pyramid fit to the circle (default outer)\n"
    "  --tol T                       stop at error <= T, T > 0 (default 1e-8; 1e-5\n"
    "                                on a float device, whose rounding floor is ~1e-7)\n"
    "  --max-iter K                  iteration (pivot) cap (default 1000000)\n"
    "  --check-every K               error evaluated every K iterations (default 10)\n"
    "  --max-seconds S               wall-clock cap (default 30; 0 = none)\n"
    "  --threads T                   a batch's problems on T host threads (1 to\n"
    "                                256, default 1; the same results): ref's\n"
    "                                solves, a device's hand-overs to the host\n"
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
    "Solves every Siconos problem (each .dat and .hdf5 file) in DIR (default\n"
    "$CLCONE_PROBLEMS, else tests/data/problems, the repository's copy, when run\n"
    "from its root; the shared set in its README's order, others after it) with\n"
    "the reference's default Coulomb solver (to T, default 1e-8; `clcone solvers`\n"
    "names it) and with coloured Gauss-Seidel (cgs) on the OpenCL device (double\n"
    "to 1e-6 where the device has fp64, else float to 1e-5), and prints both side\n"
    "by side, each named as run.\n";

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
    static const char *const no_threads[] = {"--threads", NULL};
    int scene, blocks = 0, rc = parse_args(argc, argv, USAGE_SOLVE, CLI_MAX_FILES, &a);
    memset(hist, 0, sizeof hist);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.npos == 0) return usage_error(USAGE_SOLVE, "solve needs a problem FILE%s", "");
    if ((rc = cli_check_solve_files(&a))) return rc;
    if (!cli_given(&a, "--max-seconds")) a.o.max_seconds = CLI_SOLVE_MAX_SECONDS;
    /* over MPI ranks the signal is mpirun's to pass on: no flag to share */
    if (!a.mpi) a.o.cancel = cli_solve_cancel();
    if (a.npos > 1 || a.mpi) return cli_solve_batch(&a, USAGE_SOLVE);
    if ((rc = cli_refuse(&a, USAGE_SOLVE, no_threads, "one FILE is one problem; the threads take a batch's")))
        return rc;
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
                                         "--soft-dt", "--sap-beta",
                                         "--sap-stiffness", "--sap-dissipation", "--out", "--warm", "--dir", "--compare",
                                         "--progress", "--plot", "--threads", NULL};
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

static int problem_file_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return (n > 4 && strcmp(d->d_name + n - 4, ".dat") == 0) || (n > 5 && strcmp(d->d_name + n - 5, ".hdf5") == 0);
}

/* Where the shared set comes in a table: its README's order, the
 * others after it by name. */
static int shared_rank(const char *name)
{
    for (int i = 0; i < NSHARED_PROBLEMS; ++i)
        if (strcmp(name, SHARED_PROBLEMS[i]) == 0) return i;
    return NSHARED_PROBLEMS;
}

static int table_order(const struct dirent **a, const struct dirent **b)
{
    int ra = shared_rank((*a)->d_name), rb = shared_rank((*b)->d_name);
    return ra != rb ? (ra > rb) - (ra < rb) : strcmp((*a)->d_name, (*b)->d_name);
}

/* The .dat and .hdf5 files of dir in table order (*n of them), or NULL
 * having said why. */
static struct dirent **siconos_files(const char *dir, int *n)
{
    struct dirent **list = NULL;
    *n = scandir(dir, &list, problem_file_name, table_order);
    if (*n < 0) {
        fprintf(stderr, "clcone: %s: cannot list it: %s\n", dir, strerror(errno));
        return NULL;
    }
    if (*n == 0) {
        fprintf(stderr, "clcone: %s: no .dat or .hdf5 problem file in it\n", dir);
        free(list);
        return NULL;
    }
    return list;
}

static int cmd_demo_siconos(int argc, char **argv)
{
    static const char *const demo_unused[] = {"--model", "--solver", "--facets", "--fit", "--precision", "--max-iter",
                                              "--check-every", "--max-seconds", "--soft-timeconst", "--soft-dampratio",
                                              "--soft-impedance", "--soft-dt", "--sap-beta",
                                              "--sap-stiffness", "--sap-dissipation", "--out", "--warm",
                                              "--compare", "--progress", "--threads", NULL};
    cli_args a;
    const char *dir;
    clcone_context *ctx = NULL;
    clcone_error e;
    clcone_options od;
    char backend[400];
    static const char *const no_plot[] = {"--plot", NULL};
    struct dirent **files;
    int rc = parse_args(argc, argv, USAGE_DEMO, 0, &a), nconv = 0, dconv = 0, nfiles = 0, worst = 0, iters = 0,
        contacts = 0, nlisted;
    double ref_ms = 0, dev_ms = 0, max_err = 0;
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_refuse(&a, USAGE_DEMO, no_plot, "the Siconos table is text; solve FILE --plot draws one problem"))
        || (rc = cli_refuse(&a, USAGE_DEMO, demo_unused, "the demo picks its own solvers and options")))
        return rc;
    clcone_options_resolve(&a.o, NULL);
    dir = a.dir ? a.dir : getenv("CLCONE_PROBLEMS");
    if (!dir || !*dir) dir = "tests/data/problems";
    if (!(files = siconos_files(dir, &nlisted))) return EXIT_USAGE;
    /* the device part: CGS in double where the device has fp64 */
    if (cli_open_device(a.device, CLCONE_DOUBLE, &ctx, &e) && cli_open_device(a.device, CLCONE_FLOAT, &ctx, &e)) {
        fprintf(stderr, "clcone: no OpenCL device for the device columns: %s\n", e.msg);
        ctx = NULL;
    }
    od = a.o;
    od.solver = CLCONE_SOLVER_CGS;
    od.tol = ctx && clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-6 : 1e-5;
    describe_backend(ctx, backend, sizeof backend);
    printf("clcone demo: the %d problem files in %s\n", nlisted, dir);
    /* the solvers' names as run: the reference's default is the library's to choose */
    printf("reference: %s, double, 1 thread, tol %.0e | device: %s on %s, tol %.0e\n", clcone_solver_name(a.o.solver),
           a.o.tol, clcone_solver_name(od.solver), ctx ? backend : "(none)", od.tol);
    printf("%-34s %5s | %9s %8s %9s | %9s %8s %9s\n", "file", "n", "ref err", "sweeps", "ref ms", "dev err", "sweeps",
           "dev ms");
    for (int i = 0; i < nlisted; ++i) {
        char path[4096];
        clcone_problem p;
        clcone_prob_result rr, dr;
        const char *name = files[i]->d_name;
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
    for (int i = 0; i < nlisted; ++i) free(files[i]);
    free(files);
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
    if (strcmp(cmd, "solve") == 0) return cli_solve_interruptible(cmd_solve, argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "devices") == 0) return cmd_devices(argc - 2, argv + 2);
    if (strcmp(cmd, "solvers") == 0) return cmd_solvers(argc - 2, argv + 2);
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 2, argv + 2);
    if (strcmp(cmd, "gen") == 0) return cli_write_interruptible(cmd_gen, argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0) return cli_write_interruptible(cmd_export, argc - 2, argv + 2);
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
