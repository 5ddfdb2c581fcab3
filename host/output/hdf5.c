/* FCLib local problems in HDF5 (docs/formats.md section 4), in
 * libclcone_output: libclcone's readers are handed this parser
 * (clcone_read_problem_ext), so that libclcone links no HDF5. */
#include "output/fclib.h"
#include "io/io.h"

#include <clcone/output.h>

#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Stored datasets may be compressed, but a dataset claiming more than this
 * many times its stored bytes is taken as corrupt (typically declared with
 * no data written), so that a tiny file cannot make us allocate gigabytes. */
#define MAX_EXPANSION 1024

typedef struct h5file {
    const char *path;
    hid_t id;
} h5file;

/* Reads the whole dataset `name` of type class `cls` as element type `mem`
 * (elem bytes each) into a new buffer, requiring at least `min_count`
 * elements, or exactly that many with exact != 0. Returns NULL with *s set
 * on failure. */
static void *read_dataset(const h5file *f, const char *name, H5T_class_t cls,
                          hid_t mem, size_t elem, uint64_t min_count, int exact,
                          size_t *count, clcone_status *s, clcone_error *err)
{
    void *out = NULL;
    hid_t d, space, type;
    hssize_t np;
    H5T_class_t got;
    uint64_t stored;
    *count = 0;
    *s = CLCONE_OK;
    d = H5Dopen2(f->id, name, H5P_DEFAULT);
    if (d < 0) {
        *s = clc_fail(err, CLCONE_EFORMAT, "%s: missing dataset %s", f->path, name);
        return NULL;
    }
    type = H5Dget_type(d);
    got = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
    if (type >= 0) H5Tclose(type);
    space = H5Dget_space(d);
    np = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
    if (space >= 0) H5Sclose(space);
    stored = H5Dget_storage_size(d);
    if (got != cls) {
        *s = clc_fail(err, CLCONE_EFORMAT, "%s: dataset %s holds %s, expected %s",
                         f->path, name, got == H5T_INTEGER ? "integers"
                         : got == H5T_FLOAT ? "reals" : "neither integers nor reals",
                         cls == H5T_INTEGER ? "integers" : "reals");
    } else if (np < 0) {
        *s = clc_fail(err, CLCONE_EFORMAT, "%s: cannot read the shape of dataset %s",
                         f->path, name);
    } else if ((uint64_t)np < min_count || (exact && (uint64_t)np != min_count)) {
        *s = clc_fail(err, CLCONE_EFORMAT,
                         "%s: dataset %s has %lld elements, expected %s%llu", f->path,
                         name, (long long)np, exact ? "" : "at least ",
                         (unsigned long long)min_count);
    } else if (np > 0 && (stored == 0 || (uint64_t)np / MAX_EXPANSION > stored / elem)) {
        *s = clc_fail(err, CLCONE_EFORMAT,
                         "%s: dataset %s claims %lld elements but stores only %llu bytes",
                         f->path, name, (long long)np, (unsigned long long)stored);
    } else if (!(out = clc_calloc((size_t)np, elem, err, name))) {
        *s = CLCONE_ENOMEM;
    } else if (np > 0 && H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        *s = clc_fail(err, CLCONE_EFORMAT, "%s: cannot read dataset %s", f->path, name);
    }
    H5Dclose(d);
    if (*s != CLCONE_OK) {
        free(out);
        return NULL;
    }
    *count = (size_t)np;
    return out;
}

static clcone_status read_int(const h5file *f, const char *name, int *v,
                              clcone_error *err)
{
    size_t count;
    clcone_status s;
    /* read wide: HDF5 would clamp a larger value to INT_MAX, and the
     * message would name a number that is not in the file */
    long long *buf = read_dataset(f, name, H5T_INTEGER, H5T_NATIVE_LLONG, sizeof *buf, 1, 1,
                                  &count, &s, err);
    if (buf && (*buf < INT_MIN || *buf > INT_MAX))
        s = clc_fail(err, CLCONE_EFORMAT, "%s: %s = %lld is out of range (at most %d in magnitude)", f->path,
                        name, *buf, INT_MAX);
    else if (buf) *v = (int)*buf;
    free(buf);
    return s;
}

static clcone_status check_finite(const h5file *f, const char *name,
                                  const double *x, size_t count, int nonneg,
                                  clcone_error *err)
{
    size_t k;
    for (k = 0; k < count; ++k)
        if (!isfinite(x[k]) || (nonneg && x[k] < 0))
            return clc_fail(err, CLCONE_EFORMAT, "%s: %s[%zu] = %g, expected a finite%s real",
                               f->path, name, k, x[k], nonneg ? " non-negative" : "");
    return CLCONE_OK;
}

/* Compressed storage (CSR: outer = rows; CSC: outer = columns): expands
 * the pointers ptr[0..outer] into one outer index per entry and checks the
 * inner indices. The entries used are ptr[0] .. ptr[outer]-1. */
static clcone_status expand_compressed(const h5file *f, int dim, const int *ptr,
                                       size_t nptr, const int *inner, size_t ninner,
                                       size_t nx, int **outer_idx, size_t *first,
                                       size_t *count, clcone_error *err)
{
    int r;
    size_t k;
    *outer_idx = NULL;
    if (nptr < (size_t)dim + 1)
        return clc_fail(err, CLCONE_EFORMAT,
                           "%s: /fclib_local/W/p has %zu pointers, expected %d", f->path,
                           nptr, dim + 1);
    if (ptr[0] < 0)
        return clc_fail(err, CLCONE_EFORMAT, "%s: /fclib_local/W/p[0] = %d is negative",
                           f->path, ptr[0]);
    for (r = 0; r < dim; ++r)
        if (ptr[r + 1] < ptr[r])
            return clc_fail(err, CLCONE_EFORMAT,
                               "%s: /fclib_local/W/p[%d] = %d is less than p[%d] = %d "
                               "(pointers must not decrease)",
                               f->path, r + 1, ptr[r + 1], r, ptr[r]);
    if ((size_t)ptr[dim] > ninner || (size_t)ptr[dim] > nx)
        return clc_fail(err, CLCONE_EFORMAT,
                           "%s: /fclib_local/W/p[%d] = %d entries, but W/i has %zu and "
                           "W/x %zu", f->path, dim, ptr[dim], ninner, nx);
    for (k = (size_t)ptr[0]; k < (size_t)ptr[dim]; ++k)
        if (inner[k] < 0 || inner[k] >= dim)
            return clc_fail(err, CLCONE_EFORMAT,
                               "%s: /fclib_local/W/i[%zu] = %d is out of range [0, %d)",
                               f->path, k, inner[k], dim);
    *first = (size_t)ptr[0];
    *count = (size_t)(ptr[dim] - ptr[0]);
    *outer_idx = clc_calloc(*count, sizeof **outer_idx, err, "W entries");
    if (!*outer_idx) return CLCONE_ENOMEM;
    for (r = 0; r < dim; ++r)
        for (k = (size_t)ptr[r]; k < (size_t)ptr[r + 1]; ++k)
            (*outer_idx)[k - *first] = r;
    return CLCONE_OK;
}

static clcone_status check_triplet_index(const h5file *f, const char *name,
                                         const int *idx, size_t count, int dim,
                                         clcone_error *err)
{
    size_t k;
    for (k = 0; k < count; ++k)
        if (idx[k] < 0 || idx[k] >= dim)
            return clc_fail(err, CLCONE_EFORMAT, "%s: %s[%zu] = %d is out of range [0, %d)",
                               f->path, name, k, idx[k], dim);
    return CLCONE_OK;
}

static clcone_status read_local(const h5file *f, clcone_problem *p,
                                clcone_error *err)
{
    int dim, m, ncol, nz, n, *ptr = NULL, *idx = NULL, *expanded = NULL;
    double *x = NULL, *q = NULL, *mu = NULL;
    size_t np, ni, nx, nq, nmu, first = 0, count = 0;
    const int *rows, *cols;
    clcone_status s;

    if (H5Lexists(f->id, "fclib_local", H5P_DEFAULT) <= 0)
        return clc_fail(err, CLCONE_EFORMAT, "%s: no /fclib_local group: %s", f->path,
                           H5Lexists(f->id, "fclib_global", H5P_DEFAULT) > 0
                               ? "a global FCLib problem (/fclib_global), which is not supported"
                               : "not an FCLib local problem");
    if ((s = read_int(f, "/fclib_local/spacedim", &dim, err)) ||
        (s = read_int(f, "/fclib_local/W/m", &m, err)) ||
        (s = read_int(f, "/fclib_local/W/n", &ncol, err)) ||
        (s = read_int(f, "/fclib_local/W/nz", &nz, err)))
        return s;
    if (dim != 3)
        return clc_fail(err, CLCONE_EFORMAT,
                           "%s: /fclib_local/spacedim = %d, expected 3 (only 3D problems)",
                           f->path, dim);
    if (m <= 0 || m % 3 != 0 || ncol != m)
        return clc_fail(err, CLCONE_EFORMAT,
                           "%s: W is %d x %d, expected a square 3n x 3n matrix with n >= 1",
                           f->path, m, ncol);
    n = m / 3;
    q = read_dataset(f, "/fclib_local/vectors/q", H5T_FLOAT, H5T_NATIVE_DOUBLE, sizeof *q,
                     (uint64_t)m, 1, &nq, &s, err);
    if (s || (s = check_finite(f, "/fclib_local/vectors/q", q, nq, 0, err))) goto done;
    mu = read_dataset(f, "/fclib_local/vectors/mu", H5T_FLOAT, H5T_NATIVE_DOUBLE,
                      sizeof *mu, (uint64_t)n, 1, &nmu, &s, err);
    if (s || (s = check_finite(f, "/fclib_local/vectors/mu", mu, nmu, 1, err))) goto done;
    /* Every encoding has p, i and x; a triplet needs nz of each. */
    ptr = read_dataset(f, "/fclib_local/W/p", H5T_INTEGER, H5T_NATIVE_INT, sizeof *ptr,
                       nz >= 0 ? (uint64_t)nz : 1, 0, &np, &s, err);
    if (s) goto done;
    idx = read_dataset(f, "/fclib_local/W/i", H5T_INTEGER, H5T_NATIVE_INT, sizeof *idx,
                       nz >= 0 ? (uint64_t)nz : 0, 0, &ni, &s, err);
    if (s) goto done;
    x = read_dataset(f, "/fclib_local/W/x", H5T_FLOAT, H5T_NATIVE_DOUBLE, sizeof *x,
                     nz >= 0 ? (uint64_t)nz : 0, 0, &nx, &s, err);
    if (s) goto done;
    if (nz == -2 || nz == -1) {
        s = expand_compressed(f, m, ptr, np, idx, ni, nx, &expanded, &first, &count, err);
        if (s) goto done;
        /* CSR: p runs over rows and i holds columns; CSC the reverse. */
        rows = nz == -2 ? expanded : idx + first;
        cols = nz == -2 ? idx + first : expanded;
    } else if (nz >= 0) {
        /* Triplet: i = row, p = column (CSparse, against fclib.h's comment;
         * docs/formats.md 4). */
        if ((s = check_triplet_index(f, "/fclib_local/W/i", idx, (size_t)nz, m, err)) ||
            (s = check_triplet_index(f, "/fclib_local/W/p", ptr, (size_t)nz, m, err)))
            goto done;
        count = (size_t)nz;
        rows = idx;
        cols = ptr;
    } else {
        s = clc_fail(err, CLCONE_EFORMAT,
                        "%s: /fclib_local/W/nz = %d, expected -2 (CSR), -1 (CSC) or a "
                        "triplet count >= 0", f->path, nz);
        goto done;
    }
    s = clc_problem_from_entries(p, n, count, rows, cols, x + first, err);
    if (s) goto done;
    memcpy(p->q, q, sizeof *q * (size_t)m);
    memcpy(p->mu, mu, sizeof *mu * (size_t)n);
done:
    free(ptr);
    free(idx);
    free(x);
    free(q);
    free(mu);
    free(expanded);
    return s;
}

clcone_status clc_parse_fclib_hdf5(const char *name, const char *buf, size_t len, clcone_problem *p,
                                      clcone_error *err)
{
    H5E_auto2_t old_fn = NULL;
    void *old_data = NULL;
    h5file f;
    hid_t fapl;
    clcone_status s;

    memset(p, 0, sizeof *p);
    /* The library must never print: silence HDF5's error stack printing for
     * the duration of the call and restore the caller's handler after. */
    H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    f.path = name;
    /* The bytes already read are opened as an in-memory file image, so a
     * pipe, read once, works like a regular file. The core driver refuses
     * an image whose name exists on disk, so it gets one that cannot
     * (/dev/null is no directory). */
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    f.id = -1;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 && H5Pset_file_image(fapl, (void *)buf, len) >= 0)
        f.id = H5Fopen("/dev/null/clcone-image", H5F_ACC_RDONLY, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (f.id < 0) {
        s = clc_fail(err, CLCONE_EFORMAT,
                        "%s: has the HDF5 signature but cannot be opened as HDF5 "
                        "(corrupt or truncated file)", name);
    } else {
        s = read_local(&f, p, err);
        H5Fclose(f.id);
    }
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    if (s != CLCONE_OK) clcone_problem_free(p);
    return s;
}

clcone_status clcone_read_problem_hdf5(const char *path, clcone_problem *p, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, p);
    return clcone_read_problem_ext(path, clc_parse_fclib_hdf5, p, err);
}

clcone_status clcone_read_input_hdf5(const char *path, clcone_input *in, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, in);
    return clcone_read_input_ext(path, clc_parse_fclib_hdf5, in, err);
}
