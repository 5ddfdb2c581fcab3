/* The reference solvers of the general-block problem (core/blocks.h), on
 * its scaled problem, through the one iteration loop (core/iterate.c):
 *
 * - apgd: Nesterov's accelerated projected gradient with step 1/L (L from
 *   clc_bproblem_lipschitz) and gradient restart (momentum dropped
 *   when the step points uphill), as kernels/blocks.cl runs it;
 * - pgs: projected Gauss-Seidel, block after block in order: a free, box
 *   or nonnegative block row by row, each row's quadratic minimised
 *   exactly on its interval; a cone block by projected gradient on the
 *   block's own quadratic (step 1/Gershgorin of its diagonal block) until
 *   it stops moving, at most PGS_INNER steps a sweep. */
#include "ref/blocks_ref.h"
#include "core/internal.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PGS_INNER 50

typedef struct bref {
    const clc_bproblem *p; /* the problem, for the measure */
    clc_bproblem s;        /* the scaled problem */
    double *S, *g, *u, *prev, *y, *tmp; /* m each */
    double L, t;
    int pgs;
} bref;

static void bref_free(bref *R)
{
    clc_bproblem_free(&R->s);
    free(R->S);
}

static clcone_status bref_init(bref *R, const clc_bproblem *p, const clcone_options *o, const double *f,
                               clcone_error *err)
{
    size_t m = (size_t)p->m;
    clcone_status s;
    memset(R, 0, sizeof *R);
    R->p = p;
    R->S = clc_calloc(6 * m, sizeof *R->S, err, "the scaled iterate");
    if (!R->S) return CLCONE_ENOMEM;
    R->g = R->S + m;
    R->u = R->g + m;
    R->prev = R->u + m;
    R->y = R->prev + m;
    R->tmp = R->y + m;
    if ((s = clc_bproblem_scaled(p, &R->s, R->S, err))) {
        free(R->S);
        return s;
    }
    clc_bproblem_start(&R->s, R->S, o->warm_start ? f : NULL, R->g);
    memcpy(R->prev, R->g, sizeof *R->g * m);
    R->L = clc_bproblem_lipschitz(&R->s);
    R->t = 1;
    if (!(R->L > 0)) {
        bref_free(R);
        return clc_fail(err, CLCONE_EINVAL, "the scaled W has no positive eigenvalue estimate (%g)", R->L);
    }
    return CLCONE_OK;
}

/* One APGD iteration: y = g + beta (g - prev), g' = P(y - (W'y + q') / L),
 * restart when (W'y + q') . (g' - g) > 0. */
static void apgd_step(bref *R)
{
    const clc_bproblem *s = &R->s;
    double tn = blk_apgd_next_t(R->t), beta = (R->t - 1) / tn, up = 0;
    for (int i = 0; i < s->m; ++i) R->y[i] = R->g[i] + beta * (R->g[i] - R->prev[i]);
    clc_bproblem_mul(s, R->y, R->tmp, 1);
    memcpy(R->prev, R->g, sizeof *R->g * (size_t)s->m);
    for (int b = 0; b < s->nb; ++b)
        blk_project_step(s->kind[b], clc_bproblem_rows(s, b), s->bound + s->off[b], R->y + s->off[b],
                         R->tmp + s->off[b], 1 / R->L, R->g + s->off[b]);
    for (int i = 0; i < s->m; ++i) up += R->tmp[i] * (R->g[i] - R->prev[i]);
    R->t = up > 0 ? 1 : tn;
}

/* Row i's (W' g + q')_i over block row b. */
static double row_u(const clc_bproblem *s, int b, int x, const double *g)
{
    double v = s->q[s->off[b] + x];
    for (int k = s->row_ptr[b]; k < s->row_ptr[b + 1]; ++k) {
        int nc = clc_bproblem_rows(s, s->col[k]);
        const double *B = s->val + s->val_off[k] + x * nc, *gc = g + s->off[s->col[k]];
        for (int j = 0; j < nc; ++j) v += B[j] * gc[j];
    }
    return v;
}

static int diag_block(const clc_bproblem *s, int b)
{
    int k = s->row_ptr[b];
    while (s->col[k] != b) ++k;
    return k;
}

/* A cone block's own quadratic, 1/2 x'Dx + c'x with c = u_b - D g_b, by
 * projected gradient from g_b. */
static void pgs_cone(bref *R, int b)
{
    const clc_bproblem *s = &R->s;
    int n = clc_bproblem_rows(s, b), o = s->off[b];
    const double *D = s->val + s->val_off[diag_block(s, b)];
    double c[BLK_MAX_ROWS], v[BLK_MAX_ROWS], lip = 0;
    for (int x = 0; x < n; ++x) {
        double rs = 0;
        c[x] = row_u(s, b, x, R->g);
        for (int y = 0; y < n; ++y) {
            c[x] -= D[x * n + y] * R->g[o + y];
            rs += fabs(D[x * n + y]);
        }
        lip = fmax(lip, rs);
    }
    for (int it = 0; it < PGS_INNER; ++it) {
        double moved = 0, size = 0;
        for (int x = 0; x < n; ++x) {
            v[x] = c[x];
            for (int y = 0; y < n; ++y) v[x] += D[x * n + y] * R->g[o + y];
        }
        memcpy(R->tmp, R->g + o, sizeof *R->tmp * (size_t)n);
        blk_project_step(BLK_CONE, n, NULL, R->g + o, v, 1 / lip, R->g + o);
        for (int x = 0; x < n; ++x) {
            moved = fmax(moved, fabs(R->g[o + x] - R->tmp[x]));
            size = fmax(size, fabs(R->g[o + x]));
        }
        if (moved <= 1e-15 * size) break;
    }
}

static void pgs_sweep(bref *R)
{
    const clc_bproblem *s = &R->s;
    for (int b = 0; b < s->nb; ++b) {
        int n = clc_bproblem_rows(s, b), o = s->off[b];
        const double *D;
        if (s->kind[b] == BLK_CONE) {
            pgs_cone(R, b);
            continue;
        }
        D = s->val + s->val_off[diag_block(s, b)];
        for (int x = 0; x < n; ++x)
            R->g[o + x] = blk_clamp(s->kind[b], R->g[o + x] - row_u(s, b, x, R->g) / D[x * n + x], s->bound[o + x]);
    }
}

static clcone_status bref_step(void *ctx, int it, clcone_error *err)
{
    bref *R = ctx;
    (void)it;
    (void)err;
    if (R->pgs) pgs_sweep(R);
    else apgd_step(R);
    return CLCONE_OK;
}

static clcone_status bref_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    bref *R = ctx;
    (void)it;
    (void)active;
    (void)err;
    clc_bproblem_mul(&R->s, R->g, R->u, 1);
    errors[0] = clc_bproblem_error_scaled(R->p, R->S, R->g, R->u);
    for (int i = 0; i < R->p->m; ++i)
        if (!isfinite(R->g[i])) errors[0] = INFINITY;
    return CLCONE_OK;
}

clcone_status clc_ref_blocks(const clc_bproblem *p, const clcone_options *o, double *f, clcone_prob_result *res,
                                clcone_error *err)
{
    bref R;
    clc_iter_ops ops = {&R, 1, 0, 0, bref_step, bref_measure, NULL, NULL, NULL, NULL, NULL, 0};
    clcone_status s;
    double t0 = clc_now_ms();
    if ((s = bref_init(&R, p, o, f, err))) return s;
    R.pgs = o->solver == CLCONE_SOLVER_PGS;
    ops.t0_ms = t0;
    s = clc_iterate_on(&ops, o, clc_is_block_check_iteration, res, err);
    for (int i = 0; i < p->m; ++i) f[i] = R.S[i] * R.g[i];
    if (!s) res->cost = clc_bproblem_cost(p, f);
    bref_free(&R);
    return s;
}
