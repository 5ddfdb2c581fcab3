/* A problem file of either format, told apart by its content, read and
 * validated. */
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
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, p);
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
