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

/* Contact between bodies a and b (b = -1: the static world). The unit
 * normal points from b towards a: a positive normal impulse pushes a along
 * +normal and b along -normal, and u_n > 0 means the bodies separate.
 * u = (velocity of a's material point) - (velocity of b's). */
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

/* Validates bodies (finite values, inv_mass >= 0, symmetric PSD inverse
 * inertia) and contacts (indices in range, a != b, unit normal within
 * 1e-6, mu >= 0, not two static ends). */
CLCONE_API clcone_status clcone_scene_validate(const clcone_scene *s, clcone_error *err);

/* Contact frame: the normal, then t1 = normalize(normal x e_k) where e_k is
 * the world axis with the smallest |normal_k| (lowest k on ties), and
 * t2 = normal x t1. frame[0..2] = normal, [3..5] = t1, [6..8] = t2. */
CLCONE_API void clcone_contact_frame(const double normal[3], double frame[9]);

/* Local form of the scene's contact problem: W = J M^-1 J^T (only blocks
 * of contacts that share a non-static body), q = J v*. */
CLCONE_API clcone_status clcone_scene_to_local(const clcone_scene *s, clcone_problem *p,
                                    clcone_error *err);

/* Velocity change of every body (6 per body) caused by reactions r:
 * dv = M^-1 J^T r. */
CLCONE_API void clcone_scene_apply_impulses(const clcone_scene *s, const double *r,
                                 double *dv);

CLCONE_API void clcone_scene_free(clcone_scene *s);

#ifdef __cplusplus
}
#endif
#endif
