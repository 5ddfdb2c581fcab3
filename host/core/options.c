/* Options and results as every backend shares them: the defaults, the
 * check schedule, the run statuses' names and the result arrays (the
 * names of models and solvers are solve/contract.c's). */
#include "core/internal.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

static const char *const RUN_NAMES[] = {"converged", "maxiter", "diverged", "failed"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The kernels and kernels/local_solve.h number the models as clcone_model. */
_Static_assert(CONE_MODEL_COULOMB == (int)CLCONE_MODEL_COULOMB && CONE_MODEL_CCP == (int)CLCONE_MODEL_CCP
                   && CONE_MODEL_PYRAMID == (int)CLCONE_MODEL_PYRAMID,
               "kernel model ids are clcone_model's");

const char *clcone_run_status_name(clcone_run_status s)
{
    return (int)s >= 0 && (int)s < COUNT(RUN_NAMES) ? RUN_NAMES[s] : "?";
}

void clcone_options_default(clcone_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->model = CLCONE_MODEL_COULOMB;
    o->solver = CLCONE_SOLVER_DEFAULT;
    o->facets = 8;
    o->fit = CLCONE_FIT_OUTER;
    o->tol = 0;
    o->max_iter = 1000000;
    o->check_every = 10;
    o->soft_timeconst = 0.02;
    o->soft_dampratio = 1.0;
    o->soft_impedance = 0.9;
    o->soft_dt = 0.01;
    o->sap_beta = 1.0;
}

void clcone_result_free(clcone_result *r)
{
    if (!r) return;
    free(r->items);
    r->items = NULL;
    r->nprob = 0;
}

clcone_status clc_result_init(clcone_result *res, int nprob, clcone_error *err)
{
    res->nprob = nprob;
    res->time_ms = 0;
    res->items = clc_calloc((size_t)nprob, sizeof *res->items, err, "results");
    return res->items ? CLCONE_OK : CLCONE_ENOMEM;
}

int clc_is_check_iteration(const clcone_options *o, int it)
{
    return cone_is_check(it, o->check_every, o->max_iter);
}

int clc_is_block_check_iteration(const clcone_options *o, int it)
{
    return it == 1 || it % (o->check_every < 1 ? 1 : o->check_every) == 0 || it >= o->max_iter;
}

clcone_model clc_model_solved_as(clcone_model m)
{
    return m == CLCONE_MODEL_SOFT ? CLCONE_MODEL_CCP : m;
}
