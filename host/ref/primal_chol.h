/* The Cholesky factor of MuJoCo's Newton Hessian H = M + J'DJ (+ cones)
 * by blocks of the problem's dof groups (core/primal.h: kinematic trees,
 * between which M is zero), for ref/primal_newton.c. Two groups share a
 * block of H when a constraint block's rows reach both; the groups are
 * eliminated in minimum-degree order on that graph and L holds a block
 * only where H or the fill has one, each block dense. An island of one
 * tree (the humanoid) is one dense block; Stonehenge's stones, coupled
 * pairwise by contacts, factor at their graph's fill, not nv^3 / 3. */
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

/* The symbolic factor of p's H (every constraint block counted, whatever
 * its zone), blocks allocated. */
clcone_status clc_pchol_init(pchol *c, const clc_pproblem *p, clcone_error *err);
void clc_pchol_free(pchol *c);

/* Every block to 0, then H's lower triangle in the eliminated order: i
 * and j are the problem's dofs; each unordered pair added once,
 * whichever way round (the pair is H_ij = H_ji). */
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

/* Factors in place; CLCONE_EINVAL at a pivot that is not positive,
 * naming the problem's dof. */
clcone_status clc_pchol_factor(pchol *c, clcone_error *err);

/* x = H^-1 b (x and b may not alias; nv each, the problem's order). */
void clc_pchol_solve(const pchol *c, const double *b, double *x, double *tmp);

#endif
