/* What the 3-row form (mujoco/adapter.c) and the general-block form
 * (mujoco/general.c) of MuJoCo's problem share (mujoco/mj_common.c). */
#ifndef CLCONE_MUJOCO_MJ_COMMON_H
#define CLCONE_MUJOCO_MJ_COMMON_H

#include "mujoco/adapter.h"

/* qsort's and bsearch's order of ints. */
int clcone_mj_cmp_int(const void *x, const void *y);

/* A constraint type's name in messages ("joint limit"). */
const char *clcone_mj_row_kind(int type);

/* The nonzero columns of each row of J (CSR: jp, jc, allocated) and J
 * as dense rows (nefc x nv, zeroed by the caller), from MuJoCo's sparse
 * or dense layout. */
clcone_status clcone_mj_jacobian(const mjModel *m, const mjData *d, double *Jd, int **jp, int **jc, clcone_error *err);

/* Every MuJoCo input of the problem is finite (R, aref, J qacc_smooth in
 * Jqs, J), else EINVAL naming the row. */
clcone_status clcone_mj_check_finite(const mjModel *m, const mjData *d, const double *Jd, const double *Jqs,
                                     const char *label, clcone_error *err);

/* The block-CSR structure of A = J M^-1 J' over nb blocks (block b is
 * rows row[b] .. row[b] + nrow[b] - 1): b and c are coupled when they
 * share a kinematic tree. row_ptr (nb + 1) and col (*nnzb) allocated. */
clcone_status clcone_mj_structure(const mjModel *m, const int *jp, const int *jc, int nb, const int *row,
                                  const int *nrow, int **row_ptr, int **col, int *nnzb, clcone_error *err);

/* A_rs = J_r . (M^-1 J_s')_r over row r's nonzero columns (X = M^-1 J',
 * rows of nv). */
double clcone_mj_dot(const double *Jd, const double *X, const int *jp, const int *jc, size_t nv, int r, int s);

/* s (a failed check of the problem built, its message in err) said of
 * MuJoCo's problem at this state of the model label. */
clcone_status clcone_mj_state_error(clcone_status s, const char *label, clcone_error *err);

/* MuJoCo's outputs after efc_force and efc_state are set: efc_b,
 * qfrc_constraint = J'f and qacc = qacc_smooth + M^-1 qfrc_constraint. */
void clcone_mj_finish(const mjModel *m, mjData *d);

#endif
