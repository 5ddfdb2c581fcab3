/* The general-block problem's text format (docs/formats.md section 7):
 *
 *   clcone-blocks 1
 *   blocks NB rows M
 *   KIND N [BOUNDS]      NB lines: free N | nonneg N | box N F_1..F_N |
 *                        cone N mu_1..mu_N-1
 *   q Q_0 .. Q_M-1
 *   W COUNT
 *   I J VALUE            COUNT entries of W, 0-based rows and columns
 *
 * '#' starts a comment. W keeps the blocks that hold an entry and every
 * diagonal block; an entry given twice is an error naming both lines. */
#include "io/blocks_file.h"
#include "io/io.h"
#include "cone.h"
#include "block_sets.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KINDS[BLK_KINDS] = {"free", "box", "nonneg", "cone"};

/* The next token is the keyword word, else a format error. */
static clcone_status expect(clc_tok *t, const char *word, clcone_error *err)
{
    if (clc_tok_next(t) && t->len == strlen(word) && memcmp(t->tok, word, t->len) == 0) return CLCONE_OK;
    return clc_tok_reject(t, err, "'%s'", word);
}

/* Whether the last token's mantissa (before an exponent) has a digit
 * other than 0. */
static int nonzero_mantissa(const clc_tok *t)
{
    for (size_t i = 0; i < t->len && t->tok[i] != 'e' && t->tok[i] != 'E'; ++i)
        if (t->tok[i] >= '1' && t->tok[i] <= '9') return 1;
    return 0;
}

static clcone_status read_block(clc_tok *t, clc_bproblem *p, int b, int *row, clcone_error *err)
{
    int n, kind = -1;
    clcone_status s;
    if (clc_tok_next(t))
        for (int k = 0; k < BLK_KINDS; ++k)
            if (t->len == strlen(KINDS[k]) && memcmp(t->tok, KINDS[k], t->len) == 0) kind = k;
    if (kind < 0) return clc_tok_reject(t, err, "block %d's kind (free, box, nonneg or cone)", b);
    if ((s = clc_tok_int(t, kind == BLK_CONE ? 2 : 1, BLK_MAX_ROWS, &n, err, "block %d's rows", b))) return s;
    if (*row + n > p->m) return clc_tok_fail(t, err, "block %d's %d rows run past the %d rows", b, n, p->m);
    p->kind[b] = kind;
    p->off[b] = *row;
    if (kind == BLK_BOX || kind == BLK_CONE)
        for (int x = kind == BLK_CONE; x < n; ++x) {
            if ((s = clc_tok_real(t, &p->bound[*row + x], err, "block %d row %d's %s", b, *row + x,
                                     kind == BLK_BOX ? "bound" : "friction")))
                return s;
            /* a friction that underflows reads as 0 and would be refused as
             * "friction 0", the number written nowhere in the file */
            if (kind == BLK_CONE && !(p->bound[*row + x] >= DBL_MIN) && nonzero_mantissa(t))
                return clc_tok_fail(t, err, "block %d row %d's friction %.*s is below the smallest normal "
                                               "double (%g): it reads as %g", b, *row + x, (int)t->len, t->tok,
                                       DBL_MIN, p->bound[*row + x]);
        }
    if (kind == BLK_CONE) p->bound[*row] = 1;
    *row += n;
    return CLCONE_OK;
}

typedef struct entry {
    int bi, bj, i, j, line;
    double v;
} entry;

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->bi != b->bi) return a->bi < b->bi ? -1 : 1;
    if (a->bj != b->bj) return a->bj < b->bj ? -1 : 1;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

/* W's structure and values from the sorted entries e. */
static clcone_status build_w(const char *name, clc_bproblem *p, const entry *e, int count, clcone_error *err)
{
    int nnzb = 0, k = 0;
    clcone_status s;
    for (int b = 0; b < p->nb; ++b) {
        int diag = 0;
        while (k < count && e[k].bi == b) {
            if (e[k].bj == b) diag = 1;
            if (k + 1 < count && e[k + 1].bi == b && e[k + 1].bj == e[k].bj) ++k;
            else {
                ++nnzb;
                ++k;
            }
        }
        nnzb += !diag;
    }
    free(p->col);
    p->nnzb = nnzb;
    p->col = clc_calloc((size_t)nnzb + 1, sizeof *p->col, err, "W block columns");
    free(p->val_off);
    p->val_off = clc_calloc((size_t)nnzb + 1, sizeof *p->val_off, err, "W block offsets");
    if (!p->col || !p->val_off) return CLCONE_ENOMEM;
    nnzb = 0;
    k = 0;
    for (int b = 0; b < p->nb; ++b) {
        int diag = 0;
        p->row_ptr[b] = nnzb;
        for (; k < count && e[k].bi == b; ++k) {
            if (!diag && e[k].bj > b) p->col[nnzb++] = b;
            diag |= e[k].bj >= b;
            if (nnzb == p->row_ptr[b] || p->col[nnzb - 1] != e[k].bj) p->col[nnzb++] = e[k].bj;
        }
        if (!diag) p->col[nnzb++] = b;
    }
    p->row_ptr[p->nb] = nnzb;
    if ((s = clc_bproblem_layout(p, err))) return s;
    for (k = 0; k < count; ++k) {
        int t = p->row_ptr[e[k].bi], nc = clc_bproblem_rows(p, e[k].bj);
        if (k > 0 && e[k].i == e[k - 1].i && e[k].j == e[k - 1].j)
            return clc_fail(err, CLCONE_EFORMAT, "%s:%d: W entry (%d, %d) given again (first on line %d)", name,
                               e[k].line, e[k].i, e[k].j, e[k - 1].line);
        while (p->col[t] != e[k].bj) ++t;
        p->val[p->val_off[t] + (e[k].i - p->off[e[k].bi]) * nc + (e[k].j - p->off[e[k].bj])] = e[k].v;
    }
    return CLCONE_OK;
}

/* The entries of W, each with its blocks (blk: row -> block). */
static clcone_status read_entries(clc_tok *t, const clc_bproblem *p, const int *blk, entry **out, int *count,
                                  clcone_error *err)
{
    entry *e;
    clcone_status s;
    if ((s = expect(t, "W", err)) || (s = clc_tok_int(t, 0, 0x7fffffff, count, err, "W's entry count"))
        || (s = clc_tok_need(t, 3 * (uint64_t)*count, err, "%d entries of W", *count)))
        return s;
    e = *out = clc_calloc((size_t)*count + 1, sizeof *e, err, "W entries");
    if (!e) return CLCONE_ENOMEM;
    for (int k = 0; k < *count; ++k) {
        if ((s = clc_tok_int(t, 0, p->m - 1, &e[k].i, err, "W entry %d's row", k))) return s;
        e[k].line = t->tok_line;
        if ((s = clc_tok_int(t, 0, p->m - 1, &e[k].j, err, "W entry %d's column", k))
            || (s = clc_tok_real(t, &e[k].v, err, "W entry %d's value", k)))
            return s;
        e[k].bi = blk[e[k].i];
        e[k].bj = blk[e[k].j];
    }
    if (clc_tok_next(t)) return clc_tok_reject(t, err, "the end of the file after W's %d entries", *count);
    qsort(e, (size_t)*count, sizeof *e, cmp_entry);
    return CLCONE_OK;
}

static clcone_status parse(const char *name, clc_tok *t, clc_bproblem *p, clcone_error *err)
{
    int nb, m, version, row = 0, count = 0, *blk = NULL;
    entry *e = NULL;
    clcone_status s;
    if ((s = expect(t, "clcone-blocks", err)) || (s = clc_tok_int(t, 1, 1, &version, err, "the format version"))
        || (s = expect(t, "blocks", err)) || (s = clc_tok_int(t, 1, 0x7fffffff, &nb, err, "the block count"))
        || (s = expect(t, "rows", err)) || (s = clc_tok_int(t, 1, 0x7fffffff, &m, err, "the row count"))
        || (s = clc_tok_need(t, 2 * (uint64_t)nb + (uint64_t)m, err, "%d blocks and %d rows", nb, m))
        || (s = clc_bproblem_alloc(p, nb, m, 0, err)))
        return s;
    for (int b = 0; b < nb; ++b)
        if ((s = read_block(t, p, b, &row, err))) return s;
    p->off[nb] = row;
    if (row != m) return clc_tok_fail(t, err, "the %d blocks hold %d rows, not the %d announced", nb, row, m);
    if ((s = expect(t, "q", err))) return s;
    for (int i = 0; i < m; ++i)
        if ((s = clc_tok_real(t, &p->q[i], err, "q[%d]", i))) return s;
    blk = clc_calloc((size_t)m, sizeof *blk, err, "row blocks");
    if (!blk) return CLCONE_ENOMEM;
    for (int b = 0; b < nb; ++b)
        for (int i = p->off[b]; i < p->off[b + 1]; ++i) blk[i] = b;
    if (!(s = read_entries(t, p, blk, &e, &count, err))) s = build_w(name, p, e, count, err);
    free(blk);
    free(e);
    return s;
}

clcone_status clc_parse_blocks(const char *name, const char *buf, size_t len, clc_bproblem *p, clcone_error *err)
{
    clc_tok t;
    clcone_status s;
    memset(p, 0, sizeof *p);
    clc_tok_init(&t, name, buf, len, 1);
    s = parse(name, &t, p, err);
    if (!s && (s = clc_bproblem_validate(p, err))) clc_error_prefix(err, "%s", name);
    if (s) clc_bproblem_free(p);
    return s;
}

clcone_status clc_read_blocks(const char *path, clc_bproblem *p, clcone_error *err)
{
    char *buf;
    size_t len;
    clcone_status s = clc_load_file(path, &buf, &len, err);
    memset(p, 0, sizeof *p);
    if (s) return s;
    s = clc_parse_blocks(path, buf, len, p, err);
    free(buf);
    return s;
}

static int write_file(void *file, const void *ctx)
{
    FILE *fp = file;
    const clc_bproblem *p = ctx;
    long count = 0;
    fprintf(fp, "clcone-blocks 1\nblocks %d rows %d\n", p->nb, p->m);
    for (int b = 0; b < p->nb; ++b) {
        int n = clc_bproblem_rows(p, b);
        fprintf(fp, "%s %d", KINDS[p->kind[b]], n);
        if (p->kind[b] == BLK_BOX || p->kind[b] == BLK_CONE)
            for (int x = p->kind[b] == BLK_CONE; x < n; ++x) fprintf(fp, " %.17g", p->bound[p->off[b] + x]);
        fputc('\n', fp);
    }
    fputs("q", fp);
    for (int i = 0; i < p->m; ++i) fprintf(fp, " %.17g", p->q[i]);
    fprintf(fp, "\nW %d\n", p->val_off[p->nnzb]);
    for (int b = 0; b < p->nb; ++b)
        for (int k = p->row_ptr[b]; k < p->row_ptr[b + 1]; ++k) {
            int c = p->col[k], nc = clc_bproblem_rows(p, c);
            for (int x = 0; x < clc_bproblem_rows(p, b); ++x)
                for (int y = 0; y < nc; ++y, ++count)
                    fprintf(fp, "%d %d %.17g\n", p->off[b] + x, p->off[c] + y, p->val[p->val_off[k] + x * nc + y]);
        }
    return count == p->val_off[p->nnzb] && !ferror(fp) ? 0 : -1;
}

clcone_status clc_write_blocks(const char *path, const clc_bproblem *p, clcone_error *err)
{
    return clc_write_atomic(path, write_file, p, err);
}
