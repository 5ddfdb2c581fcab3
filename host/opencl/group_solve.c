/* The drivers of the whole-problem kernels (kernels/group_solve.cl): a
 * local-form batch whose problems are small enough runs a work-group per
 * problem, every colour, iteration and error check inside the launch, a
 * launch per growing chunk of iterations; and clc_dev_solve, which
 * picks them or a solver's multi-launch loop. */
#include "opencl/dev_batch.h"
#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest problem solved inside one work-group. Beyond it one problem
 * would leave the device's other compute units idle, and the
 * multi-launch loop is used. On a CPU device one work-item still beats
 * the multi-launch loop's launches at 12,000 contacts (POCL, 2 cores,
 * APGD 300 iterations: 503 ms against 724; CGS level); on a GPU a 64-lane
 * work-group holds far less of the device. */
#define GROUP_MAX_CONTACTS_CPU 16384
#define GROUP_MAX_CONTACTS_GPU 4096

clcone_status clc_group_colors(const clc_dev_host *h, int **pcol_out, int **gptr_out, int **gorder_out,
                                  clcone_error *err)
{
    int n = h->n, np = h->nprob;
    int *colour = clc_calloc((size_t)n, sizeof *colour, err, "colours");
    int *pcol = clc_calloc((size_t)np + 1, sizeof *pcol, err, "problem colours");
    int *gptr = NULL, *gorder = clc_calloc((size_t)n, sizeof *gorder, err, "colour order"), *cursor = NULL;
    clcone_status s = CLCONE_ENOMEM;
    if (!colour || !pcol || !gorder) goto out;
    for (int k = 0; k < h->ncolors; ++k)
        for (int i = h->color_ptr[k]; i < h->color_ptr[k + 1]; ++i) colour[h->order[i]] = k;
    for (int p = 0; p < np; ++p) {
        int top = -1;
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) top = colour[c] > top ? colour[c] : top;
        pcol[p + 1] = pcol[p] + top + 1;
    }
    gptr = clc_calloc((size_t)pcol[np] + 1, sizeof *gptr, err, "colour offsets");
    cursor = clc_calloc((size_t)pcol[np] + 1, sizeof *cursor, err, "colour cursors");
    if (!gptr || !cursor) goto out;
    for (int p = 0; p < np; ++p)
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) gptr[pcol[p] + colour[c] + 1]++;
    for (int k = 0; k < pcol[np]; ++k) gptr[k + 1] += gptr[k];
    memcpy(cursor, gptr, sizeof *cursor * (size_t)pcol[np]);
    for (int p = 0; p < np; ++p)
        for (int c = h->prob_off[p]; c < h->prob_off[p + 1]; ++c) gorder[cursor[pcol[p] + colour[c]]++] = c;
    *pcol_out = pcol;
    *gptr_out = gptr;
    *gorder_out = gorder;
    pcol = gptr = gorder = NULL;
    s = CLCONE_OK;
out:
    free(colour);
    free(pcol);
    free(gptr);
    free(gorder);
    free(cursor);
    return s;
}

int clc_group_max_contacts(const clcone_context *c)
{
    return c->info.is_gpu ? GROUP_MAX_CONTACTS_GPU : GROUP_MAX_CONTACTS_CPU;
}

static int group_holds(const clcone_context *c, int n)
{
    return n <= clc_group_max_contacts(c);
}

int clc_group_fits(const clc_dev_batch *d)
{
    /* they check on the device and keep no history */
    if (d->body.nb || d->o->history) return 0;
    for (int k = 0; k < d->nprob; ++k)
        if (!group_holds(d->c, d->h.prob_off[k + 1] - d->h.prob_off[k])) return 0;
    return 1;
}

/* The most iterations a launch of a whole-problem kernel runs: the host
 * sees the states, and applies the time cap, only between launches. */
#define GROUP_MAX_BUDGET (1 << 14)

/* Launches of a whole-problem kernel whose arguments are set, the last
 * two being restart and the iteration budget, until every problem has
 * stopped: a growing number of iterations per launch; after each, the
 * states, errors and reactions come back in one wait, and the host
 * applies its time cap. The first launch restarts every problem
 * (restart), or goes on from the states and r on the device (a solve
 * resumed). Fills the results and r. */

clcone_status clc_group_loop(clc_dev_batch *d, cl_kernel k, const char *name, int restart, double *r,
                              clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    /* under a cap or cancel flag the first launch is one iteration, so
     * that the next are sized from the pace it shows */
    int np = d->nprob, budget = isinf(clc_cap_slice_ms(o)) ? 128 : 1;
    /* a GPU runs a problem's contacts on a warp's lanes; a CPU device
     * runs a work-group's items one after another, where every barrier
     * costs a pass over them, so one item per problem does the least */
    size_t lanes;
    size_t m = 3 * (size_t)d->n;
    int *state = clc_calloc(2 * (size_t)np, sizeof *state, err, "problem states");
    void *errs_dev = clc_calloc((size_t)np, c->real_size, err, "problem errors");
    double *errs = clc_calloc((size_t)np, sizeof *errs, err, "problem errors");
    clcone_status s = CLCONE_ENOMEM;
    cl_uint nargs = 0;
    cl_int e;
    if (!state || !errs || !errs_dev) goto out;
    if ((s = clc_kernel_lanes(c, k, name, c->info.is_gpu ? CONE_REDUCE_WG : 1, &lanes, err))) goto out;
    e = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    if (e != CL_SUCCESS || nargs < 2) {
        s = clc_cl_fail(err, e, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
        goto out;
    }
    for (;;) {
        int running = 0;
        double now, launched = clc_now_ms();
        e = clSetKernelArg(k, nargs - 2, sizeof restart, &restart);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, nargs - 1, sizeof budget, &budget);
        if (e != CL_SUCCESS) {
            s = clc_cl_fail(err, e, "clSetKernelArg(restart, budget)");
            goto out;
        }
        if ((s = clc_run(c, k, (size_t)np * lanes, lanes, name, err))) goto out;
        e = clEnqueueReadBuffer(c->queue, d->g_state, CL_FALSE, 0, sizeof(int) * 2 * (size_t)np, state, 0, NULL,
                                NULL);
        if (e == CL_SUCCESS)
            e = clEnqueueReadBuffer(c->queue, d->g_err, CL_FALSE, 0, (size_t)np * c->real_size, errs_dev, 0, NULL,
                                    NULL);
        if (e == CL_SUCCESS)
            e = clEnqueueReadBuffer(c->queue, d->r, CL_FALSE, 0, m * c->real_size, d->stage, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clFinish(c->queue);
        if (e != CL_SUCCESS) {
            s = clc_cl_fail(err, e, "reading the problem states");
            goto out;
        }
        restart = 0;
        now = clc_now_ms();
        clc_unstage_reals(c, errs_dev, errs, (size_t)np);
        for (int p = 0; p < np; ++p) {
            clcone_prob_result *out = &d->res->items[p];
            if (state[2 * p + 1] == CONE_GROUP_RUNNING) running++;
            else if (out->time_ms == 0) out->time_ms = now - d->t0;
            if (o->progress && state[2 * p] > 0) o->progress(o->progress_user, p, state[2 * p], errs[p]);
        }
        if (!running || budget == 0) break;
        /* the time cap is the batch's: its problems share the launches;
         * past it one launch of no iterations, in which a kernel that
         * keeps its best iterate (newton_local) puts it back in r */
        budget = clc_next_budget(o, budget, GROUP_MAX_BUDGET, now - launched, now - d->t0);
        if (budget == 0)
            for (int p = 0; p < np; ++p)
                if (state[2 * p + 1] == CONE_GROUP_RUNNING) d->res->items[p].time_ms = now - d->t0;
    }
    clc_unstage_reals(c, d->stage, r, m);
    for (int p = 0; p < np; ++p) {
        clcone_prob_result *out = &d->res->items[p];
        int it = state[2 * p];
        out->iters = it;
        out->error = errs[p];
        clc_stop(out,
                    state[2 * p + 1] == CONE_GROUP_CONVERGED  ? CLCONE_STOP_TOL
                    : state[2 * p + 1] == CONE_GROUP_DIVERGED ? CLCONE_STOP_NONFINITE
                    : state[2 * p + 1] == CONE_GROUP_MAXITER  ? CLCONE_STOP_ITERS
                                                              : CLCONE_STOP_TIME, /* still running */
                    o, it);
    }
out:
    free(state);
    free(errs);
    free(errs_dev);
    return s;
}

/* The per-problem state buffers of the whole-problem kernels. */
clcone_status clc_group_alloc_states(clc_dev_batch *d, clcone_error *err)
{
    clcone_status s;
    if ((s = clc_buf_alloc(d->c, 2 * sizeof(int) * (size_t)d->nprob, &d->g_state, err))) return s;
    return clc_buf_alloc(d->c, (size_t)d->nprob * d->c->real_size, &d->g_err, err);
}

/* Jacobi or CGS with one work-group per problem: the kernel and its
 * buffers (diagonal positions, steps, per-problem colours, the second
 * Jacobi iterate) made once. */
static clcone_status group_make(clc_dev_batch *d, enum clc_group_kind kind, clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    int np = d->nprob, budget = 0;
    int solver = (int)kind; /* group_solve_local's GROUP_* */
    int *pcol = NULL, *gptr = NULL, *gorder = NULL;
    cl_mem *m = d->g_mem;
    kreal tol = KREAL(o->tol);
    clcone_status s;
    if ((s = clc_group_colors(&d->h, &pcol, &gptr, &gorder, err))) goto out;
    if ((s = clc_dev_local_diag(d, &m[0], err))
        || (s = clc_buf_reals(c, "step of contact", 1, solver ? d->h.omega_gs : d->h.omega_j, (size_t)d->n, &m[1],
                                 err))
        || (s = clc_buf_ints(c, pcol, (size_t)np + 1, &m[2], err))
        || (s = clc_buf_ints(c, gptr, (size_t)pcol[np] + 1, &m[3], err))
        || (s = clc_buf_ints(c, gorder, (size_t)d->n, &m[4], err))
        || (s = clc_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &m[5], err))
        || (s = clc_buf_alloc(c, 3 * (size_t)d->n * c->real_size, &m[6], err))
        || (s = clc_buf_alloc(c, 6 * (size_t)d->n * c->real_size, &m[7], err)) /* acgs: the last check's x, u */
        || (s = clc_buf_alloc(c, (size_t)np * c->real_size, &d->g_theta, err)) /* acgs: theta */
        || (s = clc_group_alloc_states(d, err))
        || (s = clc_kernel(c, "group_solve_local", &d->k_group, err)))
        goto out;
    s = SET_ARGS(d->k_group, "group_solve_local", err, KM(d->prob_off), KM(d->row_ptr), KM(d->col), KM(d->W),
                 KM(m[0]), KM(d->q), KM(d->mu), KM(m[1]), KM(m[2]), KM(m[3]), KM(m[4]), KM(d->r), KM(m[5]),
                 KM(m[6]), KM(d->g_theta), KM(m[7]), KM(d->g_state), KM(d->g_err), KI(solver), KI(d->model),
                 KI(d->facets), KI(d->inner),
                 KI(o->max_iter), KI(o->check_every), KR(c, tol), KI(budget), KI(budget));
out:
    free(pcol);
    free(gptr);
    free(gorder);
    return s;
}

/* APGD with one work-group per problem (x is d->r): the kernel and its
 * vectors made once. */
static clcone_status group_make_apgd(clc_dev_batch *d, clcone_error *err)
{
    clcone_context *c = d->c;
    const clcone_options *o = d->o;
    size_t v3 = 3 * (size_t)d->n * c->real_size;
    int budget = 0;
    cl_mem *m = d->g_mem;
    kreal tol = KREAL(o->tol);
    clcone_status s;
    for (int i = 0; i < 6; ++i)
        if ((s = clc_buf_alloc(c, v3, &m[i], err))) return s;
    if ((s = clc_dev_apgd_bounds(d, &d->g_L0, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &d->g_L, err))
        || (s = clc_buf_alloc(c, (size_t)d->nprob * c->real_size, &d->g_theta, err))
        || (s = clc_group_alloc_states(d, err)) || (s = clc_kernel(c, "group_apgd_local", &d->k_group, err)))
        return s;
    /* x, wx, y, wy, xn, wxn, qe */
    return SET_ARGS(d->k_group, "group_apgd_local", err, KM(d->prob_off), KM(d->row_ptr), KM(d->col), KM(d->W),
                    KM(d->q), KM(d->mu), KM(d->r), KM(m[0]), KM(m[1]), KM(m[2]), KM(m[3]), KM(m[4]), KM(m[5]),
                    KM(d->g_L0), KM(d->g_L), KM(d->g_theta), KM(d->g_state), KM(d->g_err), KI(d->model),
                    KI(o->max_iter), KI(o->check_every), KR(c, tol), KI(budget), KI(budget));
}

/* The stopping rule of this solve into the kernel's arguments max_iter,
 * check_every and tol, which come just before restart and the budget. */
clcone_status clc_group_set_limits(clc_dev_batch *d, clcone_error *err)
{
    cl_uint n = 0;
    kreal tol = KREAL(d->o->tol);
    karg a[3] = {KI(d->o->max_iter), KI(d->o->check_every), KR(d->c, tol)};
    cl_int e = clGetKernelInfo(d->k_group, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL);
    for (cl_uint i = 0; e == CL_SUCCESS && n >= 5 && i < 3; ++i)
        e = clSetKernelArg(d->k_group, n - 5 + i, a[i].size, a[i].ptr);
    return e == CL_SUCCESS && n >= 5 ? CLCONE_OK : clc_cl_fail(err, e, "setting the stopping rule");
}

/* A solve on the whole-problem kernels, made at the first; r is read
 * back with the states. */
static clcone_status group_solve(clc_dev_batch *d, enum clc_group_kind kind, double *r, clcone_error *err)
{
    int apgd = kind == CLCONE_GROUP_APGD;
    clcone_status s;
    if (!d->k_group && (s = apgd ? group_make_apgd(d, err) : group_make(d, kind, err))) return s;
    if ((s = clc_group_set_limits(d, err))) return s;
    return clc_group_loop(d, d->k_group, apgd ? "group_apgd_local" : "group_solve_local", 1, r, err);
}

clcone_status clc_dev_solve(clc_dev_batch *d, double *r, enum clc_group_kind group,
                               clc_dev_loop_fn loop, clcone_error *err)
{
    clcone_status s;
    if ((s = clc_dev_begin(d, r, err))) return s;
    if (group != CLCONE_GROUP_NONE && clc_group_fits(d)) return group_solve(d, group, r, err);
    s = loop(d, err);
    if (!s) {
        cl_int e = clFinish(d->c->queue);
        if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "clFinish");
    }
    return s ? s : clc_read_reals(d->c, d->r, r, 3 * (size_t)d->n, err);
}
