/* What the 3-row form (mujoco/adapter.c) and the general-block form
 * (mujoco/general.c) of MuJoCo's problem share (mujoco/mj_common.c). */
#ifndef CLCONE_MUJOCO_MJ_COMMON_H
#define CLCONE_MUJOCO_MJ_COMMON_H

#include "mujoco/adapter.h"

/* qsort's and bsearch's order of ints. */
int clc_mj_cmp_int(const void *x, const void *y);

/* A constraint type's name in messages ("joint limit"). */
const char *clc_mj_row_kind(int type);

/* MuJoCo's J as sparse rows and X = M^-1 J' on each row's trees only (cost: docs/mujoco.md). */
typedef struct clc_mj_rows {
    int *jp;      /* row i's nonzeros jp[i] .. jp[i+1], columns ascending */
    int *jc;      /* their columns, counted from their tree's first dof */
    double *jv;   /* and values */
    int *tp, *tt; /* row i's trees tt[tp[i] .. tp[i+1]) */
    int *tb;      /* its nonzeros on tree tt[k]: tb[k] .. tb[k+1] */
    size_t *xo;   /* X's values on tree tt[k] (its tree_dofnum dofs) at xv + xo[k] */
    double *xv;
    double *jqs;  /* J qacc_smooth */
} clc_mj_rows;

/* d's rows, J qacc_smooth and X by MuJoCo's qLD as mj_solveM does; non-finite is EINVAL naming the row. */
clcone_status clc_mj_rows_build(const mjModel *m, const mjData *d, const char *label, clc_mj_rows *J,
                                   clcone_error *err);
void clc_mj_rows_free(clc_mj_rows *J);

/* The block-CSR structure of A = J M^-1 J' (blocks coupled by a shared tree); row_ptr, col allocated. */
clcone_status clc_mj_structure(const mjModel *m, const clc_mj_rows *J, int nb, const int *row,
                                  const int *nrow, int **row_ptr, int **col, int *nnzb, clcone_error *err);

/* A_rs = J_r . X_s over row r's nonzero columns in ascending order. */
double clc_mj_dot(const clc_mj_rows *J, int r, int s);

/* s, a failed check of the built problem (message in err), said of MuJoCo's problem for model label. */
clcone_status clc_mj_state_error(clcone_status s, const char *label, clcone_error *err);

/* Row i of MuJoCo's J as it is stored: n entries, their columns col (NULL
 * for a dense J: columns 0 .. n-1, see clc_mj_col) and values val; a
 * sparse row may hold zeros (a chain's dofs). */
typedef struct clc_mj_jrow {
    int n;
    const int *col;
    const double *val;
} clc_mj_jrow;

clc_mj_jrow clc_mj_row(const mjModel *m, const mjData *d, int i);

/* The column of row r's k-th entry. */
static inline int clc_mj_col(clc_mj_jrow r, int k)
{
    return r.col ? r.col[k] : k;
}

/* Whether efc row i's Jacobian row is zero (A then has a zero diagonal there and no entry off it). */
int clc_mj_zero_row(const mjModel *m, const mjData *d, int i);

/* MuJoCo's efc_b, qfrc_constraint = J'f and qacc, after efc_force and efc_state are set. */
void clc_mj_finish(const mjModel *m, mjData *d);

#endif
