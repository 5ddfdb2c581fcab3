/* Contact colouring for Gauss-Seidel in parallel: the reference CGS and
 * the device's CGS sweep the same colours. */
#include "core/analysis.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

clcone_status clcone_color_contacts(const clcone_problem *p, int c0, int c1, int *ncolors,
                                 int **color_ptr, int **order, clcone_error *err)
{
    int m = c1 - c0, nc = 0;
    int *color = clcone_calloc((size_t)m, sizeof *color, err, "colours");
    int *tptr = clcone_calloc((size_t)m + 1, sizeof *tptr, err, "W transpose");
    int *tcol = NULL, *mark = NULL, *cptr = NULL, *ord = NULL;
    int nnz = p->row_ptr[c1] - p->row_ptr[c0];
    clcone_status s = CLCONE_ENOMEM;
    *ncolors = 0;
    *color_ptr = NULL;
    *order = NULL;
    if (!color || !tptr) goto out;
    tcol = clcone_calloc((size_t)nnz, sizeof *tcol, err, "W transpose");
    mark = clcone_calloc((size_t)m + 1, sizeof *mark, err, "colour marks");
    if (!tcol || !mark) goto out;
    /* transpose structure, so that a contact sees W_dc as well as W_cd */
    for (int k = p->row_ptr[c0]; k < p->row_ptr[c1]; ++k) tptr[p->col[k] - c0 + 1]++;
    for (int i = 0; i < m; ++i) tptr[i + 1] += tptr[i];
    {
        int *fill = mark; /* reused as insertion cursor, reset below */
        for (int i = 0; i < m; ++i) fill[i] = tptr[i];
        for (int c = c0; c < c1; ++c)
            for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) tcol[fill[p->col[k] - c0]++] = c - c0;
        for (int i = 0; i <= m; ++i) mark[i] = -1;
    }
    for (int i = 0; i < m; ++i) {
        int c = c0 + i, k0 = 0;
        /* mark[col] = i for every colour taken by a neighbour */
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            int d = p->col[k] - c0;
            if (d < i) mark[color[d]] = i;
        }
        for (int k = tptr[i]; k < tptr[i + 1]; ++k)
            if (tcol[k] < i) mark[color[tcol[k]]] = i;
        while (mark[k0] == i) ++k0;
        color[i] = k0;
        if (k0 + 1 > nc) nc = k0 + 1;
    }
    cptr = clcone_calloc((size_t)nc + 1, sizeof *cptr, err, "colour offsets");
    ord = clcone_calloc((size_t)m, sizeof *ord, err, "colour order");
    if (!cptr || !ord) goto out;
    for (int i = 0; i < m; ++i) cptr[color[i] + 1]++;
    for (int k = 0; k < nc; ++k) cptr[k + 1] += cptr[k];
    for (int k = 0; k <= nc; ++k) mark[k] = cptr[k];
    for (int i = 0; i < m; ++i) ord[mark[color[i]]++] = c0 + i;
    *ncolors = nc;
    *color_ptr = cptr;
    *order = ord;
    cptr = ord = NULL;
    s = CLCONE_OK;
out:
    free(color);
    free(tptr);
    free(tcol);
    free(mark);
    free(cptr);
    free(ord);
    return s;
}
