/* The command line's inputs, read once, and the general-block problem
 * files among them (clcone-blocks 1, docs/formats.md section 7): `solve`
 * runs the library's general-block solver on one (apgd; --solver pgs on
 * the reference too) with solve's report, --compare, --plot, --warm and --out (a
 * forces file: one number a row), `check` measures forces against one. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"
#include "core/blocks.h"
#include "io/blocks_file.h"
#include "io/io.h"
#include "output/fclib.h"
#include "solve/blocks_solve.h"
#include "solve/solve_entries.h"
#include "world/world_parts.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options a general-block problem has no use for: its blocks carry their
 * own sets (the law is the file's). */
static const char *const NOT_FOR_BLOCKS[] = {"--model", "--facets", "--fit", "--soft-timeconst", "--soft-dampratio",
                                             "--soft-impedance", "--soft-dt", "--sap-beta",
                                             "--sap-stiffness", "--sap-dissipation", "--dir", NULL};
static const char WHY_NOT[] = "a general-block problem (clcone-blocks) carries its own sets";

/* Whether buf's first token (after comments) is the general-block
 * problem's signature. */
static int is_blocks(const char *name, const char *buf, size_t len)
{
    static const char sig[] = "clcone-blocks";
    clc_tok t;
    clc_tok_init(&t, name, buf, len, 1);
    return clc_tok_next(&t) && t.len == sizeof sig - 1 && memcmp(t.tok, sig, t.len) == 0;
}

/* "N blocks (F free, B box, P nonneg, C cone), M rows, K W blocks". */
static void describe_blocks(const clc_bproblem *p, char *buf, size_t len)
{
    int count[BLK_KINDS] = {0};
    for (int b = 0; b < p->nb; ++b) count[p->kind[b]]++;
    snprintf(buf, len, "%d blocks (%d free, %d box, %d nonneg, %d cone), %d rows, %d W blocks", p->nb,
             count[BLK_FREE], count[BLK_BOX], count[BLK_NONNEG], count[BLK_CONE], p->m, p->nnzb);
}

/* --compare: the same problem on the reference from the start f0, its
 * history into h (NULL: none), beside the device's f and dev. */
static int compare_blocks(const cli_args *a, const clc_bproblem *p, const double *f0, const double *f,
                          const clcone_prob_result *dev, clcone_history *h)
{
    clcone_options o = a->o;
    clcone_prob_result ref;
    clcone_error e;
    double *fr = malloc(sizeof *fr * ((size_t)p->m + 1));
    if (!fr) return EXIT_USAGE;
    memcpy(fr, f0, sizeof *fr * (size_t)p->m);
    if (o.tol < 1e-12) o.tol = 1e-12;
    o.history = h;
    o.progress = NULL;
    if (clc_solve_blocks(NULL, p, &o, fr, &ref, &e)) {
        free(fr);
        return lib_error(&e);
    }
    cli_print_comparison(dev, &ref, f, fr, (size_t)p->m);
    free(fr);
    return 0;
}

/* The report of a solve of p into f (from f0) on ctx: the result lines,
 * --out, --compare, --plot and the last line; the exit code. */
static int report_blocks(const cli_args *a, const clcone_context *ctx, const clc_bproblem *p, const double *f0,
                         const double *f, const clcone_prob_result *res, clcone_history hist[2])
{
    const int on_float = ctx && clcone_context_precision(ctx) == CLCONE_FLOAT;
    clcone_error e;
    char what[200];
    int rc;
    printf("result:   %s after %d iterations, error %.3e (tol %.1e; evaluated in %s%s), %.1f ms\n",
           clcone_run_status_name(res->status), res->iters, res->error, a->o.tol, on_float ? "float" : "double",
           ctx ? " on the device" : "", res->time_ms);
    if (on_float) printf("          error of f in double (as `clcone check` measures it): %.3e\n",
                         clc_bproblem_error(p, f, NULL));
    if (res->reason[0]) printf("reason:   %s\n", res->reason);
    if (a->out) {
        clcone_reactions_info info = cli_reactions_info(a, ctx);
        info.model[0] = 0; /* the sets are the file's: no model to record */
        if (clc_write_forces_info(a->out, p->m, f, &info, &e)) return lib_error(&e);
        printf("forces written to %s\n", a->out);
    }
    snprintf(what, sizeof what, "general blocks, %s, %d blocks", clcone_solver_name(a->o.solver), p->nb);
    if ((a->compare && ctx && (rc = compare_blocks(a, p, f0, f, res, a->plot ? &hist[1] : NULL)))
        || (a->plot && (rc = cli_plot_solve(a, ctx, hist, what))))
        return rc;
    print_last_line(clcone_run_status_name(res->status), res->error, res->iters, res->time_ms, p->nb);
    return res->status == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
}

/* `solve FILE` of the general-block problem p. */
static int solve_blocks(cli_args *a, const char *path, const char *usage, const clc_bproblem *p)
{
    clcone_context *ctx = NULL;
    clcone_prob_result res;
    clcone_history hist[2]; /* --plot: the solve's, the reference's with --compare */
    clcone_error e;
    cli_progress prog;
    char backend[400], shape[200];
    double *f = calloc((size_t)p->m + 1, sizeof *f), *f0 = calloc((size_t)p->m + 1, sizeof *f0);
    int rc;
    memset(hist, 0, sizeof hist);
    if (!f || !f0) {
        snprintf(e.msg, sizeof e.msg, "out of memory for %d rows", p->m);
        e.code = CLCONE_ENOMEM;
        goto fail;
    }
    if ((rc = cli_refuse(a, usage, NOT_FOR_BLOCKS, WHY_NOT)) || (rc = cli_check_applicable(a, usage, 0))) goto done;
    if (a->warm) {
        if (clc_read_forces_info(a->warm, p->m, f, NULL, &e)) goto fail;
        a->o.warm_start = 1;
        memcpy(f0, f, sizeof *f * (size_t)p->m);
    }
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, &ctx, &e)) goto fail;
    describe_backend(ctx, backend, sizeof backend);
    clc_contract_resolve(CLCONE_FORM_BIT(CLCONE_FORM_BLOCKS), &a->o, ctx); /* the header shows what runs */
    if (a->plot) a->o.history = &hist[0];
    cli_progress_attach(a, &a->o, &prog);
    rc = clc_solve_blocks(ctx, p, &a->o, f, &res, &e);
    cli_progress_end(&prog);
    a->o.progress = NULL;
    if (rc) {
        cli_name_file(&e, path);
        goto fail;
    }
    describe_blocks(p, shape, sizeof shape);
    printf("problem:  %s (general-block problem: %s)\n", path, shape);
    printf("solver:   %s, device %s\n", clcone_solver_name(a->o.solver), backend);
    rc = report_blocks(a, ctx, p, f0, f, &res, hist);
    goto done;
fail:
    rc = lib_error(&e);
done:
    cli_solve_release(hist, ctx, f, f0);
    return rc;
}

/* `check FILE F` of the general-block problem p: F's forces measured. */
static int check_blocks(cli_args *a, const char *usage, const clc_bproblem *p)
{
    clcone_reactions_info info;
    clcone_error e;
    double *f = calloc((size_t)p->m + 1, sizeof *f), error, t0 = cli_now_ms();
    int rc;
    if ((rc = cli_refuse(a, usage, NOT_FOR_BLOCKS, WHY_NOT))) {
        free(f);
        return rc;
    }
    if (!f || clc_read_forces_info(a->positional[1], p->m, f, &info, &e)) {
        if (!f) snprintf(e.msg, sizeof e.msg, "out of memory for %d rows", p->m);
        free(f);
        return lib_error(&e);
    }
    clcone_options_resolve(&a->o, NULL);
    error = clc_bproblem_error(p, f, NULL);
    printf("problem:   %s (general-block problem: %d blocks, %d rows)\n", a->positional[0], p->nb, p->m);
    printf("forces:    %s\n", a->positional[1]);
    printf("error:     %.6e (the general-block measure, docs/formats.md section 7)\n", error);
    rc = cli_check_verdict(a, &info, a->positional[1], error, p->nb, t0);
    free(f);
    return rc;
}

int cli_read_input(cli_args *a, const char *path, const char *usage, enum cli_blocks_use use, clcone_input *in,
                   int *handled)
{
    clcone_error e;
    clcone_status st;
    char *buf;
    size_t len;
    int rc;
    memset(in, 0, sizeof *in);
    if (handled) *handled = 0;
    if (clc_load_file(path, &buf, &len, &e)) return lib_error(&e);
    if (is_blocks(path, buf, len)) {
        clc_bproblem p;
        if (use == CLI_BLOCKS_REFUSE || !handled) {
            fprintf(stderr, "clcone: %s: a general-block problem (clcone-blocks) is solved alone: give it as the "
                    "only FILE\n", path);
            free(buf);
            return EXIT_USAGE;
        }
        st = clc_parse_blocks(path, buf, len, &p, &e);
        free(buf);
        if (st) return lib_error(&e);
        *handled = 1;
        rc = use == CLI_BLOCKS_SOLVE ? solve_blocks(a, path, usage, &p) : check_blocks(a, usage, &p);
        clc_bproblem_free(&p);
        return rc;
    }
    /* as clcone_read_input, from the bytes already read */
    in->is_world = clc_buf_is_world(buf, len);
    st = in->is_world ? clc_parse_world(path, buf, len, &in->world, &e)
                      : clc_parse_problem(path, buf, len, clc_parse_fclib_hdf5, &in->problem, &e);
    free(buf);
    return st ? lib_error(&e) : 0;
}
