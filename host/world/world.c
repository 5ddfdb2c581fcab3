/* Worlds: bodies with shapes and orientations, static planes, gravity.
 * The mass properties of the body form are derived here from the shapes,
 * so that a file or a generator cannot make them disagree. */
#include "core/internal.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QUAT_TOL 1e-6
#define NORMAL_TOL 1e-6

void clc_quat_to_mat(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = 1 - 2 * (x * x + y * y);
}

void clc_shape_inertia(const clcone_shape *sh, double I[3])
{
    double m = sh->mass;
    if (sh->kind == CLCONE_SHAPE_SPHERE) {
        I[0] = I[1] = I[2] = 0.4 * m * sh->size[0] * sh->size[0];
    } else {
        /* full edge lengths are 2 size[k]: m (b^2 + c^2) / 12 */
        double x2 = sh->size[0] * sh->size[0], y2 = sh->size[1] * sh->size[1], z2 = sh->size[2] * sh->size[2];
        I[0] = m * (y2 + z2) / 3.0;
        I[1] = m * (x2 + z2) / 3.0;
        I[2] = m * (x2 + y2) / 3.0;
    }
}

double clcone_shape_bound(const clcone_shape *sh)
{
    if (sh->kind == CLCONE_SHAPE_SPHERE) return sh->size[0];
    return sqrt(sh->size[0] * sh->size[0] + sh->size[1] * sh->size[1] + sh->size[2] * sh->size[2]);
}

void clc_box_corner(const clcone_body *b, const clcone_shape *sh, int k, double out[3])
{
    double R[9], l[3];
    clc_quat_to_mat(sh->quat, R);
    for (int i = 0; i < 3; ++i) l[i] = (k >> i & 1 ? 1.0 : -1.0) * sh->size[i];
    for (int i = 0; i < 3; ++i) out[i] = b->x[i] + R[3 * i] * l[0] + R[3 * i + 1] * l[1] + R[3 * i + 2] * l[2];
}

void clcone_world_free(clcone_world *w)
{
    if (!w) return;
    clcone_scene_free(&w->s);
    free(w->shapes);
    free(w->planes);
    memset(w, 0, sizeof *w);
}

clcone_status clc_world_alloc(clcone_world *w, int nbodies, int ncontacts, int nplanes, clcone_error *err)
{
    memset(w, 0, sizeof *w);
    if (nbodies < 0 || ncontacts < 0 || nplanes < 0 || ncontacts > CLCONE_SCENE_MAX_CONTACTS)
        return clc_fail(err, CLCONE_EINVAL, "world of %d bodies, %d contacts, %d planes: sizes out of range",
                           nbodies, ncontacts, nplanes);
    w->s.bodies = clc_calloc((size_t)nbodies + 1, sizeof *w->s.bodies, err, "world bodies");
    w->shapes = w->s.bodies ? clc_calloc((size_t)nbodies + 1, sizeof *w->shapes, err, "world shapes") : NULL;
    w->s.contacts = w->shapes ? clc_calloc((size_t)ncontacts + 1, sizeof *w->s.contacts, err, "world contacts")
                              : NULL;
    w->planes = w->s.contacts ? clc_calloc((size_t)nplanes + 1, sizeof *w->planes, err, "world planes") : NULL;
    if (!w->planes) {
        clcone_world_free(w);
        return CLCONE_ENOMEM;
    }
    w->s.nbodies = nbodies;
    w->s.ncontacts = ncontacts;
    w->nplanes = nplanes;
    w->gravity[2] = -CLCONE_SCENE_GRAVITY;
    w->dt = 0.01;
    w->mu = 0.5;
    return CLCONE_OK;
}

void clc_body_set_mass(clcone_body *b, const clcone_shape *sh)
{
    {
        double I[3], R[9];
        memset(b->inv_inertia, 0, sizeof b->inv_inertia);
        if (sh->mass == 0.0) {
            b->inv_mass = 0.0;
            return;
        }
        b->inv_mass = 1.0 / sh->mass;
        clc_shape_inertia(sh, I);
        clc_quat_to_mat(sh->quat, R);
        /* R diag(1/I) R^T */
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                double v = 0;
                for (int k = 0; k < 3; ++k) v += R[3 * r + k] * R[3 * c + k] / I[k];
                b->inv_inertia[3 * r + c] = v;
            }
        /* exact symmetry, whatever the rounding of the products */
        for (int r = 0; r < 3; ++r)
            for (int c = r + 1; c < 3; ++c) b->inv_inertia[3 * c + r] = b->inv_inertia[3 * r + c];
    }
}

void clcone_world_update_inertia(clcone_world *w)
{
    if (!w) return;
    for (int i = 0; i < w->s.nbodies; ++i) clc_body_set_mass(&w->s.bodies[i], &w->shapes[i]);
}

static int finite_n(const double *v, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

clcone_status clc_shape_validate(const clcone_shape *sh, int i, clcone_error *err)
{
    double qn;
    int nsize = sh->kind == CLCONE_SHAPE_SPHERE ? 1 : 3;
    if (sh->kind != CLCONE_SHAPE_SPHERE && sh->kind != CLCONE_SHAPE_BOX)
        return clc_fail(err, CLCONE_EINVAL, "body %d: unknown shape kind %d", i, (int)sh->kind);
    for (int k = 0; k < nsize; ++k)
        if (!isfinite(sh->size[k]) || !(sh->size[k] > 0))
            return clc_fail(err, CLCONE_EINVAL, "body %d: size %g must be finite and > 0", i, sh->size[k]);
    if (!finite_n(sh->quat, 4)) return clc_fail(err, CLCONE_EINVAL, "body %d: orientation is not finite", i);
    qn = sqrt(sh->quat[0] * sh->quat[0] + sh->quat[1] * sh->quat[1] + sh->quat[2] * sh->quat[2] +
              sh->quat[3] * sh->quat[3]);
    if (fabs(qn - 1) > QUAT_TOL)
        return clc_fail(err, CLCONE_EINVAL, "body %d: orientation quaternion has length %.9g, must be 1 within %g",
                           i, qn, QUAT_TOL);
    if (!isfinite(sh->mass) || sh->mass < 0)
        return clc_fail(err, CLCONE_EINVAL, "body %d: mass %g must be finite and >= 0 (0 = static)", i, sh->mass);
    return CLCONE_OK;
}

clcone_status clc_plane_validate(const clcone_plane *p, int i, clcone_error *err)
{
    if (!finite_n(p->normal, 3) || !isfinite(p->offset))
        return clc_fail(err, CLCONE_EINVAL, "plane %d: not finite", i);
    if (fabs(sqrt(clc_dot3(p->normal, p->normal)) - 1) > NORMAL_TOL)
        return clc_fail(err, CLCONE_EINVAL, "plane %d: normal (%g, %g, %g) is not a unit vector (within %g)", i,
                           p->normal[0], p->normal[1], p->normal[2], NORMAL_TOL);
    return CLCONE_OK;
}

clcone_status clc_world_settings_validate(const clcone_world *w, clcone_error *err)
{
    if (!finite_n(w->gravity, 3)) return clc_fail(err, CLCONE_EINVAL, "gravity is not finite");
    if (!isfinite(w->dt) || !(w->dt > 0))
        return clc_fail(err, CLCONE_EINVAL, "time step dt = %g must be finite and > 0", w->dt);
    if (!isfinite(w->mu) || w->mu < 0)
        return clc_fail(err, CLCONE_EINVAL, "friction mu = %g must be finite and >= 0", w->mu);
    return CLCONE_OK;
}

clcone_status clcone_world_validate(const clcone_world *w, clcone_error *err)
{
    CLCONE_REQUIRE(err, w);
    clcone_status st;
    if (!w) return clc_fail(err, CLCONE_EINVAL, "world is NULL");
    if ((st = clc_world_settings_validate(w, err))) return st;
    if (w->s.nbodies > 0 && !w->shapes) return clc_fail(err, CLCONE_EINVAL, "world has no shapes");
    for (int i = 0; i < w->s.nbodies; ++i)
        if ((st = clc_shape_validate(&w->shapes[i], i, err))) return st;
    for (int i = 0; i < w->nplanes; ++i)
        if ((st = clc_plane_validate(&w->planes[i], i, err))) return st;
    return clcone_scene_validate(&w->s, err);
}

clcone_status clcone_world_contact_scene(const clcone_world *w, clcone_scene *s, clcone_error *err)
{
    CLCONE_REQUIRE(err, w);
    CLCONE_REQUIRE(err, s);
    memset(s, 0, sizeof *s);
    s->bodies = clc_calloc((size_t)w->s.nbodies + 1, sizeof *s->bodies, err, "scene bodies");
    s->contacts = s->bodies ? clc_calloc((size_t)w->s.ncontacts + 1, sizeof *s->contacts, err, "scene contacts")
                            : NULL;
    if (!s->contacts) {
        clcone_scene_free(s);
        return CLCONE_ENOMEM;
    }
    s->nbodies = w->s.nbodies;
    s->ncontacts = w->s.ncontacts;
    memcpy(s->bodies, w->s.bodies, sizeof *s->bodies * (size_t)s->nbodies);
    memcpy(s->contacts, w->s.contacts, sizeof *s->contacts * (size_t)s->ncontacts);
    for (int i = 0; i < s->nbodies; ++i)
        if (!clc_body_is_static(&s->bodies[i]) && s->bodies[i].inv_mass > 0)
            for (int k = 0; k < 3; ++k) s->bodies[i].v[k] += w->dt * w->gravity[k];
    return CLCONE_OK;
}

void clcone_world_ke_terms(const clcone_world *w, int i, const double *v, double t[4])
{
    const clcone_shape *sh = &w->shapes[i];
    double I[3], R[9];
    memset(t, 0, 4 * sizeof *t);
    if (sh->mass == 0.0) return;
    clc_shape_inertia(sh, I);
    clc_quat_to_mat(sh->quat, R);
    t[0] = 0.5 * sh->mass * clc_dot3(v, v);
    /* angular velocity in body axes: R^T omega */
    for (int k = 0; k < 3; ++k) {
        double wb = R[k] * v[3] + R[3 + k] * v[4] + R[6 + k] * v[5];
        t[1 + k] = 0.5 * I[k] * wb * wb;
    }
}

double clcone_world_kinetic_energy(const clcone_world *w, const double *v)
{
    if (!w) return NAN;
    double e = 0;
    for (int i = 0; i < w->s.nbodies; ++i) {
        double t[4];
        if (w->shapes[i].mass == 0.0) continue;
        clcone_world_ke_terms(w, i, v ? v + 6 * (size_t)i : w->s.bodies[i].v, t);
        for (int k = 0; k < 4; ++k) e += t[k];
    }
    return e;
}

void clc_world_body_forces(const clcone_world *w, const double *r, double *f)
{
    memset(f, 0, sizeof *f * (size_t)w->s.nbodies);
    if (!r) return;
    for (int c = 0; c < w->s.ncontacts; ++c) {
        const double *rc = r + 3 * (size_t)c;
        double m = sqrt(rc[0] * rc[0] + rc[1] * rc[1] + rc[2] * rc[2]) / w->dt;
        f[w->s.contacts[c].a] += m;
        if (w->s.contacts[c].b >= 0) f[w->s.contacts[c].b] += m;
    }
}

void clc_contact_force(const clcone_world *w, const double *r, int c, double out[3])
{
    double F[9];
    const double *rc = r + 3 * (size_t)c;
    clcone_contact_frame(w->s.contacts[c].normal, F);
    for (int k = 0; k < 3; ++k) out[k] = (rc[0] * F[k] + rc[1] * F[3 + k] + rc[2] * F[6 + k]) / w->dt;
}
