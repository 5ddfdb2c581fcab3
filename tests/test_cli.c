/* The command line as a user runs it: exit codes, the machine-readable
 * last line, and error messages for bad input. The binary is $CLCONE_CLI
 * (the Makefile sets it), else build/clcone. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

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
        {"--device ref --precision float", "--precision does not apply"},
        {"--device ref --compare", "--compare does not apply"},
        {"--dir /tmp", "--dir does not apply"},
        {"--tol 0", "--tol needs a number > 0"},
        {"--threads 0", "--threads needs an integer from 1 to 256"},
        {"--threads 2", "--threads does not apply: one FILE is one problem"},
        {"--model pyramid --facets 1025", "--facets needs an integer from 3 to 1024"},
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
        snprintf(args, sizeof args, "check '%s' /dev/null --threads 2", test_problem_path("Rover4396.dat"));
        ck_assert_int_eq(run_cli(NULL, args), 2);
        ck_assert_msg(strstr(err_buf, "--threads does not apply"), "%s", err_buf);
        snprintf(args, sizeof args, "check '%s' /dev/null --model pyramid --facets 1025",
                 test_problem_path("Rover4396.dat"));
        ck_assert_int_eq(run_cli(NULL, args), 2);
        ck_assert_msg(strstr(err_buf, "--facets needs an integer from 3 to 1024"), "%s", err_buf);
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
    ck_assert(o.solver == CLCONE_SOLVER_HYBRID && o.tol == 1e-5);
    clcone_options_default(&o);
    clcone_options_resolve(&o, NULL);
    ck_assert(o.solver == CLCONE_SOLVER_HYBRID && o.tol == 1e-8);
    snprintf(args, sizeof args, "solve '%s'", test_problem_path("Rover4396.dat"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    ck_assert(strstr(out_buf, "solver hybrid") && strstr(out_buf, "tol 1.0e-05"));
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
        snprintf(args, sizeof args, "solve %s --device %s --out %s%s", files, dev ? "0" : "ref", dir,
                 dev ? "" : " --threads 2");
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

/* A scratch directory for one test (static buffer), made afresh. */
static const char *scratch_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/clcone-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Every output is checked before the first solve: a batch whose --out
 * cannot tell two files apart, or whose --out sits in a missing
 * directory, solves nothing and leaves the old results alone. */
START_TEST(outputs_checked_before_solving)
{
    const char *dir = scratch_dir(), *pdir = test_problems_dir();
    char args[8192], path[256], got[64];
    snprintf(path, sizeof path, "%s/FC3D_Example1.dat.r", dir);
    write_text(path, "OLD\n");
    (void)test_problem_path("FC3D_Example1.dat");
    (void)test_problem_path("FrictionContact3D_1c.dat");
    snprintf(args, sizeof args, "solve '%s/FrictionContact3D_1c.dat' '%s/FC3D_Example1.dat' '%s/./FC3D_Example1.dat' "
             "--device ref --out %s", pdir, pdir, pdir, dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "same name") && !strstr(out_buf, "problem 0:"), "%s%s", out_buf, err_buf);
    test_slurp(path, got, sizeof got);
    ck_assert_str_eq(got, "OLD\n");
    /* a missing parent is refused, naming it, and not made */
    snprintf(args, sizeof args, "solve '%s/FrictionContact3D_1c.dat' '%s/FC3D_Example1.dat' --device ref "
             "--out %s/missing/deeper", pdir, pdir, dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    snprintf(path, sizeof path, "directory %s/missing: No such file or directory", dir);
    ck_assert_msg(strstr(err_buf, path) && !strstr(out_buf, "problem 0:"), "%s%s", out_buf, err_buf);
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* a missing DIR whose parent exists is made, as --vtk DIR is */
    snprintf(args, sizeof args, "solve '%s/FrictionContact3D_1c.dat' '%s/FC3D_Example1.dat' --device ref --out %s/new",
             pdir, pdir, dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s%s", out_buf, err_buf);
    snprintf(path, sizeof path, "%s/new/FC3D_Example1.dat.r", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    remove_dir(dir);
}
END_TEST

/* Two outputs on one file, by the same name or through a link, are
 * refused before anything runs; /dev/null may take any number. */
START_TEST(two_outputs_on_one_file_refused)
{
    const char *dir = scratch_dir();
    char args[4096], path[256];
    static const char *const pairs[] = {"--out %s/X --csv %s/X", "--png %s/P --plot %s/P", "--csv %s/L --out %s/T",
                                        "--vtk %s/V --out %s/V"};
    snprintf(args, sizeof args, "gen stack --n 2 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    snprintf(path, sizeof path, "%s/L", dir);
    ck_assert_int_eq(symlink("T", path), 0);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; ++k) {
        int n = snprintf(args, sizeof args, "simulate %s/s.scene --steps 2 --device ref ", dir);
        snprintf(args + n, sizeof args - (size_t)n, pairs[k], dir, dir);
        ck_assert_msg(run_cli(NULL, args) == 2, "%s: %s", args, out_buf);
        ck_assert_msg(strstr(err_buf, "are the same file") && !strstr(out_buf, "status="), "%s: %s", args, err_buf);
    }
    snprintf(path, sizeof path, "%s/X", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(args, sizeof args, "solve %s/s.scene --device ref --out %s/R --plot %s/R", dir, dir, dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "are the same file"), "%s", err_buf);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 2 --device ref --csv /dev/null --out /dev/null", dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    remove_dir(dir);
}
END_TEST

/* One rule for missing directories: no output makes the directories
 * above it (--vtk neither); --vtk DIR makes DIR itself. */
START_TEST(missing_directories_one_rule)
{
    const char *dir = scratch_dir();
    char args[4096], path[256];
    static const char *const opts[] = {"--vtk", "--csv", "--png", "--plot", "--out"};
    snprintf(args, sizeof args, "gen stack --n 2 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; ++k) {
        snprintf(args, sizeof args, "simulate %s/s.scene --steps 1 --device ref %s %s/a/b", dir, opts[k], dir);
        ck_assert_msg(run_cli(NULL, args) == 2, "%s", opts[k]);
        snprintf(path, sizeof path, "directory %s/a: No such file or directory", dir);
        ck_assert_msg(strstr(err_buf, path), "%s: %s", opts[k], err_buf);
    }
    snprintf(path, sizeof path, "%s/a", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 1 --device ref --vtk %s/a", dir, dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    snprintf(path, sizeof path, "%s/a/series.pvd", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    remove_dir(dir);
}
END_TEST

/* Files of dir whose name holds ".tmp" (what an output leaves while it
 * is being written). */
static int temporaries_in(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d))) n += strstr(de->d_name, ".tmp") != NULL;
    closedir(d);
    return n;
}

/* The CLI (CLCONE_CLI) run in a child with args (NULL-ended), stdout to
 * /dev/null, stderr into the pipe whose read end goes to *fd. */
static pid_t cli_child(int *fd, const char *const *args)
{
    const char *cli = getenv("CLCONE_CLI");
    int fds[2];
    pid_t pid;
    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        execv(cli && *cli ? cli : "build/clcone", (char *const *)args);
        _exit(127);
    }
    close(fds[1]);
    *fd = fds[0];
    return pid;
}

/* Reads fd until needle shows (no timing: the child says when), keeping
 * a tail in seen (cap bytes). */
static void read_until(int fd, char *seen, size_t cap, const char *needle)
{
    size_t len = strlen(seen);
    while (!strstr(seen, needle)) {
        ssize_t n = read(fd, seen + len, cap - 1 - len);
        ck_assert_msg(n > 0, "the run ended before '%s': %s", needle, seen);
        len += (size_t)n;
        seen[len] = 0;
        if (len > cap / 2) { /* keep the tail */
            memmove(seen, seen + len - 64, 64);
            len = 64;
            seen[len] = 0;
        }
    }
}

/* The rest of fd until it closes (its last cap / 4 bytes at least) into
 * seen; closes fd and returns the child's wait status. */
static int read_rest(int fd, pid_t pid, char *seen, size_t cap)
{
    size_t len = 0;
    int status;
    for (;;) {
        ssize_t n = read(fd, seen + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
        if (len > cap / 2) {
            memmove(seen, seen + len - cap / 4, cap / 4);
            len = cap / 4;
        }
    }
    seen[len] = 0;
    close(fd);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* `gen pile` with args into dir/p.scene, whose path goes to scene. */
static void gen_pile_in(const char *dir, const char *args, char *scene, size_t cap)
{
    char line[4096];
    snprintf(scene, cap, "%s/p.scene", dir);
    snprintf(line, sizeof line, "gen pile %s -o %s", args, scene);
    ck_assert_int_eq(run_cli(NULL, line), 0);
}

/* SIGINT during simulate: the run stops after the step under way, writes
 * the finished steps' CSV and final scene, leaves no temporary and exits
 * 130. The signal goes once the progress bar shows a finished step. */
START_TEST(interrupted_simulate_keeps_finished_steps)
{
    const char *dir = scratch_dir();
    char csv[256], scene[256], out[256], seen[8192] = "", *text, *line;
    int fd, status, lines = 0, steps_done = -1;
    size_t size;
    pid_t pid;
    clcone_world w;
    clcone_error e;
    gen_pile_in(dir, "--n 100", scene, sizeof scene);
    snprintf(csv, sizeof csv, "%s/log.csv", dir);
    snprintf(out, sizeof out, "%s/end.scene", dir);
    {
        const char *const run[] = {"clcone", "simulate", scene, "--steps", "1000000", "--device", "ref",
                                   "--progress", "--csv", csv, "--out", out, NULL};
        pid = cli_child(&fd, run);
    }
    read_until(fd, seen, sizeof seen, " steps,"); /* a finished step on the progress bar */
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    status = read_rest(fd, pid, seen, sizeof seen);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d: %s", status, seen);
    ck_assert_msg(strstr(seen, "interrupted by SIGINT after step "), "%s", seen);
    ck_assert(sscanf(strstr(seen, "after step "), "after step %d", &steps_done) == 1);
    ck_assert_int_ge(steps_done, 1);
    ck_assert_int_eq(temporaries_in(dir), 0);
    /* the CSV: the header and one line of 12 fields per finished step */
    text = test_read_all(csv, &size);
    ck_assert_msg(strncmp(text, "step,contacts,", 14) == 0, "%s", text);
    for (line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int fields = 1, step;
        for (const char *c = line + 1; *c && *c != '\n'; ++c) fields += *c == ',';
        ck_assert_int_eq(fields, 12);
        ck_assert(sscanf(line + 1, "%d,", &step) == 1);
        ck_assert_int_eq(step, ++lines);
    }
    ck_assert_int_eq(lines, steps_done);
    free(text);
    ck_assert_msg(clcone_read_world(out, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(w.s.nbodies, 100);
    clcone_world_free(&w);
    remove_dir(dir);
}
END_TEST

/* A second SIGINT ends the run at once (killed by SIGINT, as without a
 * handler) but leaves no temporary beside an output: the CSV's, open from
 * the start, is discarded. The steps never finish (tolerance 1e-300),
 * so the second signal always lands inside the first step. */
START_TEST(second_signal_stops_at_once_leaving_no_temporary)
{
    const char *dir = scratch_dir();
    char csv[256], scene[256], seen[8192] = "";
    int fd, status;
    pid_t pid;
    gen_pile_in(dir, "--n 500", scene, sizeof scene);
    snprintf(csv, sizeof csv, "%s/log.csv", dir);
    {
        const char *const run[] = {"clcone", "simulate", scene, "--steps", "10", "--device", "ref", "--tol", "1e-300",
                                   "--max-iter", "1000000000", "--csv", csv, NULL};
        pid = cli_child(&fd, run);
    }
    while (temporaries_in(dir) == 0) { /* the CSV is open: the handlers are in */
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
        usleep(1000);
    }
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    read_until(fd, seen, sizeof seen, "stopping after the current step");
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    status = read_rest(fd, pid, seen, sizeof seen);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %d: %s", status, seen);
    ck_assert_int_eq(temporaries_in(dir), 0);
    ck_assert_int_ne(access(csv, F_OK), 0); /* no step finished: nothing to keep */
    remove_dir(dir);
}
END_TEST

/* SIGTERM while export writes: the process ends at once with 130, its
 * temporary discarded, the file it would have replaced as it was. The
 * signal goes once the temporary exists (15,000 contacts: about 0.5 s of
 * writing). */
START_TEST(interrupted_export_leaves_the_target)
{
    const char *dir = scratch_dir();
    char scene[256], dat[256], seen[8192] = "", *text;
    int fd, status;
    size_t size;
    pid_t pid;
    FILE *f;
    gen_pile_in(dir, "--n 5000", scene, sizeof scene);
    snprintf(dat, sizeof dat, "%s/e.dat", dir);
    ck_assert_ptr_nonnull(f = fopen(dat, "w"));
    fputs("OLD\n", f);
    fclose(f);
    {
        const char *const run[] = {"clcone", "export", scene, "-o", dat, NULL};
        pid = cli_child(&fd, run);
    }
    while (temporaries_in(dir) == 0) {
        ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "export ended before its temporary was seen");
        usleep(500);
    }
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    status = read_rest(fd, pid, seen, sizeof seen);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d: %s", status, seen);
    ck_assert_msg(strstr(seen, "interrupted; nothing written"), "%s", seen);
    ck_assert_int_eq(temporaries_in(dir), 0);
    text = test_read_all(dat, &size);
    ck_assert_str_eq(text, "OLD\n");
    free(text);
    remove_dir(dir);
}
END_TEST

/* SIGINT or SIGTERM during a solve: the library's cancel flag stops it at
 * its next look, the reactions it reached are written whole (no
 * temporary left), and the exit code is 130 with a line saying so. The
 * signal goes once the progress line shows the solve running. */
START_TEST(interrupted_solve_writes_its_last_iterate)
{
    static const int sig[2] = {SIGINT, SIGTERM};
    const char *dir = scratch_dir();
    char scene[256], out[256], seen[8192];
    int fd, status;
    pid_t pid;
    clcone_error e;
    gen_pile_in(dir, "--n 300 --seed 5", scene, sizeof scene);
    snprintf(out, sizeof out, "%s/r.txt", dir);
    for (int k = 0; k < 2; ++k) {
        /* a tolerance no solver reaches: only the signal (or the cap) ends it */
        const char *const run[] = {"clcone", "solve", scene, "--model", "ccp", "--tol", "1e-300", "--device", "ref",
                                   "--max-seconds", "120", "--progress", "-o", out, NULL};
        double *r = calloc(3 * 900, sizeof *r);
        seen[0] = 0;
        pid = cli_child(&fd, run);
        read_until(fd, seen, sizeof seen, "solving: iteration");
        ck_assert_int_eq(kill(pid, sig[k]), 0);
        status = read_rest(fd, pid, seen, sizeof seen);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d: %s", status, seen);
        ck_assert_msg(strstr(seen, k ? "interrupted by SIGTERM: the solve stopped early"
                                     : "interrupted by SIGINT: the solve stopped early"), "%s", seen);
        ck_assert_int_eq(temporaries_in(dir), 0);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(clcone_read_reactions(out, 900, r, &e) == CLCONE_OK, "%s", e.msg);
        free(r);
        unlink(out);
    }
    remove_dir(dir);
}
END_TEST

/* solve takes -o as gen does; an option given twice is refused in every
 * command; --png-size says which of its two conditions failed;
 * the reference takes --precision double, which it runs in. */
START_TEST(options_one_rule_everywhere)
{
    const char *dir = scratch_dir();
    char args[4096], path[256];
    snprintf(args, sizeof args, "solve '%s' --device ref -o %s/r.txt", test_problem_path("Rover4396.dat"), dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    snprintf(path, sizeof path, "%s/r.txt", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(args, sizeof args, "solve '%s' -x", test_problem_path("Rover4396.dat"));
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "unknown option '-x'"), "%s", err_buf);
    snprintf(args, sizeof args, "gen stack --n 2 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 2 --steps 3 --device ref", dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--steps given twice") && !out_buf[0], "%s%s", out_buf, err_buf);
    snprintf(args, sizeof args, "gen stack --n 2 --n 3 -o %s/s3.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--n given twice"), "%s", err_buf);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 1 --device ref --png-size 800x600", dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--png-size does not apply: no --png"), "%s", err_buf);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 1 --device ref --png %s/a.png --png-size 800by600", dir,
             dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "needs a size WxH") && strstr(err_buf, "'800by600'"), "%s", err_buf);
    /* a size the picture cannot take is refused before the steps, no CSV written */
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 1 --device ref --png %s/a.png --png-size 50x50 --csv %s/a.csv",
             dir, dir, dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--png-size: each side must be within 96 .. 8192 pixels (got 50 x 50)") && !out_buf[0], "%s%s",
                  out_buf, err_buf);
    snprintf(args, sizeof args, "%s/a.csv", dir);
    ck_assert_int_ne(access(args, F_OK), 0);
    snprintf(args, sizeof args, "solve '%s' --device ref --precision double", test_problem_path("Rover4396.dat"));
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    /* the library reads "" as the default device; given so, it is a mistake */
    snprintf(args, sizeof args, "solve '%s' --device ''", test_problem_path("Rover4396.dat"));
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--device needs ref, an index or part of a device name, got ''"), "%s", err_buf);
    remove_dir(dir);
}
END_TEST

/* Options a generator or the run does not use are refused, naming them. */
START_TEST(gen_and_simulate_refuse_what_they_do_not_use)
{
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"gen pile --n 5 --theta 0.3 -o /dev/null", "--theta does not apply"},
        {"gen stack --n 5 --spread 0.2 -o /dev/null", "--spread does not apply"},
        {"gen stack --n 5 --seed 7 -o /dev/null", "--seed does not apply"},
        {"gen incline --n 5 -o /dev/null", "--n does not apply"},
        {"gen pile --n 5 --mu nan -o /dev/null", "--mu needs a finite number"},
    };
    const char *dir = scratch_dir();
    char args[4096];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        ck_assert_msg(run_cli(NULL, cases[k].args) == 2, "%s", cases[k].args);
        ck_assert_msg(strstr(err_buf, cases[k].expect), "%s: %s", cases[k].args, err_buf);
    }
    snprintf(args, sizeof args, "gen stack --n 2 -o %s/s.scene", dir);
    ck_assert_int_eq(run_cli(NULL, args), 0);
    snprintf(args, sizeof args, "simulate %s/s.scene --steps 2 --device ref --vtk-every 2", dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "--vtk-every does not apply"), "%s", err_buf);
    remove_dir(dir);
}
END_TEST

/* check measures against the tolerance the reactions were solved to (in
 * their header) and says which it used; over it, its status is the
 * stopping rule's maxiter, not failed. A float solve says its error is
 * float's and gives r's error in double, as check measures it. */
START_TEST(check_takes_the_recorded_tolerance)
{
    const char *dir = scratch_dir();
    const char *file = test_problem_path("Capsules-i125-1213.hdf5");
    char args[4096], header[256];
    double solved = -1, checked = -2;
    const char *p;
    snprintf(args, sizeof args, "solve '%s' --out %s/r.txt", file, dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    ck_assert_msg(strstr(out_buf, "evaluated in float on the device"), "%s", out_buf);
    ck_assert_msg((p = strstr(out_buf, "error of r in double (as `clcone check` measures it): ")), "%s", out_buf);
    ck_assert(sscanf(strchr(p, ':') + 2, "%lf", &solved) == 1);
    snprintf(args, sizeof args, "%s/r.txt", dir);
    test_slurp(args, header, sizeof header);
    ck_assert_msg(strstr(header, "tol=1.0000000000000001e-05 precision=float model=coulomb solver="), "%s", header);
    snprintf(args, sizeof args, "check '%s' %s/r.txt", file, dir);
    ck_assert_int_eq(run_cli(NULL, args), solved <= 1e-5 ? 0 : 1);
    ck_assert_msg(strstr(out_buf, "tolerance: 1e-05 (from ") && strstr(out_buf, "--tol T sets another"), "%s",
                  out_buf);
    ck_assert(sscanf(strstr(last_line(), "error="), "error=%lf", &checked) == 1);
    ck_assert_double_eq_tol(checked, solved, 1e-3 * solved);
    snprintf(args, sizeof args, "check '%s' %s/r.txt --tol 1e-12", file, dir);
    ck_assert_int_eq(run_cli(NULL, args), 1);
    assert_last_line_format();
    ck_assert_msg(strncmp(last_line(), "status=maxiter ", 15) == 0, "%s", last_line());
    ck_assert_msg(strstr(out_buf, "tolerance: 1e-12 (--tol)"), "%s", out_buf);
    remove_dir(dir);
}
END_TEST

START_TEST(version_is_the_library_one)
{
    char want[64];
    ck_assert_int_eq(run_cli(NULL, "--version"), 0);
    snprintf(want, sizeof want, "clcone %s\n", clcone_version());
    ck_assert_str_eq(out_buf, want);
}
END_TEST

/* demo --siconos's last line sums the reference's iterations and the
 * problems' contacts over the table's rows. */
START_TEST(demo_siconos_last_line_sums)
{
    int iters = 0, contacts = 0, it, n, rows = 0;
    const char *line;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", test_problems_dir());
    {
        char args[4200];
        snprintf(args, sizeof args, "demo --siconos --device ref --dir '%s'", dir);
        ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    }
    for (int k = 0; k < NSHARED_PROBLEMS; ++k) {
        ck_assert_msg((line = strstr(out_buf, SHARED_PROBLEMS[k])), "%s", SHARED_PROBLEMS[k]);
        ck_assert(sscanf(line + strlen(SHARED_PROBLEMS[k]), " %d | %*e %d", &n, &it) == 2);
        iters += it;
        contacts += n;
        ++rows;
    }
    ck_assert_int_eq(rows, NSHARED_PROBLEMS);
    ck_assert(sscanf(strstr(last_line(), "iters="), "iters=%d", &it) == 1);
    ck_assert(sscanf(strstr(last_line(), "contacts="), "contacts=%d", &n) == 1);
    ck_assert_int_eq(it, iters);
    ck_assert_int_eq(n, contacts);
}
END_TEST

/* demo --siconos --dir solves the problem files the folder holds: the
 * shared set's in its order, another after them, nothing else; a folder
 * without one is refused. */
START_TEST(demo_siconos_takes_the_folders_files)
{
    char dir[] = "/tmp/clcone-demo-XXXXXX", args[8400];
    const char *a, *b, *c;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "demo --siconos --device ref --dir %s", dir);
    ck_assert_int_eq(run_cli(NULL, args), 2);
    ck_assert_msg(strstr(err_buf, "no .dat or .hdf5 problem file in it"), "%s", err_buf);
    /* test_problem_path's answer lasts until its next call */
    snprintf(args, sizeof args, "cp '%s' %s/a-copy.dat && cp '%s' %s/ && touch %s/notes.txt",
             test_problem_path("Rover4396.dat"), dir, test_problem_path("Rover4396.dat"), dir, dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "cp '%s' %s/", test_problem_path("FC3D_Example1.dat"), dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "demo --siconos --device ref --dir %s", dir);
    ck_assert_msg(run_cli(NULL, args) == 0, "%s", err_buf);
    ck_assert_msg(strstr(out_buf, "the 3 problem files in"), "%s", out_buf);
    a = strstr(out_buf, "\nRover4396.dat");
    b = strstr(out_buf, "\nFC3D_Example1.dat");
    c = strstr(out_buf, "\na-copy.dat");
    ck_assert_msg(a && b && c && a < b && b < c && !strstr(out_buf, "notes.txt"), "%s", out_buf);
    ck_assert_msg(strstr(last_line(), "contacts=7"), "%s", last_line());
    remove_dir(dir);
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
    tcase_add_test(t, outputs_checked_before_solving);
    tcase_add_test(t, two_outputs_on_one_file_refused);
    tcase_add_test(t, missing_directories_one_rule);
    tcase_add_test(t, interrupted_simulate_keeps_finished_steps);
    tcase_add_test(t, second_signal_stops_at_once_leaving_no_temporary);
    tcase_add_test(t, interrupted_export_leaves_the_target);
    tcase_add_test(t, interrupted_solve_writes_its_last_iterate);
    tcase_add_test(t, options_one_rule_everywhere);
    tcase_add_test(t, gen_and_simulate_refuse_what_they_do_not_use);
    tcase_add_test(t, check_takes_the_recorded_tolerance);
    tcase_add_test(t, version_is_the_library_one);
    tcase_add_test(t, demo_siconos_last_line_sums);
    tcase_add_test(t, demo_siconos_takes_the_folders_files);
    suite_add_tcase(s, t);
    return s;
}
