/* needs: cone.h local_solve.h schedule.h contact.h newton_math.h */
/* Semismooth Newton for the exact Coulomb law and for ccp (local form),
 * one work-group per problem of the batch: the reference's method
 * (host/ref/newton.c) on the device. Per Newton step the lanes build
 * the model's residual (newton_contact: Alart-Curnier's, for ccp at
 * the shifted velocity) and generalised Jacobian J = A + B W (a lane
 * per contact row), factor the dense J by LU with partial pivoting (a lane
 * per row below the pivot, a barrier between elimination steps), fall
 * back to Levenberg-Marquardt when J is singular or its direction does
 * not descend, and backtrack (Armijo) on 1/2 ||phi||^2; when no direction
 * decreases it, or the error has not halved in NEWTON_STALL steps (5; 15
 * for GMRES's inexact steps), Gauss-Seidel sweeps (the exact one-contact
 * solve of NSGS; ccp: PGS's projected step, with CGS's step sizes omega)
 * rescue it.
 * Unlike the reference, a rescue that does not help is followed by a
 * longer one, not a failure: the iteration cap or the host's time cap
 * ends the solve, with the best iterate. In float, the hybrid's Newton
 * gives up where its steps since the last rescue found no error better
 * than the rescue's, and the sweeps go on: float's Newton steps can lower
 * the merit while the error grows, and each stall would start a rescue
 * twice as long (48 s on a 24-contact pile, docs/measured.md); in double
 * the longer rescues carry such problems faster than the sweeps.
 *
 * Every element is written by one lane with a fixed order of additions,
 * and every sum (merit, slope, pivot search, the substitutions) is made
 * by lane 0 in index order, so any work-group size gives the same bits;
 * maxima (the pivot threshold) do not depend on order. The error is the
 * whole-problem kernels' check (group_check), after every Newton step,
 * iteration 0 being the start, as on the reference.
 *
 * The hybrid (`hybrid` set, the device's default for coulomb below
 * 1e-6) first runs coloured Gauss-Seidel sweeps, CGS's own (group_solve.cl,
 * the same bits), checked on the solver schedule, and gives a problem
 * to Newton, for a try or for good, when the reference's switch says so
 * (newton_hybrid_switch); a try that gives up goes back to the sweeps
 * from the best iterate. Each work-group decides for its problem. A
 * problem the host gave no dense scratch (too large) stays with the
 * sweeps, or, where the host priced its interior point (handover[p] > 0,
 * in sweeps), stops at the switch's first verdict in state
 * CONE_GROUP_HANDOVER, its best iterate in r.
 *
 * Scratch: problem p's J, F (factors) and J'J, m x m each (m = 3 n_p),
 * lie one after another in mats from mat_off[p] (mat_off[p + 1] equal to
 * it: none); vecs holds u, phi, the trial point, the best iterate (by
 * contact) and the gradient and direction (by problem); ints the pivots
 * (by problem), then per problem the last mark's iteration, the rescue's
 * length, the iteration at which Newton took over (-1 while the
 * sweeps run), a rescue's sweeps to run and run, the sweeps (which the
 * host reads), the iteration a try ends at (0: none) and whether a
 * rescue ended before the next check; ns per problem the best error, the
 * mark's error, a ccp rescue's momentum (the rescue keeps its x_{k-1} and y
 * in the trial point's and u's places, which Newton rewrites before it
 * reads them), the best error after the last rescue and the best error
 * when Levenberg-Marquardt took the lead (newton_stall_rescues), whose
 * stage is the last of the ints. model is CONE_MODEL_COULOMB, CONE_MODEL_CCP or
 * CONE_MODEL_PYRAMID (of facets facets, inner or outer). The last five
 * arguments are those of group_solve_local;
 * check_every is the sweeps' schedule, as every Newton step is checked. */

#define NEWTON_NS 6
#define NEWTON_NI 9
/* Whether the hybrid's Newton that stalls gives up to the sweeps: in
 * float, where its steps since the last rescue found nothing better (its
 * merit can fall while the error grows, each rescue twice as long, with
 * no bound but the time cap); double keeps rescuing, as giving up there
 * made ccp's tiny piles 1.5x slower. A macro of the whole test, so that
 * double's constant does not meet a logical operator (a build warning). */
#ifdef CLCONE_DOUBLE
#define NEWTON_GIVES_UP(hybrid, best_e, rescue_e) 0
#else
#define NEWTON_GIVES_UP(hybrid, best_e, rescue_e) ((hybrid) && !((best_e) < (rescue_e)))
#endif

/* Contact c's rho (normal, tangential) from its diagonal block. */
static void newton_contact_rho(__global const real_t *W, __global const int *diag, int c, real_t *rn, real_t *rt)
{
    __global const real_t *D = W + 9 * diag[c];
    *rn = newton_rho(D[0]);
    *rt = newton_rho((real_t)0.5 * (D[4] + D[8]));
}

/* u = W x + q and phi at x (by contact) over [c0, c1); returns
 * 1/2 ||phi||^2, summed by lane 0 in index order. Every lane returns it.
 * facets and inner: the pyramid's (model CONE_MODEL_PYRAMID). */
static real_t newton_eval(int model, int facets, int inner, int c0, int c1, __global const int *row_ptr,
                          __global const int *col,
                          __global const real_t *W, __global const int *diag, __global const real_t *q,
                          __global const real_t *mu, __global const real_t *x, __global real_t *u,
                          __global real_t *phi, __local real_t *scal)
{
    for (int c = c0 + (int)get_local_id(0); c < c1; c += (int)get_local_size(0)) {
        real_t xc[3], uc[3] = {0, 0, 0}, ph[3], A[9], B[9], rn, rt;
        row_product(row_ptr, col, W, x, c, 0, uc);
        uc[0] += q[3 * c];
        uc[1] += q[3 * c + 1];
        uc[2] += q[3 * c + 2];
        cone_load3(x + 3 * c, xc);
        newton_contact_rho(W, diag, c, &rn, &rt);
        newton_contact(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], rn, rt, xc, uc, ph, 0, A, B);
        cone_store3(u + 3 * c, uc);
        cone_store3(phi + 3 * c, ph);
    }
    group_barrier();
    if (get_local_id(0) == 0) {
        real_t s = 0;
        for (int i = 3 * c0; i < 3 * c1; ++i) s += phi[i] * phi[i];
        *scal = (real_t)0.5 * s;
    }
    group_barrier();
    return *scal;
}

/* J = A + B W at r (u as newton_eval left it there), g = J' phi, and
 * the pivot threshold, which every lane returns. */
static real_t newton_jacobian(int model, int facets, int inner, int c0, int c1, __global const int *row_ptr,
                              __global const int *col,
                              __global const real_t *W, __global const int *diag, __global const real_t *mu,
                              __global const real_t *r, __global const real_t *u, __global const real_t *phi,
                              __global real_t *J, __global real_t *g, __local real_t *sums)
{
    int l = get_local_id(0), nl = get_local_size(0), m = 3 * (c1 - c0);
    ulong mm = (ulong)m * (ulong)m;
    real_t top = 0;
    for (int c = c0 + l; c < c1; c += nl) {
        int i = c - c0;
        real_t xc[3], uc[3], ph[3], A[9], B[9], rn, rt;
        __global real_t *Jr = J + (ulong)(3 * i) * m;
        for (int e = 0; e < 3 * m; ++e) Jr[e] = 0;
        cone_load3(r + 3 * c, xc);
        cone_load3(u + 3 * c, uc);
        newton_contact_rho(W, diag, c, &rn, &rt);
        newton_contact(model, cone_model_pyramid(model, facets, inner, mu[c]), mu[c], rn, rt, xc, uc, ph, 1, A, B);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) Jr[(ulong)a * m + 3 * i + b] += A[3 * a + b];
        for (int k = row_ptr[c]; k < row_ptr[c + 1]; ++k) {
            __global const real_t *Wb = W + 9 * k;
            int j = col[k] - c0;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    Jr[(ulong)a * m + 3 * j + b]
                        += B[3 * a] * Wb[b] + B[3 * a + 1] * Wb[3 + b] + B[3 * a + 2] * Wb[6 + b];
        }
    }
    group_barrier();
    for (int j = l; j < m; j += nl) {
        real_t s = 0;
        for (int i = 0; i < m; ++i) s += J[(ulong)i * m + j] * phi[3 * c0 + i];
        g[j] = s;
    }
    for (int v = l; v < CONE_REDUCE_WG; v += nl) {
        real_t mx = 0;
        for (ulong e = v; e < mm; e += CONE_REDUCE_WG) mx = fmax(mx, fabs(J[e]));
        sums[v] = mx;
    }
    group_barrier();
    for (int v = 0; v < CONE_REDUCE_WG; ++v) top = fmax(top, sums[v]);
    group_barrier(); /* sums are rewritten by the next check */
    return (real_t)NEWTON_PIVOT_TINY * top;
}

/* Solves F d = -rhs (m unknowns) in place by LU with partial pivoting;
 * 0 when a pivot is not above tiny or d is not finite. Every lane
 * returns the same. */
static int newton_lu(__global real_t *F, int m, __global int *piv, __global const real_t *rhs,
                     __global real_t *d, real_t tiny, __local int *flag)
{
    int l = get_local_id(0), nl = get_local_size(0);
    int ok = 1;
    for (int k = 0; k < m && ok; ++k) {
        __global real_t *Fk = F + (ulong)k * m;
        if (l == 0) {
            int pk = k, ok;
            for (int i = k + 1; i < m; ++i)
                if (fabs(F[(ulong)i * m + k]) > fabs(F[(ulong)pk * m + k])) pk = i;
            ok = fabs(F[(ulong)pk * m + k]) > tiny;
            piv[k] = pk;
            if (ok && pk != k)
                for (int j = 0; j < m; ++j) {
                    real_t t = Fk[j];
                    Fk[j] = F[(ulong)pk * m + j];
                    F[(ulong)pk * m + j] = t;
                }
            *flag = ok;
        }
        group_barrier();
        ok = *flag;
        for (int i = k + 1 + l; ok && i < m; i += nl) {
            __global real_t *Fi = F + (ulong)i * m;
            real_t f = Fi[k] /= Fk[k];
            if (f == 0) continue;
            for (int j = k + 1; j < m; ++j) Fi[j] -= f * Fk[j];
        }
        group_barrier();
    }
    if (l == 0 && ok) *flag = newton_lu_substitute(F, m, piv, rhs, d);
    group_barrier();
    ok = *flag;
    group_barrier(); /* flag is rewritten by the next factorisation */
    return ok;
}

/* The problem's constant inputs, which every step reads. */
typedef struct newton_in {
    int model, facets, inner, c0, c1;
    __global const int *row_ptr, *col, *diag;
    __global const real_t *W, *q, *mu, *omega;
} newton_in;

/* The merit's derivative along d, g'd (g = J' phi, both by problem), summed by lane 0 in index order; 0
 * where no direction was found. Every lane returns it. */
static real_t newton_slope(int found, int m, __global const real_t *g, __global const real_t *d,
                           __local real_t *scal)
{
    real_t slope;
    if (get_local_id(0) == 0 && found) {
        real_t s = 0;
        for (int i = 0; i < m; ++i) s += g[i] * d[i];
        *scal = s;
    }
    group_barrier();
    slope = found ? *scal : 0;
    group_barrier();
    return slope;
}

/* Armijo backtracking along d (by problem) from r (by contact), the merit's
 * derivative there being slope: on success r moves to the accepted point
 * and *psi is its merit. */
static int newton_line_search(const newton_in *P, real_t slope, __global real_t *r, __global const real_t *d,
                              __global real_t *x, __global real_t *u, __global real_t *phi, real_t *psi,
                              __local real_t *scal)
{
    int l = get_local_id(0), nl = get_local_size(0), b = 3 * P->c0, e = 3 * P->c1, accepted = 0;
    /* no direction, or one that does not descend, tries no step */
    for (real_t t = slope < 0 ? 1 : 0; !accepted && t >= (real_t)NEWTON_MIN_STEP; t *= (real_t)0.5) {
        real_t trial;
        for (int i = b + l; i < e; i += nl) x[i] = r[i] + t * d[i - b];
        group_barrier();
        trial = newton_eval(P->model, P->facets, P->inner, P->c0, P->c1, P->row_ptr, P->col, P->W, P->diag, P->q,
                            P->mu, x, u, phi, scal);
        accepted = trial <= *psi + (real_t)NEWTON_ARMIJO * t * slope;
    }
    if (accepted) {
        for (int i = b + l; i < e; i += nl) r[i] = x[i];
        *psi = *scal;
    }
    group_barrier();
    return accepted;
}

#ifdef NEWTON_KRYLOV
/* sum a[e] b[e] over e < len: stripe v of CONE_REDUCE_WG adds e = v,
 * v + CONE_REDUCE_WG, ... and every lane adds the stripes in order, so
 * any work-group size gives the same bits. a and b must be written
 * (barrier) before. */
static real_t newton_dot(int len, __global const real_t *a, __global const real_t *b, __local real_t *sums)
{
    real_t s = 0;
    for (int v = get_local_id(0); v < CONE_REDUCE_WG; v += (int)get_local_size(0)) {
        real_t t = 0;
        for (int e = v; e < len; e += CONE_REDUCE_WG) t += a[e] * b[e];
        sums[v] = t;
    }
    group_barrier();
    for (int v = 0; v < CONE_REDUCE_WG; ++v) s += sums[v];
    group_barrier();
    return s;
}

/* Past the dense limit J = A + B W is never formed: per contact its A
 * and B at r (u as newton_eval left it) and the preconditioner's block
 * D = A + B W_cc, 27 reals a contact in AB. */
static void newton_krylov_blocks(const newton_in *P, __global const real_t *r, __global const real_t *u,
                                 __global real_t *AB)
{
    for (int c = P->c0 + (int)get_local_id(0); c < P->c1; c += (int)get_local_size(0)) {
        real_t xc[3], uc[3], ph[3], A[9], B[9], rn, rt;
        __global real_t *o = AB + 27 * (c - P->c0);
        __global const real_t *Wd = P->W + 9 * P->diag[c];
        cone_load3(r + 3 * c, xc);
        cone_load3(u + 3 * c, uc);
        newton_contact_rho(P->W, P->diag, c, &rn, &rt);
        newton_contact(P->model, cone_model_pyramid(P->model, P->facets, P->inner, P->mu[c]), P->mu[c], rn, rt, xc,
                       uc, ph, 1, A, B);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                o[3 * a + b] = A[3 * a + b];
                o[9 + 3 * a + b] = B[3 * a + b];
                o[18 + 3 * a + b] = A[3 * a + b] + B[3 * a] * Wd[b] + B[3 * a + 1] * Wd[3 + b]
                                    + B[3 * a + 2] * Wd[6 + b];
            }
    }
    group_barrier();
}

/* z = D^-1 s by contact blocks (s itself where pre is 0 or a block is
 * singular), s by problem, z by contact (W's rows read it so); nothing
 * but the barrier where not active. */
static void newton_krylov_precond(const newton_in *P, __global const real_t *AB, __global const real_t *s, int pre,
                                  __global real_t *z, int active)
{
    for (int c = P->c0 + (int)get_local_id(0); active && c < P->c1; c += (int)get_local_size(0)) {
        int i = c - P->c0;
        real_t a[3], y[3], D[9];
        cone_load3(s + 3 * i, a);
        for (int e = 0; e < 9; ++e) D[e] = AB[27 * i + 18 + e];
        if (!pre || !cone_solve3(D, a, y)) y[0] = a[0], y[1] = a[1], y[2] = a[2];
        cone_store3(z + 3 * c, y);
    }
    group_barrier();
}

/* w = J z (by problem), z = D^-1 s or s (newton_krylov_precond, into zc). */
static void newton_krylov_apply(const newton_in *P, __global const real_t *AB, __global const real_t *s, int pre,
                                __global real_t *zc, __global real_t *w)
{
    newton_krylov_precond(P, AB, s, pre, zc, 1);
    for (int c = P->c0 + (int)get_local_id(0); c < P->c1; c += (int)get_local_size(0)) {
        int i = c - P->c0;
        real_t z[3], v[3] = {0, 0, 0}, o[3];
        __global const real_t *A = AB + 27 * i, *B = A + 9;
        row_product(P->row_ptr, P->col, P->W, zc, c, 0, v);
        cone_load3(zc + 3 * c, z);
        for (int a = 0; a < 3; ++a)
            o[a] = A[3 * a] * z[0] + A[3 * a + 1] * z[1] + A[3 * a + 2] * z[2] + B[3 * a] * v[0] + B[3 * a + 1] * v[1]
                   + B[3 * a + 2] * v[2];
        cone_store3(w + 3 * i, o);
    }
    group_barrier();
}

/* Newton's direction past the dense limit: J d = -phi (phi by problem,
 * psi = 1/2 ||phi||^2) by GMRES, right-preconditioned by the contacts'
 * blocks D, restarted every NEWTON_KRYLOV_DIM products, from d = 0 to a
 * true residual of eta ||phi|| (eta = min(NEWTON_KRYLOV_ETA,
 * sqrt ||phi||): Eisenstat and Walker's forcing term, which keeps
 * Newton's local speed without solving its first, rough systems
 * exactly) or NEWTON_KRYLOV_PRODUCTS products. Each cycle starts from
 * the true residual -phi - J d (j = -1; the first product, J 0, keeps
 * every pass alike), which also ends the solve and gives the merit's
 * slope phi' J d along d. Every barrier is on every pass (conditional
 * ones multiply POCL's compile time): the steps a pass does not take
 * skip their work. The Gram-Schmidt sums are newton_dot's, the
 * Hessenberg matrix's rotations and triangular solve lane 0's, so any
 * work-group size gives the same bits. Returns the slope (not finite:
 * no direction, and the line search tries no step). Scratch kry: the
 * basis, AB (newton_krylov_blocks), H, the rotations and their
 * right-hand side; zc: a vector by contact. */
static real_t newton_gmres(const newton_in *P, __global const real_t *phi, real_t psi, __global real_t *d,
                           __global real_t *kry, __global real_t *zc, __local real_t *sums)
{
    int l = get_local_id(0), nl = get_local_size(0), m = 3 * (P->c1 - P->c0), K = NEWTON_KRYLOV_DIM;
    int j = -1, products = 0, more = 1;
    __global real_t *V = kry, *AB = kry + NEWTON_KRYLOV_AB(m), *H = AB + 9 * (ulong)m;
    __global real_t *cs = H + (K + 1) * K, *sn = cs + K, *gv = sn + K;
    real_t target = 0, res = 0, slope;
    for (int i = l; i < m; i += nl) d[i] = 0;
    group_barrier(); /* the first product reads d by contact */
    while (more) {
        __global real_t *w = V + (ulong)(j + 1) * m;
        real_t h = 0;
        int end;
        newton_krylov_apply(P, AB, j < 0 ? d : V + (ulong)j * m, j >= 0, zc, w);
        ++products;
        for (int i = l; j < 0 && i < m; i += nl) w[i] = -phi[i] - w[i];
        group_barrier();
        /* modified Gram-Schmidt against the basis, then ||w||^2 */
        for (int i = 0; i <= j + 1; ++i) {
            __global const real_t *Vi = V + (ulong)i * m;
            h = newton_dot(m, w, i <= j ? Vi : w, sums);
            for (int e = l; i <= j && e < m; e += nl) w[e] -= h * Vi[e];
            if (l == 0 && i <= j) H[i * K + j] = h;
            group_barrier();
        }
        h = sqrt(h);
        if (j < 0) {
            if (products == 1)
                target = fmin((real_t)NEWTON_KRYLOV_ETA, sqrt(h)) * h;
            else if (!(h > target) || products >= NEWTON_KRYLOV_PRODUCTS)
                more = 0;
            if (!isfinite(h)) more = 0;
            if (l == 0) gv[0] = h;
        } else if (l == 0) { /* the new column's rotations, and the residual's estimate */
            real_t den;
            for (int i = 0; i < j; ++i) {
                real_t a = H[i * K + j], b = H[(i + 1) * K + j];
                H[i * K + j] = cs[i] * a + sn[i] * b;
                H[(i + 1) * K + j] = cs[i] * b - sn[i] * a;
            }
            den = hypot(H[j * K + j], h);
            cs[j] = den > 0 ? H[j * K + j] / den : 1;
            sn[j] = den > 0 ? h / den : 0;
            H[j * K + j] = den;
            gv[j + 1] = -sn[j] * gv[j];
            gv[j] = cs[j] * gv[j];
        }
        group_barrier();
        res = j < 0 ? h : fabs(gv[j + 1]);
        end = j >= 0 && (res <= target || j + 1 == K || products >= NEWTON_KRYLOV_PRODUCTS || !(h > 0));
        for (int e = l; more && h > 0 && e < m; e += nl) w[e] /= h;
        /* at a cycle's end y = H^-1 g into g, d += D^-1 V y (V_{j+1},
         * unused now, holds V y) */
        for (int i = j; l == 0 && end && i >= 0; --i) {
            real_t t = gv[i];
            for (int k = i + 1; k <= j; ++k) t -= H[i * K + k] * gv[k];
            gv[i] = H[i * K + i] != 0 ? t / H[i * K + i] : 0;
        }
        group_barrier();
        for (int e = l; end && e < m; e += nl) {
            real_t t = 0;
            for (int i = 0; i <= j; ++i) t += gv[i] * V[(ulong)i * m + e];
            w[e] = t;
        }
        group_barrier();
        newton_krylov_precond(P, AB, w, 1, zc, end);
        for (int c = P->c0 + l; end && c < P->c1; c += nl)
            for (int a = 0; a < 3; ++a) d[3 * (c - P->c0) + a] += zc[3 * c + a];
        group_barrier();
        j = end ? -1 : j + 1;
    }
    /* V_0 = -phi - J d: phi' J d = -||phi||^2 - phi' V_0 */
    slope = -2 * psi - newton_dot(m, phi, V, sums);
    return slope;
}
#endif

/* The matrix of attempt a into F: J itself (a = -1), else Levenberg-
 * Marquardt's J'J + lambda I (J'J formed where fresh), lambda ||phi|| for
 * LM's lead (a = -2), else from the merit up 100x per attempt. */
static void newton_matrix(int m, int attempt, int fresh, real_t psi, __global const real_t *J, __global real_t *JtJ,
                          __global real_t *F)
{
    int l = get_local_id(0), nl = get_local_size(0);
    real_t scale = 0, lambda;
    /* row i of J'J from the rows of J with an entry in column i, as the
     * reference forms it: J is as sparse as W, so this costs far less
     * than m^3 */
    if (fresh)
        for (int i = l; i < m; i += nl) {
            __global real_t *Ri = JtJ + (ulong)i * m;
            for (int j = 0; j < m; ++j) Ri[j] = 0;
            for (int k = 0; k < m; ++k) {
                real_t a = J[(ulong)k * m + i];
                if (a == 0) continue;
                for (int j = 0; j < m; ++j) Ri[j] += a * J[(ulong)k * m + j];
            }
        }
    group_barrier();
    if (attempt == -1) {
        for (ulong e = l; e < (ulong)m * (ulong)m; e += nl) F[e] = J[e];
    } else {
        for (int i = 0; i < m; ++i) scale = fmax(scale, JtJ[(ulong)i * m + i]);
        lambda = fmax(attempt < 0 ? sqrt(2 * psi) : 2 * psi, (real_t)1e-12 * scale);
        for (int a = 0; a < attempt; ++a) lambda *= 100;
        for (int i = l; i < m; i += nl)
            for (int j = 0; j < m; ++j) F[(ulong)i * m + j] = JtJ[(ulong)i * m + j] + (i == j ? lambda : 0);
    }
    group_barrier();
}

/* The Gauss-Seidel update of contact c in r at sweep `sweep`: the
 * exact one-contact solve of NSGS (coulomb) or PGS's projected step
 * (ccp, the pyramid), as CGS makes it. */
static void newton_gs_contact(const newton_in *P, __global real_t *r, int c, int sweep)
{
    local_gs_contact(P->row_ptr, P->col, P->W, P->diag, P->q, P->mu, P->omega, r, c, P->model, P->facets,
                     P->inner, sweep);
}

/* Sweeps done + 1 .. done + len of a rescue over the problem by lane 0,
 * in contact order (a rescue, rare enough that its order matters more
 * than its lanes): NSGS's for coulomb; for ccp accelerated Gauss-Seidel,
 * ACGS's extrapolation and gradient restart (cone_acgs_*, without its
 * function restart) with x_{k-1} in xo, the sweep's start y in ys and
 * the momentum in mom[0] (theta) and mom[1] (beta), which carry it from
 * one launch to the next. Plain PGS sweeps creep where ccp's infimum
 * lies far out (reactions that grow as the error falls: 8 of the 256
 * tiny piles), where the reference's rescue, ACGS, gets there. */
static void newton_rescue(const newton_in *P, __global real_t *r, __global real_t *xo, __global real_t *ys,
                          __global real_t *mom, int done, int len)
{
    int acc = P->model == CONE_MODEL_CCP; /* ACGS's extrapolation projects onto K_mu */
    if (get_local_id(0) == 0)
        for (int s = done + 1; s <= done + len; ++s) {
            real_t t = 0, a[3], b[3], o[3];
            if (acc && s == 1) {
                mom[0] = 1;
                mom[1] = 0;
            }
            for (int c = P->c0; acc && c < P->c1; ++c) {
                cone_load3(r + 3 * c, a);
                cone_load3(xo + 3 * c, o);
                if (s == 1) {
                    cone_store3(xo + 3 * c, a);
                    cone_store3(ys + 3 * c, a);
                    continue;
                }
                cone_acgs_extrapolate(P->mu[c], mom[1], a, o, b);
                cone_store3(xo + 3 * c, a);
                cone_store3(ys + 3 * c, b);
                cone_store3(r + 3 * c, b);
            }
            for (int c = P->c0; c < P->c1; ++c) newton_gs_contact(P, r, c, s);
            for (int c = P->c0; acc && c < P->c1; ++c) {
                cone_load3(ys + 3 * c, b);
                cone_load3(r + 3 * c, a);
                cone_load3(xo + 3 * c, o);
                t += cone_acgs_term(b, a, o);
            }
            if (acc) {
                real_t th = mom[0];
                mom[1] = cone_apgd_momentum(&th, t);
                mom[0] = th;
            }
        }
    group_barrier();
}

/* `sweeps` (0 or 1) coloured Gauss-Seidel sweeps, number `it`, over
 * problem p: the contacts of a colour share no W block, so the lanes
 * update them at once, as CGS does (group_sweep in group_solve.cl). */
static void newton_cgs_sweep(const newton_in *P, int p, __global const int *prob_colors,
                             __global const int *color_ptr, __global const int *order, __global real_t *r,
                             int sweeps, int it)
{
    int l = get_local_id(0), nl = get_local_size(0);
    for (int s = 0; s < sweeps; ++s)
        for (int k = prob_colors[p]; k < prob_colors[p + 1]; ++k) {
            for (int i = color_ptr[k] + l; i < color_ptr[k + 1]; i += nl) newton_gs_contact(P, r, order[i], it);
            group_barrier();
        }
}

/* The error at iteration it (group_check) into *e, read before the last
 * barrier (lane 0 may rewrite err_out after it), and the best iterate so
 * far. A hybrid's try that has not converged by trial_end (0: none) gives
 * up here (*gave_up, r back to the best iterate), inside this function's
 * barrier: POCL's compile time grows with the kernel's barriers. */
static int newton_measure(const newton_in *P, int it, int max_iter, real_t tol, __global real_t *r,
                          __global real_t *best, real_t *best_e, __local real_t *sums, __local int *verdict,
                          __global real_t *err_out, real_t *e_out, int trial_end, int *gave_up)
{
    int status = group_check(4, P->c0, P->c1, it, max_iter, tol, P->row_ptr, P->col, P->W, P->q, P->mu, r, 0,
                             P->model, P->facets, P->inner, sums, verdict, err_out);
    real_t e = *e_out = *err_out;
    *gave_up = trial_end && it >= trial_end && status == CONE_GROUP_RUNNING;
    if (e < *best_e) {
        *best_e = e;
        for (int i = 3 * P->c0 + (int)get_local_id(0); i < 3 * P->c1; i += (int)get_local_size(0)) best[i] = r[i];
    }
    /* the lanes copy back the elements they copied, so no barrier between */
    for (int i = 3 * P->c0 + (int)get_local_id(0); *gave_up && i < 3 * P->c1; i += (int)get_local_size(0))
        r[i] = best[i];
    group_barrier();
    return status;
}

/* A problem's hybrid state, kept in ints and ns between launches: the
 * last mark (iteration, error), the iteration Newton took over at (-1
 * while the sweeps run), the iteration a try ends at (0: none; -1: a
 * try failed, and there is no second), whether a rescue ended before the
 * next check and the best error after the last rescue. */
typedef struct newton_track {
    int mark_it, switched, trial_end, after_rescue, lm_stage;
    real_t mark_e, rescue_e, lm_e;
} newton_track;

/* The problem's state for its next launch, where newton_local reads it. */
static void newton_save(const newton_track *T, int burst, int pend, int done, int sweeps, real_t best_e,
                        __global int *pint, __global real_t *pns)
{
    pint[0] = T->mark_it;
    pint[1] = burst;
    pint[2] = T->switched;
    pint[3] = pend;
    pint[4] = done;
    pint[5] = sweeps;
    pint[6] = T->trial_end;
    pint[7] = T->after_rescue;
    pint[8] = T->lm_stage;
    pns[0] = best_e;
    pns[1] = T->mark_e;
    pns[4] = T->rescue_e;
    pns[5] = T->lm_e;
}

/* After the check of iteration it (error e; a try given up or not): the
 * hybrid's switch while the sweeps run (newton_hybrid_switch), back to
 * the sweeps from a try that gave up, and Newton's mark at each halving
 * of the error. Returns whether Newton runs. */
static int newton_track_check(newton_track *T, int it, real_t e, real_t tol, real_t price, int max_iter, int dense,
                              int gave_up)
{
    int newton = T->switched >= 0;
    if (!newton && dense) {
        int to = newton_hybrid_switch(it, e, tol, price, max_iter, T->trial_end < 0, &T->mark_it, &T->mark_e);
        if (to) {
            T->switched = it;
            newton = 1;
            T->mark_e = INFINITY;
            T->trial_end = to == 1 ? it + NEWTON_TRIAL_STEPS : 0;
        }
    }
    if (gave_up) { /* the sweeps again, until the hand-over: one try */
        newton = T->mark_it = 0;
        T->trial_end = -1;
        T->switched = -1;
        T->mark_e = INFINITY;
    }
    if (newton && e <= (real_t)0.5 * T->mark_e) {
        T->mark_e = e;
        T->mark_it = it;
    }
    return newton;
}

/* The directions a Newton step tries (GMRES's, or the LU's and then
 * Levenberg-Marquardt's) and the steps it may take to halve the error. */
#ifdef NEWTON_KRYLOV
#define NEWTON_LAST_TRY 0
#define NEWTON_STALL NEWTON_KRYLOV_STALL_STEPS
#else
#define NEWTON_LAST_TRY NEWTON_LM_TRIES
#define NEWTON_STALL NEWTON_STALL_STEPS
#endif

/* At a stall: whether a rescue runs, else LM takes the lead from a new
 * mark (newton_stall_rescues); GMRES's steps have no LM to lead. */
static int newton_stall_needs_rescue(newton_track *T, real_t best_e)
{
#ifdef NEWTON_KRYLOV
    (void)T;
    (void)best_e;
    return 1;
#else
    if (newton_stall_rescues(&T->lm_stage, best_e, &T->lm_e)) return 1;
    T->mark_e = INFINITY;
    return 0;
#endif
}

/* The kernels' arguments, and the body they share: newton_local's here,
 * newton_krylov_local's in newton_krylov.cl, which includes this file
 * after newton_krylov.h (NEWTON_KRYLOV), so that each kernel holds only
 * its own path's barriers (POCL's compile time grows with them: built
 * for any work-group size, as a program binary is, newton_local took
 * 4.9 minutes before GMRES, 6.5 with its calls folded away only by the
 * optimiser; a first solve, its build for the launch's size included,
 * 11 s). */
#define NEWTON_PARAMS                                                                                                \
    __global const int *prob_off, __global const ulong *mat_off, __global const int *row_ptr,                         \
        __global const int *col, __global const real_t *W, __global const int *diag, __global const real_t *q,        \
        __global const real_t *mu, __global const real_t *omega, __global const int *prob_colors,                     \
        __global const int *color_ptr, __global const int *order, __global real_t *r, __global real_t *mats,          \
        __global real_t *vecs, __global int *ints, __global real_t *ns, __global int *state, __global real_t *error,   \
        __global const real_t *handover, int model, int facets, int inner, int hybrid, int max_iter, int check_every, \
        real_t tol, int restart, int budget
#define NEWTON_ARGS                                                                                                   \
    prob_off, mat_off, row_ptr, col, W, diag, q, mu, omega, prob_colors, color_ptr, order, r, mats, vecs, ints, ns,    \
        state, error, handover, model, facets, inner, hybrid, max_iter, check_every, tol, restart, budget

static __attribute__((always_inline)) void newton_group(NEWTON_PARAMS, __local real_t *sums,
                                                        __local real_t *scal_, __local int *verdict_,
                                                        __local int *flag_)
{
    int p = get_group_id(0), l = get_local_id(0), nl = get_local_size(0);
    int N = prob_off[get_num_groups(0)], c0 = prob_off[p], c1 = prob_off[p + 1], m = 3 * (c1 - c0);
    ulong mm = (ulong)m * (ulong)m;
    int dense = mat_off[p + 1] > mat_off[p]; /* GMRES's scratch too, which only newton (no hybrid) has */
    __global real_t *J = mats + mat_off[p], *F = J + mm, *JtJ = F + mm;
    __global real_t *u = vecs, *phi = vecs + 3 * N, *x = vecs + 6 * N, *best = vecs + 9 * N;
    __global real_t *g = vecs + 12 * N + 3 * c0, *d = vecs + 15 * N + 3 * c0, *pns = ns + NEWTON_NS * p;
    __global int *piv = ints + 3 * c0, *pint = ints + 3 * N + NEWTON_NI * p;
    newton_in P = {model, facets, inner, c0, c1, row_ptr, col, diag, W, q, mu, omega};
    int it = restart ? 0 : state[2 * p], status = restart ? CONE_GROUP_RUNNING : state[2 * p + 1], it_end;
    int burst = pint[1], pend = pint[3], done = pint[4], rescued = 0, sweeps = pint[5];
    newton_track T = {pint[0], pint[2], pint[6], pint[7], pint[8], pns[1], pns[4], pns[5]};
    real_t psi, best_e = pns[0], tiny = 0;
    real_t price = newton_hybrid_budget(m, row_ptr[c1] - row_ptr[c0]);
    if (status != CONE_GROUP_RUNNING) return;
    if (restart) {
        for (int i = 3 * c0 + l; i < 3 * c1; i += nl)
            if (!isfinite(r[i])) r[i] = 0;
        group_barrier();
        best_e = T.mark_e = T.rescue_e = T.lm_e = INFINITY;
        T.mark_it = pend = done = sweeps = T.trial_end = T.after_rescue = T.lm_stage = 0; /* NEWTON_LM_WAIT */
        burst = newton_first_burst(max_iter);
        T.switched = hybrid ? -1 : 0;
    }
    if (budget == 0) {
        /* the host's last launch, past its time cap: the best iterate
         * measured and its error, not one part way through a rescue */
        if (isfinite(best_e)) {
            for (int i = 3 * c0 + l; i < 3 * c1; i += nl) r[i] = best[i];
            if (l == 0) error[p] = best_e;
        }
        return;
    }
    it_end = max_iter - it < budget ? max_iter : it + budget;
    /* one call site per function with barriers: POCL copies the code
     * between barriers for each, and its compile time grows with them */
    for (;;) {
        int ok = 0, newton = T.switched >= 0, len, gave_up;
        real_t e;
        if (!pend) {
            if (!newton && it >= it_end) break;
            it += !newton;
            sweeps += !newton;
            newton_cgs_sweep(&P, p, prob_colors, color_ptr, order, r, !newton, it);
            /* a launch after the first measures again the iterate the last
             * one measured: the same error, and no new mark */
            if (newton || cone_is_check(it, check_every, max_iter)) {
                status = newton_measure(&P, it, max_iter, tol, r, best, &best_e, sums, verdict_, error + p, &e,
                                        T.trial_end > 0 ? T.trial_end : 0, &gave_up);
                newton = newton_track_check(&T, it, e, tol, price, max_iter, dense, gave_up);
                if (T.after_rescue || gave_up) T.rescue_e = gave_up ? INFINITY : best_e;
                T.after_rescue = 0;
                if (status == CONE_GROUP_RUNNING && !dense && handover[p] > 0
                    && newton_hybrid_switch(it, e, tol, handover[p], max_iter, 0, &T.mark_it, &T.mark_e))
                    status = CONE_GROUP_HANDOVER;
                if (status != CONE_GROUP_RUNNING) break;
            }
            if (!newton) continue;
            if (it + rescued >= it_end) break;
            psi = newton_eval(model, facets, inner, c0, c1, row_ptr, col, W, diag, q, mu, r, u, phi, scal_);
#ifdef NEWTON_KRYLOV
            newton_krylov_blocks(&P, r, u, J + NEWTON_KRYLOV_AB(m));
#else
            tiny = newton_jacobian(model, facets, inner, c0, c1, row_ptr, col, W, diag, mu, r, u, phi, J, g, sums);
#endif
            /* Newton's direction, then (dense) Levenberg-Marquardt's, LM's lead (a = -2) first */
            for (int a = T.lm_stage == NEWTON_LM_LEADS ? -2 : -1; !ok && a < NEWTON_LAST_TRY; ++a) {
                real_t slope;
#ifdef NEWTON_KRYLOV
                /* GMRES's vector by contact in the trial point's place, which the line search rewrites */
                slope = newton_gmres(&P, phi + 3 * c0, psi, d, J, x, sums);
#else
                newton_matrix(m, a, a == -2 || (a == 0 && T.lm_stage != NEWTON_LM_LEADS), psi, J, JtJ, F);
                slope = newton_slope(newton_lu(F, m, piv, a == -1 ? phi + 3 * c0 : g, d, a == -1 ? tiny : 0, flag_),
                                     m, g, d, scal_);
#endif
                ok = newton_line_search(&P, isfinite(slope) ? slope : 0, r, d, x, u, phi, &psi, scal_);
            }
            /* stalled or no descent: Gauss-Seidel moves r off the kink or
             * stationary point of the merit */
            if ((T.trial_end > 0 || NEWTON_GIVES_UP(hybrid, best_e, T.rescue_e))
                && (!ok || it - T.mark_it >= NEWTON_STALL)) {
                T.trial_end = it + 1; /* a try, or the hybrid's Newton, that stalls gives up at the next check */
            } else if ((!ok || it - T.mark_it >= NEWTON_STALL) && newton_stall_needs_rescue(&T, best_e)) {
                pend = burst;
                done = 0;
                burst = newton_next_burst(burst, max_iter);
                T.mark_e = INFINITY;
                T.after_rescue = 1;
            }
            ++it;
        }
        /* a rescue's sweeps count against the launch's budget, in pieces
         * no longer than the launch has left (one sweep at least), so that
         * a launch stays near the length the host sized for its time cap;
         * the next launch goes on where a piece stopped, sweep numbers and
         * all, with the bits of one whole rescue (every lane calls it, for
         * its barrier) */
        len = min(pend, max(1, it_end - it - rescued));
        newton_rescue(&P, r, x, u, pns + 2, done, len);
        done += len;
        pend -= len;
        rescued += len;
        if (pend) break;
    }
    if (status != CONE_GROUP_RUNNING && status != CONE_GROUP_CONVERGED) {
        /* the best iterate seen, never a non-finite one */
        for (int i = 3 * c0 + l; i < 3 * c1; i += nl) r[i] = best[i];
        if (l == 0 && isfinite(best_e)) error[p] = best_e;
    }
    if (l == 0) {
        state[2 * p] = it;
        state[2 * p + 1] = status;
        newton_save(&T, burst, pend, done, sweeps, best_e, pint, pns);
    }
}

#ifndef NEWTON_KRYLOV
__kernel void newton_local(NEWTON_PARAMS)
{
    __local real_t sums[4 * CONE_REDUCE_WG], scal;
    __local int verdict, flag;
    newton_group(NEWTON_ARGS, sums, &scal, &verdict, &flag);
}
#endif
