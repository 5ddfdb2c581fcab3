/* Body-form internals shared by the host (scene.c, scene_gen.c) and the code
 * that solves in body form. Contact c joins a (side 0, sign +1) and b (side 1,
 * sign -1, -1 the world); the conventions every user relies on, J, u and W,
 * are in docs/architecture.md. */
#ifndef CLCONE_BODY_FORM_H
#define CLCONE_BODY_FORM_H

#include <limits.h>

#include <clcone/clcone.h>

/* Contacts a scene may hold: more could not be converted to a local problem indexed by int. */
#define CLCONE_SCENE_MAX_CONTACTS (INT_MAX / 9)

/* Gravity along -z used by the generators (m/s^2). */
#define CLCONE_SCENE_GRAVITY 9.81

static inline double clc_dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = a x b; out may alias a or b. */
static inline void clc_cross3(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* Static: zero inverse mass AND zero inverse inertia (a pinned body free to turn is not). */
int clc_body_is_static(const clcone_body *b);

/* clcone_scene_validate's checks of one body or contact i, for readers to check items as they read. */
clcone_status clc_body_validate(const clcone_body *b, int i, clcone_error *err);
clcone_status clc_contact_validate(const clcone_scene *s, int i, clcone_error *err);

/* out = M^-1 f for a 6-vector f (linear, angular); out may alias f. */
void clc_body_inv_mass_apply(const clcone_body *b, const double f[6],
                                double out[6]);

/* Body of side 0 (a) or 1 (b, maybe -1: the world) of contact c. */
int clc_contact_body(const clcone_contact *c, int side);

/* J (3x6 row-major) of one side of contact c WITHOUT the side's sign (zeros for the world); no checks. */
void clc_contact_jacobian(const clcone_scene *s, int c, int side,
                             double J[18]);

/* Per-body contact lists (CSR), sign +1 side a, -1 side b; STATIC BODIES HAVE EMPTY LISTS (docs/architecture.md). */
typedef struct clc_body_csr {
    int nbodies;
    int *ptr;            /* nbodies + 1 */
    int *contact;        /* ptr[nbodies] */
    signed char *sign;   /* ptr[nbodies]: +1 side a, -1 side b */
} clc_body_csr;

/* Builds L by counting sort; the scene's indices must be valid (clcone_scene_validate). */
clcone_status clc_body_csr_build(const clcone_scene *s, clc_body_csr *L,
                                    clcone_error *err);
/* Frees the arrays and zeroes L; safe on a zeroed or already freed L. */
void clc_body_csr_free(clc_body_csr *L);

/* Each contact's (J v)_n at v (6 a body; NULL: the bodies' own): the soft model's v0. */
void clc_scene_normal_velocities(const clcone_scene *s, const double *v, double *vn);

/* What every body-form set-up takes from one contact: frame, per side body, arm, J, J M^-1 J', and W_cc. */
typedef struct clc_contact_sides {
    double frame[9];
    int body[2], moving[2];
    double arm[6], J[36], A[18], Wcc[9];
} clc_contact_sides;
void clc_contact_sides_of(const clcone_scene *s, int c, clc_contact_sides *cs);

#endif
