/* Siconos .dat problem files (docs/formats.md section 3): the reader and the
 * exact writer. */
#include "io/io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* .dat parsing                                                        */
/* ------------------------------------------------------------------ */

typedef struct entries {
    size_t count;
    int *row, *col;
    double *val;
} entries;

static clcone_status entries_alloc(entries *e, uint64_t cap, clcone_error *err)
{
    memset(e, 0, sizeof *e);
    if (cap > SIZE_MAX)
        return clc_fail(err, CLCONE_ENOMEM, "W: %" PRIu64 " entries do not fit in memory",
                           cap);
    e->row = clc_calloc((size_t)cap, sizeof *e->row, err, "W entries");
    e->col = e->row ? clc_calloc((size_t)cap, sizeof *e->col, err, "W entries") : NULL;
    e->val = e->col ? clc_calloc((size_t)cap, sizeof *e->val, err, "W entries") : NULL;
    return e->val ? CLCONE_OK : CLCONE_ENOMEM;
}

static void entries_free(entries *e)
{
    free(e->row);
    free(e->col);
    free(e->val);
    memset(e, 0, sizeof *e);
}

/* Zeros are skipped to keep the list short, except -0.0, which is kept for
 * bit-exact round trips. */
static void entries_push(entries *e, int r, int c, double v)
{
    if (v == 0.0 && !signbit(v)) return;
    e->row[e->count] = r;
    e->col[e->count] = c;
    e->val[e->count] = v;
    e->count++;
}

static clcone_status read_dense(clc_tok *t, int N, entries *e,
                                clcone_error *err)
{
    uint64_t total = (uint64_t)N * (uint64_t)N, k;
    int v;
    double x;
    clcone_status s;
    if ((s = clc_tok_int(t, N, N, &v, err, "the repeated number of rows of W")) ||
        (s = clc_tok_int(t, N, N, &v, err, "the repeated number of columns of W")) ||
        (s = clc_tok_need(t, total + (uint64_t)N + (uint64_t)(N / 3), err,
                             "a dense %d x %d W, q and mu", N, N)) ||
        (s = entries_alloc(e, total, err)))
        return s;
    for (k = 0; k < total; ++k) {
        int i = (int)(k % (uint64_t)N), j = (int)(k / (uint64_t)N);
        if ((s = clc_tok_real(t, &x, err, "W[%d][%d] (dense, column-major)", i, j)))
            return s;
        entries_push(e, i, j, x);
    }
    return CLCONE_OK;
}

/* Cumulative block sizes (rowEnd or colEnd): strictly increasing, ending
 * exactly at `size`. ends[0] = 0 and ends[i + 1] is the file's i-th value. */
static clcone_status read_ends(clc_tok *t, int count, int size,
                               const char *name, int **ends, clcone_error *err)
{
    int i;
    clcone_status s;
    *ends = clc_calloc((size_t)count + 1, sizeof **ends, err, name);
    if (!*ends) return CLCONE_ENOMEM;
    for (i = 0; i < count; ++i) {
        long lo = i == count - 1 ? size : (*ends)[i] + 1;
        long hi = size - (count - 1 - i);
        if ((s = clc_tok_int(t, lo, hi, &(*ends)[i + 1], err,
                                "%s[%d] (cumulative block sizes, increasing to %d)",
                                name, i, size)))
            return s;
    }
    return CLCONE_OK;
}

static clcone_status read_sbm(clc_tok *t, int N, entries *e,
                              clcone_error *err)
{
    int nblocks, nb0, nb1, filled1, v, i, k;
    int *re = NULL, *ce = NULL, *rp = NULL, *bc = NULL;
    uint64_t values = 0;
    clcone_status s;

    if ((s = clc_tok_int(t, 0, INT_MAX, &nblocks, err,
                            "the number of stored blocks nbblocks")))
        return s;
    /* An empty SBM is a zero matrix with nothing more to read. */
    if (nblocks == 0) return entries_alloc(e, 0, err);
    if ((s = clc_tok_need(t, 3 * (uint64_t)nblocks, err, "nbblocks = %d", nblocks)) ||
        (s = clc_tok_int(t, 1, N, &nb0, err, "the number of block rows")) ||
        (s = clc_tok_int(t, 1, N, &nb1, err, "the number of block columns")) ||
        (s = clc_tok_need(t, (uint64_t)nb0 + (uint64_t)nb1 + 3 * (uint64_t)nblocks,
                             err, "%d x %d blocks", nb0, nb1)) ||
        (s = read_ends(t, nb0, N, "rowEnd", &re, err)) ||
        (s = read_ends(t, nb1, N, "colEnd", &ce, err)) ||
        (s = clc_tok_int(t, 2, (long)nb0 + 1, &filled1, err,
                            "filled1 (the length of the block row pointer)")) ||
        (s = clc_tok_int(t, nblocks, nblocks, &v, err,
                            "filled2 (the number of blocks, as nbblocks)")))
        goto done;
    rp = clc_calloc((size_t)filled1, sizeof *rp, err, "rowPtr");
    bc = clc_calloc((size_t)nblocks, sizeof *bc, err, "blockCol");
    if (!rp || !bc) {
        s = CLCONE_ENOMEM;
        goto done;
    }
    for (i = 0; i < filled1; ++i) {
        long lo = i == 0 ? 0 : i == filled1 - 1 ? nblocks : rp[i - 1];
        long hi = i == 0 ? 0 : nblocks;
        if ((s = clc_tok_int(t, lo, hi, &rp[i], err,
                                "rowPtr[%d] (non-decreasing from 0 to nbblocks = %d)",
                                i, nblocks)))
            goto done;
    }
    for (i = 0, k = 0; k < nblocks; ++k) {
        while (k >= rp[i + 1]) ++i;
        if ((s = clc_tok_int(t, 0, nb1 - 1, &bc[k], err,
                                "blockCol[%d] (the block column of a block in block row %d)",
                                k, i)))
            goto done;
        /* uBLAS compressed_matrix order; a repeated block would be
         * ambiguous. */
        if (k > rp[i] && bc[k] <= bc[k - 1]) {
            s = clc_tok_fail(t, err,
                                "blockCol[%d] = %d does not increase within block row %d "
                                "(previous block column %d)", k, bc[k], i, bc[k - 1]);
            goto done;
        }
        values += (uint64_t)(re[i + 1] - re[i]) * (uint64_t)(ce[bc[k] + 1] - ce[bc[k]]);
    }
    if ((s = clc_tok_need(t, values + (uint64_t)nblocks + (uint64_t)N, err,
                             "%d blocks of W, q and mu", nblocks)) ||
        (s = entries_alloc(e, values, err)))
        goto done;
    for (i = 0; i < filled1 - 1; ++i) {
        int64_t nr = re[i + 1] - re[i], a;
        for (k = rp[i]; k < rp[i + 1]; ++k) {
            int64_t nc = ce[bc[k] + 1] - ce[bc[k]];
            double x;
            if ((s = clc_tok_int(t, k, k, &v, err, "the block number")))
                goto done;
            for (a = 0; a < nr * nc; ++a) {
                int r = re[i] + (int)(a % nr), c = ce[bc[k]] + (int)(a / nr);
                if ((s = clc_tok_real(t, &x, err,
                                         "W[%d][%d] (value %" PRId64 " of block %d, column-major)",
                                         r, c, a, k)))
                    goto done;
                entries_push(e, r, c, x);
            }
        }
    }
done:
    free(re);
    free(ce);
    free(rp);
    free(bc);
    return s;
}

static clcone_status read_vectors(clc_tok *t, clcone_problem *p,
                                  clcone_error *err)
{
    clc_tok peek;
    int i, flag;
    clcone_status s;
    for (i = 0; i < 3 * p->n; ++i)
        if ((s = clc_tok_real(t, &p->q[i], err, "q[%d]", i))) return s;
    for (i = 0; i < p->n; ++i) {
        if ((s = clc_tok_real(t, &p->mu[i], err, "mu[%d]", i))) return s;
        if (p->mu[i] < 0)
            return clc_tok_reject(t, err, "a friction coefficient mu[%d] >= 0", i);
    }
    /* One trailing integer is the old isComplete flag; more means a global
     * problem or a broken file (docs/formats.md 3.2). */
    peek = *t;
    if (!clc_tok_next(&peek)) return CLCONE_OK;
    if ((s = clc_tok_int(t, INT_MIN, INT_MAX, &flag, err,
                            "the optional trailing flag after mu")))
        return s;
    if (clc_tok_next(t))
        return clc_tok_reject(t, err,
                                 "the end of the file after mu and one flag (more "
                                 "trailing data: a global problem or a broken file?)");
    return CLCONE_OK;
}

clcone_status clc_parse_dat(const char *name, const char *buf, size_t len,
                               clcone_problem *p, clcone_error *err)
{
    clc_tok t;
    entries e;
    int d, n, storage, N, v;
    clcone_status s;

    memset(p, 0, sizeof *p);
    memset(&e, 0, sizeof e);
    clc_tok_init(&t, name, buf, len, 0);
    if ((s = clc_tok_int(&t, 3, 3, &d, err, "the local dimension d")) ||
        (s = clc_tok_int(&t, 1, INT_MAX / 3, &n, err, "the number of contacts n")) ||
        (s = clc_tok_need(&t, 4 * (uint64_t)n, err, "n = %d contacts", n)))
        return s;
    N = 3 * n;
    if ((s = clc_tok_int(&t, 0, 1, &storage, err,
                            "the storage type of W (0 dense, 1 sparse block; 2, "
                            "CSparse, is not supported for 3D problems)")) ||
        (s = clc_tok_int(&t, N, N, &v, err, "the number of rows of W (3n, n = %d)", n)) ||
        (s = clc_tok_int(&t, N, N, &v, err,
                            "the number of columns of W (W is square, 3n x 3n, n = %d)", n)))
        return s;
    s = storage == 0 ? read_dense(&t, N, &e, err) : read_sbm(&t, N, &e, err);
    if (s == CLCONE_OK) s = clc_problem_from_entries(p, n, e.count, e.row, e.col, e.val, err);
    entries_free(&e);
    if (s == CLCONE_OK) s = read_vectors(&t, p, err);
    if (s != CLCONE_OK) clcone_problem_free(p);
    return s;
}

static int write_dat(void *file, const void *ctx)
{
    FILE *f = file;
    const clcone_problem *p = ctx;
    int n = p->n, i, k, a, pass;
    fprintf(f, "3\n%d\n1\n%d\n%d\n%d\n%d\n%d\n", n, 3 * n, 3 * n, p->nnzb, n, n);
    for (pass = 0; pass < 2; ++pass) {          /* rowEnd, then colEnd */
        for (i = 0; i < n; ++i) fprintf(f, "%d ", 3 * (i + 1));
        fputc('\n', f);
    }
    fprintf(f, "%d\n%d\n", n + 1, p->nnzb);
    for (i = 0; i <= n; ++i) fprintf(f, "%d ", p->row_ptr[i]);
    fputc('\n', f);
    for (k = 0; k < p->nnzb; ++k) fprintf(f, "%d ", p->col[k]);
    fputc('\n', f);
    for (k = 0; k < p->nnzb; ++k) {
        const double *b = p->blocks + 9 * k;
        fprintf(f, "%d\n", k);
        for (a = 0; a < 9; ++a) fprintf(f, "%.17g\n", b[(a % 3) * 3 + a / 3]);
    }
    for (i = 0; i < n; ++i)
        fprintf(f, "%.17g %.17g %.17g\n", p->q[3 * i], p->q[3 * i + 1], p->q[3 * i + 2]);
    for (i = 0; i < n; ++i) fprintf(f, "%.17g\n", p->mu[i]);
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_write_problem_dat(const char *path,
                                       const clcone_problem *p,
                                       clcone_error *err)
{
    clcone_status s;
    if (!path || !p)
        return clc_fail(err, CLCONE_EINVAL, "clcone_write_problem_dat: NULL %s",
                           path ? "problem" : "path");
    /* The file must read back, and the reader validates. */
    s = clcone_problem_validate(p, err);
    if (s != CLCONE_OK) {
        clc_error_prefix(err, "%s: refusing to write an invalid problem", path);
        return s;
    }
    if (p->nprob != 1)
        return clc_fail(err, CLCONE_EINVAL,
                           "%s: a batch of %d problems has no .dat form; write each "
                           "problem (clcone_batch_extract) to its own file",
                           path, p->nprob);
    return clc_write_atomic(path, write_dat, p, err);
}
