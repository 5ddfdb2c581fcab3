/* World internals shared by the world, generator, collision, stepping and
 * output sources: rotations, shape inertia and allocation. */
#ifndef CLCONE_WORLD_PARTS_H
#define CLCONE_WORLD_PARTS_H

#include <clcone/ext.h>


/* Rotation matrix (row-major, body to world) of a unit quaternion (w, x, y, z). */
void clc_quat_to_mat(const double q[4], double R[9]);
/* Principal moments of inertia (body axes) of a uniform solid shape. */
void clc_shape_inertia(const clcone_shape *sh, double I[3]);
/* World-frame corner k (bit 0: +x, 1: +y, 2: +z) of a box body. */
void clc_box_corner(const clcone_body *b, const clcone_shape *sh, int k, double out[3]);

/* Per-item checks of clcone_world_validate (i names the item). */
clcone_status clc_shape_validate(const clcone_shape *sh, int i, clcone_error *err);
clcone_status clc_plane_validate(const clcone_plane *p, int i, clcone_error *err);
clcone_status clc_world_settings_validate(const clcone_world *w, clcone_error *err);
/* inv_mass and world inverse inertia of one body from its shape. */
void clc_body_set_mass(clcone_body *b, const clcone_shape *sh);

/* Per body, the summed magnitudes of its contact forces r / dt (r NULL: zeros). */
void clc_world_body_forces(const clcone_world *w, const double *r, double *f);
/* World-frame force (r_c / dt in the contact frame) of contact c on a. */
void clc_contact_force(const clcone_world *w, const double *r, int c, double out[3]);

/* Allocates zeroed arrays with default settings (docs/architecture.md); on failure w is freed. */
clcone_status clc_world_alloc(clcone_world *w, int nbodies, int ncontacts, int nplanes,
                                 clcone_error *err);

/* The generators' argument checks: mu >= 0, dt > 0, at most a million bodies (what names the scene). */
clcone_status clc_gen_check_mu_dt(double mu, double dt, clcone_error *err);
clcone_status clc_gen_size_check(const char *what, double bodies, clcone_error *err);

/* The generators behind clcone_world_generate, for sizes it lacks: bodies at rest, deterministic by seed. */
/* A tower of k unit boxes on the ground, 4 corner contacts an interface. */
clcone_status clc_gen_stack(int k, double mu, double dt, clcone_scene *s,
                               clcone_error *err);
/* About n spheres (radius 0.5 +- spread) packed in a static box container. */
clcone_status clc_gen_pile(int n, double mu, double dt, double spread,
                              unsigned seed, clcone_scene *s,
                              clcone_error *err);
/* L x L x H spheres of radius 0.5 in a cubic lattice on the ground: about 3 L^2 H contacts. */
clcone_status clc_gen_grid(int L, int H, double mu, double dt,
                              clcone_scene *s, clcone_error *err);

/* clc_gen_pile, also each sphere's radius (caller's n doubles) and the container's extent wx, wy. */
clcone_status clc_gen_pile_ex(int n, double mu, double dt, double spread, unsigned seed,
                                 clcone_scene *s, double *radius, double box[2],
                                 clcone_error *err);

/* A scene file in memory, read as clcone_read_world does. */
clcone_status clc_parse_world(const char *name, const char *buf, size_t len,
                                 clcone_world *w, clcone_error *err);

#endif
