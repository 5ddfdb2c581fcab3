/* MuJoCo's soft constraint problem in its primal form, over accelerations:
 *
 *   min_a  1/2 (a - a0)' M (a - a0) + s(J a - aref)
 *
 * (MuJoCo's Computation chapter, "Primal problem"; engine_solver.c's
 * Newton and CG minimise it). The rows come in blocks of core/blocks.h's
 * kinds, rows off[b] .. off[b+1]-1, and s is the sum of each block's soft
 * cost of x = J a - aref, D = 1 / R:
 *
 *   free (equality)         1/2 D x^2 on each row
 *   box (friction loss)     Huber: 1/2 D x^2 for |x| < R bound, else
 *                           bound |x| - 1/2 R bound^2
 *   nonnegative (limit,     1/2 D x^2 where x < 0, else 0
 *   frictionless, pyramid)
 *   cone (elliptic)         with U_0 = mu x_0, U_i = bound_i x_i (i >= 1),
 *                           N = U_0, T = |U_1..|: 0 where N >= mu T (top
 *                           zone), 1/2 sum D_i x_i^2 where mu N + T <= 0
 *                           (bottom), else 1/2 Dm (N - mu T)^2 with Dm =
 *                           D_0 / (mu^2 (1 + mu^2)) (middle)
 *
 * which is MuJoCo's mj_constraintUpdate row for row. The forces are f =
 * -ds/dx. One problem is one island: rows that share no dof with another
 * problem's (mujoco/mj_primal.c splits a state into them). */
#ifndef CLCONE_CORE_PRIMAL_H
#define CLCONE_CORE_PRIMAL_H

#include <clcone/clcone.h>

/* A row's zone, in the order of MuJoCo's mjtConstraintState. */
enum { PRIMAL_SATISFIED, PRIMAL_QUADRATIC, PRIMAL_LINEARNEG, PRIMAL_LINEARPOS, PRIMAL_CONE };

/* Largest cone block (MuJoCo's condim 6). */
#define PRIMAL_CONE_MAX 6

typedef struct clc_pproblem {
    int nv;          /* dofs */
    int m;           /* rows */
    int nb;          /* blocks */
    int ng;          /* dof groups (kinematic trees): M is zero between two */
    int *goff;       /* ng + 1: group g's dofs goff[g] .. goff[g+1]-1 */
    int *moff;       /* ng + 1: group g's block of M at M + moff[g] */
    double *M;       /* M's diagonal blocks, n_g x n_g row-major each,
                        symmetric positive definite */
    double *a0;      /* nv: the unconstrained acceleration */
    double *f0;      /* nv: M a0 (MuJoCo's qfrc_smooth) */
    int *jp;         /* m + 1: row i's entries of J at jp[i] .. jp[i+1] */
    int *jc;         /* their columns (0 .. nv-1) */
    double *jv;      /* and values */
    double *aref;    /* m */
    double *R;       /* m, > 0 */
    int *off;        /* nb + 1 */
    int *kind;       /* nb, BLK_* (kernels/block_sets.h) */
    double *bound;   /* m: a box's friction loss, a cone's friction per
                        tangential row (its normal row's unused) */
    double *mu;      /* nb: a cone's mu (MuJoCo's contact mu), else 0 */
    double scale;    /* the stopping rule's factor on cost and gradient */
    int ls_iterations;   /* the line search's evaluations at most */
    double ls_tolerance; /* its slope tolerance, relative to the solve's */
} clc_pproblem;

/* Allocates every array for nv dofs, m rows, nb blocks, nnz entries of J
 * and nm of M's blocks (goff and moff for up to nv groups), zeroed. */
clcone_status clc_pproblem_alloc(clc_pproblem *p, int nv, int m, int nb, int nnz, size_t nm,
                                    clcone_error *err);
void clc_pproblem_free(clc_pproblem *p);

/* Checks sizes, the groups (covering the dofs in order, M's blocks
 * their sizes), kinds (a cone of 2 to PRIMAL_CONE_MAX rows), columns in range,
 * finite values, M's diagonal, R, a cone's mu and friction > 0, a box's
 * bound >= 0, scale > 0; names the row, block, dof or group. */
clcone_status clc_pproblem_validate(const clc_pproblem *p, clcone_error *err);

/* s(x) (the return), the forces f = -ds/dx (m), each row's zone (m) and,
 * when Hc is not NULL, each cone block's Hessian of s in the middle zone
 * (PRIMAL_CONE_MAX^2 a block, n x n row-major). */
double clc_pproblem_update(const clc_pproblem *p, const double *x, double *f, int *state, double *Hc);

#endif
