/* Contact detection for worlds: a spatial hash of bounding spheres for
 * body pairs, then exact tests per pair of shapes. Contacts come out in a
 * fixed order (per body i: planes, then bodies j < i by increasing j),
 * with i the a side, so that the same positions always give the same
 * problem, and each carries a key (pair + feature) that stays the same
 * while the contact persists, for warm starts. */
#include "core/internal.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Clipping keeps points this far outside a face (relative to its size),
 * so that edges that coincide exactly (equal boxes stacked) keep their
 * corners whatever the rounding. */
#define CLIP_TOL 1e-9
/* Face axes within this of the best separation count as tied; the lower
 * body's face then wins, so a stack's reference faces are stable. */
#define AXIS_TIE 1e-9
#define FEATURES 4096ULL
/* Clipped points closer than this (relative to the face) are one. */
#define MERGE_TOL 1e-6

typedef struct cbuf {
    clcone_contact *c;
    unsigned long long *key;
    int n, cap;
    double mu;
    unsigned long long nother;  /* bodies + planes + 1: the key's radix */
    const int *gid;             /* the bodies' ids in the keys (NULL: their indices) */
    int want_order;
    unsigned long long *order;  /* per contact (want_order): its place in a detection of all bodies */
    unsigned long long nplanes;
    unsigned long long block;   /* (a, other) of the last contact, and how many it has had */
    int seq;
} cbuf;

static clcone_status push(cbuf *B, int a, int b, int plane, int feature, const double p[3], const double n[3],
                          double gap, clcone_error *err)
{
    clcone_contact *c;
    unsigned long long other;
    if (B->n == B->cap) {
        int ncap = B->cap ? 2 * B->cap : 1024;
        clcone_contact *nc;
        unsigned long long *nk;
        if (B->cap > CLCONE_SCENE_MAX_CONTACTS / 2)
            return clc_fail(err, CLCONE_EINVAL, "more than %d contacts detected", CLCONE_SCENE_MAX_CONTACTS);
        nc = realloc(B->c, (size_t)ncap * sizeof *nc);
        if (nc) B->c = nc;
        nk = nc ? realloc(B->key, (size_t)ncap * sizeof *nk) : NULL;
        if (nk) B->key = nk;
        if (nk && B->want_order) {
            nk = realloc(B->order, (size_t)ncap * sizeof *nk);
            if (nk) B->order = nk;
        }
        if (!nk) return clc_fail(err, CLCONE_ENOMEM, "cannot grow the contact list to %d", ncap);
        B->cap = ncap;
    }
    c = &B->c[B->n];
    c->a = a;
    c->b = b;
    memcpy(c->point, p, sizeof c->point);
    memcpy(c->normal, n, sizeof c->normal);
    c->mu = B->mu;
    c->gap = gap;
    {
        unsigned long long ia = (unsigned long long)(B->gid ? B->gid[a] : a),
                           ib = b >= 0 ? (unsigned long long)(B->gid ? B->gid[b] : b) : 0;
        other = b >= 0 ? ib + 1 : B->nother - 1 - (unsigned long long)plane;
        B->key[B->n] = (ia * B->nother + other) * FEATURES + (unsigned long long)feature;
        if (B->want_order) {
            /* per body a, planes first, then bodies by id, each pair's contacts as they come */
            unsigned long long blk = ia * B->nother + (b >= 0 ? B->nplanes + ib : (unsigned long long)plane);
            B->seq = blk == B->block && B->n > 0 ? B->seq + 1 : 0;
            B->block = blk;
            B->order[B->n] = blk * FEATURES + (unsigned long long)B->seq;
        }
    }
    B->n++;
    return CLCONE_OK;
}

static void mat_col(const double R[9], int k, double out[3])
{
    out[0] = R[k];
    out[1] = R[3 + k];
    out[2] = R[6 + k];
}

/* ---- static planes ---- */

static clcone_status vs_planes(const clcone_world *w, int i, double margin, cbuf *B, clcone_error *err)
{
    const clcone_body *b = &w->s.bodies[i];
    const clcone_shape *sh = &w->shapes[i];
    clcone_status st;
    if (clc_body_is_static(b)) return CLCONE_OK;
    for (int k = 0; k < w->nplanes; ++k) {
        const clcone_plane *pl = &w->planes[k];
        if (sh->kind == CLCONE_SHAPE_SPHERE) {
            double d = clc_dot3(pl->normal, b->x) - pl->offset - sh->size[0], p[3];
            if (d > margin) continue;
            for (int m = 0; m < 3; ++m) p[m] = b->x[m] - pl->normal[m] * (sh->size[0] + 0.5 * d);
            if ((st = push(B, i, -1, k, 0, p, pl->normal, d, err))) return st;
        } else {
            for (int q = 0; q < 8; ++q) {
                double c[3], d, p[3];
                clc_box_corner(b, sh, q, c);
                d = clc_dot3(pl->normal, c) - pl->offset;
                if (d > margin) continue;
                for (int m = 0; m < 3; ++m) p[m] = c[m] - 0.5 * d * pl->normal[m];
                if ((st = push(B, i, -1, k, q, p, pl->normal, d, err))) return st;
            }
        }
    }
    return CLCONE_OK;
}

/* ---- pairs; i > j, i is the a side, normals point from j to i ---- */

static clcone_status sphere_sphere(const clcone_world *w, int i, int j, double margin, cbuf *B,
                                   clcone_error *err)
{
    const double *xi = w->s.bodies[i].x, *xj = w->s.bodies[j].x;
    double ri = w->shapes[i].size[0], rj = w->shapes[j].size[0], d[3], len, gap, n[3], p[3];
    for (int k = 0; k < 3; ++k) d[k] = xi[k] - xj[k];
    len = sqrt(clc_dot3(d, d));
    gap = len - ri - rj;
    if (gap > margin || len == 0.0) return CLCONE_OK;
    for (int k = 0; k < 3; ++k) {
        n[k] = d[k] / len;
        p[k] = xj[k] + n[k] * (rj + 0.5 * gap);
    }
    return push(B, i, j, 0, 0, p, n, gap, err);
}

/* Sphere s against box x; `flip` when the box is the a side. */
static clcone_status sphere_box(const clcone_world *w, int s, int x, int a, int b, double margin, cbuf *B,
                                clcone_error *err)
{
    const clcone_body *bs = &w->s.bodies[s], *bx = &w->s.bodies[x];
    const double *h = w->shapes[x].size;
    double r = w->shapes[s].size[0], R[9], l[3], c[3], d[3], n[3], p[3], len, gap;
    int inside = 1;
    clc_quat_to_mat(w->shapes[x].quat, R);
    for (int k = 0; k < 3; ++k) {
        double dk = bs->x[0] - bx->x[0], dy = bs->x[1] - bx->x[1], dz = bs->x[2] - bx->x[2];
        l[k] = R[k] * dk + R[3 + k] * dy + R[6 + k] * dz;
    }
    for (int k = 0; k < 3; ++k) {
        c[k] = fmin(fmax(l[k], -h[k]), h[k]);
        inside &= c[k] == l[k];
    }
    if (inside) {
        /* centre inside the box: out through the nearest face */
        int best = 0;
        for (int k = 1; k < 3; ++k)
            if (h[k] - fabs(l[k]) < h[best] - fabs(l[best])) best = k;
        memset(d, 0, sizeof d);
        d[best] = l[best] >= 0 ? 1.0 : -1.0;
        c[best] = d[best] * h[best];
        gap = -(h[best] - fabs(l[best])) - r;
    } else {
        for (int k = 0; k < 3; ++k) d[k] = l[k] - c[k];
        len = sqrt(clc_dot3(d, d));
        gap = len - r;
        for (int k = 0; k < 3; ++k) d[k] /= len;
    }
    if (gap > margin) return CLCONE_OK;
    /* world normal from the box towards the sphere, point mid-gap */
    for (int k = 0; k < 3; ++k) {
        n[k] = R[3 * k] * d[0] + R[3 * k + 1] * d[1] + R[3 * k + 2] * d[2];
        p[k] = bx->x[k] + R[3 * k] * c[0] + R[3 * k + 1] * c[1] + R[3 * k + 2] * c[2] + 0.5 * gap * n[k];
    }
    if (a == x)
        for (int k = 0; k < 3; ++k) n[k] = -n[k];
    return push(B, a, b, 0, 0, p, n, gap, err);
}

/* Half-length of a box's shadow on unit axis L. */
static double box_radius(const double R[9], const double h[3], const double L[3])
{
    double r = 0, col[3];
    for (int k = 0; k < 3; ++k) {
        mat_col(R, k, col);
        r += h[k] * fabs(clc_dot3(col, L));
    }
    return r;
}

/* Clips polygon (np points) to dot(p - c, u) <= lim; returns the count. */
static int clip(double (*poly)[3], int np, const double c[3], const double u[3], double lim, double (*out)[3])
{
    int m = 0;
    for (int k = 0; k < np; ++k) {
        const double *P = poly[k], *Q = poly[(k + 1) % np];
        double dp = (P[0] - c[0]) * u[0] + (P[1] - c[1]) * u[1] + (P[2] - c[2]) * u[2] - lim;
        double dq = (Q[0] - c[0]) * u[0] + (Q[1] - c[1]) * u[1] + (Q[2] - c[2]) * u[2] - lim;
        if (dp <= 0) memcpy(out[m++], P, sizeof out[0]);
        if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
            double t = dp / (dp - dq);
            for (int i = 0; i < 3; ++i) out[m][i] = P[i] + t * (Q[i] - P[i]);
            ++m;
        }
    }
    return m;
}

/* Removes vertices within tol of the line through their neighbours: a
 * side that nearly coincides with a clipping plane (equal boxes, turned by
 * rounding) is cut into collinear pieces, and coincident points, which add
 * contacts but no support. */
static int drop_collinear(double (*poly)[3], int np, double tol)
{
    int changed = 1;
    while (changed && np > 2) {
        changed = 0;
        for (int q = 0; q < np && np > 2; ++q) {
            const double *a = poly[(q + np - 1) % np], *b = poly[(q + 1) % np], *p = poly[q];
            double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
            double x[3], l2 = clc_dot3(ab, ab), d2;
            clc_cross3(ab, ap, x);
            d2 = l2 > 0 ? clc_dot3(x, x) / l2 : clc_dot3(ap, ap);
            if (d2 > tol * tol) continue;
            for (int k = q; k + 1 < np; ++k) memcpy(poly[k], poly[k + 1], sizeof poly[k]);
            --np;
            changed = 1;
        }
    }
    return np;
}

/* Face-face contact of boxes i > j: the face axis of least penetration
 * picks the reference face; the incident box's most opposed face is
 * clipped to it, and its clipped points that are within margin become
 * contacts. Crossed edges (edge-edge contacts) are not handled. */
static clcone_status box_box(const clcone_world *w, int i, int j, double margin, cbuf *B, clcone_error *err)
{
    const clcone_body *bb[2] = {&w->s.bodies[j], &w->s.bodies[i]};
    const clcone_shape *ss[2] = {&w->shapes[j], &w->shapes[i]};
    double R[2][9], d[3], best = -INFINITY, nref[3], cref[3], u[3], v[3], hu, hv;
    double poly[8][3], tmp[8][3], colk[3];
    int ref = 0, axis = 0, np, inc, kinc = 0;
    double dmax = 0, scale;
    clcone_status st;
    clc_quat_to_mat(ss[0]->quat, R[0]);
    clc_quat_to_mat(ss[1]->quat, R[1]);
    for (int k = 0; k < 3; ++k) d[k] = bb[1]->x[k] - bb[0]->x[k];
    /* body j (the lower index, side 0) first, so it wins ties */
    for (int sde = 0; sde < 2; ++sde)
        for (int k = 0; k < 3; ++k) {
            double L[3], s;
            mat_col(R[sde], k, L);
            s = fabs(clc_dot3(L, d)) - box_radius(R[0], ss[0]->size, L) - box_radius(R[1], ss[1]->size, L);
            if (s > best + AXIS_TIE) {
                best = s;
                ref = sde;
                axis = k;
            }
        }
    if (best > margin) return CLCONE_OK;
    inc = 1 - ref;
    mat_col(R[ref], axis, nref);
    /* reference normal points from the reference box to the incident one */
    if (clc_dot3(nref, d) * (ref == 0 ? 1 : -1) < 0)
        for (int k = 0; k < 3; ++k) nref[k] = -nref[k];
    for (int k = 0; k < 3; ++k) cref[k] = bb[ref]->x[k] + nref[k] * ss[ref]->size[axis];
    mat_col(R[ref], (axis + 1) % 3, u);
    mat_col(R[ref], (axis + 2) % 3, v);
    hu = ss[ref]->size[(axis + 1) % 3];
    hv = ss[ref]->size[(axis + 2) % 3];
    /* incident face: the face of the incident box most opposed to nref */
    for (int k = 0; k < 3; ++k) {
        double dk;
        mat_col(R[inc], k, colk);
        dk = fabs(clc_dot3(colk, nref));
        if (dk > dmax) {
            dmax = dk;
            kinc = k;
        }
    }
    {
        double fn[3], sg, a1[3], a2[3], h1, h2, fc[3];
        mat_col(R[inc], kinc, fn);
        sg = clc_dot3(fn, nref) > 0 ? -1.0 : 1.0;
        mat_col(R[inc], (kinc + 1) % 3, a1);
        mat_col(R[inc], (kinc + 2) % 3, a2);
        h1 = ss[inc]->size[(kinc + 1) % 3];
        h2 = ss[inc]->size[(kinc + 2) % 3];
        for (int k = 0; k < 3; ++k) fc[k] = bb[inc]->x[k] + sg * fn[k] * ss[inc]->size[kinc];
        for (int q = 0; q < 4; ++q) {
            /* corners in cyclic order */
            double s1 = (q == 0 || q == 3) ? -1 : 1, s2 = q < 2 ? -1 : 1;
            for (int k = 0; k < 3; ++k) poly[q][k] = fc[k] + s1 * h1 * a1[k] + s2 * h2 * a2[k];
        }
    }
    scale = CLIP_TOL * fmax(hu, hv);
    np = 4;
    {
        double mu_[3], mv[3];
        for (int k = 0; k < 3; ++k) {
            mu_[k] = -u[k];
            mv[k] = -v[k];
        }
        np = clip(poly, np, cref, u, hu + scale, tmp);
        np = clip(tmp, np, cref, mu_, hu + scale, poly);
        np = clip(poly, np, cref, v, hv + scale, tmp);
        np = clip(tmp, np, cref, mv, hv + scale, poly);
    }
    np = drop_collinear(poly, np, MERGE_TOL * fmax(hu, hv));
    for (int q = 0; q < np; ++q) {
        double depth = 0, p[3], n[3];
        for (int k = 0; k < 3; ++k) depth += (poly[q][k] - cref[k]) * nref[k];
        if (depth > margin) continue;
        for (int k = 0; k < 3; ++k) {
            p[k] = poly[q][k] - 0.5 * depth * nref[k];
            /* side 1 is i, the a side: the normal points from j to i */
            n[k] = ref == 0 ? nref[k] : -nref[k];
        }
        if ((st = push(B, i, j, 0, (ref * 3 + axis) * 16 + q, p, n, depth, err))) return st;
    }
    return CLCONE_OK;
}

static clcone_status pair(const clcone_world *w, int i, int j, double margin, cbuf *B, clcone_error *err)
{
    clcone_shape_kind ki = w->shapes[i].kind, kj = w->shapes[j].kind;
    if (clc_body_is_static(&w->s.bodies[i]) && clc_body_is_static(&w->s.bodies[j])) return CLCONE_OK;
    if (ki == CLCONE_SHAPE_SPHERE && kj == CLCONE_SHAPE_SPHERE) return sphere_sphere(w, i, j, margin, B, err);
    if (ki == CLCONE_SHAPE_BOX && kj == CLCONE_SHAPE_BOX) return box_box(w, i, j, margin, B, err);
    if (ki == CLCONE_SHAPE_SPHERE) return sphere_box(w, i, j, i, j, margin, B, err);
    return sphere_box(w, j, i, i, j, margin, B, err);
}

/* ---- broad phase: spatial hash of cells of edge 2 max bound + margin ---- */

#define CELL_CLAMP 1e15

static long long cell_of(double x, double h)
{
    double f = floor(x / h);
    return (long long)fmin(fmax(f, -CELL_CLAMP), CELL_CLAMP);
}

static size_t cell_hash(long long x, long long y, long long z, size_t mask)
{
    uint64_t k = (uint64_t)x * 73856093ULL ^ (uint64_t)y * 19349663ULL ^ (uint64_t)z * 83492791ULL;
    k ^= k >> 29;
    k *= 0xBF58476D1CE4E5B9ULL;
    k ^= k >> 32;
    return (size_t)k & mask;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void clcone_world_key_bodies(unsigned long long key, int nbodies, int nplanes, int *a, int *b)
{
    unsigned long long nother = (unsigned long long)nbodies + (unsigned long long)nplanes + 1, t = key / FEATURES,
                       other = t % nother;
    *a = (int)(t / nother);
    *b = other >= 1 && other <= (unsigned long long)nbodies ? (int)other - 1 : -1;
}

/* What detection reads, checked: a NaN position would hash to a cell and
 * make contacts of nothing. */
static clcone_status detect_inputs_check(const clcone_world *w, clcone_error *err)
{
    clcone_status st;
    for (int i = 0; i < w->s.nbodies; ++i) {
        const double *x = w->s.bodies[i].x;
        if ((st = clc_shape_validate(&w->shapes[i], i, err))) return st;
        if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
            return clc_fail(err, CLCONE_EINVAL, "body %d: position is not finite", i);
    }
    for (int i = 0; i < w->nplanes; ++i)
        if ((st = clc_plane_validate(&w->planes[i], i, err))) return st;
    return CLCONE_OK;
}

clcone_status clcone_world_detect(clcone_world *w, double margin, unsigned long long **keys, clcone_error *err)
{
    return clcone_world_detect_ids(w, margin, NULL, 0, keys, NULL, err);
}

clcone_status clcone_world_detect_ids(clcone_world *w, double margin, const int *gid, int nglobal,
                                      unsigned long long **keys, unsigned long long **corder, clcone_error *err)
{
    CLCONE_REQUIRE(err, w);
    int n = w->s.nbodies, *order = NULL, *cand = NULL, ncand = 0, capcand = 0;
    size_t T = 1, *start = NULL;
    long long *cell = NULL;
    double h = 0;
    cbuf B;
    clcone_status st = CLCONE_OK;

    if (keys) *keys = NULL;
    if (corder) *corder = NULL;
    if (!isfinite(margin) || margin < 0)
        return clc_fail(err, CLCONE_EINVAL, "contact margin %g must be finite and >= 0", margin);
    if ((st = detect_inputs_check(w, err))) return st;
    memset(&B, 0, sizeof B);
    B.mu = w->mu;
    B.gid = gid;
    B.want_order = corder != NULL;
    B.nplanes = (unsigned long long)w->nplanes;
    B.nother = (unsigned long long)(gid ? nglobal : n) + B.nplanes + 1;
    for (int i = 0; i < n; ++i) h = fmax(h, 2 * clcone_shape_bound(&w->shapes[i]));
    h += margin;
    if (!(h > 0)) h = 1;
    while (T < 2 * (size_t)n) T <<= 1;
    cell = clc_calloc(3 * (size_t)n + 1, sizeof *cell, err, "collision cells");
    start = cell ? clc_calloc(T + 1, sizeof *start, err, "collision hash") : NULL;
    order = start ? clc_calloc((size_t)n + 1, sizeof *order, err, "collision order") : NULL;
    if (!order) {
        st = CLCONE_ENOMEM;
        goto done;
    }
    /* counting sort of the bodies by hash bucket */
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) cell[3 * (size_t)i + k] = cell_of(w->s.bodies[i].x[k], h);
        start[cell_hash(cell[3 * (size_t)i], cell[3 * (size_t)i + 1], cell[3 * (size_t)i + 2], T - 1) + 1]++;
    }
    for (size_t t = 0; t < T; ++t) start[t + 1] += start[t];
    {
        size_t *fill = clc_calloc(T + 1, sizeof *fill, err, "collision hash fill");
        if (!fill) {
            st = CLCONE_ENOMEM;
            goto done;
        }
        memcpy(fill, start, (T + 1) * sizeof *fill);
        for (int i = 0; i < n; ++i)
            order[fill[cell_hash(cell[3 * (size_t)i], cell[3 * (size_t)i + 1], cell[3 * (size_t)i + 2], T - 1)]++] = i;
        free(fill);
    }
    for (int i = 0; i < n && !st; ++i) {
        const long long *ci = cell + 3 * (size_t)i;
        if ((st = vs_planes(w, i, margin, &B, err))) break;
        ncand = 0;
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    long long cx = ci[0] + dx, cy = ci[1] + dy, cz = ci[2] + dz;
                    size_t t = cell_hash(cx, cy, cz, T - 1);
                    for (size_t k = start[t]; k < start[t + 1]; ++k) {
                        int j = order[k];
                        const long long *cj = cell + 3 * (size_t)j;
                        /* buckets are shared by unrelated cells: only the
                         * cell itself counts, so no pair is seen twice */
                        if (j >= i || cj[0] != cx || cj[1] != cy || cj[2] != cz) continue;
                        if (ncand == capcand) {
                            int nc = capcand ? 2 * capcand : 64, *p = realloc(cand, (size_t)nc * sizeof *p);
                            if (!p) {
                                st = clc_fail(err, CLCONE_ENOMEM, "cannot grow the candidate list");
                                goto done;
                            }
                            cand = p;
                            capcand = nc;
                        }
                        cand[ncand++] = j;
                    }
                }
        if (ncand > 1) qsort(cand, (size_t)ncand, sizeof *cand, cmp_int);
        for (int k = 0; k < ncand && !st; ++k) {
            int j = cand[k];
            double dd[3], reach = clcone_shape_bound(&w->shapes[i]) + clcone_shape_bound(&w->shapes[j]) + margin;
            for (int m = 0; m < 3; ++m) dd[m] = w->s.bodies[i].x[m] - w->s.bodies[j].x[m];
            if (clc_dot3(dd, dd) > reach * reach) continue;
            st = pair(w, i, j, margin, &B, err);
        }
    }
    if (st) goto done;
    free(w->s.contacts);
    w->s.contacts = B.c ? B.c : clc_calloc(1, sizeof *w->s.contacts, err, "contacts");
    w->s.ncontacts = B.n;
    B.c = NULL;
    if (!w->s.contacts) {
        w->s.ncontacts = 0;
        st = CLCONE_ENOMEM;
        goto done;
    }
    if (keys) {
        *keys = B.key ? B.key : calloc(1, sizeof **keys);
        B.key = NULL;
        if (!*keys) st = clc_fail(err, CLCONE_ENOMEM, "contact keys");
    }
    if (corder && !st) {
        *corder = B.order ? B.order : calloc(1, sizeof **corder);
        B.order = NULL;
        if (!*corder) st = clc_fail(err, CLCONE_ENOMEM, "contact order");
    }
done:
    free(B.c);
    free(B.key);
    free(B.order);
    free(cell);
    free(start);
    free(order);
    free(cand);
    return st;
}
