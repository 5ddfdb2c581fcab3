/* MuJoCo's primal problem (core/primal.h): storage, checks and the soft
 * cost with its forces, zones and cone Hessians. */
#include "core/primal.h"
#include "core/internal.h"
#include "core/blocks.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

clcone_status clc_pproblem_alloc(clc_pproblem *p, int nv, int m, int nb, int nnz, size_t nm,
                                    clcone_error *err)
{
    size_t V = (size_t)nv, R = (size_t)m, B = (size_t)nb, N = (size_t)nnz;
    memset(p, 0, sizeof *p);
    p->nv = nv;
    p->m = m;
    p->nb = nb;
    /* the reals and the integers in one allocation each (an island of a
     * world is built every step): M, a0 and f0, J's values, a_ref, R
     * and bounds, mu; J's rows and columns, the blocks' offsets and
     * kinds, the groups' dof and M offsets */
    p->M = clc_calloc(nm + 2 * V + N + 3 * R + B + 1, sizeof *p->M, err, "the problem's reals");
    p->jp = clc_calloc(R + 1 + N + B + 1 + B + 2 * V + 4, sizeof *p->jp, err, "the problem's integers");
    if (!p->M || !p->jp) {
        clc_pproblem_free(p);
        return CLCONE_ENOMEM;
    }
    p->a0 = p->M + nm;
    p->f0 = p->a0 + nv;
    p->jv = p->f0 + nv;
    p->aref = p->jv + nnz;
    p->R = p->aref + m;
    p->bound = p->R + m;
    p->mu = p->bound + m;
    p->jc = p->jp + m + 1;
    p->off = p->jc + nnz;
    p->kind = p->off + nb + 1;
    p->goff = p->kind + nb;
    p->moff = p->goff + nv + 2;
    return CLCONE_OK;
}

clcone_status clc_pproblem_make_hard(clc_pproblem *p, clcone_error *err)
{
    p->hard = clc_calloc((size_t)p->m, sizeof *p->hard, err, "the problem's hard rows");
    return p->hard ? CLCONE_OK : CLCONE_ENOMEM;
}

void clc_pproblem_free(clc_pproblem *p)
{
    if (!p) return;
    free(p->M);
    free(p->jp);
    free(p->hard);
    memset(p, 0, sizeof *p);
}

static clcone_status check_rows(const clc_pproblem *p, clcone_error *err)
{
    for (int i = 0; i < p->m; ++i) {
        if (!(p->R[i] > 0 && isfinite(p->R[i])) || !isfinite(p->aref[i]))
            return clc_fail(err, CLCONE_EINVAL, "row %d: R %g (not finite and > 0) or a_ref %g", i, p->R[i],
                               p->aref[i]);
        if (p->hard && !(p->hard[i] >= 0 && isfinite(p->hard[i])))
            return clc_fail(err, CLCONE_EINVAL, "row %d: a hard row's scale %g (not finite and >= 0)", i,
                               p->hard[i]);
        if (p->jp[i + 1] < p->jp[i])
            return clc_fail(err, CLCONE_EINVAL, "row %d: J's entries %d..%d out of order", i, p->jp[i],
                               p->jp[i + 1]);
        for (int e = p->jp[i]; e < p->jp[i + 1]; ++e) {
            if (p->jc[e] < 0 || p->jc[e] >= p->nv || !isfinite(p->jv[e]))
                return clc_fail(err, CLCONE_EINVAL, "row %d: J's entry at column %d of %d is %g", i, p->jc[e],
                                   p->nv, p->jv[e]);
            if (e > p->jp[i] && p->jc[e] <= p->jc[e - 1])
                return clc_fail(err, CLCONE_EINVAL, "row %d: J's columns %d then %d, not ascending", i,
                                   p->jc[e - 1], p->jc[e]);
        }
    }
    return CLCONE_OK;
}

static clcone_status check_blocks(const clc_pproblem *p, clcone_error *err)
{
    if (p->off[0] != 0 || p->off[p->nb] != p->m)
        return clc_fail(err, CLCONE_EINVAL, "block offsets run from %d to %d, not 0 to the %d rows", p->off[0],
                           p->off[p->nb], p->m);
    for (int b = 0; b < p->nb; ++b) {
        int n = p->off[b + 1] - p->off[b], k = p->kind[b];
        if (k < 0 || k >= BLK_KINDS || n < (k == BLK_CONE ? 2 : 1) || n > (k == BLK_CONE ? PRIMAL_CONE_MAX : p->m))
            return clc_fail(err, CLCONE_EINVAL, "block %d (row %d): kind %d of %d rows", b, p->off[b], k, n);
        if (k == BLK_CONE && !(p->mu[b] > 0 && isfinite(p->mu[b])))
            return clc_fail(err, CLCONE_EINVAL, "block %d (row %d, cone): mu %g, not finite and > 0", b,
                               p->off[b], p->mu[b]);
        for (int x = k == BLK_CONE ? 1 : 0; x < n && (k == BLK_CONE || k == BLK_BOX); ++x) {
            double w = p->bound[p->off[b] + x];
            if (!(isfinite(w) && (k == BLK_CONE ? w > 0 : w >= 0)))
                return clc_fail(err, CLCONE_EINVAL, "row %d (block %d, %s): %s %g", p->off[b] + x, b,
                                   k == BLK_CONE ? "cone" : "box", k == BLK_CONE ? "friction" : "bound", w);
        }
    }
    return CLCONE_OK;
}

/* Groups cover the dofs in order, M's blocks their sizes, with positive
 * diagonals and finite entries. */
static clcone_status check_groups(const clc_pproblem *p, clcone_error *err)
{
    if (p->ng < (p->nv > 0) || p->ng > p->nv || p->goff[0] != 0 || p->goff[p->ng] != p->nv || p->moff[0] != 0)
        return clc_fail(err, CLCONE_EINVAL, "%d dof groups from %d to %d: not a cover of the %d dofs", p->ng,
                           p->goff[0], p->goff[p->ng], p->nv);
    for (int g = 0; g < p->ng; ++g) {
        int n = p->goff[g + 1] - p->goff[g];
        const double *B = p->M + p->moff[g];
        if (n < 1 || p->moff[g + 1] - p->moff[g] != n * n)
            return clc_fail(err, CLCONE_EINVAL, "dof group %d: dofs %d..%d, %d entries of M", g, p->goff[g],
                               p->goff[g + 1] - 1, p->moff[g + 1] - p->moff[g]);
        for (int i = 0; i < n; ++i) {
            if (!(B[i * n + i] > 0))
                return clc_fail(err, CLCONE_EINVAL, "dof %d: M_ii %g, not > 0", p->goff[g] + i, B[i * n + i]);
            for (int j = 0; j < n; ++j)
                if (!isfinite(B[i * n + j]))
                    return clc_fail(err, CLCONE_EINVAL, "M (%d, %d) is %g", p->goff[g] + i, p->goff[g] + j,
                                       B[i * n + j]);
        }
    }
    return CLCONE_OK;
}

clcone_status clc_pproblem_validate(const clc_pproblem *p, clcone_error *err)
{
    clcone_status s;
    if (p->nv < 0 || p->m < 1 || p->nb < 1)
        return clc_fail(err, CLCONE_EINVAL, "%d dofs, %d rows and %d blocks: need a row and a block", p->nv,
                           p->m, p->nb);
    if (!(p->scale > 0 && isfinite(p->scale)) || p->ls_iterations < 1 || !(p->ls_tolerance > 0))
        return clc_fail(err, CLCONE_EINVAL, "scale %g, line search of %d evaluations at tolerance %g", p->scale,
                           p->ls_iterations, p->ls_tolerance);
    for (int v = 0; v < p->nv; ++v)
        if (!isfinite(p->a0[v]) || !isfinite(p->f0[v]))
            return clc_fail(err, CLCONE_EINVAL, "dof %d: a0 %g or M a0 %g", v, p->a0[v], p->f0[v]);
    if ((s = check_groups(p, err)) || (s = check_rows(p, err))) return s;
    return check_blocks(p, err);
}

/* Cone block b at x (its n rows from r0): its cost, forces, zone and,
 * with H, its Hessian in the middle zone, in the scaled space U = diag(mu,
 * friction) x where the cone is circular. */
static double cone_update(const clc_pproblem *p, const double *D, int b, const double *x, double *f, int *state,
                          double *H)
{
    int r0 = p->off[b], n = p->off[b + 1] - r0, zone;
    const double *fr = p->bound + r0;
    double mu = p->mu[b], U[PRIMAL_CONE_MAX], T = 0, N, s = 0, Dm, g;
    U[0] = mu * x[r0];
    for (int j = 1; j < n; ++j) {
        U[j] = fr[j] * x[r0 + j];
        T += U[j] * U[j];
    }
    T = sqrt(T);
    N = U[0];
    zone = N >= mu * T || (T <= 0 && N >= 0) ? PRIMAL_SATISFIED
           : mu * N + T <= 0 || T <= 0     ? PRIMAL_QUADRATIC
                                           : PRIMAL_CONE;
    for (int j = 0; j < n; ++j) state[r0 + j] = zone;
    if (zone == PRIMAL_SATISFIED) {
        for (int j = 0; j < n; ++j) f[r0 + j] = 0;
        return 0;
    }
    if (zone == PRIMAL_QUADRATIC) {
        for (int j = 0; j < n; ++j) {
            f[r0 + j] = -x[r0 + j] * D[r0 + j];
            s -= 0.5 * x[r0 + j] * f[r0 + j];
        }
        return s;
    }
    Dm = 1 / (p->R[r0] * mu * mu * (1 + mu * mu));
    g = N - mu * T;
    f[r0] = -Dm * g * mu;
    for (int j = 1; j < n; ++j) f[r0 + j] = -f[r0] * U[j] * fr[j] / T;
    if (H) {
        /* 1/2 Dm g^2's Hessian in U: Dm (grad g grad g' + g Hess g), then
         * diag(mu, friction) on both sides */
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k) {
                double h = j == 0 && k == 0 ? 1
                           : j == 0         ? -mu * U[k] / T
                           : k == 0         ? -mu * U[j] / T
                                            : mu * N * U[j] * U[k] / (T * T * T) + (j == k ? mu * mu - mu * N / T : 0);
                H[j * n + k] = Dm * h * (j ? fr[j] : mu) * (k ? fr[k] : mu);
            }
    }
    return 0.5 * Dm * g * g;
}

int clc_pproblem_same_dofs(const clc_pproblem *p, int r, int s)
{
    int n = p->jp[r + 1] - p->jp[r];
    return p->jp[s + 1] - p->jp[s] == n && !memcmp(p->jc + p->jp[r], p->jc + p->jp[s], sizeof *p->jc * (size_t)n);
}

double clc_pproblem_update(const clc_pproblem *p, const double *D, const double *x, double *f, int *state,
                           double *Hc)
{
    double s = 0;
    for (int b = 0; b < p->nb; ++b) {
        int k = p->kind[b];
        if (k == BLK_CONE) {
            s += cone_update(p, D, b, x, f, state, Hc ? Hc + (size_t)b * PRIMAL_CONE_MAX * PRIMAL_CONE_MAX : NULL);
            continue;
        }
        for (int i = p->off[b]; i < p->off[b + 1]; ++i) {
            double R = p->R[i], w = p->bound[i];
            if (k == BLK_BOX && (x[i] <= -R * w || x[i] >= R * w)) {
                int neg = x[i] <= -R * w;
                f[i] = neg ? w : -w;
                state[i] = neg ? PRIMAL_LINEARNEG : PRIMAL_LINEARPOS;
                s += w * fabs(x[i]) - 0.5 * R * w * w;
            } else if (k == BLK_NONNEG && x[i] >= 0) {
                f[i] = 0;
                state[i] = PRIMAL_SATISFIED;
            } else {
                f[i] = -x[i] * D[i];
                state[i] = PRIMAL_QUADRATIC;
                s -= 0.5 * x[i] * f[i];
            }
        }
    }
    return s;
}

clcone_status clc_pproblem_soft_only(const clc_pproblem *p, clcone_error *err)
{
    for (int i = 0; p->hard && i < p->m; ++i)
        if (p->hard[i] > 0)
            return clc_fail(err, CLCONE_EINVAL, "row %d is hard (R = 0): MuJoCo's Newton takes soft rows only; "
                                                   "the model coulomb's proximal rounds take hard ones", i);
    return CLCONE_OK;
}

/* J's row i times v. */
static double row_dot(const clc_pproblem *p, int i, const double *v)
{
    double t = 0;
    for (int e = p->jp[i]; e < p->jp[i + 1]; ++e) t += p->jv[e] * v[p->jc[e]];
    return t;
}

/* Whether block b is a hard cone: exact Coulomb's, De Saxce's shift on it. */
static int hard_cone(const clc_pproblem *p, int b)
{
    return p->kind[b] == BLK_CONE && p->hard && p->hard[p->off[b]] > 0;
}

/* De Saxce's shift of cone block b at its rows' velocities u (J a - a_ref,
 * u[0] the normal's): ||friction .* u_T||, the normal velocity that
 * Coulomb's law adds, measured in MuJoCo's scaling of the cone
 * (clc_block_sets_error's). */
static double desaxce_shift(const clc_pproblem *p, int b, const double *u)
{
    double t = 0;
    for (int j = 1, r0 = p->off[b]; j < p->off[b + 1] - r0; ++j)
        t += (p->bound[r0 + j] * u[j]) * (p->bound[r0 + j] * u[j]);
    return sqrt(t);
}

double clc_pproblem_hard_error(const clc_pproblem *p, const double *a, const double *f)
{
    size_t m = (size_t)p->m;
    double *q = malloc(sizeof *q * 3 * m + 1), *u, *bound, e;
    if (!q) return NAN;
    u = q + m;
    bound = u + m;
    for (int b = 0; b < p->nb; ++b) {
        for (int i = p->off[b]; i < p->off[b + 1]; ++i) {
            q[i] = row_dot(p, i, p->a0) - p->aref[i];
            u[i] = row_dot(p, i, a) - p->aref[i] + (p->hard && p->hard[i] > 0 ? 0 : p->R[i] * f[i]);
            bound[i] = p->kind[b] == BLK_CONE && i == p->off[b] ? 1.0 : p->bound[i];
        }
        if (hard_cone(p, b)) u[p->off[b]] += desaxce_shift(p, b, u + p->off[b]);
    }
    e = clc_block_sets_error(p->nb, p->off, p->kind, bound, q, f, u);
    free(q);
    return e;
}

void clc_pproblem_round(const clc_pproblem *p, double c, const double *center, const double *a, double *R,
                        double *aref)
{
    for (int i = 0; i < p->m; ++i) {
        int hard = p->hard && p->hard[i] > 0;
        R[i] = hard ? c * p->hard[i] : p->R[i];
        aref[i] = hard ? p->aref[i] + R[i] * center[i] : p->aref[i];
    }
    /* a hard cone's shift at a, added to q = J a0 - a_ref: taken from a_ref */
    for (int b = 0; b < p->nb; ++b) {
        double u[PRIMAL_CONE_MAX];
        if (!hard_cone(p, b)) continue;
        for (int j = 1, r0 = p->off[b]; j < p->off[b + 1] - r0; ++j) u[j] = row_dot(p, r0 + j, a) - p->aref[r0 + j];
        aref[p->off[b]] -= desaxce_shift(p, b, u);
    }
}
