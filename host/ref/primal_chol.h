/* The block Cholesky factor of MuJoCo's Newton Hessian by dof groups (docs/mujoco.md). */
#ifndef CLCONE_REF_PRIMAL_CHOL_H
#define CLCONE_REF_PRIMAL_CHOL_H

#include "core/primal.h"

typedef struct pchol {
    int nv, ng;
    int *pd;      /* nv: a dof's index in the eliminated order */
    int *gp;      /* nv (eliminated order): its group's position */
    int *gs;      /* ng + 1: a position's first dof (eliminated order) */
    int *orig;    /* nv (eliminated order): the problem's dof */
    double **blk; /* ng x ng: block (P, Q), P >= Q, gs sizes, row-major; NULL: none */
    double *store;
} pchol;

/* The symbolic factor of p's H (every constraint block, whatever its zone), blocks allocated. */
clcone_status clc_pchol_init(pchol *c, const clc_pproblem *p, clcone_error *err);
void clc_pchol_free(pchol *c);

/* zero clears every block; add adds v to H_ij = H_ji (the problem's dofs), each pair once. */
void clc_pchol_zero(pchol *c);
static inline void clc_pchol_add(pchol *c, int i, int j, double v)
{
    int a = c->pd[i], b = c->pd[j], t;
    if (a < b) {
        t = a;
        a = b;
        b = t;
    }
    c->blk[(size_t)c->gp[a] * c->ng + c->gp[b]][(a - c->gs[c->gp[a]]) * (c->gs[c->gp[b] + 1] - c->gs[c->gp[b]]) +
                                                 (b - c->gs[c->gp[b]])] += v;
}

/* Factors in place; CLCONE_EINVAL naming the dof of a pivot that is not positive. */
clcone_status clc_pchol_factor(pchol *c, clcone_error *err);

/* x = H^-1 b (x and b may not alias; nv each, the problem's order). */
void clc_pchol_solve(const pchol *c, const double *b, double *x, double *tmp);

#endif
