/* The general-block problem's dispatch (solve/blocks_solve.h). */
#include "solve/blocks_solve.h"
#include "core/internal.h"
#include "ref/blocks_ref.h"

#include <string.h>

clcone_status clcone_solve_blocks(clcone_context *ctx, const clcone_bproblem *p, const clcone_options *o, double *f,
                                  clcone_prob_result *res, clcone_error *err)
{
    clcone_options oo = *o;
    clcone_status s;
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, o);
    CLCONE_REQUIRE(err, f);
    CLCONE_REQUIRE(err, res);
    memset(res, 0, sizeof *res);
    if ((s = clcone_bproblem_validate(p, err))) return s;
    if (oo.solver == CLCONE_SOLVER_DEFAULT) oo.solver = CLCONE_SOLVER_PGS;
    if (oo.tol == 0) oo.tol = 1e-8;
    (void)ctx;
    return clcone_ref_blocks(p, &oo, f, res, err);
}
