/* Lemke's complementary pivoting, exposed inside the library so that the
 * Check suite can test the pivoting core on plain LCPs and inspect the
 * complementarity of the pyramid LCP that clc_ref_lemke_pyramid solves. Not
 * part of the public API. */
#ifndef CLCONE_LEMKE_H
#define CLCONE_LEMKE_H

#include <clcone/clcone.h>

/* Largest dense LCP accepted. The explicit basis inverse is rows^2
 * doubles (3600 rows: 104 MB) and every pivot touches all of it, so
 * beyond this the direct method is neither memory- nor time-sensible;
 * the iterative pyramid solvers (pgs, jacobi) have no such limit.
 * 3600 rows = 600 contacts at N = 4, 360 at N = 8, 200 at N = 16. */
#define CLCONE_LEMKE_MAX_ROWS 3600

/* LCP  w = M z + b,  0 <= z _|_ w >= 0, M in compressed sparse columns:
 * the pivoting only ever needs columns of M, and the pyramid LCP's M is
 * as sparse as W. Duplicate (row, column) entries are summed. */
typedef struct clc_lemke_lcp {
    int n;
    int *col_ptr;  /* n + 1 */
    int *row;      /* col_ptr[n] */
    double *val;   /* col_ptr[n] */
    double *b;     /* n */
} clc_lemke_lcp;

void clc_lemke_lcp_free(clc_lemke_lcp *L);

/* n columns, nnz entries and b, zeroed (L->col_ptr to fill). */
clcone_status clc_lemke_lcp_alloc(clc_lemke_lcp *L, int n, size_t nnz, clcone_error *err);

/* From a dense row-major n x n M (zeros dropped). */
clcone_status clc_lemke_lcp_from_dense(clc_lemke_lcp *L, int n,
                                          const double *M_rowmajor,
                                          const double *b, clcone_error *err);

/* The Stewart-Trinkle LCP of contacts [c0, c1) of p for the pyramid of
 * o->facets facets and fit o->fit; unknowns per contact, in order,
 * (r_n, beta_0..beta_{N-1}, lambda). CLCONE_ENOTSUP above
 * CLCONE_LEMKE_MAX_ROWS rows, CLCONE_EINVAL when a block of W couples the
 * range with a contact outside it. */
clcone_status clc_lemke_pyramid_lcp(const clcone_problem *p,
                                       const clcone_options *o, int c0,
                                       int c1, clc_lemke_lcp *L,
                                       clcone_error *err);

/* Reactions of contacts [c0, c1) from the LCP unknowns z:
 * r_c = (r_n, sum_j beta_j g_j). */
void clc_lemke_pyramid_reactions(const clcone_problem *p,
                                    const clcone_options *o, int c0, int c1,
                                    const double *z, double *r);

typedef enum clc_lemke_outcome {
    CLCONE_LEMKE_SOLVED = 0,  /* z0 left the basis: z solves the LCP */
    CLCONE_LEMKE_RAY,         /* secondary ray: no blocking row */
    CLCONE_LEMKE_CAP,         /* max_pivots pivots done */
    CLCONE_LEMKE_STALL,       /* basis repeated or became singular */
    CLCONE_LEMKE_TIME         /* max_seconds elapsed */
} clc_lemke_outcome;

typedef struct clc_lemke_info {
    clc_lemke_outcome outcome;
    int pivots;               /* pivots done, the entering of z0 included */
    int refactors;            /* fresh inversions of the basis */
    int degenerate;           /* pivots that left every x unchanged */
    double z0;                /* artificial variable at exit (0 if solved) */
    char detail[96];          /* what stalled, when STALL */
} clc_lemke_info;

/* Lemke's method with covering vector e = (1..1) and lexicographic
 * tie-breaking in the ratio test. z (n) receives the solution when
 * SOLVED, otherwise the z part of the last almost-complementary point
 * (whose z0 is in info->z0). max_pivots >= 0; max_seconds <= 0 means no
 * clock. Returns CLCONE_OK whatever the outcome, an error only for
 * invalid input or failed allocation. */
clcone_status clc_lemke_solve(const clc_lemke_lcp *L, int max_pivots,
                                 double max_seconds, double *z,
                                 clc_lemke_info *info, clcone_error *err);

/* Complementarity violation max_i |min(z_i / zs, w_i / ws)|, with
 * w = M z + b, zs = max|z| and ws the magnitude of the terms that make
 * w (max_i (|b_i| + sum_j |M_ij z_j|)): z and w carry different units
 * (forces, velocities), so each is measured against its own scale. 0
 * means exactly complementary; it also counts negative z or w. */
double clc_lemke_complementarity(const clc_lemke_lcp *L,
                                    const double *z);

#endif
