/* APGD for the general-block problem on a device (kernels/blocks.cl): the
 * reference's iteration (ref/blocks_ref.c) as launches, through the one
 * iteration loop (core/iterate.c), for a batch of K problems at once: their
 * scaled problems concatenated block-diagonally, each with its own step
 * 1/L, momentum and gradient restart (its t in real_t on the device,
 * where the reference keeps double), and its own stop: the loop's checks
 * freeze a stopped problem's blocks. An iteration is three launches the
 * host only enqueues (the momentum with the restart test, W y + q, the
 * projected step), or a batch runs from check to check in one launch of
 * blk_iterate (BDEV_GROUP_MAX_BLOCKS says when); a check reads g and
 * W g + q (one wait) and measures each active
 * problem's error on the host in double (clc_bproblem_error_scaled),
 * so both backends measure alike. A problem's blocks see only its own
 * rows, values and momentum, summed in the order they have alone, so each
 * problem's iterates, stop and forces are bitwise those of its solve
 * alone (a batch of one). */
#include "opencl/blocks.h"
#include "core/parallel.h"
#include "opencl/opencl.h"
#include "core/internal.h"
#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    B_OFF, B_KIND, B_RP, B_COL, B_VOFF, B_PROB, B_POFF, B_ACT, B_VAL, B_Q, B_BOUND, B_G, B_PREV, B_Y, B_U, B_UP,
    B_STATE, B_STEP, B_XC, B_COUNT
};

typedef struct bdev {
    clcone_context *c;
    int K;
    const clc_bproblem *const *p;
    double *const *f;    /* K: the starts, and the forces on return */
    int threads;         /* the host's work a problem on these */
    clc_bproblem all; /* the scaled problems concatenated */
    int *roff, *boff;    /* K + 1 row and block offsets of the problems in all */
    int *prob, *act;     /* per block of all: its problem; per problem: still iterating */
    double *S, *g, *u;   /* all.m each */
    double *L, *state, *step; /* K, 2K (t and t_next, kernels/blocks.cl), K */
    size_t lanes, lanes_it;   /* of blk_momentum's and blk_iterate's work-group a problem */
    int group;                /* iterations by blk_iterate (bdev_kernels says when) */
    int enqueued;             /* the last iteration enqueued */
    const clcone_options *o;
    cl_mem mem[B_COUNT];
    void *stage;              /* 2 all.m reals: a check's g and u as read */
    float *fx;                /* float: 4 all.m, the device's offsets g and prev, centre xc and q */
    double *xc, *last;        /* float: the centre (all.m), each problem's last error (K) */
    cl_kernel k_mul, k_chk, k_mom, k_proj, k_it; /* k_chk: blk_mul on g, for the checks */
} bdev;

/* blk_iterate runs the iterations when every compute unit has a problem
 * of its own and none is so large that its one work-group would hold the
 * others up: MuJoCo's worlds (32-row humanoids, 16-1,024 of them) then
 * take one launch from check to check instead of three an iteration. */
#define BDEV_GROUP_MAX_BLOCKS 256

/* Lanes of a work-group a problem (blk_iterate, blk_momentum): their sums
 * give the same bits for any count (kernels/blocks.cl), so a CPU, which
 * runs a group's lanes one after another, takes 8: with 64 the loops
 * between the barriers cost more than a 32-row problem's work (POCL,
 * 256 humanoid worlds: 8 lanes 0.6-0.8 s of solves over 20 steps, 64
 * lanes 0.9 s, 1 lane 0.7-0.8 s); a GPU takes CONE_REDUCE_WG. */
#define BDEV_CPU_LANES 8

static clcone_status bdev_lanes(clcone_context *c, cl_kernel k, const char *name, size_t *lanes, clcone_error *err)
{
    return clc_kernel_lanes(c, k, name, c->info.is_cpu ? BDEV_CPU_LANES : CONE_REDUCE_WG, lanes, err);
}

static void bdev_free(bdev *D)
{
    for (int i = 0; i < B_COUNT; ++i) clc_buf_free(D->c, &D->mem[i]);
    if (D->k_mul) clReleaseKernel(D->k_mul);
    if (D->k_mom) clReleaseKernel(D->k_mom);
    if (D->k_proj) clReleaseKernel(D->k_proj);
    if (D->k_it) clReleaseKernel(D->k_it);
    if (D->k_chk) clReleaseKernel(D->k_chk);
    clc_bproblem_free(&D->all);
    free(D->roff);
    free(D->S);
    free(D->L);
    free(D->stage);
    free(D->fx);
    free(D->xc);
}

/* The scaled problem s and its start g in float, checked as the upload
 * checks them (clc_stage_reals) but a problem at a time, so that the
 * message names the problem's own row, not the batch's (the caller names
 * the problem). */
static clcone_status float_range(const clcone_context *c, const clc_bproblem *s, const double *g,
                                 clcone_error *err)
{
    size_t nv = (size_t)s->val_off[s->nnzb], n = nv > (size_t)s->m ? nv : (size_t)s->m;
    void *stage = clc_calloc(n + 1, sizeof(float), err, "a float check");
    clcone_status st;
    if (!stage) return CLCONE_ENOMEM;
    if (!(st = clc_stage_reals(c, "scaled q row", 1, s->q, (size_t)s->m, stage, err))
        && !(st = clc_stage_reals(c, "scaled bound row", 1, s->bound, (size_t)s->m, stage, err))
        && !(st = clc_stage_reals(c, "start row", 1, g, (size_t)s->m, stage, err)))
        st = clc_stage_reals(c, "scaled W entry", 1, s->val, nv, stage, err);
    free(stage);
    return st;
}

/* Problem k scaled in place in D->all (no copy of its own to
 * concatenate), its step and its start. */
static clcone_status scale_item(void *job, int k, clcone_error *err)
{
    bdev *D = job;
    int r0 = D->roff[k];
    clcone_status st;
    clc_bproblem s = *D->p[k]; /* p[k]'s structure, D->all's values */
    s.q = D->all.q + r0;
    s.bound = D->all.bound + r0;
    s.val = D->all.val + D->all.val_off[D->all.row_ptr[D->boff[k]]];
    clc_bproblem_scale(D->p[k], D->S + r0, s.q, s.bound, s.val);
    D->L[k] = clc_bproblem_lipschitz(&s);
    if (!(D->L[k] > 0))
        return clc_fail(err, CLCONE_EINVAL, "problem %d: the scaled W has no positive eigenvalue estimate (%g)", k,
                           D->L[k]);
    clc_bproblem_start(&s, D->S + r0, D->o->warm_start ? D->f[k] : NULL, D->g + r0);
    if (D->c->prec != CLCONE_DOUBLE && (st = float_range(D->c, &s, D->g + r0, err))) return st;
    D->act[k] = 1;
    D->state[2 * k] = 1;
    D->step[k] = 1 / D->L[k];
    return CLCONE_OK;
}

/* Host arrays, the batch's layout, and each problem scaled into it. */
static clcone_status bdev_scale(bdev *D, int *failed, clcone_error *err)
{
    size_t K = (size_t)D->K, m = 0, nb = 0;
    clcone_status s;
    for (int k = 0; k < D->K; ++k) {
        m += (size_t)D->p[k]->m;
        nb += (size_t)D->p[k]->nb;
    }
    D->roff = clc_calloc(4 * K + 2 + nb, sizeof *D->roff, err, "the batch's offsets");
    D->S = clc_calloc(3 * m, sizeof *D->S, err, "the scaled iterate");
    D->L = clc_calloc(4 * K, sizeof *D->L, err, "the problems' steps");
    if (!D->roff || !D->S || !D->L) return CLCONE_ENOMEM;
    D->boff = D->roff + K + 1;
    D->act = D->boff + K + 1;
    D->prob = D->act + K;
    D->g = D->S + m;
    D->u = D->g + m;
    D->state = D->L + K;
    D->step = D->state + 2 * K;
    for (int k = 0; k < D->K; ++k) {
        D->roff[k + 1] = D->roff[k] + D->p[k]->m;
        D->boff[k + 1] = D->boff[k] + D->p[k]->nb;
        for (int b = D->boff[k]; b < D->boff[k + 1]; ++b) D->prob[b] = k;
    }
    if ((s = clc_bproblem_concat_layout(D->p, D->K, &D->all, err))) return s;
    return clc_each_item(D->threads, D->K, scale_item, D, failed, err);
}

/* The concatenated scaled problem, starts, steps and flags on the device. */
static clcone_status bdev_upload(bdev *D, clcone_error *err)
{
    const clc_bproblem *s = &D->all;
    clcone_context *c = D->c;
    cl_mem *m = D->mem;
    size_t nr = (size_t)s->m, K = (size_t)D->K;
    clcone_status st;
    if ((st = clc_buf_ints(c, s->off, (size_t)s->nb + 1, &m[B_OFF], err))
        || (st = clc_buf_ints(c, s->kind, (size_t)s->nb, &m[B_KIND], err))
        || (st = clc_buf_ints(c, s->row_ptr, (size_t)s->nb + 1, &m[B_RP], err))
        || (st = clc_buf_ints(c, s->col, (size_t)s->nnzb, &m[B_COL], err))
        || (st = clc_buf_ints(c, s->val_off, (size_t)s->nnzb + 1, &m[B_VOFF], err))
        || (st = clc_buf_ints(c, D->prob, (size_t)s->nb, &m[B_PROB], err))
        || (st = clc_buf_ints(c, D->boff, K + 1, &m[B_POFF], err))
        || (st = clc_buf_ints(c, D->act, K, &m[B_ACT], err))
        || (st = clc_buf_reals(c, "scaled W entry", 1, s->val, (size_t)s->val_off[s->nnzb], &m[B_VAL], err))
        || (st = clc_buf_reals(c, "scaled q row", 1, s->q, nr, &m[B_Q], err))
        || (st = clc_buf_reals(c, "scaled bound row", 1, s->bound, nr, &m[B_BOUND], err))
        || (st = clc_buf_reals(c, "start row", 1, D->g, nr, &m[B_G], err))
        || (st = clc_buf_reals(c, "start row", 1, D->g, nr, &m[B_PREV], err))
        || (st = clc_buf_reals(c, "problem step", 1, D->step, K, &m[B_STEP], err))
        || (st = clc_buf_reals(c, "momentum state", 1, D->state, 2 * K, &m[B_STATE], err))
        || (st = clc_buf_alloc(c, nr * c->real_size, &m[B_Y], err))
        || (st = clc_buf_reals(c, "centre row", 1, D->u, nr, &m[B_XC], err)) /* zeros yet */
        || (st = clc_buf_alloc(c, nr * c->real_size, &m[B_U], err))
        || (st = clc_buf_alloc(c, (size_t)s->nb * c->real_size, &m[B_UP], err)))
        return st;
    return CLCONE_OK;
}

/* blk_mul on g for the checks, and blk_iterate or the three launches of
 * an iteration. */
static clcone_status bdev_kernels(bdev *D, clcone_error *err)
{
    clcone_context *c = D->c;
    cl_mem *m = D->mem;
    int nb = D->all.nb, restart = 0, most = 0;
    clcone_status s;
    for (int k = 0; k < D->K; ++k)
        if (D->boff[k + 1] - D->boff[k] > most) most = D->boff[k + 1] - D->boff[k];
    D->group = D->K >= c->info.compute_units && most <= BDEV_GROUP_MAX_BLOCKS;
    if ((s = clc_kernel(c, "blk_mul", &D->k_chk, err))
        || (s = SET_ARGS(D->k_chk, "blk_mul", err, KI(nb), KM(m[B_OFF]), KM(m[B_RP]), KM(m[B_COL]), KM(m[B_VOFF]),
                         KM(m[B_VAL]), KM(m[B_Q]), KM(m[B_G]), KM(m[B_U]))))
        return s;
    if (D->group) {
        if ((s = clc_kernel(c, "blk_iterate", &D->k_it, err))
            || (s = SET_ARGS(D->k_it, "blk_iterate", err, KI(D->K), KI(restart), KI(restart), KM(m[B_POFF]),
                             KM(m[B_OFF]), KM(m[B_KIND]), KM(m[B_RP]), KM(m[B_COL]), KM(m[B_VOFF]), KM(m[B_VAL]),
                             KM(m[B_Q]), KM(m[B_BOUND]), KM(m[B_XC]), KM(m[B_ACT]), KM(m[B_STEP]), KM(m[B_UP]),
                             KM(m[B_STATE]),
                             KM(m[B_G]), KM(m[B_PREV]), KM(m[B_Y]), KM(m[B_U]),
                             KLOCAL((size_t)CONE_REDUCE_WG * c->real_size))))
            return s;
        return bdev_lanes(c, D->k_it, "blk_iterate", &D->lanes_it, err);
    }
    if ((s = clc_kernel(c, "blk_mul", &D->k_mul, err)) || (s = clc_kernel(c, "blk_momentum", &D->k_mom, err))
        || (s = clc_kernel(c, "blk_project", &D->k_proj, err))
        || (s = SET_ARGS(D->k_mul, "blk_mul", err, KI(nb), KM(m[B_OFF]), KM(m[B_RP]), KM(m[B_COL]), KM(m[B_VOFF]),
                         KM(m[B_VAL]), KM(m[B_Q]), KM(m[B_Y]), KM(m[B_U])))
        || (s = SET_ARGS(D->k_mom, "blk_momentum", err, KI(D->K), KM(m[B_POFF]), KM(m[B_OFF]), KM(m[B_ACT]),
                         KI(restart), KM(m[B_UP]), KM(m[B_STATE]), KM(m[B_G]), KM(m[B_PREV]), KM(m[B_Y]),
                         KLOCAL((size_t)CONE_REDUCE_WG * c->real_size)))
        || (s = SET_ARGS(D->k_proj, "blk_project", err, KI(nb), KM(m[B_OFF]), KM(m[B_KIND]), KM(m[B_PROB]),
                         KM(m[B_ACT]), KM(m[B_STEP]), KM(m[B_BOUND]), KM(m[B_XC]), KM(m[B_Y]), KM(m[B_U]),
                         KM(m[B_G]),
                         KM(m[B_PREV]), KM(m[B_UP]))))
        return s;
    return bdev_lanes(c, D->k_mom, "blk_momentum", &D->lanes, err);
}

/* blk_iterate from iteration it up to the next check, at most
 * BDEV_GROUP_SPAN iterations (a large check_every must not make one
 * launch run for seconds: a GPU's watchdog), or it alone when a time cap
 * or a cancel may stop the solve between checks; once: the loop's later
 * steps of the span find them enqueued. */
#define BDEV_GROUP_SPAN 100
static clcone_status bdev_iterate_group(bdev *D, int it, clcone_error *err)
{
    int n = 1, restart = it > 1;
    clcone_status s;
    if (it <= D->enqueued) return CLCONE_OK;
    if (!(D->o->max_seconds > 0) && !D->o->cancel)
        while (n < BDEV_GROUP_SPAN && !clc_is_block_check_iteration(D->o, it + n - 1)) ++n;
    if ((s = SET_ARGS(D->k_it, "blk_iterate", err, KI(D->K), KI(n), KI(restart)))
        || (s = clc_run(D->c, D->k_it, (size_t)D->K * D->lanes_it, D->lanes_it, "blk_iterate", err)))
        return s;
    D->enqueued = it + n - 1;
    return CLCONE_OK;
}

/* One APGD iteration of every active problem, as apgd_step in
 * ref/blocks_ref.c, in launches that the host only enqueues: the momentum
 * (with the last iteration's restart test), W y + q, the projected step;
 * or blk_iterate's span. */
static clcone_status bdev_step(void *ctx, int it, clcone_error *err)
{
    bdev *D = ctx;
    clcone_context *c = D->c;
    size_t nb = (size_t)D->all.nb;
    int restart = it > 1; /* iteration 1 has no restart test: t stays 1, so y = g */
    cl_int e;
    clcone_status s;
    if (D->group) return bdev_iterate_group(D, it, err);
    e = it <= 2 ? clSetKernelArg(D->k_mom, 4, sizeof restart, &restart) : CL_SUCCESS;
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "setting blk_momentum's restart flag");
    if ((s = clc_run(c, D->k_mom, (size_t)D->K * D->lanes, D->lanes, "blk_momentum", err))
        || (s = clc_run(c, D->k_mul, nb, 0, "blk_mul", err))
        || (s = clc_run(c, D->k_proj, nb, 0, "blk_project", err)))
        return s;
    return CLCONE_OK;
}

/* The float floor. In float, W and the sums of W x hold their values to
 * a relative 6e-8 of the terms and an iterate g its entries to 6e-8 of
 * themselves; where forces fight each other (conflicting equality
 * constraints) |g| and sum |W_ij g_j| are far above |W g + q| and the
 * error measure's scale, and the iterates stop moving (a step below
 * their rounding) short of float's tol. Measured on three conflicting
 * connects between two 1 cm bodies (tests/test_mujoco_robust.c): the exact
 * solution rounded to float had an error of 1.1e-5 to 1.8e-5 with W g +
 * q summed in float, 5e-7 to 3e-6 with it in double; the float solve
 * stalled at 2.4e-5 (10^6 iterations a step above tol 1e-5), where the
 * device in double converges as the reference does. So in float the
 * device iterates offsets from a centre xc: u = W (g - xc) + c with c =
 * W xc + q computed on the host in double, and a free block's offsets
 * keep their own precision (kernels/blocks.cl). At a check the host
 * takes g = xc + offset and W g + q in double for the measure, and a
 * problem whose error did not halve since its last check is recentred:
 * xc = g rounded to float, the offsets (g and prev) moved by the change. */

/* u = W x + q of problem k in double (x, u on its rows; q: D->all's). */
static void mul_problem(bdev *D, int k, const double *x, double *u)
{
    int r0 = D->roff[k];
    clc_bproblem s = *D->p[k]; /* p[k]'s structure, D->all's values */
    s.q = D->all.q + r0;
    s.val = D->all.val + D->all.val_off[D->all.row_ptr[D->boff[k]]];
    clc_bproblem_mul(&s, x + r0, u + r0, 1);
}

/* Problem k recentred at D->g (its absolute iterate). */
static void recentre(bdev *D, int k)
{
    size_t n = (size_t)D->all.m;
    float *g = D->fx, *prev = g + n, *xc = prev + n, *c = xc + n;
    for (int i = D->roff[k]; i < D->roff[k + 1]; ++i) {
        float x = (float)D->g[i];
        g[i] = (float)(D->g[i] - x);
        prev[i] = (float)((double)prev[i] + (D->xc[i] - x));
        xc[i] = x;
        D->xc[i] = x;
    }
    mul_problem(D, k, D->xc, D->u); /* D->u is free again: the measure is done */
    for (int i = D->roff[k]; i < D->roff[k + 1]; ++i) c[i] = (float)D->u[i];
}

/* A float check: the offsets g and prev read (one wait), g = xc + offset,
 * u = W g + q in double, errors; then the stalled problems recentred and
 * the four arrays written back. */
static clcone_status measure_float(bdev *D, const int *active, double *errors, clcone_error *err)
{
    clcone_context *c = D->c;
    size_t n = (size_t)D->all.m, bytes = n * sizeof(float);
    float *fg, *fprev;
    int moved = 0;
    cl_int e;
    if (!D->fx) {
        D->fx = clc_calloc(4 * n + 1, sizeof *D->fx, err, "the float centre");
        D->xc = clc_calloc(n + (size_t)D->K + 1, sizeof *D->xc, err, "the float centre");
        if (!D->fx || !D->xc) return CLCONE_ENOMEM;
        D->last = D->xc + n;
        for (size_t i = 0; i < n; ++i) D->fx[3 * n + i] = (float)D->all.q[i];
    }
    fg = D->fx;
    fprev = fg + n;
    e = clEnqueueReadBuffer(c->queue, D->mem[B_G], CL_FALSE, 0, bytes, fg, 0, NULL, NULL);
    if (e == CL_SUCCESS) e = clEnqueueReadBuffer(c->queue, D->mem[B_PREV], CL_TRUE, 0, bytes, fprev, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "reading the iterate at a check");
    for (int k = 0; k < D->K; ++k) {
        int r0 = D->roff[k];
        if (!active[k]) continue;
        for (int i = r0; i < D->roff[k + 1]; ++i) D->g[i] = D->xc[i] + fg[i];
        mul_problem(D, k, D->g, D->u);
        errors[k] = clc_bproblem_error_scaled(D->p[k], D->S + r0, D->g + r0, D->u + r0);
        for (int i = r0; i < D->roff[k + 1]; ++i)
            if (!isfinite(D->g[i])) errors[k] = INFINITY;
        if (isfinite(errors[k]) && D->last[k] > 0 && errors[k] > 0.5 * D->last[k]) {
            recentre(D, k);
            moved = 1;
        }
        D->last[k] = errors[k];
    }
    if (!moved) return CLCONE_OK;
    for (int a = 0; a < 4 && e == CL_SUCCESS; ++a) {
        static const int buf[4] = {B_G, B_PREV, B_XC, B_Q};
        e = clEnqueueWriteBuffer(c->queue, D->mem[buf[a]], a == 3, 0, bytes, D->fx + (size_t)a * n, 0, NULL, NULL);
    }
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "recentring the float iterate");
}

/* W g + q into u, and g and u read back with one wait (the queue is in
 * order: the second read's return means both are done); in float,
 * measure_float. */
static clcone_status bdev_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    bdev *D = ctx;
    clcone_context *c = D->c;
    size_t n = (size_t)D->all.m, bytes = n * c->real_size;
    cl_int e;
    clcone_status s;
    (void)it;
    if (c->prec != CLCONE_DOUBLE) return measure_float(D, active, errors, err);
    if (!D->stage && !(D->stage = clc_calloc(2 * n + 1, c->real_size, err, "the checks' staging"))) return CLCONE_ENOMEM;
    if ((s = clc_run(c, D->k_chk, (size_t)D->all.nb, 0, "blk_mul", err))) return s;
    e = clEnqueueReadBuffer(c->queue, D->mem[B_G], CL_FALSE, 0, bytes, D->stage, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(c->queue, D->mem[B_U], CL_TRUE, 0, bytes, (char *)D->stage + bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "reading the iterate at a check");
    clc_unstage_reals(c, D->stage, D->g, n);
    clc_unstage_reals(c, (char *)D->stage + bytes, D->u, n);
    /* on the calling thread: a check's errors are too little work to wait,
     * at every check, for a thread that a loaded machine may not run for a
     * time slice (on threads, one run of 256 humanoid worlds in double
     * on the loaded 2-core VM: 3,652 world steps a second on 2 threads,
     * 4,575 on one) */
    for (int k = 0; k < D->K; ++k) {
        int r0 = D->roff[k];
        if (!active[k]) continue;
        errors[k] = clc_bproblem_error_scaled(D->p[k], D->S + r0, D->g + r0, D->u + r0);
        for (int i = r0; i < D->roff[k + 1]; ++i)
            if (!isfinite(D->g[i])) errors[k] = INFINITY;
    }
    return CLCONE_OK;
}

/* The problems the loop stopped at this check: frozen from here on. */
static clcone_status bdev_checked(void *ctx, int it, const int *active, const double *errors, int changed,
                                  clcone_error *err)
{
    bdev *D = ctx;
    cl_int e;
    (void)it;
    (void)errors;
    if (!changed) return CLCONE_OK;
    memcpy(D->act, active, sizeof *D->act * (size_t)D->K);
    e = clEnqueueWriteBuffer(D->c->queue, D->mem[B_ACT], CL_TRUE, 0, sizeof *D->act * (size_t)D->K, D->act, 0, NULL,
                             NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "writing the active problems");
}

static clcone_status bdev_sync(void *ctx, clcone_error *err)
{
    cl_int e = clFinish(((bdev *)ctx)->c->queue);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clFinish");
}

clcone_status clc_dev_blocks_batch(clcone_context *c, int K, const clc_bproblem *const *p,
                                      const clcone_options *o, int threads, double *const *f,
                                      clcone_prob_result *res, int *failed, clcone_error *err)
{
    bdev D;
    clc_iter_ops ops = {&D, K, 0, 0, bdev_step, bdev_measure, bdev_checked, bdev_sync, NULL, NULL, NULL, 0};
    clcone_status s;
    memset(&D, 0, sizeof D);
    D.c = c;
    D.K = K;
    D.p = p;
    D.f = f;
    D.threads = threads;
    D.o = o;
    ops.t0_ms = clc_now_ms();
    *failed = -1;
    if ((s = bdev_scale(&D, failed, err)) || (s = bdev_upload(&D, err)) || (s = bdev_kernels(&D, err))
        || (s = clc_iterate_on(&ops, o, clc_is_block_check_iteration, res, err)))
        goto out;
    /* the last check read the final iterates: the loop stops only at
     * checks, and a stopped problem's blocks are frozen (core/iterate.c) */
    for (int k = 0; k < K; ++k) {
        for (int i = 0; i < p[k]->m; ++i) f[k][i] = D.S[D.roff[k] + i] * D.g[D.roff[k] + i];
        res[k].cost = clc_bproblem_cost(p[k], f[k]);
    }
out:
    bdev_free(&D);
    return s;
}
