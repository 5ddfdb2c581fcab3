/* Section 6: direction bias of the pyramid. A unit box on a plane (one
 * contact under its centre, or its four corners), free velocity of one
 * time step with gravity plus a push of 1 m/s along direction theta in
 * the plane, so that it slides. Friction force magnitude and direction
 * against theta for the N-facet pyramid (outer and inner fit, Lemke on the
 * reference) and the exact cone (coulomb, NSGS). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "cone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCFG 9

typedef struct bcfg {
    clcone_model model;
    int facets;
    clcone_fit fit;
    char label[48];
} bcfg;

/* One box pushed along theta; corners = 1: four corner contacts. */
static clcone_status box_scene(int corners, double theta, double mu, clcone_scene *s, clcone_error *err)
{
    clcone_status st = clc_gen_stack(1, mu, 0.01, s, err);
    if (st) return st;
    if (!corners) {
        s->ncontacts = 1;
        s->contacts[0].point[0] = 0;
        s->contacts[0].point[1] = 0;
    }
    s->bodies[0].v[0] += cos(theta);
    s->bodies[0].v[1] += sin(theta);
    return CLCONE_OK;
}

/* One run of the section: the configurations and, per theta, contact
 * layout and configuration, the friction force's magnitude and direction
 * error (NaN where the solve failed). */
typedef struct bias {
    bench *b;
    FILE *f;
    bcfg cfg[NCFG];
    int nc, nth;
    double mu;
    double (*mag)[2][NCFG], (*dir)[2][NCFG];
    int fails[2][NCFG];
    char used_solver[2][NCFG][16];
} bias;

static void bias_configs(bias *S)
{
    static const int Ns[4] = {4, 8, 16, 64};
    bcfg *cfg = S->cfg;
    int nc = 0;
    cfg[nc].model = CLCONE_MODEL_COULOMB;
    cfg[nc].facets = 0;
    cfg[nc].fit = CLCONE_FIT_OUTER;
    snprintf(cfg[nc++].label, sizeof cfg[0].label, "exact cone (coulomb nsgs)");
    for (int i = 0; i < 4; ++i)
        for (int fit = 0; fit < 2; ++fit) {
            cfg[nc].model = CLCONE_MODEL_PYRAMID;
            cfg[nc].facets = Ns[i];
            cfg[nc].fit = fit ? CLCONE_FIT_INNER : CLCONE_FIT_OUTER;
            snprintf(cfg[nc++].label, sizeof cfg[0].label, "pyramid N=%d %s", Ns[i], fit ? "inner" : "outer");
        }
    S->nc = nc;
}

/* Configuration k on the box problem p (scene s) pushed along theta. */
static void bias_solve(bias *S, int corners, int ti, int k, double theta, const clcone_scene *s,
                       const clcone_problem *p)
{
    const bcfg *cfg = S->cfg;
    clcone_options o;
    clcone_result res;
    clcone_error err;
    double *r = calloc(3 * (size_t)p->n, sizeof *r), ft[3] = {0, 0, 0}, fn = 0;
    clcone_status st;
    if (!r) return;
    clcone_options_default(&o);
    o.model = cfg[k].model;
    o.solver = cfg[k].model == CLCONE_MODEL_COULOMB ? CLCONE_SOLVER_NSGS : CLCONE_SOLVER_LEMKE;
    o.facets = cfg[k].facets ? cfg[k].facets : 8;
    o.fit = cfg[k].fit;
    o.tol = 1e-10;
    o.max_seconds = 5;
    st = clcone_solve(NULL, p, &o, r, &res, &err);
    if (!st && res.items[0].status != CLCONE_CONVERGED && o.solver == CLCONE_SOLVER_LEMKE) {
        clcone_result_free(&res);
        st = CLCONE_EINVAL;
        snprintf(err.msg, sizeof err.msg, "lemke did not converge");
    }
    if (st && o.solver == CLCONE_SOLVER_LEMKE) {
        /* fall back to projected Gauss-Seidel on the pyramid */
        o.solver = CLCONE_SOLVER_PGS;
        st = clcone_solve(NULL, p, &o, r, &res, &err);
    }
    snprintf(S->used_solver[corners][k], sizeof S->used_solver[0][0], "%s", clcone_solver_name(o.solver));
    if (st || res.items[0].status != CLCONE_CONVERGED) {
        S->fails[corners][k]++;
        S->mag[ti][corners][k] = S->dir[ti][corners][k] = NAN;
        if (!st) clcone_result_free(&res);
        free(r);
        return;
    }
    clcone_result_free(&res);
    for (int c = 0; c < p->n; ++c) {
        double F[9];
        clcone_contact_frame(s->contacts[c].normal, F);
        fn += r[3 * c];
        for (int j = 0; j < 3; ++j) ft[j] += F[3 + j] * r[3 * c + 1] + F[6 + j] * r[3 * c + 2];
    }
    /* friction opposes the push: the angle of -f_t against theta */
    S->mag[ti][corners][k] = hypot(ft[0], ft[1]) / (S->mu * fn);
    {
        double a = atan2(-ft[1], -ft[0]) - theta;
        while (a > CONE_PI) a -= 2 * CONE_PI;
        while (a < -CONE_PI) a += 2 * CONE_PI;
        S->dir[ti][corners][k] = a * 180 / CONE_PI;
    }
    free(r);
}

static void bias_measure(bias *S)
{
    for (int corners = 0; corners < 2; ++corners)
        for (int ti = 0; ti < S->nth; ++ti) {
            double theta = (CONE_PI / 2) * ti / (S->nth - 1);
            clcone_scene s;
            clcone_problem p;
            clcone_error err;
            if (box_scene(corners, theta, S->mu, &s, &err) || clcone_scene_to_local(&s, &p, &err)) {
                bench_fail(S->b, S->f, "box scene: %s", err.msg);
                continue;
            }
            for (int k = 0; k < S->nc; ++k) bias_solve(S, corners, ti, k, theta, &s, &p);
            clcone_problem_free(&p);
            clcone_scene_free(&s);
        }
}

/* The tables of one contact layout. */
static void bias_tables(const bias *S, int corners)
{
    FILE *f = S->f;
    const bcfg *cfg = S->cfg;
    int nc = S->nc, nth = S->nth;
    fprintf(f, "### %s\n\n", corners ? "Four corner contacts" : "One contact under the centre");
    fprintf(f, "| device | precision | model | solver | facets, fit | magnitude min .. max | max abs direction "
               "error (deg) | failed thetas |\n|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < nc; ++k) {
        double lo = INFINITY, hi = -INFINITY, de = 0;
        for (int ti = 0; ti < nth; ++ti) {
            double m = S->mag[ti][corners][k];
            if (m != m) continue;
            lo = fmin(lo, m);
            hi = fmax(hi, m);
            de = fmax(de, fabs(S->dir[ti][corners][k]));
        }
        fprintf(f, "| CPU reference | double | %s | %s | %s | %.4f .. %.4f | %.3f | %d |\n",
                clcone_model_name(cfg[k].model), S->used_solver[corners][k],
                cfg[k].facets ? cfg[k].label + 8 : "exact cone", lo, hi, de, S->fails[corners][k]);
    }
    fprintf(f, "\nAt selected theta (magnitude / direction error in degrees):\n\n| theta |");
    for (int k = 0; k < nc; ++k) fprintf(f, " %s |", cfg[k].label);
    fprintf(f, "\n|---|");
    for (int k = 0; k < nc; ++k) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int ti = 0; ti < nth; ++ti) {
        double deg = 90.0 * ti / (nth - 1);
        if (fabs(deg / 15.0 - round(deg / 15.0)) > 1e-9) continue;
        fprintf(f, "| %.0f |", deg);
        for (int k = 0; k < nc; ++k) fprintf(f, " %.4f / %.2f |", S->mag[ti][corners][k], S->dir[ti][corners][k]);
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

static void bias_data_and_plots(const bias *S)
{
    FILE *d = bench_data(S->b, S->f, "bias.dat");
    char body[8192];
    int m = 0, nc = S->nc;
    if (!d) return;
    fprintf(d, "# block per (contacts, config): theta_deg magnitude direction_error_deg\n");
    for (int corners = 0; corners < 2; ++corners)
        for (int k = 0; k < nc; ++k) {
            fprintf(d, "# %s, %s\n", corners ? "four corners" : "one contact", S->cfg[k].label);
            for (int ti = 0; ti < S->nth; ++ti)
                fprintf(d, "%.4f %.8g %.8g\n", 90.0 * ti / (S->nth - 1), S->mag[ti][corners][k], S->dir[ti][corners][k]);
            fprintf(d, "\n\n");
        }
    fclose(d);
    for (int what = 0; what < 2; ++what) {
        m = snprintf(body, sizeof body,
                     "set grid\nset key outside right\nset xlabel 'push direction theta (deg)'\nset xrange [0:90]\n"
                     "set ylabel '%s'\nset title 'Pyramid direction bias, one contact under the centre'\nplot ",
                     what ? "direction error of the friction force (deg)" : "|f_t| / (mu f_n)");
        for (int k = 0; k < nc; ++k)
            m += snprintf(body + m, sizeof body - (size_t)m, "'bias.dat' index %d using 1:%d with lines lw 2 title '%s'%s",
                          k, what ? 3 : 2, S->cfg[k].label, k + 1 < nc ? ", " : "\n");
        bench_plot(S->b, S->f, what ? "bias_direction" : "bias_magnitude", body);
    }
}

void bench_section_bias(bench *b, FILE *f)
{
    bias S;
    memset(&S, 0, sizeof S);
    S.b = b;
    S.f = f;
    S.nth = b->quick ? 19 : 91;
    S.mu = 0.5;
    S.mag = calloc((size_t)S.nth, sizeof *S.mag);
    S.dir = calloc((size_t)S.nth, sizeof *S.dir);
    if (!S.mag || !S.dir) {
        bench_fail(b, f, "out of memory");
    } else {
        bias_configs(&S);
        bias_measure(&S);
        fprintf(f, "A unit box (mass 1) on the static plane, mu = %.1f, dt = 0.01: free velocity = gravity step + 1 "
                   "m/s along theta in the plane (it slides: friction can take at most mu g dt = %.3f m/s). Solved on "
                   "the CPU reference (double): the exact cone with model coulomb (nsgs), the pyramid with model "
                   "pyramid (lemke; pgs where lemke fails, noted), tol 1e-10. Friction force f_t summed over the "
                   "contacts in the world frame; **magnitude** = |f_t| / (mu f_n) (1 = on the circle), **direction "
                   "error** = angle of -f_t minus theta (0 = exactly opposite the push). theta from 0 to 90 degrees "
                   "in %d steps (the pyramids repeat with period 360/N and are symmetric).\n\n",
                S.mu, S.mu * 9.81 * 0.01, S.nth - 1);
        for (int corners = 0; corners < 2; ++corners) bias_tables(&S, corners);
        bias_data_and_plots(&S);
    }
    free(S.mag);
    free(S.dir);
}
