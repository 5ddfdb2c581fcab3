/* needs: cone.h local_solve.h schedule.h contact.h */
/* Accelerated coloured Gauss-Seidel, multi-launch (the method:
 * cone_acgs_* in local_solve.h; the reference: clc_ref_acgs in
 * host/ref/acgs.c; one work-group per problem: group_solve.cl). Between
 * iterations r holds x_k and y the extrapolated point; an iteration
 * copies y into the sweep's working vector, sweeps it with cgs_local or
 * cgs_body into x_{k+1}, sums the restart test per problem
 * (acgs_terms + reduce_rows), sets each problem's beta (acgs_momentum)
 * and extrapolates (acgs_update); after a check, the function restart
 * (acgs_rise + reduce_rows, acgs_climbed, acgs_reset). Per-problem
 * decisions stay on the device: the host reads nothing inside an
 * iteration. */

/* (y - x_new).(x_new - x) per contact, summed per problem by reduce_rows. */
__kernel void acgs_terms(int n, __global const real_t *y, __global const real_t *xnew,
                         __global const real_t *x, __global real_t *terms)
{
    int c = get_global_id(0);
    real_t a[3], b[3], o[3];
    if (c >= n) return;
    cone_load3(y + 3 * c, a);
    cone_load3(xnew + 3 * c, b);
    cone_load3(x + 3 * c, o);
    terms[c] = cone_acgs_term(a, b, o);
}

/* Nesterov's weight per problem, with the gradient restart. */
__kernel void acgs_momentum(int nprob, __global const int *active, __global real_t *theta,
                            __global real_t *beta, __global const real_t *sums)
{
    int p = get_global_id(0);
    real_t th;
    if (p >= nprob || !active[p]) return;
    th = theta[p];
    beta[p] = cone_apgd_momentum(&th, sums[p]);
    theta[p] = th;
}

/* x <- x_new, y <- P(x_new + beta (x_new - x)) for active problems. */
__kernel void acgs_update(int n, __global const int *prob, __global const int *active,
                          __global const real_t *mu, __global const real_t *beta,
                          __global const real_t *xnew, __global real_t *x, __global real_t *y)
{
    int c = get_global_id(0), p;
    real_t a[3], o[3], v[3];
    if (c >= n) return;
    p = prob[c];
    if (!active[p]) return;
    cone_load3(xnew + 3 * c, a);
    cone_load3(x + 3 * c, o);
    cone_acgs_extrapolate(mu[c], beta[p], a, o, v);
    cone_store3(x + 3 * c, a);
    cone_store3(y + 3 * c, v);
}

/* The function restart's terms at check it, from the check's w = W x: a
 * contact's share of the objective's rise since the last check and its
 * magnitude (cone_acgs_rise_term), two a contact, summed per problem by
 * reduce_rows; x and u = w + q kept in xc and uc for the next check. */
__kernel void acgs_rise(int n, int it, __global const real_t *q, __global const real_t *x,
                        __global const real_t *w, __global real_t *xc, __global real_t *uc,
                        __global real_t *terms)
{
    int c = get_global_id(0);
    real_t a[3], u[3], b[3], ap[3], up[3], mag = 0, rise = 0;
    if (c >= n) return;
    cone_load3(x + 3 * c, a);
    cone_load3(q + 3 * c, b);
    contact_u(c, w, b, u);
    if (it > 1) { /* the first check has no last one */
        cone_load3(xc + 3 * c, ap);
        cone_load3(uc + 3 * c, up);
        rise = cone_acgs_rise_term(a, u, ap, up, b, &mag);
    }
    terms[2 * c] = rise;
    terms[2 * c + 1] = mag;
    cone_store3(xc + 3 * c, a);
    cone_store3(uc + 3 * c, u);
}

/* The function restart per problem (cone_acgs_climbed) on the summed rise
 * and magnitude; reset[p] tells acgs_reset which problems restart. */
__kernel void acgs_climbed(int nprob, int it, __global const int *active, __global const real_t *sums,
                           __global real_t *theta, __global int *reset)
{
    int p = get_global_id(0);
    if (p >= nprob) return;
    reset[p] = 0;
    if (!active[p]) return;
    reset[p] = cone_acgs_climbed(it, sums[2 * p], sums[2 * p + 1]);
    if (reset[p]) theta[p] = 1;
}

/* y <- P(x) for the contacts of the problems acgs_climbed restarts. */
__kernel void acgs_reset(int n, __global const int *prob, __global const int *reset, __global const real_t *mu,
                         __global const real_t *x, __global real_t *y)
{
    int c = get_global_id(0);
    real_t a[3], v[3];
    if (c >= n || !reset[prob[c]]) return;
    cone_load3(x + 3 * c, a);
    cone_acgs_extrapolate(mu[c], 0, a, a, v);
    cone_store3(y + 3 * c, v);
}
