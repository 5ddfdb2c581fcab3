/* Scene files ("clcone-scene 1"): a line-oriented text format, one item a
 * line, so that every error can name its line. See docs/formats.md section 9.
 * Values are written with %.17g, which round-trips doubles exactly. */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIGNATURE CLCONE_SCENE_SIGNATURE
#define VERSION 1
#define MAX_TOKENS 24
/* Counts above this are surely corrupt, and would only make us allocate
 * gigabytes before finding out. */
#define MAX_ITEMS 100000000
/* The largest length (position, size, contact point, plane offset) a
 * scene may hold: a hundred thousand times any generated scene, and small
 * enough that lever arms and their squares (Jacobians, W) stay far from
 * overflow. */
#define MAX_LENGTH 1e8
#define MAX_LENGTH_TEXT "1e8"
/* The whole file is read first (so a pipe works) and split into lines
 * here. */
typedef struct reader {
    const char *path;
    const char *cur, *end;   /* unread bytes */
    char *line;              /* the current line, NUL-terminated, split */
    size_t cap;
    int lineno;
    char *tok[MAX_TOKENS];
    int ntok;
} reader;

static clcone_status rfail(reader *R, clcone_error *err, const char *fmt, const char *a, const char *b)
{
    char m[512];
    snprintf(m, sizeof m, fmt, a, b);
    return clc_fail(err, CLCONE_EFORMAT, "%s:%d: %s", R->path, R->lineno, m);
}

/* Next line that is neither blank nor a comment, split into tokens;
 * 0 at end of file. */
static int next_line(reader *R, clcone_error *err, clcone_status *st)
{
    *st = CLCONE_OK;
    while (R->cur < R->end) {
        const char *nl = memchr(R->cur, '\n', (size_t)(R->end - R->cur));
        size_t len = (size_t)((nl ? nl : R->end) - R->cur);
        char *p, *save = NULL;
        R->lineno++;
        if (len + 1 > R->cap) {
            char *bigger = realloc(R->line, len + 1);
            if (!bigger) {
                *st = clc_fail(err, CLCONE_ENOMEM, "%s:%d: out of memory for a line of %zu bytes", R->path,
                                  R->lineno, len);
                return 0;
            }
            R->line = bigger;
            R->cap = len + 1;
        }
        memcpy(R->line, R->cur, len);
        R->line[len] = 0;
        R->cur = nl ? nl + 1 : R->end;
        if (memchr(R->line, 0, len)) {
            *st = rfail(R, err, "NUL byte in the line (not a scene file?)%s%s", "", "");
            return 0;
        }
        p = R->line;
        while (*p == ' ' || *p == '\t') ++p;
        if (*p == '#' || *p == '\r' || *p == 0) continue;
        R->ntok = 0;
        for (char *t = strtok_r(p, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
            if (t[0] == '#') break; /* a comment to the end of the line, after the values */
            if (R->ntok == MAX_TOKENS) {
                *st = rfail(R, err, "too many fields (more than %s)%s", "24", "");
                return 0;
            }
            R->tok[R->ntok++] = t;
        }
        return 1;
    }
    return 0;
}

static clcone_status expect_line(reader *R, const char *what, clcone_error *err)
{
    clcone_status st;
    if (next_line(R, err, &st)) return CLCONE_OK;
    if (st) return st;
    return clc_fail(err, CLCONE_EFORMAT, "%s: file ends after line %d, expected %s (truncated?)", R->path,
                       R->lineno, what);
}

static clcone_status num(reader *R, int k, const char *what, double *v, clcone_error *err)
{
    if (!clc_parse_real(R->tok[k], v))
        return rfail(R, err, "%s: '%s' is not a finite number", what, R->tok[k]);
    return CLCONE_OK;
}

static clcone_status integer(reader *R, int k, const char *what, long lo, long hi, int *v, clcone_error *err)
{
    long x;
    if (!clc_parse_long(R->tok[k], &x) || x < lo || x > hi) {
        char m[160];
        snprintf(m, sizeof m, "%s: '%s' is not an integer in [%ld, %ld]", what, R->tok[k], lo, hi);
        return clc_fail(err, CLCONE_EFORMAT, "%s:%d: %s", R->path, R->lineno, m);
    }
    *v = (int)x;
    return CLCONE_OK;
}

static clcone_status nums(reader *R, int k0, int n, const char *what, double *out, clcone_error *err)
{
    clcone_status st;
    for (int k = 0; k < n; ++k)
        if ((st = num(R, k0 + k, what, &out[k], err))) return st;
    return CLCONE_OK;
}

/* n lengths (what) within MAX_LENGTH in magnitude; item names
 * the body, contact or plane. */
static clcone_status bounded(reader *R, int k0, int n, const char *what, const char *item, double *out,
                             clcone_error *err)
{
    clcone_status st = nums(R, k0, n, what, out, err);
    for (int k = 0; k < n && !st; ++k)
        if (fabs(out[k]) > MAX_LENGTH) {
            char m[160];
            snprintf(m, sizeof m, "%s: %s %s is beyond the scene bound %s in magnitude", item, what, R->tok[k0 + k],
                     MAX_LENGTH_TEXT);
            return clc_fail(err, CLCONE_EFORMAT, "%s:%d: %s", R->path, R->lineno, m);
        }
    return st;
}

/* A line "KEY v..." with exactly nval values. */
static clcone_status keyed(reader *R, const char *key, int nval, clcone_error *err)
{
    clcone_status st;
    char m[64];
    snprintf(m, sizeof m, "'%s'", key);
    if ((st = expect_line(R, m, err))) return st;
    if (strcmp(R->tok[0], key) != 0) return rfail(R, err, "expected '%s', found '%s'", key, R->tok[0]);
    if (R->ntok != nval + 1) {
        char n[16];
        snprintf(n, sizeof n, "%d", nval);
        return rfail(R, err, "'%s' takes %s values", key, n);
    }
    return CLCONE_OK;
}

/* "KEY N": N items of at least `fields` fields each follow, one a line.
 * Each field takes a byte and a separator, so a count that the rest of
 * the file cannot hold is refused here, before anything is allocated for
 * it. */
static clcone_status count_line(reader *R, const char *key, const char *item, int fields, int *n,
                                clcone_error *err)
{
    clcone_status st;
    size_t room;
    if ((st = keyed(R, key, 1, err)) || (st = integer(R, 1, key, 0, MAX_ITEMS, n, err))) return st;
    room = (size_t)(R->end - R->cur);
    if ((uint64_t)*n * 2 * (uint64_t)fields > room)
        return clc_fail(err, CLCONE_EFORMAT,
                           "%s:%d: %s %d, but the remaining %zu bytes hold at most %zu %s lines of %d fields "
                           "(truncated file or wrong count)",
                           R->path, R->lineno, key, *n, room, room / (2 * (size_t)fields), item, fields);
    return CLCONE_OK;
}

/* Turns a validation failure into one naming the line. */
static clcone_status at_line(reader *R, clcone_status st, clcone_error *err)
{
    if (st) {
        clc_error_prefix(err, "%s:%d", R->path, R->lineno);
        if (err) err->code = CLCONE_EFORMAT;
        return CLCONE_EFORMAT;
    }
    return CLCONE_OK;
}

static clcone_status read_body(reader *R, clcone_world *w, int i, clcone_error *err)
{
    clcone_shape *sh = &w->shapes[i];
    clcone_body *b = &w->s.bodies[i];
    int box, k = 2;
    double ext = 0;
    char item[32];
    clcone_status st;
    if ((st = expect_line(R, "a body line", err))) return st;
    box = strcmp(R->tok[0], "box") == 0;
    if (!box && strcmp(R->tok[0], "sphere") != 0)
        return rfail(R, err, "expected a body line ('sphere' or 'box')%s, found '%s'", "", R->tok[0]);
    if (R->ntok != (box ? 18 : 16))
        return rfail(R, err, "%s line needs %s fields", R->tok[0], box ? "18" : "16");
    sh->kind = box ? CLCONE_SHAPE_BOX : CLCONE_SHAPE_SPHERE;
    snprintf(item, sizeof item, "body %d", i);
    if ((st = num(R, 1, "mass", &sh->mass, err)) || (st = bounded(R, k, box ? 3 : 1, "size", item, sh->size, err)))
        return st;
    k += box ? 3 : 1;
    if ((st = bounded(R, k, 3, "position", item, b->x, err)) || (st = nums(R, k + 3, 4, "quaternion", sh->quat, err))
        || (st = nums(R, k + 7, 6, "velocity", b->v, err)))
        return st;
    if ((st = at_line(R, clc_shape_validate(sh, i, err), err))) return st;
    /* The solve starts from v + dt g: what would overflow there is refused
     * here, where the line can still be named. */
    for (int d = 0; d < 3; ++d)
        if (!isfinite(b->v[d] + w->dt * w->gravity[d]))
            return rfail(R, err, "free velocity v + dt gravity of this body overflows%s%s", "", "");
    /* the inertia (mass times a size squared) and the kinetic energy must
     * be numbers for the stepper and its log */
    for (int d = 0; d < (box ? 3 : 1); ++d) ext = fmax(ext, sh->size[d]);
    if (!isfinite(sh->mass * (1 + ext * ext) * (1 + clc_dot3(b->v, b->v) + clc_dot3(b->v + 3, b->v + 3))))
        return rfail(R, err, "%s: mass %s with this size and velocity overflows its inertia or kinetic energy",
                     item, R->tok[1]);
    clc_body_set_mass(b, sh);
    return at_line(R, clc_body_validate(b, i, err), err);
}

static clcone_status read_contact(reader *R, clcone_world *w, int i, clcone_error *err)
{
    clcone_contact *c = &w->s.contacts[i];
    clcone_status st;
    char item[32];
    snprintf(item, sizeof item, "contact %d", i);
    if ((st = keyed(R, "contact", 10, err))) return st;
    if ((st = integer(R, 1, "body a", -2147483647L, 2147483647L, &c->a, err)) ||
        (st = integer(R, 2, "body b", -2147483647L, 2147483647L, &c->b, err)) ||
        (st = bounded(R, 3, 3, "point", item, c->point, err)) || (st = nums(R, 6, 3, "normal", c->normal, err)) ||
        (st = num(R, 9, "mu", &c->mu, err)) || (st = num(R, 10, "gap", &c->gap, err)))
        return st;
    return at_line(R, clc_contact_validate(&w->s, i, err), err);
}

static clcone_status read_world(reader *R, clcone_world *w, clcone_error *err)
{
    int nb, np, nc, version;
    clcone_status st;
    clcone_world hdr;
    if ((st = expect_line(R, "the signature", err))) return st;
    if (strcmp(R->tok[0], SIGNATURE) != 0 || R->ntok != 2)
        return rfail(R, err, "not a clcone scene file (first line must be '%s %s')", SIGNATURE, "1");
    if ((st = integer(R, 1, "version", 0, 2147483647L, &version, err))) return st;
    if (version != VERSION) return rfail(R, err, "scene file version %s is not supported (only %s)", R->tok[1], "1");
    memset(&hdr, 0, sizeof hdr);
    /* each setting checked on its own line, so the message names it */
    if ((st = keyed(R, "dt", 1, err)) || (st = num(R, 1, "dt", &hdr.dt, err))) return st;
    hdr.mu = 0;
    if ((st = at_line(R, clc_world_settings_validate(&hdr, err), err))) return st;
    if ((st = keyed(R, "gravity", 3, err)) || (st = nums(R, 1, 3, "gravity", hdr.gravity, err)) ||
        (st = keyed(R, "mu", 1, err)) || (st = num(R, 1, "mu", &hdr.mu, err)) ||
        (st = at_line(R, clc_world_settings_validate(&hdr, err), err)))
        return st;
    if ((st = count_line(R, "bodies", "body", 16, &nb, err))) return st;
    /* contacts are not known yet: grown below once their count is read */
    if ((st = clc_world_alloc(w, nb, 0, 0, err))) return st;
    w->dt = hdr.dt;
    w->mu = hdr.mu;
    memcpy(w->gravity, hdr.gravity, sizeof w->gravity);
    for (int i = 0; i < nb; ++i)
        if ((st = read_body(R, w, i, err))) return st;
    if ((st = count_line(R, "planes", "plane", 5, &np, err))) return st;
    free(w->planes);
    w->planes = clc_calloc((size_t)np + 1, sizeof *w->planes, err, "planes");
    if (!w->planes) return CLCONE_ENOMEM;
    for (int i = 0; i < np; ++i, w->nplanes = i) {
        char item[32];
        snprintf(item, sizeof item, "plane %d", i);
        if ((st = keyed(R, "plane", 4, err)) || (st = nums(R, 1, 3, "normal", w->planes[i].normal, err)) ||
            (st = bounded(R, 4, 1, "offset", item, &w->planes[i].offset, err)) ||
            (st = at_line(R, clc_plane_validate(&w->planes[i], i, err), err)))
            return st;
    }
    w->nplanes = np;
    if ((st = count_line(R, "contacts", "contact", 11, &nc, err))) return st;
    if (nc > CLCONE_SCENE_MAX_CONTACTS) return rfail(R, err, "too many contacts%s%s", "", "");
    free(w->s.contacts);
    w->s.contacts = clc_calloc((size_t)nc + 1, sizeof *w->s.contacts, err, "contacts");
    if (!w->s.contacts) return CLCONE_ENOMEM;
    for (int i = 0; i < nc; ++i) {
        w->s.ncontacts = i + 1;
        if ((st = read_contact(R, w, i, err))) return st;
    }
    w->s.ncontacts = nc;
    if ((st = expect_line(R, "'end'", err))) return st;
    if (strcmp(R->tok[0], "end") != 0 || R->ntok != 1)
        return rfail(R, err, "expected 'end' after the contacts%s, found '%s'", "", R->tok[0]);
    {
        clcone_status s2;
        if (next_line(R, err, &s2)) return rfail(R, err, "content after 'end'%s%s", "", "");
        return s2;
    }
}

clcone_status clc_parse_world(const char *name, const char *buf, size_t len, clcone_world *w,
                                 clcone_error *err)
{
    reader R;
    clcone_status st;
    memset(w, 0, sizeof *w);
    memset(&R, 0, sizeof R);
    R.path = name;
    R.cur = buf + clc_bom_len(buf, len);
    R.end = buf + len;
    st = read_world(&R, w, err);
    free(R.line);
    if (st) clcone_world_free(w);
    return st;
}

clcone_status clcone_read_world(const char *path, clcone_world *w, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, w);
    char *buf;
    size_t len;
    clcone_status st;
    memset(w, 0, sizeof *w);
    if ((st = clc_load_file(path, &buf, &len, err))) return st;
    st = clc_parse_world(path, buf, len, w, err);
    free(buf);
    return st;
}

clcone_status clcone_read_input_ext(const char *path, clcone_problem_parse_fn *hdf5, clcone_input *in,
                                    clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, in);
    return clc_read_input_with(path, in, clc_parse_world, hdf5, err);
}

clcone_status clcone_read_input(const char *path, clcone_input *in, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, in);
    return clcone_read_input_ext(path, NULL, in, err);
}

void clcone_input_free(clcone_input *in)
{
    if (!in) return;
    clcone_problem_free(&in->problem);
    clcone_world_free(&in->world);
    in->is_world = 0;
}

static int write_world(void *file, const void *ctx)
{
    FILE *f = file;
    const clcone_world *w = ctx;
    fprintf(f, "%s %d\n", SIGNATURE, VERSION);
    fprintf(f, "# %d bodies, %d planes, %d contacts; format: docs/formats.md section 9\n", w->s.nbodies, w->nplanes,
            w->s.ncontacts);
    fprintf(f, "dt %.17g\ngravity %.17g %.17g %.17g\nmu %.17g\n", w->dt, w->gravity[0], w->gravity[1],
            w->gravity[2], w->mu);
    fprintf(f, "bodies %d\n", w->s.nbodies);
    for (int i = 0; i < w->s.nbodies; ++i) {
        const clcone_shape *sh = &w->shapes[i];
        const clcone_body *b = &w->s.bodies[i];
        if (sh->kind == CLCONE_SHAPE_BOX)
            fprintf(f, "box %.17g %.17g %.17g %.17g", sh->mass, sh->size[0], sh->size[1], sh->size[2]);
        else
            fprintf(f, "sphere %.17g %.17g", sh->mass, sh->size[0]);
        fprintf(f, " %.17g %.17g %.17g %.17g %.17g %.17g %.17g", b->x[0], b->x[1], b->x[2], sh->quat[0], sh->quat[1],
                sh->quat[2], sh->quat[3]);
        fprintf(f, " %.17g %.17g %.17g %.17g %.17g %.17g\n", b->v[0], b->v[1], b->v[2], b->v[3], b->v[4], b->v[5]);
    }
    fprintf(f, "planes %d\n", w->nplanes);
    for (int i = 0; i < w->nplanes; ++i)
        fprintf(f, "plane %.17g %.17g %.17g %.17g\n", w->planes[i].normal[0], w->planes[i].normal[1],
                w->planes[i].normal[2], w->planes[i].offset);
    fprintf(f, "contacts %d\n", w->s.ncontacts);
    for (int i = 0; i < w->s.ncontacts; ++i) {
        const clcone_contact *c = &w->s.contacts[i];
        fprintf(f, "contact %d %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", c->a, c->b, c->point[0],
                c->point[1], c->point[2], c->normal[0], c->normal[1], c->normal[2], c->mu, c->gap);
    }
    fprintf(f, "end\n");
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_write_world(const char *path, const clcone_world *w, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, w);
    clcone_status st = clcone_world_validate(w, err);
    if (st) return st;
    return clc_write_atomic(path, write_world, w, err);
}
