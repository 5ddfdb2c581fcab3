/* The reference accelerations of exact Coulomb's contacts (model coulomb,
 * R = 0 on contact rows), whichever form then solves the state
 * (mujoco/hard_aref.c). */
#ifndef CLCONE_MUJOCO_HARD_AREF_H
#define CLCONE_MUJOCO_HARD_AREF_H

#include "mujoco/adapter.h"

/* d's efc_aref on contact rows: each contact aimed at its depth, then the
 * part of J qacc_smooth - aref that J's range does not hold dropped, so
 * that the contacts ask only for accelerations some motion gives
 * (docs/mujoco.md, "What no motion reaches"): the least-squares fit
 * by J'J's factor, dense on a small component of trees, else CHOLMOD's.
 * Limits and other rows keep theirs.
 * CLCONE_ENOMEM, naming label, where the work space does not fit. */
clcone_status clc_mj_hard_aref(const mjModel *m, mjData *d, const char *label, clcone_error *err);

#endif
