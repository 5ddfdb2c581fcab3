/* MuJoCo's soft constraint problem in its primal form, over accelerations:
 * min_a 1/2 (a - a0)' M (a - a0) + s(J a - aref), s each block's soft cost as
 * MuJoCo's mj_constraintUpdate has it (docs/mujoco.md); f = -ds/dx. One problem
 * is one island. */
#ifndef CLCONE_CORE_PRIMAL_H
#define CLCONE_CORE_PRIMAL_H

#include <clcone/clcone.h>
#include "primal_layout.h" /* the zones and the largest cone, shared with kernels/primal.cl */

typedef struct clc_pproblem {
    int nv;          /* dofs */
    int m;           /* rows */
    int nb;          /* blocks */
    int ng;          /* dof groups (kinematic trees): M is zero between two */
    int *goff;       /* ng + 1: group g's dofs goff[g] .. goff[g+1]-1 */
    int *moff;       /* ng + 1: group g's block of M at M + moff[g] */
    double *M;       /* M's diagonal blocks, n_g x n_g row-major, SPD */
    double *a0;      /* nv: the unconstrained acceleration */
    double *f0;      /* nv: M a0 (MuJoCo's qfrc_smooth) */
    int *jp;         /* m + 1: row i's entries of J at jp[i] .. jp[i+1] */
    int *jc;         /* their columns (0 .. nv-1), ascending in a row */
    double *jv;      /* and values */
    double *aref;    /* m */
    double *R;       /* m, > 0 */
    int *off;        /* nb + 1 */
    int *kind;       /* nb, BLK_* (kernels/block_sets.h) */
    double *bound;   /* m: a box's friction loss, a cone's tangential friction */
    double *mu;      /* nb: a cone's mu (MuJoCo's contact mu), else 0 */
    double *hard;    /* NULL, or m: 0 a soft row, > 0 a hard one (R = 0: MuJoCo's model coulomb), its
                        scale (A's diagonal, as MuJoCo approximates it); hard rows are solved by proximal rounds of
                        soft ones (ref/primal_prox.h), never by the soft Newton alone */
    double scale;    /* the stopping rule's factor on cost and gradient */
    int ls_iterations;   /* the line search's evaluations at most */
    double ls_tolerance; /* its slope tolerance, relative to the solve's */
} clc_pproblem;

/* Allocates every array zeroed (goff and moff for up to nv groups; nm reals of M's blocks). */
clcone_status clc_pproblem_alloc(clc_pproblem *p, int nv, int m, int nb, int nnz, size_t nm,
                                    clcone_error *err);
void clc_pproblem_free(clc_pproblem *p);

/* Allocates p->hard, every row soft. */
clcone_status clc_pproblem_make_hard(clc_pproblem *p, clcone_error *err);

/* CLCONE_EINVAL naming p's first hard row, if any: the soft Newton's refusal. */
clcone_status clc_pproblem_soft_only(const clc_pproblem *p, clcone_error *err);

/* The hard problem's error at accelerations a and forces f: the general-block form's measure
 * (clc_block_sets_error) of f with u = J a - aref (+ R f on the soft rows), q = J a0 - aref: A f + q,
 * A = J M^-1 J', wherever M (a - a0) = J' f; on a hard cone, u's normal row plus De Saxce's shift
 * ||friction .* u_T|| (exact Coulomb: the measure is then De Saxce's natural map's). NAN when out of memory. */
double clc_pproblem_hard_error(const clc_pproblem *p, const double *a, const double *f);

/* A proximal round's R and aref: a hard row's R = c hard, aref + c hard center (the soft cost's force
 * then pulled to center), less, on a hard cone's normal row, De Saxce's shift at accelerations a (the
 * rounds' fixed point is then exact Coulomb's); a soft row's as p's. */
void clc_pproblem_round(const clc_pproblem *p, double c, const double *center, const double *a, double *R,
                        double *aref);

/* Checks structure and values (list: docs/mujoco.md), naming the row, block, dof or group. */
clcone_status clc_pproblem_validate(const clc_pproblem *p, clcone_error *err);

/* Whether rows r and s reach the same dofs (a pyramid's edges do). */
int clc_pproblem_same_dofs(const clc_pproblem *p, int r, int s);

/* Returns s(x); fills f = -ds/dx, zones, and (Hc non-NULL) each cone's middle-zone Hessian, 36 a block.
 * D: 1 / R a row (MuJoCo's efc_D: a quadratic row's force is -D x, no division). */
double clc_pproblem_update(const clc_pproblem *p, const double *D, const double *x, double *f, int *state,
                           double *Hc);

#endif
