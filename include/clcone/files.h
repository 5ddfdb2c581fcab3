/* clcone public API: problem, reactions and output files. */
#ifndef CLCONE_API_FILES_H
#define CLCONE_API_FILES_H

#include <stdio.h>

#include "device.h"
#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a Siconos .dat FrictionContactProblem (dense or SBM storage). A
 * file with the HDF5 signature, an FCLib local problem, is CLCONE_ENOTSUP
 * here: clcone_read_problem_hdf5 of libclcone_output (<clcone/output.h>)
 * reads both, so that libclcone links no HDF5. */
CLCONE_API clcone_status clcone_read_problem(const char *path, clcone_problem *p,
                                  clcone_error *err);
/* Writes Siconos .dat with SBM storage and %.17g values: an exact round
 * trip through clcone_read_problem. Written atomically. */
CLCONE_API clcone_status clcone_write_problem_dat(const char *path,
                                       const clcone_problem *p,
                                       clcone_error *err);
/* Reactions: text, r_n r_t1 r_t2 per line, '#' comments. Exactly 3n
 * numbers. Writing is atomic (temp file + rename) with %.17g. */
CLCONE_API clcone_status clcone_read_reactions(const char *path, int n, double *r,
                                    clcone_error *err);
CLCONE_API clcone_status clcone_write_reactions(const char *path, int n,
                                     const double *r, clcone_error *err);
/* The solve that made a reactions file, recorded in its first comment
 * line ("# clcone reactions: ... tol=1e-05 precision=float model=ccp
 * solver=apgd"), so that a check measures the reactions under the law
 * and against the tolerance they were solved to; a comment, so any
 * reader of the numbers reads them as before. tol 0: none recorded (then
 * precision is CLCONE_DOUBLE). model and solver as clcone_model_name and
 * clcone_solver_name spell them, "" when not recorded (older files);
 * for the pyramid its facets and fit ("outer" or "inner"; 0 and "": not
 * recorded). Written only with a tolerance. */
typedef struct clcone_reactions_info {
    double tol;
    clcone_precision precision;
    char model[16], solver[16], fit[8];
    int facets;
} clcone_reactions_info;
/* As clcone_write_reactions, the header recording info (NULL: none). */
CLCONE_API clcone_status clcone_write_reactions_info(const char *path, int n, const double *r,
                                                     const clcone_reactions_info *info, clcone_error *err);
/* As clcone_read_reactions, and info from the header (tol 0 when the file
 * records none). */
CLCONE_API clcone_status clcone_read_reactions_info(const char *path, int n, double *r,
                                                    clcone_reactions_info *info, clcone_error *err);

/* Output files, written as every clcone writer writes them. A regular
 * file (or, through a symbolic link, its target) is written to a
 * temporary file beside it, renamed over it by clcone_out_close(keep = 1)
 * only when everything was written, so a failed or abandoned run leaves
 * the old file whole; a new file gets 0666 & ~umask, a replaced one keeps
 * its mode. What is not a regular file (/dev/null, a terminal, a FIFO) is
 * written through, never replaced. clcone_out_close(keep = 0) discards
 * the temporary. Either way o is freed. */
typedef struct clcone_out clcone_out;
CLCONE_API clcone_status clcone_out_open(const char *path, clcone_out **o, clcone_error *err);
CLCONE_API FILE *clcone_out_file(clcone_out *o);
CLCONE_API clcone_status clcone_out_close(clcone_out *o, int keep, clcone_error *err);
/* The file that clcone_out_open(path) writes (malloc'ed, the caller frees
 * it): path itself, or the end of its symbolic links, which a dangling
 * link creates. CLCONE_EIO for a link loop or a path that cannot name a
 * file, so that a program can refuse an output before its work. */
CLCONE_API clcone_status clcone_out_target(const char *path, char **target, clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
