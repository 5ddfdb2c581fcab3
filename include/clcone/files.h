/* clcone public API: problem, reactions and output files. */
#ifndef CLCONE_API_FILES_H
#define CLCONE_API_FILES_H

#include <stdio.h>

#include "device.h"
#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A Siconos .dat problem (dense or SBM); FCLib HDF5 is CLCONE_ENOTSUP (see <clcone/output.h>). */
CLCONE_API clcone_status clcone_read_problem(const char *path, clcone_problem *p,
                                  clcone_error *err);
/* Siconos .dat, SBM, %.17g (an exact round trip), written atomically. */
CLCONE_API clcone_status clcone_write_problem_dat(const char *path,
                                       const clcone_problem *p,
                                       clcone_error *err);
/* Reactions: text, r_n r_t1 r_t2 a line, '#' comments, exactly 3n numbers; written atomically, %.17g. */
CLCONE_API clcone_status clcone_read_reactions(const char *path, int n, double *r,
                                    clcone_error *err);
CLCONE_API clcone_status clcone_write_reactions(const char *path, int n,
                                     const double *r, clcone_error *err);
/* The solve a reactions file records in its first comment (docs/formats.md section 5): tol 0,
 * "" and facets 0 mean not recorded (precision then CLCONE_DOUBLE); names as clcone_model_name
 * and clcone_solver_name spell them, fit "outer" or "inner". Written only with a tolerance. */
typedef struct clcone_reactions_info {
    double tol;
    clcone_precision precision;
    char model[16], solver[16], fit[8];
    int facets;
} clcone_reactions_info;
/* As clcone_write_reactions, the header recording info (NULL: none). */
CLCONE_API clcone_status clcone_write_reactions_info(const char *path, int n, const double *r,
                                                     const clcone_reactions_info *info, clcone_error *err);
/* As clcone_read_reactions, and info from the header (tol 0: none recorded). */
CLCONE_API clcone_status clcone_read_reactions_info(const char *path, int n, double *r,
                                                    clcone_reactions_info *info, clcone_error *err);

/* A regular file (or a link's target) is written beside and renamed over at close(keep 1)
 * only, keep 0 discarding it; others (/dev/null, a FIFO) are written through. close frees o. */
typedef struct clcone_out clcone_out;
CLCONE_API clcone_status clcone_out_open(const char *path, clcone_out **o, clcone_error *err);
CLCONE_API FILE *clcone_out_file(clcone_out *o);
CLCONE_API clcone_status clcone_out_close(clcone_out *o, int keep, clcone_error *err);
/* Unlinks the temporary of every output still open, targets left as they were: for a signal
 * handler about to end the process (async-signal-safe: it reads lock-free slots and calls unlink). */
CLCONE_API void clcone_out_discard_temps(void);
/* The file clcone_out_open(path) writes (malloc'ed, the caller frees it): path or its links'
 * end; CLCONE_EIO for a link loop or a path that cannot name a file. */
CLCONE_API clcone_status clcone_out_target(const char *path, char **target, clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
