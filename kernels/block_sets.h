/* The general-block problem's sets, projections and natural map, shared
 * by the host reference (C, double) and kernels/blocks.cl (float or
 * double). Include after cone.h (real_t, CONE_GLOBAL, CONE_SQRT).
 *
 * A block is 1 to BLK_MAX_ROWS consecutive rows of one kind. The solvers
 * work on the scaled problem (core/blocks.h), where a cone block is the
 * standard second-order cone { x : ||x_1..n-1|| <= x_0 } and a box row
 * |x_i| <= bound_i. Every function reads and writes rows in global
 * memory (on the host, plain memory) by index: a kernel keeps no private
 * array indexed by a loop counter (cone.h says why). */
#ifndef CLCONE_BLOCK_SETS_H
#define CLCONE_BLOCK_SETS_H

#define BLK_MAX_ROWS 10

/* Block kinds (named free, box, nonneg, cone in the file format,
 * docs/formats.md section 7). */
#define BLK_FREE 0   /* unbounded rows (MuJoCo's equality rows) */
#define BLK_BOX 1    /* |x_i| <= bound_i per row (friction loss) */
#define BLK_NONNEG 2 /* x_i >= 0 per row (limits, frictionless and pyramidal contacts) */
#define BLK_CONE 3   /* second-order cone, normal row first (elliptic contacts) */
#define BLK_KINDS 4

/* The projection onto the standard cone of a point with normal w0 and
 * tangential norm t: normal pn and the factor a of the tangential rows. */
CONE_FN void blk_soc(real_t w0, real_t t, CONE_PRIV real_t *pn, CONE_PRIV real_t *a)
{
    if (t <= w0) {
        *pn = w0;
        *a = 1;
    } else if (t <= -w0) {
        *pn = 0;
        *a = 0;
    } else {
        *pn = (w0 + t) / 2;
        *a = *pn / t; /* t > |w0| >= 0 here */
    }
}

/* The projection of one row i (not a cone's) onto its set. */
CONE_FN real_t blk_clamp(int kind, real_t x, real_t bound)
{
    if (kind == BLK_NONNEG) return x > 0 ? x : 0;
    if (kind == BLK_BOX) return x > bound ? bound : x < -bound ? -bound : x;
    return x;
}

/* Norm of rows 1 .. n-1 of w - c v (a cone's tangential part). */
CONE_FN real_t blk_tangent_norm(int n, CONE_GLOBAL const real_t *w, CONE_GLOBAL const real_t *v, real_t c)
{
    real_t t2 = 0;
    for (int i = 1; i < n; ++i) {
        real_t y = w[i] - c * v[i];
        t2 += y * y;
    }
    return CONE_SQRT(t2);
}

/* x = P(w - c v) on a block of n rows (x may be w). */
CONE_FN void blk_project_step(int kind, int n, CONE_GLOBAL const real_t *bound, CONE_GLOBAL const real_t *w,
                              CONE_GLOBAL const real_t *v, real_t c, CONE_GLOBAL real_t *x)
{
    if (kind == BLK_CONE) {
        real_t pn, a;
        blk_soc(w[0] - c * v[0], blk_tangent_norm(n, w, v, c), &pn, &a);
        x[0] = pn;
        for (int i = 1; i < n; ++i) x[i] = a * (w[i] - c * v[i]);
        return;
    }
    for (int i = 0; i < n; ++i) x[i] = blk_clamp(kind, w[i] - c * v[i], bound[i]);
}

/* APGD's momentum sequence: t_next = (1 + sqrt(1 + 4 t^2)) / 2, the
 * extrapolation weight (t - 1) / t_next; the host reference (in double)
 * and kernels/blocks.cl (in real_t) compute it alike. */
CONE_FN real_t blk_apgd_next_t(real_t t) { return (1 + CONE_SQRT(1 + 4 * t * t)) / 2; }

/* Sum of squares of the natural map g - P(g - u) of a block (rho = 1). */
CONE_FN real_t blk_natural_map2(int kind, int n, CONE_GLOBAL const real_t *bound, CONE_GLOBAL const real_t *g,
                                CONE_GLOBAL const real_t *u)
{
    real_t s = 0, d;
    if (kind == BLK_CONE) {
        real_t pn, a;
        blk_soc(g[0] - u[0], blk_tangent_norm(n, g, u, 1), &pn, &a);
        d = g[0] - pn;
        s = d * d;
        for (int i = 1; i < n; ++i) {
            d = g[i] - a * (g[i] - u[i]);
            s += d * d;
        }
        return s;
    }
    for (int i = 0; i < n; ++i) {
        d = g[i] - blk_clamp(kind, g[i] - u[i], bound[i]);
        s += d * d;
    }
    return s;
}

#endif
