/* The general-block problem's dispatch (solve/blocks_solve.h): apgd on
 * either backend (the default, as for the soft model), pgs on the
 * reference. */
#include "solve/blocks_solve.h"
#include "core/internal.h"
#include "ref/blocks_ref.h"
#include "opencl/blocks_device.h"

#include <string.h>

clcone_status clcone_solve_blocks(clcone_context *ctx, const clcone_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err)
{
    clcone_options oo;
    clcone_status s;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, f);
    CLCONE_REQUIRE(err, res);
    memset(res, 0, sizeof *res);
    oo = *o;
    if ((s = clcone_bproblem_validate(p, err))) return s;
    if (oo.solver == CLCONE_SOLVER_DEFAULT) oo.solver = CLCONE_SOLVER_APGD;
    if (oo.solver != CLCONE_SOLVER_APGD && (ctx || oo.solver != CLCONE_SOLVER_PGS))
        return clcone_fail(err, CLCONE_ENOTSUP, "the general-block problem is solved by %s, not %s",
                           ctx ? "apgd on a device" : "apgd or pgs on the reference", clcone_solver_name(oo.solver));
    if (oo.tol == 0) oo.tol = !ctx || clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-8 : 1e-5;
    return ctx ? clcone_dev_blocks(ctx, p, &oo, f, res, err) : clcone_ref_blocks(p, &oo, f, res, err);
}
