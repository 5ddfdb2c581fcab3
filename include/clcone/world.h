/* clcone public API: worlds (shapes, planes), generators, scene files, contact detection. */
#ifndef CLCONE_API_WORLD_H
#define CLCONE_API_WORLD_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A world: a scene with shapes, static planes, gravity, dt and mu. s.bodies[i].v is the CURRENT
 * velocity (not v*); inv_mass, inv_inertia follow from the shape (uniform solid,
 * clcone_world_update_inertia); s.contacts are those at the current positions. */
typedef enum clcone_shape_kind {
    CLCONE_SHAPE_SPHERE = 0,  /* size[0] = radius, size[1..2] = 0 */
    CLCONE_SHAPE_BOX          /* size = half extents along the body axes */
} clcone_shape_kind;

typedef struct clcone_shape {
    clcone_shape_kind kind;
    double size[3];
    double quat[4];     /* orientation (w, x, y, z), body to world, unit */
    double mass;        /* > 0, or 0 = static (never moves) */
} clcone_shape;

/* Static half-space: points x with normal . x >= offset are free. */
typedef struct clcone_plane {
    double normal[3];   /* unit */
    double offset;
} clcone_plane;

typedef struct clcone_world {
    clcone_scene s;
    clcone_shape *shapes;   /* s.nbodies */
    int nplanes;
    clcone_plane *planes;
    double gravity[3];
    double dt;              /* time step (> 0) */
    double mu;              /* friction of every detected contact */
} clcone_world;

CLCONE_API void clcone_world_free(clcone_world *w);
/* Shapes (positive finite sizes, unit quaternion within 1e-6, mass >= 0), planes, gravity, dt, mu, scene. */
CLCONE_API clcone_status clcone_world_validate(const clcone_world *w, clcone_error *err);
/* inv_mass and world-frame inv_inertia from shape, mass and orientation. */
CLCONE_API void clcone_world_update_inertia(clcone_world *w);
/* The contact problem now: a scene of copies (free with clcone_scene_free) whose moving bodies
 * carry v* = v + dt g. */
CLCONE_API clcone_status clcone_world_contact_scene(const clcone_world *w, clcone_scene *s,
                                         clcone_error *err);
/* 0.5 (m |v|^2 + w^T I w) over the moving bodies, v 6 per body (NULL: the bodies' own). */
CLCONE_API double clcone_world_kinetic_energy(const clcone_world *w, const double *v);

/* Generators (docs/cli.md): bodies at rest in contact, g = (0, 0, -9.81), deterministic per seed.
 * pile: ~n spheres in a box; stack: n unit boxes; wall: a brick pyramid, n at the bottom;
 * grid: n^3 spheres; incline: a unit box on a plane tilted by theta about y (no n). */
typedef struct clcone_gen_params {
    int n;
    double mu;          /* default 0.5 */
    double dt;          /* default 0.01 */
    double spread;      /* pile: radius spread in [0, 0.5) (default 0.1) */
    double theta;       /* incline: slope angle in [0, pi/2) (default 0.3) */
    unsigned seed;      /* pile (default 1) */
} clcone_gen_params;

CLCONE_API void clcone_gen_params_default(clcone_gen_params *p);
/* name: pile, stack, wall, grid or incline. */
CLCONE_API clcone_status clcone_world_generate(const char *name, const clcone_gen_params *p,
                                    clcone_world *w, clcone_error *err);
/* Bits of `given`: generator parameters set explicitly; mu and dt apply to all. */
enum {
    CLCONE_GEN_GIVEN_N = 1,
    CLCONE_GEN_GIVEN_SEED = 2,
    CLCONE_GEN_GIVEN_SPREAD = 4,
    CLCONE_GEN_GIVEN_THETA = 8
};
/* CLCONE_EINVAL, the message starting with the parameter's name, for n missing (all but incline)
 * or one `name` does not use (n: all but incline; seed, spread: pile; theta: incline).
 * Names and values are checked by clcone_world_generate. */
CLCONE_API clcone_status clcone_gen_check_given(const char *name, unsigned given, clcone_error *err);

/* Scene files (docs/formats.md section 9), %.17g: an exact round trip, written atomically.
 * Reading validates all, naming a bad value's line; malformed content is CLCONE_EFORMAT. */
CLCONE_API clcone_status clcone_read_world(const char *path, clcone_world *w, clcone_error *err);
CLCONE_API clcone_status clcone_write_world(const char *path, const clcone_world *w, clcone_error *err);
/* 1: a scene file (its first non-blank, non-comment line is the signature), 0: not, -1:
 * unreadable. It reads the file (a pipe is spent): clcone_read_input takes any input. */
CLCONE_API int clcone_is_world_file(const char *path);

/* A scene file or a .dat problem, told apart by content in one pass (a pipe works); FCLib HDF5
 * is CLCONE_ENOTSUP (see <clcone/output.h>). Exactly one of problem and world is filled. */
typedef struct clcone_input {
    int is_world;           /* 1: world holds the scene; 0: problem is set */
    clcone_problem problem;
    clcone_world world;
} clcone_input;
CLCONE_API clcone_status clcone_read_input(const char *path, clcone_input *in, clcone_error *err);
CLCONE_API void clcone_input_free(clcone_input *in);

/* Replaces w->s.contacts by those of pairs closer than margin (spheres, boxes, planes; no
 * edge-edge contacts of crossed boxes). keys (optional, *keys malloc'ed, one a contact): body
 * pair and feature, to match contacts across steps. */
CLCONE_API clcone_status clcone_world_detect(clcone_world *w, double margin,
                                  unsigned long long **keys, clcone_error *err);

/* Legacy VTK polydata of the bodies and of the contacts (force = r / dt, world frame); r may be NULL. */
CLCONE_API clcone_status clcone_write_vtk(const char *bodies_path, const char *contacts_path,
                               const clcone_world *w, const double *r,
                               clcone_error *err);
/* ParaView collection of frames: files[k] at time times[k]. */
CLCONE_API clcone_status clcone_write_pvd(const char *path, int nframes,
                               const char *const *files, const double *times,
                               int parts, clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
