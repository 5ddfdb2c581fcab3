/* The Cholesky factor of MuJoCo's Newton Hessian (ref/primal_chol.h): sparse,
 * the pattern by the elimination tree once a solve, or dense for a small
 * island; each factor left-looking by columns into a scatter vector. */
#include "ref/primal_chol.h"
#include "core/internal.h"
#include "cone.h"
#include "block_sets.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void clc_pchol_free(pchol *c)
{
    if (!c->dense) free(c->li); /* a dense pattern lies in pd's room */
    free(c->pd);
    free(c->lx);
    free(c->re);
    memset(c, 0, sizeof *c);
}

/* Whether rows r0..r1-1 all reach the dofs of the row before r0. */
static int repeats(const int *same, int r0, int r1)
{
    while (r0 < r1 && same[r0]) ++r0;
    return r0 == r1;
}

/* The group graph's rows as bit sets of nw 64-bit words a group: the
 * elimination below touches a row a word at a time. */
typedef unsigned long long gword;

static int pop(gword x)
{
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

static void set_bit(gword *row, int g) { row[g / 64] |= 1ULL << (g % 64); }

/* The groups that constraint blocks join (buf and mark: ng each,
 * scratch). A row with the dofs of the row before joins nothing new. */
static void group_graph(const clc_pproblem *p, const int *same, const int *gof, gword *adj, int nw, int *buf,
                        int *mark)
{
    for (int g = 0; g < p->ng; ++g) mark[g] = -1;
    for (int b = 0; b < p->nb; ++b) {
        int ns = 0;
        if (repeats(same, p->off[b], p->off[b + 1])) continue;
        for (int i = p->off[b]; i < p->off[b + 1]; ++i)
            for (int e = p->jp[i], e1 = i > p->off[b] && same[i] ? e : p->jp[i + 1]; e < e1; ++e) {
                int g = gof[p->jc[e]];
                if (mark[g] == b) continue;
                mark[g] = b;
                buf[ns++] = g;
            }
        for (int x = 0; x < ns; ++x)
            for (int y = 0; y < ns; ++y)
                if (x != y) set_bit(adj + (size_t)buf[x] * nw, buf[y]);
    }
}

/* Minimum-degree elimination of the group graph (ties: the lower group);
 * order[P] the group eliminated P-th. A group's degree counts the groups
 * not yet eliminated (alive: nw words) it joins; an eliminated group's
 * neighbours become a clique (nbr: ng ints, scratch). */
static void min_degree(int ng, int nw, gword *adj, int *order, int *deg, int *nbr, gword *alive)
{
    for (int k = 0; k < nw; ++k) alive[k] = 0;
    for (int g = 0; g < ng; ++g) {
        set_bit(alive, g);
        deg[g] = 0;
        for (int k = 0; k < nw; ++k) deg[g] += pop(adj[(size_t)g * nw + k]);
    }
    for (int P = 0; P < ng; ++P) {
        int best = 0, nn = 0;
        const gword *row;
        for (int g = 1; g < ng; ++g)
            if (deg[g] < deg[best]) best = g;
        order[P] = best;
        deg[best] = INT_MAX;
        alive[best / 64] &= ~(1ULL << (best % 64));
        row = adj + (size_t)best * nw;
        for (int k = 0; k < nw; ++k)
            for (gword x = row[k] & alive[k]; x; x &= x - 1) nbr[nn++] = 64 * k + pop((x & -x) - 1);
        for (int x = 0; x < nn; ++x) {
            gword *ra = adj + (size_t)nbr[x] * nw;
            deg[nbr[x]] = 0;
            for (int k = 0; k < nw; ++k) {
                ra[k] |= row[k] & alive[k];
                deg[nbr[x]] += pop(ra[k] & alive[k]);
            }
            ra[nbr[x] / 64] &= ~(1ULL << (nbr[x] % 64));
            deg[nbr[x]] -= 1; /* itself, joined by the clique above */
        }
    }
}

/* c->pd and c->orig: the trees in minimum-degree order, each tree's dofs
 * last first (scratch: 3 ng ints). */
static clcone_status order_dofs(pchol *c, const clc_pproblem *p, const int *same, int *scratch, clcone_error *err)
{
    int ng = p->ng, nw = (ng + 63) / 64, *gof = c->orig, *order = scratch, *deg = scratch + ng;
    gword *adj = NULL;
    order[0] = 0; /* one tree: no order to find */
    if (ng > 1) {
        if (!(adj = clc_calloc((size_t)(ng + 1) * nw, sizeof *adj, err, "the tree graph"))) return CLCONE_ENOMEM;
        for (int g = 0; g < ng; ++g)
            for (int i = p->goff[g]; i < p->goff[g + 1]; ++i) gof[i] = g;
        group_graph(p, same, gof, adj, nw, order, deg);
        min_degree(ng, nw, adj, order, deg, scratch + 2 * ng, adj + (size_t)ng * nw);
        free(adj);
    }
    for (int P = 0, a = 0; P < ng; ++P)
        for (int i = p->goff[order[P] + 1] - 1; i >= p->goff[order[P]]; --i) c->pd[i] = a++;
    for (int i = 0; i < p->nv; ++i) c->orig[c->pd[i]] = i;
    return CLCONE_OK;
}

/* M's nonzeros on and below the diagonal by positions (c->mp, mi): M is
 * zero between trees, and a tree's M between dofs on different branches.
 * The trees in order[] (their positions' order); a tree's dofs last
 * first, so column position pd[k] holds the rows pd[i], i <= k, of M's
 * row k, ascending for i from k down (the pattern's sort then has
 * little to move). */
static void m_pattern(pchol *c, const clc_pproblem *p, const int *order)
{
    int cnt = 0;
    for (int P = 0; P < p->ng; ++P) {
        int g = order[P], g0 = p->goff[g], n = p->goff[g + 1] - g0;
        const double *B = p->M + p->moff[g];
        for (int k = n - 1; k >= 0; --k) {
            c->mp[c->pd[g0 + k]] = cnt;
            for (int i = k; i >= 0; --i)
                if (B[(size_t)k * n + i] != 0) c->mi[cnt++] = c->pd[g0 + i];
        }
    }
    c->mp[c->nv] = cnt;
}

/* H's pattern below the diagonal, a list a column: column lo's rows at
 * row[k] for k = head[lo], next[k], ... until -1. */
typedef struct hlist {
    int *head, *next, *row, n;
} hlist;

static void h_add(hlist *h, int lo, int hi)
{
    h->row[h->n] = hi;
    h->next[h->n] = h->head[lo];
    h->head[lo] = h->n++;
}

/* H's pattern but M's (c->mp, mi): as a clique the dofs a cone's rows
 * reach together or another block's row alone, each clique but its least
 * position in the least's column (the elimination tree carries the rest
 * up: every other member is an ancestor of the least). buf, mark: nv
 * each, scratch; mark < 0 on entry. */
static void h_pattern(const clc_pproblem *p, const int *same, const int *pd, hlist *h, int *buf, int *mark)
{
    for (int b = 0, stamp = 0; b < p->nb; ++b)
        for (int r = p->off[b], r2; r < p->off[b + 1]; r = r2) {
            int ns = 0, lo = INT_MAX;
            r2 = p->kind[b] == BLK_CONE ? p->off[b + 1] : r + 1;
            /* the dofs of the rows before (a pyramid's next edge): within the clique already added */
            if (repeats(same, r, r2)) continue;
            ++stamp;
            for (int s = r; s < r2; ++s) /* a cone's row of the row before's dofs adds none */
                for (int e = p->jp[s], e1 = s > r && same[s] ? e : p->jp[s + 1]; e < e1; ++e)
                    if (mark[p->jc[e]] != stamp) {
                        mark[p->jc[e]] = stamp;
                        buf[ns] = pd[p->jc[e]];
                        if (buf[ns] < lo) lo = buf[ns];
                        ++ns;
                    }
            for (int x = 0; x < ns; ++x)
                if (buf[x] != lo) h_add(h, lo, buf[x]);
        }
}

static int int_less(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Ascending; most columns are short, where insertion beats qsort's calls. */
static void sort_rows(int *v, int n)
{
    if (n > 32) {
        qsort(v, (size_t)n, sizeof *v, int_less);
        return;
    }
    for (int i = 1; i < n; ++i) {
        int x = v[i], k = i;
        for (; k > 0 && v[k - 1] > x; --k) v[k] = v[k - 1];
        v[k] = x;
    }
}

/* Whether column j's rows are its one child's past j alone: the child
 * k its only one, no H rows of its own and its M rows (ascending, as
 * m_pattern lists them) among k's: a tree's chain of dofs, whose
 * columns then need no marks or sort. */
static int chain_column(const pchol *c, const hlist *h, const int *head, const int *next, int j)
{
    int k = head[j], e;
    if (k < 0 || next[k] >= 0 || h->head[j] >= 0) return 0;
    e = c->lp[k] + 2; /* k's diagonal, then j (its parent), then the rest */
    for (int q = c->mp[j]; q < c->mp[j + 1]; ++q) {
        if (c->mi[q] == j) continue;
        while (e < c->lp[k + 1] && c->li[e] < c->mi[q]) ++e;
        if (e == c->lp[k + 1] || c->li[e] != c->mi[q]) return 0;
    }
    return 1;
}

/* L's pattern from H's: column j holds j, M's and H's rows and its children's in
 * the elimination tree, but their own (head, next, mark: nv each,
 * scratch). */
static clcone_status symbolic(pchol *c, const hlist *h, int *head, int *next, int *mark, clcone_error *err)
{
    int nv = c->nv;
    size_t cap = (size_t)h->n + (size_t)c->mp[nv] + (size_t)nv + 1, len = 0;
    for (int j = 0; j < nv; ++j) head[j] = mark[j] = -1;
    if (!(c->li = clc_malloc(cap, sizeof *c->li, err, "the factor's pattern"))) return CLCONE_ENOMEM;
    for (int j = 0; j < nv; ++j) {
        size_t start = len;
        if (len + (size_t)nv > cap) {
            int *li = realloc(c->li, sizeof *li * (cap = 2 * cap + (size_t)nv));
            if (!li) return clc_fail(err, CLCONE_ENOMEM, "out of memory for the factor's pattern (%zu entries)", cap);
            c->li = li;
        }
        c->li[len++] = j;
        if (chain_column(c, h, head, next, j)) {
            int k = head[j], n = c->lp[k + 1] - c->lp[k] - 2;
            memcpy(c->li + len, c->li + c->lp[k] + 2, sizeof *c->li * (size_t)n);
            len += (size_t)n;
        } else {
            mark[j] = j;
            for (int q = c->mp[j]; q < c->mp[j + 1]; ++q)
                if (mark[c->mi[q]] != j) {
                    mark[c->mi[q]] = j;
                    c->li[len++] = c->mi[q];
                }
            for (int k = h->head[j]; k >= 0; k = h->next[k])
                if (mark[h->row[k]] != j) {
                    mark[h->row[k]] = j;
                    c->li[len++] = h->row[k];
                }
            for (int k = head[j]; k >= 0; k = next[k])
                for (int q = c->lp[k] + 1; q < c->lp[k + 1]; ++q)
                    if (mark[c->li[q]] != j) {
                        mark[c->li[q]] = j;
                        c->li[len++] = c->li[q];
                    }
            sort_rows(c->li + start + 1, (int)(len - start - 1));
        }
        if ((size_t)INT_MAX < len)
            return clc_fail(err, CLCONE_ENOTSUP, "the Hessian's factor has over %d entries", INT_MAX);
        c->lp[j + 1] = (int)len;
        if (len > start + 1) { /* the parent: the first row below the diagonal */
            next[j] = head[c->li[start + 1]];
            head[c->li[start + 1]] = j;
        }
    }
    return CLCONE_OK;
}

/* Each row's entries left of the diagonal (c->rp, re, rk). */
static clcone_status rows_of(pchol *c, clcone_error *err)
{
    int nv = c->nv, off = c->lp[nv] - nv;
    if (!(c->re = clc_malloc(2 * (size_t)off + 1, sizeof *c->re, err, "the factor's rows"))) return CLCONE_ENOMEM;
    c->rk = c->re + off;
    for (int k = 0; k < nv; ++k)
        for (int q = c->lp[k] + 1; q < c->lp[k + 1]; ++q) ++c->rp[c->li[q] + 1];
    for (int j = 0; j < nv; ++j) c->rp[j + 1] += c->rp[j];
    for (int k = 0; k < nv; ++k)
        for (int q = c->lp[k] + 1; q < c->lp[k + 1]; ++q) {
            int t = c->rp[c->li[q]]++;
            c->re[t] = q;
            c->rk[t] = k;
        }
    for (int j = nv; j > 0; --j) c->rp[j] = c->rp[j - 1];
    c->rp[0] = 0;
    return CLCONE_OK;
}

int clc_pchol_dense_pays(const clc_pproblem *p) { return p->nv <= PCHOL_DENSE_MAX; }

/* The whole lower triangle in the dofs' own order: column j's rows j..nv-1
 * at lp[j] on, the diagonal first; li in room the caller sized. */
static void dense_pattern(pchol *c, int *room)
{
    int nv = c->nv;
    c->li = room;
    for (int j = 0; j < nv; ++j) {
        c->pd[j] = c->orig[j] = j;
        c->lp[j + 1] = c->lp[j] + nv - j;
        for (int i = j; i < nv; ++i) c->li[c->lp[j] + i - j] = i;
    }
}

/* The pattern by the elimination tree (c->pd and the lists laid out). */
static clcone_status sparse_pattern(pchol *c, const clc_pproblem *p, const int *same, int *at, clcone_error *err)
{
    int nv = c->nv;
    size_t cap = (size_t)p->jp[p->m] + 1;
    hlist h = {NULL, NULL, NULL, 0};
    clcone_status s;
    if ((s = order_dofs(c, p, same, at, err))) return s;
    m_pattern(c, p, at); /* order_dofs left the trees' order there */
    if (!(h.next = clc_malloc(2 * cap, sizeof *h.next, err, "the Hessian's pattern"))) return CLCONE_ENOMEM;
    h.row = h.next + cap;
    h.head = at;
    for (int i = 0; i < nv; ++i) at[i] = at[2 * nv + i] = -1;
    h_pattern(p, same, c->pd, &h, at + nv, at + 2 * nv);
    if (!(s = symbolic(c, &h, at + nv, at + 3 * nv, at + 2 * nv, err))) s = rows_of(c, err);
    free(h.next);
    return s;
}

clcone_status clc_pchol_init(pchol *c, const clc_pproblem *p, int dense, const int *same, clcone_error *err)
{
    int nv = p->nv;
    size_t nm = 0, order = 9 * (size_t)nv + 2 * (size_t)p->ng + 8, room;
    clcone_status s = CLCONE_ENOMEM;
    memset(c, 0, sizeof *c);
    c->nv = nv;
    c->dense = dense;
    for (int g = 0; g < p->ng && !dense; ++g)
        nm += (size_t)(p->goff[g + 1] - p->goff[g]) * (size_t)(p->goff[g + 1] - p->goff[g] + 1) / 2;
    /* pd, orig, lp, rp, mp, mi, then scratch: H's heads, a buffer or the
     * tree's heads, marks, the tree's links; a dense pattern after them
     * (one allocation the fewer a solve: the humanoid's solve is a few
     * microseconds) */
    room = order + (dense ? (size_t)nv * (size_t)(nv + 1) / 2 : nm);
    c->pd = clc_calloc(room, sizeof *c->pd, err, "the factor's order");
    if (!c->pd) goto out;
    c->orig = c->pd + nv;
    c->lp = c->orig + nv;
    c->rp = c->lp + nv + 1;
    c->mp = c->rp + nv + 1;
    c->mi = c->mp + nv + 1;
    if (dense) dense_pattern(c, c->pd + order);
    else if ((s = sparse_pattern(c, p, same, c->mi + nm, err))) goto out;
    s = CLCONE_ENOMEM;
    /* L's entries are written by each factor before they are read: only
     * the scatter starts zeroed */
    c->lx = clc_malloc((size_t)c->lp[nv] + 2 * (size_t)nv + 1, sizeof *c->lx, err, "the factor");
    if (!c->lx) goto out;
    c->w = c->lx + c->lp[nv];
    c->dinv = c->w + nv;
    memset(c->w, 0, sizeof *c->w * (size_t)nv);
    for (int j = 0; j < nv; ++j) {
        double len = c->lp[j + 1] - c->lp[j];
        c->cost += 0.5 * len * (len + 1);
    }
    s = CLCONE_OK;
out:
    if (s) clc_pchol_free(c);
    return s;
}

/* Column j's pivot d (w[j] taken): L's diagonal, or CLCONE_EINVAL. */
static clcone_status pivot(pchol *c, int j, double d, clcone_error *err)
{
    if (!(d > 0) || !isfinite(d))
        return clc_fail(err, CLCONE_EINVAL, "MuJoCo's Newton: the Hessian M + J'DJ is not positive definite "
                                               "(pivot %g at dof %d of %d)",
                           d, c->orig[j], c->nv);
    c->lx[c->lp[j]] = sqrt(d);
    c->dinv[j] = 1 / c->lx[c->lp[j]];
    return CLCONE_OK;
}

/* A column below its pivot, times the pivot's reciprocal (as MuJoCo's
 * factor): a division an entry cost the humanoid's whole solve 6%. */
static void scale_column(double *x, int n, double inv)
{
    for (int i = 0; i < n; ++i) x[i] *= inv;
}

/* Left-looking on the whole triangle, in place: each earlier column's
 * rows from j on are contiguous, taken two at a time (half the passes
 * over column j). H's columns from col where given. */
static clcone_status factor_dense(pchol *c, clc_pchol_column col, void *arg, clcone_error *err)
{
    int nv = c->nv;
    double *lx = c->lx;
    clcone_status s;
    for (int j = 0; j < nv && col; ++j) {
        memset(lx + c->lp[j], 0, sizeof *lx * (size_t)(nv - j));
        col(arg, j, clc_pchol_dense_col(c, j));
    }
    for (int j = 0; j < nv; ++j) {
        double *Lj = lx + c->lp[j];
        int len = nv - j, k = 0;
        for (; k + 1 < j; k += 2) {
            const double *L0 = lx + c->lp[k] + (j - k), *L1 = lx + c->lp[k + 1] + (j - k - 1);
            double l0 = L0[0], l1 = L1[0];
            for (int i = 0; i < len; ++i) Lj[i] -= l0 * L0[i] + l1 * L1[i];
        }
        for (; k < j; ++k) {
            const double *Lk = lx + c->lp[k] + (j - k);
            double l = Lk[0];
            for (int i = 0; i < len; ++i) Lj[i] -= l * Lk[i];
        }
        if ((s = pivot(c, j, Lj[0], err))) return s;
        scale_column(Lj + 1, len - 1, c->dinv[j]);
    }
    return CLCONE_OK;
}

clcone_status clc_pchol_factor(pchol *c, clc_pchol_column col, void *arg, clcone_error *err)
{
    double *w = c->w, *lx = c->lx;
    const int *li = c->li;
    clcone_status s;
    if (c->dense) return factor_dense(c, col, arg, err);
    for (int j = 0; j < c->nv; ++j) {
        int q0 = c->lp[j] + 1, q1 = c->lp[j + 1];
        double d;
        col(arg, j, w);
        for (int t = c->rp[j]; t < c->rp[j + 1]; ++t) {
            int e = c->re[t], k = c->rk[t], n = c->lp[k + 1] - e, e2;
            double l = lx[e], l2;
            /* the next column k + 1 the parent of k with rows from j on
             * as many (then the same: a child's below itself are its
             * parent's): both in one pass, as a tree's chain of dofs has */
            if (t + 1 < c->rp[j + 1] && c->rk[t + 1] == k + 1 && li[c->lp[k] + 1] == k + 1 &&
                c->lp[k + 2] - (e2 = c->re[t + 1]) == n) {
                l2 = lx[e2];
                for (int q = 0; q < n; ++q) w[li[e + q]] -= l * lx[e + q] + l2 * lx[e2 + q];
                ++t;
                continue;
            }
            for (int q = e; q < e + n; ++q) w[li[q]] -= l * lx[q];
        }
        d = w[j];
        w[j] = 0;
        for (int q = q0; q < q1; ++q) {
            lx[q] = w[li[q]];
            w[li[q]] = 0;
        }
        if ((s = pivot(c, j, d, err))) return s;
        scale_column(lx + q0, q1 - q0, c->dinv[j]);
    }
    return CLCONE_OK;
}

/* The solve on the whole triangle: contiguous columns, no orders. */
static void solve_dense(const pchol *c, const double *b, double *x)
{
    int nv = c->nv;
    const double *dinv = c->dinv;
    memcpy(x, b, sizeof *x * (size_t)nv);
    for (int j = 0; j < nv; ++j) { /* L y = b */
        const double *L = c->lx + c->lp[j] - j;
        double y = x[j] *= dinv[j];
        for (int i = j + 1; i < nv; ++i) x[i] -= L[i] * y;
    }
    for (int j = nv - 1; j >= 0; --j) { /* L' x = y */
        const double *L = c->lx + c->lp[j] - j;
        x[j] = (x[j] - clc_pchol_dot(L + j + 1, x + j + 1, nv - j - 1)) * dinv[j];
    }
}

void clc_pchol_solve(const pchol *c, const double *b, double *x, double *tmp)
{
    const int *lp = c->lp, *li = c->li;
    const double *lx = c->lx, *dinv = c->dinv;
    if (c->dense) {
        solve_dense(c, b, x);
        return;
    }
    for (int j = 0; j < c->nv; ++j) tmp[j] = b[c->orig[j]];
    for (int j = 0; j < c->nv; ++j) { /* L y = b */
        double y = tmp[j] *= dinv[j];
        for (int q = lp[j] + 1; q < lp[j + 1]; ++q) tmp[li[q]] -= lx[q] * y;
    }
    for (int j = c->nv - 1; j >= 0; --j) /* L' x = y */
        tmp[j] = (tmp[j] - clc_pchol_dot_at(lx + lp[j] + 1, li + lp[j] + 1, tmp, lp[j + 1] - lp[j] - 1)) * dinv[j];
    for (int j = 0; j < c->nv; ++j) x[c->orig[j]] = tmp[j];
}

double clc_pchol_path_cost(const pchol *c, int j)
{
    double cost = 0;
    for (; j >= 0; j = c->lp[j + 1] > c->lp[j] + 1 ? c->li[c->lp[j] + 1] : -1) cost += 2.0 * (c->lp[j + 1] - c->lp[j]);
    return cost;
}

int clc_pchol_update(pchol *c, int sigma, const int *vi, const double *vx, int n, double scale)
{
    double *w = c->w, *lx = c->lx, beta = 1;
    const int *li = c->li;
    int j = n ? vi[0] : -1, ok = 1;
    for (int k = 0; k < n; ++k) w[vi[k]] = scale * vx[k];
    /* down the path from the least position to the root (each column's
     * rows are its ancestors there: w is zero again when it ends) */
    for (; j >= 0; j = c->lp[j + 1] > c->lp[j] + 1 ? li[c->lp[j] + 1] : -1) {
        int q = c->lp[j];
        double alpha = w[j] / lx[q], beta2 = beta * beta + sigma * alpha * alpha, delta, gamma;
        w[j] = 0;
        if (!ok || !(beta2 > 0)) { /* not positive definite: finish clearing w */
            ok = 0;
            for (++q; q < c->lp[j + 1]; ++q) w[li[q]] = 0;
            continue;
        }
        beta2 = sqrt(beta2);
        delta = sigma > 0 ? beta / beta2 : beta2 / beta;
        gamma = sigma * alpha / (beta2 * beta);
        lx[q] = delta * lx[q] + (sigma > 0 ? gamma * alpha * lx[q] : 0);
        c->dinv[j] = 1 / lx[q];
        beta = beta2;
        for (++q; q < c->lp[j + 1]; ++q) {
            double w1 = w[li[q]], w2 = w1 - alpha * lx[q];
            w[li[q]] = w2;
            lx[q] = delta * lx[q] + gamma * (sigma > 0 ? w1 : w2);
        }
    }
    return ok;
}
