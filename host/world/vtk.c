/* ParaView output: legacy-VTK polydata, one file of bodies (vertices with
 * their data) and one of contacts per frame, and a .pvd collection that
 * makes the frames a time series. ASCII, so that a person can read it. */
#include "core/internal.h"
#include "io/outfile.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vtk_ctx {
    const clcone_world *w;
    const double *r;
    const double *force;  /* per body */
} vtk_ctx;

static void header(FILE *f, const char *title, int n)
{
    fprintf(f, "# vtk DataFile Version 3.0\n%s\nASCII\nDATASET POLYDATA\nPOINTS %d double\n", title, n);
}

static void vertices(FILE *f, int n)
{
    fprintf(f, "VERTICES %d %d\n", n, 2 * n);
    for (int i = 0; i < n; ++i) fprintf(f, "1 %d\n", i);
}

static int write_bodies(void *file, const void *ctx)
{
    FILE *f = file;
    const vtk_ctx *c = ctx;
    const clcone_world *w = c->w;
    int n = w->s.nbodies;
    header(f, "clcone bodies: velocity, angular_velocity, size, orientation, shape (0 sphere, 1 box), contact force",
           n);
    for (int i = 0; i < n; ++i) fprintf(f, "%.9g %.9g %.9g\n", w->s.bodies[i].x[0], w->s.bodies[i].x[1], w->s.bodies[i].x[2]);
    vertices(f, n);
    fprintf(f, "POINT_DATA %d\nVECTORS velocity double\n", n);
    for (int i = 0; i < n; ++i) fprintf(f, "%.9g %.9g %.9g\n", w->s.bodies[i].v[0], w->s.bodies[i].v[1], w->s.bodies[i].v[2]);
    fprintf(f, "VECTORS angular_velocity double\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%.9g %.9g %.9g\n", w->s.bodies[i].v[3], w->s.bodies[i].v[4], w->s.bodies[i].v[5]);
    /* spheres: radius in all three, so a Glyph scaled by it works */
    fprintf(f, "VECTORS size double\n");
    for (int i = 0; i < n; ++i) {
        const clcone_shape *sh = &w->shapes[i];
        int sp = sh->kind == CLCONE_SHAPE_SPHERE;
        fprintf(f, "%.9g %.9g %.9g\n", sh->size[0], sp ? sh->size[0] : sh->size[1], sp ? sh->size[0] : sh->size[2]);
    }
    fprintf(f, "SCALARS orientation double 4\nLOOKUP_TABLE default\n");
    for (int i = 0; i < n; ++i)
        fprintf(f, "%.9g %.9g %.9g %.9g\n", w->shapes[i].quat[0], w->shapes[i].quat[1], w->shapes[i].quat[2],
                w->shapes[i].quat[3]);
    fprintf(f, "SCALARS shape int 1\nLOOKUP_TABLE default\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%d\n", (int)w->shapes[i].kind);
    fprintf(f, "SCALARS contact_force double 1\nLOOKUP_TABLE default\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%.9g\n", c->force[i]);
    return ferror(f) ? -1 : 0;
}

static int write_contacts(void *file, const void *ctx)
{
    FILE *f = file;
    const vtk_ctx *c = ctx;
    const clcone_world *w = c->w;
    int n = w->s.ncontacts;
    header(f, "clcone contacts: force (on body a, world frame), normal, gap", n);
    for (int i = 0; i < n; ++i)
        fprintf(f, "%.9g %.9g %.9g\n", w->s.contacts[i].point[0], w->s.contacts[i].point[1], w->s.contacts[i].point[2]);
    vertices(f, n);
    fprintf(f, "POINT_DATA %d\nVECTORS force double\n", n);
    for (int i = 0; i < n; ++i) {
        double F[3] = {0, 0, 0};
        if (c->r) clc_contact_force(w, c->r, i, F);
        fprintf(f, "%.9g %.9g %.9g\n", F[0], F[1], F[2]);
    }
    fprintf(f, "VECTORS normal double\n");
    for (int i = 0; i < n; ++i)
        fprintf(f, "%.9g %.9g %.9g\n", w->s.contacts[i].normal[0], w->s.contacts[i].normal[1], w->s.contacts[i].normal[2]);
    fprintf(f, "SCALARS gap double 1\nLOOKUP_TABLE default\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%.9g\n", w->s.contacts[i].gap);
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_write_vtk(const char *bodies_path, const char *contacts_path, const clcone_world *w,
                               const double *r, clcone_error *err)
{
    CLCONE_REQUIRE(err, bodies_path);
    CLCONE_REQUIRE(err, contacts_path);
    CLCONE_REQUIRE(err, w);
    vtk_ctx c;
    clcone_status st;
    double *force = clc_calloc((size_t)w->s.nbodies + 1, sizeof *force, err, "body forces");
    if (!force) return CLCONE_ENOMEM;
    clc_world_body_forces(w, r, force);
    c.w = w;
    c.r = r;
    c.force = force;
    st = clc_write_atomic(bodies_path, write_bodies, &c, err);
    if (!st && contacts_path) st = clc_write_atomic(contacts_path, write_contacts, &c, err);
    free(force);
    return st;
}

typedef struct pvd_ctx {
    int nframes, parts;
    const char *const *files;
    const double *times;
} pvd_ctx;

static int write_pvd(void *file, const void *ctx)
{
    FILE *f = file;
    const pvd_ctx *c = ctx;
    fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n");
    for (int k = 0; k < c->nframes; ++k)
        for (int p = 0; p < c->parts; ++p)
            fprintf(f, "    <DataSet timestep=\"%.9g\" part=\"%d\" file=\"%s\"/>\n", c->times[k], p,
                    c->files[(size_t)k * (size_t)c->parts + (size_t)p]);
    fprintf(f, "  </Collection>\n</VTKFile>\n");
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_write_pvd(const char *path, int nframes, const char *const *files, const double *times, int parts,
                               clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, files);
    CLCONE_REQUIRE(err, times);
    pvd_ctx c;
    if (nframes < 0 || parts < 1) return clc_fail(err, CLCONE_EINVAL, "%s: %d frames of %d parts", path, nframes, parts);
    for (int k = 0; k < nframes * parts; ++k)
        if (!files[k])
            return clc_fail(err, CLCONE_EINVAL, "%s: frame %d's file name %d is NULL", path, k / parts, k % parts);
        else if (strpbrk(files[k], "<>&\"'"))
            return clc_fail(err, CLCONE_EINVAL, "%s: frame file name '%s' needs XML escaping", path, files[k]);
    c.nframes = nframes;
    c.parts = parts;
    c.files = files;
    c.times = times;
    return clc_write_atomic(path, write_pvd, &c, err);
}
