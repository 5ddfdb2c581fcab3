/* A scene solved in its local form on the device. The body form's
 * kernels are matrix-free sweeps, and sweeps alone stall on the small,
 * badly conditioned piles and stacks a simulator meets (a 36-contact pile
 * at 1e-3 after 30 s of cgs). Where the scene fits the dense Newton's
 * limit, its local form W = J M^-1 J', q = J v*, mu is small enough to
 * assemble, and the local form's hybrid (sweeps, then semismooth
 * Newton; coulomb's or ccp's) solves it in milliseconds; past that limit
 * the hybrid hands it to the host's interior point (coulomb: its fixed
 * point). The reactions are the scene's own,
 * contact for contact, and W r + q is the scene's u = J (v* + M^-1 J' r),
 * so the result (error, iterations, status) is the scene's. */
#include "solve/solve_entries.h"

int clc_scene_local_fits(const clcone_context *ctx, const clcone_options *o, const clcone_scene *s,
                            const clcone_dev_part *part)
{
    /* float Newton on these problems ran into the time cap where the
     * float sweeps end at their 1e-5; the hybrid's sweeps alone (ccp at
     * tol >= CLCONE_DEVICE_HYBRID_BELOW) and its --plot stay on the body
     * form, whose cgs and apgd they are */
    /* ccp reads W, q and mu only, so its local form is the scene's law;
     * soft's a_ref needs the gaps, which the body form carries */
    if (!ctx || part || clcone_context_precision(ctx) != CLCONE_DOUBLE
        || (o->model != CLCONE_MODEL_COULOMB && o->model != CLCONE_MODEL_CCP))
        return 0;
    if (o->solver == CLCONE_SOLVER_HYBRID
        && (o->history || (o->model != CLCONE_MODEL_COULOMB && o->tol >= CLCONE_DEVICE_HYBRID_BELOW)))
        return 0;
    if (o->solver != CLCONE_SOLVER_HYBRID && o->solver != CLCONE_SOLVER_NEWTON) return 0;
    if (s->ncontacts <= 0) return 0;
    /* past Newton's limit the hybrid hands the local form to the host's
     * interior point or its fixed point (opencl/newton.c), where one
     * work-group holds it */
    return s->ncontacts <= CLCONE_NEWTON_REF_MAX_CONTACTS
           || (o->solver == CLCONE_SOLVER_HYBRID && clc_group_holds(ctx, s->ncontacts));
}

clcone_status clc_scene_local_assemble(const clcone_scene *s, clcone_problem *p, clcone_error *err)
{
    clcone_status st;
    clcone_problem_free(p);
    if ((st = clcone_scene_to_local(s, p, err)) || (st = clcone_problem_validate(p, err))) clcone_problem_free(p);
    return st;
}
