/* `simulate SCENE SCENE...`: worlds stepped together (clcone_sim_step_many),
 * each as it is alone, with a line per world and the run's last line. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether --out DIR writes a file of this name: a world's (a is the cli_args). */
static int worlds_write(const char *name, const void *a)
{
    const cli_args *args = a;
    for (int k = 0; k < args->npos; ++k)
        if (strcmp(cli_base_name(args->positional[k]), name) == 0) return 1;
    return 0;
}

/* Each world's run so far. */
typedef struct world_run {
    int steps, iters, failed, capped, contacts;
    double max_error;
} world_run;

/* The worlds' files read and their steppers made on ctx; 0, or the exit code after saying why. */
static int open_worlds(cli_args *a, double dt, int threads, clcone_context *ctx, clcone_world *w, clcone_sim **sims)
{
    clcone_sim_options so;
    clcone_error e;
    clcone_sim_options_default(&so);
    so.solve = a->o;
    so.threads = so.solve.threads = threads; /* and the device batch's hand-overs to the host */
    for (int k = 0; k < a->npos; ++k) {
        if (clcone_read_world(a->positional[k], &w[k], &e)) return lib_error(&e);
        if (dt > 0) w[k].dt = dt;
        if (clcone_sim_create(&w[k], ctx, &so, &sims[k], &e)) {
            cli_name_file(&e, a->positional[k]);
            return lib_error(&e);
        }
    }
    return 0;
}

/* One step of every world, into run and the CSV; the step's solve time
 * (the batch's once, the others' each) added to *solve_ms. 0, or the exit
 * code after saying why (a failed world's step stops the run). */
static int step_worlds(const cli_args *a, clcone_sim **sims, clcone_step_info *in, FILE *csv,
                       world_run *run, double *solve_ms)
{
    clcone_error e;
    double batch = 0;
    int rc = 0;
    if (clcone_sim_step_many(sims, a->npos, in, &e)) return lib_error(&e);
    for (int k = 0; k < a->npos; ++k) {
        world_run *r = &run[k];
        const clcone_step_info *s = &in[k];
        if (s->local && !s->fell_back) batch = fmax(batch, s->solve.time_ms);
        else *solve_ms += s->solve.time_ms;
        r->iters += s->solve.iters;
        r->failed += s->fell_back || !s->applied;
        r->capped += s->solve.status != CLCONE_CONVERGED;
        r->max_error = fmax(r->max_error, s->solve.error);
        r->contacts = s->contacts;
        if (csv) cli_sim_csv_row(csv, k, s);
        if (!s->applied) {
            fprintf(stderr, "clcone: %s: step %d: the contact solve %s (%s); stopping with the state of step %d\n",
                    a->positional[k], s->step, clcone_run_status_name(s->solve.status), s->solve.reason, s->step - 1);
            rc = EXIT_NOTCONV;
        } else {
            r->steps = s->step;
        }
    }
    *solve_ms += batch;
    return rc;
}

/* The worlds' final states into --out DIR; 0, or the exit code. */
static int write_worlds(const cli_args *a, const clcone_world *w)
{
    clcone_error e;
    char path[4096];
    int rc = cli_make_dir("--out", a->out);
    for (int k = 0; k < a->npos && !rc; ++k) {
        int n = snprintf(path, sizeof path, "%s/%s", a->out, cli_base_name(a->positional[k]));
        if (n < 0 || (size_t)n >= sizeof path) {
            fprintf(stderr, "clcone: --out %s: path too long for %s\n", a->out, a->positional[k]);
            return EXIT_USAGE;
        }
        if (clcone_write_world(path, &w[k], &e)) rc = lib_error(&e);
    }
    return rc;
}

/* The steps, with SIGINT/SIGTERM caught; *done: the steps finished. */
static int run_worlds(const cli_args *a, clcone_sim **sims, int steps, clcone_out *csv_out,
                      world_run *run, double *solve_ms, int *done)
{
    FILE *csv = csv_out ? clcone_out_file(csv_out) : NULL;
    clcone_step_info *in = calloc((size_t)a->npos, sizeof *in);
    double t0 = cli_now_ms();
    int rc = 0, show = a->progress || isatty(2);
    if (!in) return EXIT_USAGE;
    if (csv) cli_sim_csv_header(csv, 1);
    cli_catch_stop_signals();
    for (int k = 1; k <= steps && !rc && !cli_stop_requested(); ++k) {
        int contacts = 0;
        rc = step_worlds(a, sims, in, csv, run, solve_ms);
        if (!rc) *done = k;
        for (int i = 0; i < a->npos; ++i) contacts += in[i].contacts;
        if (show) cli_steps_progress(k, steps, contacts, t0);
    }
    cli_release_stop_signals();
    if (show && *done < steps) fprintf(stderr, "\n");
    free(in);
    return rc;
}

int cli_simulate_worlds(cli_args *a, int steps, double dt, const char *csv, int threads)
{
    const cli_output outs[] = {{"--csv", csv, 0, NULL, NULL}, {"--out", a->out, 1, worlds_write, a}};
    cli_input *ins = calloc((size_t)a->npos, sizeof *ins);
    clcone_world *w = calloc((size_t)a->npos, sizeof *w);
    clcone_sim **sims = calloc((size_t)a->npos, sizeof *sims);
    world_run *run = calloc((size_t)a->npos, sizeof *run);
    clcone_context *ctx = NULL;
    clcone_out *csv_out = NULL;
    clcone_error e;
    char backend[400];
    double solve_ms = 0, emax = 0;
    int rc = EXIT_USAGE, done = 0, iters = 0, contacts = 0, all = 1, failed = 0;
    if (!ins || !w || !sims || !run) goto out;
    for (int k = 0; k < a->npos; ++k) ins[k] = (cli_input){"SCENE", a->positional[k]};
    if ((rc = cli_check_outputs(outs, 2, ins, a->npos)) || (a->out && (rc = cli_names_differ(a, a->out, "final states"))))
        goto out;
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, &ctx, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    clcone_sim_options_resolve(&a->o, ctx);
    if ((rc = open_worlds(a, dt, threads, ctx, w, sims))) goto out;
    describe_backend(ctx, backend, sizeof backend);
    printf("worlds:   %d scene files, %d steps\n", a->npos, steps);
    printf("model:    %s, solver %s, tol %.1e, at most %d iterations a step, device %s\n",
           clcone_model_name(a->o.model), clcone_solver_name(a->o.solver), a->o.tol, a->o.max_iter, backend);
    fflush(stdout);
    if (csv && clcone_out_open(csv, &csv_out, &e)) {
        rc = lib_error(&e);
        goto out;
    }
    rc = run_worlds(a, sims, steps, csv_out, run, &solve_ms, &done);
    /* the finished steps' outputs, also after a signal or a failed world */
    if (a->out && done > 0) {
        int wrc = write_worlds(a, w);
        rc = rc ? rc : wrc;
    }
    if (csv_out && clcone_out_close(csv_out, done > 0, &e) && !rc) rc = lib_error(&e);
    csv_out = NULL;
    for (int k = 0; k < a->npos; ++k) {
        const world_run *r = &run[k];
        printf("world %d: %s steps=%d status=%s error=%.6e iters=%d contacts=%d\n", k, a->positional[k], r->steps,
               r->failed ? "failed" : r->capped ? "maxiter" : "converged", r->max_error, r->iters, r->contacts);
        all &= !r->failed && !r->capped;
        failed |= r->failed;
        iters += r->iters;
        contacts += r->contacts;
        emax = fmax(emax, r->max_error);
    }
    if (a->out && done > 0) printf("scenes:   final states written to %s/<file name>\n", a->out);
    if (csv) printf("log:      %s\n", csv);
    print_last_line(failed || (rc && rc != EXIT_NOTCONV) ? "failed" : all ? "converged" : "maxiter", emax, iters,
                    solve_ms, contacts);
    if (!rc) rc = cli_stop_requested() ? cli_report_interrupted(done, steps) : all ? 0 : EXIT_NOTCONV;
out:
    clcone_out_close(csv_out, 0, NULL);
    for (int k = 0; k < a->npos; ++k) {
        if (sims) clcone_sim_free(sims[k]);
        if (w) clcone_world_free(&w[k]);
    }
    clcone_context_free(ctx);
    free(ins);
    free(w);
    free(sims);
    free(run);
    return rc;
}
