/* clcone public API: body-form scenes (bodies and contacts). */
#ifndef CLCONE_API_SCENE_H
#define CLCONE_API_SCENE_H

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clcone_body {
    double x[3];           /* centre of mass, world frame */
    double inv_mass;       /* 0 = static (infinite mass) */
    double inv_inertia[9]; /* world-frame inverse inertia, row-major */
    double v[6];           /* free velocity v* = (linear, angular) */
} clcone_body;

/* Contact of bodies a and b (b = -1: the static world); the unit normal points from b to a,
 * u = (a's point velocity) - (b's), u_n > 0 separating, r_n > 0 pushing a along +normal. */
typedef struct clcone_contact {
    int a, b;
    double point[3];
    double normal[3];
    double mu;
    double gap;            /* signed gap (informative; < 0 = penetration) */
} clcone_contact;

typedef struct clcone_scene {
    int nbodies, ncontacts;
    clcone_body *bodies;
    clcone_contact *contacts;
} clcone_scene;

/* Bodies: finite, inv_mass >= 0, symmetric PSD inverse inertia; contacts: indices in range,
 * a != b, unit normal within 1e-6, mu >= 0, not two static ends. */
CLCONE_API clcone_status clcone_scene_validate(const clcone_scene *s, clcone_error *err);

/* frame = (normal, t1, t2): t1 = normalize(normal x e_k), e_k the axis of smallest |normal_k|
 * (lowest k on ties), t2 = normal x t1. normal must be a unit vector (as clcone_scene_validate
 * checks a scene's); a zero or non-finite one gives a frame of NaN. */
CLCONE_API void clcone_contact_frame(const double normal[3], double frame[9]);

/* The local form: W = J M^-1 J^T (blocks of contacts sharing a moving body), q = J v*. */
CLCONE_API clcone_status clcone_scene_to_local(const clcone_scene *s, clcone_problem *p,
                                    clcone_error *err);

/* dv = M^-1 J^T r, 6 per body. */
CLCONE_API void clcone_scene_apply_impulses(const clcone_scene *s, const double *r,
                                 double *dv);

CLCONE_API void clcone_scene_free(clcone_scene *s);

#ifdef __cplusplus
}
#endif
#endif
