/* clcone public API: worlds (shapes, planes), generators, scene files, contact detection. */
#ifndef CLCONE_API_WORLD_H
#define CLCONE_API_WORLD_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A world is a body-form scene with what time stepping and drawing need:
 * each body's shape and orientation, static half-spaces (floor, walls,
 * slopes), gravity, the time step and the friction coefficient.
 *
 * s.bodies[i].v holds the CURRENT velocity of body i (not the free
 * velocity: clcone_world_contact_scene adds dt * gravity). inv_mass and
 * inv_inertia follow from the shape (uniform solid) and its orientation;
 * clcone_world_update_inertia recomputes them. s.contacts are the contacts
 * at the current positions (from a generator or clcone_world_detect). */
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
/* Checks shapes (positive finite sizes, unit quaternion within 1e-6,
 * mass >= 0), planes, gravity, dt, mu, and the scene. */
CLCONE_API clcone_status clcone_world_validate(const clcone_world *w, clcone_error *err);
/* inv_mass and world-frame inv_inertia from shape, mass and orientation. */
CLCONE_API void clcone_world_update_inertia(clcone_world *w);
/* The contact problem at the current state: a scene (own copies of the
 * bodies and contacts; free with clcone_scene_free) whose bodies carry
 * the free velocity v* = v + dt g (static bodies keep v). */
CLCONE_API clcone_status clcone_world_contact_scene(const clcone_world *w, clcone_scene *s,
                                         clcone_error *err);
/* Kinetic energy 0.5 (m |v|^2 + w^T I w) of the non-static bodies for
 * body velocities v (6 per body; NULL = the bodies' own v). */
CLCONE_API double clcone_world_kinetic_energy(const clcone_world *w, const double *v);

/* Generators, the library's one way to make a scene: a world whose
 * scene w.s holds bodies at rest in contact (contacts detected at the
 * generated state, gap ~ 0) with the free velocity of one time step dt
 * under gravity g = (0, 0, -9.81), v* = v + dt g, deterministic for a
 * given seed; the world adds the shapes and the container.
 *  pile:    about n spheres in a box container (spread = radius spread);
 *  stack:   n unit boxes on the ground;
 *  wall:    a pyramid of bricks (1 x 0.5 x 0.5) with n in the bottom row;
 *  grid:    n x n x n spheres;
 *  incline: one unit box resting on a plane tilted by theta (radians)
 *           about the y axis (it takes no n: clcone_gen_check_given).
 * Bodies start at rest with contacts at the generated state. */
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
/* The generator parameters a caller set explicitly (`clcone gen`'s
 * flags, Python's keywords), as bits of `given`; mu and dt apply to all. */
enum {
    CLCONE_GEN_GIVEN_N = 1,
    CLCONE_GEN_GIVEN_SEED = 2,
    CLCONE_GEN_GIVEN_SPREAD = 4,
    CLCONE_GEN_GIVEN_THETA = 8
};
/* The one rule for generator parameters, which the CLI and the Python
 * package share: CLCONE_EINVAL for n missing where it is the size (every
 * generator but incline) and for a parameter given that generator `name`
 * does not use (n: not incline; seed and spread: pile; theta: incline).
 * The message starts with the parameter's name ("seed does not apply:
 * only pile uses it, not stack"). Names and values are checked by
 * clcone_world_generate (an unknown name passes here). */
CLCONE_API clcone_status clcone_gen_check_given(const char *name, unsigned given, clcone_error *err);

/* Scene files (format in README "Scene files"): text, first line
 * "clcone-scene 1", %.17g values, so a write/read round trip is exact.
 * Reading validates everything and names the line of a bad value;
 * truncated or malformed content gives CLCONE_EFORMAT. Written atomically. */
CLCONE_API clcone_status clcone_read_world(const char *path, clcone_world *w, clcone_error *err);
CLCONE_API clcone_status clcone_write_world(const char *path, const clcone_world *w, clcone_error *err);
/* Whether the file is a scene file (1: its first line that is neither
 * blank nor a comment starts with the signature), not (0); -1 when it
 * cannot be read. It reads the file: a pipe is spent after it, so
 * clcone_read_input is the way to take any input. */
CLCONE_API int clcone_is_world_file(const char *path);

/* Everything `clcone solve` takes, told apart by content and read in one
 * pass over the file, so a pipe (/dev/stdin) works: a scene file (as
 * clcone_is_world_file decides) or a Siconos .dat problem; an FCLib HDF5
 * problem (the signature) is CLCONE_ENOTSUP here, read by
 * clcone_read_input_hdf5 of libclcone_output (<clcone/output.h>).
 * Exactly one of problem and world is filled. */
typedef struct clcone_input {
    int is_world;           /* 1: world holds the scene; 0: problem is set */
    clcone_problem problem;
    clcone_world world;
} clcone_input;
CLCONE_API clcone_status clcone_read_input(const char *path, clcone_input *in, clcone_error *err);
CLCONE_API void clcone_input_free(clcone_input *in);

/* Replaces w->s.contacts by the contacts of the current positions:
 * sphere-sphere, sphere-plane, box-plane, box-sphere and box-box (face
 * clipping; edge-edge contacts of crossed boxes are not generated), every
 * pair closer than `margin`. keys (optional, *keys malloc'ed, one per
 * contact) identify a contact across steps: body pair and feature. */
CLCONE_API clcone_status clcone_world_detect(clcone_world *w, double margin,
                                  unsigned long long **keys, clcone_error *err);

/* VTK output. Forces are impulses r / dt. */
/* Legacy VTK polydata of the bodies (points at the centres; point data
 * velocity, angular_velocity, size, orientation, shape, contact_force)
 * and of the contacts (a second file: force = r / dt in world
 * coordinates, normal, gap). r may be NULL. */
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
