/* MuJoCo's errors and warnings as clcone's statuses (mujoco/guard.h). */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/guard.h"
#include "core/internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static _Thread_local jmp_buf *guard_here;      /* the clc_mujoco_call running on this thread */
static _Thread_local char error_text[512];     /* MuJoCo's error, for that call's message */
static void (*chained_warning)(const char *);  /* the caller's warning handler that clcone's replaced */
static void (*chained_error)(const char *);    /* and error handler */

static void on_error(const char *msg)
{
    if (!guard_here) {
        /* MuJoCo outside any clc_mujoco_call (clcone's own calls all run
         * inside one): the caller's handler, else MuJoCo's default
         * (print, log, exit), as without clcone's */
        void (*outer)(const char *) = chained_error;
        mju_user_error = NULL; /* a caller's handler that returns: MuJoCo's default */
        if (outer) outer(msg);
        mju_error("%s", msg);
    }
    snprintf(error_text, sizeof error_text, "%s", msg);
    longjmp(*guard_here, 1);
}

/* MuJoCo's default would print to stdout and append to MUJOCO_LOG.TXT in
 * the working directory; what a warning lost is read from the counters. */
static void on_warning(const char *msg)
{
    if (chained_warning) chained_warning(msg);
}

clc_mujoco_handlers clc_mujoco_hold(void)
{
    clc_mujoco_handlers outer = {mju_user_error, mju_user_warning};
    if (mju_user_error != on_error) {
        chained_error = mju_user_error;
        mju_user_error = on_error;
    }
    if (mju_user_warning != on_warning) {
        chained_warning = mju_user_warning;
        mju_user_warning = on_warning;
    }
    return outer;
}

void clc_mujoco_release(clc_mujoco_handlers outer)
{
    mju_user_error = outer.error;
    mju_user_warning = outer.warning;
}

/* fn under a guard of this thread's; the handlers already held. */
static clcone_status jump_back(clcone_status (*fn)(void *), void *arg, const char *label, clcone_error *err)
{
    jmp_buf *const outer = guard_here;
    jmp_buf here;
    volatile clcone_status s;
    guard_here = &here;
    if (setjmp(here) == 0) s = fn(arg);
    else
        /* mju_malloc's words when the allocator returned NULL */
        s = clc_fail(err, strstr(error_text, "allocate memory") ? CLCONE_ENOMEM : CLCONE_EINVAL,
                        "%s: MuJoCo stopped with an error: %s", label, error_text);
    guard_here = outer;
    return s;
}

clcone_status clc_mujoco_call(clcone_status (*fn)(void *), void *arg, const char *label, clcone_error *err)
{
    clc_mujoco_handlers outer;
    clcone_status s;
    if (mju_user_error == on_error && mju_user_warning == on_warning) return jump_back(fn, arg, label, err);
    outer = clc_mujoco_hold();
    s = jump_back(fn, arg, label, err);
    clc_mujoco_release(outer);
    return s;
}

/* One MuJoCo call of the three below, for clc_mujoco_call. */
typedef struct mj_job {
    enum { MAKE_DATA, COPY_MODEL, FORWARD } what;
    const mjModel *m;
    mjData *d;
    mjModel *copy;
} mj_job;

static clcone_status run_job(void *arg)
{
    mj_job *j = arg;
    if (j->what == MAKE_DATA) j->d = mj_makeData(j->m);
    else if (j->what == COPY_MODEL) j->copy = mj_copyModel(NULL, j->m);
    else mj_forward(j->m, j->d);
    return CLCONE_OK;
}

/* A job whose result is NULL without MuJoCo's error: out of memory. */
static clcone_status made(clcone_status s, const void *result, const char *label, const char *what,
                          clcone_error *err)
{
    if (!s && !result) s = clc_fail(err, CLCONE_ENOMEM, "%s: out of memory for %s", label, what);
    return s;
}

clcone_status clc_mujoco_make_data(const mjModel *m, const char *label, mjData **d, clcone_error *err)
{
    mj_job j = {MAKE_DATA, m, NULL, NULL};
    clcone_status s = clc_mujoco_call(run_job, &j, label, err);
    s = made(s, j.d, label, "MuJoCo's data", err);
    *d = s ? NULL : j.d;
    return s;
}

clcone_status clc_mujoco_copy_model(const mjModel *m, const char *label, mjModel **copy, clcone_error *err)
{
    mj_job j = {COPY_MODEL, m, NULL, NULL};
    clcone_status s = clc_mujoco_call(run_job, &j, label, err);
    s = made(s, j.copy, label, "a copy of the model", err);
    *copy = s ? NULL : j.copy;
    return s;
}

clcone_status clc_mujoco_forward(const mjModel *m, mjData *d, const char *label, clcone_error *err)
{
    mj_job j = {FORWARD, m, d, NULL};
    return clc_mujoco_call(run_job, &j, label, err);
}

/* The warnings that lose physics, and what MuJoCo did on each. */
static const struct {
    int w;
    const char *did;
} LOST[] = {
    {mjWARN_CONTACTFULL, "contacts beyond it were dropped"},
    {mjWARN_CNSTRFULL, "the step's constraints were dropped"},
    {mjWARN_BADQPOS, "MuJoCo reset the state to the initial one"},
    {mjWARN_BADQVEL, "MuJoCo reset the state to the initial one"},
    {mjWARN_BADQACC, "MuJoCo reset the state to the initial one"},
    {mjWARN_BADCTRL, "MuJoCo zeroed the controls"},
};
#define NLOST (int)(sizeof LOST / sizeof *LOST)

void clc_mujoco_mark(mjData *d, clc_mujoco_marks *mk)
{
    for (int k = 0; k < NLOST; ++k) {
        mk->n[LOST[k].w] = d->warning[LOST[k].w].number;
        d->warning[LOST[k].w].number = 0;
    }
}

clcone_status clc_mujoco_lost(mjData *d, const clc_mujoco_marks *mk, const char *label, const char *what,
                                 clcone_error *err)
{
    clcone_status s = CLCONE_OK;
    for (int k = 0; k < NLOST; ++k) {
        int w = LOST[k].w;
        if (!s && d->warning[w].number > 0)
            s = clc_fail(err, CLCONE_EINVAL, "%s: MuJoCo warned: %s (%s); %s", label,
                            mju_warningText(w, (size_t)d->warning[w].lastinfo), LOST[k].did, what);
        d->warning[w].number += mk->n[w];
    }
    return s;
}
