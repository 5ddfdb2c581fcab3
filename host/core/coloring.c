/* Contact colouring for Gauss-Seidel in parallel: contacts of one colour
 * share no W block (local form) or no moving body (body form), so a
 * colour's contacts update at once. The reference CGS and the device's CGS
 * sweep the same colours. */
#include "core/analysis.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

clcone_status clc_color_greedy(int m, clc_neighbours_fn neighbours, const void *ctx, int *ncolors,
                                  int **color_ptr, int **order, clcone_error *err)
{
    int nc = 0;
    int *color = clc_calloc((size_t)m, sizeof *color, err, "colours");
    int *mark = clc_calloc((size_t)m + 2, sizeof *mark, err, "colour marks");
    int *cptr = NULL, *ord = NULL;
    clcone_status s = CLCONE_ENOMEM;
    *ncolors = 0;
    *color_ptr = NULL;
    *order = NULL;
    if (!color || !mark) goto out;
    for (int i = 0; i <= m + 1; ++i) mark[i] = -1;
    for (int i = 0; i < m; ++i) {
        int k0 = 0;
        neighbours(ctx, i, color, mark);
        while (mark[k0] == i) ++k0;
        color[i] = k0;
        if (k0 + 1 > nc) nc = k0 + 1;
    }
    cptr = clc_calloc((size_t)nc + 1, sizeof *cptr, err, "colour offsets");
    ord = clc_calloc((size_t)m, sizeof *ord, err, "colour order");
    if (!cptr || !ord) goto out;
    for (int i = 0; i < m; ++i) cptr[color[i] + 1]++;
    for (int k = 0; k < nc; ++k) cptr[k + 1] += cptr[k];
    for (int k = 0; k <= nc; ++k) mark[k] = cptr[k];
    for (int i = 0; i < m; ++i) ord[mark[color[i]]++] = i;
    *ncolors = nc;
    *color_ptr = cptr;
    *order = ord;
    cptr = ord = NULL;
    s = CLCONE_OK;
out:
    free(color);
    free(mark);
    free(cptr);
    free(ord);
    return s;
}

/* W's block sparsity and its transpose over contacts [c0, c1), indexed
 * from c0: contact i conflicts with d when W_id or W_di is stored. */
typedef struct w_graph {
    const clcone_problem *p;
    int c0;
    int *tptr, *tcol;
} w_graph;

static void w_neighbours(const void *ctx, int i, const int *color, int *mark)
{
    const w_graph *g = ctx;
    int c = g->c0 + i;
    for (int k = g->p->row_ptr[c]; k < g->p->row_ptr[c + 1]; ++k) {
        int d = g->p->col[k] - g->c0;
        if (d < i) mark[color[d]] = i;
    }
    for (int k = g->tptr[i]; k < g->tptr[i + 1]; ++k)
        if (g->tcol[k] < i) mark[color[g->tcol[k]]] = i;
}

clcone_status clc_color_contacts(const clcone_problem *p, int c0, int c1, int *ncolors,
                                    int **color_ptr, int **order, clcone_error *err)
{
    int m = c1 - c0, nnz = p->row_ptr[c1] - p->row_ptr[c0];
    w_graph g = {p, c0, NULL, NULL};
    int *fill = clc_calloc((size_t)m + 1, sizeof *fill, err, "W transpose");
    clcone_status s = CLCONE_ENOMEM;
    *ncolors = 0;
    *color_ptr = NULL;
    *order = NULL;
    g.tptr = clc_calloc((size_t)m + 1, sizeof *g.tptr, err, "W transpose");
    g.tcol = clc_calloc((size_t)nnz + 1, sizeof *g.tcol, err, "W transpose");
    if (!fill || !g.tptr || !g.tcol) goto out;
    for (int k = p->row_ptr[c0]; k < p->row_ptr[c1]; ++k) g.tptr[p->col[k] - c0 + 1]++;
    for (int i = 0; i < m; ++i) g.tptr[i + 1] += g.tptr[i];
    for (int i = 0; i < m; ++i) fill[i] = g.tptr[i];
    for (int c = c0; c < c1; ++c)
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) g.tcol[fill[p->col[k] - c0]++] = c - c0;
    if (!(s = clc_color_greedy(m, w_neighbours, &g, ncolors, color_ptr, order, err)))
        for (int i = 0; i < m; ++i) (*order)[i] += c0;
out:
    free(fill);
    free(g.tptr);
    free(g.tcol);
    return s;
}
