/* A MuJoCo state drawn by clcone's renderer (mujoco/picture.h). */
#include "mujoco/picture.h"
#include <clcone/output.h>

#include "core/internal.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A capsule's spheres are this fraction of its radius apart: the row
 * reads as a capsule, and a long thin one is capped at CAPSULE_MAX. */
#define CAPSULE_STEP 0.5
#define CAPSULE_MAX 64

/* Shapes geom g becomes (0: none, a plane, or a kind left out). */
static int geom_shapes(const mjModel *m, int g)
{
    switch (m->geom_type[g]) {
    case mjGEOM_CAPSULE: {
        double r = m->geom_size[3 * g], h = m->geom_size[3 * g + 1];
        int n = 1 + (int)ceil(2 * h / (CAPSULE_STEP * r));
        return n < CAPSULE_MAX ? n : CAPSULE_MAX;
    }
    case mjGEOM_SPHERE:
    case mjGEOM_BOX:
    case mjGEOM_CYLINDER:
    case mjGEOM_ELLIPSOID:
    case mjGEOM_MESH:
        return 1;
    default:
        return 0;
    }
}

/* Body i of w: at x, a sphere of radius r (box: half extents he, oriented
 * as the geom's xmat), moving unless stat. */
static void put_shape(clcone_world *w, int i, const double x[3], const double *he, int box, const double *xmat,
                      int stat)
{
    clcone_shape *sh = &w->shapes[i];
    sh->kind = box ? CLCONE_SHAPE_BOX : CLCONE_SHAPE_SPHERE;
    /* a flat mesh or box still has a size to draw */
    for (int k = 0; k < (box ? 3 : 1); ++k) sh->size[k] = fmax(he[k], 1e-6);
    sh->quat[0] = 1;
    if (box) mju_mat2Quat(sh->quat, xmat);
    sh->mass = stat ? 0 : 1;
    memcpy(w->s.bodies[i].x, x, 3 * sizeof *x);
    clc_body_set_mass(&w->s.bodies[i], sh);
}

/* Geom g's shapes from body index at (first[g] = at). */
static void add_geom(const mjModel *m, const mjData *d, int g, int at, clcone_world *w)
{
    const double *x = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g, *s = m->geom_size + 3 * g;
    int stat = m->geom_bodyid[g] == 0, n = geom_shapes(m, g);
    double c[3], he[3];
    switch (m->geom_type[g]) {
    case mjGEOM_CAPSULE:
        for (int j = 0; j < n; ++j) {
            double t = n > 1 ? -s[1] + 2 * s[1] * j / (n - 1) : 0;
            for (int k = 0; k < 3; ++k) c[k] = x[k] + t * R[3 * k + 2];
            put_shape(w, at + j, c, s, 0, R, stat);
        }
        return;
    case mjGEOM_SPHERE:
        put_shape(w, at, x, s, 0, R, stat);
        return;
    case mjGEOM_CYLINDER:
        he[0] = he[1] = s[0];
        he[2] = s[1];
        put_shape(w, at, x, he, 1, R, stat);
        return;
    case mjGEOM_MESH: { /* the bounding box: its centre in the geom's frame */
        const double *aabb = m->geom_aabb + 6 * g;
        for (int k = 0; k < 3; ++k) c[k] = x[k] + R[3 * k] * aabb[0] + R[3 * k + 1] * aabb[1] + R[3 * k + 2] * aabb[2];
        put_shape(w, at, c, aabb + 3, 1, R, stat);
        return;
    }
    default: /* box, ellipsoid */
        put_shape(w, at, x, s, 1, R, stat);
    }
}

static double dist2(const double a[3], const double b[3])
{
    return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}

/* The shape of geom g nearest the point p (a capsule's sphere there), or
 * -1 when g has none. */
static int contact_shape(const mjModel *m, const clcone_world *w, const int *first, int g, const double p[3])
{
    int best = first[g];
    for (int j = 1; best >= 0 && j < geom_shapes(m, g); ++j)
        if (dist2(w->s.bodies[first[g] + j].x, p) < dist2(w->s.bodies[best].x, p)) best = first[g] + j;
    return best;
}

/* MuJoCo's contacts between drawn shapes as w's contacts, with their
 * impulses (force x dt, so that the renderer's r / dt is the force) in
 * r; *nc of them. */
static void add_contacts(const mjModel *m, const mjData *d, const int *first, clcone_world *w, double *r, int *nc)
{
    *nc = 0;
    for (int i = 0; i < d->ncon; ++i) {
        const mjContact *con = &d->contact[i];
        int a = contact_shape(m, w, first, con->geom[1], con->pos), b = contact_shape(m, w, first, con->geom[0], con->pos);
        double f[6], sign = 1; /* MuJoCo's normal points from geom[0] to geom[1]: from b to a */
        if (a < 0 || clc_body_is_static(&w->s.bodies[a])) {
            int t = a;
            a = b;
            b = t;
            sign = -1;
        }
        if (a < 0 || clc_body_is_static(&w->s.bodies[a]) || con->efc_address < 0) continue;
        mj_contactForce(m, d, i, f);
        w->s.contacts[*nc] = (clcone_contact){.a = a, .b = b};
        memcpy(w->s.contacts[*nc].point, con->pos, sizeof con->pos);
        for (int k = 0; k < 3; ++k) w->s.contacts[*nc].normal[k] = sign * con->frame[k];
        w->s.contacts[*nc].mu = con->friction[0];
        for (int k = 0; k < 3; ++k) r[3 * *nc + k] = f[k] * m->opt.timestep;
        ++*nc;
    }
}

clcone_status clc_mj_render_png(const mjModel *m, const mjData *d, const char *path, int width, int height,
                                   const char *title, clcone_error *err)
{
    clcone_world w;
    clcone_status s;
    int nb = 0, np = 0, nc;
    int *first = clc_calloc((size_t)m->ngeom + 1, sizeof *first, err, "the picture's geoms");
    double *r = first ? clc_calloc(3 * (size_t)d->ncon + 1, sizeof *r, err, "the picture's forces") : NULL;
    if (!r) {
        free(first);
        return CLCONE_ENOMEM;
    }
    for (int g = 0; g < (int)m->ngeom; ++g) {
        first[g] = geom_shapes(m, g) ? nb : -1;
        nb += geom_shapes(m, g);
        np += m->geom_type[g] == mjGEOM_PLANE;
    }
    if ((s = clc_world_alloc(&w, nb, d->ncon, np, err))) {
        free(first);
        free(r);
        return s;
    }
    np = 0;
    for (int g = 0; g < (int)m->ngeom; ++g) {
        if (m->geom_type[g] == mjGEOM_PLANE) { /* its z axis out of it */
            const double *R = d->geom_xmat + 9 * g, *x = d->geom_xpos + 3 * g;
            clcone_plane *p = &w.planes[np++];
            for (int k = 0; k < 3; ++k) p->normal[k] = R[3 * k + 2];
            p->offset = p->normal[0] * x[0] + p->normal[1] * x[1] + p->normal[2] * x[2];
        } else if (first[g] >= 0)
            add_geom(m, d, g, first[g], &w);
    }
    add_contacts(m, d, first, &w, r, &nc);
    w.s.ncontacts = nc;
    for (int k = 0; k < 3; ++k) w.gravity[k] = m->opt.gravity[k];
    w.dt = m->opt.timestep;
    s = clcone_render_png(path, &w, r, width, height, title, err);
    clcone_world_free(&w);
    free(first);
    free(r);
    return s;
}
