/* The command line's plots: convergence of one solve on each backend
 * (`solve --plot`) and the per-step figures of a run (`simulate --plot`). */
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_W 1400
#define PLOT_H 620
#define STEPS_W 1000
#define STEPS_H 1000

int cli_png_size(const char *usage, const char *png, const char *s, int *w, int *h)
{
    char extra;
    clcone_error e;
    if (!png) return usage_error(usage, "--png-size does not apply: %s", "no --png FILE to size");
    if (sscanf(s, "%dx%d%c", w, h, &extra) != 2)
        return usage_error(usage, "--png-size needs a size WxH such as 1600x1200, got '%s'", s);
    /* here, not at the picture: a run's steps come before it */
    if (clcone_check_picture_size(*w, *h, &e)) return usage_error(usage, "--png-size: %s", e.msg);
    return 0;
}

/* Problem 0 of each history (at most 2) against iteration and time;
 * method names what made them, for a plot without points. */
static int plot_histories(const char *path, const char *title, const clcone_history *const *h,
                          const char *const *labels, int n, double tol, const char *method)
{
    char note[200];
    clcone_plot_series it[2], tm[2];
    clcone_plot_panel P[2];
    clcone_error e;
    double *data[2] = {NULL, NULL};
    char tol_label[64];
    int rc = 0, points = 0;
    if (n > 2) n = 2;
    memset(P, 0, sizeof P);
    for (int b = 0; b < n; ++b) {
        /* three columns per backend: iteration, time, error (problem 0) */
        int m = 0, cnt = h[b]->count;
        double *d = malloc(3 * ((size_t)cnt + 1) * sizeof *d);
        if (!d) {
            fprintf(stderr, "clcone: %s: out of memory for the plot\n", path);
            rc = EXIT_USAGE;
            goto done;
        }
        data[b] = d;
        for (int i = 0; i < cnt; ++i) {
            const clcone_history_point *p = &h[b]->points[i];
            if (p->prob != 0) continue;
            d[m] = p->iter;
            d[(size_t)cnt + 1 + m] = p->time_ms;
            d[2 * ((size_t)cnt + 1) + m] = p->error;
            ++m;
        }
        points += m;
        if (h[b]->truncated) fprintf(stderr, "clcone: %s: out of memory, %s's history is cut short\n", path, labels[b]);
        it[b].label = tm[b].label = labels[b];
        it[b].n = tm[b].n = m;
        it[b].x = d;
        tm[b].x = d + cnt + 1;
        it[b].y = tm[b].y = d + 2 * ((size_t)cnt + 1);
    }
    if (points == 0) {
        snprintf(note, sizeof note, "no convergence history: %s records none", method);
        fprintf(stderr, "clcone: %s: %s; the plot says so on empty axes\n", path, note);
    }
    snprintf(tol_label, sizeof tol_label, "tolerance %.1e", tol);
    for (int k = 0; k < 2; ++k) {
        P[k].note = points == 0 ? note : NULL;
        P[k].ylabel = "error";
        P[k].ylog = 1;
        P[k].nseries = n;
        P[k].hline_label = tol_label;
        P[k].hline = tol;
    }
    P[0].title = "error against iteration";
    P[0].xlabel = "iteration";
    P[0].series = it;
    P[1].title = "error against time";
    P[1].xlabel = "time (ms)";
    P[1].xlog = 1;
    P[1].series = tm;
    if (clcone_plot_png(path, title, P, 2, 2, PLOT_W, PLOT_H, &e)) rc = lib_error(&e);
done:
    free(data[0]);
    free(data[1]);
    return rc;
}

int cli_plot_solve(const cli_args *a, const clcone_context *ctx, const clcone_history h[2], const char *what)
{
    const clcone_history *hs[2] = {&h[0], &h[1]};
    char dev[300], ref[300], title[600];
    const char *labels[2] = {dev, ref};
    int rc;
    describe_backend(ctx, dev, sizeof dev);
    describe_backend(NULL, ref, sizeof ref);
    snprintf(title, sizeof title, "%s: %s", a->positional[0], what);
    rc = plot_histories(a->plot, title, hs, labels, a->compare && ctx ? 2 : 1, a->o.tol,
                        clcone_solver_name(a->o.solver));
    if (rc == 0) printf("plot:     %s\n", a->plot);
    return rc;
}

clcone_status cli_plot_steps(const char *path, const char *title, int n, const double *iters, const double *errors,
                             const double *ms, double tol, clcone_error *e)
{
    clcone_plot_series S[3];
    clcone_plot_panel P[3];
    const double *y[3] = {iters, errors, ms};
    static const char *const names[3] = {"iterations", "error", "solve time (ms)"};
    char tol_label[64];
    double *step = malloc(((size_t)n + 1) * sizeof *step);
    clcone_status st;
    if (!step) {
        e->code = CLCONE_ENOMEM;
        snprintf(e->msg, sizeof e->msg, "%s: out of memory for the plot", path);
        return CLCONE_ENOMEM;
    }
    for (int i = 0; i < n; ++i) step[i] = i + 1;
    snprintf(tol_label, sizeof tol_label, "tolerance %.1e", tol);
    memset(P, 0, sizeof P);
    for (int k = 0; k < 3; ++k) {
        S[k].label = NULL;
        S[k].n = n;
        S[k].x = step;
        S[k].y = y[k];
        P[k].xlabel = "step";
        P[k].ylabel = names[k];
        P[k].nseries = 1;
        P[k].series = &S[k];
    }
    P[1].ylog = 1;
    P[1].hline_label = tol_label;
    P[1].hline = tol;
    st = clcone_plot_png(path, title, P, 3, 1, STEPS_W, STEPS_H, e);
    free(step);
    return st;
}
