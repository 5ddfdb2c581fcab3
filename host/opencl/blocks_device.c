/* APGD for the general-block problem on a device (kernels/blocks.cl): the
 * reference's iteration (ref/blocks_ref.c) as launches, through the one
 * iteration loop (core/iterate.c). Each iteration reads back one real, the
 * restart test's sum; a check reads g and W g + q and measures the error
 * on the host in double (clcone_bproblem_error_scaled), so both backends
 * measure alike. */
#include "opencl/blocks_device.h"
#include "opencl/opencl.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { B_OFF, B_KIND, B_RP, B_COL, B_VOFF, B_POFF, B_VAL, B_Q, B_BOUND, B_G, B_PREV, B_Y, B_U, B_UP, B_SUM, B_COUNT };

typedef struct bdev {
    clcone_context *c;
    const clcone_bproblem *p;
    clcone_bproblem s;
    double *S, *g, *u, L, t;
    cl_mem mem[B_COUNT];
    cl_kernel k_mul, k_mom, k_proj, k_red;
    kreal beta, step;
} bdev;

static void bdev_free(bdev *D)
{
    for (int i = 0; i < B_COUNT; ++i) clcone_buf_free(D->c, &D->mem[i]);
    if (D->k_mul) clReleaseKernel(D->k_mul);
    if (D->k_mom) clReleaseKernel(D->k_mom);
    if (D->k_proj) clReleaseKernel(D->k_proj);
    if (D->k_red) clReleaseKernel(D->k_red);
    clcone_bproblem_free(&D->s);
    free(D->S);
}

/* The scaled problem and start on the host, then on the device. */
static clcone_status bdev_upload(bdev *D, const double *f, clcone_error *err)
{
    const clcone_bproblem *s = &D->s;
    clcone_context *c = D->c;
    cl_mem *m = D->mem;
    int poff[2] = {0, s->nb};
    size_t nr = (size_t)s->m;
    clcone_status st;
    clcone_bproblem_start(s, D->S, f, D->g);
    if ((st = clcone_buf_ints(c, s->off, (size_t)s->nb + 1, &m[B_OFF], err))
        || (st = clcone_buf_ints(c, s->kind, (size_t)s->nb, &m[B_KIND], err))
        || (st = clcone_buf_ints(c, s->row_ptr, (size_t)s->nb + 1, &m[B_RP], err))
        || (st = clcone_buf_ints(c, s->col, (size_t)s->nnzb, &m[B_COL], err))
        || (st = clcone_buf_ints(c, s->val_off, (size_t)s->nnzb + 1, &m[B_VOFF], err))
        || (st = clcone_buf_ints(c, poff, 2, &m[B_POFF], err))
        || (st = clcone_buf_reals(c, "scaled W entry", 1, s->val, (size_t)s->val_off[s->nnzb], &m[B_VAL], err))
        || (st = clcone_buf_reals(c, "scaled q row", 1, s->q, nr, &m[B_Q], err))
        || (st = clcone_buf_reals(c, "scaled bound row", 1, s->bound, nr, &m[B_BOUND], err))
        || (st = clcone_buf_reals(c, "start row", 1, D->g, nr, &m[B_G], err))
        || (st = clcone_buf_reals(c, "start row", 1, D->g, nr, &m[B_PREV], err))
        || (st = clcone_buf_alloc(c, nr * c->real_size, &m[B_Y], err))
        || (st = clcone_buf_alloc(c, nr * c->real_size, &m[B_U], err))
        || (st = clcone_buf_alloc(c, (size_t)s->nb * c->real_size, &m[B_UP], err))
        || (st = clcone_buf_alloc(c, c->real_size, &m[B_SUM], err)))
        return st;
    return CLCONE_OK;
}

static clcone_status bdev_kernels(bdev *D, clcone_error *err)
{
    clcone_context *c = D->c;
    cl_mem *m = D->mem;
    int nb = D->s.nb, nr = D->s.m;
    clcone_status s;
    if ((s = clcone_kernel(c, "blk_mul", &D->k_mul, err)) || (s = clcone_kernel(c, "blk_momentum", &D->k_mom, err))
        || (s = clcone_kernel(c, "blk_project", &D->k_proj, err)) || (s = clcone_kernel(c, "reduce_rows", &D->k_red, err)))
        return s;
    D->step = KREAL(1 / D->L);
    D->beta = KREAL(0.0);
    if ((s = SET_ARGS(D->k_mul, "blk_mul", err, KI(nb), KM(m[B_OFF]), KM(m[B_RP]), KM(m[B_COL]), KM(m[B_VOFF]),
                      KM(m[B_VAL]), KM(m[B_Q]), KM(m[B_Y]), KM(m[B_U])))
        || (s = SET_ARGS(D->k_mom, "blk_momentum", err, KI(nr), KR(c, D->beta), KM(m[B_G]), KM(m[B_PREV]), KM(m[B_Y])))
        || (s = SET_ARGS(D->k_proj, "blk_project", err, KI(nb), KM(m[B_OFF]), KM(m[B_KIND]), KM(m[B_BOUND]), KM(m[B_Y]),
                         KM(m[B_U]), KR(c, D->step), KM(m[B_G]), KM(m[B_PREV]), KM(m[B_UP]))))
        return s;
    return CLCONE_OK;
}

/* One APGD iteration, as apgd_step in ref/blocks_ref.c. */
static clcone_status bdev_step(void *ctx, int it, clcone_error *err)
{
    bdev *D = ctx;
    clcone_context *c = D->c;
    double tn = (1 + sqrt(1 + 4 * D->t * D->t)) / 2, up;
    clcone_status s;
    (void)it;
    D->beta = KREAL((D->t - 1) / tn);
    if ((s = SET_ARGS(D->k_mom, "blk_momentum", err, KI(D->s.m), KR(c, D->beta)))
        || (s = clcone_run(c, D->k_mom, (size_t)D->s.m, 0, "blk_momentum", err))
        || (s = clcone_run(c, D->k_mul, (size_t)D->s.nb, 0, "blk_mul", err))
        || (s = clcone_run(c, D->k_proj, (size_t)D->s.nb, 0, "blk_project", err))
        || (s = clcone_reduce_rows(c, D->k_red, 1, D->mem[B_POFF], 1, D->mem[B_UP], D->mem[B_SUM], err))
        || (s = clcone_read_reals(c, D->mem[B_SUM], &up, 1, err)))
        return s;
    D->t = up > 0 ? 1 : tn;
    return CLCONE_OK;
}

/* W g + q into u (the y buffer holds g for blk_mul), both read back. */
static clcone_status bdev_measure(void *ctx, int it, const int *active, double *errors, clcone_error *err)
{
    bdev *D = ctx;
    clcone_context *c = D->c;
    size_t bytes = (size_t)D->s.m * c->real_size;
    cl_int e;
    clcone_status s;
    (void)it;
    (void)active;
    e = clEnqueueCopyBuffer(c->queue, D->mem[B_G], D->mem[B_Y], 0, 0, bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "copying the iterate");
    if ((s = clcone_run(c, D->k_mul, (size_t)D->s.nb, 0, "blk_mul", err))
        || (s = clcone_read_reals(c, D->mem[B_G], D->g, (size_t)D->s.m, err))
        || (s = clcone_read_reals(c, D->mem[B_U], D->u, (size_t)D->s.m, err)))
        return s;
    errors[0] = clcone_bproblem_error_scaled(D->p, D->S, D->g, D->u);
    for (int i = 0; i < D->s.m; ++i)
        if (!isfinite(D->g[i])) errors[0] = INFINITY;
    return CLCONE_OK;
}

clcone_status clcone_dev_blocks(clcone_context *c, const clcone_bproblem *p, const clcone_options *o, double *f,
                                clcone_prob_result *res, clcone_error *err)
{
    bdev D;
    clcone_iter_ops ops = {&D, 1, 0, 0, bdev_step, bdev_measure, NULL};
    clcone_status s;
    memset(&D, 0, sizeof D);
    D.c = c;
    D.p = p;
    D.t = 1;
    ops.t0_ms = clcone_now_ms();
    D.S = clcone_calloc(3 * (size_t)p->m, sizeof *D.S, err, "the scaled iterate");
    if (!D.S) return CLCONE_ENOMEM;
    D.g = D.S + p->m;
    D.u = D.g + p->m;
    if ((s = clcone_bproblem_scaled(p, &D.s, D.S, err))) goto out;
    D.L = clcone_bproblem_lipschitz(&D.s);
    if (!(D.L > 0)) {
        s = clcone_fail(err, CLCONE_EINVAL, "the scaled W has no positive eigenvalue estimate (%g)", D.L);
        goto out;
    }
    if ((s = bdev_upload(&D, o->warm_start ? f : NULL, err)) || (s = bdev_kernels(&D, err))) goto out;
    if ((s = clcone_iterate(&ops, o, res, err))) goto out;
    /* the last check measured the final iterate (core/iterate.c) */
    if ((s = clcone_read_reals(c, D.mem[B_G], D.g, (size_t)p->m, err))) goto out;
    for (int i = 0; i < p->m; ++i) f[i] = D.S[i] * D.g[i];
    res->cost = clcone_bproblem_cost(p, f);
out:
    bdev_free(&D);
    return s;
}
