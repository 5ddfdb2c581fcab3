/* Semismooth Newton for coulomb on the device: one work-group per problem
 * runs kernels/newton.cl (the reference's method, host/ref/newton.c), on
 * the whole-problem kernels' launches (opencl/group.c). Its dense
 * matrices live in global memory, 3 (3n)^2 reals a problem, so problems
 * are held to the reference's limit. */
#include "opencl/dev_batch.h"
#include "ref/reference.h"

/* Scratch per contact (u, phi, trial, best, gradient, direction) and per
 * problem (best error, mark error; mark iteration, rescue length), as
 * kernels/newton.cl lays them out. */
#define NEWTON_VECS 18
#define NEWTON_NS 2
#define NEWTON_NI 2

clcone_dev_fn clcone_dev_newton;

/* Why the batch cannot run newton on the device, or 0. */
static clcone_status newton_refuse(const clcone_dev_batch *d, clcone_error *err)
{
    if (d->body.nb)
        return clcone_fail(err, CLCONE_ENOTSUP,
                           "newton on a device solves problems in local form, not scenes: use --solver cgs");
    if (d->o->history)
        return clcone_fail(err, CLCONE_ENOTSUP, "newton on a device keeps no error history (--plot): use --device ref");
    for (int k = 0; k < d->nprob; ++k) {
        int n = d->h.prob_off[k + 1] - d->h.prob_off[k];
        if (n > CLCONE_NEWTON_REF_MAX_CONTACTS)
            return clcone_fail(err, CLCONE_ENOTSUP,
                               "newton on a device factors a dense Jacobian: at most %d contacts a problem "
                               "(problem %d has %d)",
                               CLCONE_NEWTON_REF_MAX_CONTACTS, k, n);
    }
    return CLCONE_OK;
}

/* The kernel and its scratch, made at the first solve and kept. */
static clcone_status newton_make(clcone_dev_batch *d, clcone_error *err)
{
    clcone_context *c = d->c;
    size_t mats = 0, n = (size_t)d->n, np = (size_t)d->nprob;
    int budget = 0, check = 1, max_iter = 0;
    kreal tol = KREAL(0);
    cl_mem *m = d->g_mem;
    clcone_status s;
    for (int k = 0; k < d->nprob; ++k) {
        size_t dim = 3 * (size_t)(d->h.prob_off[k + 1] - d->h.prob_off[k]);
        mats += 3 * dim * dim;
    }
    if ((s = clcone_dev_local_diag(d, &m[0], err)) || (s = clcone_buf_alloc(c, mats * c->real_size, &m[1], err))
        || (s = clcone_buf_alloc(c, NEWTON_VECS * n * c->real_size, &m[2], err))
        || (s = clcone_buf_alloc(c, (3 * n + NEWTON_NI * np) * sizeof(int), &m[3], err))
        || (s = clcone_buf_alloc(c, NEWTON_NS * np * c->real_size, &d->g_theta, err))
        || (s = clcone_group_alloc_states(d, err)) || (s = clcone_kernel(c, "newton_local", &d->k_group, err)))
        return s;
    /* the stopping rule, restart and budget are set per solve and launch */
    return SET_ARGS(d->k_group, "newton_local", err, KM(d->prob_off), KM(d->row_ptr), KM(d->col), KM(d->W),
                    KM(m[0]), KM(d->q), KM(d->mu), KM(d->r), KM(m[1]), KM(m[2]), KM(m[3]), KM(d->g_theta),
                    KM(d->g_state), KM(d->g_err), KI(max_iter), KI(check), KR(c, tol), KI(budget), KI(budget));
}

clcone_status clcone_dev_newton(clcone_dev_batch *d, double *r, clcone_error *err)
{
    clcone_status s;
    if ((s = newton_refuse(d, err)) || (s = clcone_dev_begin(d, r, err))) return s;
    if (!d->k_group && (s = newton_make(d, err))) return s;
    if ((s = clcone_group_set_limits(d, err))) return s;
    return clcone_group_loop(d, d->k_group, "newton_local", r, err);
}
