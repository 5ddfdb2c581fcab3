/* Problem and reaction file I/O: the shared Siconos/FCLib files, exact
 * round trips, orientation (column-major .dat, CSR/CSC/triplet HDF5) and
 * malformed inputs with their error codes and messages. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <hdf5.h>
#include <math.h>
#include <string.h>

#include "io/io.h"
#include "testutil.h"

/* README.md of the shared problems: n, non-zero entries of W, non-zero
 * 3x3 blocks, mu, ||q||_2 (4 digits), in SHARED_PROBLEMS order. */
static const struct {
    int n, nnz, blocks;
    double mu, qnorm;
} EXPECTED[] = {
    {1, 9, 1, 0.1, 3.742},       {1, 9, 1, 0.6, 0.3254},     {1, 9, 1, 0.7, 0.1974},
    {2, 36, 4, 0.7, 8.312},      {3, 9, 3, 0.1, 5.745},      {3, 9, 3, 0.1, 5.745},
    {3, 81, 9, 0.1, 1.972},      {4, 144, 16, 0.04, 9.920},  {4, 144, 16, 0.7, 0.4224},
    {4, 144, 16, 0.7, 2.101},    {4, 144, 16, 0.7, 7.367},   {4, 144, 16, 0.7, 2.742},
    {5, 225, 25, 0.7, 0.9164},   {5, 225, 25, 0.7, 2.915},   {5, 225, 25, 0.7, 3.410},
    {9, 121, 17, 0.8, 3.602},    {23, 1377, 153, 0.3, 0.7375}, {24, 1476, 164, 0.3, 1.307},
    {52, 5328, 592, 0.7, 63.98}, {54, 1281, 172, 0.4, 52.41}, {225, 9099, 1011, 0.7, 11.31},
    {276, 11214, 1246, 0.7, 8.952}, {286, 11772, 1308, 0.7, 7.084},
};

static double W_at(const clcone_problem *p, int i, int j)
{
    int k;
    for (k = p->row_ptr[i / 3]; k < p->row_ptr[i / 3 + 1]; ++k)
        if (p->col[k] == j / 3) return p->blocks[9 * k + (i % 3) * 3 + j % 3];
    return 0.0;
}

static int count_nonzero(const clcone_problem *p)
{
    int k, c = 0;
    for (k = 0; k < 9 * p->nnzb; ++k) c += p->blocks[k] != 0.0;
    return c;
}

/* Bit-exact equality of two problems. */
static void assert_same_problem(const clcone_problem *a, const clcone_problem *b)
{
    ck_assert_int_eq(a->n, b->n);
    ck_assert_int_eq(a->nnzb, b->nnzb);
    ck_assert_int_eq(a->nprob, b->nprob);
    ck_assert_int_eq(memcmp(a->row_ptr, b->row_ptr, sizeof(int) * (size_t)(a->n + 1)), 0);
    ck_assert_int_eq(memcmp(a->col, b->col, sizeof(int) * (size_t)a->nnzb), 0);
    ck_assert_int_eq(memcmp(a->blocks, b->blocks, sizeof(double) * 9 * (size_t)a->nnzb), 0);
    ck_assert_int_eq(memcmp(a->q, b->q, sizeof(double) * 3 * (size_t)a->n), 0);
    ck_assert_int_eq(memcmp(a->mu, b->mu, sizeof(double) * (size_t)a->n), 0);
}

static void read_ok(const char *path, clcone_problem *p)
{
    clcone_error err = {0};
    clcone_status s = clcone_read_problem_hdf5(path, p, &err);
    ck_assert_msg(s == CLCONE_OK, "%s: %s", path, err.msg);
}

/* A fresh temporary path (the file exists, empty). */
static char *temp_path(void)
{
    char *path = strdup(test_write_temp("", 0));
    ck_assert_ptr_nonnull(path);
    return path;
}

/* ------------------------------------------------------------------ */
/* The shared problem files                                            */
/* ------------------------------------------------------------------ */

START_TEST(test_read_shared)
{
    const char *name = SHARED_PROBLEMS[_i];
    clcone_problem p;
    double qn = 0;
    int c;
    ck_assert_int_eq(NSHARED_PROBLEMS, (int)(sizeof EXPECTED / sizeof EXPECTED[0]));
    read_ok(test_problem_path(name), &p);
    ck_assert_msg(p.n == EXPECTED[_i].n, "%s: n = %d, expected %d", name, p.n, EXPECTED[_i].n);
    ck_assert_msg(count_nonzero(&p) == EXPECTED[_i].nnz, "%s: %d non-zero entries, expected %d",
                  name, count_nonzero(&p), EXPECTED[_i].nnz);
    ck_assert_msg(p.nnzb == EXPECTED[_i].blocks, "%s: %d blocks, expected %d", name, p.nnzb,
                  EXPECTED[_i].blocks);
    ck_assert_int_eq(p.nprob, 1);
    for (c = 0; c < p.n; ++c) ck_assert_double_eq(p.mu[c], EXPECTED[_i].mu);
    for (c = 0; c < 3 * p.n; ++c) qn += p.q[c] * p.q[c];
    ck_assert_msg(fabs(sqrt(qn) / EXPECTED[_i].qnorm - 1) < 1e-3, "%s: ||q|| = %g", name,
                  sqrt(qn));
    clcone_problem_free(&p);
}
END_TEST

START_TEST(test_roundtrip_shared)
{
    clcone_problem a, b;
    clcone_error err = {0};
    char *path = temp_path();
    read_ok(test_problem_path(SHARED_PROBLEMS[_i]), &a);
    ck_assert_msg(clcone_write_problem_dat(path, &a, &err) == CLCONE_OK, "%s", err.msg);
    read_ok(path, &b);
    assert_same_problem(&a, &b);
    clcone_problem_free(&a);
    clcone_problem_free(&b);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(test_dense_equals_sbm)
{
    clcone_problem a, b;
    int k;
    read_ok(test_problem_path("FC3D_Example1.dat"), &a);
    read_ok(test_problem_path("FC3D_Example1_SBM.dat"), &b);
    assert_same_problem(&a, &b);
    for (k = 0; k < 9 * a.nnzb; ++k) ck_assert_double_eq(a.blocks[k], k % 9 % 4 == 0);
    clcone_problem_free(&a);
    clcone_problem_free(&b);
}
END_TEST

START_TEST(test_known_1c)
{
    static const double W[9] = {15, -1, -2, -1, 14, 1, -2, 1, 16};
    clcone_problem p;
    int k;
    read_ok(test_problem_path("FrictionContact3D_1c.dat"), &p);
    ck_assert_int_eq(p.n, 1);
    ck_assert_int_eq(p.nnzb, 1);
    for (k = 0; k < 9; ++k) ck_assert_double_eq(p.blocks[k], W[k]);
    ck_assert_double_eq(p.q[0], -1);
    ck_assert_double_eq(p.q[1], 2);
    ck_assert_double_eq(p.q[2], 3);
    ck_assert_double_eq(p.mu[0], 0.1);
    clcone_problem_free(&p);
}
END_TEST

/* Rover11035's dense W is not symmetric: its second token is W[1][0] and
 * its fourth W[0][1] (column-major), so a row-major reader swaps them. */
START_TEST(test_dense_column_major)
{
    clcone_problem p;
    read_ok(test_problem_path("Rover11035.dat"), &p);
    ck_assert_double_eq(W_at(&p, 1, 0), strtod("-1.426574206813656375825161e-04", NULL));
    ck_assert_double_eq(W_at(&p, 0, 1), strtod("-1.438285701497408206397943e-04", NULL));
    ck_assert_double_eq(W_at(&p, 2, 0), strtod("7.917137724989218054358342e-04", NULL));
    ck_assert_double_eq(p.q[0], strtod("-5.417704922170969716876954e-02", NULL));
    clcone_problem_free(&p);
}
END_TEST

/* An independent reading of each .dat file with fscanf (docs/formats.md 3.4,
 * 3.5): every W value, q and mu must sit where the token order says. */
static double next_num(FILE *f)
{
    double v;
    ck_assert_int_eq(fscanf(f, "%lf", &v), 1);
    return v;
}

START_TEST(test_raw_tokens)
{
    const char *name = SHARED_PROBLEMS[_i];
    clcone_problem p;
    FILE *f;
    int n, N, c, k, a;
    if (strstr(name, ".hdf5") && !strstr(name, ".hdf5.dat")) return;
    read_ok(test_problem_path(name), &p);
    f = fopen(test_problem_path(name), "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_double_eq(next_num(f), 3);
    n = (int)next_num(f);
    N = 3 * n;
    if (next_num(f) == 0) {
        for (k = 0; k < 4; ++k) ck_assert_double_eq(next_num(f), N);
        for (k = 0; k < N * N; ++k) ck_assert_double_eq(W_at(&p, k % N, k / N), next_num(f));
    } else {
        int nb, nb0, filled1, *rp, *bc;
        ck_assert_double_eq(next_num(f), N);
        ck_assert_double_eq(next_num(f), N);
        nb = (int)next_num(f);
        nb0 = (int)next_num(f);
        ck_assert_int_eq(nb0, n);
        ck_assert_double_eq(next_num(f), n);
        for (k = 0; k < 2 * n; ++k) ck_assert_double_eq(next_num(f), 3 * (k % n + 1));
        filled1 = (int)next_num(f);
        ck_assert_double_eq(next_num(f), nb);
        rp = malloc(sizeof *rp * (size_t)filled1);
        bc = malloc(sizeof *bc * (size_t)nb);
        for (k = 0; k < filled1; ++k) rp[k] = (int)next_num(f);
        for (k = 0; k < nb; ++k) bc[k] = (int)next_num(f);
        for (c = 0; c + 1 < filled1; ++c)
            for (k = rp[c]; k < rp[c + 1]; ++k) {
                ck_assert_double_eq(next_num(f), k);
                for (a = 0; a < 9; ++a)
                    ck_assert_double_eq(W_at(&p, 3 * c + a % 3, 3 * bc[k] + a / 3), next_num(f));
            }
        free(rp);
        free(bc);
    }
    for (k = 0; k < N; ++k) ck_assert_double_eq(p.q[k], next_num(f));
    for (c = 0; c < n; ++c) ck_assert_double_eq(p.mu[c], next_num(f));
    fclose(f);
    clcone_problem_free(&p);
}
END_TEST

/* Capsules-i101-404: block 1 sits in block row 0, block column 38; its
 * values 2 and 4 (column-major) are W[1][114] and W[0][115]. */
START_TEST(test_sbm_column_major)
{
    clcone_problem p;
    read_ok(test_problem_path("Capsules-i101-404.dat"), &p);
    ck_assert_int_eq(p.col[1], 38);
    ck_assert_double_eq(W_at(&p, 1, 114), strtod("5.414914774349258858032741e-02", NULL));
    ck_assert_double_eq(W_at(&p, 0, 115), strtod("3.902652428608803236720348e-01", NULL));
    clcone_problem_free(&p);
}
END_TEST

/* Every CSR entry of Capsules-i125-1213.hdf5, read with HDF5 directly,
 * lands at W[row][i[k]]: a transposed reader fails (asymmetry 1.3e-3). */
START_TEST(test_hdf5_capsules_csr)
{
    const char *path = test_problem_path("Capsules-i125-1213.hdf5");
    clcone_problem p;
    int ptr[859], *idx = malloc(11772 * sizeof *idx), r, k;
    double *x = malloc(11772 * sizeof *x);
    hid_t f, d;
    read_ok(path, &p);
    ck_assert_int_eq(p.n, 286);
    ck_assert_int_eq(count_nonzero(&p), 11772);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    d = H5Dopen2(f, "/fclib_local/W/p", H5P_DEFAULT);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr), 0);
    H5Dclose(d);
    d = H5Dopen2(f, "/fclib_local/W/i", H5P_DEFAULT);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, idx), 0);
    H5Dclose(d);
    d = H5Dopen2(f, "/fclib_local/W/x", H5P_DEFAULT);
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    H5Dclose(d);
    H5Fclose(f);
    ck_assert_int_eq(ptr[858], 11772);
    for (r = 0; r < 858; ++r)
        for (k = ptr[r]; k < ptr[r + 1]; ++k) ck_assert_double_eq(W_at(&p, r, idx[k]), x[k]);
    free(idx);
    free(x);
    clcone_problem_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Synthetic FCLib HDF5 files                                          */
/* ------------------------------------------------------------------ */

/* A non-symmetric 6x6 W whose block (1,0) is zero. */
static const double HW[36] = {
    4,   1,   0.5, 0.2, 0,    0.1,
    0.3, 5,   0,   0,   0,    0,
    0,   0.7, 6,   0,   0,    0,
    0,   0,   0,   3,   0.4,  0,
    0,   0,   0,   0.6, 2,    0.8,
    0,   0,   0,   0,   0.25, 7,
};
static const double HQ[6] = {-1, 0, 0, -1, 0.5, 0};
static const double HMU[2] = {0.5, 0.3};

typedef struct h5spec {
    int spacedim, m, ncol, nz;
    int p[64], np, i[64], ni;
    double x[64], q[6], mu[2];
    int nx, nq, nmu;
    int no_mu, global, userblock;
    long long nz64; /* non-zero: W/nz written as a 64-bit integer of this value */
} h5spec;

/* The FCLib encoding of HW: nz = -2 CSR, -1 CSC, 0 triplet (with one
 * explicit zero in block (1,0) and W[0][0] split into two duplicates). */
static void h5spec_make(h5spec *s, int nz)
{
    int a, b, k = 0;
    memset(s, 0, sizeof *s);
    s->spacedim = 3;
    s->m = s->ncol = 6;
    for (a = 0; a < 6; ++a) {
        if (nz < 0) s->p[a] = k;
        for (b = 0; b < 6; ++b) {
            double v = nz == -1 ? HW[6 * b + a] : HW[6 * a + b];
            if (v == 0) continue;
            if (nz >= 0) {
                s->i[k] = a;
                s->p[k] = b;
            } else {
                s->i[k] = b;
            }
            s->x[k++] = v;
        }
    }
    if (nz < 0) {
        s->p[6] = k;
        s->np = 7;
        s->nz = nz;
    } else {
        s->x[0] = 3;            /* W[0][0] = 3 + 1 */
        s->i[k] = 0;
        s->p[k] = 0;
        s->x[k++] = 1;
        s->i[k] = 4;            /* explicit zero: block (1,0) stays out */
        s->p[k] = 1;
        s->x[k++] = 0;
        s->np = k;
        s->nz = k;
    }
    s->ni = s->nx = k;
    memcpy(s->q, HQ, sizeof HQ);
    memcpy(s->mu, HMU, sizeof HMU);
    s->nq = 6;
    s->nmu = 2;
}

static void h5_put(hid_t loc, const char *name, hid_t type, int count, const void *data)
{
    hsize_t dim = (hsize_t)count;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    if (count > 0)
        ck_assert_int_ge(H5Dwrite(d, type == H5T_STD_I32LE   ? H5T_NATIVE_INT
                                     : type == H5T_STD_I64LE ? H5T_NATIVE_LLONG
                                                             : H5T_NATIVE_DOUBLE,
                                  H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    H5Dclose(d);
    H5Sclose(sp);
}

static char *h5_write(const h5spec *s)
{
    char *path = temp_path();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), f, g;
    const char *root = s->global ? "/fclib_global" : "/fclib_local";
    char name[64];
    if (s->userblock) H5Pset_userblock(fcpl, 512);
    f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    H5Pclose(fcpl);
    H5Gclose(H5Gcreate2(f, root, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    snprintf(name, sizeof name, "%s/W", root);
    H5Gclose(H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    snprintf(name, sizeof name, "%s/vectors", root);
    H5Gclose(H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    g = H5Gopen2(f, root, H5P_DEFAULT);
    h5_put(g, "spacedim", H5T_STD_I32LE, 1, &s->spacedim);
    h5_put(g, "W/m", H5T_STD_I32LE, 1, &s->m);
    h5_put(g, "W/n", H5T_STD_I32LE, 1, &s->ncol);
    if (s->nz64) h5_put(g, "W/nz", H5T_STD_I64LE, 1, &s->nz64);
    else h5_put(g, "W/nz", H5T_STD_I32LE, 1, &s->nz);
    h5_put(g, "W/nzmax", H5T_STD_I32LE, 1, &s->nx);
    h5_put(g, "W/p", H5T_STD_I32LE, s->np, s->p);
    h5_put(g, "W/i", H5T_STD_I32LE, s->ni, s->i);
    h5_put(g, "W/x", H5T_IEEE_F64LE, s->nx, s->x);
    h5_put(g, "vectors/q", H5T_IEEE_F64LE, s->nq, s->q);
    if (!s->no_mu) h5_put(g, "vectors/mu", H5T_IEEE_F64LE, s->nmu, s->mu);
    H5Gclose(g);
    H5Fclose(f);
    return path;
}

/* CSR, CSC, triplet (with duplicates and an explicit zero) and a file with
 * a 512-byte user block all give the problem of the dense HW. */
START_TEST(test_hdf5_encodings)
{
    static const int nz[4] = {-2, -1, 0, -2};
    clcone_problem want, got;
    clcone_error err = {0};
    h5spec s;
    char *path;
    ck_assert_int_eq(clcone_problem_from_dense(&want, 2, HW, HQ, HMU, &err), CLCONE_OK);
    ck_assert_int_eq(want.nnzb, 3);
    h5spec_make(&s, nz[_i]);
    s.userblock = _i == 3;
    path = h5_write(&s);
    read_ok(path, &got);
    assert_same_problem(&want, &got);
    ck_assert_double_eq(W_at(&got, 0, 3), 0.2);
    ck_assert_double_eq(W_at(&got, 1, 0), 0.3);
    clcone_problem_free(&want);
    clcone_problem_free(&got);
    unlink(path);
    free(path);
}
END_TEST

static const struct {
    const char *needle;
    int nz;
} H5BAD[] = {
    {"/fclib_local/W/i[2] = 6 is out of range", -2},
    {"/fclib_local/W/nz = -3", -3},
    {"spacedim = 2", -2},
    {"missing dataset /fclib_local/vectors/mu", -2},
    {"/fclib_local/vectors/q has 5 elements, expected 6", -2},
    {"global FCLib problem", -2},
    {"pointers must not decrease", -2},
    {"W is 5 x 6", -2},
    {"/fclib_local/vectors/mu[1] = -0.3", -2},
    {"/fclib_local/W/p[3] = 7 is out of range [0, 6)", 0},
    {"cannot be opened as HDF5", -2},
    /* the value the file holds, not the int it would be clamped to */
    {"/fclib_local/W/nz = 4294967299 is out of range", -2},
};

START_TEST(test_hdf5_malformed)
{
    clcone_problem p;
    clcone_error err = {0};
    h5spec s;
    char *path;
    h5spec_make(&s, H5BAD[_i].nz < -2 ? -2 : H5BAD[_i].nz);
    switch (_i) {
    case 0: s.i[2] = 6; break;
    case 1: s.nz = -3; break;
    case 2: s.spacedim = 2; break;
    case 3: s.no_mu = 1; break;
    case 4: s.nq = 5; break;
    case 5: s.global = 1; break;
    case 6: s.p[3] = 1; break;
    case 7: s.m = 5; break;
    case 8: s.mu[1] = -0.3; break;
    case 9: s.p[3] = 7; break;
    case 11: s.nz64 = 4294967299LL; break;
    default: break;
    }
    path = h5_write(&s);
    if (_i == 10) { /* signature kept, the rest cut off */
        ck_assert_int_eq(truncate(path, 100), 0);
    }
    ck_assert_int_eq(clcone_read_problem_hdf5(path, &p, &err), CLCONE_EFORMAT);
    ck_assert_int_eq(err.code, CLCONE_EFORMAT);
    ck_assert_msg(strstr(err.msg, H5BAD[_i].needle) && strstr(err.msg, path),
                  "message '%s' lacks '%s'", err.msg, H5BAD[_i].needle);
    ck_assert_ptr_null(p.row_ptr);
    unlink(path);
    free(path);
}
END_TEST

/* An input the fuzzer found (tests/fuzz/regress/): a damaged
 * Capsules-i125-1213.hdf5 on which libhdf5 asks realloc for 2^64 - 136
 * bytes. The allocator says no, libhdf5 fails the read, and the reader
 * must report a malformed file, not crash. */
START_TEST(test_hdf5_fuzz_regression)
{
    clcone_problem p;
    clcone_error err = {0};
    const char *path = "tests/fuzz/regress/hdf5-silly-realloc.hdf5";
    ck_assert_int_eq(clcone_read_problem_hdf5(path, &p, &err), CLCONE_EFORMAT);
    ck_assert_msg(strstr(err.msg, path) != NULL, "message '%s' does not name the file", err.msg);
    ck_assert_ptr_null(p.row_ptr);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Malformed .dat files                                                */
/* ------------------------------------------------------------------ */

/* FrictionContact3D_1c.dat, one token per line: line 8 holds W[0][0],
 * lines 17-19 q and line 20 mu. */
#define L1_7 "3\n1\n0\n3\n3\n3\n3\n"
#define W1C "15\n-1\n-2\n-1\n14\n1\n-2\n1\n16\n"
#define Q1C "-1\n2\n3\n"
/* Two contacts in SBM: row 0 holds blocks (0,0), (0,1), row 1 (1,1).
 * Line numbers: 13 rowPtr, 14 blockCol, 15/17/19 block numbers. */
#define SBM_HEAD "3\n2\n1\n6\n6\n3\n2\n2\n3 6\n3 6\n3\n3\n"
#define SBM_B0 "0\n1 0 0 0 1 0 0 0 1\n"
#define SBM_B1 "1\n0.1 0.2 0 0 0 0 0 0 0\n"
#define SBM_B2 "2\n1 0 0 0 1 0 0 0 1\n"
#define SBM_TAIL "0 0 -1 0 0 -1\n0.5 0.5\n"

static const struct {
    const char *text;
    size_t len;            /* 0: strlen(text) */
    const char *needle[3]; /* all must appear in the message */
} DATBAD[] = {
    {"", 0, {":1: empty file", "dimension d"}},
    {"\n \n\t\n", 0, {":4: empty file"}},
    /* truncated: caught before allocating by the size guard, or at EOF */
    {L1_7 "15\n-1\n-2\n-1\n14\n", 0, {":7:", "3 x 3 W", "truncated"}},
    {L1_7 W1C Q1C, 0, {":20: unexpected end of file", "mu[0]"}},
    {"3\n2\n0\n3\n3\n3\n3\n" W1C Q1C "0.1\n", 0, {":4:", "rows of W", "= 6, found '3'"}},
    {L1_7 "15\n-1\n-2\n-1\nnan\n1\n-2\n1\n16\n" Q1C "0.1\n", 0, {":12:", "W[1][1]", "'nan'"}},
    {L1_7 W1C "-1\ninf\n3\n0.1\n", 0, {":18:", "q[1]", "'inf'"}},
    {L1_7 W1C Q1C "1e999\n", 0, {":20:", "mu[0]", "'1e999'"}},
    {L1_7 W1C Q1C "-0.1\n", 0, {":20:", "mu[0] >= 0", "'-0.1'"}},
    {"3\n1\n0\n3\n6\n", 0, {":5:", "columns of W", "found '6'"}},
    {"\x7f" "ELF\x02\x01\x01\x00\xff\xfe", 10, {":1:", "dimension d", "\\x7fELF\\x02"}},
    {L1_7 W1C Q1C "0.1\n0\n1\n", 0, {":22:", "end of the file after mu"}},
    {L1_7 W1C Q1C "0.1\nabc\n", 0, {":21:", "trailing flag", "'abc'"}},
    {"2\n1\n0\n2\n2\n", 0, {":1:", "dimension d = 3", "found '2'"}},
    {"3\n-1\n0\n", 0, {":2:", "number of contacts n in [1, ", "'-1'"}},
    {"3\n1000000000\n0\n3\n3\n", 0, {":2:", "number of contacts n in [1, "}},
    {"3\n700000000\n0\n3\n3\n", 0, {":2:", "n = 700000000 contacts needs"}},
    {"3\n1\n2\n3\n3\n", 0, {":3:", "CSparse", "found '2'"}},
    {"3\n1\n0\n3\n3\n4\n3\n" W1C Q1C "0.1\n", 0, {":6:", "repeated number of rows"}},
    {L1_7 "15\n-1\n1.5abc\n-1\n14\n1\n-2\n1\n16\n" Q1C "0.1\n", 0, {":10:", "W[2][0]", "'1.5abc'"}},
    /* a NUL inside a number must not end it ("15\0GARBAGE" is not 15) */
    {L1_7 "15\0GARBAGE\n-1\n-2\n-1\n14\n1\n-2\n1\n16\n" Q1C "0.1\n",
     sizeof L1_7 "15\0GARBAGE\n-1\n-2\n-1\n14\n1\n-2\n1\n16\n" Q1C "0.1\n" - 1,
     {":8:", "W[0][0]", "'15\\x00GARBAGE'"}},
    {"3\n1\0\n0\n3\n3\n", 11, {":2:", "number of contacts", "'1\\x00'"}},
    {"3\n1\n0\n3\n3\n3\n3\n" W1C "-1 2 3 0.1 0 x y", 0, {":17:", "end of the file"}},
    /* SBM structure */
    {SBM_HEAD "0 2 3\n0 1 1\n" SBM_B0 "7\n0.1 0.2 0 0 0 0 0 0 0\n" SBM_B2 SBM_TAIL, 0,
     {":17:", "block number = 1", "found '7'"}},
    {SBM_HEAD "0 2 3\n0 1 2\n" SBM_B0 SBM_B1 SBM_B2 SBM_TAIL, 0,
     {":14:", "blockCol[2]", "in [0, 1], found '2'"}},
    {SBM_HEAD "0 2 3\n0 0 1\n" SBM_B0 SBM_B1 SBM_B2 SBM_TAIL, 0,
     {":14:", "blockCol[1] = 0 does not increase"}},
    {SBM_HEAD "0 2 1\n0 1 1\n" SBM_B0 SBM_B1 SBM_B2 SBM_TAIL, 0, {":13:", "rowPtr[2]", "= 3"}},
    {"3\n2\n1\n6\n6\n3\n2\n2\n3 6\n3 6\n3\n2\n0 2 3\n0 1 1\n" SBM_B0 SBM_B1 SBM_B2
     SBM_TAIL, 0, {":12:", "filled2", "found '2'"}},
    {"3\n2\n1\n6\n6\n3\n2\n2\n3 5\n3 6\n3\n3\n0 2 3\n0 1 1\n" SBM_B0 SBM_B1 SBM_B2
     SBM_TAIL, 0, {":9:", "rowEnd[1]", "= 6, found '5'"}},
    {SBM_HEAD "0 2 3\n0 1 1\n" SBM_B0 SBM_B1 SBM_B2 "0 0 -1 0 0\n", 0,
     {":22: unexpected end of file", "q[5]"}},
    {SBM_HEAD "0 2 3\n0 1 1\n" SBM_B0 SBM_B1, 0, {":14:", "blocks of W, q and mu needs"}},
    /* well-formed but invalid: W_nn = 0, reported by the validator */
    {"3\n1\n0\n3\n3\n3\n3\n0 0 0 0 1 0 0 0 1\n0 0 -1\n0.5\n", 0, {"/tmp/clcone-test-"}},
};

START_TEST(test_dat_malformed)
{
    size_t len = DATBAD[_i].len ? DATBAD[_i].len : strlen(DATBAD[_i].text);
    const char *tmp = test_write_temp(DATBAD[_i].text, len);
    char path[64];
    clcone_problem p;
    clcone_error err = {0};
    int k;
    snprintf(path, sizeof path, "%s", tmp);
    ck_assert_int_eq(clcone_read_problem(path, &p, &err), CLCONE_EFORMAT);
    ck_assert_int_eq(err.code, CLCONE_EFORMAT);
    ck_assert_ptr_null(p.row_ptr);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "message '%s' lacks the path",
                  err.msg);
    for (k = 0; k < 3 && DATBAD[_i].needle[k]; ++k)
        ck_assert_msg(strstr(err.msg, DATBAD[_i].needle[k]), "case %d: message '%s' lacks '%s'",
                      _i, err.msg, DATBAD[_i].needle[k]);
    unlink(path);
}
END_TEST

START_TEST(test_missing_file)
{
    clcone_problem p;
    clcone_error err = {0};
    double r[3];
    ck_assert_int_eq(clcone_read_problem("/nonexistent/x.dat", &p, &err), CLCONE_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.dat"));
    ck_assert_int_eq(clcone_read_reactions("/nonexistent/r.txt", 1, r, &err), CLCONE_EIO);
    ck_assert_int_eq(clcone_read_problem("/tmp", &p, NULL), CLCONE_EIO);
}
END_TEST

/* The parser without validation: block orientation of a non-symmetric SBM
 * block, an SBM with empty trailing block rows (filled1 < blocknumber0+1)
 * and an empty SBM (nbblocks = 0), whose missing diagonal blocks are zero. */
START_TEST(test_sbm_structure)
{
    static const char ok[] = SBM_HEAD "0 2 3\n0 1 1\n" SBM_B0 SBM_B1 SBM_B2 SBM_TAIL "0\n";
    static const char short_rows[] =
        "3\n2\n1\n6\n6\n2\n2\n2\n3 6\n3 6\n2\n2\n0 2\n0 1\n" SBM_B0 SBM_B1 SBM_TAIL;
    static const char empty[] = "3\n2\n1\n6\n6\n0\n0 0 -1 0 0 -1\n0.5 0.5\n";
    clcone_problem p;
    clcone_error err = {0};
    int k;
    ck_assert_int_eq(clc_parse_dat("ok", ok, strlen(ok), &p, &err), CLCONE_OK);
    ck_assert_int_eq(p.nnzb, 3);
    ck_assert_double_eq(W_at(&p, 0, 3), 0.1);
    ck_assert_double_eq(W_at(&p, 1, 3), 0.2);
    ck_assert_double_eq(W_at(&p, 0, 4), 0.0);
    ck_assert_double_eq(p.q[5], -1);
    clcone_problem_free(&p);

    ck_assert_int_eq(clc_parse_dat("short", short_rows, strlen(short_rows), &p, &err),
                     CLCONE_OK);
    ck_assert_int_eq(p.nnzb, 3);
    ck_assert_int_eq(p.row_ptr[1], 2);
    ck_assert_int_eq(p.col[2], 1);
    for (k = 0; k < 9; ++k) ck_assert_double_eq(p.blocks[18 + k], 0.0);
    clcone_problem_free(&p);

    ck_assert_int_eq(clc_parse_dat("empty", empty, strlen(empty), &p, &err), CLCONE_OK);
    ck_assert_int_eq(p.nnzb, 2);
    for (k = 0; k < 18; ++k) ck_assert_double_eq(p.blocks[k], 0.0);
    clcone_problem_free(&p);
}
END_TEST

/* Problems built in memory round trip too, -0.0 included; batches and
 * invalid problems are refused. */
START_TEST(test_write_problem)
{
    static const double W[36] = {
        2, -0.0, 1.0 / 3, 0, 0, 0,   0, 3, 0, 1e-300, 0, 0,  0, 0, 4, 0, 0, 0,
        0, 0, 0, 5, 0, 0,            0, 0, 0, 0, 6, 4.9e-324, 0, 0, 0, 0, 0, 1e100,
    };
    static const double q[6] = {-0.1, 1.0 / 7, -0.0, 1, 2, 3}, mu[2] = {0.3, 0};
    clcone_problem a, b, batch;
    const clcone_problem *parts[2] = {&a, &a};
    clcone_error err = {0};
    char *path = temp_path();
    ck_assert_int_eq(clcone_problem_from_dense(&a, 2, W, q, mu, &err), CLCONE_OK);
    ck_assert_int_eq(clcone_write_problem_dat(path, &a, &err), CLCONE_OK);
    read_ok(path, &b);
    assert_same_problem(&a, &b);
    ck_assert(signbit(b.blocks[1]) && signbit(b.q[2]));
    clcone_problem_free(&b);

    ck_assert_int_eq(clcone_batch_concat(parts, 2, &batch, &err), CLCONE_OK);
    ck_assert_int_eq(clcone_write_problem_dat(path, &batch, &err), CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "batch"));
    clcone_problem_free(&batch);

    a.blocks[0] = NAN;
    ck_assert_int_eq(clcone_write_problem_dat(path, &a, &err), CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    read_ok(path, &b); /* the failed writes left the old file intact */
    clcone_problem_free(&b);
    clcone_problem_free(&a);
    unlink(path);
    free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Reactions                                                           */
/* ------------------------------------------------------------------ */

START_TEST(test_reactions_roundtrip)
{
    static const double r[9] = {1.0 / 3, -0.0, 1e-300, 4.9e-324, DBL_MAX, -DBL_MAX,
                                0.1, 123456789.123456789, -2.5e-17};
    double back[9];
    clcone_error err = {0};
    char *path = temp_path();
    ck_assert_int_eq(clcone_write_reactions(path, 3, r, &err), CLCONE_OK);
    ck_assert_int_eq(clcone_read_reactions(path, 3, back, &err), CLCONE_OK);
    ck_assert_int_eq(memcmp(r, back, sizeof r), 0);
    ck_assert_int_eq(clcone_write_reactions(path, 0, NULL, &err), CLCONE_OK);
    ck_assert_int_eq(clcone_read_reactions(path, 0, NULL, &err), CLCONE_OK);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(test_reactions_comments)
{
    static const char text[] = "# reactions\n1 2 3 # contact 0\n\n  4\t5\n6#tail\n#end";
    const char *path = test_write_temp(text, strlen(text));
    double r[6];
    clcone_error err = {0};
    int k;
    ck_assert_msg(clcone_read_reactions(path, 2, r, &err) == CLCONE_OK, "%s", err.msg);
    for (k = 0; k < 6; ++k) ck_assert_double_eq(r[k], k + 1);
    unlink(path);
}
END_TEST

static const struct {
    const char *text;
    int n;
    const char *needle[3];
} RBAD[] = {
    {"1 2 3\n4 5\n", 2, {":3: unexpected end of file", "r_t2 of contact 1", "exactly 6"}},
    {"1 2 3\n4 5 6\n# more\n7\n", 2, {":4:", "end of the file after 6 numbers", "'7'"}},
    {"1 2 nan\n", 1, {":1:", "r_t2 of contact 0", "'nan'"}},
    {"# header\n1 2 3\n4 -inf 6\n", 2, {":3:", "r_t1 of contact 1", "'-inf'"}},
    {"1 2 3,\n", 1, {":1:", "r_t2", "'3,'"}},
    {"# nothing\n", 1, {"empty file", "r_n of contact 0"}},
};

START_TEST(test_reactions_malformed)
{
    const char *path = test_write_temp(RBAD[_i].text, strlen(RBAD[_i].text));
    double r[6] = {9, 9, 9, 9, 9, 9};
    clcone_error err = {0};
    int k;
    ck_assert_int_eq(clcone_read_reactions(path, RBAD[_i].n, r, &err), CLCONE_EFORMAT);
    ck_assert_int_eq(err.code, CLCONE_EFORMAT);
    for (k = 0; k < 3 && RBAD[_i].needle[k]; ++k)
        ck_assert_msg(strstr(err.msg, RBAD[_i].needle[k]), "message '%s' lacks '%s'", err.msg,
                      RBAD[_i].needle[k]);
    for (k = 0; k < 6; ++k) ck_assert_double_eq(r[k], 9); /* untouched */
    unlink(path);
}
END_TEST

/* A NUL byte ends a C string, not a token: "15\0GARBAGE" is not 15. */
START_TEST(test_reactions_nul_in_number)
{
    static const char text[] = "1 2 15\0GARBAGE\n";
    const char *path = test_write_temp(text, sizeof text - 1);
    double r[3] = {9, 9, 9};
    clcone_error err = {0};
    ck_assert_int_eq(clcone_read_reactions(path, 1, r, &err), CLCONE_EFORMAT);
    ck_assert_msg(strstr(err.msg, ":1:") && strstr(err.msg, "r_t2 of contact 0") &&
                  strstr(err.msg, "'15\\x00GARBAGE'"), "%s", err.msg);
    ck_assert_double_eq(r[2], 9);
    unlink(path);
}
END_TEST

/* A header that says it is clcone's but records what clcone would not
 * write (edited, or damaged) is refused, naming the value, and r is left
 * as it was; without a tolerance it records nothing and is not read. */
START_TEST(test_reactions_header_refused)
{
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"# clcone reactions: 1 contacts; solved to tol=1e-08 precision=double model=pyramid facets=0 fit=outer\n"
         "1 2 3\n", ":1: the header's facets=0 is not an integer from 3 to 1024"},
        {"# clcone reactions: 1 contacts; solved to tol=1e-08 precision=double model=pyramid facets=8 fit=zz\n"
         "1 2 3\n", ":1: the header's fit=zz is not inner or outer"},
        {"# clcone reactions: 1 contacts; solved to tol=-1 precision=double model=bogus\n1 2 3\n",
         ":1: the header's tol=-1 is not a number > 0"},
        {"# clcone reactions: 1 contacts; solved to tol=1e-08 precision=double model=ccp model=coulomb\n1 2 3\n",
         ":1: the header gives model= twice"},
        {"# clcone reactions: 1 contacts; solved to tol=1e-08 precision=float tol=1e-05\n1 2 3\n",
         ":1: the header gives tol= twice"},
        {"# clcone reactions: 1 contacts; solved to tol=1e-08 precision=half\n1 2 3\n",
         ":1: the header's precision=half is not float or double"},
    };
    static const char none[] = "# clcone reactions: 1 contacts\n1 2 3\n";
    clcone_reactions_info info;
    clcone_error err = {0};
    double r[3];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        const char *path = test_write_temp(bad[k].text, strlen(bad[k].text));
        r[0] = r[1] = r[2] = 9;
        ck_assert_int_eq(clcone_read_reactions_info(path, 1, r, &info, &err), CLCONE_EFORMAT);
        ck_assert_msg(strstr(err.msg, bad[k].needle), "message '%s' lacks '%s'", err.msg, bad[k].needle);
        ck_assert_double_eq(r[0], 9);
        unlink(path);
    }
    {
        const char *path = test_write_temp(none, strlen(none));
        ck_assert_msg(clcone_read_reactions_info(path, 1, r, &info, &err) == CLCONE_OK, "%s", err.msg);
        ck_assert_double_eq(info.tol, 0);
        ck_assert_double_eq(r[2], 3);
        unlink(path);
    }
}
END_TEST

START_TEST(test_reactions_write_invalid)
{
    double r[3] = {1, INFINITY, 0};
    clcone_error err = {0};
    ck_assert_int_eq(clcone_write_reactions("/tmp/clcone-never-written", 1, r, &err),
                     CLCONE_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "r[1]"));
    ck_assert_int_ne(access("/tmp/clcone-never-written", F_OK), 0);
    ck_assert_int_eq(clcone_read_reactions("x", -1, r, &err), CLCONE_EINVAL);
    r[1] = 0;
    ck_assert_int_eq(clcone_write_reactions("/nonexistent/dir/r.txt", 1, r, &err), CLCONE_EIO);
}
END_TEST

/* io/ reads every input without the world layer: a problem file never
 * reaches the scene parser the caller hands in, and a scene file (told by
 * its signature, after a byte order mark and comments) reaches it once,
 * with the whole file. */
static int scene_calls;
static size_t scene_len;
static clcone_status count_scene(const char *name, const char *buf, size_t len, clcone_world *w,
                                 clcone_error *err)
{
    (void)name;
    (void)buf;
    (void)w;
    (void)err;
    scene_calls++;
    scene_len = len;
    return CLCONE_OK;
}

START_TEST(test_input_scene_hook)
{
    static const char scene[] = "\xef\xbb\xbf# a comment\n\nclcone-scene 1\nanything\n";
    clcone_input in;
    clcone_error err = {0};
    const char *tmp;
    scene_calls = 0;
    ck_assert_msg(clc_read_input_with(test_problem_path("FC3D_Example1.dat"), &in, count_scene, NULL, &err) ==
                      CLCONE_OK, "%s", err.msg);
    ck_assert_int_eq(scene_calls, 0);
    ck_assert(!in.is_world);
    ck_assert_int_eq(in.problem.n, 3);
    clcone_problem_free(&in.problem);
    tmp = test_write_temp(scene, sizeof scene - 1);
    ck_assert_int_eq(clc_read_input_with(tmp, &in, count_scene, NULL, &err), CLCONE_OK);
    ck_assert_int_eq(scene_calls, 1);
    ck_assert_uint_eq(scene_len, sizeof scene - 1);
    ck_assert(in.is_world);
    ck_assert_int_eq(clcone_is_world_file(tmp), 1);
    unlink(tmp);
    ck_assert_int_eq(clc_read_input_with("/nonexistent/x.dat", &in, count_scene, NULL, &err), CLCONE_EIO);
    ck_assert_int_eq(scene_calls, 1);
}
END_TEST

/* libclcone alone (clcone_read_problem, clcone_read_input) links no
 * HDF5: an FCLib file is refused, saying which library reads it, and the
 * HDF5 variants of libclcone_output read the same file. */
START_TEST(test_hdf5_only_through_output)
{
    const char *path = test_problem_path("Capsules-i125-1213.hdf5");
    clcone_problem p;
    clcone_input in;
    clcone_error err = {0};
    ck_assert_int_eq(clcone_read_problem(path, &p, &err), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "libclcone_output") &&
                      strstr(err.msg, "clcone_read_problem_hdf5"), "message '%s'", err.msg);
    ck_assert_ptr_null(p.row_ptr);
    ck_assert_int_eq(clcone_read_input(path, &in, &err), CLCONE_ENOTSUP);
    ck_assert_msg(clcone_read_input_hdf5(path, &in, &err) == CLCONE_OK, "%s", err.msg);
    ck_assert(!in.is_world);
    read_ok(path, &p);
    assert_same_problem(&p, &in.problem);
    clcone_problem_free(&p);
    clcone_input_free(&in);
}
END_TEST

Suite *suite_io(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_read_shared, 0, NSHARED_PROBLEMS);
    tcase_add_loop_test(tc, test_roundtrip_shared, 0, NSHARED_PROBLEMS);
    tcase_add_test(tc, test_dense_equals_sbm);
    tcase_add_test(tc, test_known_1c);
    tcase_add_test(tc, test_dense_column_major);
    tcase_add_test(tc, test_sbm_column_major);
    tcase_add_loop_test(tc, test_raw_tokens, 0, NSHARED_PROBLEMS);
    tcase_add_test(tc, test_hdf5_capsules_csr);
    tcase_add_loop_test(tc, test_hdf5_encodings, 0, 4);
    tcase_add_loop_test(tc, test_hdf5_malformed, 0, (int)(sizeof H5BAD / sizeof H5BAD[0]));
    tcase_add_test(tc, test_hdf5_fuzz_regression);
    tcase_add_test(tc, test_hdf5_only_through_output);
    tcase_add_loop_test(tc, test_dat_malformed, 0, (int)(sizeof DATBAD / sizeof DATBAD[0]));
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_input_scene_hook);
    tcase_add_test(tc, test_sbm_structure);
    tcase_add_test(tc, test_write_problem);
    tcase_add_test(tc, test_reactions_roundtrip);
    tcase_add_test(tc, test_reactions_comments);
    tcase_add_loop_test(tc, test_reactions_malformed, 0, (int)(sizeof RBAD / sizeof RBAD[0]));
    tcase_add_test(tc, test_reactions_write_invalid);
    tcase_add_test(tc, test_reactions_nul_in_number);
    tcase_add_test(tc, test_reactions_header_refused);
    suite_add_tcase(s, tc);
    return s;
}
