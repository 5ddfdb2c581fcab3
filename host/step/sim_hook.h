/* The stepper's solve, handed in by a layer above it (host/mpi: each
 * step's contact solve over MPI ranks). */
#ifndef CLCONE_SIM_HOOK_H
#define CLCONE_SIM_HOOK_H

#include <clcone/clcone.h>

/* Solves scene sc with options o from r (the warm start when
 * o->warm_start) into r and res, as clcone_solve_scene does. */
typedef clcone_status clcone_sim_solve_fn(void *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                                          clcone_result *res, clcone_error *err);
/* From the next step on, sim's solves (a fallback's too) go through fn
 * (NULL: the run's own plan again). Exported for libclcone_mpi, not in
 * the public headers. */
CLCONE_API void clcone_sim_set_solve(clcone_sim *sim, clcone_sim_solve_fn *fn, void *ctx);

#endif
