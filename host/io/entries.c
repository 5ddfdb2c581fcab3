/* Scalar (row, column, value) entries to the 3x3 block-CSR of a problem:
 * the .dat and the HDF5 readers both build their W through it. */
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

clcone_status clc_problem_from_entries(clcone_problem *p, int n,
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
    start = clc_calloc((size_t)n + 2, sizeof *start, err, "W row index");
    if (!start) return CLCONE_ENOMEM;
    /* Counting sort of the entries by block row: start[bi] .. start[bi+1]
     * delimit row bi in `order` once filled. */
    for (k = 0; k < count; ++k) start[row[k] / 3 + 2]++;
    for (bi = 2; bi < n + 2; ++bi) start[bi] += start[bi - 1];
    order = clc_calloc(count, sizeof *order, err, "W entry order");
    slot = clc_calloc((size_t)n, sizeof *slot, err, "W block slots");
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
    cols = clc_calloc(maxrow + 1, sizeof *cols, err, "W row blocks");
    acc = clc_calloc(maxrow + 1, 9 * sizeof *acc, err, "W row blocks");
    touched = clc_calloc(maxrow + 1, sizeof *touched, err, "W row blocks");
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
                s = clc_fail(err, CLCONE_EFORMAT,
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
