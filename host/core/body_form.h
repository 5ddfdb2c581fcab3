/* Body-form internals shared by the host (scene.c, scene_gen.c) and the
 * code that solves in body form (the OpenCL body-form kernels' host side).
 *
 * Conventions, restated because every user of this header depends on them:
 *  - Contact c joins body a = contacts[c].a (side 0, sign +1) and body
 *    b = contacts[c].b (side 1, sign -1); b = -1 is the static world.
 *  - The contact frame F (clcone_contact_frame) has rows normal, t1, t2.
 *  - u_c = sum over the contact's two sides of sign * J_c,side * v_body, with
 *    v_body = (linear, angular) and J as computed by clc_contact_jacobian.
 *  - W_cd = sum over bodies B shared by c and d of
 *    sign_c(B) sign_d(B) J_c,B M_B^-1 J_d,B^T; q_c = sum sign J_c v*.
 */
#ifndef CLCONE_BODY_FORM_H
#define CLCONE_BODY_FORM_H

#include <limits.h>

#include <clcone/clcone.h>

/* Contacts a scene may hold: the local problem indexes 3n velocities and
 * 9 * nnzb block entries with int, and every contact has a diagonal block,
 * so more than this could not be converted. scene_to_local applies the
 * same bound to the stored blocks. */
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

/* A body is static when it can take no velocity change at all: zero inverse
 * mass AND zero inverse inertia. A body with inv_mass = 0 but a non-zero
 * inverse inertia (pinned, free to turn) is not static. */
int clc_body_is_static(const clcone_body *b);

/* The checks of clcone_scene_validate for one body (index i, for the
 * message) and for contact i of s (against s's bodies), so that readers
 * can check each item where they read it. */
clcone_status clc_body_validate(const clcone_body *b, int i, clcone_error *err);
clcone_status clc_contact_validate(const clcone_scene *s, int i, clcone_error *err);

/* out = M^-1 f for a 6-vector f = (force, torque) or (impulse, angular
 * impulse): out = (inv_mass f_lin, inv_inertia f_ang). out may alias f. */
void clc_body_inv_mass_apply(const clcone_body *b, const double f[6],
                                double out[6]);

/* Body index of one side of contact c: side 0 gives a, side 1 gives b (which
 * may be -1, the world). */
int clc_contact_body(const clcone_contact *c, int side);

/* J (3x6, row-major, 18 doubles) of side `side` of contact c, WITHOUT the
 * side's sign: row k = (F_k, (p - x_body) x F_k), F_k the k-th frame row, so
 * that J v is the material-point velocity of that body at the contact point
 * in the contact frame. For the world side (b = -1) J is all zeros, since
 * the world never moves. The caller applies the sign (+1 side 0, -1 side 1).
 * No validation: c and side must be in range. */
void clc_contact_jacobian(const clcone_scene *s, int c, int side,
                             double J[18]);

/* Per-body contact lists in CSR form: the contacts touching body i are
 * contact[k] for k in [ptr[i], ptr[i+1]), in increasing contact order, with
 * sign[k] = +1 when i is the contact's a side and -1 when it is the b side
 * (so sign[k] also names the side: +1 -> 0, -1 -> 1).
 *
 * STATIC BODIES HAVE EMPTY LISTS (clc_body_is_static): their velocity
 * never changes, so no contact couples through them, and leaving them out
 * keeps a ground body with 10^6 contacts from making W dense or making a
 * per-body gather loop pathologically long. Code that needs a static body's
 * velocity uses its v directly. ptr[nbodies] is the number of (contact,
 * side) entries kept, at most 2 * ncontacts.
 *
 * Built in O(nbodies + ncontacts) by counting sort. The scene must be valid
 * for its indices (clcone_scene_validate); only the a/b indices and the
 * static test are read. */
typedef struct clc_body_csr {
    int nbodies;
    int *ptr;            /* nbodies + 1 */
    int *contact;        /* ptr[nbodies] */
    signed char *sign;   /* ptr[nbodies]: +1 side a, -1 side b */
} clc_body_csr;

clcone_status clc_body_csr_build(const clcone_scene *s, clc_body_csr *L,
                                    clcone_error *err);
/* Frees the arrays and zeroes L; safe on a zeroed or already freed L. */
void clc_body_csr_free(clc_body_csr *L);

/* Each contact's normal velocity (J v)_n at body velocities v (6 a body;
 * NULL: the bodies' own v): the soft model's v0 as the stepper forms it. */
void clc_scene_normal_velocities(const clcone_scene *s, const double *v, double *vn);

/* What every body-form set-up (the device's and SAP's) takes from one
 * contact: its frame and, per side (0 = a, 1 = b), the body (-1 = the
 * world), whether it moves (not static), the lever arm p - x (0 for the
 * world), J without the side's sign (0 for the world) and the side's part
 * of W_cc, J M^-1 J' (0 unless it moves); and W_cc, both sides' products
 * summed in one accumulator. */
typedef struct clc_contact_sides {
    double frame[9];
    int body[2], moving[2];
    double arm[6], J[36], A[18], Wcc[9];
} clc_contact_sides;
void clc_contact_sides_of(const clcone_scene *s, int c, clc_contact_sides *cs);

#endif
