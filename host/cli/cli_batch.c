/* `solve FILE FILE...` and `solve --mpi`: a batch of problem and scene
 * files, its outputs checked before anything is read and its reactions
 * written a file per input. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the batch's --out DIR puts problem k's reactions: DIR/<file
 * name>.r; 0, or EXIT_USAGE after saying why not. */
static int batch_reactions_path(const cli_args *a, int k, char *path, size_t len)
{
    int n = snprintf(path, len, "%s/%s.r", a->out, cli_base_name(a->positional[k]));
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "clcone: --out %s: path too long for %s\n", a->out, a->positional[k]);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_names_differ(const cli_args *a, const char *out, const char *what)
{
    for (int k = 0; k < a->npos; ++k)
        for (int j = 0; j < k; ++j)
            if (strcmp(cli_base_name(a->positional[j]), cli_base_name(a->positional[k])) == 0) {
                fprintf(stderr, "clcone: %s and %s: two files have the same name, so %s cannot tell their %s apart\n",
                        a->positional[j], a->positional[k], out, what);
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
    }
    return cli_names_differ(a, a->out, "reactions");
}

/* Whether the batch's --out DIR writes a file of this name: <file
 * name>.r of one of its files (a is the cli_args). */
static int batch_writes(const char *name, const void *a)
{
    const cli_args *args = a;
    size_t n = strlen(name);
    if (n < 2 || strcmp(name + n - 2, ".r") != 0) return 0;
    for (int k = 0; k < args->npos; ++k) {
        const char *b = cli_base_name(args->positional[k]);
        if (strlen(b) == n - 2 && strncmp(b, name, n - 2) == 0) return 1;
    }
    return 0;
}

/* solve's outputs against each other and its inputs (the files and
 * --warm), before any is read; 0 or EXIT_USAGE after saying why. */
int cli_check_solve_files(const cli_args *a)
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

/* A scene small enough (CLCONE_SCENES_MAX_CONTACTS), whose model and
 * solver the table offers on a batch of scenes (CLCONE_FORM_SCENES; soft
 * with its gaps and time step, which a_ref reads, kept in *gap and
 * *dt), joins the problem files' batch as its local form (*joined = 1,
 * the world freed, *p the form): one device batch for all of them, where
 * scene plans in turn spent their time launching (40 tiny piles, coulomb
 * at 1e-4: 1,101 ms in turn, 34 ms as one batch; soft at 1e-8: 663 ms in
 * turn, 8.6 ms). sap has no such row, and past the limit the body form,
 * solved in turn, keeps W unassembled. Under --mpi too, so that ranks
 * solve what one process solves, but for `solve --mpi SCENE`, one scene
 * over the ranks. 0, or the exit code after saying why. */
static int scene_joins_batch(const cli_args *a, clcone_world *w, clcone_problem *p, double **gap, double *dt,
                             const char *path, int *joined)
{
    clcone_scene sc;
    clcone_error e;
    int rc = 0;
    *joined = 0;
    if ((a->mpi && a->npos == 1) || !clcone_form_offers(CLCONE_FORM_SCENES, &a->o, !is_ref(a->device))) return 0;
    memset(&sc, 0, sizeof sc);
    memset(&e, 0, sizeof e);
    if (clcone_world_contact_scene(w, &sc, &e)) {
        cli_name_file(&e, path);
        return lib_error(&e);
    }
    if (sc.ncontacts > 0 && sc.ncontacts <= CLCONE_SCENES_MAX_CONTACTS) {
        if (clcone_scene_to_local(&sc, p, &e)) {
            cli_name_file(&e, path);
            rc = lib_error(&e);
        } else if (a->o.model == CLCONE_MODEL_SOFT && !(*gap = calloc((size_t)sc.ncontacts, sizeof **gap))) {
            fprintf(stderr, "clcone: out of memory for the gaps of %s\n", path);
            rc = EXIT_USAGE;
        } else {
            for (int c = 0; *gap && c < sc.ncontacts; ++c) (*gap)[c] = sc.contacts[c].gap;
            *dt = w->dt;
            clcone_world_free(w);
            memset(w, 0, sizeof *w);
            *joined = 1;
        }
    }
    clcone_scene_free(&sc);
    return rc;
}

/* soft's R and a_ref of the batch's parts, 3 a contact of the batch,
 * each part's from its own gaps and time step (a joined scene's; the
 * options' for a problem file), so that one plan solves every part as it
 * is solved alone. 0, or the exit code after saying why. */
static int soft_batch_terms(const cli_args *a, const clcone_problem *probs, const clcone_world *worlds,
                            double *const *gap, const double *dt, const clcone_problem *batch, double **R,
                            double **aref)
{
    clcone_error e;
    memset(&e, 0, sizeof e);
    *R = calloc(3 * (size_t)batch->n + 1, sizeof **R);
    *aref = calloc(3 * (size_t)batch->n + 1, sizeof **aref);
    if (!*R || !*aref) {
        fprintf(stderr, "clcone: out of memory for soft's R and a_ref of %d contacts\n", batch->n);
        return EXIT_USAGE;
    }
    for (int k = 0, j = 0; k < a->npos; ++k) {
        clcone_options o = a->o;
        size_t off;
        if (worlds[k].s.bodies) continue;
        off = 3 * (size_t)batch->prob_off[j++];
        if (gap[k]) o.soft_dt = dt[k];
        if (clcone_soft_terms_of(&probs[k], &o, gap[k], *R + off, *aref + off, &e)) {
            cli_name_file(&e, a->positional[k]);
            return lib_error(&e);
        }
    }
    return 0;
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
int cli_solve_batch(cli_args *a, const char *usage)
{
    static const char *const not_in_batch[] = {"--warm", "--compare", "--plot", NULL};
    int nf = a->npos, rc = EXIT_USAGE, worst = CLCONE_CONVERGED, iters = 0, nlocal = 0, total = 0;
    clcone_problem *probs = calloc((size_t)nf, sizeof *probs), batch;
    clcone_world *worlds = calloc((size_t)nf, sizeof *worlds);
    const clcone_problem **parts = calloc((size_t)nf, sizeof *parts);
    clcone_prob_result *out = calloc((size_t)nf, sizeof *out);
    int *n = calloc((size_t)nf, sizeof *n);
    double **rk = calloc((size_t)nf, sizeof *rk), **gap = calloc((size_t)nf, sizeof *gap);
    double *dt = calloc((size_t)nf, sizeof *dt), *soft_R = NULL, *soft_aref = NULL;
    clcone_context *ctx = NULL;
    clcone_plan *pl = NULL;
    clcone_result res;
    clcone_error e;
    double *r = NULL, emax = 0, ms = 0;
    char backend[400];
    int nread = 0;
    memset(&batch, 0, sizeof batch);
    memset(&res, 0, sizeof res);
    if ((rc = cli_refuse(a, usage, not_in_batch, "a batch starts from r = 0 and prints no comparison"))
        || (a->out && (rc = check_batch_outputs(a))))
        goto out;
    rc = EXIT_USAGE;
    if (!probs || !parts || !worlds || !out || !n || !rk || !gap || !dt) {
        fprintf(stderr, "clcone: out of memory for %d files\n", nf);
        goto out;
    }
    for (; nread < nf; ++nread) {
        clcone_input in;
        int joined = 0;
        if (cli_read_input(a, a->positional[nread], usage, CLI_BLOCKS_REFUSE, &in, NULL)) goto out;
        if (in.is_world) {
            worlds[nread] = in.world;
            if ((rc = scene_joins_batch(a, &worlds[nread], &probs[nread], &gap[nread], &dt[nread],
                                         a->positional[nread], &joined))) goto out;
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
        if (a->o.model == CLCONE_MODEL_SOFT
            && (rc = soft_batch_terms(a, probs, worlds, gap, dt, &batch, &soft_R, &soft_aref)))
            goto out;
    }
    a->o.soft_R = soft_R; /* the batch's own, not the scenes' solved in turn */
    a->o.soft_aref = soft_aref;
#ifdef CLCONE_MPI
    if (a->mpi) {
        cli_mpi_batch mb = {nlocal ? &batch : NULL, r, &res, worlds, nf, out, n, rk, &ms};
        rc = cli_mpi_solve(a, &mb, &ctx);
    } else
#endif
        rc = solve_batch_here(a, nlocal ? &batch : NULL, &ctx, &pl, r, &res, &ms);
    a->o.soft_R = a->o.soft_aref = NULL;
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
        if (gap) free(gap[k]);
    }
    free(gap);
    free(dt);
    free(soft_R);
    free(soft_aref);
    free(probs);
    free(worlds);
    free(parts);
    free(out);
    free(n);
    free(rk);
    free(r);
    return rc;
}
