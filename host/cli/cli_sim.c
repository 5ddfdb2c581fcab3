/* Stepping commands: simulate, and the main demo (a pile stepped on the
 * device, its last solve compared with the reference). */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const USAGE_SIMULATE =
    "usage: clcone simulate SCENE [SCENE...] --steps K [--dt H] [--model M] [--solver S]\n"
    "                       [--device D] [--precision float|double] [--tol T]\n"
    "                       [--max-iter K] [--csv LOG] [--vtk DIR] [--vtk-every K]\n"
    "                       [--png FILE [--png-size WxH]] [--plot FILE]\n"
    "                       [--out SCENE_OUT] [--progress] [--threads T] [--mpi [--mpi-rebalance F]]\n"
    "Semi-implicit time stepping: free velocity under gravity, contact detection,\n"
    "the contact solve (warm-started from the last step) on the device (or ref),\n"
    "velocity and position update, penetration removed by position projection.\n"
    "  --dt H         time step (default: the scene's)\n"
    "  --model M      default ccp, solved with acgs to tol 1e-4 a step unless\n"
    "                 --solver or --tol say otherwise; the other models take\n"
    "                 `clcone solve`'s default solver and tolerance\n"
    "  --max-iter K   per step (default 1000)\n"
    "  --csv LOG      per-step log: step,contacts,iterations,error,solve_ms,...\n"
    "  --vtk DIR      legacy VTK per frame (bodies, contacts) and DIR/series.pvd\n"
    "                 (DIR is made when its parent exists; --vtk-every K: every\n"
    "                 K-th step's frame)\n"
    "  --png FILE     picture of the final state, coloured by contact force,\n"
    "                 with the planes, a colour bar and a title\n"
    "  --png-size WxH its size (default 1200x900; each side 96 .. 8192)\n"
    "  --plot FILE    per-step iterations, error and solve time (PNG)\n"
    "  --out FILE     the final state as a scene file\n"
    "  --progress     progress bar on stderr even when it is not a terminal\n"
    "  --mpi          under `mpirun -np K clcone-mpi`: each rank steps the bodies\n"
    "                 of its region, the solves over the ranks (jacobi or apgd;\n"
    "                 docs/mpi.md); --mpi-rebalance F: cut again when\n"
    "                 the most contacts a rank has exceed the mean by F (0.25)\n"
    "Several SCENEs are worlds stepped together, each as it is alone to the bit:\n"
    "on a device the steps of at most 1024 contacts (models but soft and sap,\n"
    "solvers but jacobi and apgd) are one\n"
    "batch; --out DIR takes each world's final state as DIR/<file name>, --csv has\n"
    "a world column, --threads T (1 to 256, default 1) runs the worlds' detection\n"
    "and update, on ref their solves, on a device the batch's hand-overs to the\n"
    "host's Newton, on T threads (the same bits); --vtk, --png, --plot and --mpi\n"
    "take one SCENE.\n"
    "Outputs are checked before the scene is read (their directories must exist,\n"
    "no two may be one file, none may be the SCENE). Ctrl-C (SIGINT) or SIGTERM stops after the current step,\n"
    "writes the outputs of the finished steps and exits 130.\n"
    "Model, solver, device, precision, tolerance, --facets/--fit, --soft-timeconst,\n"
    "--soft-dampratio, --soft-impedance, --sap-beta, --sap-stiffness,\n"
    "--sap-dissipation, --check-every and\n"
    "--max-seconds (per step) as for `clcone solve`; the soft model's time step is\n"
    "the simulation's. A step whose solve fails or diverges is solved again with\n"
    "the model's Gauss-Seidel (pgs or nsgs on ref, cgs on a device); when that\n"
    "fails too, or there is none (sap), simulate stops with the previous state.\n"
    "The last line: status=<converged|maxiter|failed> error=<largest step error>\n"
    "iters=<all iterations> time_ms=<all solves> contacts=<last step's>; exit code\n"
    "0 only when every step converged.\n";

static const char *const USAGE_DEMO_PILE =
    "usage: clcone demo [--n N] [--steps K] [--max-iter M] [--device D] [--png FILE]\n"
    "                   [--png-size WxH] [--siconos]\n"
    "The main job: a pile of N spheres (default 20000) stepped K times (default 5)\n"
    "with every contact solve on the OpenCL device (ccp model, ACGS, float, tol\n"
    "1e-4, at most M iterations a step, default 1000), the last solve repeated\n"
    "with the CPU reference, a table of both, and a picture of the pile (default\n"
    "build/demo-pile.png). The last line is the device run's (as simulate's);\n"
    "solves stopped at their cap give status=maxiter, exit code 1.\n"
    "demo --siconos [--dir DIR] [--tol T] [--device D]: the Siconos table\n"
    "(`clcone demo --siconos --help`).\n";


typedef struct sim_outputs {
    const char *csv, *vtk, *png, *scene_out;
    int vtk_every;
    int png_w, png_h;
    const char *plot;      /* simulate --plot FILE.png */
    const char *label;     /* scene, model and device, for the titles */
    const char *source;    /* the scene file, named in a step's error (NULL: generated) */
    int (*sync)(clcone_error *e); /* before the world is written (--mpi: from the ranks; NULL: none) */
    double rebalance;      /* --mpi-rebalance (< 0: the default) */
    int threads;           /* --threads, for several worlds (0: not given) */
    double tol;            /* the solves' tolerance, on the plot */
} sim_outputs;

typedef struct vtk_series {
    int nframes, cap;
    char **files;
    double *times;
} vtk_series;

static void series_free(vtk_series *s)
{
    for (int i = 0; i < 2 * s->nframes; ++i) free(s->files[i]);
    free(s->files);
    free(s->times);
}

/* Whether --vtk DIR writes a file of this name: series.pvd or a frame's
 * bodies_K.vtk or contacts_K.vtk (vtk_frame). */
static int vtk_writes(const char *name, const void *unused)
{
    const char *p = strncmp(name, "bodies_", 7) == 0 ? name + 7 : strncmp(name, "contacts_", 9) == 0 ? name + 9 : NULL;
    size_t digits = p ? strspn(p, "0123456789") : 0;
    (void)unused;
    return strcmp(name, "series.pvd") == 0 || (digits >= 6 && strcmp(p + digits, ".vtk") == 0);
}

/* Writes frame k into dir (file names relative to dir go in the series). */
static int vtk_frame(const char *dir, int k, double t, const clcone_world *w, const double *r, vtk_series *S,
                     clcone_error *e)
{
    char bp[4096], cp[4096], bn[64], cn[64];
    if (S->nframes == S->cap) {
        int nc = S->cap ? 2 * S->cap : 64;
        char **f = realloc(S->files, 2 * (size_t)nc * sizeof *f);
        double *tt = f ? realloc(S->times, (size_t)nc * sizeof *tt) : NULL;
        if (f) S->files = f;
        if (!tt) {
            e->code = CLCONE_ENOMEM;
            snprintf(e->msg, sizeof e->msg, "out of memory for the VTK series");
            return -1;
        }
        S->times = tt;
        S->cap = nc;
    }
    snprintf(bn, sizeof bn, "bodies_%06d.vtk", k);
    snprintf(cn, sizeof cn, "contacts_%06d.vtk", k);
    snprintf(bp, sizeof bp, "%s/%s", dir, bn);
    snprintf(cp, sizeof cp, "%s/%s", dir, cn);
    if (clcone_write_vtk(bp, cp, w, r, e)) return -1;
    S->files[2 * S->nframes] = strdup(bn);
    S->files[2 * S->nframes + 1] = strdup(cn);
    S->times[S->nframes] = t;
    S->nframes++;
    if (!S->files[2 * S->nframes - 2] || !S->files[2 * S->nframes - 1]) {
        e->code = CLCONE_ENOMEM;
        snprintf(e->msg, sizeof e->msg, "out of memory for the VTK series");
        return -1;
    }
    return 0;
}


typedef struct sim_totals {
    int all_converged, iters, contacts, steps, failed, fell_back;
    double max_error, solve_ms, setup_ms;
    clcone_step_info last;
} sim_totals;

/* The run's status for the last line: failed when any step's solve
 * failed (fallback or not), else converged or maxiter. */
static const char *totals_status(const sim_totals *T)
{
    return T->failed ? "failed" : T->all_converged ? "converged" : "maxiter";
}

/* Runs `steps` steps with the outputs; fills totals. Returns 0 or an exit
 * code after printing why. */
static int run_steps_caught(clcone_world *w, clcone_sim *sim, int steps, const sim_outputs *out, int show_progress,
                            sim_totals *T)
{
    FILE *csv = NULL;
    clcone_out *csv_out = NULL; /* the CSV replaces an old log only when the run ends */
    vtk_series S;
    clcone_error e;
    double t0 = cli_now_ms(), *plot = NULL; /* --plot: iterations, errors, times, `steps` each */
    int rc = 0, nplot = 0;
    char title[800];
    memset(&S, 0, sizeof S);
    memset(T, 0, sizeof *T);
    T->all_converged = 1;
    if (out->csv) {
        if (clcone_out_open(out->csv, &csv_out, &e)) return lib_error(&e);
        csv = clcone_out_file(csv_out);
        cli_sim_csv_header(csv, 0);
    }
    if (out->vtk) {
        if ((rc = cli_make_dir("--vtk", out->vtk))) {
            clcone_out_close(csv_out, 0, NULL);
            return rc;
        }
        if (vtk_frame(out->vtk, 0, 0.0, w, NULL, &S, &e)) goto libfail;
    }
    if (out->plot && !(plot = calloc(3 * (size_t)steps + 1, sizeof *plot))) {
        e.code = CLCONE_ENOMEM;
        snprintf(e.msg, sizeof e.msg, "%s: out of memory for the plot of %d steps", out->plot, steps);
        goto libfail;
    }
    for (int k = 1; k <= steps && !cli_stop_requested(); ++k) {
        clcone_step_info in;
        if (clcone_sim_step(sim, &in, &e)) {
            char msg[sizeof e.msg + 32];
            snprintf(msg, sizeof msg, "step %d: %s", k, e.msg);
            memcpy(e.msg, msg, sizeof e.msg - 1);
            e.msg[sizeof e.msg - 1] = 0;
            if (out->source) cli_name_file(&e, out->source);
            goto libfail;
        }
        T->all_converged &= in.solve.status == CLCONE_CONVERGED && !in.fell_back;
        T->failed += in.fell_back || !in.applied;
        T->fell_back += in.fell_back;
        T->iters += in.solve.iters;
        T->solve_ms += in.solve.time_ms;
        T->setup_ms += in.setup_ms;
        T->max_error = fmax(T->max_error, in.solve.error);
        T->contacts = in.contacts;
        T->last = in;
        if (plot) {
            plot[nplot] = in.solve.iters;
            plot[steps + nplot] = in.solve.error;
            plot[2 * (size_t)steps + nplot] = in.solve.time_ms;
            ++nplot;
        }
        if (csv) cli_sim_csv_row(csv, -1, &in);
        if (in.fell_back && T->fell_back == 1) {
            if (show_progress) fprintf(stderr, "\n");
            fprintf(stderr, "clcone: step %d: the contact solve %s (%s); solved again with %s (%s)%s\n", in.step,
                    clcone_run_status_name(in.failed.status), in.failed.reason, clcone_solver_name(in.fallback),
                    clcone_run_status_name(in.solve.status),
                    in.applied ? ", which was applied; later fallbacks are in the CSV's fallback column" : "");
        }
        if (!in.applied) {
            if (show_progress) fprintf(stderr, "\n");
            fprintf(stderr, "clcone: step %d: the contact solve %s (%s)%s; stopping with the state of step %d\n",
                    in.step, clcone_run_status_name(in.solve.status), in.solve.reason,
                    in.fell_back ? ", the fallback too" : " and there is no fallback solver", in.step - 1);
            break;
        }
        T->steps = k;
        if (out->vtk && (k % out->vtk_every == 0 || k == steps)
            && ((out->sync && out->sync(&e)) || vtk_frame(out->vtk, k, k * w->dt, w, clcone_sim_reactions(sim), &S, &e)))
            goto libfail;
        if (show_progress) cli_steps_progress(k, steps, in.contacts, t0);
    }
    /* a run stopped early still ends with its last finished state */
    if (cli_stop_requested() && show_progress) fprintf(stderr, "\n");
    if ((out->png || out->scene_out || (cli_stop_requested() && out->vtk)) && out->sync && out->sync(&e)) goto libfail;
    if (cli_stop_requested() && out->vtk && T->steps % out->vtk_every != 0
        && vtk_frame(out->vtk, T->steps, T->steps * w->dt, w, clcone_sim_reactions(sim), &S, &e))
        goto libfail;
    if (out->vtk) {
        char pvd[4096];
        snprintf(pvd, sizeof pvd, "%s/series.pvd", out->vtk);
        if (clcone_write_pvd(pvd, S.nframes, (const char *const *)S.files, S.times, 2, &e)) goto libfail;
    }
    snprintf(title, sizeof title, "%s, step %d, %d contacts", out->label ? out->label : "", T->steps, T->contacts);
    if (out->png && clcone_render_png(out->png, w, clcone_sim_reactions(sim), out->png_w, out->png_h, title, &e))
        goto libfail;
    if (plot && cli_plot_steps(out->plot, out->label, nplot, plot, plot + steps, plot + 2 * (size_t)steps, out->tol, &e))
        goto libfail;
    if (out->scene_out && clcone_write_world(out->scene_out, w, &e)) goto libfail;
    if (csv_out && clcone_out_close(csv_out, 1, &e)) rc = lib_error(&e);
    series_free(&S);
    free(plot);
    return rc;
libfail:
    if (show_progress) fprintf(stderr, "\n");
    clcone_out_close(csv_out, 0, NULL);
    series_free(&S);
    free(plot);
    return lib_error(&e);
}

/* run_steps_caught with SIGINT and SIGTERM caught for the run: after
 * one, cli_stop_requested() and the outputs hold the finished steps. */
static int run_steps(clcone_world *w, clcone_sim *sim, int steps, const sim_outputs *out, int show_progress,
                     sim_totals *T)
{
    int rc;
    cli_catch_stop_signals();
    rc = run_steps_caught(w, sim, steps, out, show_progress, T);
    cli_release_stop_signals();
    return rc;
}

/* simulate's own options, taken out of args (the rest go to the shared
 * parser): --steps, --dt and the outputs. 0, or an exit code after
 * saying what was wrong. */
static int take_sim_options(int *argc, char **args, sim_outputs *out, int *steps, double *dt)
{
    const char *v, *vtk_every, *png_size;
    cli_opt_fault missing = {NULL, 0};
    int rc;
    memset(out, 0, sizeof *out);
    out->vtk_every = 1;
    out->png_w = 1200;
    out->png_h = 900;
    if ((v = cli_take_opt(argc, args, "--steps", &missing))
        && (rc = cli_int_opt(USAGE_SIMULATE, "--steps", v, 1, INT_MAX, steps)))
        return rc;
    if ((v = cli_take_opt(argc, args, "--dt", &missing)) && (!parse_double(v, dt) || !(*dt > 0)))
        return usage_error(USAGE_SIMULATE, "--dt needs a number > 0, got '%s'", v);
    out->rebalance = -1;
    if ((v = cli_take_opt(argc, args, "--threads", &missing))
        && (rc = cli_int_opt(USAGE_SIMULATE, "--threads", v, 1, CLCONE_SIM_THREADS, &out->threads)))
        return rc;
    if ((v = cli_take_opt(argc, args, "--mpi-rebalance", &missing))
        && (!parse_double(v, &out->rebalance) || !(out->rebalance >= 0)))
        return usage_error(USAGE_SIMULATE, "--mpi-rebalance needs a number >= 0, got '%s'", v);
    vtk_every = cli_take_opt(argc, args, "--vtk-every", &missing);
    out->csv = cli_take_opt(argc, args, "--csv", &missing);
    out->vtk = cli_take_opt(argc, args, "--vtk", &missing);
    out->png = cli_take_opt(argc, args, "--png", &missing);
    png_size = cli_take_opt(argc, args, "--png-size", &missing);
    if (vtk_every && (rc = out->vtk ? cli_int_opt(USAGE_SIMULATE, "--vtk-every", vtk_every, 1, INT_MAX, &out->vtk_every)
                                    : usage_error(USAGE_SIMULATE, "--vtk-every does not apply: %s", "no --vtk DIR")))
        return rc;
    if (png_size && (rc = cli_png_size(USAGE_SIMULATE, out->png, png_size, &out->png_w, &out->png_h))) return rc;
    if (missing.opt) return cli_opt_fault_error(USAGE_SIMULATE, &missing);
    return 0;
}

/* simulate's report of a finished run (T of `steps`) and its outputs,
 * with the last line; the exit code. */
static int report_run(const sim_totals *T, int steps, const sim_outputs *out)
{
    printf("steps:    %d of %d, %s, largest error %.3e, %d iterations, %.1f ms of contact solves "
           "(and %.1f ms of their set-up)\n",
           T->steps, steps,
           T->failed ? "some solves failed (see above and the CSV)"
           : T->all_converged ? "every solve converged"
                              : "some solves stopped at their cap before the tolerance",
           T->max_error, T->iters, T->solve_ms, T->setup_ms);
    if (out->csv) printf("log:      %s\n", out->csv);
    if (out->vtk) printf("vtk:      %s/series.pvd\n", out->vtk);
    if (out->png) printf("picture:  %s\n", out->png);
    if (out->plot) printf("plot:     %s\n", out->plot);
    if (out->scene_out) printf("scene:    final state written to %s\n", out->scene_out);
    print_last_line(totals_status(T), T->max_error, T->iters, T->solve_ms, T->contacts);
    return cli_stop_requested() ? cli_report_interrupted(T->steps, steps) : T->all_converged && !T->failed ? 0 : EXIT_NOTCONV;
}

/* The run's device: under `--mpi` every rank's (rank 0's into *ctx);
 * 0, or the exit code after saying why. */
static int sim_open_device(const cli_args *a, clcone_context **ctx)
{
    clcone_error e;
#ifdef CLCONE_MPI
    if (a->mpi) return cli_mpi_sim_open(a, ctx);
#endif
    return !is_ref(a->device) && cli_open_device(a->device, a->prec, ctx, &e) ? lib_error(&e) : 0;
}

/* Under `--mpi`: sim's solves over the ranks (attach), the ranks let go
 * (attach 0), after a successful sim_open_device. */
static int sim_over_ranks(const cli_args *a, clcone_sim *sim, clcone_context *ctx, sim_outputs *out, int attach)
{
#ifdef CLCONE_MPI
    if (a->mpi && attach) {
        out->sync = cli_mpi_sim_sync;
        return cli_mpi_sim_attach(sim, ctx, out->rebalance);
    }
    if (a->mpi) cli_mpi_sim_close();
#else
    (void)a, (void)sim, (void)ctx, (void)out, (void)attach;
#endif
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    sim_outputs out;
    cli_args a;
    clcone_world w;
    clcone_context *ctx = NULL;
    clcone_sim *sim = NULL;
    clcone_sim_options so;
    clcone_error e;
    sim_totals T;
    char backend[400], blabel[300], label[800];
    static const char *const unused[] = {"--warm", "--compare", "--dir", NULL};
    int steps = -1, rc;
    double dt = 0;
    char **args;
    if (cli_want_help(argc, argv, USAGE_SIMULATE)) return 0;
    /* a private argv: the simulate options are taken out, the rest go to
     * the shared parser */
    args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) return EXIT_USAGE;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    rc = take_sim_options(&argc, args, &out, &steps, &dt);
    if (rc) {
        free(args);
        return rc;
    }
    rc = parse_args(argc, args, USAGE_SIMULATE, CLI_MAX_FILES, &a);
    free(args);
    if (rc) return rc < 0 ? 0 : rc;
    clcone_sim_options_default(&so);
    if (!cli_given(&a, "--model")) a.o.model = so.solve.model;
    if (!cli_given(&a, "--max-iter")) a.o.max_iter = so.solve.max_iter;
    if (a.npos < 1) return usage_error(USAGE_SIMULATE, "simulate needs a SCENE file%s", "");
    if (steps < 0) return usage_error(USAGE_SIMULATE, "simulate needs --steps K%s", "");
    if (out.rebalance >= 0 && !a.mpi) return usage_error(USAGE_SIMULATE, "--mpi-rebalance does not apply: %s", "no --mpi");
    if ((rc = cli_refuse(&a, USAGE_SIMULATE, unused, "simulate starts every step from the last one"))
        || (rc = cli_check_applicable(&a, USAGE_SIMULATE, 1)))
        return rc;
    if (a.npos > 1) {
        const char *one = out.vtk ? "--vtk" : out.png ? "--png" : a.plot ? "--plot" : a.mpi ? "--mpi" : NULL;
        if (one) return usage_error(USAGE_SIMULATE, "%s takes one SCENE (one world a run)", one);
        return cli_simulate_worlds(&a, steps, dt, out.csv, out.threads);
    }
    if (out.threads) return usage_error(USAGE_SIMULATE, "--threads steps the worlds of several SCENEs%s", "");
    out.scene_out = a.out;
    {
        const cli_output outs[] = {{"--csv", out.csv, 0, NULL, NULL}, {"--vtk", out.vtk, 1, vtk_writes, NULL},
                                   {"--png", out.png, 0, NULL, NULL}, {"--plot", a.plot, 0, NULL, NULL},
                                   {"--out", a.out, 0, NULL, NULL}};
        const cli_input in = {"SCENE", a.positional[0]};
        if ((rc = cli_check_outputs(outs, (int)(sizeof outs / sizeof outs[0]), &in, 1))) return rc;
    }
    if (clcone_read_world(a.positional[0], &w, &e)) return lib_error(&e);
    if (dt > 0) w.dt = dt;
    if ((rc = sim_open_device(&a, &ctx))) {
        clcone_world_free(&w);
        return rc;
    }
    describe_backend(ctx, backend, sizeof backend);
    clcone_sim_options_resolve(&a.o, ctx);
    so.solve = a.o;
    if ((rc = clcone_sim_create(&w, ctx, &so, &sim, &e) ? lib_error(&e) : sim_over_ranks(&a, sim, ctx, &out, 1))) {
        sim_over_ranks(&a, sim, ctx, &out, 0);
        clcone_sim_free(sim);
        clcone_context_free(ctx);
        clcone_world_free(&w);
        return rc;
    }
    printf("scene:    %s (%d bodies, %d planes), %d steps of %g s\n", a.positional[0], w.s.nbodies, w.nplanes, steps,
           w.dt);
    printf("model:    %s, solver %s, tol %.1e, at most %d iterations a step, device %s\n",
           clcone_model_name(a.o.model), clcone_solver_name(a.o.solver), a.o.tol, a.o.max_iter, backend);
    fflush(stdout);
    describe_backend(ctx, blabel, sizeof blabel);
    snprintf(label, sizeof label, "%s, %s/%s on %s", a.positional[0], clcone_model_name(so.solve.model),
             clcone_solver_name(so.solve.solver), blabel);
    out.label = label;
    out.source = a.positional[0];
    out.plot = a.plot;
    out.tol = so.solve.tol;
    rc = run_steps(&w, sim, steps, &out, a.progress || isatty(2), &T);
    sim_over_ranks(&a, sim, ctx, &out, 0);
    if (rc == 0) rc = report_run(&T, steps, &out);
    clcone_sim_free(sim);
    clcone_context_free(ctx);
    clcone_world_free(&w);
    return rc;
}

/* ------------------------------------------------------------------ */

typedef struct demo_options {
    const char *png, *device;
    int n, steps, max_iter, png_w, png_h;
} demo_options;

/* The demo's options (args, argc of them); 0, or an exit code after
 * saying what was wrong. */
static int take_demo_options(int argc, char **args, demo_options *d)
{
    const char *v;
    cli_opt_fault missing = {NULL, 0};
    int rc;
    if (((v = cli_take_opt(&argc, args, "--n", &missing))
         && (rc = cli_int_opt(USAGE_DEMO_PILE, "--n", v, 1, INT_MAX, &d->n)))
        || ((v = cli_take_opt(&argc, args, "--steps", &missing))
            && (rc = cli_int_opt(USAGE_DEMO_PILE, "--steps", v, 1, INT_MAX, &d->steps)))
        || ((v = cli_take_opt(&argc, args, "--max-iter", &missing))
            && (rc = cli_int_opt(USAGE_DEMO_PILE, "--max-iter", v, 1, INT_MAX, &d->max_iter))))
        return rc;
    if ((v = cli_take_opt(&argc, args, "--png", &missing))) d->png = v;
    if ((v = cli_take_opt(&argc, args, "--png-size", &missing)) &&
        (rc = cli_png_size(USAGE_DEMO_PILE, d->png, v, &d->png_w, &d->png_h)))
        return rc;
    d->device = cli_take_opt(&argc, args, "--device", &missing);
    if (missing.opt) return cli_opt_fault_error(USAGE_DEMO_PILE, &missing);
    if (argc > 0) return usage_error(USAGE_DEMO_PILE, "unexpected argument or unknown option '%s'", args[0]);
    return 0;
}

/* The last step's problem again, on the reference, from the same warm
 * start, beside the device's solve of it (T->last); 0, or the exit code
 * of a failure it printed. */
static int demo_compare(const clcone_sim *sim, const clcone_options *so, const sim_totals *T)
{
    const double *r0;
    const clcone_scene *last = clcone_sim_last_scene(sim, &r0);
    size_t m = 3 * (size_t)last->ncontacts;
    double *rr = malloc((m + 1) * sizeof *rr);
    clcone_result res;
    clcone_options ro = *so;
    clcone_error e;
    ro.warm_start = 1;
    if (!rr) return EXIT_USAGE;
    memcpy(rr, r0, m * sizeof *rr);
    if (clcone_solve_scene(NULL, last, &ro, rr, &res, &e)) {
        free(rr);
        return lib_error(&e);
    }
    {
        const clcone_prob_result *d = &T->last.solve, *f = &res.items[0];
        const double *rd = clcone_sim_reactions(sim);
        double rmax = 0;
        for (size_t k = 0; k < m; ++k) rmax = fmax(rmax, fabs(rr[k]));
        printf("\nlast contact solve (step %d: %d contacts, %d bodies), both from the same warm start:\n",
               T->last.step, last->ncontacts, last->nbodies);
        printf("  %-34s %10s %12s %12s\n", "backend", "iterations", "error", "time ms");
        printf("  %-34s %10d %12.3e %12.1f\n", "device (OpenCL, float)", d->iters, d->error, d->time_ms);
        printf("  %-34s %10d %12.3e %12.1f\n", "reference (CPU, double, 1 thread)", f->iters, f->error,
               f->time_ms);
        printf("  max |r_device - r_reference| = %.3e (max |r_reference| = %.3e)\n", cli_max_abs_diff(rd, rr, m),
               rmax);
        printf("  speed ratio reference/device = %.2f\n", d->time_ms > 0 ? f->time_ms / d->time_ms : 0.0);
    }
    clcone_result_free(&res);
    free(rr);
    return 0;
}

int cmd_demo_pile(int argc, char **argv)
{
    demo_options d = {"build/demo-pile.png", NULL, 20000, 5, 1000, 1200, 900};
    int rc;
    clcone_gen_params gp;
    clcone_world w;
    clcone_context *ctx = NULL;
    clcone_sim *sim = NULL;
    clcone_sim_options so;
    clcone_error e;
    sim_outputs out;
    sim_totals T;
    char backend[400], blabel[300], label[800];
    double t_start = cli_now_ms();
    char **args;
    if (cli_want_help(argc, argv, USAGE_DEMO_PILE)) return 0;
    args = malloc(((size_t)argc + 1) * sizeof *args);
    if (!args) return EXIT_USAGE;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    rc = take_demo_options(argc, args, &d);
    free(args);
    if (rc) return rc;
    if (strcmp(d.png, "build/demo-pile.png") == 0) (void)mkdir("build", 0777);
    {
        const cli_output outs[] = {{"--png", d.png, 0, NULL, NULL}};
        if ((rc = cli_check_outputs(outs, 1, NULL, 0))) return rc;
    }

    clcone_gen_params_default(&gp);
    gp.n = d.n;
    if (clcone_world_generate("pile", &gp, &w, &e)) return lib_error(&e);
    if (d.device && strcmp(d.device, "ref") == 0) {
        fprintf(stderr, "clcone: the demo compares a device against the reference; pick an OpenCL device\n");
        clcone_world_free(&w);
        return EXIT_USAGE;
    }
    if (cli_open_device(d.device, CLCONE_FLOAT, &ctx, &e)) {
        clcone_world_free(&w);
        return lib_error(&e);
    }
    describe_backend(ctx, backend, sizeof backend);
    /* The convex model with accelerated CGS: on this pile (57,000
     * contacts) every step's warm-started solve reaches 1e-4, 1,570
     * iterations over the five steps, the first from rest the most (POCL,
     * 2 cores; 300 iterations a step, the cap before, ended at 1.2e-4,
     * APGD's at 5.1e-3). */
    clcone_sim_options_default(&so);
    so.solve.model = CLCONE_MODEL_CCP;
    so.solve.solver = CLCONE_SOLVER_ACGS;
    so.solve.tol = 1e-4;
    so.solve.max_iter = d.max_iter;
    if (clcone_sim_create(&w, ctx, &so, &sim, &e)) {
        clcone_context_free(ctx);
        clcone_world_free(&w);
        return lib_error(&e);
    }
    printf("clcone demo: a pile of %d spheres in a box, %d steps of %g s\n", w.s.nbodies, d.steps, w.dt);
    printf("device:      %s\n", backend);
    printf("solver:      %s, %s, tol %.0e, at most %d iterations a step, warm-started\n",
           clcone_model_name(so.solve.model), clcone_solver_name(so.solve.solver), so.solve.tol, so.solve.max_iter);
    fflush(stdout);
    memset(&out, 0, sizeof out);
    out.png = d.png;
    out.png_w = d.png_w;
    out.png_h = d.png_h;
    out.vtk_every = 1;
    describe_backend(ctx, blabel, sizeof blabel);
    snprintf(label, sizeof label, "demo pile of %d spheres, %s/%s on %s", w.s.nbodies, clcone_model_name(so.solve.model),
             clcone_solver_name(so.solve.solver), blabel);
    out.label = label;
    rc = run_steps(&w, sim, d.steps, &out, isatty(2), &T);
    if (rc == 0 && cli_stop_requested()) rc = cli_report_interrupted(T.steps, d.steps);
    if (rc == 0 && (rc = demo_compare(sim, &so.solve, &T)) == 0) {
        printf("all %d steps: %d iterations, %.1f ms of device solves (and %.1f ms of their set-up), "
               "largest error %.3e\n",
               T.steps, T.iters, T.solve_ms, T.setup_ms, T.max_error);
        if (!T.all_converged)
            printf("not converged: %s; the device solves stop at %d iterations a step, short of tol %.0e "
                   "(status=%s, exit code 1)\n",
                   T.failed ? "a solve failed" : "a step reached its iteration cap", so.solve.max_iter,
                   so.solve.tol, totals_status(&T));
        printf("picture:     %s\n", d.png);
        printf("wall time:   %.1f s\n", (cli_now_ms() - t_start) / 1000.0);
        /* the device run's figures, as simulate reports them */
        print_last_line(totals_status(&T), T.max_error, T.iters, T.solve_ms, T.contacts);
        rc = T.all_converged && !T.failed ? 0 : EXIT_NOTCONV;
    }
    clcone_sim_free(sim);
    clcone_context_free(ctx);
    clcone_world_free(&w);
    return rc;
}
