/* World internals shared by the world, generator, collision, stepping and
 * output sources: rotations, shape inertia and allocation. */
#ifndef CLCONE_WORLD_PARTS_H
#define CLCONE_WORLD_PARTS_H

#include <clcone/clcone.h>


/* Rotation matrix (row-major, body to world) of a unit quaternion
 * (w, x, y, z). */
void clcone_quat_to_mat(const double q[4], double R[9]);
/* q <- normalize(q + h/2 (0, omega) q): one explicit step of the
 * orientation under world angular velocity omega. */
void clcone_quat_integrate(double q[4], const double omega[3], double h);
/* Principal moments of inertia (body axes) of a uniform solid shape. */
void clcone_shape_inertia(const clcone_shape *sh, double I[3]);
/* Radius of the sphere about the centre that contains the shape. */
double clcone_shape_bound(const clcone_shape *sh);
/* World-frame corner k (bit 0: +x, 1: +y, 2: +z) of a box body. */
void clcone_box_corner(const clcone_body *b, const clcone_shape *sh, int k, double out[3]);

/* Per-item checks of clcone_world_validate (i names the item). */
clcone_status clcone_shape_validate(const clcone_shape *sh, int i, clcone_error *err);
clcone_status clcone_plane_validate(const clcone_plane *p, int i, clcone_error *err);
clcone_status clcone_world_settings_validate(const clcone_world *w, clcone_error *err);
/* inv_mass and world inverse inertia of one body from its shape. */
void clcone_body_set_mass(clcone_body *b, const clcone_shape *sh);

/* Per body, the sum of the magnitudes of the contact forces (r / dt) of
 * w->s.contacts acting on it (r NULL: zeros). */
void clcone_world_body_forces(const clcone_world *w, const double *r, double *f);
/* World-frame force (r_c / dt in the contact frame) of contact c on a. */
void clcone_contact_force(const clcone_world *w, const double *r, int c, double out[3]);

/* Allocates zeroed arrays (contacts may be 0); gravity (0, 0, -9.81),
 * dt 0.01, mu 0.5. On failure w is freed. */
clcone_status clcone_world_alloc(clcone_world *w, int nbodies, int ncontacts, int nplanes,
                                 clcone_error *err);

/* clcone_gen_pile, also returning each sphere's radius (n doubles,
 * caller-allocated) and the container's extent wx, wy (floor z = 0, walls
 * x = 0, wx and y = 0, wy). */
clcone_status clcone_gen_pile_ex(int n, double mu, double dt, double spread, unsigned seed,
                                 clcone_scene *s, double *radius, double box[2],
                                 clcone_error *err);

/* A scene file held in memory, read as clcone_read_world does; and whether
 * bytes are one: their first line that is neither blank nor a comment
 * starts with the scene signature. */
clcone_status clcone_parse_world(const char *name, const char *buf, size_t len,
                                 clcone_world *w, clcone_error *err);
int clcone_buf_is_world(const char *buf, size_t len);

#endif
