/* MuJoCo's errors and warnings as clcone's statuses (mujoco/guard.c).
 *
 * MuJoCo reports an error (mju_error: an arena overflow, an allocation
 * that failed) through mju_user_error, which must not return; without one
 * MuJoCo prints, logs to MUJOCO_LOG.TXT in the working directory and
 * exits the process with code 1, which the CLI reads as "not converged".
 * Its warnings (mju_warning) go through mju_user_warning, else to stdout
 * and the same log. clcone's error handler jumps back (longjmp) to the
 * clc_mujoco_call running on that thread, which returns a status with
 * MuJoCo's message; its warning handler hands the warning on to the
 * handler it replaced, if any (MuJoCo's default printing and logging is
 * dropped). Whether a warning lost physics is read from mjData's warning
 * counters (clc_mujoco_lost). */
#ifndef CLCONE_MUJOCO_GUARD_H
#define CLCONE_MUJOCO_GUARD_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

/* The two handlers, as MuJoCo holds them. */
typedef struct clc_mujoco_handlers {
    void (*error)(const char *);
    void (*warning)(const char *);
} clc_mujoco_handlers;

/* Installs clcone's handlers (MuJoCo's globals) and returns the ones they
 * replace, for clc_mujoco_release. Nested holds are fine: a hold
 * while clcone's are installed changes nothing. Called from one thread
 * while no other runs MuJoCo: a caller running MuJoCo on several threads
 * holds them from before its threads start to after they end (the
 * threads then only read the globals); a CLI holds them for its whole
 * run. */
clc_mujoco_handlers clc_mujoco_hold(void);
void clc_mujoco_release(clc_mujoco_handlers outer);

/* fn(arg) with MuJoCo's errors turned into a status: CLCONE_OK, or, when
 * MuJoCo stopped with an error inside it, CLCONE_EINVAL (CLCONE_ENOMEM
 * for a failed allocation) "label: MuJoCo stopped with an error: ...".
 * What MuJoCo had allocated when it stopped is not freed, and the data
 * it was working on are not to be trusted. Holds the handlers for the
 * call when the caller does not. fn returns a status of its own, passed
 * on. */
clcone_status clc_mujoco_call(clcone_status (*fn)(void *), void *arg, const char *label, clcone_error *err);

/* mj_makeData(m), mj_copyModel(NULL, m) and mj_forward(m, d) as
 * clc_mujoco_call runs them: *d or *copy, or NULL and the error (out
 * of memory: CLCONE_ENOMEM naming label). */
clcone_status clc_mujoco_make_data(const mjModel *m, const char *label, mjData **d, clcone_error *err);
clcone_status clc_mujoco_copy_model(const mjModel *m, const char *label, mjModel **copy, clcone_error *err);
clcone_status clc_mujoco_forward(const mjModel *m, mjData *d, const char *label, clcone_error *err);

/* The warnings that lose physics: a full contact list or constraint
 * arena (contacts or rows dropped), a bad qpos, qvel or qacc (the state
 * reset to the initial one) or ctrl (zeroed). clc_mujoco_mark keeps
 * d's counters of them and zeroes them (a reset zeroes every counter
 * before MuJoCo counts the warning that caused it, so a count from the
 * mark could not tell); clc_mujoco_lost, which must follow it, gives
 * the counts back with what was counted since added, and is
 * CLCONE_EINVAL "label: MuJoCo warned: TEXT (what it did); what" when one
 * of them was given since the mark. */
typedef struct clc_mujoco_marks {
    int n[mjNWARNING];
} clc_mujoco_marks;
void clc_mujoco_mark(mjData *d, clc_mujoco_marks *mk);
clcone_status clc_mujoco_lost(mjData *d, const clc_mujoco_marks *mk, const char *label, const char *what,
                                 clcone_error *err);

#endif
