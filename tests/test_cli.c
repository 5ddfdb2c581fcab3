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
    return test_last_line(out_buf);
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

/* `check` takes what `solve` takes: the reactions of a scene's solve are
 * checked against the scene's contact problem, also for a scene file
 * that opens with a comment and a blank line. */
START_TEST(check_accepts_scene_files)
{
    char dir[] = "/tmp/clcone-chk-XXXXXX", args[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "gen stack --n 3 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    snprintf(args, sizeof args, "{ printf '# made by gen\\n\\n'; cat %s/s.scene; } > %s/c.scene", dir, dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "solve %s/c.scene --device ref --out %s/r.txt", dir, dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
    assert_last_line_format();
    ck_assert(strstr(out_buf, "scene:") != NULL);
    snprintf(args, sizeof args, "check %s/c.scene %s/r.txt", dir, dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
    assert_last_line_format();
    ck_assert_msg(strncmp(last_line(), "status=converged", 16) == 0 && strstr(last_line(), "contacts=12"), "%s",
                  last_line());
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* An option the command, model or device does not use is an error that
 * names it, not silently ignored; an unknown option is called unknown. */
START_TEST(options_that_do_not_apply_are_refused)
{
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"--frob", "unknown option '--frob'"},
        {"--frob 1", "unknown option '--frob'"},
        {"--facets 6", "--facets does not apply"},
        {"--model ccp --soft-impedance 0.5", "--soft-impedance does not apply"},
        {"--sap-beta 2", "--sap-beta does not apply"},
        {"--device ref --precision double", "--precision does not apply"},
        {"--device ref --compare", "--compare does not apply"},
        {"--dir /tmp", "--dir does not apply"},
        {"--tol 0", "--tol needs a number > 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        char args[4096];
        snprintf(args, sizeof args, "solve '%s' %s", test_problem_path("Rover4396.dat"), cases[k].args);
        ck_assert_msg(run_cli(NULL, args) == 2, "%s: exit code", cases[k].args);
        ck_assert_msg(strstr(err_buf, cases[k].expect), "%s: %s", cases[k].args, err_buf);
    }
    {
        char args[4096];
        snprintf(args, sizeof args, "check '%s' /dev/null --max-iter 5", test_problem_path("Rover4396.dat"));
        ck_assert_int_eq(run_cli(NULL, args), 2);
        ck_assert_msg(strstr(err_buf, "--max-iter does not apply"), "%s", err_buf);
    }
}
END_TEST

/* One rule for what the options leave unset: the library's default
 * options run on the device (they named nsgs, which no device has) with
 * the float tolerance, as the CLI does. */
START_TEST(library_and_cli_share_defaults)
{
    clcone_problem p;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    clcone_context *c = test_context(CLCONE_FLOAT);
    double *r;
    char args[4096];
    ck_assert(clcone_read_problem(test_problem_path("Rover4396.dat"), &p, &e) == CLCONE_OK);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_options_default(&o);
    ck_assert_msg(clcone_solve(c, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    ck_assert(res.items[0].error <= 1e-5);
    clcone_result_free(&res);
    clcone_options_resolve(&o, c);
    ck_assert(o.solver == CLCONE_SOLVER_CGS && o.tol == 1e-5);
    clcone_options_default(&o);
    clcone_options_resolve(&o, NULL);
    ck_assert(o.solver == CLCONE_SOLVER_NSGS && o.tol == 1e-8);
    snprintf(args, sizeof args, "solve '%s'", test_problem_path("Rover4396.dat"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    ck_assert(strstr(out_buf, "solver cgs") && strstr(out_buf, "tol 1.0e-05"));
    free(r);
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

/* A solve that takes seconds says how far it is on stderr (--progress
 * when stderr is not a terminal), and says nothing without it. The
 * tolerance is out of reach, so the solve runs to its 1.5 s cap however
 * fast the machine, past the first second from which progress shows. */
START_TEST(long_solve_shows_progress)
{
    char args[4096];
    snprintf(args, sizeof args, "solve '%s' --device ref --tol 1e-300 --max-seconds 1.5 --progress",
             test_problem_path("BoxesStack1-i100000-32.hdf5.dat"));
    ck_assert_msg(run_cli(NULL, args) == 1, "%s", err_buf);
    ck_assert_msg(strstr(err_buf, "solving: iteration "), "no progress: '%s'", err_buf);
    assert_last_line_format();
    snprintf(args, sizeof args, "solve '%s' --device ref --tol 1e-300 --max-seconds 1.5",
             test_problem_path("BoxesStack1-i100000-32.hdf5.dat"));
    ck_assert_int_eq(run_cli(NULL, args), 1);
    ck_assert_msg(strstr(err_buf, "solving:") == NULL, "%s", err_buf);
}
END_TEST

/* The demo's last line is the device run's and its exit code follows it:
 * on a small pile every step converges within the default cap (1000
 * iterations a step): converged, exit 0; with a cap of 5, maxiter, exit 1,
 * and it says so. The line's error is the largest step error. */
START_TEST(demo_reports_the_device_run)
{
    double err = -1, largest = -2;
    const char *p;
    ck_assert_int_eq(run_cli(NULL, "demo --n 200 --steps 2 --png /tmp/clcone-test-demo.png"), 0);
    assert_last_line_format();
    ck_assert_msg(strncmp(last_line(), "status=converged", 16) == 0, "%s", last_line());
    ck_assert(strstr(out_buf, "iteration cap") == NULL);
    ck_assert_int_eq(run_cli(NULL, "demo --n 200 --steps 2 --max-iter 5 --png /tmp/clcone-test-demo.png"), 1);
    assert_last_line_format();
    ck_assert_msg(strncmp(last_line(), "status=maxiter", 14) == 0, "%s", last_line());
    ck_assert(strstr(out_buf, "iteration cap") != NULL);
    ck_assert(sscanf(strstr(last_line(), "error="), "error=%lf", &err) == 1);
    ck_assert((p = strstr(out_buf, "largest error ")) != NULL);
    ck_assert(sscanf(p, "largest error %lf", &largest) == 1);
    ck_assert_double_eq_tol(err, largest, 1e-3 * largest);
    unlink("/tmp/clcone-test-demo.png");
}
END_TEST

/* POCL's CPU device is listed as a CPU and `--device cpu` picks it. */
START_TEST(devices_cpu_type)
{
    char args[4096];
    ck_assert_int_eq(run_cli(NULL, "devices"), 0);
    ck_assert_msg(strstr(out_buf, " CPU ") != NULL, "%s", out_buf);
    snprintf(args, sizeof args, "solve '%s' --device cpu", test_problem_path("Rover4396.dat"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    assert_last_line_format();
}
END_TEST

/* `solve F1 F2 F3` solves the files as one batch: a line per problem in
 * the given order with that problem's result, and a last line over the
 * batch (worst status, largest error, summed iterations, all contacts);
 * --out DIR holds each problem's reactions, which `check` accepts. */
START_TEST(solve_many_files_as_a_batch)
{
    static const char *const names[3] = {"Rover4396.dat", "Capsules-i125-1213.hdf5", "NESpheres_10_1.dat"};
    static const int contacts[3] = {2, 286, 9};
    static char batch_out[sizeof out_buf];
    char dir[] = "/tmp/clcone-batch-XXXXXX", args[8192], files[6000] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (int k = 0; k < 3; ++k)
        snprintf(files + strlen(files), sizeof files - strlen(files), " '%s'", test_problem_path(names[k]));
    for (int dev = 0; dev < 2; ++dev) {
        int iters = 0, it, n;
        double emax = 0, e;
        snprintf(args, sizeof args, "solve %s --device %s --out %s", files, dev ? "0" : "ref", dir);
        ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
        assert_last_line_format();
        ck_assert_msg(strncmp(last_line(), "status=converged", 16) == 0, "%s", last_line());
        ck_assert(sscanf(strstr(last_line(), "error="), "error=%lf iters=%d", &e, &it) == 2);
        ck_assert(sscanf(strstr(last_line(), "contacts="), "contacts=%d", &n) == 1);
        ck_assert_int_eq(n, 297);
        memcpy(batch_out, out_buf, sizeof batch_out);
        for (int k = 0; k < 3; ++k) {
            char key[64], *line;
            int itk, nk;
            double ek;
            snprintf(key, sizeof key, "problem %d: ", k);
            line = strstr(batch_out, key);
            ck_assert_msg(line && strstr(line, names[k]), "%s", batch_out);
            ck_assert(sscanf(strstr(line, "error="), "error=%lf iters=%d contacts=%d", &ek, &itk, &nk) == 3);
            ck_assert_int_eq(nk, contacts[k]);
            ck_assert_ptr_nonnull(strstr(line, "status=converged"));
            iters += itk;
            emax = ek > emax ? ek : emax;
            snprintf(args, sizeof args, "check '%s' %s/%s.r --tol %s", test_problem_path(names[k]), dir, names[k],
                     dev ? "1e-5" : "1e-8");
            ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
        }
        ck_assert_int_eq(it, iters);
        ck_assert_double_eq_tol(e, emax, 1e-6 * emax);
    }
    /* a batch takes scene files too (tests/test_sim.c: each as alone), and
     * names that --out can tell apart */
    snprintf(args, sizeof args, "gen stack --n 2 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    snprintf(args, sizeof args, "solve '%s' %s/s.scene --device ref", test_problem_path(names[0]), dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s %s", out_buf, err_buf);
    ck_assert_msg(strstr(out_buf, "s.scene status=converged"), "%s", out_buf);
    snprintf(args, sizeof args, "solve '%s' '%s' --device ref --out %s", test_problem_path(names[0]),
             test_problem_path(names[0]), dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "same name"), "%s", err_buf);
    snprintf(args, sizeof args, "solve %s --device ref --compare", files);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
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
    tcase_add_test(t, check_accepts_scene_files);
    tcase_add_test(t, options_that_do_not_apply_are_refused);
    tcase_add_test(t, library_and_cli_share_defaults);
    tcase_add_test(t, long_solve_shows_progress);
    tcase_add_test(t, demo_reports_the_device_run);
    tcase_add_test(t, devices_cpu_type);
    tcase_add_test(t, solve_many_files_as_a_batch);
    suite_add_tcase(s, t);
    return s;
}
