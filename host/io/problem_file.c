/* A problem file of either format, told apart by its content, read and
 * validated; and any input of `clcone solve` (clcone_read_input): a scene
 * file, told apart here by its signature, goes to the scene parser that
 * the world layer hands in, so that reading never calls up into world/. */
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

clcone_status clc_parse_problem(const char *name, const char *buf, size_t len, clcone_problem_parse_fn *hdf5,
                                   clcone_problem *p, clcone_error *err)
{
    clcone_status s;
    /* HDF5 is libclcone_output's, so that libclcone links no HDF5 */
    if (clc_buf_is_hdf5(buf, len) && !hdf5)
        return clc_fail(err, CLCONE_ENOTSUP,
                           "%s: an FCLib HDF5 file: HDF5 is read by libclcone_output (clcone_read_problem_hdf5, "
                           "<clcone/output.h>); libclcone reads Siconos .dat", name);
    s = clc_buf_is_hdf5(buf, len) ? hdf5(name, buf, len, p, err) : clc_parse_dat(name, buf, len, p, err);
    if (s != CLCONE_OK) return s;
    s = clcone_problem_validate(p, err);
    if (s != CLCONE_OK) {
        clcone_problem_free(p);
        clc_error_prefix(err, "%s", name);
        /* Well-formed syntax with invalid values is still a bad file. */
        if (s == CLCONE_EINVAL) {
            s = CLCONE_EFORMAT;
            if (err) err->code = s;
        }
    }
    return s;
}

clcone_status clcone_read_problem_ext(const char *path, clcone_problem_parse_fn *hdf5, clcone_problem *p,
                                      clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, p);
    char *buf;
    size_t len;
    clcone_status s;
    memset(p, 0, sizeof *p);
    /* One read of the whole file, sniffed in memory: a pipe cannot be
     * rewound after a look at its first bytes. */
    s = clc_load_file(path, &buf, &len, err);
    if (s == CLCONE_OK) s = clc_parse_problem(path, buf, len, hdf5, p, err);
    free(buf);
    return s;
}

clcone_status clcone_read_problem(const char *path, clcone_problem *p, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, p);
    return clcone_read_problem_ext(path, NULL, p, err);
}

/* ------------------------------------------------------------------ */
/* Any input: a scene file or a problem file                           */
/* ------------------------------------------------------------------ */

/* The UTF-8 byte order mark that some editors put in front of a text. */
#define BOM "\xef\xbb\xbf"

size_t clc_bom_len(const char *buf, size_t len)
{
    return len >= 3 && memcmp(buf, BOM, 3) == 0 ? 3 : 0;
}

int clc_buf_is_world(const char *buf, size_t len)
{
    const char *p = buf + clc_bom_len(buf, len), *end = buf + len;
    const size_t n = sizeof CLCONE_SCENE_SIGNATURE - 1;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) ++p;
        if (p == end || *p != '#') break;
        p = memchr(p, '\n', (size_t)(end - p));
        if (!p) return 0;
    }
    return (size_t)(end - p) >= n && memcmp(p, CLCONE_SCENE_SIGNATURE, n) == 0 &&
           ((size_t)(end - p) == n || p[n] == ' ' || p[n] == '\t' || p[n] == '\r' || p[n] == '\n');
}

int clcone_is_world_file(const char *path)
{
    char *buf;
    size_t len;
    int is;
    if (!path || clc_load_file(path, &buf, &len, NULL)) return -1;
    is = clc_buf_is_world(buf, len);
    free(buf);
    return is;
}

clcone_status clc_read_input_with(const char *path, clcone_input *in, clc_scene_parse_fn parse_scene,
                                     clcone_problem_parse_fn *hdf5, clcone_error *err)
{
    char *buf;
    size_t len;
    clcone_status st;
    memset(in, 0, sizeof *in);
    if ((st = clc_load_file(path, &buf, &len, err))) return st;
    in->is_world = clc_buf_is_world(buf, len);
    st = in->is_world ? parse_scene(path, buf, len, &in->world, err)
                      : clc_parse_problem(path, buf, len, hdf5, &in->problem, err);
    free(buf);
    return st;
}
