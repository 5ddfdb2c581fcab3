/* Options and results as every backend shares them: the names the command
 * line uses, the defaults, the check schedule and the result arrays. */
#include "core/internal.h"
#include "cone.h"
#include "local_solve.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

static const char *const MODEL_NAMES[] = {"coulomb", "ccp", "pyramid", "soft", "sap"};
static const char *const SOLVER_NAMES[] = {"nsgs", "jacobi", "pgs", "apgd", "lemke", "cgs", "acgs", "newton", "hybrid"};
static const char *const RUN_NAMES[] = {"converged", "maxiter", "diverged", "failed"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

_Static_assert(COUNT(MODEL_NAMES) == CLCONE_NMODELS, "a name for every clcone_model");
_Static_assert(COUNT(SOLVER_NAMES) == CLCONE_NSOLVERS, "a name for every clcone_solver");
/* The kernels and kernels/local_solve.h number the models as clcone_model. */
_Static_assert(CONE_MODEL_COULOMB == (int)CLCONE_MODEL_COULOMB && CONE_MODEL_CCP == (int)CLCONE_MODEL_CCP
                   && CONE_MODEL_PYRAMID == (int)CLCONE_MODEL_PYRAMID,
               "kernel model ids are clcone_model's");

const char *clcone_model_name(clcone_model m)
{
    return (int)m >= 0 && (int)m < COUNT(MODEL_NAMES) ? MODEL_NAMES[m] : "?";
}

const char *clcone_solver_name(clcone_solver s)
{
    if (s == CLCONE_SOLVER_DEFAULT) return "default";
    return (int)s >= 0 && (int)s < COUNT(SOLVER_NAMES) ? SOLVER_NAMES[s] : "?";
}

const char *clcone_run_status_name(clcone_run_status s)
{
    return (int)s >= 0 && (int)s < COUNT(RUN_NAMES) ? RUN_NAMES[s] : "?";
}

static clcone_status parse_name(const char *s, const char *const *names, int count,
                                const char *what, int *out, clcone_error *err)
{
    char list[256] = "";
    for (int i = 0; i < count; ++i)
        if (s && strcmp(s, names[i]) == 0) {
            *out = i;
            return CLCONE_OK;
        }
    for (int i = 0; i < count; ++i) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return clcone_fail(err, CLCONE_EINVAL, "unknown %s '%s' (expected %s)", what, s ? s : "", list);
}

clcone_status clcone_parse_model(const char *s, clcone_model *m, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, m);
    int v = 0;
    clcone_status st = parse_name(s, MODEL_NAMES, COUNT(MODEL_NAMES), "model", &v, err);
    if (!st) *m = (clcone_model)v;
    return st;
}

clcone_status clcone_parse_solver(const char *s, clcone_solver *out, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, out);
    int v = 0;
    clcone_status st = parse_name(s, SOLVER_NAMES, COUNT(SOLVER_NAMES), "solver", &v, err);
    if (!st) *out = (clcone_solver)v;
    return st;
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

clcone_status clcone_result_init(clcone_result *res, int nprob, clcone_error *err)
{
    res->nprob = nprob;
    res->time_ms = 0;
    res->items = clcone_calloc((size_t)nprob, sizeof *res->items, err, "results");
    return res->items ? CLCONE_OK : CLCONE_ENOMEM;
}

int clcone_is_check_iteration(const clcone_options *o, int it)
{
    return cone_is_check(it, o->check_every, o->max_iter);
}

clcone_model clcone_model_solved_as(clcone_model m)
{
    return m == CLCONE_MODEL_SOFT ? CLCONE_MODEL_CCP : m;
}
