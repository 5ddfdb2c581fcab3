/* needs: cone.h block_sets.h primal_layout.h */
/* MuJoCo's Newton method on its primal problem (core/primal.h) as the
 * reference runs it (ref/primal_newton.c: the cost, MuJoCo's exact line
 * search, the stopping rule), a work-group a problem of the batch, its
 * whole solve in one launch. Lanes share a phase's rows, blocks, dofs or
 * Hessian entries, each written by one lane, with a barrier between
 * phases; a sum (the cost, a norm, a line-search evaluation) is taken
 * by every lane alike, in the problem's own order, so every lane holds
 * the same bits, follows the same branches to the same barriers, and a
 * problem's bits depend neither on the lanes nor on the batch. M comes
 * by its trees' blocks (a dof's row over its tree's dofs, mt), the
 * Hessian H = M + J'DJ dense, nv x nv, in global scratch
 * (host/opencl/primal.c bounds nv); its Cholesky
 * factor overwrites H's lower triangle, one column a step. J is sparse,
 * by rows (CSR) and by dofs (CSC), and D J is kept a block at a time
 * over the dofs the block's rows move (its pattern): a contact moves
 * the dofs of two kinematic trees, a small part of an island's, and the
 * dense J of a 360-dof island (Stonehenge) cost more than H's factor.
 * Every sum skips only J's zeros and M's between trees, in the dense
 * order otherwise; an island past PCHOL_DENSE_MAX dofs is assembled and
 * factored in the reference's sparse order (positions, L's pattern),
 * which rounds differently from the dense order. */

#define PN_SYNC barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)
/* MuJoCo's mjMINVAL: a search direction shorter than this is none. */
#define PN_MINVAL ((real_t)1e-15)

typedef struct pn_p {
    int nv, m, nb, ls_it, l, nl, dense;
    real_t scale, ls_tol;
    __global const int *off, *kind, *jp, *jc, *cp, *cr, *poff, *pat, *doff, *rowblk, *mt, *pos, *lp, *li;
    __global const real_t *M, *jv, *cv, *a0, *f0, *aref, *R, *bound, *mu;
    __global real_t *H, *DJ, *a, *Ma, *grad, *Mg, *s, *Mv, *tmp, *diag, *x, *f, *Jv, *quad, *blk;
    __global int *state;
} pn_p;

/* The cost and its Gauss part at the iterate. */
typedef struct pn_c {
    real_t cost, gauss;
} pn_c;

/* A point of the line search: step, cost and its first two derivatives. */
typedef struct pn_pt {
    real_t alpha, cost, d1, d2;
} pn_pt;

/* The line search's quadratic in alpha, c0 + c1 alpha + c2 alpha^2. */
typedef struct pn_q {
    real_t c0, c1, c2;
} pn_q;

/* Mv = M v over the dofs (each over its tree's), Jv = J v (minus a_ref
 * when shift) over the rows; go 0: nothing. */
static void pn_mul(const pn_p *P, int go, __global const real_t *v, __global real_t *Mv, __global real_t *Jv,
                   int shift)
{
    int nv = go ? P->nv : 0;
    for (int i = P->l; i < nv; i += P->nl) {
        __global const int *t3 = P->mt + 3 * i;
        real_t t = 0;
        for (int j = t3[0]; j < t3[1]; ++j) t += P->M[t3[2] + j] * v[j];
        Mv[i] = t;
    }
    for (int r = P->l; go && r < P->m; r += P->nl) {
        real_t t = 0;
        for (int e = P->jp[r]; e < P->jp[r + 1]; ++e) t += P->jv[e] * v[P->jc[e]];
        Jv[r] = shift ? t - P->aref[r] : t;
    }
}

/* Cone block b (n rows from r0) at x: forces, zones, the middle zone's
 * Hessian in scaled space (core/primal.c's cone_update); its cost. */
static real_t pn_cone(const pn_p *P, int r0, int n, real_t mu, __global real_t *Hc)
{
    __global const real_t *x = P->x + r0, *fr = P->bound + r0, *Rr = P->R + r0;
    __global real_t *f = P->f + r0;
    real_t T = 0, N = mu * x[0], s = 0, Dm, g;
    int zone;
    for (int j = 1; j < n; ++j) T += (fr[j] * x[j]) * (fr[j] * x[j]);
    T = sqrt(T);
    zone = N >= mu * T || (T <= 0 && N >= 0) ? PRIMAL_SATISFIED
           : mu * N + T <= 0 || T <= 0     ? PRIMAL_QUADRATIC
                                           : PRIMAL_CONE;
    for (int j = 0; j < n; ++j) P->state[r0 + j] = zone;
    if (zone != PRIMAL_CONE) {
        for (int j = 0; j < n; ++j) {
            f[j] = zone == PRIMAL_SATISFIED ? 0 : -x[j] / Rr[j];
            s += zone == PRIMAL_SATISFIED ? 0 : (real_t)0.5 * x[j] * x[j] / Rr[j];
        }
        return s;
    }
    Dm = 1 / (Rr[0] * mu * mu * (1 + mu * mu));
    g = N - mu * T;
    f[0] = -Dm * g * mu;
    for (int j = 1; j < n; ++j) f[j] = -f[0] * (fr[j] * x[j]) * fr[j] / T;
    for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
            real_t uj = fr[j] * x[j], uk = fr[k] * x[k];
            real_t h = j == 0 && k == 0 ? 1
                       : j == 0         ? -mu * uk / T
                       : k == 0         ? -mu * uj / T
                                        : mu * N * uj * uk / (T * T * T) + (j == k ? mu * mu - mu * N / T : 0);
            Hc[j * n + k] = Dm * h * (j ? fr[j] : mu) * (k ? fr[k] : mu);
        }
    return (real_t)0.5 * Dm * g * g;
}

/* Forces, zones and cone Hessians at x, a block a lane; each block's cost in its slot. */
static void pn_blocks(const pn_p *P)
{
    for (int b = P->l; b < P->nb; b += P->nl) {
        int r0 = P->off[b], r1 = P->off[b + 1], k = P->kind[b];
        __global real_t *B = P->blk + b * PB_N;
        real_t s = 0;
        if (k == BLK_CONE) s = pn_cone(P, r0, r1 - r0, P->mu[b], B + PB_HC);
        for (int i = r0; k != BLK_CONE && i < r1; ++i) {
            real_t R = P->R[i], w = P->bound[i], x = P->x[i];
            if (k == BLK_BOX && (x <= -R * w || x >= R * w)) {
                P->f[i] = x <= -R * w ? w : -w;
                P->state[i] = x <= -R * w ? PRIMAL_LINEARNEG : PRIMAL_LINEARPOS;
                s += w * fabs(x) - (real_t)0.5 * R * w * w;
            } else if (k == BLK_NONNEG && x >= 0) {
                P->f[i] = 0;
                P->state[i] = PRIMAL_SATISFIED;
            } else {
                P->f[i] = -x / R;
                P->state[i] = PRIMAL_QUADRATIC;
                s += (real_t)0.5 * x * x / R;
            }
        }
        B[PB_COST] = s;
    }
}

/* The gradient M a - M a0 - J'f, a dof a lane. */
static void pn_gradient_dofs(const pn_p *P)
{
    for (int v = P->l; v < P->nv; v += P->nl) {
        real_t g = P->Ma[v] - P->f0[v];
        for (int e = P->cp[v]; e < P->cp[v + 1]; ++e) g -= P->cv[e] * P->f[P->cr[e]];
        P->grad[v] = g;
    }
}

/* The cost, its Gauss part apart, on every lane. */
static pn_c pn_cost(const pn_p *P)
{
    pn_c c = {0, 0};
    for (int b = 0; b < P->nb; ++b) c.cost += P->blk[b * PB_N + PB_COST];
    for (int v = 0; v < P->nv; ++v) c.gauss += (real_t)0.5 * (P->Ma[v] - P->f0[v]) * (P->a[v] - P->a0[v]);
    c.cost += c.gauss;
    return c;
}

/* to += w times J's row r, to over the pattern pat (which holds the row's dofs). */
static void pn_dj_add(const pn_p *P, int r, real_t w, __global const int *pat, __global real_t *to)
{
    int t = 0;
    for (int e = P->jp[r]; e < P->jp[r + 1]; ++e) {
        while (pat[t] != P->jc[e]) ++t; /* both ascending */
        to[t] += w * P->jv[e];
    }
}

/* D J's rows over their blocks' patterns, a block a lane, for n dofs (0:
 * none); D a block's Hessian of the soft cost (a row's 1 / R, a cone's
 * middle zone), none where its rows have no Hessian. */
static void pn_dj(const pn_p *P, int n)
{
    for (int b = P->l; n && b < P->nb; b += P->nl) {
        int r0 = P->off[b], nr = P->off[b + 1] - r0, np = P->poff[b + 1] - P->poff[b];
        __global const int *pat = P->pat + P->poff[b];
        __global const real_t *Hc = P->blk + b * PB_N + PB_HC;
        __global real_t *dj = P->DJ + P->doff[b];
        for (int t = 0; t < nr * np; ++t) dj[t] = 0;
        for (int a = 0; a < nr; ++a) {
            int st = P->state[r0 + a];
            if (st == PRIMAL_QUADRATIC) pn_dj_add(P, r0 + a, 1 / P->R[r0 + a], pat, dj + a * np);
            for (int q = 0; st == PRIMAL_CONE && q < nr; ++q) pn_dj_add(P, r0 + q, Hc[a * nr + q], pat, dj + a * np);
        }
    }
}

/* L's pattern (layout.h's): dof v's position, and column k's entries
 * (the diagonal first, then rows ascending) from pn_col(P, k); e's row is
 * e + sh where sh = pn_shift(P, k), or li[e]. A dense island (dense: its
 * dofs' order, the whole triangle) has no tables: its rows follow
 * arithmetically. The loops over them take dense as a constant, each
 * called in two arms (if (P->dense) f(.., 1) else f(.., 0), no barrier
 * inside), so that the compiler drops the tables' branch from a dense
 * island's loops: a branch in every step made 256 humanoid worlds 15%
 * slower. */
#define PN_INLINE static __attribute__((always_inline))
PN_INLINE int pn_pos(const pn_p *P, int dense, int v) { return dense ? v : P->pos[v]; }
PN_INLINE int pn_col(const pn_p *P, int dense, int k) { return dense ? k * P->nv - k * (k - 1) / 2 : P->lp[k]; }
PN_INLINE int pn_shift(const pn_p *P, int dense, int k) { return dense ? k - pn_col(P, dense, k) : 0; }
PN_INLINE int pn_row(const pn_p *P, int dense, int sh, int e) { return dense ? e + sh : P->li[e]; }

/* L's pattern zeroed in H, a column a lane, for n positions (a dense
 * island's rows are zeroed as they are assembled). */
static void pn_zero_pattern(const pn_p *P, int n)
{
    for (int k = P->l; !P->dense && k < n; k += P->nl)
        for (int e = P->lp[k]; e < P->lp[k + 1]; ++e) P->H[P->li[e] * P->nv + k] = 0;
}

/* Dof i's row of H = M + J'DJ (its position's): M's tree and the rows of
 * i that have a Hessian, each over its block's pattern, where the other
 * dof's position is not past i's. M's zeros (between a tree's branches)
 * may lie off L's pattern, never zeroed: they are skipped. */
PN_INLINE void pn_hessian_row(const pn_p *P, int i, int dense)
{
    __global const int *t3 = P->mt + 3 * i;
    int pi = pn_pos(P, dense, i);
    __global real_t *h = P->H + pi * P->nv;
    for (int j = 0; dense && j <= pi; ++j) h[j] = 0;
    for (int j = t3[0]; j < t3[1] && (!dense || j <= i); ++j)
        if (pn_pos(P, dense, j) <= pi && P->M[t3[2] + j] != 0) h[pn_pos(P, dense, j)] += P->M[t3[2] + j];
    for (int e = P->cp[i]; e < P->cp[i + 1]; ++e) {
        int r = P->cr[e], st = P->state[r], b = P->rowblk[r];
        int np = P->poff[b + 1] - P->poff[b];
        __global const int *pat = P->pat + P->poff[b];
        __global const real_t *dj = P->DJ + P->doff[b] + (r - P->off[b]) * np;
        real_t ji = P->cv[e];
        for (int t = 0; ji != 0 && (st == PRIMAL_QUADRATIC || st == PRIMAL_CONE) && t < np && (!dense || pat[t] <= i);
             ++t)
            if (pn_pos(P, dense, pat[t]) <= pi) h[pn_pos(P, dense, pat[t])] += ji * dj[t];
    }
}

/* H = M + J'DJ's lower triangle by positions, for n dofs (0: none): L's
 * pattern zeroed, then a dof's row a lane. */
static void pn_hessian(const pn_p *P, int n)
{
    pn_zero_pattern(P, n);
    PN_SYNC;
    for (int i = P->l; i < n; i += P->nl)
        if (P->dense) pn_hessian_row(P, i, 1);
        else pn_hessian_row(P, i, 0);
}

/* Column k's rows below the diagonal divided by d, a row a lane. */
PN_INLINE void pn_scale_column(const pn_p *P, int k, real_t d, int dense)
{
    int e1 = pn_col(P, dense, k + 1), sh = pn_shift(P, dense, k);
    for (int e = pn_col(P, dense, k) + 1 + P->l; e < e1; e += P->nl) P->H[pn_row(P, dense, sh, e) * P->nv + k] /= d;
}

/* The trailing rows less column k's outer product, within L's pattern, a
 * row of the column a lane: row i's entries at the column's rows up to i. */
PN_INLINE void pn_update_rows(const pn_p *P, int k, int dense)
{
    int e0 = pn_col(P, dense, k) + 1, e1 = pn_col(P, dense, k + 1), sh = pn_shift(P, dense, k), nv = P->nv;
    for (int e = e0 + P->l; e < e1; e += P->nl) {
        __global real_t *hi = P->H + pn_row(P, dense, sh, e) * nv;
        real_t lik = hi[k];
        for (int f = e0; lik != 0 && f <= e; ++f) hi[pn_row(P, dense, sh, f)] -= lik * P->H[pn_row(P, dense, sh, f) * nv + k];
    }
}

/* H factored in place over its first n positions (n: nv or 0), within
 * L's pattern: L below the diagonal, the diagonal in diag, a column a
 * step. Returns the first pivot that is not positive (a position), or
 * -1. */
static int pn_cholesky(const pn_p *P, int n)
{
    int nv = P->nv, pivot = -1;
    for (int k = 0; k < n && pivot < 0; ++k) {
        real_t d = P->H[k * nv + k];
        if (!(d > 0) || !isfinite(d)) pivot = k;
        d = sqrt(d);
        if (P->l == 0 && pivot < 0) P->diag[k] = d;
        if (pivot < 0 && P->dense) pn_scale_column(P, k, d, 1);
        else if (pivot < 0) pn_scale_column(P, k, d, 0);
        PN_SYNC;
        if (pivot < 0 && P->dense) pn_update_rows(P, k, 1);
        else if (pivot < 0) pn_update_rows(P, k, 0);
        PN_SYNC;
    }
    return pivot;
}

/* x = H^-1 g by the factor, by positions: tmp forward, Mg back, over L's
 * columns; then s = -x by dofs. */
PN_INLINE void pn_solve_factor(const pn_p *P, int dense)
{
    int nv = P->nv;
    for (int v = 0; v < nv; ++v) P->tmp[pn_pos(P, dense, v)] = P->grad[v];
    for (int k = 0; k < nv; ++k) {
        int sh = pn_shift(P, dense, k);
        real_t t = P->tmp[k] / P->diag[k];
        P->tmp[k] = t;
        for (int e = pn_col(P, dense, k) + 1; e < pn_col(P, dense, k + 1); ++e)
            P->tmp[pn_row(P, dense, sh, e)] -= P->H[pn_row(P, dense, sh, e) * nv + k] * t;
    }
    for (int k = nv - 1; k >= 0; --k) {
        int sh = pn_shift(P, dense, k);
        real_t t = P->tmp[k];
        for (int e = pn_col(P, dense, k) + 1; e < pn_col(P, dense, k + 1); ++e)
            t -= P->H[pn_row(P, dense, sh, e) * nv + k] * P->Mg[pn_row(P, dense, sh, e)];
        P->Mg[k] = t / P->diag[k];
    }
    for (int v = 0; v < nv; ++v) P->s[v] = -P->Mg[pn_pos(P, dense, v)];
}

/* The direction s = -H^-1 grad by the factor, on one lane. */
static void pn_direction(const pn_p *P, int go)
{
    if (go && P->l == 0 && P->dense) pn_solve_factor(P, 1);
    else if (go && P->l == 0) pn_solve_factor(P, 0);
}

/* The line search's terms along s (ref/primal_newton.c's pn_prepare):
 * each row's quadratic, each cone's U0, V0, UU, UV, VV, Dm (M s and J s
 * computed). */
static void pn_prepare(const pn_p *P, int go)
{
    for (int b = P->l; go && b < P->nb; b += P->nl) {
        int r0 = P->off[b], r1 = P->off[b + 1];
        __global real_t *c = P->blk + b * PB_N + PB_CQ;
        real_t mu = P->mu[b];
        for (int i = r0; i < r1; ++i) {
            real_t D = 1 / P->R[i];
            P->quad[3 * i] = (real_t)0.5 * D * P->x[i] * P->x[i];
            P->quad[3 * i + 1] = D * P->x[i] * P->Jv[i];
            P->quad[3 * i + 2] = (real_t)0.5 * D * P->Jv[i] * P->Jv[i];
        }
        if (P->kind[b] != BLK_CONE) continue;
        c[0] = mu * P->x[r0];
        c[1] = mu * P->Jv[r0];
        c[2] = c[3] = c[4] = 0;
        for (int j = r0 + 1; j < r1; ++j) {
            real_t u = P->bound[j] * P->x[j], v = P->bound[j] * P->Jv[j];
            c[2] += u * u;
            c[3] += u * v;
            c[4] += v * v;
        }
        c[5] = 1 / (P->R[r0] * mu * mu * (1 + mu * mu));
    }
}

static void pn_add(pn_q *t, real_t c0, real_t c1, real_t c2)
{
    t->c0 += c0;
    t->c1 += c1;
    t->c2 += c2;
}

/* Cone block b at step alpha: its quadratic into t, or its middle-zone
 * cost and derivatives into pt. */
static void pn_cone_eval(const pn_p *P, int b, real_t alpha, pn_q *t, pn_pt *pt)
{
    __global const real_t *c = P->blk + b * PB_N + PB_CQ;
    real_t mu = P->mu[b], N = c[0] + alpha * c[1], T2 = c[2] + alpha * (2 * c[3] + alpha * c[4]), T, T1, T2d, g,
           g1;
    int r0 = P->off[b], r1 = P->off[b + 1], bottom;
    T = T2 > 0 ? sqrt(T2) : 0;
    if (T2 > 0 && N >= mu * T) return;
    bottom = T2 <= 0 ? N < 0 : mu * N + T <= 0;
    if (T2 <= 0 || bottom) {
        for (int i = r0; bottom && i < r1; ++i) pn_add(t, P->quad[3 * i], P->quad[3 * i + 1], P->quad[3 * i + 2]);
        return;
    }
    T1 = (c[3] + alpha * c[4]) / T;
    T2d = c[4] / T - (c[3] + alpha * c[4]) * T1 / (T * T);
    g = N - mu * T;
    g1 = c[1] - mu * T1;
    pt->cost += (real_t)0.5 * c[5] * g * g;
    pt->d1 += c[5] * g * g1;
    pt->d2 += c[5] * (g1 * g1 - g * mu * T2d);
}

/* The cost along s at pt->alpha with its first two derivatives, on every lane. */
static void pn_eval(const pn_p *P, pn_q qg, pn_pt *pt, int *evals)
{
    pn_q t = qg;
    real_t al = pt->alpha;
    pt->cost = pt->d1 = pt->d2 = 0;
    for (int b = 0; b < P->nb; ++b) {
        int k = P->kind[b];
        if (k == BLK_CONE) {
            pn_cone_eval(P, b, al, &t, pt);
            continue;
        }
        for (int i = P->off[b]; i < P->off[b + 1]; ++i) {
            real_t x = P->x[i], jv = P->Jv[i], Rw = P->R[i] * P->bound[i], fw = P->bound[i], xa = x + al * jv;
            if (k == BLK_BOX && xa <= -Rw) pn_add(&t, fw * ((real_t)-0.5 * Rw - x), -fw * jv, 0);
            else if (k == BLK_BOX && xa >= Rw) pn_add(&t, fw * ((real_t)-0.5 * Rw + x), fw * jv, 0);
            else if (k != BLK_NONNEG || xa < 0) pn_add(&t, P->quad[3 * i], P->quad[3 * i + 1], P->quad[3 * i + 2]);
        }
    }
    pt->cost += al * al * t.c2 + al * t.c1 + t.c0;
    pt->d1 += 2 * al * t.c2 + t.c1;
    pt->d2 += 2 * t.c2;
    if (!(pt->d2 > 0)) pt->d2 = PN_MINVAL; /* convex: only by round-off */
    ++*evals;
}

/* Whether c, on b's side of the minimum, has the smaller slope. */
static int pn_closer(const pn_pt *b, const pn_pt *c)
{
    return (b->d1 < 0 && c->d1 < 0 && b->d1 < c->d1) || (b->d1 > 0 && c->d1 > 0 && b->d1 > c->d1);
}

/* Replaces *b by the candidate (c0, c1, c2) on its side with the smallest
 * slope, and its Newton point into *next; 1 when it moved. */
static int pn_bracket(const pn_p *P, pn_q qg, pn_pt *b, const pn_pt *c0, const pn_pt *c1, const pn_pt *c2,
                      pn_pt *next, int *evals)
{
    int moved = 0;
    if (pn_closer(b, c0)) *b = *c0, moved = 1;
    if (pn_closer(b, c1)) *b = *c1, moved = 1;
    if (pn_closer(b, c2)) *b = *c2, moved = 1;
    if (moved) {
        next->alpha = b->alpha - b->d1 / b->d2;
        pn_eval(P, qg, next, evals);
    }
    return moved;
}

/* The candidate of (c0, c1, c2) under gtol with the least cost, or NULL. */
static const pn_pt *pn_best(const pn_pt *c0, const pn_pt *c1, const pn_pt *c2, real_t gtol)
{
    const pn_pt *best = 0;
    if (fabs(c0->d1) < gtol) best = c0;
    if (fabs(c1->d1) < gtol && (!best || c1->cost < best->cost)) best = c1;
    if (fabs(c2->d1) < gtol && (!best || c2->cost < best->cost)) best = c2;
    return best;
}

/* MuJoCo's exact line search along s (ref/primal_newton.c's pn_search),
 * on every lane alike; the step, 0 when none decreases the cost, and in
 * *pred the decrease the quadratic model at 0 promised. */
static real_t pn_search(const pn_p *P, real_t tol, pn_q qg, real_t *pred)
{
    real_t snorm = 0, gtol;
    pn_pt p0 = {0, 0, 0, 0}, p1, p2 = {0, 0, 0, 0}, mid, n1, n2;
    const pn_pt *best;
    int evals = 0, have2 = 0, dir;
    for (int v = 0; v < P->nv; ++v) snorm += P->s[v] * P->s[v];
    snorm = sqrt(snorm);
    *pred = 0;
    if (snorm < PN_MINVAL) return 0;
    gtol = tol * P->ls_tol * snorm / P->scale;
    pn_eval(P, qg, &p0, &evals);
    *pred = (real_t)0.5 * p0.d1 * p0.d1 / p0.d2;
    p1.alpha = -p0.d1 / p0.d2;
    pn_eval(P, qg, &p1, &evals);
    if (p0.cost < p1.cost) p1 = p0;
    if (fabs(p1.d1) < gtol) return p1.alpha;
    dir = p1.d1 < 0 ? 1 : -1;
    while (p1.d1 * dir <= -gtol && evals < P->ls_it) {
        p2 = p1;
        have2 = 1;
        p1.alpha -= p1.d1 / p1.d2;
        pn_eval(P, qg, &p1, &evals);
        if (fabs(p1.d1) < gtol) return p1.alpha;
    }
    if (evals >= P->ls_it || !have2) return p1.alpha;
    n2 = p1;
    n1.alpha = p1.alpha - p1.d1 / p1.d2;
    pn_eval(P, qg, &n1, &evals);
    while (evals < P->ls_it) {
        int m1, m2;
        pn_pt c0 = n1, c1 = n2;
        mid.alpha = (real_t)0.5 * (p1.alpha + p2.alpha);
        pn_eval(P, qg, &mid, &evals);
        if ((best = pn_best(&c0, &c1, &mid, gtol))) return best->alpha;
        m1 = pn_bracket(P, qg, &p1, &c0, &c1, &mid, &n1, &evals);
        m2 = pn_bracket(P, qg, &p2, &c0, &c1, &mid, &n2, &evals);
        if (!m1 && !m2) return mid.alpha;
    }
    if (p1.cost <= p2.cost && p1.cost < p0.cost) return p1.alpha;
    if (p2.cost <= p1.cost && p2.cost < p0.cost) return p2.alpha;
    return 0;
}

/* The scaled gradient norm, on every lane. */
static real_t pn_gradient(const pn_p *P)
{
    real_t g = 0;
    for (int v = 0; v < P->nv; ++v) g += P->grad[v] * P->grad[v];
    return P->scale * sqrt(g);
}

/* The stopping rule (core/stopping.c's clc_stop_rule) but for the time
 * cap, which a launch cannot read (docs/mujoco.md): PS_*, 0 to go on. */
static int pn_rule(real_t e, real_t tol, int it, int max_iter)
{
    return !isfinite(e) ? PS_NONFINITE : e <= tol ? PS_TOL : it >= max_iter ? PS_ITERS : 0;
}

/* The start's stages (MuJoCo's warm start: the warm a, then a0, then
 * the warm a again unless it costs more), then Newton's steps. */
enum { PN_WARM, PN_COLD, PN_BACK, PN_NEWTON };

/* The stage's iterate: a0 (the warm a kept in Mv, free until the first
 * search), the warm a back, or the step alpha along s. */
static void pn_move(const pn_p *P, int stage, real_t alpha)
{
    for (int v = P->l; v < P->nv; v += P->nl) {
        if (stage == PN_COLD) {
            P->Mv[v] = P->a[v];
            P->a[v] = P->a0[v];
        } else if (stage == PN_BACK) {
            P->a[v] = P->Mv[v];
        } else if (stage == PN_NEWTON) {
            P->a[v] += alpha * P->s[v];
            P->Ma[v] += alpha * P->Mv[v];
        }
    }
    for (int i = P->l; stage == PN_NEWTON && i < P->m; i += P->nl) P->x[i] += alpha * P->Jv[i];
}

/* The line search's polynomial of the Gauss part along s, on every lane. */
static pn_q pn_gauss(const pn_p *P, real_t gauss)
{
    real_t sMa = 0, sf0 = 0, sMv = 0;
    pn_q q;
    for (int v = 0; v < P->nv; ++v) {
        sMa += P->s[v] * P->Ma[v];
        sf0 += P->s[v] * P->f0[v];
        sMv += P->s[v] * P->Mv[v];
    }
    q.c0 = gauss;
    q.c1 = sMa - sf0;
    q.c2 = (real_t)0.5 * sMv;
    return q;
}

/* The Newton loop (ref/primal_newton.c's clc_ref_primal_newton) as one
 * loop whose every pass reaches every barrier (POCL compiles a barrier
 * under a branch by copying the code after it): a stage of the start
 * or a step, the update there, then, where the solve goes on, the
 * Hessian, its factor, the direction and the line search. The outcome
 * into out (PO_*) and outr (error, cost), by lane 0. */
static void pn_solve(const pn_p *P, int max_iter, real_t tol, int warm, __global int *out, __global real_t *outr)
{
    int stage = warm ? PN_WARM : PN_COLD, stop = 0, iters = 0, pivot = -1, it = 0;
    real_t warm_cost = INFINITY, e = 0, alpha = 0, old = 0, pred = 0;
    pn_c c;
    while (!stop) {
        int go = 0;
        pn_move(P, stage, alpha);
        PN_SYNC;
        pn_mul(P, stage != PN_NEWTON, P->a, P->Ma, P->x, 1);
        PN_SYNC;
        pn_blocks(P);
        PN_SYNC;
        pn_gradient_dofs(P);
        PN_SYNC;
        c = pn_cost(P);
        if (stage == PN_WARM) {
            warm_cost = c.cost;
            stage = PN_COLD;
        } else if (stage == PN_COLD && warm_cost <= c.cost) {
            stage = PN_BACK;
        } else if (stage != PN_NEWTON) {
            stage = PN_NEWTON;
            go = 1;
        } else {
            real_t impr = P->scale * (old - c.cost);
            iters = it;
            e = pn_gradient(P);
            e = impr < e ? fmax(impr, (real_t)0) : e;
            stop = pn_rule(e, tol, it, max_iter);
            go = !stop;
        }
        pn_dj(P, go ? P->nv : 0);
        PN_SYNC;
        pn_hessian(P, go ? P->nv : 0);
        PN_SYNC;
        pivot = pn_cholesky(P, go ? P->nv : 0);
        if (pivot >= 0) stop = PS_NOT_PD;
        go = go && pivot < 0;
        pn_direction(P, go);
        PN_SYNC;
        pn_mul(P, go, P->s, P->Mv, P->Jv, 0);
        PN_SYNC;
        pn_prepare(P, go);
        PN_SYNC;
        if (go) {
            ++it;
            old = c.cost;
            alpha = pn_search(P, tol, pn_gauss(P, c.gauss), &pred);
        }
        if (go && alpha == 0) { /* no decrease along Newton's direction: done */
            /* judged as the reference judges it: the smaller of the
             * gradient and the decrease the step's model promised */
            iters = it - 1;
            e = fmin(pn_gradient(P), P->scale * pred);
            stop = pn_rule(e, tol, iters, max_iter);
            if (!stop) stop = PS_NO_DECREASE;
        }
        PN_SYNC; /* the reads of every lane's sums before the next pass writes */
    }
    if (P->l) return;
    out[PO_STOP] = stop;
    out[PO_ITERS] = iters;
    out[PO_PIVOT] = pivot;
    outr[0] = e;
    outr[1] = c.cost;
}

/* A work-group a problem: problem k's solve from a (a0 without warm);
 * a, the forces and zones, and its outcome back. The batch comes in
 * three buffers (layout.h's PQ_*); its scratch vectors lie slot by slot
 * (PD_*, PR_*), each slot every problem's (nd dofs, nr rows in all), and
 * what goes back lies in two runs, the zones and outcomes, then the
 * iterates, forces and errors: two reads. */
__kernel void primal_newton(int max_iter, real_t tol, int warm, int nd, int nr, __global int *ib,
                            __global real_t *rb, __global real_t *sb)
{
    __global const int *info = ib + ib[PQ_INFO], *off = ib + ib[PQ_OFF], *kind = ib + ib[PQ_KIND];
    __global const int *jp = ib + ib[PQ_JP], *jc = ib + ib[PQ_JC], *cp = ib + ib[PQ_CP], *cr = ib + ib[PQ_CR];
    __global const int *poff = ib + ib[PQ_POFF], *pat = ib + ib[PQ_PAT], *doff = ib + ib[PQ_DOFF];
    __global const int *rowblk = ib + ib[PQ_ROWBLK], *mt = ib + ib[PQ_MT], *pos = ib + ib[PQ_POS];
    __global const int *lp = ib + ib[PQ_LP], *li = ib + ib[PQ_LI];
    __global int *state = ib + ib[PQ_STATE], *out = ib + ib[PQ_OUT];
    __global const real_t *mu = rb + ib[PQ_MU], *prm = rb + ib[PQ_PRM], *M = rb + ib[PQ_M], *jv = rb + ib[PQ_JV];
    __global const real_t *cv = rb + ib[PQ_CV], *din = rb + ib[PQ_DIN], *rin = rb + ib[PQ_RIN];
    __global real_t *av = rb + ib[PQ_A], *outr = rb + ib[PQ_OUTR];
    __global real_t *H = sb + ib[PQ_H], *DJ = sb + ib[PQ_DJ], *dv = sb + ib[PQ_DV], *rv = sb + ib[PQ_RV];
    __global real_t *blk = sb + ib[PQ_BLK];
    int k = get_group_id(0);
    __global const int *I = info + PI_N * k;
    int d0 = I[PI_D0], nv = I[PI_NV], r0 = I[PI_R0], m = I[PI_M], b0 = I[PI_B0], nz0 = I[PI_NZ0];
    __global real_t *d = dv + d0, *r = rv + r0;
    pn_p P;
    P.nv = nv;
    P.m = m;
    P.nb = I[PI_NB];
    P.ls_it = I[PI_LS];
    P.l = get_local_id(0);
    P.nl = get_local_size(0);
    P.scale = prm[2 * k];
    P.ls_tol = prm[2 * k + 1];
    P.off = off + b0 + k; /* its own nb + 1 row offsets, from 0 */
    P.kind = kind + b0;
    P.mu = mu + b0;
    P.M = M + I[PI_MB0];
    P.mt = mt + 3 * d0;
    P.pos = pos + d0;
    P.lp = lp + d0 + k;
    P.dense = I[PI_LI0] < 0;
    P.li = li + (P.dense ? 0 : I[PI_LI0]);
    P.H = H + I[PI_HOFF];
    P.jp = jp + r0 + k; /* its own m + 1 row offsets, as off's */
    P.jc = jc + nz0;
    P.jv = jv + nz0;
    P.cp = cp + d0 + k;
    P.cr = cr + nz0;
    P.cv = cv + nz0;
    P.poff = poff + b0 + k;
    P.pat = pat + I[PI_PT0];
    P.doff = doff + b0 + k;
    P.rowblk = rowblk + r0;
    P.DJ = DJ + I[PI_DJ0];
    P.a0 = din + 2 * d0;
    P.f0 = P.a0 + nv;
    P.aref = rin + 3 * r0;
    P.R = P.aref + m;
    P.bound = P.R + m;
    P.a = av + d0;
    P.Ma = d + PD_MA * nd;
    P.grad = d + PD_GRAD * nd;
    P.Mg = d + PD_MG * nd;
    P.s = d + PD_S * nd;
    P.Mv = d + PD_MV * nd;
    P.tmp = d + PD_TMP * nd;
    P.diag = d + PD_DIAG * nd;
    P.x = r + PR_X * nr;
    P.f = rb + ib[PQ_F] + r0;
    P.Jv = r + PR_JV * nr;
    P.quad = rv + PR_QUAD * nr + 3 * r0;
    P.blk = blk + PB_N * b0;
    P.state = state + r0;
    pn_solve(&P, max_iter, tol, warm, out + PO_N * k, outr + 2 * k);
}
