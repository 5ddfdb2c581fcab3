/* Semismooth Newton for coulomb and ccp (soft's too) on the device, alone
 * (newton) or after coloured Gauss-Seidel sweeps (hybrid, coulomb's
 * default): one
 * work-group per problem runs kernels/newton.cl (the reference's method,
 * host/ref/newton.c), on the whole-problem kernels' launches
 * (opencl/group_solve.c). Its dense matrices live in global memory, 3 (3n)^2
 * reals a problem, to the reference's dense limit; past it newton runs
 * the GMRES kernel (newton_krylov.cl). The hybrid gives dense scratch to
 * the problems within the limit while the batch's total stays within the
 * device's largest allocation and a quarter of its memory, and stops the
 * others at the switch's verdict for the host's second phase
 * (opencl/handover.c). No matrix-free solve of the interior point's
 * systems converges on a device (docs/measured.md). */
#include "core/newton_limits.h"
#include "core/parallel.h"
#include "opencl/dev_batch.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/* Scratch per contact (u, phi, trial, best, gradient, direction) and per
 * problem (best error, mark error, a ccp rescue's two momentum terms,
 * the best error after the last rescue, the best error when LM took the
 * lead; mark iteration, rescue length, the iteration Newton took over at,
 * the sweeps of a rescue still to run and those run, the hybrid's sweeps,
 * the iteration a try ends at, whether a rescue ended before the next
 * check, LM's stage), as kernels/newton.cl
 * lays them out. */
#define NEWTON_VECS 18
#define NEWTON_NS 6
#define NEWTON_NI 9

clc_dev_fn clc_dev_newton, clc_dev_hybrid, clc_dev_cgs, clc_dev_acgs;

/* Why the batch cannot run newton on the device, or 0. */
static clcone_status newton_refuse(const clc_dev_batch *d, clcone_error *err)
{
    if (d->body.nb)
        return clc_fail(err, CLCONE_ENOTSUP,
                           "newton on a device solves a scene in its local form (coulomb, ccp or the pyramid, in "
                           "double, up to %d contacts): use --solver cgs", clc_group_max_contacts(d->c));
    if (d->o->history)
        return clc_fail(err, CLCONE_ENOTSUP, "newton on a device keeps no error history (--plot): use --device ref");
    if (!clc_group_fits(d)) {
        int k = 0;
        while (k + 1 < d->nprob && d->h.prob_off[k + 1] - d->h.prob_off[k] <= clc_group_max_contacts(d->c)) ++k;
        return clc_fail(err, CLCONE_ENOTSUP,
                           "newton on a device runs a problem in one work-group, up to %d contacts here "
                           "(problem %d has %d): use --device ref, whose newton has no limit",
                           clc_group_max_contacts(d->c), k, d->h.prob_off[k + 1] - d->h.prob_off[k]);
    }
    return CLCONE_OK;
}

/* Whether newton's batch runs the GMRES kernel: a problem past the
 * dense limit, whose dense matrices would not fit (3 (3n)^2 reals: 2.8
 * GB for a 3,600-contact wall) where GMRES's take a few dozen vectors. */
static int newton_krylov(const clc_dev_batch *d, int hybrid)
{
    for (int k = 0; !hybrid && k < d->nprob; ++k)
        if (d->h.prob_off[k + 1] - d->h.prob_off[k] > CLCONE_NEWTON_REF_MAX_CONTACTS) return 1;
    return 0;
}

static const char *newton_kernel(const clc_dev_batch *d, int hybrid)
{
    return newton_krylov(d, hybrid) ? "newton_krylov_local" : "newton_local";
}

/* Each problem's offset in reals of its scratch (off[nprob] the total),
 * in batch order: GMRES's (krylov), else 3 m^2 for the dense Newton
 * within the contact limit while the total stays within `most` reals
 * (newton: no cap), else none. */
static cl_ulong *newton_scratch(const clc_dev_batch *d, cl_ulong most, int krylov, clcone_error *err)
{
    cl_ulong *off = clc_calloc((size_t)d->nprob + 1, sizeof *off, err, "Newton scratch offsets");
    for (int k = 0; off && k < d->nprob; ++k) {
        int n = d->h.prob_off[k + 1] - d->h.prob_off[k];
        cl_ulong m = 3 * (cl_ulong)n, need = krylov ? NEWTON_KRYLOV_REALS(m) : 3 * m * m;
        off[k + 1] = off[k] + ((krylov || n <= CLCONE_NEWTON_REF_MAX_CONTACTS) && off[k] + need <= most ? need : 0);
    }
    return off;
}

/* The hybrid's prices of the host's Newton or second phase (opencl/handover.c) for
 * the problems without dense scratch, into a device buffer. A float
 * device's too: its sweeps stall near its rounding floor, and the host's
 * double answer is what reaches tol (a 3,000-contact pile's ccp at 1e-7
 * in 3.6 s where its sweeps stood at 7.4e-6 after 20 s). */
static clcone_status handover_prices(clc_dev_batch *d, int hybrid, const cl_ulong *off, cl_mem *out,
                                     clcone_error *err)
{
    size_t np = (size_t)d->nprob;
    double *price = clc_calloc(np, sizeof *price, err, "second phase prices");
    clcone_status s = price ? CLCONE_OK : CLCONE_ENOMEM;
    if (!s && hybrid) s = clc_handover_prices(d, off, price, err);
    if (!s) s = clc_buf_reals(d->c, "second phase price of problem", 1, price, np, out, err);
    free(price);
    return s;
}

/* The kernel and its scratch, made at the first solve and kept: m[0]
 * diagonal positions, m[1] the dense matrices, m[2] the vectors, m[3]
 * pivots and per-problem integers, m[4] the matrices' offsets, m[5..7]
 * the per-problem colours of the sweeps, m[8] their step sizes (ccp),
 * m[9] the interior point's prices (handover_prices). */
static clcone_status newton_make(clc_dev_batch *d, int hybrid, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t n = (size_t)d->n, np = (size_t)d->nprob;
    int budget = 0, check = 1, max_iter = 0, *pcol = NULL, *gptr = NULL, *gorder = NULL;
    cl_ulong cap = c->info.global_mem / 4 < c->info.max_alloc ? c->info.global_mem / 4 : c->info.max_alloc;
    int dbl = clcone_context_precision(c) == CLCONE_DOUBLE;
    /* a float hybrid's problems go to the host's Newton in double (clc_handover_run) */
    cl_ulong most = !hybrid ? (cl_ulong)-1 : dbl ? cap / c->real_size : 0;
    int krylov = newton_krylov(d, hybrid);
    const char *kernel = newton_kernel(d, hybrid);
    cl_ulong *off = newton_scratch(d, most, krylov, err);
    kreal tol = KREAL(0);
    cl_mem *m = d->g_mem;
    clcone_status s = CLCONE_ENOMEM;
    cl_int e;
    if (!off || (s = clc_group_colors(&d->h, &pcol, &gptr, &gorder, err))) goto out;
    /* one real at least: a batch of sweeps only has no matrices */
    if ((s = clc_dev_local_diag(d, &m[0], err))
        || (s = clc_buf_alloc(c, (off[np] + 1) * c->real_size, &m[1], err))
        || (s = clc_buf_alloc(c, NEWTON_VECS * n * c->real_size, &m[2], err))
        || (s = clc_buf_alloc(c, (3 * n + NEWTON_NI * np) * sizeof(int), &m[3], err))
        || (s = clc_buf_alloc(c, (np + 1) * sizeof *off, &m[4], err))
        || (s = clc_buf_ints(c, pcol, np + 1, &m[5], err))
        || (s = clc_buf_ints(c, gptr, (size_t)pcol[np] + 1, &m[6], err))
        || (s = clc_buf_ints(c, gorder, n, &m[7], err))
        || (s = clc_buf_reals(c, "Gauss-Seidel step size of contact", 1, d->h.omega_gs, n, &m[8], err))
        || (s = handover_prices(d, hybrid, off, &m[9], err))
        || (s = clc_buf_alloc(c, NEWTON_NS * np * c->real_size, &d->g_theta, err))
        || (s = clc_group_alloc_states(d, err)) || (s = clc_kernel(c, kernel, &d->k_group, err)))
        goto out;
    e = clEnqueueWriteBuffer(c->queue, m[4], CL_TRUE, 0, (np + 1) * sizeof *off, off, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        s = clc_cl_fail(err, e, "writing the Newton scratch offsets");
        goto out;
    }
    /* the stopping rule, restart and budget are set per solve and launch */
    s = SET_ARGS(d->k_group, kernel, err, KM(d->prob_off), KM(m[4]), KM(d->row_ptr), KM(d->col), KM(d->W),
                 KM(m[0]), KM(d->q), KM(d->mu), KM(m[8]), KM(m[5]), KM(m[6]), KM(m[7]), KM(d->r), KM(m[1]),
                 KM(m[2]), KM(m[3]), KM(d->g_theta), KM(d->g_state), KM(d->g_err), KM(m[9]), KI(d->model), KI(d->facets),
                 KI(d->inner), KI(hybrid),
                 KI(max_iter), KI(check), KR(c, tol), KI(budget), KI(budget));
out:
    free(off);
    free(pcol);
    free(gptr);
    free(gorder);
    return s;
}

/* The hybrid's sweeps per problem into inner_iters, as the reference
 * counts them: those before and between Newton's tries (the rescues'
 * sweeps, which the reference adds, are not counted). */
static clcone_status hybrid_sweeps(clc_dev_batch *d, clcone_error *err)
{
    size_t np = (size_t)d->nprob;
    int *ints = clc_calloc(NEWTON_NI * np, sizeof *ints, err, "Newton states");
    cl_int e;
    if (!ints) return CLCONE_ENOMEM;
    e = clEnqueueReadBuffer(d->c->queue, d->g_mem[3], CL_TRUE, 3 * (size_t)d->n * sizeof *ints,
                            NEWTON_NI * np * sizeof *ints, ints, 0, NULL, NULL);
    for (size_t p = 0; e == CL_SUCCESS && p < np; ++p) {
        clcone_prob_result *out = &d->res->items[p];
        out->inner_iters = ints[NEWTON_NI * p + 5];
    }
    free(ints);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "reading the hybrid's sweeps");
}

/* Element i of a device's reals (float or double) in host memory. */
static void set_real(void *reals, size_t real_size, size_t i, double v)
{
    if (real_size == sizeof(double)) ((double *)reals)[i] = v;
    else ((float *)reals)[i] = (float)v;
}

/* The switch of each problem resumed (running in `state`) starts afresh
 * as the reference's does after a second phase: its marks and best error
 * cleared (else it would measure its pace across the host's drop in the
 * error), its price the host's sparse Newton's (clc_handover_newton_price,
 * 0 for the sweeps alone). The kernel's per-problem integers and reals
 * go back whole: Oclgrind sizes a buffer's shadow by the host's last
 * store. */
static clcone_status resume_switches(clc_dev_batch *d, const int *state, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t np = (size_t)d->nprob, ni = 3 * (size_t)d->n + NEWTON_NI * np, ns = NEWTON_NS * np;
    int *ints = clc_malloc(ni, sizeof *ints, err, "Newton states");
    char *reals = clc_malloc(ns + np, c->real_size, err, "Newton's marks");
    char *price = reals ? reals + ns * c->real_size : NULL;
    cl_int e;
    if (!ints || !reals) {
        free(ints);
        free(reals);
        return CLCONE_ENOMEM;
    }
    e = clEnqueueReadBuffer(c->queue, d->g_mem[3], CL_TRUE, 0, ni * sizeof *ints, ints, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(c->queue, d->g_theta, CL_TRUE, 0, ns * c->real_size, reals, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueReadBuffer(c->queue, d->g_mem[9], CL_TRUE, 0, np * c->real_size, price, 0, NULL, NULL);
    for (size_t p = 0; e == CL_SUCCESS && p < np; ++p)
        if (state[2 * p + 1] == CONE_GROUP_RUNNING) {
            ints[3 * (size_t)d->n + NEWTON_NI * p] = 0; /* mark_it (newton_save) */
            set_real(reals, c->real_size, NEWTON_NS * p, INFINITY);     /* best error */
            set_real(reals, c->real_size, NEWTON_NS * p + 1, INFINITY); /* mark_e */
            set_real(price, c->real_size, p, clc_handover_newton_price(d, (int)p));
        }
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(c->queue, d->g_mem[3], CL_TRUE, 0, ni * sizeof *ints, ints, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(c->queue, d->g_theta, CL_TRUE, 0, ns * c->real_size, reals, 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(c->queue, d->g_mem[9], CL_TRUE, 0, np * c->real_size, price, 0, NULL, NULL);
    free(ints);
    free(reals);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "resuming the handed-over problems' switches");
}

/* The device again for the problems whose interior point stalled above
 * tol (state running in `state`, their iteration the solve's, their
 * switches afresh: resume_switches), from r; the others keep their
 * results and reactions (a float device would round those the host's
 * Newton left in double on their way through it). */
static clcone_status handover_resume(clc_dev_batch *d, const int *state, double *r, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t np = (size_t)d->nprob, nr = 3 * (size_t)d->n;
    clcone_prob_result *kept = clc_calloc(np, sizeof *kept, err, "handed-over results");
    double *kept_r = clc_malloc(nr, sizeof *kept_r, err, "handed-over reactions");
    clcone_status s = kept && kept_r ? CLCONE_OK : CLCONE_ENOMEM;
    cl_int e = CL_SUCCESS;
    if (s) {
        free(kept);
        free(kept_r);
        return s;
    }
    memcpy(kept, d->res->items, np * sizeof *kept);
    memcpy(kept_r, r, nr * sizeof *r);
    for (size_t p = 0; p < np; ++p)
        if (state[2 * p + 1] == CONE_GROUP_RUNNING) d->res->items[p].time_ms = 0;
    s = resume_switches(d, state, err);
    if (!s) e = clEnqueueWriteBuffer(c->queue, d->g_state, CL_TRUE, 0, 2 * np * sizeof *state, state, 0, NULL, NULL);
    if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "resuming the handed-over problems");
    if (!s) s = clc_write_reals(c, "reaction of contact", 3, d->r, r, 3 * (size_t)d->n, err);
    if (!s) s = clc_group_loop(d, d->k_group, "newton_local", 0, r, err);
    if (!s) s = hybrid_sweeps(d, err);
    for (size_t p = 0; !s && p < np; ++p)
        if (state[2 * p + 1] != CONE_GROUP_RUNNING) {
            size_t r0 = 3 * (size_t)d->h.prob_off[p], r1 = 3 * (size_t)d->h.prob_off[p + 1];
            d->res->items[p] = kept[p];
            memcpy(r + r0, kept_r + r0, (r1 - r0) * sizeof *r);
        }
    free(kept);
    free(kept_r);
    return s;
}

typedef struct handover_batch {
    clc_dev_batch *d;
    double *r;
    int *state, *handed; /* handed: the problems the kernel handed over */
    int *round;          /* a problem's hand-overs so far (after one whose second phase stalled the next is the
                            sparse Newton's), -1 once done on the host (whose state on the device stays "handed
                            over") */
} handover_batch;

/* One handed-over problem on the host, touching only its own reactions,
 * result and state (the options' threads run them side by side). */
static clcone_status handover_problem(void *job, int i, clcone_error *err)
{
    handover_batch *b = job;
    int p = b->handed[i];
    clcone_status s;
    int k = b->round[p];
    b->d->res->items[p].iters = b->state[2 * p];
    b->round[p] = -1; /* done on the host, unless resumed */
    if (clc_handover_run(b->d, p, k, b->r, &s, err)) {
        b->state[2 * p] = b->d->res->items[p].iters;
        b->state[2 * p + 1] = CONE_GROUP_RUNNING;
        b->round[p] = k + 1;
    }
    return s;
}

/* The problems the kernel handed over, on the host (clc_handover_run:
 * Newton in double within the dense limit, past it the second phase from
 * the sweeps' best iterate, as the reference's hybrid), on the options'
 * threads; where that stalls above tol, the device's sweeps again from
 * the better iterate, and those that hand over again (coulomb past the
 * limit) to the host's sparse Newton: two rounds at most. */
static clcone_status handover_solve(clc_dev_batch *d, double *r, clcone_error *err)
{
    size_t np = (size_t)d->nprob;
    int *state = clc_calloc(4 * np, sizeof *state, err, "problem states"), resume = 1, resumed = 0;
    char *price = clc_malloc(np, d->c->real_size, err, "second phase prices");
    handover_batch b = {d, r, state, state + 2 * np, state + 3 * np};
    clcone_status s = state && price ? CLCONE_OK : CLCONE_ENOMEM;
    /* the prices as newton_make wrote them, for the plan's next solve */
    if (!s) {
        cl_int e = clEnqueueReadBuffer(d->c->queue, d->g_mem[9], CL_TRUE, 0, np * d->c->real_size, price, 0, NULL,
                                       NULL);
        if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "reading the second phase prices");
    }
    for (int round = 0; !s && resume; ++round) {
        int nhanded = 0;
        cl_int e = clEnqueueReadBuffer(d->c->queue, d->g_state, CL_TRUE, 0, 2 * np * sizeof *state, state, 0, NULL,
                                       NULL);
        s = e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "reading the problem states");
        for (size_t p = 0; !s && p < np; ++p)
            if (state[2 * p + 1] == CONE_GROUP_HANDOVER && b.round[p] == round) b.handed[nhanded++] = (int)p;
        if (!s) {
            const clcone_options *own = d->o;
            clcone_options o = *own; /* its progress callback behind the threads' lock */
            d->o = &o;
            s = clc_each_problem(&o, nhanded, handover_problem, &b, err);
            d->o = own;
        }
        resume = 0;
        for (int i = 0; i < nhanded; ++i) resume |= state[2 * b.handed[i] + 1] == CONE_GROUP_RUNNING;
        resumed |= resume;
        if (!s && resume) s = handover_resume(d, state, r, err);
    }
    if (!s && resumed) {
        cl_int e = clEnqueueWriteBuffer(d->c->queue, d->g_mem[9], CL_TRUE, 0, np * d->c->real_size, price, 0, NULL,
                                        NULL);
        if (e != CL_SUCCESS) s = clc_cl_fail(err, e, "restoring the second phase prices");
    }
    free(state);
    free(price);
    return s;
}

static clcone_status newton_solve(clc_dev_batch *d, int hybrid, double *r, clcone_error *err)
{
    clcone_status s;
    if ((s = clc_dev_begin(d, r, err))) return s;
    if (!d->k_group && (s = newton_make(d, hybrid, err))) return s;
    if ((s = clc_group_set_limits(d, err)) || (s = clc_group_loop(d, d->k_group, newton_kernel(d, hybrid), 1, r, err)))
        return s;
    return hybrid && !(s = hybrid_sweeps(d, err)) ? handover_solve(d, r, err) : s;
}

clcone_status clc_dev_newton(clc_dev_batch *d, double *r, clcone_error *err)
{
    clcone_status s = newton_refuse(d, err);
    return s ? s : newton_solve(d, 0, r, err);
}

/* The hybrid is its sweeps alone, bit for bit, where its switch stops
 * nothing (clc_device_hybrid_switches: from tol 1e-6 up for ccp and
 * soft, 1e-5 in float) and on scenes in the body form: coulomb's CGS,
 * ccp's (and soft's) ACGS, the reference's first phase (docs/measured.md:
 * a twentieth of APGD's time at 1e-6, where APGD stalls on piles). In
 * double the kernel runs its own Newton within the dense limit; a float
 * device's problems go to the host's Newton in double (float Newton's
 * steps pass Armijo while the error grows), and those past the limit to
 * the host's second phase. Where the batch does not run on the
 * whole-problem kernels (--plot, a problem beyond their size) it is
 * those sweeps' multi-launch loop, each problem handed to the host's
 * Newton or second phase at its switch (opencl/handover.c). */
clcone_status clc_dev_hybrid(clc_dev_batch *d, double *r, clcone_error *err)
{
    /* ACGS is ccp's: its extrapolation projects onto K_mu */
    clc_dev_fn *sweeps = d->model == CLCONE_MODEL_COULOMB || d->model == CLCONE_MODEL_PYRAMID ? clc_dev_cgs
                                                                                            : clc_dev_acgs;
    if (d->body.nb || !clc_hybrid_switches(d)) return sweeps(d, r, err);
    return clc_group_fits(d) ? newton_solve(d, 1, r, err) : clc_handover_loop(d, sweeps, r, err);
}
