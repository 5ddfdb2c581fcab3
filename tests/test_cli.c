/* The command line as a user runs it: exit codes, the machine-readable
 * last line, and error messages for bad input. The binary is $CLCONE_CLI
 * (the Makefile sets it), else build/clcone. */
#include "testutil.h"

#include <regex.h>
#include <string.h>

static char out_buf[1 << 16], err_buf[1 << 14];

/* Runs `clcone ARGS` with an optional environment prefix; returns the exit
 * code and fills out_buf / err_buf. */
static int run_cli(const char *env, const char *args)
{
    return test_run_cli(env, args, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

static const char *last_line(void)
{
    static char line[1024];
    size_t n = strlen(out_buf);
    const char *p;
    while (n > 0 && out_buf[n - 1] == '\n') --n;
    p = out_buf + n;
    while (p > out_buf && p[-1] != '\n') --p;
    snprintf(line, sizeof line, "%.*s", (int)(out_buf + n - p), p);
    return line;
}

static void assert_last_line_format(void)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re,
                             "^status=(converged|maxiter|diverged|failed) error=[-+0-9.eE]+ iters=[0-9]+ "
                             "time_ms=[0-9.]+ contacts=[0-9]+$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    ck_assert_msg(regexec(&re, last_line(), 0, NULL, 0) == 0, "last line not machine-readable: '%s'", last_line());
    regfree(&re);
}

/* Every shared problem: solve with the NSGS reference, write reactions,
 * and have `clcone check` confirm error <= 1e-8 from the file alone. */
START_TEST(solve_then_check_every_shared_problem)
{
    const char *name = SHARED_PROBLEMS[_i];
    char args[4096], rpath[] = "/tmp/clcone-r-XXXXXX", path[2048];
    int fd = mkstemp(rpath);
    ck_assert(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s", test_problem_path(name));
    snprintf(args, sizeof args, "solve '%s' --device ref --out %s", path, rpath);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s: %s %s", name, out_buf, err_buf);
    assert_last_line_format();
    ck_assert(strncmp(last_line(), "status=converged", 16) == 0);
    snprintf(args, sizeof args, "check '%s' %s", path, rpath);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s check: %s %s", name, out_buf, err_buf);
    assert_last_line_format();
    ck_assert(strstr(last_line(), "iters=0") != NULL);
    {
        double e = 1;
        ck_assert(sscanf(strstr(last_line(), "error="), "error=%lf", &e) == 1);
        ck_assert_double_le(e, 1e-8);
    }
    unlink(rpath);
}
END_TEST

START_TEST(device_solve_and_compare)
{
    char args[4096];
    snprintf(args, sizeof args, "solve '%s' --precision double --solver cgs --compare",
             test_problem_path("Capsules-i125-1213.hdf5"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
    assert_last_line_format();
    ck_assert(strstr(out_buf, "speed ratio reference/device") != NULL);
    ck_assert(strstr(out_buf, "max |r_device - r_reference|") != NULL);
    /* float device: default tolerance 1e-5 */
    snprintf(args, sizeof args, "solve '%s'", test_problem_path("Rover4396.dat"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
    ck_assert(strstr(out_buf, "float") != NULL && strstr(out_buf, "tol 1.0e-05") != NULL);
}
END_TEST

START_TEST(not_converged_exits_1)
{
    char args[4096];
    snprintf(args, sizeof args, "solve '%s' --device ref --max-iter 3", test_problem_path("BoxesStack1-i100000-32.hdf5.dat"));
    ck_assert_int_eq(run_cli(NULL, args), 1);
    assert_last_line_format();
    ck_assert(strncmp(last_line(), "status=maxiter", 14) == 0);
}
END_TEST

static void expect_bad_file(const char *content, size_t len, const char *needle)
{
    const char *path = test_write_temp(content, len);
    char args[512];
    snprintf(args, sizeof args, "solve %s --device ref", path);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, needle) != NULL, "stderr lacks '%s': %s", needle, err_buf);
    ck_assert_msg(strstr(err_buf, path) != NULL, "stderr does not name the file: %s", err_buf);
    unlink(path);
}

START_TEST(malformed_inputs_exit_2)
{
    static const char ok1[] = "3\n1\n0\n3\n3\n3\n3\n15 -1 -2 -1 14 1 -2 1 16\n-1 2 3\n0.1\n";
    static const char garbage[] = "\x7f\x45\x4c\x46\x02\x01\x01\x00garbage";
    expect_bad_file("", 0, "empty");
    expect_bad_file(ok1, 38, "end of file");                       /* truncated after W */
    expect_bad_file("3\n1\n0\n3\n3\n3\n3\n15 -1 -2 -1 14 1 -2 1 16\n-1 nan 3\n0.1\n", 47, "q");
    expect_bad_file("3\n1\n0\n3\n3\n3\n3\n15 -1 -2 -1 14 1 -2 1 16\n-1 2 3\n-0.1\n", 47, "mu");
    expect_bad_file("3\n1\n0\n3\n6\n3\n6\n15 -1 -2 -1 14 1 -2 1 16 1 1 1 1 1 1 1 1 1\n-1 2 3\n0.1\n", 65, "square");
    expect_bad_file("3\n2\n0\n3\n3\n3\n3\n15 -1 -2 -1 14 1 -2 1 16\n-1 2 3\n0.1\n", 46, "6");  /* wrong count */
    expect_bad_file(garbage, sizeof garbage - 1, "expected");
}
END_TEST

START_TEST(usage_errors_exit_2_and_help_exits_0)
{
    ck_assert_int_eq(run_cli(NULL, ""), 2);
    ck_assert_int_eq(run_cli(NULL, "frobnicate"), 2);
    ck_assert(strstr(err_buf, "unknown command") != NULL);
    ck_assert_int_eq(run_cli(NULL, "solve"), 2);
    ck_assert_int_eq(run_cli(NULL, "solve x.dat --model elastic"), 2);
    ck_assert(strstr(err_buf, "unknown model 'elastic'") != NULL);
    ck_assert_int_eq(run_cli(NULL, "solve x.dat --tol -1"), 2);
    ck_assert_int_eq(run_cli(NULL, "solve x.dat --facets 2"), 2);
    ck_assert_int_eq(run_cli(NULL, "solve /nonexistent/file.dat --device ref"), 2);
    ck_assert(strstr(err_buf, "/nonexistent/file.dat") != NULL);
    ck_assert_int_eq(run_cli(NULL, "check x.dat"), 2);
    static const char *cmds[] = {"help", "solve --help", "check --help", "devices --help", "demo --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; ++i) {
        ck_assert_int_eq(run_cli(NULL, cmds[i]), 0);
        ck_assert(strstr(out_buf, "usage") != NULL);
    }
}
END_TEST

START_TEST(reactions_file_errors)
{
    char args[4096];
    const char *bad = test_write_temp("1 2\n", 4);
    snprintf(args, sizeof args, "check '%s' %s", test_problem_path("Rover4396.dat"), bad);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert(strstr(err_buf, bad) != NULL);
    unlink(bad);
    snprintf(args, sizeof args, "solve '%s' --device ref --warm /nonexistent/r0.txt", test_problem_path("Rover4396.dat"));
    ck_assert_int_eq(run_cli(NULL, args), 2);
}
END_TEST

START_TEST(missing_platform_is_explained)
{
    /* an ICD loader that finds no vendor: what a machine without any
     * OpenCL driver sees */
    ck_assert_int_eq(run_cli("OCL_ICD_VENDORS=/nonexistent-icd-dir", "devices"), 2);
    ck_assert_msg(strstr(err_buf, "no OpenCL platform") != NULL && strstr(err_buf, "pocl-opencl-icd") != NULL, "%s",
                  err_buf);
    {
        /* a valid problem, so the solve gets as far as opening the device */
        char args[4096];
        snprintf(args, sizeof args, "solve '%s' --device 0", test_problem_path("Rover4396.dat"));
        ck_assert_int_eq(run_cli("OCL_ICD_VENDORS=/nonexistent-icd-dir", args), 2);
    }
    ck_assert_msg(strstr(err_buf, "no OpenCL platform") != NULL, "%s", err_buf);
}
END_TEST

START_TEST(devices_lists_default)
{
    ck_assert_int_eq(run_cli(NULL, "devices"), 0);
    ck_assert(strstr(out_buf, "fp64") != NULL && strstr(out_buf, "ref") != NULL);
    {
        char args[4096];
        snprintf(args, sizeof args, "solve '%s'", test_problem_path("Rover4396.dat"));
        ck_assert_int_eq(run_cli("CLCONE_DEVICE=no-such-device", args), 2);
    }
    ck_assert(strstr(err_buf, "no-such-device") != NULL);
}
END_TEST

Suite *suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, solve_then_check_every_shared_problem, 0, NSHARED_PROBLEMS);
    tcase_add_test(t, device_solve_and_compare);
    tcase_add_test(t, not_converged_exits_1);
    tcase_add_test(t, malformed_inputs_exit_2);
    tcase_add_test(t, usage_errors_exit_2_and_help_exits_0);
    tcase_add_test(t, reactions_file_errors);
    tcase_add_test(t, missing_platform_is_explained);
    tcase_add_test(t, devices_lists_default);
    suite_add_tcase(s, t);
    return s;
}
