/* Body form: scene validation, contact frames, Jacobians, the local form
 * W = J M^-1 J^T, q = J v*, and impulses back to body velocities.
 * Conventions are spelled out in scene.h. */
#include "core/internal.h"
#include "core/body_form.h"
#include "core/analysis.h"
#include "cone.h"
#include "jacobian.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Inverse inertia is accepted as symmetric / PSD up to this fraction of its
 * largest entry: a world-frame tensor R I^-1 R^T carries rounding. */
#define INERTIA_REL_TOL 1e-9
#define NORMAL_TOL 1e-6

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

int clc_body_is_static(const clcone_body *b)
{
    if (b->inv_mass != 0.0) return 0;
    for (int i = 0; i < 9; ++i)
        if (b->inv_inertia[i] != 0.0) return 0;
    return 1;
}

void clc_body_inv_mass_apply(const clcone_body *b, const double f[6],
                                double out[6])
{
    const double *I = b->inv_inertia;
    double w0 = I[0] * f[3] + I[1] * f[4] + I[2] * f[5];
    double w1 = I[3] * f[3] + I[4] * f[4] + I[5] * f[5];
    double w2 = I[6] * f[3] + I[7] * f[4] + I[8] * f[5];
    out[0] = b->inv_mass * f[0];
    out[1] = b->inv_mass * f[1];
    out[2] = b->inv_mass * f[2];
    out[3] = w0;
    out[4] = w1;
    out[5] = w2;
}

int clc_contact_body(const clcone_contact *c, int side)
{
    return side == 0 ? c->a : c->b;
}

/* Static end of a contact: the world or a static body. */
static int end_is_static(const clcone_scene *s, int body)
{
    return body < 0 || clc_body_is_static(&s->bodies[body]);
}

clcone_status clc_body_validate(const clcone_body *b, int i, clcone_error *err)
{
    double scale = 0.0, lo, hi;
    if (!all_finite(b->x, 3))
        return clc_fail(err, CLCONE_EINVAL, "body %d: position is not finite", i);
    if (!all_finite(b->v, 6))
        return clc_fail(err, CLCONE_EINVAL, "body %d: free velocity is not finite", i);
    if (!isfinite(b->inv_mass) || b->inv_mass < 0.0)
        return clc_fail(err, CLCONE_EINVAL,
                           "body %d: inverse mass %g must be finite and >= 0", i, b->inv_mass);
    if (!all_finite(b->inv_inertia, 9))
        return clc_fail(err, CLCONE_EINVAL, "body %d: inverse inertia is not finite", i);
    for (int k = 0; k < 9; ++k) scale = fmax(scale, fabs(b->inv_inertia[k]));
    for (int r = 0; r < 3; ++r)
        for (int c = r + 1; c < 3; ++c) {
            double x = b->inv_inertia[3 * r + c], y = b->inv_inertia[3 * c + r];
            if (fabs(x - y) > INERTIA_REL_TOL * scale)
                return clc_fail(err, CLCONE_EINVAL,
                                   "body %d: inverse inertia is not symmetric "
                                   "(entry (%d,%d) = %g, entry (%d,%d) = %g)", i, r, c, x, c, r, y);
        }
    clc_sym3_eig_range(b->inv_inertia, &lo, &hi);
    (void)hi;
    if (lo < -INERTIA_REL_TOL * scale)
        return clc_fail(err, CLCONE_EINVAL,
                           "body %d: inverse inertia is not positive semidefinite "
                           "(smallest eigenvalue %g)", i, lo);
    return CLCONE_OK;
}

clcone_status clc_contact_validate(const clcone_scene *s, int i, clcone_error *err)
{
    const clcone_contact *c = &s->contacts[i];
    double len;
    if (c->a < 0 || c->a >= s->nbodies)
        return clc_fail(err, CLCONE_EINVAL, "contact %d: body a = %d out of range [0,%d)",
                           i, c->a, s->nbodies);
    if (c->b < -1 || c->b >= s->nbodies)
        return clc_fail(err, CLCONE_EINVAL,
                           "contact %d: body b = %d out of range [-1,%d) (-1 = static world)",
                           i, c->b, s->nbodies);
    if (c->a == c->b)
        return clc_fail(err, CLCONE_EINVAL, "contact %d: joins body %d to itself", i, c->a);
    if (!all_finite(c->point, 3))
        return clc_fail(err, CLCONE_EINVAL, "contact %d: point is not finite", i);
    if (!all_finite(c->normal, 3))
        return clc_fail(err, CLCONE_EINVAL, "contact %d: normal is not finite", i);
    len = sqrt(clc_dot3(c->normal, c->normal));
    if (fabs(len - 1.0) > NORMAL_TOL)
        return clc_fail(err, CLCONE_EINVAL,
                           "contact %d: normal (%g, %g, %g) has length %.9g, must be 1 within %g",
                           i, c->normal[0], c->normal[1], c->normal[2], len, NORMAL_TOL);
    if (!isfinite(c->mu) || c->mu < 0.0)
        return clc_fail(err, CLCONE_EINVAL, "contact %d: mu = %g must be finite and >= 0", i, c->mu);
    if (end_is_static(s, c->a) && end_is_static(s, c->b)) {
        if (c->b < 0)
            return clc_fail(err, CLCONE_EINVAL,
                               "contact %d: both ends static (body %d and the world)", i, c->a);
        return clc_fail(err, CLCONE_EINVAL,
                           "contact %d: both ends static (bodies %d and %d)", i, c->a, c->b);
    }
    return CLCONE_OK;
}

clcone_status clcone_scene_validate(const clcone_scene *s, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    clcone_status st;
    if (!s) return clc_fail(err, CLCONE_EINVAL, "scene is NULL");
    if (s->nbodies < 0 || s->ncontacts < 0)
        return clc_fail(err, CLCONE_EINVAL, "negative scene size (%d bodies, %d contacts)",
                           s->nbodies, s->ncontacts);
    if (s->ncontacts > CLCONE_SCENE_MAX_CONTACTS)
        return clc_fail(err, CLCONE_EINVAL, "scene has %d contacts, more than the %d supported",
                           s->ncontacts, CLCONE_SCENE_MAX_CONTACTS);
    if ((s->nbodies > 0 && !s->bodies) || (s->ncontacts > 0 && !s->contacts))
        return clc_fail(err, CLCONE_EINVAL, "scene arrays missing");
    for (int i = 0; i < s->nbodies; ++i)
        if ((st = clc_body_validate(&s->bodies[i], i, err))) return st;
    for (int i = 0; i < s->ncontacts; ++i)
        if ((st = clc_contact_validate(s, i, err))) return st;
    return CLCONE_OK;
}

void clcone_contact_frame(const double normal[3], double frame[9])
{
    double e[3] = {0.0, 0.0, 0.0}, t[3], inv;
    int k = 0;
    if (!normal || !frame) return;
    /* The axis least aligned with the normal keeps normal x e_k far from
     * zero (|normal x e_k| >= sqrt(2/3)), and a fixed tie rule makes the
     * frame a pure function of the normal that device code can reproduce. */
    for (int i = 1; i < 3; ++i)
        if (fabs(normal[i]) < fabs(normal[k])) k = i;
    e[k] = 1.0;
    clc_cross3(normal, e, t);
    inv = 1.0 / sqrt(clc_dot3(t, t));
    for (int i = 0; i < 3; ++i) {
        frame[i] = normal[i];
        frame[3 + i] = t[i] * inv;
    }
    clc_cross3(frame, frame + 3, frame + 6);
}

/* J of one side given the contact's frame F, so that loops over both sides
 * build the frame once. */
static void jacobian_from_frame(const clcone_scene *s, const clcone_contact *ct, int side,
                                const double F[9], double J[18])
{
    int b = clc_contact_body(ct, side);
    double d[3];
    if (b < 0) {
        memset(J, 0, 18 * sizeof *J);
        return;
    }
    for (int i = 0; i < 3; ++i) d[i] = ct->point[i] - s->bodies[b].x[i];
    cone_side_jacobian(F, d, J);
}

void clc_contact_jacobian(const clcone_scene *s, int c, int side, double J[18])
{
    double F[9];
    clcone_contact_frame(s->contacts[c].normal, F);
    jacobian_from_frame(s, &s->contacts[c], side, F, J);
}

void clc_contact_sides_of(const clcone_scene *s, int c, clc_contact_sides *cs)
{
    const clcone_contact *ct = &s->contacts[c];
    memset(cs, 0, sizeof *cs);
    clcone_contact_frame(ct->normal, cs->frame);
    for (int side = 0; side < 2; ++side) {
        int bi = clc_contact_body(ct, side);
        double *arm = cs->arm + 3 * side, *J = cs->J + 18 * side, *A = cs->A + 9 * side, MJ[18];
        cs->body[side] = bi;
        if (bi < 0) continue;
        for (int k = 0; k < 3; ++k) arm[k] = ct->point[k] - s->bodies[bi].x[k];
        cone_side_jacobian(cs->frame, arm, J);
        if (clc_body_is_static(&s->bodies[bi])) continue;
        cs->moving[side] = 1;
        for (int k = 0; k < 3; ++k) clc_body_inv_mass_apply(&s->bodies[bi], J + 6 * k, MJ + 6 * k);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double v = 0;
                for (int k = 0; k < 6; ++k) {
                    double t = J[6 * i + k] * MJ[6 * j + k];
                    v += t;
                    cs->Wcc[3 * i + j] += t;
                }
                A[3 * i + j] = v;
            }
    }
}

void clc_scene_normal_velocities(const clcone_scene *s, const double *v, double *vn)
{
    for (int c = 0; c < s->ncontacts; ++c) {
        vn[c] = 0;
        for (int side = 0; side < 2; ++side) {
            int b = clc_contact_body(&s->contacts[c], side);
            double J[18], u = 0;
            if (b < 0) continue;
            clc_contact_jacobian(s, c, side, J);
            for (int k = 0; k < 6; ++k) u += J[k] * (v ? v + 6 * b : s->bodies[b].v)[k];
            vn[c] += side == 0 ? u : -u;
        }
    }
}

clcone_status clc_body_csr_build(const clcone_scene *s, clc_body_csr *L,
                                    clcone_error *err)
{
    int nb = s->nbodies;
    memset(L, 0, sizeof *L);
    L->nbodies = nb;
    L->ptr = clc_calloc((size_t)nb + 1, sizeof *L->ptr, err, "body contact list pointers");
    if (!L->ptr) return CLCONE_ENOMEM;
    for (int c = 0; c < s->ncontacts; ++c)
        for (int side = 0; side < 2; ++side) {
            int b = clc_contact_body(&s->contacts[c], side);
            if (!end_is_static(s, b)) ++L->ptr[b + 1];
        }
    for (int i = 0; i < nb; ++i) L->ptr[i + 1] += L->ptr[i];
    L->contact = clc_calloc((size_t)L->ptr[nb], sizeof *L->contact, err, "body contact lists");
    L->sign = clc_calloc((size_t)L->ptr[nb], sizeof *L->sign, err, "body contact signs");
    if (!L->contact || !L->sign) {
        clc_body_csr_free(L);
        return CLCONE_ENOMEM;
    }
    /* ptr[b] serves as body b's fill cursor, then everything shifts back by
     * one body; visiting contacts in order keeps each list sorted. */
    for (int c = 0; c < s->ncontacts; ++c)
        for (int side = 0; side < 2; ++side) {
            int b = clc_contact_body(&s->contacts[c], side);
            if (end_is_static(s, b)) continue;
            L->contact[L->ptr[b]] = c;
            L->sign[L->ptr[b]] = (signed char)(side == 0 ? 1 : -1);
            ++L->ptr[b];
        }
    for (int i = nb; i > 0; --i) L->ptr[i] = L->ptr[i - 1];
    L->ptr[0] = 0;
    return CLCONE_OK;
}

void clc_body_csr_free(clc_body_csr *L)
{
    if (!L) return;
    free(L->ptr);
    free(L->contact);
    free(L->sign);
    memset(L, 0, sizeof *L);
}

/* The block columns of contact c's row are the union of the (sorted)
 * contact lists of its two bodies; static ends have empty lists, so only
 * contacts sharing a moving body appear, c itself included. */
typedef struct row_union {
    const clc_body_csr *L;
    int ka, ea, kb, eb;   /* cursors and ends in L->contact for a and b */
} row_union;

static void row_union_start(row_union *u, const clc_body_csr *L, const clcone_contact *ct)
{
    u->L = L;
    u->ka = L->ptr[ct->a];
    u->ea = L->ptr[ct->a + 1];
    u->kb = ct->b >= 0 ? L->ptr[ct->b] : 0;
    u->eb = ct->b >= 0 ? L->ptr[ct->b + 1] : 0;
}

/* Next column d, each once even when in both lists. Returns 0 when the
 * row is done. */
static int row_union_next(row_union *u, int *d)
{
    int da = u->ka < u->ea ? u->L->contact[u->ka] : INT_MAX;
    int db = u->kb < u->eb ? u->L->contact[u->kb] : INT_MAX;
    if (da == INT_MAX && db == INT_MAX) return 0;
    *d = da < db ? da : db;
    u->ka += da == *d;
    u->kb += db == *d;
    return 1;
}

/* Body b's contacts, signed: J[t] = sign J_c,b (3x6) for the t-th entry of
 * its list, and H[t] = J[t] M_b^-1, kept as rows M_b^-1 J[t]_row since
 * M^-1 is symmetric. */
static void body_jacobians(const clcone_scene *s, const clc_body_csr *L, int b, double *J,
                           double *H)
{
    for (int t = 0, k = L->ptr[b]; k < L->ptr[b + 1]; ++t, ++k) {
        double *Jt = J + 18 * (size_t)t, *Ht = H + 18 * (size_t)t;
        clc_contact_jacobian(s, L->contact[k], L->sign[k] > 0 ? 0 : 1, Jt);
        for (int l = 0; l < 18; ++l) Jt[l] *= L->sign[k];
        for (int i = 0; i < 3; ++i) clc_body_inv_mass_apply(&s->bodies[b], Jt + 6 * i, Ht + 6 * i);
    }
}

/* block += H J^T for 3x6 H and J. */
static void add_product(const double H[18], const double J[18], double block[9])
{
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
            double acc = 0.0;
            for (int l = 0; l < 6; ++l) acc += H[6 * i + l] * J[6 * k + l];
            block[3 * i + k] += acc;
        }
}

/* W's values, one moving body at a time: every pair (c, d) of its contacts
 * gets sign_c sign_d J_c M^-1 J_d^T. Each Jacobian is built once per body
 * instead of once per block. */
static clcone_status fill_blocks(const clcone_scene *s, const clc_body_csr *L,
                                 clcone_problem *p, clcone_error *err)
{
    int maxdeg = 0;
    double *J, *H;
    for (int b = 0; b < L->nbodies; ++b)
        if (L->ptr[b + 1] - L->ptr[b] > maxdeg) maxdeg = L->ptr[b + 1] - L->ptr[b];
    J = clc_calloc((size_t)maxdeg * 18, sizeof *J, err, "body Jacobians");
    H = clc_calloc((size_t)maxdeg * 18, sizeof *H, err, "body mobilities");
    if (!J || !H) {
        free(J);
        free(H);
        return CLCONE_ENOMEM;
    }
    for (int b = 0; b < L->nbodies; ++b) {
        int k0 = L->ptr[b], m = L->ptr[b + 1] - k0;
        body_jacobians(s, L, b, J, H);
        for (int t = 0; t < m; ++t) {
            int c = L->contact[k0 + t], kk = p->row_ptr[c];
            /* the list and row c's columns are both increasing, and every
             * d of the list is a column of row c, so a forward scan finds
             * each block */
            for (int u = 0; u < m; ++u) {
                int d = L->contact[k0 + u];
                while (p->col[kk] != d) ++kk;
                add_product(H + 18 * (size_t)t, J + 18 * (size_t)u, p->blocks + 9 * (size_t)kk);
            }
        }
    }
    free(J);
    free(H);
    return CLCONE_OK;
}

clcone_status clcone_scene_to_local(const clcone_scene *s, clcone_problem *p,
                                    clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, p);
    clc_body_csr L;
    clcone_status st;
    long long nnzb = 0;
    int n, k = 0, d, rows;
    row_union u;

    memset(p, 0, sizeof *p);
    if ((st = clcone_scene_validate(s, err))) return st;
    if ((st = clc_body_csr_build(s, &L, err))) return st;
    n = s->ncontacts;
    /* counted up to the limit only: a heap of 3,000 spheres on one spot
     * couples 4.5 million contacts into 2.7e10 blocks, 100 s to count */
    for (rows = 0; rows < n && nnzb <= CLCONE_SCENE_MAX_CONTACTS; ++rows) {
        row_union_start(&u, &L, &s->contacts[rows]);
        while (row_union_next(&u, &d)) ++nnzb;
    }
    if (nnzb > CLCONE_SCENE_MAX_CONTACTS) {
        clc_body_csr_free(&L);
        return clc_fail(err, CLCONE_EINVAL,
                        "scene couples too many contacts: W would hold more than %d blocks (%lld in the rows of "
                        "its first %d of %d contacts)", CLCONE_SCENE_MAX_CONTACTS, nnzb, rows, n);
    }
    if ((st = clcone_problem_alloc(p, n, (int)nnzb, err))) {
        clc_body_csr_free(&L);
        return st;
    }
    for (int c = 0; c < n; ++c) {
        const clcone_contact *ct = &s->contacts[c];
        double F[9], J[18], *qc = p->q + 3 * (size_t)c;
        p->row_ptr[c] = k;
        row_union_start(&u, &L, ct);
        while (row_union_next(&u, &d)) p->col[k++] = d;
        /* Static bodies may still move along a prescribed v (a conveyor),
         * so q takes every real body's v, not only those of moving ones. */
        clcone_contact_frame(ct->normal, F);
        for (int side = 0; side < 2; ++side) {
            int b = clc_contact_body(ct, side);
            double sgn = side == 0 ? 1.0 : -1.0;
            if (b < 0) continue;
            jacobian_from_frame(s, ct, side, F, J);
            for (int i = 0; i < 3; ++i) {
                double acc = 0.0;
                for (int l = 0; l < 6; ++l) acc += J[6 * i + l] * s->bodies[b].v[l];
                qc[i] += sgn * acc;
            }
        }
        p->mu[c] = ct->mu;
    }
    p->row_ptr[n] = k;
    st = fill_blocks(s, &L, p, err);
    clc_body_csr_free(&L);
    if (st) clcone_problem_free(p);
    return st;
}

void clcone_scene_apply_impulses(const clcone_scene *s, const double *r, double *dv)
{
    if (!s || !r || !dv) return;
    memset(dv, 0, sizeof *dv * 6 * (size_t)s->nbodies);
    for (int c = 0; c < s->ncontacts; ++c) {
        const clcone_contact *ct = &s->contacts[c];
        double F[9];
        clcone_contact_frame(ct->normal, F);
        for (int side = 0; side < 2; ++side) {
            int b = clc_contact_body(ct, side);
            double J[18], f[6], *out;
            if (end_is_static(s, b)) continue;
            jacobian_from_frame(s, ct, side, F, J);
            /* J^T r_c: the contact impulse as (impulse, angular impulse) */
            for (int l = 0; l < 6; ++l)
                f[l] = J[l] * r[3 * (size_t)c] + J[6 + l] * r[3 * (size_t)c + 1] + J[12 + l] * r[3 * (size_t)c + 2];
            clc_body_inv_mass_apply(&s->bodies[b], f, f);
            out = dv + 6 * (size_t)b;
            for (int l = 0; l < 6; ++l) out[l] += side == 0 ? f[l] : -f[l];
        }
    }
}

void clcone_scene_free(clcone_scene *s)
{
    if (!s) return;
    free(s->bodies);
    free(s->contacts);
    memset(s, 0, sizeof *s);
}
