/* A scene solved in its local form on the device. The body form's
 * kernels are matrix-free sweeps, and sweeps alone stall on the small,
 * badly conditioned piles and stacks a simulator meets (a 36-contact pile
 * at 1e-3 after 30 s of cgs). Where the scene fits the dense Newton's
 * limit, its local form W = J M^-1 J', q = J v*, mu is small enough to
 * assemble, and the local form's hybrid (sweeps, then semismooth
 * Newton; coulomb's, ccp's or the pyramid's) solves it in milliseconds;
 * past that limit the hybrid hands it to the host's interior point
 * (coulomb: its fixed point; the pyramid keeps its body form's sweeps,
 * having neither). The reactions are the scene's own,
 * contact for contact, and W r + q is the scene's u = J (v* + M^-1 J' r),
 * so the result (error, iterations, status) is the scene's. */
#include "core/newton_limits.h"
#include "solve/solve_entries.h"

/* The largest scene the hybrid takes to its local form past Newton's
 * limit. Beyond it the body form's sweeps pay: on a 60,000-contact pile
 * (POCL, double) the local form's sweeps took 1.45x their time and the
 * solve 2.4x their memory, and the host's sparse second phase, which
 * the local form is for, took 15-32 s at 10,200 contacts. */
#define SCENE_LOCAL_MAX_CONTACTS 16384

int clc_scene_local_fits(const clcone_context *ctx, const clcone_options *o, const clcone_scene *s,
                            const clcone_dev_part *part)
{
    int dbl, past;
    /* ccp and the pyramid read W, q and mu only, so their local form is the
     * scene's law; soft's a_ref needs the gaps, which the body form carries */
    if (!ctx || part || s->ncontacts <= 0
        || (o->model != CLCONE_MODEL_COULOMB && o->model != CLCONE_MODEL_CCP && o->model != CLCONE_MODEL_PYRAMID))
        return 0;
    dbl = clcone_context_precision(ctx) == CLCONE_DOUBLE;
    past = s->ncontacts > CLCONE_NEWTON_REF_MAX_CONTACTS;
    if (o->solver == CLCONE_SOLVER_NEWTON) return dbl && s->ncontacts <= SCENE_LOCAL_MAX_CONTACTS;
    if (o->solver != CLCONE_SOLVER_HYBRID) return 0;
    /* the hybrid's sweeps alone stay on the body form, whose cgs and acgs they are; past Newton's limit the
     * hybrid hands the local form to the host's interior point or its fixed point (opencl/handover.c), within it
     * to Newton (the host's for a float device) */
    if (!clc_device_hybrid_switches(o->tol, o->model == CLCONE_MODEL_COULOMB, dbl)) return 0;
    if (past && o->model == CLCONE_MODEL_PYRAMID) return 0; /* no second phase: the body form's sweeps */
    return s->ncontacts <= SCENE_LOCAL_MAX_CONTACTS;
}

clcone_status clc_scene_local_assemble(const clcone_scene *s, clcone_problem *p, clcone_error *err)
{
    clcone_status st;
    clcone_problem_free(p);
    if ((st = clcone_scene_to_local(s, p, err)) || (st = clcone_problem_validate(p, err))) clcone_problem_free(p);
    return st;
}
