/* Siconos .dat problem files (docs/formats.md section 3), the shared tokenizer
 * and entry-to-block builder, and the clcone_read_problem dispatcher. */
#define _POSIX_C_SOURCE 200809L
#include "io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Tokenizer                                                           */
/* ------------------------------------------------------------------ */

/* Not isspace(): the accepted separators must not depend on the locale. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

void clcone_tok_init(clcone_tok *t, const char *name, const char *buf,
                     size_t len, int comments)
{
    t->name = name;
    t->cur = buf;
    t->end = buf + len;
    t->line = 1;
    t->comments = comments;
    t->tok = NULL;
    t->len = 0;
    t->tok_line = 1;
    t->ntok = 0;
}

int clcone_tok_next(clcone_tok *t)
{
    const char *s = t->cur;
    for (;;) {
        while (s < t->end && is_space(*s)) {
            if (*s == '\n') t->line++;
            ++s;
        }
        if (!(t->comments && s < t->end && *s == '#')) break;
        while (s < t->end && *s != '\n') ++s;
    }
    t->tok_line = t->line;
    if (s == t->end) {
        t->cur = s;
        t->tok = NULL;
        t->len = 0;
        return 0;
    }
    t->tok = s;
    while (s < t->end && !is_space(*s) && !(t->comments && *s == '#')) ++s;
    t->len = (size_t)(s - t->tok);
    t->cur = s;
    t->ntok++;
    return 1;
}

/* The last token, shortened and with unprintable bytes escaped, so that a
 * binary file yields a readable message. */
static void quote_token(const clcone_tok *t, char *out, size_t cap)
{
    const size_t shown = 40;
    size_t i, o = 0;
    for (i = 0; i < t->len && i < shown; ++i) {
        unsigned char c = (unsigned char)t->tok[i];
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
    if (i < t->len) snprintf(out + o, cap - o, "...");
}

clcone_status clcone_tok_reject(const clcone_tok *t, clcone_error *err,
                                const char *fmt, ...)
{
    char what[512], found[4 * 40 + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!t->tok)
        return clcone_fail(err, CLCONE_EFORMAT, "%s:%d: %s: expected %s",
                           t->name, t->line,
                           t->ntok ? "unexpected end of file" : "empty file",
                           what);
    quote_token(t, found, sizeof found);
    return clcone_fail(err, CLCONE_EFORMAT, "%s:%d: expected %s, found '%s'",
                       t->name, t->tok_line, what, found);
}

clcone_status clcone_tok_fail(const clcone_tok *t, clcone_error *err,
                              const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return clcone_fail(err, CLCONE_EFORMAT, "%s:%d: %s", t->name,
                       t->tok ? t->tok_line : t->line, msg);
}

/* Copies the last token into buf as a C string; 0 when it does not fit
 * (no valid number is that long) or holds a NUL byte, where strtod would
 * stop and silently drop the rest ("15\0GARBAGE" is not 15). */
static int token_string(const clcone_tok *t, char *buf, size_t cap)
{
    if (!t->tok || t->len >= cap || memchr(t->tok, 0, t->len)) return 0;
    memcpy(buf, t->tok, t->len);
    buf[t->len] = '\0';
    return 1;
}

clcone_status clcone_tok_int(clcone_tok *t, long lo, long hi, int *v,
                             clcone_error *err, const char *fmt, ...)
{
    char buf[32], what[400];
    char *e;
    long x;
    int parsed = 0;
    va_list ap;
    if (clcone_tok_next(t) && token_string(t, buf, sizeof buf)) {
        errno = 0;
        x = strtol(buf, &e, 10);
        parsed = e != buf && *e == '\0' && errno == 0;
        if (parsed && x >= lo && x <= hi) {
            *v = (int)x;
            return CLCONE_OK;
        }
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!parsed) return clcone_tok_reject(t, err, "an integer for %s", what);
    if (lo == hi) return clcone_tok_reject(t, err, "%s = %ld", what, lo);
    if (hi >= INT_MAX) return clcone_tok_reject(t, err, "%s >= %ld", what, lo);
    return clcone_tok_reject(t, err, "%s in [%ld, %ld]", what, lo, hi);
}

clcone_status clcone_tok_real(clcone_tok *t, double *v, clcone_error *err,
                              const char *fmt, ...)
{
    char buf[512], what[400];
    char *e;
    double x;
    va_list ap;
    if (clcone_tok_next(t) && token_string(t, buf, sizeof buf)) {
        x = strtod(buf, &e);
        /* Overflow gives HUGE_VAL and is caught by isfinite; underflow to
         * a subnormal or zero is the closest double and is accepted. */
        if (e != buf && *e == '\0' && isfinite(x)) {
            *v = x;
            return CLCONE_OK;
        }
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return clcone_tok_reject(t, err, "a finite real number for %s", what);
}

clcone_status clcone_tok_need(const clcone_tok *t, uint64_t count,
                              clcone_error *err, const char *fmt, ...)
{
    uint64_t bytes = (uint64_t)(t->end - t->cur);
    uint64_t room = (bytes + 1) / 2;
    char what[400];
    va_list ap;
    if (count <= room) return CLCONE_OK;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return clcone_tok_fail(t, err,
                           "%s needs %" PRIu64 " more numbers, but the remaining "
                           "%" PRIu64 " bytes hold at most %" PRIu64
                           " (truncated file or wrong size)",
                           what, count, bytes, room);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

clcone_status clcone_load_file(const char *path, char **out, size_t *len,
                               clcone_error *err)
{
    size_t cap = 1 << 16, n = 0;
    char *buf, *bigger;
    FILE *f = fopen(path, "rb");
    int failed, saved;
    *out = NULL;
    *len = 0;
    if (!f)
        return clcone_fail(err, CLCONE_EIO, "%s: cannot open: %s", path,
                           strerror(errno));
    buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return clcone_fail(err, CLCONE_ENOMEM, "%s: out of memory", path);
    }
    errno = 0;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (n < cap - 1) break;
        if (cap > SIZE_MAX / 2 || !(bigger = realloc(buf, cap * 2))) {
            free(buf);
            fclose(f);
            return clcone_fail(err, CLCONE_ENOMEM,
                               "%s: out of memory reading %zu bytes", path, n);
        }
        buf = bigger;
        cap *= 2;
    }
    failed = ferror(f);
    saved = errno ? errno : EIO;
    fclose(f);
    if (failed) {
        free(buf);
        return clcone_fail(err, CLCONE_EIO, "%s: read error: %s", path,
                           strerror(saved));
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return CLCONE_OK;
}

int clcone_buf_is_hdf5(const char *buf, size_t len)
{
    static const char sig[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    for (size_t off = 0; len >= 8 && off <= len - 8; off = off ? 2 * off : 512)
        if (memcmp(buf + off, sig, 8) == 0) return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Scalar entries -> block CSR                                         */
/* ------------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int block_is_zero(const double *b)
{
    int a;
    for (a = 0; a < 9; ++a)
        if (b[a] != 0.0) return 0;
    return 1;
}

clcone_status clcone_problem_from_entries(clcone_problem *p, int n,
                                          size_t count, const int *row,
                                          const int *col, const double *val,
                                          clcone_error *err)
{
    size_t *start, *order = NULL, maxrow = 0, k, nb = 0;
    int *slot = NULL, *cols = NULL, pass, bi, j;
    double *acc = NULL;
    unsigned short *touched = NULL;
    clcone_status s = CLCONE_OK;

    memset(p, 0, sizeof *p);
    start = clcone_calloc((size_t)n + 2, sizeof *start, err, "W row index");
    if (!start) return CLCONE_ENOMEM;
    /* Counting sort of the entries by block row: start[bi] .. start[bi+1]
     * delimit row bi in `order` once filled. */
    for (k = 0; k < count; ++k) start[row[k] / 3 + 2]++;
    for (bi = 2; bi < n + 2; ++bi) start[bi] += start[bi - 1];
    order = clcone_calloc(count, sizeof *order, err, "W entry order");
    slot = clcone_calloc((size_t)n, sizeof *slot, err, "W block slots");
    if (!order || !slot) {
        s = CLCONE_ENOMEM;
        goto done;
    }
    for (k = 0; k < count; ++k) order[start[row[k] / 3 + 1]++] = k;
    for (bi = 0; bi < n; ++bi) {
        if (start[bi + 1] - start[bi] > maxrow) maxrow = start[bi + 1] - start[bi];
        slot[bi] = -1;
    }
    /* A row has at most one block per entry, plus its diagonal block. */
    cols = clcone_calloc(maxrow + 1, sizeof *cols, err, "W row blocks");
    acc = clcone_calloc(maxrow + 1, 9 * sizeof *acc, err, "W row blocks");
    touched = clcone_calloc(maxrow + 1, sizeof *touched, err, "W row blocks");
    if (!cols || !acc || !touched) {
        s = CLCONE_ENOMEM;
        goto done;
    }

    /* Pass 0 counts the kept blocks so that p can be allocated exactly;
     * pass 1 fills it. */
    for (pass = 0; pass < 2; ++pass) {
        nb = 0;
        for (bi = 0; bi < n; ++bi) {
            int m = 1;
            slot[bi] = 0;
            cols[0] = bi;
            touched[0] = 0;
            memset(acc, 0, 9 * sizeof *acc);
            for (k = start[bi]; k < start[bi + 1]; ++k) {
                size_t e = order[k];
                int bj = col[e] / 3, a = (row[e] % 3) * 3 + col[e] % 3;
                int sl = slot[bj];
                if (sl < 0) {
                    sl = slot[bj] = m;
                    cols[m] = bj;
                    touched[m] = 0;
                    memset(acc + 9 * m, 0, 9 * sizeof *acc);
                    ++m;
                }
                /* The first value is assigned rather than added to 0.0 so
                 * that a stored -0.0 survives and write/read round trips
                 * stay bit-exact. */
                if (touched[sl] & (1u << a)) {
                    acc[9 * sl + a] += val[e];
                } else {
                    acc[9 * sl + a] = val[e];
                    touched[sl] = (unsigned short)(touched[sl] | (1u << a));
                }
            }
            qsort(cols, (size_t)m, sizeof *cols, cmp_int);
            for (j = 0; j < m; ++j) {
                int bj = cols[j], sl = slot[bj];
                slot[bj] = -1;
                if (bj != bi && block_is_zero(acc + 9 * sl)) continue;
                if (pass == 1) {
                    p->col[nb] = bj;
                    memcpy(p->blocks + 9 * nb, acc + 9 * sl, 9 * sizeof *acc);
                }
                ++nb;
            }
            if (pass == 1) p->row_ptr[bi + 1] = (int)nb;
        }
        if (pass == 0) {
            if (nb > INT_MAX) {
                s = clcone_fail(err, CLCONE_EFORMAT,
                                "W has %zu non-zero 3x3 blocks, more than supported",
                                nb);
                goto done;
            }
            s = clcone_problem_alloc(p, n, (int)nb, err);
            if (s != CLCONE_OK) goto done;
        }
    }
done:
    free(start);
    free(order);
    free(slot);
    free(cols);
    free(acc);
    free(touched);
    return s;
}

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
        return clcone_fail(err, CLCONE_ENOMEM, "W: %" PRIu64 " entries do not fit in memory",
                           cap);
    e->row = clcone_calloc((size_t)cap, sizeof *e->row, err, "W entries");
    e->col = e->row ? clcone_calloc((size_t)cap, sizeof *e->col, err, "W entries") : NULL;
    e->val = e->col ? clcone_calloc((size_t)cap, sizeof *e->val, err, "W entries") : NULL;
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

static clcone_status read_dense(clcone_tok *t, int N, entries *e,
                                clcone_error *err)
{
    uint64_t total = (uint64_t)N * (uint64_t)N, k;
    int v;
    double x;
    clcone_status s;
    if ((s = clcone_tok_int(t, N, N, &v, err, "the repeated number of rows of W")) ||
        (s = clcone_tok_int(t, N, N, &v, err, "the repeated number of columns of W")) ||
        (s = clcone_tok_need(t, total + (uint64_t)N + (uint64_t)(N / 3), err,
                             "a dense %d x %d W, q and mu", N, N)) ||
        (s = entries_alloc(e, total, err)))
        return s;
    for (k = 0; k < total; ++k) {
        int i = (int)(k % (uint64_t)N), j = (int)(k / (uint64_t)N);
        if ((s = clcone_tok_real(t, &x, err, "W[%d][%d] (dense, column-major)", i, j)))
            return s;
        entries_push(e, i, j, x);
    }
    return CLCONE_OK;
}

/* Cumulative block sizes (rowEnd or colEnd): strictly increasing, ending
 * exactly at `size`. ends[0] = 0 and ends[i + 1] is the file's i-th value. */
static clcone_status read_ends(clcone_tok *t, int count, int size,
                               const char *name, int **ends, clcone_error *err)
{
    int i;
    clcone_status s;
    *ends = clcone_calloc((size_t)count + 1, sizeof **ends, err, name);
    if (!*ends) return CLCONE_ENOMEM;
    for (i = 0; i < count; ++i) {
        long lo = i == count - 1 ? size : (*ends)[i] + 1;
        long hi = size - (count - 1 - i);
        if ((s = clcone_tok_int(t, lo, hi, &(*ends)[i + 1], err,
                                "%s[%d] (cumulative block sizes, increasing to %d)",
                                name, i, size)))
            return s;
    }
    return CLCONE_OK;
}

static clcone_status read_sbm(clcone_tok *t, int N, entries *e,
                              clcone_error *err)
{
    int nblocks, nb0, nb1, filled1, v, i, k;
    int *re = NULL, *ce = NULL, *rp = NULL, *bc = NULL;
    uint64_t values = 0;
    clcone_status s;

    if ((s = clcone_tok_int(t, 0, INT_MAX, &nblocks, err,
                            "the number of stored blocks nbblocks")))
        return s;
    /* An empty SBM is a zero matrix with nothing more to read. */
    if (nblocks == 0) return entries_alloc(e, 0, err);
    if ((s = clcone_tok_need(t, 3 * (uint64_t)nblocks, err, "nbblocks = %d", nblocks)) ||
        (s = clcone_tok_int(t, 1, N, &nb0, err, "the number of block rows")) ||
        (s = clcone_tok_int(t, 1, N, &nb1, err, "the number of block columns")) ||
        (s = clcone_tok_need(t, (uint64_t)nb0 + (uint64_t)nb1 + 3 * (uint64_t)nblocks,
                             err, "%d x %d blocks", nb0, nb1)) ||
        (s = read_ends(t, nb0, N, "rowEnd", &re, err)) ||
        (s = read_ends(t, nb1, N, "colEnd", &ce, err)) ||
        (s = clcone_tok_int(t, 2, (long)nb0 + 1, &filled1, err,
                            "filled1 (the length of the block row pointer)")) ||
        (s = clcone_tok_int(t, nblocks, nblocks, &v, err,
                            "filled2 (the number of blocks, as nbblocks)")))
        goto done;
    rp = clcone_calloc((size_t)filled1, sizeof *rp, err, "rowPtr");
    bc = clcone_calloc((size_t)nblocks, sizeof *bc, err, "blockCol");
    if (!rp || !bc) {
        s = CLCONE_ENOMEM;
        goto done;
    }
    for (i = 0; i < filled1; ++i) {
        long lo = i == 0 ? 0 : i == filled1 - 1 ? nblocks : rp[i - 1];
        long hi = i == 0 ? 0 : nblocks;
        if ((s = clcone_tok_int(t, lo, hi, &rp[i], err,
                                "rowPtr[%d] (non-decreasing from 0 to nbblocks = %d)",
                                i, nblocks)))
            goto done;
    }
    for (i = 0, k = 0; k < nblocks; ++k) {
        while (k >= rp[i + 1]) ++i;
        if ((s = clcone_tok_int(t, 0, nb1 - 1, &bc[k], err,
                                "blockCol[%d] (the block column of a block in block row %d)",
                                k, i)))
            goto done;
        /* uBLAS compressed_matrix order; a repeated block would be
         * ambiguous. */
        if (k > rp[i] && bc[k] <= bc[k - 1]) {
            s = clcone_tok_fail(t, err,
                                "blockCol[%d] = %d does not increase within block row %d "
                                "(previous block column %d)", k, bc[k], i, bc[k - 1]);
            goto done;
        }
        values += (uint64_t)(re[i + 1] - re[i]) * (uint64_t)(ce[bc[k] + 1] - ce[bc[k]]);
    }
    if ((s = clcone_tok_need(t, values + (uint64_t)nblocks + (uint64_t)N, err,
                             "%d blocks of W, q and mu", nblocks)) ||
        (s = entries_alloc(e, values, err)))
        goto done;
    for (i = 0; i < filled1 - 1; ++i) {
        int64_t nr = re[i + 1] - re[i], a;
        for (k = rp[i]; k < rp[i + 1]; ++k) {
            int64_t nc = ce[bc[k] + 1] - ce[bc[k]];
            double x;
            if ((s = clcone_tok_int(t, k, k, &v, err, "the block number")))
                goto done;
            for (a = 0; a < nr * nc; ++a) {
                int r = re[i] + (int)(a % nr), c = ce[bc[k]] + (int)(a / nr);
                if ((s = clcone_tok_real(t, &x, err,
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

static clcone_status read_vectors(clcone_tok *t, clcone_problem *p,
                                  clcone_error *err)
{
    clcone_tok peek;
    int i, flag;
    clcone_status s;
    for (i = 0; i < 3 * p->n; ++i)
        if ((s = clcone_tok_real(t, &p->q[i], err, "q[%d]", i))) return s;
    for (i = 0; i < p->n; ++i) {
        if ((s = clcone_tok_real(t, &p->mu[i], err, "mu[%d]", i))) return s;
        if (p->mu[i] < 0)
            return clcone_tok_reject(t, err, "a friction coefficient mu[%d] >= 0", i);
    }
    /* One trailing integer is the old isComplete flag; more means a global
     * problem or a broken file (docs/formats.md 3.2). */
    peek = *t;
    if (!clcone_tok_next(&peek)) return CLCONE_OK;
    if ((s = clcone_tok_int(t, INT_MIN, INT_MAX, &flag, err,
                            "the optional trailing flag after mu")))
        return s;
    if (clcone_tok_next(t))
        return clcone_tok_reject(t, err,
                                 "the end of the file after mu and one flag (more "
                                 "trailing data: a global problem or a broken file?)");
    return CLCONE_OK;
}

clcone_status clcone_parse_dat(const char *name, const char *buf, size_t len,
                               clcone_problem *p, clcone_error *err)
{
    clcone_tok t;
    entries e;
    int d, n, storage, N, v;
    clcone_status s;

    memset(p, 0, sizeof *p);
    memset(&e, 0, sizeof e);
    clcone_tok_init(&t, name, buf, len, 0);
    if ((s = clcone_tok_int(&t, 3, 3, &d, err, "the local dimension d")) ||
        (s = clcone_tok_int(&t, 1, INT_MAX / 3, &n, err, "the number of contacts n")) ||
        (s = clcone_tok_need(&t, 4 * (uint64_t)n, err, "n = %d contacts", n)))
        return s;
    N = 3 * n;
    if ((s = clcone_tok_int(&t, 0, 1, &storage, err,
                            "the storage type of W (0 dense, 1 sparse block; 2, "
                            "CSparse, is not supported for 3D problems)")) ||
        (s = clcone_tok_int(&t, N, N, &v, err, "the number of rows of W (3n, n = %d)", n)) ||
        (s = clcone_tok_int(&t, N, N, &v, err,
                            "the number of columns of W (W is square, 3n x 3n, n = %d)", n)))
        return s;
    s = storage == 0 ? read_dense(&t, N, &e, err) : read_sbm(&t, N, &e, err);
    if (s == CLCONE_OK) s = clcone_problem_from_entries(p, n, e.count, e.row, e.col, e.val, err);
    entries_free(&e);
    if (s == CLCONE_OK) s = read_vectors(&t, p, err);
    if (s != CLCONE_OK) clcone_problem_free(p);
    return s;
}

/* ------------------------------------------------------------------ */
/* Dispatch and writing                                                */
/* ------------------------------------------------------------------ */

clcone_status clcone_parse_problem(const char *name, const char *buf, size_t len,
                                   clcone_problem *p, clcone_error *err)
{
    clcone_status s = clcone_buf_is_hdf5(buf, len) ? clcone_parse_fclib_hdf5(name, buf, len, p, err)
                                                   : clcone_parse_dat(name, buf, len, p, err);
    if (s != CLCONE_OK) return s;
    s = clcone_problem_validate(p, err);
    if (s != CLCONE_OK) {
        clcone_problem_free(p);
        clcone_error_prefix(err, "%s", name);
        /* Well-formed syntax with invalid values is still a bad file. */
        if (s == CLCONE_EINVAL) {
            s = CLCONE_EFORMAT;
            if (err) err->code = s;
        }
    }
    return s;
}

clcone_status clcone_read_problem(const char *path, clcone_problem *p,
                                  clcone_error *err)
{
    char *buf;
    size_t len;
    clcone_status s;
    if (!path || !p)
        return clcone_fail(err, CLCONE_EINVAL, "clcone_read_problem: NULL %s",
                           path ? "problem" : "path");
    memset(p, 0, sizeof *p);
    /* One read of the whole file, sniffed in memory: a pipe cannot be
     * rewound after a look at its first bytes. */
    s = clcone_load_file(path, &buf, &len, err);
    if (s == CLCONE_OK) s = clcone_parse_problem(path, buf, len, p, err);
    free(buf);
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
        return clcone_fail(err, CLCONE_EINVAL, "clcone_write_problem_dat: NULL %s",
                           path ? "problem" : "path");
    /* The file must read back, and the reader validates. */
    s = clcone_problem_validate(p, err);
    if (s != CLCONE_OK) {
        clcone_error_prefix(err, "%s: refusing to write an invalid problem", path);
        return s;
    }
    if (p->nprob != 1)
        return clcone_fail(err, CLCONE_EINVAL,
                           "%s: a batch of %d problems has no .dat form; write each "
                           "problem (clcone_batch_extract) to its own file",
                           path, p->nprob);
    return clcone_write_atomic(path, write_dat, p, err);
}
