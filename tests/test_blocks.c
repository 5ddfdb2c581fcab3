/* The general-block problem (core/blocks.h): every row kind on a small
 * case checked by hand, on the reference (pgs, apgd) and the device
 * (double, float); a batch against each problem alone; the checks of
 * bad problems; the text format. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clcone/clcone.h>
#include "testutil.h"
#include "core/blocks.h"
#include "io/blocks_file.h"
#include "solve/blocks_solve.h"
#include "cone.h"
#include "block_sets.h"

/* A problem of nb blocks (kinds, sizes, bounds per row) with a dense W
 * (m x m, row-major): a block pair is stored when it holds a non-zero. */
static void make(clc_bproblem *p, int nb, const int *kind, const int *rows, const double *bound, const double *W,
                 const double *q)
{
    clcone_error e;
    int m = 0, nnzb = 0;
    for (int b = 0; b < nb; ++b) m += rows[b];
    ck_assert_int_eq(clc_bproblem_alloc(p, nb, m, nb * nb, &e), CLCONE_OK);
    for (int b = 0; b < nb; ++b) {
        p->off[b + 1] = p->off[b] + rows[b];
        p->kind[b] = kind[b];
    }
    memcpy(p->bound, bound, sizeof *bound * (size_t)m);
    memcpy(p->q, q, sizeof *q * (size_t)m);
    for (int b = 0; b < nb; ++b) {
        p->row_ptr[b] = nnzb;
        for (int c = 0; c < nb; ++c) {
            int any = b == c;
            for (int i = p->off[b]; i < p->off[b + 1]; ++i)
                for (int j = p->off[c]; j < p->off[c + 1]; ++j) any |= W[i * m + j] != 0;
            if (any) p->col[nnzb++] = c;
        }
    }
    p->row_ptr[nb] = p->nnzb = nnzb;
    ck_assert_int_eq(clc_bproblem_layout(p, &e), CLCONE_OK);
    for (int b = 0; b < nb; ++b)
        for (int k = p->row_ptr[b]; k < p->row_ptr[b + 1]; ++k) {
            int c = p->col[k], nc = rows[c];
            for (int x = 0; x < rows[b]; ++x)
                for (int y = 0; y < nc; ++y) p->val[p->val_off[k] + x * nc + y] = W[(p->off[b] + x) * m + p->off[c] + y];
        }
    ck_assert_msg(clc_bproblem_validate(p, &e) == CLCONE_OK, "%s", e.msg);
}

/* Solves p on ctx with solver to tol and checks f against want (|.| <=
 * close, relative to max |want|). */
static void solves_to(clcone_context *ctx, const clc_bproblem *p, clcone_solver solver, double tol,
                      const double *want, double close)
{
    clcone_options o;
    clcone_prob_result r;
    clcone_error e;
    double *f = calloc((size_t)p->m, sizeof *f), scale = 0;
    clcone_options_default(&o);
    o.solver = solver;
    o.tol = tol;
    ck_assert_msg(clc_solve_blocks(ctx, p, &o, f, &r, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(r.status == CLCONE_CONVERGED, "%s: %s", clcone_solver_name(solver), r.reason);
    for (int i = 0; i < p->m; ++i) scale = fmax(scale, fabs(want[i]));
    for (int i = 0; i < p->m; ++i)
        ck_assert_msg(fabs(f[i] - want[i]) <= close * scale, "%s row %d: %.17g, want %.17g",
                      clcone_solver_name(solver), i, f[i], want[i]);
    free(f);
}

/* Every backend and solver on one hand-checked case. */
static void all_backends(const clc_bproblem *p, const double *want)
{
    clcone_context *cd = test_context(CLCONE_DOUBLE), *cf = test_context(CLCONE_FLOAT);
    solves_to(NULL, p, CLCONE_SOLVER_PGS, 1e-12, want, 1e-9);
    solves_to(NULL, p, CLCONE_SOLVER_APGD, 1e-12, want, 1e-9);
    solves_to(cd, p, CLCONE_SOLVER_APGD, 1e-12, want, 1e-9);
    solves_to(cf, p, CLCONE_SOLVER_APGD, 1e-5, want, 1e-4);
    clcone_context_free(cd);
    clcone_context_free(cf);
}

/* A hand-checked case (make's arguments) solved to want everywhere. */
static void hand_case(int nb, const int *kind, const int *rows, const double *bound, const double *W, const double *q,
                      const double *want)
{
    clc_bproblem p;
    make(&p, nb, kind, rows, bound, W, q);
    all_backends(&p, want);
    clc_bproblem_free(&p);
}

/* Free rows (MuJoCo's equality): the linear solve W f = -q. W = [2 1; 1 2],
 * q = (-1, 0): f = (2/3, -1/3). */
START_TEST(free_block)
{
    const int kind[] = {BLK_FREE}, rows[] = {2};
    const double W[] = {2, 1, 1, 2}, q[] = {-1, 0}, bound[] = {0, 0}, want[] = {2.0 / 3, -1.0 / 3};
    hand_case(1, kind, rows, bound, W, q, want);
}
END_TEST

/* Box rows (friction loss) |f_i| <= 1, W = 2 I: the unconstrained -q/2 =
 * (5, -5, 0.5) clamped to (1, -1, 0.5). */
START_TEST(box_block)
{
    const int kind[] = {BLK_BOX}, rows[] = {3};
    const double W[] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, q[] = {-10, 10, -1}, bound[] = {1, 1, 1}, want[] = {1, -1, 0.5};
    hand_case(1, kind, rows, bound, W, q, want);
}
END_TEST

/* Nonnegative rows (limits, frictionless and pyramidal contacts): two
 * blocks coupled by W's off-diagonal 0.5; the second row is pushed out
 * (f = 0, its velocity 2 + 0.5 * 3 > 0), the first takes f = 3. */
START_TEST(nonneg_blocks)
{
    const int kind[] = {BLK_NONNEG, BLK_NONNEG}, rows[] = {1, 1};
    const double W[] = {1, 0.5, 0.5, 1}, q[] = {-3, 2}, bound[] = {0, 0}, want[] = {3, 0};
    hand_case(2, kind, rows, bound, W, q, want);
}
END_TEST

/* Elliptic cones with a friction coefficient per component: with W =
 * diag(1, 1/mu_i^2) the scaled problem is the identity and q' = (-2, -1,
 * -2, -2, -4, 0) (condim 6, mu = 0.5 0.25 0.1 0.05 0.05), so g is the
 * projection of (2, 1, 2, 2, 4, 0) onto the standard cone: |g_t| = 5 > 2,
 * g_0 = (2 + 5) / 2 = 3.5, g_t = 0.7 (1, 2, 2, 4, 0), and f = g mu. A
 * condim-3 contact beside it (mu = 0.5 0.25, q' = (-1, -3, -4): g = (3,
 * 1.8, 2.4)) and a condim-4 one inside its cone (f = -q). */
START_TEST(cone_blocks)
{
    enum { M = 13 };
    const int kind[] = {BLK_CONE, BLK_CONE, BLK_CONE}, rows[] = {6, 3, 4};
    const double mu6[] = {0.5, 0.25, 0.1, 0.05, 0.05}, g6[] = {2, 1, 2, 2, 4, 0}, mu3[] = {0.5, 0.25};
    const double g3[] = {1, 3, 4};
    double W[M * M] = {0}, q[M], bound[M], want[M];
    for (int i = 0; i < M; ++i) W[i * M + i] = 1;
    bound[0] = 1;
    q[0] = -g6[0];
    want[0] = 3.5;
    for (int x = 1; x < 6; ++x) {
        bound[x] = mu6[x - 1];
        W[x * M + x] = 1 / (mu6[x - 1] * mu6[x - 1]);
        q[x] = -g6[x] / mu6[x - 1];
        want[x] = 0.7 * g6[x] * mu6[x - 1];
    }
    bound[6] = 1;
    q[6] = -g3[0];
    want[6] = 3;
    for (int x = 1; x < 3; ++x) {
        bound[6 + x] = mu3[x - 1];
        W[(6 + x) * M + 6 + x] = 1 / (mu3[x - 1] * mu3[x - 1]);
        q[6 + x] = -g3[x] / mu3[x - 1];
        want[6 + x] = 0.6 * g3[x] * mu3[x - 1];
    }
    /* inside: |(0.1, 0.05) / (0.3, 0.3)| < 1 */
    for (int x = 0; x < 4; ++x) bound[9 + x] = x ? 0.3 : 1;
    q[9] = -1;
    q[10] = -0.1;
    q[11] = 0.05;
    q[12] = 0;
    for (int x = 0; x < 4; ++x) want[9 + x] = -q[9 + x];
    hand_case(3, kind, rows, bound, W, q, want);
}
END_TEST

enum { COUPLED_M = 7 };

/* All four kinds coupled through a dense W = B B' + d I (symmetric
 * positive definite), B's entries sin(phase + i + 3k); q scaled by qs. */
static void coupled(clc_bproblem *p, double phase, double d, double qs)
{
    enum { M = COUPLED_M };
    const int kind[] = {BLK_FREE, BLK_BOX, BLK_NONNEG, BLK_CONE}, rows[] = {2, 1, 1, 3};
    const double bound[] = {0, 0, 0.3, 0, 1, 0.4, 0.6}, q0[] = {-1, 0.5, -2, -1, -3, 1, 0.5};
    double W[M * M], q[M];
    for (int i = 0; i < M; ++i) {
        q[i] = qs * q0[i];
        for (int j = 0; j < M; ++j) {
            double s = i == j ? d : 0;
            for (int k = 0; k < M; ++k) s += sin(phase + i + 3 * k) * sin(phase + j + 3 * k) / M;
            W[i * M + j] = s;
        }
    }
    make(p, 4, kind, rows, bound, W, q);
}

/* All four kinds coupled through W: pgs, apgd and the device agree, and
 * the error measure of the answer is below the tolerance. */
START_TEST(coupled_kinds_agree)
{
    enum { M = COUPLED_M };
    clc_bproblem p;
    double f[M];
    clcone_options o;
    clcone_prob_result r;
    clcone_error e;
    coupled(&p, 1.0, 0.5, 1);
    clcone_options_default(&o);
    o.tol = 1e-12;
    memset(f, 0, sizeof f);
    o.solver = CLCONE_SOLVER_PGS;
    ck_assert_int_eq(clc_solve_blocks(NULL, &p, &o, f, &r, &e), CLCONE_OK);
    ck_assert_int_eq(r.status, CLCONE_CONVERGED);
    ck_assert_double_le(clc_bproblem_error(&p, f, NULL), 1e-12);
    ck_assert_double_le(fabs(f[2]), 0.3 * (1 + 1e-12));
    ck_assert_double_ge(f[3], 0);
    ck_assert_double_ge(f[4] * f[4], (f[5] / 0.4) * (f[5] / 0.4) + (f[6] / 0.6) * (f[6] / 0.6) - 1e-12);
    {
        double want[M];
        clcone_context *cd = test_context(CLCONE_DOUBLE);
        memcpy(want, f, sizeof want);
        solves_to(NULL, &p, CLCONE_SOLVER_APGD, 1e-12, want, 1e-9);
        solves_to(cd, &p, CLCONE_SOLVER_APGD, 1e-12, want, 1e-9);
        clcone_context_free(cd);
    }
    clc_bproblem_free(&p);
}
END_TEST

/* A batch of 4 different problems (sizes, conditioning, warm starts, so
 * iteration counts and stops differ) solved together equals each solved
 * alone to the bit: forces, iterations, error, status. On the reference
 * (apgd and pgs) and on the device in double and float (loop index i:
 * ref, double, float). */
START_TEST(batch_equals_each_alone)
{
    enum { K = 4, M = COUPLED_M };
    clcone_context *ctx = _i ? test_context(_i == 1 ? CLCONE_DOUBLE : CLCONE_FLOAT) : NULL;
    clc_bproblem p[K];
    const clc_bproblem *pp[K];
    const int kind[] = {BLK_BOX}, rows[] = {3};
    const double W3[] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, q3[] = {-10, 10, -1}, b3[] = {1, 1, 1};
    double alone[K][M], batch[K][M], *fb[K];
    clcone_prob_result ra[K], rb[K];
    clcone_options o;
    clcone_error e;
    int failed;
    coupled(&p[0], 1.0, 0.5, 1);
    coupled(&p[1], 2.0, 0.05, 3); /* worse conditioned: more iterations */
    make(&p[2], 1, kind, rows, b3, W3, q3);
    coupled(&p[3], 0.3, 0.01, -0.5);
    clcone_options_default(&o);
    o.tol = _i == 2 ? 1e-5 : 1e-10;
    o.warm_start = 1;
    for (int solver = 0; solver < (_i ? 1 : 2); ++solver) {
        o.solver = solver ? CLCONE_SOLVER_PGS : CLCONE_SOLVER_APGD;
        for (int k = 0; k < K; ++k) {
            pp[k] = &p[k];
            fb[k] = batch[k];
            for (int i = 0; i < M; ++i) alone[k][i] = batch[k][i] = k == 3 ? 0.1 * i : 0;
            ck_assert_msg(clc_solve_blocks(ctx, &p[k], &o, alone[k], &ra[k], &e) == CLCONE_OK, "%s", e.msg);
        }
        /* the host's work a problem on 1, 2 and 3 threads: the same bits */
        for (int threads = 1; threads <= 3; ++threads) {
            for (int k = 0; k < K; ++k)
                for (int i = 0; i < M; ++i) batch[k][i] = k == 3 ? 0.1 * i : 0;
            ck_assert_msg(clc_solve_blocks_batch(ctx, K, pp, &o, threads, fb, rb, &failed, &e) == CLCONE_OK, "%s",
                          e.msg);
            for (int k = 0; k < K; ++k) {
                ck_assert_int_eq(rb[k].status, CLCONE_CONVERGED);
                ck_assert_int_eq(rb[k].iters, ra[k].iters);
                ck_assert_mem_eq(&rb[k].error, &ra[k].error, sizeof ra[k].error);
                ck_assert_mem_eq(&rb[k].cost, &ra[k].cost, sizeof ra[k].cost);
                ck_assert_mem_eq(batch[k], alone[k], sizeof *alone[k] * (size_t)p[k].m);
            }
        }
        /* the stops differ, so the batch froze problems while others ran */
        ck_assert_int_ne(ra[1].iters, ra[2].iters);
    }
    p[2].q[1] = NAN;
    ck_assert_int_eq(clc_solve_blocks_batch(ctx, K, pp, &o, 1, fb, rb, &failed, &e), CLCONE_EINVAL);
    ck_assert_int_eq(failed, 2);
    ck_assert_int_eq(clc_solve_blocks_batch(ctx, K, pp, &o, 1, fb, rb, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "problem 2: ") && strstr(e.msg, "row 1"), "%s", e.msg);
    ck_assert_int_eq(clc_solve_blocks_batch(ctx, 0, pp, &o, 1, fb, rb, &failed, &e), CLCONE_EINVAL);
    ck_assert_int_eq(clc_solve_blocks_batch(ctx, K, pp, &o, 0, fb, rb, &failed, &e), CLCONE_EINVAL);
    /* on 2 or 3 threads problems 2 and 3 fail on different threads (on 3
     * the thread of 0 and 3 meets 3 first): the lowest is named, as on 1 */
    p[3].q[0] = NAN;
    for (int threads = 1; threads <= 3; ++threads) {
        ck_assert_int_eq(clc_solve_blocks_batch(ctx, K, pp, &o, threads, fb, rb, &failed, &e), CLCONE_EINVAL);
        ck_assert_int_eq(failed, 2);
        ck_assert_msg(strstr(e.msg, "row 1"), "%s", e.msg);
    }
    for (int k = 0; k < K; ++k) clc_bproblem_free(&p[k]);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* A device batch with a problem for every compute unit (twice as many,
 * at least 4) runs blk_iterate, a work-group a problem from check to
 * check, where each problem alone runs three launches an iteration (on a
 * device of more than one unit): the same bits either way, in double and
 * float (loop index bit 0), checking every 3 iterations or every 250
 * (bit 1: spans of more than one launch, BDEV_GROUP_SPAN). */
START_TEST(batch_kernel_equals_launches)
{
    clcone_context *ctx = test_context(_i & 1 ? CLCONE_FLOAT : CLCONE_DOUBLE);
    int K = 2 * clcone_context_device(ctx)->compute_units, failed;
    clc_bproblem *p;
    const clc_bproblem **pp;
    double *alone, *batch, **fb;
    clcone_prob_result *ra, *rb;
    clcone_options o;
    clcone_error e;
    if (K < 4) K = 4;
    p = calloc((size_t)K, sizeof *p);
    pp = calloc((size_t)K, sizeof *pp);
    fb = calloc((size_t)K, sizeof *fb);
    ra = calloc((size_t)K, sizeof *ra);
    rb = calloc((size_t)K, sizeof *rb);
    alone = calloc((size_t)K * COUPLED_M, sizeof *alone);
    batch = calloc((size_t)K * COUPLED_M, sizeof *batch);
    ck_assert(p && pp && fb && ra && rb && alone && batch);
    clcone_options_default(&o);
    o.tol = _i & 1 ? 1e-5 : 1e-10;
    o.check_every = _i & 2 ? 250 : 3;
    for (int k = 0; k < K; ++k) {
        coupled(&p[k], 0.7 * k, 0.02 + 0.01 * (k % 5), 1 + 0.25 * k);
        pp[k] = &p[k];
        fb[k] = batch + k * COUPLED_M;
        ck_assert_msg(clc_solve_blocks(ctx, &p[k], &o, alone + k * COUPLED_M, &ra[k], &e) == CLCONE_OK, "%s", e.msg);
    }
    ck_assert_msg(clc_solve_blocks_batch(ctx, K, pp, &o, 1, fb, rb, &failed, &e) == CLCONE_OK, "%s", e.msg);
    for (int k = 0; k < K; ++k) {
        ck_assert_int_eq(rb[k].status, CLCONE_CONVERGED);
        ck_assert_int_eq(rb[k].iters, ra[k].iters);
        ck_assert_mem_eq(&rb[k].error, &ra[k].error, sizeof ra[k].error);
        ck_assert_mem_eq(batch + k * COUPLED_M, alone + k * COUPLED_M, sizeof *alone * COUPLED_M);
        clc_bproblem_free(&p[k]);
    }
    free(p);
    free(pp);
    free(fb);
    free(ra);
    free(rb);
    free(alone);
    free(batch);
    clcone_context_free(ctx);
}
END_TEST

/* The Lipschitz estimate is an upper bound of W's largest eigenvalue,
 * within the 5% it is raised by: on 20 pairs [2 -1; -1 2], whose
 * eigenvector of 1 is ones (a power iteration from ones stayed at 1.05,
 * a third of the step's bound 3), and on a random W = B'B + 0.1 I
 * against a long power iteration from a random start. */
START_TEST(lipschitz_bounds_the_top_eigenvalue)
{
    enum { P = 20, M = 2 * P, N = 30 };
    static double W[M * M], B[N * N], V[N * N];
    int kind[P], rows[P];
    double bound[M] = {0}, q[M] = {0}, x[N], y[N], lam = 0;
    clc_bproblem p;
    unsigned seed = 7;
    for (int b = 0; b < P; ++b) {
        kind[b] = BLK_BOX;
        rows[b] = 2;
        W[(2 * b) * M + 2 * b] = W[(2 * b + 1) * M + 2 * b + 1] = 2;
        W[(2 * b) * M + 2 * b + 1] = W[(2 * b + 1) * M + 2 * b] = -1;
        bound[2 * b] = bound[2 * b + 1] = 1;
    }
    make(&p, P, kind, rows, bound, W, q);
    ck_assert_double_ge(clc_bproblem_lipschitz(&p), 3 - 1e-12);
    ck_assert_double_le(clc_bproblem_lipschitz(&p), 3.15 + 1e-12);
    clc_bproblem_free(&p);
    for (int i = 0; i < N * N; ++i) {
        seed = seed * 1103515245u + 12345u;
        B[i] = (double)(seed >> 8) / 16777216.0 - 0.5;
    }
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            V[i * N + j] = i == j ? 0.1 : 0;
            for (int k = 0; k < N; ++k) V[i * N + j] += B[k * N + i] * B[k * N + j];
        }
    for (int i = 0; i < N; ++i) x[i] = sin(i + 1.0);
    for (int it = 0; it < 5000; ++it) {
        double n = 0;
        lam = 0;
        for (int i = 0; i < N; ++i) {
            y[i] = 0;
            for (int j = 0; j < N; ++j) y[i] += V[i * N + j] * x[j];
            n += y[i] * y[i];
            lam += x[i] * y[i];
        }
        for (int i = 0; i < N; ++i) x[i] = y[i] / sqrt(n);
    }
    for (int b = 0; b < 3; ++b) {
        kind[b] = BLK_FREE;
        rows[b] = N / 3; /* blocks of at most BLK_MAX_ROWS */
    }
    make(&p, 3, kind, rows, q, V, q);
    ck_assert_double_ge(clc_bproblem_lipschitz(&p), lam * (1 - 1e-9));
    ck_assert_double_le(clc_bproblem_lipschitz(&p), lam * 1.05 * (1 + 1e-9));
    clc_bproblem_free(&p);
}
END_TEST

/* The general-block solvers check at the first iteration, then every
 * check_every from the start (no window of 100 checked iterations), and
 * stop at a check; both backends alike. */
START_TEST(checks_every_k_from_the_start)
{
    clcone_context *ctx = _i ? test_context(CLCONE_DOUBLE) : NULL;
    clc_bproblem p;
    clcone_options o;
    clcone_history h = {0};
    clcone_prob_result r;
    clcone_error e;
    double f[COUPLED_M] = {0};
    coupled(&p, 2.0, 0.05, 3);
    clcone_options_default(&o);
    o.tol = 1e-10;
    o.check_every = 7;
    o.history = &h;
    ck_assert_msg(clc_solve_blocks(ctx, &p, &o, f, &r, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(r.status, CLCONE_CONVERGED);
    ck_assert_int_gt(r.iters, 14);
    ck_assert_int_eq(r.iters % 7, 0);
    ck_assert_int_eq(h.count, 1 + r.iters / 7);
    for (int i = 0; i < h.count; ++i) ck_assert_int_eq(h.points[i].iter, i ? 7 * i : 1);
    clcone_history_free(&h);
    clc_bproblem_free(&p);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* Bad problems are errors naming the row or block, never a solve. */
START_TEST(bad_problems_named)
{
    clc_bproblem p;
    const int kind[] = {BLK_BOX, BLK_CONE}, rows[] = {1, 3};
    const double W[16] = {2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, q[] = {1, 2, 3, 4}, bound[] = {1, 1, 0.5, 0.5};
    clcone_error e;
    clcone_options o;
    clcone_prob_result r;
    double f[4] = {0};
    clcone_options_default(&o);
    make(&p, 2, kind, rows, bound, W, q);
    p.q[2] = NAN;
    ck_assert_int_eq(clc_solve_blocks(NULL, &p, &o, f, &r, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 2 (block 1)") && strstr(e.msg, "q is nan"), "%s", e.msg);
    p.q[2] = 3;
    p.kind[1] = 7;
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "block 1 (row 1): kind 7"), "%s", e.msg);
    p.kind[1] = BLK_CONE;
    p.bound[0] = -1;
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 0 (block 0, box): bound -1"), "%s", e.msg);
    p.bound[0] = 1;
    p.bound[3] = 0;
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 3 (block 1, cone): friction 0"), "%s", e.msg);
    p.bound[3] = 0.5;
    p.val[p.val_off[1] + 1] = 0.25; /* (1, 2) without its transpose */
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "W (row 1, column 2)") && strstr(e.msg, "not symmetric"), "%s", e.msg);
    p.val[p.val_off[1] + 1] = 0;
    p.off[1] = 0; /* a block of 0 rows, then one of 4 (a cone needs 2 to 10) */
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "block 0 (row 0): 0 rows; a box block has 1 to 10"), "%s", e.msg);
    clc_bproblem_free(&p);
}
END_TEST

/* Values the scaled problem cannot hold, and an indefinite W, are
 * refused by the check, naming the row (the old check passed a friction
 * of 1e200, whose square then overflowed the scaling, "no positive
 * eigenvalue estimate (0)"; a subnormal W_ii of 1e-320, whose solve
 * diverged; and an indefinite W); a float batch's out-of-range value
 * names its problem and that problem's own row, not the batch's. */
START_TEST(scaling_and_definiteness_checked)
{
    clc_bproblem p, two, big;
    const int kind[] = {BLK_BOX, BLK_CONE}, rows[] = {1, 3}, free2[] = {BLK_FREE, BLK_FREE}, ones[] = {1, 1};
    const double W[16] = {2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, q[] = {1, 2, 3, 4}, bound[] = {1, 1, 0.5, 0.5};
    const double W2[4] = {1, 0.5, 0.5, 1}, q2[] = {1, -1}, b2[] = {0, 0};
    const clc_bproblem *batch[2];
    clcone_context *cf = test_context(CLCONE_FLOAT);
    clcone_options o;
    clcone_prob_result res[2];
    clcone_error e;
    double f0[2] = {0}, f1[2] = {0}, *f[2] = {f0, f1};
    int failed = -2;
    make(&p, 2, kind, rows, bound, W, q);
    p.bound[3] = 1e200;
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 3 (block 1, cone): friction 1e+200") && strstr(e.msg, "out of double's range"),
                  "%s", e.msg);
    p.bound[3] = 0.5;
    p.val[p.val_off[p.row_ptr[1]] + 4] = 1e-320; /* row 2's W_ii: subnormal */
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "row 2 (block 1): W_ii = ") && strstr(e.msg, "as a normal double"), "%s", e.msg);
    p.val[p.val_off[p.row_ptr[1]] + 4] = 1;
    p.val[p.val_off[p.row_ptr[1]] + 1] = p.val[p.val_off[p.row_ptr[1]] + 3] = 2; /* (1, 2) in the cone's block */
    ck_assert_int_eq(clc_bproblem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "block 1 (rows 1-3): its diagonal block of W is not positive semidefinite"), "%s",
                  e.msg);
    clc_bproblem_free(&p);
    /* two 1-row blocks coupled by more than their diagonals allow */
    make(&two, 2, free2, ones, b2, W2, q2);
    two.val[two.val_off[1]] = two.val[two.val_off[2]] = 1.5;
    ck_assert_int_eq(clc_bproblem_validate(&two, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "W (row 0, column 1) = 1.5 exceeds sqrt(W_ii W_jj) = 1"), "%s", e.msg);
    two.val[two.val_off[1]] = two.val[two.val_off[2]] = 0.5;
    /* a batch whose second problem's q is beyond float */
    make(&big, 2, free2, ones, b2, W2, q2);
    big.q[1] = 1e50;
    batch[0] = &two;
    batch[1] = &big;
    clcone_options_default(&o);
    ck_assert_int_eq(clc_solve_blocks_batch(cf, 2, batch, &o, 1, f, res, &failed, &e), CLCONE_EINVAL);
    ck_assert_int_eq(failed, 1);
    ck_assert_msg(strstr(e.msg, "scaled q row 1: 1e+50 is outside float range"), "%s", e.msg);
    ck_assert_int_eq(clc_solve_blocks_batch(cf, 2, batch, &o, 1, f, res, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "problem 1: scaled q row 1: ") == e.msg, "%s", e.msg);
    clc_bproblem_free(&two);
    clc_bproblem_free(&big);
    clcone_context_free(cf);
}
END_TEST

/* The text format: written and read back bit for bit; every malformed
 * input names its line. */
START_TEST(file_round_trip_and_errors)
{
    clc_bproblem p, r;
    const int kind[] = {BLK_FREE, BLK_BOX, BLK_CONE}, rows[] = {1, 1, 3};
    const double W[25] = {2, 0.1, 0, 0, 0.3, 0.1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0.3, 0, 0, 0, 1};
    const double q[] = {1.0 / 3, -2, 3e-300, 4, 5}, bound[] = {0, 0.7, 1, 0.9, 1.0 / 7};
    char path[64], *text;
    clcone_error e;
    size_t len;
    FILE *fp;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"clcone-blocks 2\n", ":1: expected the format version"},
        {"clcone-blocks 1\nblocks 1 rows 2\nbox 1 0.5\nq 1 2\nW 0\n", ":3: the 1 blocks hold 1 rows, not the 2"},
        {"clcone-blocks 1\nblocks 1 rows 1\nwedge 1\n", ":3: expected block 0's kind"},
        {"clcone-blocks 1\nblocks 1 rows 11\nfree 11\nq 1 2 3 4 5 6 7 8 9 10 11\n", ":3: expected block 0's rows"},
        {"clcone-blocks 1\nblocks 1 rows 1\nfree 1\nq 1\nW 2\n0 0 1\n0 0 2\n", ":7: W entry (0, 0) given again (first on line 6)"},
        {"clcone-blocks 1\nblocks 1 rows 1\nfree 1\nq 1\nW 1\n0 1 1\n", ":6: expected W entry 0's column"},
        {"clcone-blocks 1\nblocks 1 rows 1\nfree 1\nq nan\n", ":4: expected a finite real number for q[0]"},
        {"clcone-blocks 1\nblocks 1 rows 1\nfree 1\nq 1\nW 1\n0 0 -1\n", "row 0 (block 0): W_ii = -1"},
        {"clcone-blocks 1\nblocks 1 rows 2\ncone 2 1e-400\n", ":3: block 0 row 1's friction 1e-400 is below the "
                                                              "smallest normal double (2.22507e-308): it reads as 0"},
    };
    make(&p, 3, kind, rows, bound, W, q);
    snprintf(path, sizeof path, "%s", test_write_temp("", 0));
    ck_assert_msg(clc_write_blocks(path, &p, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clc_read_blocks(path, &r, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(r.nb, p.nb);
    ck_assert_int_eq(r.nnzb, p.nnzb);
    ck_assert_mem_eq(r.off, p.off, sizeof *p.off * 4);
    ck_assert_mem_eq(r.kind, p.kind, sizeof *p.kind * 3);
    ck_assert_mem_eq(r.col, p.col, sizeof *p.col * (size_t)p.nnzb);
    ck_assert_mem_eq(r.q, p.q, sizeof q);
    ck_assert_mem_eq(r.bound, p.bound, sizeof bound);
    ck_assert_mem_eq(r.val, p.val, sizeof *p.val * (size_t)p.val_off[p.nnzb]);
    clc_bproblem_free(&r);
    fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, 0, SEEK_END);
    len = (size_t)ftell(fp);
    fclose(fp);
    ck_assert_int_gt((int)len, 50);
    unlink(path);
    for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
        text = (char *)bad[k].text;
        ck_assert_int_ne(clc_parse_blocks("b.txt", text, strlen(text), &r, &e), CLCONE_OK);
        ck_assert_msg(strstr(e.msg, "b.txt") && strstr(e.msg, bad[k].want), "case %zu: %s", k, e.msg);
    }
    clc_bproblem_free(&p);
}
END_TEST

Suite *suite_blocks(void)
{
    Suite *s = suite_create("blocks");
    TCase *tc = tcase_create("blocks");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, free_block);
    tcase_add_test(tc, box_block);
    tcase_add_test(tc, nonneg_blocks);
    tcase_add_test(tc, cone_blocks);
    tcase_add_test(tc, coupled_kinds_agree);
    tcase_add_loop_test(tc, batch_equals_each_alone, 0, 3);
    tcase_add_loop_test(tc, batch_kernel_equals_launches, 0, 4);
    tcase_add_test(tc, lipschitz_bounds_the_top_eigenvalue);
    tcase_add_loop_test(tc, checks_every_k_from_the_start, 0, 2);
    tcase_add_test(tc, bad_problems_named);
    tcase_add_test(tc, scaling_and_definiteness_checked);
    tcase_add_test(tc, file_round_trip_and_errors);
    suite_add_tcase(s, tc);
    return s;
}
