/* Local-form problems and batches: allocation, construction, validation. */
#include "core/internal.h"
#include "core/analysis.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


clcone_status clcone_problem_alloc(clcone_problem *p, int n, int nnzb,
                                   clcone_error *err)
{
    CLCONE_REQUIRE(err, p);
    memset(p, 0, sizeof *p);
    if (n < 0 || nnzb < 0)
        return clc_fail(err, CLCONE_EINVAL, "negative size (n=%d, blocks=%d)", n, nnzb);
    p->n = n;
    p->nnzb = nnzb;
    p->nprob = 1;
    p->row_ptr = clc_calloc((size_t)n + 1, sizeof *p->row_ptr, err, "W row pointers");
    p->col = clc_calloc((size_t)nnzb, sizeof *p->col, err, "W block columns");
    p->blocks = clc_calloc((size_t)nnzb * 9, sizeof *p->blocks, err, "W blocks");
    p->q = clc_calloc((size_t)n * 3, sizeof *p->q, err, "q");
    p->mu = clc_calloc((size_t)n, sizeof *p->mu, err, "mu");
    p->prob_off = clc_calloc(2, sizeof *p->prob_off, err, "batch offsets");
    if (!p->row_ptr || !p->col || !p->blocks || !p->q || !p->mu || !p->prob_off) {
        clcone_problem_free(p);
        return CLCONE_ENOMEM;
    }
    p->prob_off[1] = n;
    return CLCONE_OK;
}

void clcone_problem_free(clcone_problem *p)
{
    if (!p) return;
    free(p->row_ptr);
    free(p->col);
    free(p->blocks);
    free(p->q);
    free(p->mu);
    free(p->prob_off);
    memset(p, 0, sizeof *p);
}

static int block_is_zero(const double *W, int n3, int bi, int bj)
{
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            if (W[(size_t)(3 * bi + a) * (size_t)n3 + (size_t)(3 * bj + b)] != 0.0) return 0;
    return 1;
}

clcone_status clcone_problem_from_dense(clcone_problem *p, int n,
                                        const double *W, const double *q,
                                        const double *mu, clcone_error *err)
{
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, W);
    CLCONE_REQUIRE(err, q);
    CLCONE_REQUIRE(err, mu);
    int n3 = 3 * n, nnzb = 0, k = 0;
    clcone_status s;
    if (n < 0) return clc_fail(err, CLCONE_EINVAL, "negative contact count %d", n);
    /* here, where the caller's arrays are named, not at the solve */
    for (size_t i = 0; i < (size_t)n3 * (size_t)n3; ++i)
        if (!isfinite(W[i]))
            return clc_fail(err, CLCONE_EINVAL, "W[%zu][%zu] is not finite (%g)", i / (size_t)n3, i % (size_t)n3,
                               W[i]);
    for (int i = 0; i < n3; ++i)
        if (!isfinite(q[i])) return clc_fail(err, CLCONE_EINVAL, "q[%d] (contact %d) is not finite (%g)", i, i / 3, q[i]);
    for (int i = 0; i < n; ++i)
        if (!isfinite(mu[i])) return clc_fail(err, CLCONE_EINVAL, "mu[%d] is not finite (%g)", i, mu[i]);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            if (i == j || !block_is_zero(W, n3, i, j)) ++nnzb;
    s = clcone_problem_alloc(p, n, nnzb, err);
    if (s) return s;
    for (int i = 0; i < n; ++i) {
        p->row_ptr[i] = k;
        for (int j = 0; j < n; ++j) {
            if (i != j && block_is_zero(W, n3, i, j)) continue;
            p->col[k] = j;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    p->blocks[9 * k + 3 * a + b] = W[(size_t)(3 * i + a) * (size_t)n3 + (size_t)(3 * j + b)];
            ++k;
        }
    }
    p->row_ptr[n] = k;
    memcpy(p->q, q, sizeof(double) * (size_t)n3);
    memcpy(p->mu, mu, sizeof(double) * (size_t)n);
    return CLCONE_OK;
}

clcone_status clcone_problem_validate(const clcone_problem *p, clcone_error *err)
{
    CLCONE_REQUIRE(err, p);
    clcone_status st;
    if (p->n < 0 || p->nnzb < 0)
        return clc_fail(err, CLCONE_EINVAL, "negative size (n=%d, blocks=%d)", p->n, p->nnzb);
    if (!p->row_ptr || (p->n > 0 && (!p->q || !p->mu)) || (p->nnzb > 0 && (!p->col || !p->blocks)))
        return clc_fail(err, CLCONE_EINVAL, "problem arrays missing");
    /* kernels index blocks as 9 * k and velocities as 3 * c in int */
    if (p->nnzb > INT_MAX / 9 || p->n > INT_MAX / 9)
        return clc_fail(err, CLCONE_EINVAL, "problem too large: %d contacts, %d blocks (at most %d)", p->n,
                           p->nnzb, INT_MAX / 9);
    if (p->nprob < 1 || !p->prob_off)
        return clc_fail(err, CLCONE_EINVAL, "batch holds no problem (nprob=%d)", p->nprob);
    if (p->prob_off[0] != 0 || p->prob_off[p->nprob] != p->n)
        return clc_fail(err, CLCONE_EINVAL, "batch offsets must run from 0 to n=%d", p->n);
    for (int k = 0; k < p->nprob; ++k)
        if (p->prob_off[k + 1] < p->prob_off[k])
            return clc_fail(err, CLCONE_EINVAL, "batch offsets decrease at problem %d", k);
    if (p->row_ptr[0] != 0 || p->row_ptr[p->n] != p->nnzb)
        return clc_fail(err, CLCONE_EINVAL, "W row pointers must run from 0 to %d blocks", p->nnzb);
    for (int i = 0, prob = 0; i < p->n; ++i) {
        int has_diag = 0;
        double scale = 0.0;
        while (i >= p->prob_off[prob + 1]) ++prob;
        if (p->row_ptr[i + 1] < p->row_ptr[i] || p->row_ptr[i + 1] > p->nnzb)
            return clc_fail(err, CLCONE_EINVAL, "W block row %d: row pointers decrease or pass %d blocks", i,
                               p->nnzb);
        for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
            int j = p->col[k];
            if (j < 0 || j >= p->n)
                return clc_fail(err, CLCONE_EINVAL, "W block row %d: column %d out of range [0,%d)", i, j, p->n);
            if (k > p->row_ptr[i] && j <= p->col[k - 1])
                return clc_fail(err, CLCONE_EINVAL, "W block row %d: columns not strictly increasing", i);
            if (j < p->prob_off[prob] || j >= p->prob_off[prob + 1])
                return clc_fail(err, CLCONE_EINVAL,
                                   "W block (%d,%d) couples problem %d of the batch to another", i, j, prob);
            for (int a = 0; a < 9; ++a) {
                double v = p->blocks[9 * k + a];
                if (!isfinite(v))
                    return clc_fail(err, CLCONE_EINVAL, "W[%d][%d] is not finite (%g)",
                                       3 * i + a / 3, 3 * j + a % 3, v);
            }
            if (j == i) {
                const double *B = p->blocks + 9 * k;
                double lo, hi;
                has_diag = 1;
                for (int a = 0; a < 9; ++a) scale = fmax(scale, fabs(B[a]));
                if (!(B[0] > 0.0))
                    return clc_fail(err, CLCONE_EINVAL,
                                       "contact %d: normal entry W[%d][%d] = %g must be > 0", i, 3 * i, 3 * i, B[0]);
                clc_sym3_eig_range(B, &lo, &hi);
                (void)hi;
                if (lo < -1e-6 * scale)
                    return clc_fail(err, CLCONE_EINVAL,
                                       "contact %d: diagonal block of W is not positive semidefinite "
                                       "(smallest eigenvalue %g)", i, lo);
            }
        }
        if (!has_diag)
            return clc_fail(err, CLCONE_EINVAL, "contact %d: diagonal block of W missing", i);
    }
    for (int i = 0; i < 3 * p->n; ++i)
        if (!isfinite(p->q[i]))
            return clc_fail(err, CLCONE_EINVAL, "q[%d] (contact %d) is not finite (%g)", i, i / 3, p->q[i]);
    if ((st = clc_check_squares(p->q, 3 * (size_t)p->n, DBL_MAX, "q", err))) return st;
    for (int c = 0; c < p->n; ++c)
        if (!isfinite(p->mu[c]) || p->mu[c] < 0.0)
            return clc_fail(err, CLCONE_EINVAL, "contact %d: mu = %g must be finite and >= 0", c, p->mu[c]);
    return CLCONE_OK;
}

clcone_status clcone_batch_concat(const clcone_problem *const *parts, int k,
                                  clcone_problem *out, clcone_error *err)
{
    CLCONE_REQUIRE(err, parts);
    CLCONE_REQUIRE(err, out);
    int n = 0, nnzb = 0, nprob = 0, c = 0, b = 0, pi = 0;
    clcone_status s;
    if (k < 1) return clc_fail(err, CLCONE_EINVAL, "batch of %d problems", k);
    for (int i = 0; i < k; ++i) {
        if (!parts[i]) return clc_fail(err, CLCONE_EINVAL, "problem %d of the batch is NULL", i);
        n += parts[i]->n;
        nnzb += parts[i]->nnzb;
        nprob += parts[i]->nprob;
    }
    s = clcone_problem_alloc(out, n, nnzb, err);
    if (s) return s;
    free(out->prob_off);
    out->prob_off = clc_calloc((size_t)nprob + 1, sizeof *out->prob_off, err, "batch offsets");
    if (!out->prob_off) {
        clcone_problem_free(out);
        return CLCONE_ENOMEM;
    }
    out->nprob = nprob;
    for (int i = 0; i < k; ++i) {
        const clcone_problem *q = parts[i];
        for (int r = 0; r < q->n; ++r) out->row_ptr[c + r] = b + q->row_ptr[r];
        for (int j = 0; j < q->nnzb; ++j) out->col[b + j] = c + q->col[j];
        memcpy(out->blocks + 9 * (size_t)b, q->blocks, sizeof(double) * 9 * (size_t)q->nnzb);
        memcpy(out->q + 3 * (size_t)c, q->q, sizeof(double) * 3 * (size_t)q->n);
        memcpy(out->mu + c, q->mu, sizeof(double) * (size_t)q->n);
        for (int j = 0; j < q->nprob; ++j) out->prob_off[pi++] = c + q->prob_off[j];
        c += q->n;
        b += q->nnzb;
    }
    out->row_ptr[n] = nnzb;
    out->prob_off[nprob] = n;
    return CLCONE_OK;
}

clcone_status clcone_batch_extract(const clcone_problem *batch, int index,
                                   clcone_problem *out, clcone_error *err)
{
    CLCONE_REQUIRE(err, batch);
    CLCONE_REQUIRE(err, out);
    int c0, c1, b0, b1;
    clcone_status s;
    if (index < 0 || index >= batch->nprob)
        return clc_fail(err, CLCONE_EINVAL, "problem %d not in batch of %d", index, batch->nprob);
    c0 = batch->prob_off[index];
    c1 = batch->prob_off[index + 1];
    b0 = batch->row_ptr[c0];
    b1 = batch->row_ptr[c1];
    s = clcone_problem_alloc(out, c1 - c0, b1 - b0, err);
    if (s) return s;
    for (int r = c0; r <= c1; ++r) out->row_ptr[r - c0] = batch->row_ptr[r] - b0;
    for (int j = b0; j < b1; ++j) out->col[j - b0] = batch->col[j] - c0;
    memcpy(out->blocks, batch->blocks + 9 * (size_t)b0, sizeof(double) * 9 * (size_t)(b1 - b0));
    memcpy(out->q, batch->q + 3 * (size_t)c0, sizeof(double) * 3 * (size_t)(c1 - c0));
    memcpy(out->mu, batch->mu + c0, sizeof(double) * (size_t)(c1 - c0));
    return CLCONE_OK;
}

void clcone_problem_velocity(const clcone_problem *p, const double *r, double *u)
{
    if (!p || !r || !u) return;
    for (int c = 0; c < p->n; ++c) clc_contact_velocity(p, r, c, u + 3 * c);
}
