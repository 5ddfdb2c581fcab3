/* needs: cone.h local_solve.h schedule.h contact.h */
/* Whole problems inside one work-group (local form): work-group p
 * iterates problem p of the batch, with barriers between Gauss-Seidel
 * colours and Jacobi iterations, measures its own error on the shared
 * schedule and stops when it has converged. Many problems are many
 * work-groups of one launch, so a batch costs a launch per chunk of
 * iterations instead of several launches per colour per sweep, and each
 * problem runs exactly the arithmetic it runs alone.
 *
 * Any work-group size up to CONE_REDUCE_WG gives the same bits: contacts
 * are updated independently within a colour or an iteration, and sums go
 * through CONE_REDUCE_WG fixed stripes of contacts (stripe v takes
 * contacts c0 + v, c0 + v + CONE_REDUCE_WG, ...) that a lane adds in
 * order, whichever lane owns the stripe, then one fixed tree. So the
 * host picks the size for the device (one item on a CPU, where barriers
 * cost a pass over the items) without changing a result, and the sums
 * are those of residual_terms + reduce_rows.
 *
 * The iterate lives in global memory (no size limit) and the sums in
 * local memory; lanes read what other lanes wrote in both, so every
 * barrier here fences both (group_barrier): in OpenCL 1.2 a barrier with
 * CLK_LOCAL_MEM_FENCE alone does not order global accesses, and a GPU
 * then lets one lane read an iterate another is still writing. No two
 * work-groups touch the same contacts. A launch runs at most `budget`
 * iterations; state[2p] (iterations done) and state[2p + 1] (CONE_GROUP_*
 * status) carry a problem from one launch to the next, so the host can
 * apply its time cap between launches. The last five arguments of both
 * kernels are max_iter, check_every, tol, restart and budget, in that
 * order: the host sets them per solve and per launch; restart (first
 * launch of a solve) starts every problem afresh, so a solve uploads
 * nothing but its start. */

#define GROUP_JACOBI 0
#define GROUP_CGS 1
#define GROUP_ACGS 2

/* Gauss-Seidel sweep `it` of problem p over its colours, r in place;
 * always inlined, so that CGS's loop compiles as it did when written in
 * place (a call left in a kernel can keep POCL's vectoriser out, see
 * body_form.cl). */
static inline __attribute__((always_inline)) void group_sweep(int p, int it, __global const int *row_ptr, __global const int *col,
                        __global const real_t *W, __global const int *diag, __global const real_t *q,
                        __global const real_t *mu, __global const real_t *omega,
                        __global const int *prob_colors, __global const int *color_ptr,
                        __global const int *order, __global real_t *r, int model, int facets, int inner)
{
    int l = get_local_id(0), nl = get_local_size(0);
    for (int k = prob_colors[p]; k < prob_colors[p + 1]; ++k) {
        for (int i = color_ptr[k] + l; i < color_ptr[k + 1]; i += nl)
            local_gs_contact(row_ptr, col, W, diag, q, mu, omega, r, order[i], model, facets, inner, it);
        group_barrier();
    }
}

/* Sum over problem [c0, c1) of acgs's restart terms (acgs_terms), in the
 * lane order of reduce_rows, into sums[0]; every lane reads it. */
static void group_acgs_sum(int c0, int c1, __global const real_t *y, __global const real_t *xnew,
                           __global const real_t *x, __local real_t *sums)
{
    for (int v = get_local_id(0); v < CONE_REDUCE_WG; v += (int)get_local_size(0)) {
        real_t acc = 0;
        for (int c = c0 + v; c < c1; c += CONE_REDUCE_WG) {
            real_t a[3], b[3], o[3];
            for (int k = 0; k < 3; ++k) {
                a[k] = y[3 * c + k];
                b[k] = xnew[3 * c + k];
                o[k] = x[3 * c + k];
            }
            acc += cone_acgs_term(a, b, o);
        }
        sums[v] = acc;
    }
    group_tree(sums, 1);
}

/* ACGS's function restart: y = P(x) over problem [c0, c1),
 * the extrapolation with beta = 0 (acgs_reset in acgs.cl). */
static void group_acgs_reset(int c0, int c1, __global const real_t *mu, __global const real_t *x,
                             __global real_t *y)
{
    for (int c = c0 + (int)get_local_id(0); c < c1; c += (int)get_local_size(0)) {
        real_t a[3], v[3];
        for (int k = 0; k < 3; ++k) a[k] = x[3 * c + k];
        cone_acgs_extrapolate(mu[c], 0, a, a, v);
        for (int k = 0; k < 3; ++k) y[3 * c + k] = v[k];
    }
    group_barrier();
}

/* Jacobi, CGS or ACGS. ACGS keeps x_k in r, y in r2, theta in acgs[p]
 * and the last check's x and u in last (6 a contact, for the function
 * restart) between iterations and launches (kernels/acgs.cl: the same
 * steps), and sweeps r3, a copy of y; at iteration 0 it sets y = x,
 * theta = 1. */
__kernel void group_solve_local(__global const int *prob_off, __global const int *row_ptr,
                       __global const int *col, __global const real_t *W,
                       __global const int *diag, __global const real_t *q,
                       __global const real_t *mu, __global const real_t *omega,
                       __global const int *prob_colors, __global const int *color_ptr,
                       __global const int *order, __global real_t *r, __global real_t *r2,
                       __global real_t *r3, __global real_t *acgs, __global real_t *last, __global int *state,
                       __global real_t *error, int solver, int model,
                       int facets, int inner, int max_iter, int check_every, real_t tol,
                       int restart, int budget)
{
    __local real_t sums[6 * CONE_REDUCE_WG];
    __local int verdict;
    int p = get_group_id(0), l = get_local_id(0), nl = get_local_size(0);
    int c0 = prob_off[p], c1 = prob_off[p + 1];
    int it = restart ? 0 : state[2 * p], status = restart ? CONE_GROUP_RUNNING : state[2 * p + 1], it_end;
    __global real_t *src = r, *dst = r2;
    real_t th = restart ? 1 : acgs[p];
    if (status != CONE_GROUP_RUNNING) return;
    if (solver == GROUP_ACGS && it == 0) {
        for (int i = 3 * c0 + l; i < 3 * c1; i += nl) r2[i] = r[i];
        group_barrier();
    }
    it_end = max_iter - it < budget ? max_iter : it + budget;
    while (it < it_end) {
        ++it;
        if (solver == GROUP_JACOBI) {
            __global real_t *t;
            for (int c = c0 + l; c < c1; c += nl) {
                real_t x[3], u[3] = {0, 0, 0};
                row_product(row_ptr, col, W, src, c, 0, u);
                for (int k = 0; k < 3; ++k) {
                    x[k] = src[3 * c + k];
                    u[k] += q[3 * c + k];
                }
                cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c],
                                    omega[c], x, u);
                for (int k = 0; k < 3; ++k) dst[3 * c + k] = x[k];
            }
            t = src;
            src = dst;
            dst = t;
            group_barrier();
        } else if (solver == GROUP_CGS) {
            group_sweep(p, it, row_ptr, col, W, diag, q, mu, omega, prob_colors, color_ptr, order, src, model,
                        facets, inner);
        } else {
            real_t b;
            for (int i = 3 * c0 + l; i < 3 * c1; i += nl) r3[i] = r2[i];
            group_barrier();
            group_sweep(p, it, row_ptr, col, W, diag, q, mu, omega, prob_colors, color_ptr, order, r3, model,
                        facets, inner);
            group_acgs_sum(c0, c1, r2, r3, r, sums);
            b = cone_apgd_momentum(&th, sums[0]);
            group_barrier(); /* sums are rewritten by the check */
            for (int c = c0 + l; c < c1; c += nl) {
                real_t a[3], o[3], v[3];
                for (int k = 0; k < 3; ++k) {
                    a[k] = r3[3 * c + k];
                    o[k] = r[3 * c + k];
                }
                cone_acgs_extrapolate(mu[c], b, a, o, v);
                for (int k = 0; k < 3; ++k) {
                    r[3 * c + k] = a[k];
                    r2[3 * c + k] = v[k];
                }
            }
            group_barrier();
        }
        if (cone_is_check(it, check_every, max_iter)) {
            status = group_check(solver == GROUP_ACGS ? 6 : 4, c0, c1, it, max_iter, tol, row_ptr, col, W, q,
                                 mu, src, last, model, facets, inner, sums, &verdict, error + p);
            if (status != CONE_GROUP_RUNNING) break;
            if (solver == GROUP_ACGS && cone_acgs_climbed(it, sums[4], sums[5])) {
                th = 1;
                group_acgs_reset(c0, c1, mu, r, r2);
            }
        }
    }
    /* the next launch and the host read the iterate from r */
    if (src != r)
        for (int i = 3 * c0 + l; i < 3 * c1; i += nl) r[i] = src[i];
    if (l == 0) {
        state[2 * p] = it;
        state[2 * p + 1] = status;
        acgs[p] = th;
    }
}

/* Sums of the three APGD terms (apgd_terms) of problem [c0, c1) into
 * sums[0..2], in the lane order of reduce_rows; every lane reads them. */
static void group_apgd_terms(int c0, int c1, __global const real_t *y, __global const real_t *wy,
                             __global const real_t *qe, __global const real_t *x,
                             __global const real_t *xn, __global const real_t *wxn,
                             __local real_t *sums)
{
    int l = get_local_id(0);
    for (int v = l; v < CONE_REDUCE_WG; v += (int)get_local_size(0)) {
        real_t acc[CONE_APGD_TERMS] = {0, 0, 0};
        for (int c = c0 + v; c < c1; c += CONE_REDUCE_WG) {
            real_t t0 = 0, t1 = 0, t2 = 0;
            for (int a = 3 * c; a < 3 * c + 3; ++a) {
                real_t d = xn[a] - y[a];
                t0 += d * (wxn[a] - wy[a]);
                t1 += d * d;
                t2 += (wy[a] + qe[a]) * (xn[a] - x[a]);
            }
            acc[0] += t0;
            acc[1] += t1;
            acc[2] += t2;
        }
        for (int k = 0; k < CONE_APGD_TERMS; ++k) sums[CONE_APGD_TERMS * v + k] = acc[k];
    }
    group_tree(sums, CONE_APGD_TERMS);
}

/* De Saxce's shift of problem [c0, c1) from x, wx, and the momentum
 * restart that goes with a new cone QP. */
static void group_desaxce(int c0, int c1, __global const real_t *q, __global const real_t *mu,
                          __global const real_t *x, __global const real_t *wx, __global real_t *qe,
                          __global real_t *y, __global real_t *wy)
{
    for (int c = c0 + (int)get_local_id(0); c < c1; c += (int)get_local_size(0)) {
        real_t u1 = wx[3 * c + 1] + q[3 * c + 1], u2 = wx[3 * c + 2] + q[3 * c + 2];
        qe[3 * c] = q[3 * c] + cone_desaxce_shift(mu[c], u1, u2);
        qe[3 * c + 1] = q[3 * c + 1];
        qe[3 * c + 2] = q[3 * c + 2];
        for (int a = 0; a < 3; ++a) {
            y[3 * c + a] = x[3 * c + a];
            wy[3 * c + a] = wx[3 * c + a];
        }
    }
    group_barrier();
}

/* APGD (host/ref/apgd.c) with one work-group per problem: the same
 * candidates, backtracking, momentum, restart and De Saxce updates as the
 * multi-launch kernels of apgd.cl, in the same order of additions. Per
 * problem L[p] and theta[p] live in global memory between launches
 * (from L0[p] and 1 at a restart); at iteration 0 the kernel sets
 * wx = W x, y = x and the shift itself. */
__kernel void group_apgd_local(__global const int *prob_off, __global const int *row_ptr,
                      __global const int *col, __global const real_t *W,
                      __global const real_t *q, __global const real_t *mu,
                      __global real_t *x, __global real_t *wx, __global real_t *y,
                      __global real_t *wy, __global real_t *xn, __global real_t *wxn,
                      __global real_t *qe, __global const real_t *L0, __global real_t *L,
                      __global real_t *theta, __global int *state, __global real_t *error, int model,
                      int max_iter, int check_every, real_t tol, int restart, int budget)
{
    __local real_t sums[4 * CONE_REDUCE_WG];
    __local int verdict;
    int p = get_group_id(0), l = get_local_id(0), nl = get_local_size(0);
    int c0 = prob_off[p], c1 = prob_off[p + 1], coulomb = model == CONE_MODEL_COULOMB;
    int it = restart ? 0 : state[2 * p], status = restart ? CONE_GROUP_RUNNING : state[2 * p + 1], it_end;
    real_t Lp = restart ? L0[p] : L[p], th = restart ? 1 : theta[p];
    if (status != CONE_GROUP_RUNNING) return;
    if (it == 0) {
        for (int c = c0 + l; c < c1; c += nl) {
            real_t w[3] = {0, 0, 0};
            row_product(row_ptr, col, W, x, c, 0, w);
            for (int a = 0; a < 3; ++a) {
                wx[3 * c + a] = w[a];
                y[3 * c + a] = x[3 * c + a];
                wy[3 * c + a] = w[a];
                qe[3 * c + a] = q[3 * c + a];
            }
        }
        group_barrier();
        if (coulomb) group_desaxce(c0, c1, q, mu, x, wx, qe, y, wy);
    }
    it_end = max_iter - it < budget ? max_iter : it + budget;
    while (it < it_end) {
        int accepted = 0;
        ++it;
        for (int t = 0; t < CONE_APGD_TRIES && !accepted; ++t) {
            real_t step = 1 / Lp;
            for (int c = c0 + l; c < c1; c += nl) {
                real_t v[3];
                for (int a = 0; a < 3; ++a) v[a] = y[3 * c + a] - step * (wy[3 * c + a] + qe[3 * c + a]);
                cone_project(mu[c], v);
                for (int a = 0; a < 3; ++a) xn[3 * c + a] = v[a];
            }
            group_barrier();
            for (int c = c0 + l; c < c1; c += nl) {
                real_t w[3] = {0, 0, 0};
                row_product(row_ptr, col, W, xn, c, 0, w);
                for (int a = 0; a < 3; ++a) wxn[3 * c + a] = w[a];
            }
            group_barrier();
            group_apgd_terms(c0, c1, y, wy, qe, x, xn, wxn, sums);
            if (cone_apgd_decrease_ok(sums[0], sums[1], Lp)) accepted = 1;
            else Lp *= 2;
            group_barrier(); /* sums are rewritten by the next try */
        }
        if (accepted) {
            real_t b = cone_apgd_momentum(&th, sums[2]);
            for (int c = c0 + l; c < c1; c += nl)
                for (int a = 3 * c; a < 3 * c + 3; ++a) {
                    y[a] = xn[a] + b * (xn[a] - x[a]);
                    wy[a] = wxn[a] + b * (wxn[a] - wx[a]);
                    x[a] = xn[a];
                    wx[a] = wxn[a];
                }
            Lp *= (real_t)0.9;
        } else {
            for (int a = 3 * c0 + l; a < 3 * c1; a += nl) {
                y[a] = x[a];
                wy[a] = wx[a];
            }
            th = 1;
        }
        group_barrier();
        if (cone_is_check(it, check_every, max_iter)) {
            status = group_check(4, c0, c1, it, max_iter, tol, row_ptr, col, W, q, mu, x, 0, model, 0, 0, sums,
                                 &verdict, error + p);
            if (status != CONE_GROUP_RUNNING) break;
            if (coulomb) {
                group_desaxce(c0, c1, q, mu, x, wx, qe, y, wy);
                th = 1;
            }
        }
    }
    if (l == 0) {
        state[2 * p] = it;
        state[2 * p + 1] = status;
        L[p] = Lp;
        theta[p] = th;
    }
}
