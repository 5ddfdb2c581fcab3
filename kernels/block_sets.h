/* The general-block problem's sets, projections and natural map, shared by the
 * host reference and kernels/blocks.cl; after cone.h. On the scaled problem a cone
 * is ||x_1..n-1|| <= x_0; rows are read by index, no private arrays (cone.h). */
#ifndef CLCONE_BLOCK_SETS_H
#define CLCONE_BLOCK_SETS_H

#define BLK_MAX_ROWS 10

/* Block kinds (free, box, nonneg, cone in docs/formats.md section 7). */
#define BLK_FREE 0   /* unbounded rows (MuJoCo's equality rows) */
#define BLK_BOX 1    /* |x_i| <= bound_i per row (friction loss) */
#define BLK_NONNEG 2 /* x_i >= 0 per row (limits, frictionless and pyramidal contacts) */
#define BLK_CONE 3   /* second-order cone, normal row first (elliptic contacts) */
#define BLK_KINDS 4

/* Projection onto the standard cone of (w0, t): normal pn and the tangential rows' factor a. */
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

/* APGD's t_next = (1 + sqrt(1 + 4 t^2)) / 2 and weight (t - 1) / t_next, alike on host and device. */
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
