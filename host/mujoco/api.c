/* libclcone_mujoco's API (include/clcone/mujoco.h): borrowed worlds
 * (mujoco/worlds.h) on a context of their own. The library links its own
 * copy of libclcone, so no object of another copy (a Python Device's
 * context) is ever handed to it: the stepper opens its device from the
 * spec. */
#include <clcone/mujoco.h>
#include "mujoco/worlds.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

struct clcone_mj_stepper {
    clcone_context *ctx; /* NULL: the reference */
    clc_worlds *w;
};

/* mjVERSION_HEADER as "major.minor.patch" (its form changed at 3.5.0:
 * mujoco/mujoco.h says how; the Makefile's mj_check reads it so too). */
const char *clcone_mj_version(void)
{
    static char v[32];
    long h = mjVERSION_HEADER;
    if (h < 1000) h = h / 100 * 1000000 + h / 10 % 10 * 1000 + h % 10;
    snprintf(v, sizeof v, "%ld.%ld.%ld", h / 1000000, h / 1000 % 1000, h % 1000);
    return v;
}

void clcone_mj_stepper_free(clcone_mj_stepper *s)
{
    if (!s) return;
    clc_worlds_free(s->w);
    clcone_context_free(s->ctx);
    free(s);
}

clcone_status clcone_mj_options_check(const clcone_options *o, int device, clcone_error *err)
{
    CLCONE_REQUIRE(err, o);
    return clc_mujoco_check_options(o, device != 0, err);
}

clcone_status clcone_mj_stepper_create(const char *spec, clcone_precision prec, const clcone_options *o,
                                       const struct mjModel_ *m, int n, int threads, clcone_mj_stepper **out,
                                       clcone_error *err)
{
    clcone_mj_stepper *s;
    clcone_options ro;
    clcone_status st;
    CLCONE_REQUIRE(err, out);
    *out = NULL;
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, m);
    s = clc_calloc(1, sizeof *s, err, "the MuJoCo stepper");
    if (!s) return CLCONE_ENOMEM;
    if (!(spec && strcmp(spec, "ref") == 0) && (st = clcone_context_create(spec, prec, &s->ctx, err))) {
        free(s);
        return st;
    }
    /* the precision's tolerance; a solver not given stays the default,
     * which each step's form resolves (as `clcone mujoco` does) */
    ro = *o;
    clcone_options_resolve(&ro, s->ctx);
    ro.solver = o->solver;
    if ((st = clc_worlds_borrow(s->ctx, &ro, "MuJoCo model", m, n, threads, &s->w, err))) {
        clcone_mj_stepper_free(s);
        return st;
    }
    *out = s;
    return CLCONE_OK;
}

clcone_status clcone_mj_stepper_step(clcone_mj_stepper *s, struct mjData_ *const *d, int n, clcone_mj_stats *st,
                                     clcone_error *err)
{
    clc_worlds_stats ws;
    clcone_status r;
    CLCONE_REQUIRE(err, s);
    CLCONE_REQUIRE(err, d);
    CLCONE_REQUIRE(err, st);
    if (n != clc_worlds_count(s->w))
        return clc_fail(err, CLCONE_EINVAL, "%d MuJoCo data given to a stepper of %d worlds", n,
                           clc_worlds_count(s->w));
    for (int k = 0; k < n; ++k)
        if (!d[k]) return clc_fail(err, CLCONE_EINVAL, "world %d: its MuJoCo data is NULL", k);
    if ((r = clc_worlds_step_data(s->w, d, &ws, err))) return r;
    for (int k = 0; k < n; ++k) {
        const clc_mujoco_stats *ms = clc_worlds_stats_of(s->w, k);
        st[k] = (clcone_mj_stats){ms->nefc, ms->ncon, ms->blocks, ms->warm_matched,
                                  ms->blocks ? ms->res.status : CLCONE_CONVERGED, ms->res.iters,
                                  ms->blocks ? ms->res.error : 0, ms->res.time_ms};
    }
    return CLCONE_OK;
}
