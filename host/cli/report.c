/* The end of a one-problem solve's report, the same for problem files and
 * scenes: the --compare table against the reference, the --plot figure,
 * then the machine-readable last line. */
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_compare_with_reference(const clcone_problem *p, const clcone_scene *sc, const cli_args *a, const double *r0,
                               const double *r_dev, const clcone_prob_result *dev, clcone_history *history)
{
    clcone_options o = a->o;
    clcone_result res;
    clcone_error e;
    size_t m = 3 * (size_t)(p ? p->n : sc->ncontacts);
    double *r = malloc(sizeof(double) * (m + 1));
    if (!r) return EXIT_USAGE;
    memcpy(r, r0, sizeof(double) * m);
    if (o.tol < 1e-12) o.tol = 1e-12;
    o.history = history;
    if (cli_plan_solve(NULL, p, sc, &o, r, &res, &e)) {
        free(r);
        return lib_error(&e);
    }
    cli_print_comparison(dev, &res.items[0], r_dev, r, m);
    clcone_result_free(&res);
    free(r);
    return 0;
}

void cli_print_comparison(const clcone_prob_result *dev, const clcone_prob_result *ref, const double *r_dev,
                          const double *r_ref, size_t m)
{
    printf("compare:  %-10s %12s %10s %12s\n", "backend", "error", "iters", "time_ms");
    printf("          %-10s %12.3e %10d %12.2f\n", "device", dev->error, dev->iters, dev->time_ms);
    printf("          %-10s %12.3e %10d %12.2f\n", "reference", ref->error, ref->iters, ref->time_ms);
    printf("max |r_device - r_reference| = %.3e (max |r_reference| = %.3e)\n", cli_max_abs_diff(r_dev, r_ref, m),
           cli_max_abs(r_ref, m));
    printf("speed ratio reference/device = %.3f\n", dev->time_ms > 0 ? ref->time_ms / dev->time_ms : 0.0);
}

int cli_check_verdict(cli_args *a, const clcone_reactions_info *info, const char *rfile, double error, int n,
                      double t0)
{
    clcone_run_status status;
    if (cli_given(a, "--tol")) printf("tolerance: %.3g (--tol)\n", a->o.tol);
    else if (info->tol > 0) {
        a->o.tol = info->tol;
        printf("tolerance: %.3g (from %s's header: the %s solve's; --tol T sets another)\n", a->o.tol, rfile,
               info->precision == CLCONE_FLOAT ? "float" : "double");
    } else printf("tolerance: %.3g (the default; --tol T sets another)\n", a->o.tol);
    /* the stopping rule's words: over the tolerance is what a solve stopped
     * at its cap reports, a non-finite error what a diverged one does */
    status = !isfinite(error) ? CLCONE_DIVERGED : error <= a->o.tol ? CLCONE_CONVERGED : CLCONE_MAXITER;
    print_last_line(clcone_run_status_name(status), error, 0, cli_now_ms() - t0, n);
    return status == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
}

/* solve --plot of a local problem or a scene of n contacts. */
static int plot_solve(const cli_args *a, const clcone_context *ctx, const clcone_history hist[2], int n)
{
    char what[200];
    snprintf(what, sizeof what, "%s, %s, %d contacts", clcone_model_name(a->o.model), clcone_solver_name(a->o.solver),
             n);
    return cli_plot_solve(a, ctx, hist, what);
}

int cli_finish_solve(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc,
                     const double *r0, const double *r, const clcone_prob_result *it, clcone_history hist[2])
{
    int n = p ? p->n : sc->ncontacts, rc;
    if ((a->compare && ctx && (rc = cli_compare_with_reference(p, sc, a, r0, r, it, a->plot ? &hist[1] : NULL)))
        || (a->plot && (rc = plot_solve(a, ctx, hist, n))))
        return rc;
    print_last_line(clcone_run_status_name(it->status), it->error, it->iters, it->time_ms, n);
    return it->status == CLCONE_CONVERGED ? 0 : EXIT_NOTCONV;
}

void cli_solve_release(clcone_history hist[2], clcone_context *ctx, double *r, double *r0)
{
    clcone_history_free(&hist[0]);
    clcone_history_free(&hist[1]);
    clcone_context_free(ctx);
    free(r);
    free(r0);
}

clcone_reactions_info cli_reactions_info(const cli_args *a, const clcone_context *ctx)
{
    clcone_reactions_info info;
    memset(&info, 0, sizeof info);
    info.tol = a->o.tol;
    info.precision = ctx ? clcone_context_precision(ctx) : CLCONE_DOUBLE;
    snprintf(info.model, sizeof info.model, "%s", clcone_model_name(a->o.model));
    snprintf(info.solver, sizeof info.solver, "%s", clcone_solver_name(a->o.solver));
    if (a->o.model == CLCONE_MODEL_PYRAMID) {
        info.facets = a->o.facets;
        snprintf(info.fit, sizeof info.fit, "%s", a->o.fit == CLCONE_FIT_INNER ? "inner" : "outer");
    }
    return info;
}

int cli_print_result(const cli_args *a, const clcone_context *ctx, const clcone_problem *p, int n, const double *r,
                     const clcone_prob_result *it)
{
    const int on_float = ctx && clcone_context_precision(ctx) == CLCONE_FLOAT;
    clcone_error e;
    printf("result:   %s after %d iterations, error %.3e (tol %.1e; evaluated in %s%s), %.1f ms\n",
           clcone_run_status_name(it->status), it->iters, it->error, a->o.tol, on_float ? "float" : "double",
           ctx ? " on the device" : "", it->time_ms);
    /* the stopping rule saw the float error; check measures in double, so
     * both are shown where they can differ */
    if (on_float && p) {
        double d = clcone_error_of(p, &a->o, r, 0, p->n);
        if (isfinite(d)) printf("          error of r in double (as `clcone check` measures it): %.3e\n", d);
    }
    if (it->reason[0]) printf("reason:   %s\n", it->reason);
    if (a->out) {
        clcone_reactions_info info = cli_reactions_info(a, ctx);
        if (clcone_write_reactions_info(a->out, n, r, &info, &e)) return lib_error(&e);
        printf("reactions written to %s\n", a->out);
    }
    return 0;
}
