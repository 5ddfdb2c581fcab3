/* Body form (host/core/scene.c, host/world/scene_gen.c): contact frames, W = J M^-1 J^T
 * and q = J v* against rigid-body mechanics written out independently,
 * impulses, the generators' geometry, and validation messages. */
#include "testutil.h"
#include "cone.h"
#include "core/body_form.h"

#include <math.h>
#include <string.h>


static unsigned long long rng_state = 2718281828ULL;
static double urand(void) /* uniform in [-1, 1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void random_unit(double n[3])
{
    double len;
    do {
        n[0] = urand(); n[1] = urand(); n[2] = urand();
        len = sqrt(dot3(n, n));
    } while (len < 0.1 || len > 1.0);
    n[0] /= len; n[1] /= len; n[2] /= len;
}

/* Radius of a generated unit-density sphere, from its inverse mass. */
static double sphere_radius(const clcone_body *b)
{
    return cbrt(3.0 / (4.0 * CONE_PI * b->inv_mass));
}

/* Dense 3n x 3n copy of W. */
static double *dense_W(const clcone_problem *p)
{
    int n3 = 3 * p->n;
    double *W = calloc((size_t)n3 * n3, sizeof *W);
    ck_assert_ptr_nonnull(W);
    for (int i = 0; i < p->n; ++i)
        for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k)
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    W[(size_t)(3 * i + a) * n3 + 3 * p->col[k] + b] = p->blocks[9 * k + 3 * a + b];
    return W;
}

/* Smallest eigenvalue of a symmetric matrix (cyclic Jacobi; A destroyed). */
static double min_eigenvalue(double *A, int n)
{
    double lo;
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0.0, diag = 0.0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                if (i != j) off += A[i * n + j] * A[i * n + j];
                else diag += A[i * n + i] * A[i * n + i];
            }
        if (off <= 1e-30 * diag) break;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                double apq = A[p * n + q], theta, t, c, s;
                if (fabs(apq) < 1e-300) continue;
                theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                c = 1 / sqrt(t * t + 1);
                s = t * c;
                for (int k = 0; k < n; ++k) {
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; ++k) {
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    lo = A[0];
    for (int i = 1; i < n; ++i) lo = fmin(lo, A[i * n + i]);
    return lo;
}

/* Checks what scene_to_local promises about W's structure and values:
 * valid problem, a block exactly where two contacts share a moving body,
 * W symmetric and positive semidefinite (dense check when small). */
static void check_W(const clcone_scene *s, const clcone_problem *p, int dense)
{
    clcone_error err;
    ck_assert_msg(clcone_problem_validate(p, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(p->n, s->ncontacts);
    for (int i = 0; i < p->n; ++i) {
        int k = p->row_ptr[i];
        for (int j = 0; j < p->n; ++j) {
            const clcone_contact *ci = &s->contacts[i], *cj = &s->contacts[j];
            int ends_i[2] = {ci->a, ci->b}, ends_j[2] = {cj->a, cj->b}, share = 0;
            for (int x = 0; x < 2; ++x)
                for (int y = 0; y < 2; ++y)
                    if (ends_i[x] >= 0 && ends_i[x] == ends_j[y] &&
                        !clc_body_is_static(&s->bodies[ends_i[x]])) share = 1;
            if (k < p->row_ptr[i + 1] && p->col[k] == j) {
                ck_assert_msg(share, "block (%d,%d) stored but the contacts share no moving body", i, j);
                ++k;
            } else {
                ck_assert_msg(!share, "block (%d,%d) missing though the contacts share a moving body", i, j);
            }
        }
    }
    if (dense) {
        int n3 = 3 * p->n;
        double *W = dense_W(p), scale = 0, lo;
        for (int i = 0; i < n3; ++i)
            for (int j = 0; j < n3; ++j) {
                scale = fmax(scale, fabs(W[i * n3 + j]));
                ck_assert_msg(fabs(W[i * n3 + j] - W[j * n3 + i]) <= 1e-13 * (1 + fabs(W[i * n3 + j])),
                              "W not symmetric at (%d,%d)", i, j);
            }
        lo = min_eigenvalue(W, n3);
        ck_assert_msg(lo >= -1e-12 * fmax(1.0, scale), "W min eigenvalue %g", lo);
        free(W);
    }
}

START_TEST(frame_orthonormal_and_rule)
{
    static const double special[][3] = {
        {0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0},
        {0.6, 0.8, 0}, {0, 0.6, 0.8}, {0.6, 0, -0.8},
    };
    double F[9], G[9], t[3], c[3];
    /* worked: n = +z ties x and y at 0, takes x: t1 = z x x = y, t2 = -x */
    clcone_contact_frame(special[0], F);
    ck_assert_double_eq(F[3], 0); ck_assert_double_eq(F[4], 1); ck_assert_double_eq(F[5], 0);
    ck_assert_double_eq(F[6], -1); ck_assert_double_eq(F[7], 0); ck_assert_double_eq(F[8], 0);
    /* n = +x ties y and z, takes y: t1 = x x y = z, t2 = x x z = -y */
    clcone_contact_frame(special[2], F);
    ck_assert_double_eq(F[5], 1); ck_assert_double_eq(F[7], -1);
    /* all three tie: x, so t1 = normalize(n x x) = (0, 1, -1) / sqrt 2 */
    {
        double v = 1 / sqrt(3.0), n[3] = {v, v, v};
        clcone_contact_frame(n, F);
        ck_assert_double_eq_tol(F[3], 0, 1e-16);
        ck_assert_double_eq_tol(F[4], sqrt(0.5), 1e-15);
        ck_assert_double_eq_tol(F[5], -sqrt(0.5), 1e-15);
    }
    for (int trial = 0; trial < 2000 + 8; ++trial) {
        double n[3], e[3] = {0, 0, 0};
        int k = 0;
        if (trial < 8) memcpy(n, special[trial], sizeof n);
        else if (trial < 20) { /* equal magnitudes: the lowest axis wins */
            double v = 1 / sqrt(3.0);
            n[0] = trial & 1 ? v : -v; n[1] = trial & 2 ? v : -v; n[2] = trial & 4 ? v : -v;
        } else random_unit(n);
        clcone_contact_frame(n, F);
        clcone_contact_frame(n, G);
        ck_assert_msg(memcmp(F, G, sizeof F) == 0, "frame not deterministic");
        ck_assert(F[0] == n[0] && F[1] == n[1] && F[2] == n[2]);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                ck_assert_double_eq_tol(dot3(F + 3 * a, F + 3 * b), a == b ? 1.0 : 0.0, 1e-14);
        cross3(F, F + 3, c); /* right-handed: n x t1 = t2 */
        for (int i = 0; i < 3; ++i) ck_assert_double_eq_tol(c[i], F[6 + i], 1e-15);
        cross3(F + 3, F + 6, c); /* and t1 x t2 = n */
        for (int i = 0; i < 3; ++i) ck_assert_double_eq_tol(c[i], n[i], 1e-14);
        for (int i = 1; i < 3; ++i)
            if (fabs(n[i]) < fabs(n[k])) k = i;
        e[k] = 1;
        cross3(n, e, t);
        for (int i = 0; i < 3; ++i) ck_assert_double_eq_tol(F[3 + i], t[i] / sqrt(dot3(t, t)), 1e-15);
    }
}
END_TEST

/* One sphere on a plane of normal n: the contact block is
 * diag(1/m, 1/m + r^2/I, 1/m + r^2/I) whatever n, and q is the velocity of
 * the sphere's lowest point in the contact frame. */
START_TEST(sphere_on_plane_analytic)
{
    const double m = 2.0, r = 0.7, I = 0.4 * m * r * r;
    for (int trial = 0; trial < 50; ++trial) {
        clcone_body body;
        clcone_contact ct;
        clcone_scene s = {1, 1, &body, &ct};
        clcone_problem p;
        clcone_error err;
        double F[9], w[3], vp[3], d[3];
        memset(&body, 0, sizeof body);
        memset(&ct, 0, sizeof ct);
        if (trial == 0) { ct.normal[2] = 1; }
        else random_unit(ct.normal);
        for (int i = 0; i < 3; ++i) {
            ct.point[i] = 3 * urand();
            body.x[i] = ct.point[i] + r * ct.normal[i];
        }
        body.inv_mass = 1 / m;
        body.inv_inertia[0] = body.inv_inertia[4] = body.inv_inertia[8] = 1 / I;
        for (int i = 0; i < 6; ++i) body.v[i] = urand();
        ct.a = 0;
        ct.b = -1;
        ct.mu = 0.3;
        ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
        ck_assert_int_eq(p.n, 1);
        ck_assert_int_eq(p.nnzb, 1);
        ck_assert_double_eq(p.mu[0], 0.3);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                double want = a != b ? 0.0 : a == 0 ? 1 / m : 1 / m + r * r / I;
                ck_assert_double_eq_tol(p.blocks[3 * a + b], want, 1e-13);
            }
        /* v_point = v + w x (p - x) */
        for (int i = 0; i < 3; ++i) d[i] = ct.point[i] - body.x[i];
        cross3(body.v + 3, d, w);
        for (int i = 0; i < 3; ++i) vp[i] = body.v[i] + w[i];
        clcone_contact_frame(ct.normal, F);
        for (int k = 0; k < 3; ++k) ck_assert_double_eq_tol(p.q[k], dot3(F + 3 * k, vp), 1e-13);
        clcone_problem_free(&p);
    }
}
END_TEST

/* Random symmetric positive definite 3x3: A A^T + 0.1 I. */
static void random_spd(double M[9])
{
    double A[9];
    for (int i = 0; i < 9; ++i) A[i] = urand();
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            M[3 * i + j] = dot3(A + 3 * i, A + 3 * j) + (i == j ? 0.1 : 0.0);
}

static void random_body(clcone_body *b)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < 3; ++i) b->x[i] = 2 * urand();
    b->inv_mass = 0.5 + 0.5 * (urand() + 1);
    random_spd(b->inv_inertia);
    for (int i = 0; i < 6; ++i) b->v[i] = urand();
}

/* World velocity of body b's material point at p, for body velocity v. */
static void point_velocity(const clcone_body *b, const double v[6], const double p[3], double out[3])
{
    double d[3], w[3];
    for (int i = 0; i < 3; ++i) d[i] = p[i] - b->x[i];
    cross3(v + 3, d, w);
    for (int i = 0; i < 3; ++i) out[i] = v[i] + w[i];
}

/* Velocity change of body b from a world impulse P applied at point p. */
static void impulse_response(const clcone_body *b, const double P[3], const double p[3], double dv[6])
{
    double d[3], L[3];
    for (int i = 0; i < 3; ++i) d[i] = p[i] - b->x[i];
    cross3(d, P, L);
    for (int i = 0; i < 3; ++i) {
        dv[i] = b->inv_mass * P[i];
        dv[3 + i] = dot3(b->inv_inertia + 3 * i, L);
    }
}

/* Two moving bodies and a third, static one, with three contacts: q and
 * W r against the mechanics written out by hand (impulse at the contact
 * point, equal and opposite on the two bodies). */
START_TEST(two_bodies_against_mechanics)
{
    for (int trial = 0; trial < 20; ++trial) {
        clcone_body bodies[3];
        clcone_contact cts[3];
        clcone_scene s = {3, 3, bodies, cts};
        clcone_problem p;
        clcone_error err;
        double r[9], u[9], dv[18], dv_ref[18] = {0};
        random_body(&bodies[0]);
        random_body(&bodies[1]);
        random_body(&bodies[2]);
        bodies[2].inv_mass = 0;
        memset(bodies[2].inv_inertia, 0, sizeof bodies[2].inv_inertia);
        memset(cts, 0, sizeof cts);
        cts[0].a = 0; cts[0].b = 1; /* moving - moving */
        cts[1].a = 2; cts[1].b = 0; /* static (moving along v) - moving */
        cts[2].a = 1; cts[2].b = -1;
        for (int c = 0; c < 3; ++c) {
            random_unit(cts[c].normal);
            for (int i = 0; i < 3; ++i) cts[c].point[i] = urand();
            cts[c].mu = 0.5;
        }
        ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
        check_W(&s, &p, 1);
        ck_assert_int_eq(p.nnzb, 9 - 2); /* contacts 1 and 2 share no moving body */
        for (int c = 0; c < 3; ++c) {
            double F[9], va[3], vb[3] = {0, 0, 0};
            clcone_contact_frame(cts[c].normal, F);
            point_velocity(&bodies[cts[c].a], bodies[cts[c].a].v, cts[c].point, va);
            if (cts[c].b >= 0) point_velocity(&bodies[cts[c].b], bodies[cts[c].b].v, cts[c].point, vb);
            for (int k = 0; k < 3; ++k)
                ck_assert_double_eq_tol(p.q[3 * c + k], dot3(F + 3 * k, va) - dot3(F + 3 * k, vb), 1e-13);
        }
        for (int i = 0; i < 9; ++i) r[i] = urand();
        /* impulses by hand: P = F^T r_c on a, -P on b */
        for (int c = 0; c < 3; ++c) {
            double F[9], P[3], d6[6];
            clcone_contact_frame(cts[c].normal, F);
            for (int i = 0; i < 3; ++i) P[i] = F[i] * r[3 * c] + F[3 + i] * r[3 * c + 1] + F[6 + i] * r[3 * c + 2];
            for (int side = 0; side < 2; ++side) {
                int b = side ? cts[c].b : cts[c].a;
                if (b < 0) continue;
                impulse_response(&bodies[b], P, cts[c].point, d6);
                for (int l = 0; l < 6; ++l) dv_ref[6 * b + l] += side ? -d6[l] : d6[l];
            }
        }
        clcone_scene_apply_impulses(&s, r, dv);
        for (int l = 0; l < 18; ++l) ck_assert_double_eq_tol(dv[l], dv_ref[l], 1e-12);
        /* W r = change of relative velocity caused by those impulses */
        clcone_problem_velocity(&p, r, u);
        for (int c = 0; c < 3; ++c) {
            double F[9], va[3], vb[3] = {0, 0, 0};
            clcone_contact_frame(cts[c].normal, F);
            point_velocity(&bodies[cts[c].a], dv_ref + 6 * cts[c].a, cts[c].point, va);
            if (cts[c].b >= 0) point_velocity(&bodies[cts[c].b], dv_ref + 6 * cts[c].b, cts[c].point, vb);
            for (int k = 0; k < 3; ++k)
                ck_assert_double_eq_tol(u[3 * c + k] - p.q[3 * c + k],
                                        dot3(F + 3 * k, va) - dot3(F + 3 * k, vb), 1e-12);
        }
        clcone_problem_free(&p);
    }
}
END_TEST

/* A pinned body (inv_mass 0, free to turn) is not static: it couples its
 * contacts through rotation only. */
START_TEST(pinned_body_is_not_static)
{
    clcone_body b;
    clcone_contact cts[2];
    clcone_scene s = {1, 2, &b, cts};
    clcone_problem p;
    clcone_error err;
    memset(&b, 0, sizeof b);
    memset(cts, 0, sizeof cts);
    b.inv_inertia[0] = b.inv_inertia[4] = b.inv_inertia[8] = 2.0;
    ck_assert(!clc_body_is_static(&b));
    for (int c = 0; c < 2; ++c) {
        cts[c].a = 0;
        cts[c].b = -1;
        cts[c].normal[2] = 1;
        cts[c].point[0] = c ? -1.0 : 1.0; /* lever arm 1 along +-x */
    }
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    check_W(&s, &p, 1);
    ck_assert_int_eq(p.nnzb, 4);
    /* normal row: (d x n) = (0, -+1, 0), so W_nn = 2 and the coupling -2 */
    ck_assert_double_eq_tol(p.blocks[0], 2.0, 1e-15);
    ck_assert_double_eq_tol(p.blocks[9], -2.0, 1e-15);
    clcone_problem_free(&p);
}
END_TEST

/* J (M^-1 J^T r) == W r on generated scenes, through the internal
 * Jacobian and body lists that body-form solvers use. */
START_TEST(impulses_consistent_with_W)
{
    clcone_scene scenes[3];
    clcone_error err;
    ck_assert_msg(clc_gen_pile(60, 0.5, 0.01, 0.1, 3, &scenes[0], &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_msg(clc_gen_stack(4, 0.5, 0.01, &scenes[1], &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_msg(clc_gen_grid(3, 3, 0.5, 0.01, &scenes[2], &err) == CLCONE_OK, "%s", err.msg);
    for (int t = 0; t < 3; ++t) {
        clcone_scene *s = &scenes[t];
        clcone_problem p;
        clc_body_csr L;
        int n = s->ncontacts;
        double *r = malloc(sizeof(double) * 3 * n), *u = malloc(sizeof(double) * 3 * n);
        double *dv = malloc(sizeof(double) * 6 * s->nbodies), *u2 = calloc(3 * (size_t)n, sizeof(double));
        ck_assert_msg(clcone_scene_to_local(s, &p, &err) == CLCONE_OK, "%s", err.msg);
        ck_assert_msg(clc_body_csr_build(s, &L, &err) == CLCONE_OK, "%s", err.msg);
        for (int i = 0; i < 3 * n; ++i) r[i] = urand();
        clcone_scene_apply_impulses(s, r, dv);
        /* gather per body through the lists: u_c += sign J_c,B dv_B */
        for (int b = 0; b < s->nbodies; ++b)
            for (int k = L.ptr[b]; k < L.ptr[b + 1]; ++k) {
                int c = L.contact[k];
                double J[18];
                ck_assert_int_eq(L.sign[k] > 0 ? s->contacts[c].a : s->contacts[c].b, b);
                if (k > L.ptr[b]) ck_assert_int_lt(L.contact[k - 1], c);
                clc_contact_jacobian(s, c, L.sign[k] > 0 ? 0 : 1, J);
                for (int i = 0; i < 3; ++i)
                    for (int l = 0; l < 6; ++l) u2[3 * c + i] += L.sign[k] * J[6 * i + l] * dv[6 * b + l];
            }
        clcone_problem_velocity(&p, r, u);
        for (int i = 0; i < 3 * n; ++i)
            ck_assert_double_eq_tol(u[i] - p.q[i], u2[i], 1e-11 * (1 + fabs(u2[i])));
        clc_body_csr_free(&L);
        clcone_problem_free(&p);
        clcone_scene_free(s);
        free(r); free(u); free(u2); free(dv);
    }
}
END_TEST

START_TEST(W_symmetric_psd_on_generated)
{
    clcone_scene s;
    clcone_problem p;
    clcone_error err;
    ck_assert_msg(clc_gen_stack(3, 0.5, 0.01, &s, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    check_W(&s, &p, 1);
    /* box i's 4 contacts couple with the 4 below and the 4 above */
    ck_assert_int_eq(p.nnzb, 16 * 3 + 2 * 16 * 2);
    clcone_problem_free(&p);
    clcone_scene_free(&s);

    ck_assert_msg(clc_gen_pile(12, 0.5, 0.01, 0.1, 11, &s, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    check_W(&s, &p, 1);
    clcone_problem_free(&p);
    clcone_scene_free(&s);

    ck_assert_msg(clc_gen_grid(2, 2, 0.5, 0.01, &s, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    check_W(&s, &p, 1);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
}
END_TEST

/* Resting stack: the normal impulses that stop every box carry the weight
 * of the boxes above each interface, k m g dt on the ground. */
START_TEST(stack_carries_its_weight)
{
    const int k = 5;
    const double dt = 0.01;
    clcone_scene s;
    clcone_problem p;
    clcone_options o;
    clcone_result res;
    clcone_error err;
    double *r, *u;
    ck_assert_msg(clc_gen_stack(k, 0.5, dt, &s, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(s.nbodies, k);
    ck_assert_int_eq(s.ncontacts, 4 * k);
    ck_assert_msg(clcone_scene_validate(&s, &err) == CLCONE_OK, "%s", err.msg);
    for (int i = 0; i < k; ++i) {
        ck_assert_double_eq(s.bodies[i].x[2], 0.5 + i);
        ck_assert_double_eq(s.bodies[i].inv_mass, 1.0);
        ck_assert_double_eq_tol(s.bodies[i].inv_inertia[4], 6.0, 1e-15);
        ck_assert_double_eq_tol(s.bodies[i].v[2], -9.81 * dt, 1e-15);
    }
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_COULOMB;
    o.solver = CLCONE_SOLVER_NSGS;
    r = calloc(3 * (size_t)p.n, sizeof *r);
    u = calloc(3 * (size_t)p.n, sizeof *u);
    ck_assert_msg(clcone_solve(NULL, &p, &o, r, &res, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    clcone_problem_velocity(&p, r, u);
    for (int i = 0; i < k; ++i) {
        double sum = 0;
        for (int q = 0; q < 4; ++q) {
            int c = 4 * i + q;
            ck_assert_int_eq(s.contacts[c].b, i - 1);
            ck_assert_double_eq_tol(u[3 * c], 0.0, 1e-7);
            sum += r[3 * c];
        }
        ck_assert_double_eq_tol(sum, (k - i) * 9.81 * dt, 1e-6 * k * 9.81 * dt);
    }
    clcone_result_free(&res);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
    free(r);
    free(u);
}
END_TEST

/* Geometry of a pile: valid scene, no overlap, contacts exactly where
 * spheres or walls touch, every sphere touching something. Returns the
 * contact count. */
static int check_pile(const clcone_scene *s, int n)
{
    clcone_error err;
    int *deg = calloc((size_t)n, sizeof *deg), missing = 0;
    double wx = 0, wy = 0;
    ck_assert_int_eq(s->nbodies, n);
    ck_assert_msg(clcone_scene_validate(s, &err) == CLCONE_OK, "%s", err.msg);
    for (int c = 0; c < s->ncontacts; ++c) {
        const clcone_contact *ct = &s->contacts[c];
        const clcone_body *A = &s->bodies[ct->a];
        double ra = sphere_radius(A);
        ck_assert(fabs(ct->gap) <= 1e-9);
        ++deg[ct->a];
        if (ct->b >= 0) {
            const clcone_body *B = &s->bodies[ct->b];
            double d[3], len;
            ++deg[ct->b];
            for (int i = 0; i < 3; ++i) d[i] = A->x[i] - B->x[i];
            len = sqrt(dot3(d, d));
            ck_assert_double_eq_tol(len, ra + sphere_radius(B), 1e-9);
            for (int i = 0; i < 3; ++i) ck_assert_double_eq_tol(ct->normal[i], d[i] / len, 1e-12);
        } else {
            /* the wall plane passes through the point, the sphere centre
             * sits r along the normal from it */
            for (int i = 0; i < 3; ++i)
                ck_assert_double_eq_tol(A->x[i], ct->point[i] + ra * ct->normal[i], 1e-9);
            if (ct->normal[0] < 0) wx = ct->point[0];
            if (ct->normal[1] < 0) wy = ct->point[1];
        }
    }
    for (int i = 0; i < n; ++i) {
        const clcone_body *A = &s->bodies[i];
        double ri = sphere_radius(A);
        if (deg[i] == 0) ++missing;
        ck_assert_double_ge(A->x[2], ri - 1e-9);
        ck_assert_double_ge(A->x[0], ri - 1e-9);
        ck_assert_double_ge(A->x[1], ri - 1e-9);
        if (wx > 0) ck_assert_double_le(A->x[0], wx - ri + 1e-9);
        if (wy > 0) ck_assert_double_le(A->x[1], wy - ri + 1e-9);
        ck_assert_double_eq_tol(A->v[2], -9.81 * 0.01, 1e-15);
        for (int j = 0; j < i; ++j) {
            const clcone_body *B = &s->bodies[j];
            double d[3];
            for (int k = 0; k < 3; ++k) d[k] = A->x[k] - B->x[k];
            ck_assert_msg(sqrt(dot3(d, d)) >= ri + sphere_radius(B) - 1e-9, "spheres %d and %d overlap", i, j);
        }
    }
    ck_assert_msg(missing == 0, "%d spheres touch nothing", missing);
    free(deg);
    return s->ncontacts;
}

START_TEST(pile_geometry)
{
    static const double spreads[] = {0.0, 0.1, 0.3, 0.45};
    for (size_t t = 0; t < sizeof spreads / sizeof spreads[0]; ++t) {
        clcone_scene s, s2;
        clcone_error err;
        int n = 300, nc;
        ck_assert_msg(clc_gen_pile(n, 0.4, 0.01, spreads[t], 42, &s, &err) == CLCONE_OK, "%s", err.msg);
        nc = check_pile(&s, n);
        /* spheres rest on several others: well above one contact each */
        ck_assert_msg(nc >= 2 * n, "spread %g: %d contacts for %d spheres", spreads[t], nc, n);
        ck_assert_msg(clc_gen_pile(n, 0.4, 0.01, spreads[t], 42, &s2, &err) == CLCONE_OK, "%s", err.msg);
        ck_assert_int_eq(s2.ncontacts, s.ncontacts);
        ck_assert(memcmp(s.bodies, s2.bodies, sizeof *s.bodies * n) == 0);
        ck_assert(memcmp(s.contacts, s2.contacts, sizeof *s.contacts * s.ncontacts) == 0);
        clcone_scene_free(&s2);
        if (spreads[t] > 0) {
            ck_assert_msg(clc_gen_pile(n, 0.4, 0.01, spreads[t], 43, &s2, &err) == CLCONE_OK, "%s", err.msg);
            ck_assert(memcmp(s.bodies, s2.bodies, sizeof *s.bodies * n) != 0);
            clcone_scene_free(&s2);
        }
        clcone_scene_free(&s);
    }
}
END_TEST

/* Equal radii give the FCC packing: an interior sphere touches 12. */
START_TEST(pile_equal_radii_is_fcc)
{
    clcone_scene s;
    clcone_error err;
    int *deg, max = 0;
    ck_assert_msg(clc_gen_pile(500, 0.4, 0.01, 0.0, 1, &s, &err) == CLCONE_OK, "%s", err.msg);
    deg = calloc((size_t)s.nbodies, sizeof *deg);
    for (int c = 0; c < s.ncontacts; ++c) {
        ++deg[s.contacts[c].a];
        if (s.contacts[c].b >= 0) ++deg[s.contacts[c].b];
    }
    for (int i = 0; i < s.nbodies; ++i) max = deg[i] > max ? deg[i] : max;
    ck_assert_int_eq(max, 12);
    for (int i = 0; i < s.nbodies; ++i) ck_assert_double_eq_tol(sphere_radius(&s.bodies[i]), 0.5, 1e-12);
    free(deg);
    clcone_scene_free(&s);
}
END_TEST

START_TEST(grid_layout)
{
    const int L = 4, H = 3;
    clcone_scene s;
    clcone_problem p;
    clcone_error err;
    ck_assert_msg(clc_gen_grid(L, H, 0.3, 0.02, &s, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(s.nbodies, L * L * H);
    ck_assert_int_eq(s.ncontacts, 3 * L * L * H - 2 * L * H);
    ck_assert_msg(clcone_scene_validate(&s, &err) == CLCONE_OK, "%s", err.msg);
    for (int c = 0; c < s.ncontacts; ++c) {
        const clcone_contact *ct = &s.contacts[c];
        const double *xa = s.bodies[ct->a].x;
        double xb[3] = {xa[0], xa[1], 0.0}; /* the ground under a */
        if (ct->b >= 0) memcpy(xb, s.bodies[ct->b].x, sizeof xb);
        else ck_assert_double_eq(xa[2], 0.5);
        /* unit distance along the normal, the point half way */
        for (int i = 0; i < 3; ++i) {
            ck_assert_double_eq(xa[i] - xb[i], (ct->b >= 0 ? 1.0 : 0.5) * ct->normal[i]);
            ck_assert_double_eq(ct->point[i], xa[i] - 0.5 * ct->normal[i]);
        }
        ck_assert_double_eq(ct->mu, 0.3);
    }
    for (int i = 0; i < s.nbodies; ++i)
        ck_assert_double_eq_tol(s.bodies[i].inv_mass, 1 / (4.0 / 3.0 * CONE_PI * 0.125), 1e-12);
    ck_assert_msg(clcone_scene_to_local(&s, &p, &err) == CLCONE_OK, "%s", err.msg);
    check_W(&s, &p, 0);
    clcone_problem_free(&p);
    clcone_scene_free(&s);
}
END_TEST

/* A two-sphere scene on the ground, broken one way at a time. */
static void expect_invalid(void (*breaker)(clcone_scene *), const char *want1, const char *want2)
{
    clcone_scene s;
    clcone_problem p;
    clcone_error err;
    ck_assert_int_eq(clc_gen_grid(1, 2, 0.5, 0.01, &s, &err), CLCONE_OK);
    ck_assert_int_eq(clcone_scene_validate(&s, &err), CLCONE_OK);
    breaker(&s);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(clcone_scene_validate(&s, &err), CLCONE_EINVAL);
    ck_assert_int_eq(err.code, CLCONE_EINVAL);
    ck_assert_msg(strstr(err.msg, want1) && strstr(err.msg, want2), "message: %s", err.msg);
    /* conversion refuses the same scene and leaves p empty */
    ck_assert_int_eq(clcone_scene_to_local(&s, &p, &err), CLCONE_EINVAL);
    ck_assert_ptr_null(p.row_ptr);
    clcone_scene_free(&s);
}

static void break_a_range(clcone_scene *s) { s->contacts[1].a = 2; }
static void break_b_range(clcone_scene *s) { s->contacts[0].b = -2; }
static void break_self(clcone_scene *s) { s->contacts[1].b = s->contacts[1].a; }
static void break_normal(clcone_scene *s) { s->contacts[1].normal[2] = 1.01; }
static void break_mu(clcone_scene *s) { s->contacts[1].mu = -0.1; }
static void break_inv_mass(clcone_scene *s) { s->bodies[1].inv_mass = NAN; }
static void break_static(clcone_scene *s)
{
    s->bodies[0].inv_mass = 0;
    memset(s->bodies[0].inv_inertia, 0, sizeof s->bodies[0].inv_inertia);
}
static void break_inertia(clcone_scene *s) { s->bodies[1].inv_inertia[1] = 3; }
static void break_point(clcone_scene *s) { s->contacts[1].point[0] = INFINITY; }

START_TEST(validation_messages)
{
    expect_invalid(break_a_range, "contact 1", "out of range");
    expect_invalid(break_b_range, "contact 0", "out of range");
    expect_invalid(break_self, "contact 1", "itself");
    expect_invalid(break_normal, "contact 1", "length");
    expect_invalid(break_mu, "contact 1", "mu");
    expect_invalid(break_inv_mass, "body 1", "inverse mass");
    expect_invalid(break_static, "contact 0", "both ends static");
    expect_invalid(break_inertia, "body 1", "symmetric");
    expect_invalid(break_point, "contact 1", "point");
    {
        clcone_error err;
        clcone_scene bad = {2, 1, NULL, NULL};
        ck_assert_int_eq(clcone_scene_validate(&bad, &err), CLCONE_EINVAL);
        ck_assert_int_eq(clcone_scene_validate(NULL, &err), CLCONE_EINVAL);
        bad.nbodies = -1;
        ck_assert_int_eq(clcone_scene_validate(&bad, &err), CLCONE_EINVAL);
    }
}
END_TEST

static void expect_gen_error(clcone_status st, const clcone_scene *s, const clcone_error *err,
                             const char *want)
{
    ck_assert_int_eq(st, CLCONE_EINVAL);
    ck_assert_msg(strstr(err->msg, want), "message: %s", err->msg);
    ck_assert_ptr_null(s->bodies);
    ck_assert_ptr_null(s->contacts);
    ck_assert_int_eq(s->nbodies, 0);
}

START_TEST(generator_arguments)
{
    clcone_scene s;
    clcone_error err;
    clcone_status st;
    st = clc_gen_stack(0, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "boxes");
    st = clc_gen_stack(3, -1, 0.01, &s, &err); expect_gen_error(st, &s, &err, "mu");
    st = clc_gen_stack(3, NAN, 0.01, &s, &err); expect_gen_error(st, &s, &err, "mu");
    st = clc_gen_stack(3, 0.5, 0, &s, &err); expect_gen_error(st, &s, &err, "dt");
    st = clc_gen_stack(3, 0.5, INFINITY, &s, &err); expect_gen_error(st, &s, &err, "dt");
    st = clc_gen_stack(1 << 30, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "too large");
    st = clc_gen_pile(0, 0.5, 0.01, 0.1, 1, &s, &err); expect_gen_error(st, &s, &err, "spheres");
    st = clc_gen_pile(10, 0.5, 0.01, 0.5, 1, &s, &err); expect_gen_error(st, &s, &err, "spread");
    st = clc_gen_pile(10, 0.5, 0.01, -0.1, 1, &s, &err); expect_gen_error(st, &s, &err, "spread");
    st = clc_gen_pile(10, 0.5, 0.01, NAN, 1, &s, &err); expect_gen_error(st, &s, &err, "spread");
    st = clc_gen_pile(10, 0.5, -1, 0.1, 1, &s, &err); expect_gen_error(st, &s, &err, "dt");
    st = clc_gen_pile(1 << 30, 0.5, 0.01, 0.1, 1, &s, &err); expect_gen_error(st, &s, &err, "too large");
    st = clc_gen_grid(0, 3, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "L >= 1");
    st = clc_gen_grid(3, 0, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "H >= 1");
    st = clc_gen_grid(3, 3, -2, 0.01, &s, &err); expect_gen_error(st, &s, &err, "mu");
    st = clc_gen_grid(100000, 100000, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "too large");
    st = clc_gen_grid(10000, 1, 0.5, 0.01, &s, &err); expect_gen_error(st, &s, &err, "too large");
}
END_TEST

START_TEST(single_sphere_pile_and_empty_scene)
{
    clcone_scene s, empty = {0, 0, NULL, NULL};
    clcone_problem p;
    clcone_error err;
    ck_assert_msg(clc_gen_pile(1, 0.5, 0.01, 0.2, 9, &s, &err) == CLCONE_OK, "%s", err.msg);
    check_pile(&s, 1);
    clcone_scene_free(&s);
    clcone_scene_free(&s); /* idempotent */
    ck_assert_msg(clcone_scene_to_local(&empty, &p, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(p.n, 0);
    clcone_problem_free(&p);
}
END_TEST

Suite *suite_scene(void)
{
    Suite *s = suite_create("scene");
    TCase *tc = tcase_create("scene");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, frame_orthonormal_and_rule);
    tcase_add_test(tc, sphere_on_plane_analytic);
    tcase_add_test(tc, two_bodies_against_mechanics);
    tcase_add_test(tc, pinned_body_is_not_static);
    tcase_add_test(tc, impulses_consistent_with_W);
    tcase_add_test(tc, W_symmetric_psd_on_generated);
    tcase_add_test(tc, stack_carries_its_weight);
    tcase_add_test(tc, pile_geometry);
    tcase_add_test(tc, pile_equal_radii_is_fcc);
    tcase_add_test(tc, grid_layout);
    tcase_add_test(tc, validation_messages);
    tcase_add_test(tc, generator_arguments);
    tcase_add_test(tc, single_sphere_pile_and_empty_scene);
    suite_add_tcase(s, tc);
    return s;
}
