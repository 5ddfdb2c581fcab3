/* Lemke's complementary pivoting, exposed inside the library so that the tests
 * can check the pivoting on plain LCPs and the pyramid LCP's complementarity. */
#ifndef CLCONE_LEMKE_H
#define CLCONE_LEMKE_H

#include <clcone/clcone.h>

/* Largest dense LCP accepted: the basis inverse is rows^2 doubles (sizes: docs/solvers.md). */
#define CLCONE_LEMKE_MAX_ROWS 3600

/* LCP w = M z + b, 0 <= z _|_ w >= 0, M in compressed columns (duplicates summed). */
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

/* The Stewart-Trinkle LCP of [c0, c1): per contact (r_n, beta_0..N-1, lambda), W and q scaled by a
 * power of two where W's largest normal diagonal is outside [2^-10, 2^10]; too big is ENOTSUP. */
clcone_status clc_lemke_pyramid_lcp(const clcone_problem *p,
                                       const clcone_options *o, int c0,
                                       int c1, clc_lemke_lcp *L,
                                       clcone_error *err);

/* Reactions of [c0, c1) from the LCP's z: r_c = (r_n, sum_j beta_j g_j). */
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

/* Lemke's method (covering vector 1, lexicographic ties); CLCONE_OK whatever the outcome (docs/solvers.md). */
clcone_status clc_lemke_solve(const clc_lemke_lcp *L, int max_pivots,
                                 double max_seconds, double *z,
                                 clc_lemke_info *info, clcone_error *err);

/* Complementarity violation, z and w each against its own scale; 0 is exact (docs/solvers.md). */
double clc_lemke_complementarity(const clc_lemke_lcp *L,
                                    const double *z);

#endif
