/* Reactions files (docs/formats.md section 5). */
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* count numbers of buf into r, per a line as the file's kind names them
 * (3: a contact's r_n r_t1 r_t2; 1: a row's force f); r untouched on
 * failure (often a warm start). */
static clcone_status parse_numbers(const char *name, const char *buf, size_t len, int count, int per, double *r,
                                   clcone_error *err)
{
    static const char *const comp[3] = {"r_n", "r_t1", "r_t2"};
    clc_tok t;
    double *tmp;
    int i;
    clcone_status s = CLCONE_OK;
    tmp = clc_calloc((size_t)count + 1, sizeof *tmp, err, per == 3 ? "reactions" : "forces");
    if (!tmp) return CLCONE_ENOMEM;
    clc_tok_init(&t, name, buf, len, 1);
    for (i = 0; i < count && s == CLCONE_OK; ++i)
        s = per == 3 ? clc_tok_real(&t, &tmp[i], err,
                                       "%s of contact %d (the file must hold exactly %d numbers, "
                                       "3 per contact)", comp[i % 3], i / 3, count)
                     : clc_tok_real(&t, &tmp[i], err,
                                       "f of row %d (the file must hold exactly %d numbers, one per row)", i, count);
    if (s == CLCONE_OK && clc_tok_next(&t))
        s = per == 3 ? clc_tok_reject(&t, err, "the end of the file after %d numbers (3 per contact, "
                                                  "%d contacts)", count, count / 3)
                     : clc_tok_reject(&t, err, "the end of the file after %d numbers (one per row)", count);
    if (s == CLCONE_OK && count > 0) memcpy(r, tmp, (size_t)count * sizeof *r);
    free(tmp);
    return s;
}

clcone_status clc_parse_reactions(const char *name, const char *buf, size_t len, int n, double *r,
                                     clcone_error *err)
{
    return parse_numbers(name, buf, len, 3 * n, 3, r, err);
}

/* The first line of every reactions (forces) file clcone writes; what
 * follows it on that line records the solve (write_reactions). */
static const char HEADER[] = "# clcone reactions:", FORCES_HEADER[] = "# clcone forces:";

/* The keys a header records, each at most once: a second copy (an edit
 * or a file pasted onto another) leaves which one holds unsaid. */
static const char *const HEADER_KEYS[] = {" tol=", " precision=", " model=", " solver=", " fit=", " facets="};

/* The value of " key=" in line, a word of letters and digits, into out
 * (len bytes); "" when absent or not such a word. */
static void header_word(const char *line, const char *key, char *out, size_t len)
{
    const char *v = strstr(line, key);
    size_t n = v ? strspn(v += strlen(key), "abcdefghijklmnopqrstuvwxyz0123456789") : 0;
    out[0] = 0;
    if (n > 0 && n < len && (v[n] == 0 || v[n] == ' ')) {
        memcpy(out, v, n);
        out[n] = 0;
    }
}

/* The text after " key=" in line up to the next space (at most len - 1
 * bytes) into out; 0 when the key is absent. */
static int header_value(const char *line, const char *key, char *out, size_t len)
{
    const char *v = strstr(line, key);
    size_t n;
    if (!v) return 0;
    v += strlen(key);
    n = strcspn(v, " ");
    if (n >= len) n = len - 1;
    memcpy(out, v, n);
    out[n] = 0;
    return 1;
}

/* info from the header line of buf (the first line), when it is ours and
 * records a tolerance; the rest of the file is the parser's to judge. A
 * value that clcone would not have written (a header edited by hand, or
 * a file cut or damaged) is refused, not read as a default. */
static clcone_status parse_header(const char *name, const char *buf, size_t len, clcone_reactions_info *info,
                                  clcone_error *err)
{
    const char *eol = memchr(buf, '\n', len);
    size_t n = eol ? (size_t)(eol - buf) : len;
    char line[256], num[64];
    memset(info, 0, sizeof *info);
    info->precision = CLCONE_DOUBLE;
    if (n >= sizeof line
        || (strncmp(buf, HEADER, sizeof HEADER - 1) != 0 && strncmp(buf, FORCES_HEADER, sizeof FORCES_HEADER - 1) != 0))
        return CLCONE_OK;
    memcpy(line, buf, n);
    line[n] = 0;
    if (!header_value(line, " tol=", num, sizeof num)) return CLCONE_OK;
    if (!clc_parse_real(num, &info->tol) || !(info->tol > 0)) {
        info->tol = 0;
        return clc_fail(err, CLCONE_EFORMAT, "%s:1: the header's tol=%s is not a number > 0", name, num);
    }
    for (size_t k = 0; k < sizeof HEADER_KEYS / sizeof *HEADER_KEYS; ++k) {
        const char *v = strstr(line, HEADER_KEYS[k]);
        if (v && strstr(v + 1, HEADER_KEYS[k]))
            return clc_fail(err, CLCONE_EFORMAT, "%s:1: the header gives %s twice", name, HEADER_KEYS[k] + 1);
    }
    if (header_value(line, " precision=", num, sizeof num) && strcmp(num, "float") != 0 && strcmp(num, "double") != 0)
        return clc_fail(err, CLCONE_EFORMAT, "%s:1: the header's precision=%s is not float or double", name, num);
    if (header_value(line, " precision=", num, sizeof num) && strcmp(num, "float") == 0) info->precision = CLCONE_FLOAT;
    header_word(line, " model=", info->model, sizeof info->model);
    header_word(line, " solver=", info->solver, sizeof info->solver);
    header_word(line, " fit=", info->fit, sizeof info->fit);
    if (header_value(line, " fit=", num, sizeof num) && strcmp(num, "inner") != 0 && strcmp(num, "outer") != 0)
        return clc_fail(err, CLCONE_EFORMAT, "%s:1: the header's fit=%s is not inner or outer", name, num);
    if (header_value(line, " facets=", num, sizeof num)) {
        char *end;
        long f = strtol(num, &end, 10);
        if (end == num || *end || f < 3 || f > CLCONE_MAX_FACETS)
            return clc_fail(err, CLCONE_EFORMAT, "%s:1: the header's facets=%s is not an integer from 3 to %d",
                            name, num, CLCONE_MAX_FACETS);
        info->facets = (int)f;
    }
    return CLCONE_OK;
}

/* A file of count numbers, per a line (3: reactions, 1: forces), and
 * info from its header (info NULL: not wanted). */
static clcone_status read_numbers(const char *path, int count, int per, double *r, clcone_reactions_info *info,
                                  clcone_error *err)
{
    char *buf;
    size_t len;
    clcone_status s;
    if ((s = clc_load_file(path, &buf, &len, err))) return s;
    /* the header first: r stays untouched where it is refused */
    if (info) s = parse_header(path, buf, len, info, err);
    if (!s) s = parse_numbers(path, buf, len, count, per, r, err);
    free(buf);
    return s;
}

clcone_status clcone_read_reactions_info(const char *path, int n, double *r, clcone_reactions_info *info,
                                         clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    if (n > 0) CLCONE_REQUIRE(err, r);
    if (!path || n < 0 || (n > 0 && !r))
        return clc_fail(err, CLCONE_EINVAL,
                           "clcone_read_reactions: invalid arguments (n = %d)", n);
    return read_numbers(path, 3 * n, 3, r, info, err);
}

clcone_status clc_read_forces_info(const char *path, int m, double *f, clcone_reactions_info *info,
                                      clcone_error *err)
{
    if (!path || m < 0 || (m > 0 && !f))
        return clc_fail(err, CLCONE_EINVAL, "clc_read_forces: invalid arguments (m = %d)", m);
    return read_numbers(path, m, 1, f, info, err);
}

clcone_status clcone_read_reactions(const char *path, int n, double *r,
                                    clcone_error *err)
{
    return clcone_read_reactions_info(path, n, r, NULL, err);
}

typedef struct reactions {
    int count, per; /* numbers, and a line's: 3 a contact's reactions, 1 a row's force */
    const double *r;
    const clcone_reactions_info *info;
} reactions;

/* Whether s (of size len) is a word header_word reads back. */
static int word_ok(const char *s, size_t len)
{
    const char *end = memchr(s, 0, len);
    size_t n = end ? (size_t)(end - s) : len;
    return n > 0 && n < len && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

static int write_reactions(void *file, const void *ctx)
{
    FILE *f = file;
    const reactions *x = ctx;
    if (x->per == 3) fprintf(f, "%s %d contacts, r_n r_t1 r_t2 per contact", HEADER, x->count / 3);
    else fprintf(f, "%s %d rows, f per row", FORCES_HEADER, x->count);
    if (x->info && x->info->tol > 0) {
        const clcone_reactions_info *in = x->info;
        fprintf(f, "; solved to tol=%.17g precision=%s", in->tol, in->precision == CLCONE_FLOAT ? "float" : "double");
        /* the words the reader takes (header_word); a word that is not one is left out */
        if (word_ok(in->model, sizeof in->model)) fprintf(f, " model=%s", in->model);
        if (in->facets >= 3) fprintf(f, " facets=%d", in->facets);
        if (word_ok(in->fit, sizeof in->fit)) fprintf(f, " fit=%s", in->fit);
        if (word_ok(in->solver, sizeof in->solver)) fprintf(f, " solver=%s", in->solver);
    }
    fprintf(f, "\n");
    for (int i = 0; i < x->count; i += x->per)
        if (x->per == 3) fprintf(f, "%.17g %.17g %.17g\n", x->r[i], x->r[i + 1], x->r[i + 2]);
        else fprintf(f, "%.17g\n", x->r[i]);
    return ferror(f) ? -1 : 0;
}

/* count numbers of r, per a line, written atomically with info's header. */
static clcone_status write_numbers(const char *path, int count, int per, const double *r,
                                   const clcone_reactions_info *info, clcone_error *err)
{
    reactions x = {count, per, r, info};
    /* A non-finite value would be written but could never be read back. */
    for (int i = 0; i < count; ++i)
        if (!isfinite(r[i])) return clc_fail(err, CLCONE_EINVAL, "%s: r[%d] = %g is not finite", path, i, r[i]);
    return clc_write_atomic(path, write_reactions, &x, err);
}

clcone_status clcone_write_reactions(const char *path, int n,
                                     const double *r, clcone_error *err)
{
    return clcone_write_reactions_info(path, n, r, NULL, err);
}

clcone_status clcone_write_reactions_info(const char *path, int n, const double *r,
                                          const clcone_reactions_info *info, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    if (n > 0) CLCONE_REQUIRE(err, r);
    if (!path || n < 0 || (n > 0 && !r))
        return clc_fail(err, CLCONE_EINVAL,
                           "clcone_write_reactions: invalid arguments (n = %d)", n);
    return write_numbers(path, 3 * n, 3, r, info, err);
}

clcone_status clc_write_forces_info(const char *path, int m, const double *f, const clcone_reactions_info *info,
                                       clcone_error *err)
{
    if (!path || m < 0 || (m > 0 && !f))
        return clc_fail(err, CLCONE_EINVAL, "clc_write_forces: invalid arguments (m = %d)", m);
    return write_numbers(path, m, 1, f, info, err);
}
