/* MuJoCo's errors and warnings as clcone's statuses (mujoco/guard.c): an error
 * jumps back to the clc_mujoco_call on its thread instead of ending the process
 * (why and how: docs/mujoco.md). */
#ifndef CLCONE_MUJOCO_GUARD_H
#define CLCONE_MUJOCO_GUARD_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

/* The two handlers, as MuJoCo holds them. */
typedef struct clc_mujoco_handlers {
    void (*error)(const char *);
    void (*warning)(const char *);
} clc_mujoco_handlers;

/* Installs clcone's handlers, returning those replaced; one thread, none running MuJoCo (docs/mujoco.md). */
clc_mujoco_handlers clc_mujoco_hold(void);
void clc_mujoco_release(clc_mujoco_handlers outer);

/* fn(arg)'s status, or CLCONE_EINVAL/ENOMEM when MuJoCo stopped inside; its data then not to be trusted. */
clcone_status clc_mujoco_call(clcone_status (*fn)(void *), void *arg, const char *label, clcone_error *err);

/* mj_makeData, mj_copyModel and mj_forward under clc_mujoco_call: the result, or NULL and the error. */
clcone_status clc_mujoco_make_data(const mjModel *m, const char *label, mjData **d, clcone_error *err);
clcone_status clc_mujoco_copy_model(const mjModel *m, const char *label, mjModel **copy, clcone_error *err);
clcone_status clc_mujoco_forward(const mjModel *m, mjData *d, const char *label, clcone_error *err);

/* Counts of the warnings that lose physics: mark zeroes them, lost (after it) is CLCONE_EINVAL if one came. */
typedef struct clc_mujoco_marks {
    int n[mjNWARNING];
} clc_mujoco_marks;
void clc_mujoco_mark(mjData *d, clc_mujoco_marks *mk);
clcone_status clc_mujoco_lost(mjData *d, const clc_mujoco_marks *mk, const char *label, const char *what,
                                 clcone_error *err);

#endif
