/* Shared helpers for the Check suites. */
#ifndef CLCONE_TESTUTIL_H
#define CLCONE_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clcone.h"

/* Directory of the shared Siconos problems: $CLCONE_PROBLEMS, else
 * ../shared/problems relative to the repository root (tests run there). */
static inline const char *test_problems_dir(void)
{
    const char *d = getenv("CLCONE_PROBLEMS");
    return d && *d ? d : "../shared/problems";
}

/* Full path of a shared problem file; the test FAILS (not skips) when the
 * file is missing, since a silently skipped check proves nothing. */
static inline const char *test_problem_path(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", test_problems_dir(), name);
    ck_assert_msg(access(buf, R_OK) == 0, "required problem file missing: %s", buf);
    return buf;
}

/* The 23 shared problems, in the order of their README. */
static const char *const TEST_PROBLEM_FILES[] = {
    "FrictionContact3D_1c.dat", "FrictionContact3D_RR_1c.dat", "Rover11035.dat",
    "Rover4396.dat", "FC3D_Example1.dat", "FC3D_Example1_SBM.dat",
    "GFC3D_TwoRods1-condensed.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat",
    "Rover1039.dat", "Rover4144.dat", "Rover4493.dat", "Rover4622.dat",
    "Rover1040.dat", "Rover3865.dat", "Rover4609.dat", "NESpheres_10_1.dat",
    "OneObject-i1028-138.hdf5.dat", "OneObject-i100000-499.hdf5.dat",
    "BoxesStack1-i100000-32.hdf5.dat", "Confeti-ex03-Fc3D-SBM.dat",
    "Capsules-i101-404.dat", "Capsules-i100-1090.dat", "Capsules-i125-1213.hdf5",
};
#define TEST_NPROBLEM_FILES ((int)(sizeof TEST_PROBLEM_FILES / sizeof TEST_PROBLEM_FILES[0]))

/* Writes text to a fresh temporary file and returns its path (static
 * buffer; the caller unlinks it). */
static inline const char *test_write_temp(const char *text, size_t len)
{
    static char path[64];
    FILE *f;
    int fd;
    snprintf(path, sizeof path, "/tmp/clcone-test-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* Largest difference of a and b relative to the largest |b|. */
static inline double test_rel_diff(const double *a, const double *b, size_t m)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < m; ++i) {
        double x = a[i] - b[i];
        if (x < 0) x = -x;
        if (x > d) d = x;
        x = b[i] < 0 ? -b[i] : b[i];
        if (x > s) s = x;
    }
    return s > 0 ? d / s : d;
}

/* The default OpenCL device; the test fails when there is none. */
static inline clcone_context *test_context(clcone_precision prec)
{
    clcone_context *c = NULL;
    clcone_error e;
    ck_assert_msg(clcone_context_create(NULL, prec, &c, &e) == CLCONE_OK, "%s", e.msg);
    return c;
}

#endif
