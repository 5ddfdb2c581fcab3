/* Reactions files (docs/formats.md section 5). */
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clcone_status clcone_parse_reactions(const char *name, const char *buf, size_t len, int n, double *r,
                                     clcone_error *err)
{
    static const char *const comp[3] = {"r_n", "r_t1", "r_t2"};
    clcone_tok t;
    double *tmp;
    int i;
    clcone_status s = CLCONE_OK;
    /* Read into a scratch copy so that a bad file leaves r (often a warm
     * start) untouched. */
    tmp = clcone_calloc(3 * (size_t)n, sizeof *tmp, err, "reactions");
    if (!tmp) return CLCONE_ENOMEM;
    clcone_tok_init(&t, name, buf, len, 1);
    for (i = 0; i < 3 * n && s == CLCONE_OK; ++i)
        s = clcone_tok_real(&t, &tmp[i], err,
                            "%s of contact %d (the file must hold exactly %d numbers, "
                            "3 per contact)", comp[i % 3], i / 3, 3 * n);
    if (s == CLCONE_OK && clcone_tok_next(&t))
        s = clcone_tok_reject(&t, err,
                              "the end of the file after %d numbers (3 per contact, "
                              "%d contacts)", 3 * n, n);
    if (s == CLCONE_OK && n > 0) memcpy(r, tmp, 3 * (size_t)n * sizeof *r);
    free(tmp);
    return s;
}

clcone_status clcone_read_reactions(const char *path, int n, double *r,
                                    clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    if (n > 0) CLCONE_REQUIRE(err, r);
    char *buf;
    size_t len;
    clcone_status s;
    if (!path || n < 0 || (n > 0 && !r))
        return clcone_fail(err, CLCONE_EINVAL,
                           "clcone_read_reactions: invalid arguments (n = %d)", n);
    if ((s = clcone_load_file(path, &buf, &len, err))) return s;
    s = clcone_parse_reactions(path, buf, len, n, r, err);
    free(buf);
    return s;
}

typedef struct reactions {
    int n;
    const double *r;
} reactions;

static int write_reactions(void *file, const void *ctx)
{
    FILE *f = file;
    const reactions *x = ctx;
    int c;
    fprintf(f, "# clcone reactions: %d contacts, r_n r_t1 r_t2 per contact\n", x->n);
    for (c = 0; c < x->n; ++c)
        fprintf(f, "%.17g %.17g %.17g\n", x->r[3 * c], x->r[3 * c + 1], x->r[3 * c + 2]);
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_write_reactions(const char *path, int n,
                                     const double *r, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    if (n > 0) CLCONE_REQUIRE(err, r);
    reactions x;
    int i;
    if (!path || n < 0 || (n > 0 && !r))
        return clcone_fail(err, CLCONE_EINVAL,
                           "clcone_write_reactions: invalid arguments (n = %d)", n);
    /* A non-finite value would be written but could never be read back. */
    for (i = 0; i < 3 * n; ++i)
        if (!isfinite(r[i]))
            return clcone_fail(err, CLCONE_EINVAL, "%s: r[%d] = %g is not finite", path,
                               i, r[i]);
    x.n = n;
    x.r = r;
    return clcone_write_atomic(path, write_reactions, &x, err);
}
