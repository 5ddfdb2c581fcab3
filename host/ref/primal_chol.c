/* The block Cholesky factor of MuJoCo's Newton Hessian by dof groups
 * (ref/primal_chol.h). */
#include "ref/primal_chol.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void clc_pchol_free(pchol *c)
{
    free(c->pd);
    free(c->blk);
    free(c->store);
    memset(c, 0, sizeof *c);
}

/* The groups that constraint blocks join, as an adjacency matrix (buf
 * and mark: ng each, scratch). */
static void group_graph(const clc_pproblem *p, const int *gof, unsigned char *adj, int *buf, int *mark)
{
    int ng = p->ng;
    for (int g = 0; g < ng; ++g) mark[g] = -1;
    for (int b = 0; b < p->nb; ++b) {
        int ns = 0;
        for (int i = p->off[b]; i < p->off[b + 1]; ++i)
            for (int e = p->jp[i]; e < p->jp[i + 1]; ++e) {
                int g = gof[p->jc[e]];
                if (mark[g] == b) continue;
                mark[g] = b;
                buf[ns++] = g;
            }
        for (int x = 0; x < ns; ++x)
            for (int y = 0; y < ns; ++y) adj[(size_t)buf[x] * ng + buf[y]] = 1;
    }
}

/* Minimum-degree elimination of the group graph (ties: the lower group),
 * its fill added to adj; order[P] the group eliminated P-th. */
static void min_degree(int ng, unsigned char *adj, int *order, int *deg, unsigned char *done)
{
    for (int g = 0; g < ng; ++g) {
        deg[g] = 0;
        done[g] = 0;
        for (int h = 0; h < ng; ++h) deg[g] += h != g && adj[(size_t)g * ng + h];
    }
    for (int P = 0; P < ng; ++P) {
        int best = -1;
        for (int g = 0; g < ng; ++g)
            if (!done[g] && (best < 0 || deg[g] < deg[best])) best = g;
        order[P] = best;
        done[best] = 1;
        for (int a = 0; a < ng; ++a) {
            if (done[a] || !adj[(size_t)best * ng + a]) continue;
            --deg[a];
            for (int b = 0; b < ng; ++b)
                if (b != a && !done[b] && adj[(size_t)best * ng + b] && !adj[(size_t)a * ng + b]) {
                    adj[(size_t)a * ng + b] = 1;
                    ++deg[a];
                }
        }
    }
}

clcone_status clc_pchol_init(pchol *c, const clc_pproblem *p, clcone_error *err)
{
    int ng = p->ng, nv = p->nv, *gof, *order, *deg;
    unsigned char *adj, *done;
    size_t total = 0;
    clcone_status s = CLCONE_ENOMEM;
    memset(c, 0, sizeof *c);
    c->nv = nv;
    c->ng = ng;
    c->pd = clc_calloc(4 * (size_t)nv + 4 * (size_t)ng + 4, sizeof *c->pd, err, "the factor's order");
    adj = clc_calloc((size_t)ng * ng + ng + 1, 1, err, "the group graph");
    c->blk = clc_calloc((size_t)ng * ng + 1, sizeof *c->blk, err, "the factor's blocks");
    if (!c->pd || !adj || !c->blk) goto out;
    c->gp = c->pd + nv;
    c->orig = c->gp + nv;
    gof = c->orig + nv;
    c->gs = gof + nv;
    order = c->gs + ng + 1;
    deg = order + ng;
    done = adj + (size_t)ng * ng;
    for (int g = 0; g < ng; ++g)
        for (int i = p->goff[g]; i < p->goff[g + 1]; ++i) gof[i] = g;
    group_graph(p, gof, adj, order, deg);
    min_degree(ng, adj, order, deg, done);
    for (int P = 0, a = 0; P < ng; ++P) {
        int g = order[P];
        c->gs[P] = a;
        for (int i = p->goff[g]; i < p->goff[g + 1]; ++i, ++a) {
            c->pd[i] = a;
            c->gp[a] = P;
            c->orig[a] = i;
        }
    }
    c->gs[ng] = nv;
    for (int P = 0; P < ng; ++P)
        for (int Q = 0; Q <= P; ++Q)
            if (P == Q || adj[(size_t)order[P] * ng + order[Q]])
                total += (size_t)(c->gs[P + 1] - c->gs[P]) * (size_t)(c->gs[Q + 1] - c->gs[Q]);
    if (!(c->store = clc_calloc(total + 1, sizeof *c->store, err, "the factor"))) goto out;
    total = 0;
    for (int P = 0; P < ng; ++P)
        for (int Q = 0; Q <= P; ++Q)
            if (P == Q || adj[(size_t)order[P] * ng + order[Q]]) {
                c->blk[(size_t)P * ng + Q] = c->store + total;
                total += (size_t)(c->gs[P + 1] - c->gs[P]) * (size_t)(c->gs[Q + 1] - c->gs[Q]);
            }
    s = CLCONE_OK;
out:
    free(adj);
    if (s) clc_pchol_free(c);
    return s;
}

void clc_pchol_zero(pchol *c)
{
    size_t total = 0;
    for (int P = 0; P < c->ng; ++P)
        for (int Q = 0; Q <= P; ++Q)
            if (c->blk[(size_t)P * c->ng + Q])
                total += (size_t)(c->gs[P + 1] - c->gs[P]) * (size_t)(c->gs[Q + 1] - c->gs[Q]);
    memset(c->store, 0, sizeof *c->store * total);
}

/* B (m x n) <- B L^-T, L (n x n) lower. */
static void solve_right(double *B, int m, const double *L, int n)
{
    for (int r = 0; r < m; ++r)
        for (int j = 0; j < n; ++j) {
            double t = B[r * n + j];
            for (int k = 0; k < j; ++k) t -= B[r * n + k] * L[j * n + k];
            B[r * n + j] = t / L[j * n + j];
        }
}

clcone_status clc_pchol_factor(pchol *c, clcone_error *err)
{
    int ng = c->ng;
    for (int P = 0; P < ng; ++P) {
        int n = c->gs[P + 1] - c->gs[P];
        double *L = c->blk[(size_t)P * ng + P];
        for (int j = 0; j < n; ++j) {
            double d = L[j * n + j];
            for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
            if (!(d > 0) || !isfinite(d))
                return clc_fail(err, CLCONE_EINVAL, "MuJoCo's Newton: the Hessian M + J'DJ is not positive "
                                                       "definite (pivot %g at dof %d of %d)",
                                   d, c->orig[c->gs[P] + j], c->nv);
            L[j * n + j] = sqrt(d);
            for (int i = j + 1; i < n; ++i) {
                double t = L[i * n + j];
                for (int k = 0; k < j; ++k) t -= L[i * n + k] * L[j * n + k];
                L[i * n + j] = t / L[j * n + j];
            }
        }
        for (int Q = P + 1; Q < ng; ++Q)
            if (c->blk[(size_t)Q * ng + P]) solve_right(c->blk[(size_t)Q * ng + P], c->gs[Q + 1] - c->gs[Q], L, n);
        for (int Q = P + 1; Q < ng; ++Q) {
            const double *A = c->blk[(size_t)Q * ng + P];
            int nq = c->gs[Q + 1] - c->gs[Q];
            for (int R = P + 1; A && R <= Q; ++R) {
                const double *B = c->blk[(size_t)R * ng + P];
                double *T = c->blk[(size_t)Q * ng + R];
                int nr = c->gs[R + 1] - c->gs[R];
                for (int i = 0; B && i < nq; ++i)
                    for (int j = 0; j < nr; ++j) {
                        double t = 0;
                        for (int k = 0; k < n; ++k) t += A[i * n + k] * B[j * n + k];
                        T[i * nr + j] -= t;
                    }
            }
        }
    }
    return CLCONE_OK;
}

void clc_pchol_solve(const pchol *c, const double *b, double *x, double *tmp)
{
    int ng = c->ng;
    for (int a = 0; a < c->nv; ++a) tmp[a] = b[c->orig[a]];
    for (int P = 0; P < ng; ++P) { /* L y = b */
        int n = c->gs[P + 1] - c->gs[P];
        double *y = tmp + c->gs[P];
        const double *L = c->blk[(size_t)P * ng + P];
        for (int Q = 0; Q < P; ++Q) {
            const double *B = c->blk[(size_t)P * ng + Q];
            int nq = c->gs[Q + 1] - c->gs[Q];
            for (int i = 0; B && i < n; ++i)
                for (int k = 0; k < nq; ++k) y[i] -= B[i * nq + k] * tmp[c->gs[Q] + k];
        }
        for (int i = 0; i < n; ++i) {
            for (int k = 0; k < i; ++k) y[i] -= L[i * n + k] * y[k];
            y[i] /= L[i * n + i];
        }
    }
    for (int P = ng - 1; P >= 0; --P) { /* L' x = y */
        int n = c->gs[P + 1] - c->gs[P];
        double *y = tmp + c->gs[P];
        const double *L = c->blk[(size_t)P * ng + P];
        for (int Q = P + 1; Q < ng; ++Q) {
            const double *B = c->blk[(size_t)Q * ng + P];
            int nq = c->gs[Q + 1] - c->gs[Q];
            for (int k = 0; B && k < nq; ++k)
                for (int i = 0; i < n; ++i) y[i] -= B[k * n + i] * tmp[c->gs[Q] + k];
        }
        for (int i = n - 1; i >= 0; --i) {
            for (int k = i + 1; k < n; ++k) y[i] -= L[k * n + i] * y[k];
            y[i] /= L[i * n + i];
        }
    }
    for (int a = 0; a < c->nv; ++a) x[c->orig[a]] = tmp[a];
}
