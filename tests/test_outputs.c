/* The command line's rules for its outputs and options: no output may
 * name an input, by any path, in any command; an option given twice or
 * without its value is refused naming it; a usage error is its reason
 * and one line that says how to get the help. The binary is $CLCONE_CLI
 * (the Makefile sets it), else build/clcone. */
#include "testutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char out_buf[1 << 16], err_buf[1 << 14];

/* Runs `clcone ARGS` in directory dir (ARGS are shell words, paths in
 * them relative to dir); the exit code, output in out_buf and err_buf. */
static int run_in(const char *dir, const char *args)
{
    const char *cli = getenv("CLCONE_CLI");
    char bin[PATH_MAX], cmd[8192];
    ck_assert_ptr_nonnull(realpath(cli && *cli ? cli : "build/clcone", bin));
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s", dir, bin, args);
    return test_sh(cmd, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

/* A shared problem's absolute path (the commands run elsewhere; static
 * buffer). */
static const char *problem(const char *name)
{
    static char path[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(test_problem_path(name), path));
    return path;
}

/* A scratch directory with the inputs the cases name: in.dat (a Siconos
 * problem), s.scene (a stack of 2 boxes), r.txt (reactions of in.dat),
 * links to them (link.dat, hard.dat, link.scene), sub/ and v/series.pvd
 * (a scene named as a file --vtk v writes). Static buffer. */
static const char *inputs_dir(void)
{
    static char dir[64];
    char cmd[8192];
    snprintf(dir, sizeof dir, "/tmp/clcone-outputs-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cd '%s' && cp '%s' in.dat && mkdir sub v b && ln -s in.dat link.dat && "
             "ln in.dat hard.dat", dir, problem("FC3D_Example1.dat"));
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(run_in(dir, "gen stack --n 2 -o s.scene"), 0);
    ck_assert_int_eq(run_in(dir, "solve in.dat --device ref --out r.txt"), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && cp s.scene v/series.pvd && ln -s s.scene link.scene && "
             "ln -s ../in.dat b/in.dat.r", dir);
    ck_assert_int_eq(system(cmd), 0);
    return dir;
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Every command and output option that names an input (by its name, a
 * symbolic or hard link, ./x, a path through ..) is refused before
 * anything is read or solved: exit 2, both named, the input as it was
 * and no result printed. Converged and not converged solves alike. */
START_TEST(no_output_names_an_input)
{
    static const struct {
        const char *args, *output, *input;
    } cases[] = {
        {"solve in.dat --device ref --out in.dat", "--out in.dat", "FILE in.dat"},
        {"solve in.dat --device ref --max-iter 1 --tol 1e-300 --out in.dat", "--out in.dat", "FILE in.dat"},
        {"solve in.dat --device ref -o ./in.dat", "--out ./in.dat", "FILE in.dat"},
        {"solve in.dat --device ref --out sub/../in.dat", "--out sub/../in.dat", "FILE in.dat"},
        {"solve ./sub/../in.dat --device ref --out link.dat", "--out link.dat", "FILE ./sub/../in.dat"},
        {"solve in.dat --device ref --out hard.dat", "--out hard.dat", "FILE in.dat"},
        {"solve in.dat --device ref --plot in.dat", "--plot in.dat", "FILE in.dat"},
        {"solve in.dat --device ref --warm r.txt --out r.txt", "--out r.txt", "--warm r.txt"},
        {"solve s.scene --device ref --out link.scene", "--out link.scene", "FILE s.scene"},
        {"solve in.dat s.scene --device ref --out b", "--out b", "FILE in.dat"},
        {"simulate s.scene --steps 1 --device ref --csv s.scene", "--csv s.scene", "SCENE s.scene"},
        {"simulate s.scene --steps 1 --device ref --png ./s.scene", "--png ./s.scene", "SCENE s.scene"},
        {"simulate s.scene --steps 1 --device ref --plot link.scene", "--plot link.scene", "SCENE s.scene"},
        {"simulate link.scene --steps 1 --device ref --out sub/../s.scene", "--out sub/../s.scene",
         "SCENE link.scene"},
        {"simulate v/series.pvd --steps 1 --device ref --vtk v", "--vtk v", "SCENE v/series.pvd"},
        {"simulate ./v/../v/series.pvd --steps 1 --device ref --vtk ./v/", "--vtk ./v/",
         "SCENE ./v/../v/series.pvd"},
        {"export s.scene -o s.scene", "-o s.scene", "SCENE s.scene"},
        {"export s.scene -o link.scene", "-o link.scene", "SCENE s.scene"},
    };
    const char *dir = inputs_dir();
    char path[256], *before[3];
    static const char *const kept[3] = {"in.dat", "s.scene", "r.txt"};
    size_t len;
    for (int k = 0; k < 3; ++k) {
        snprintf(path, sizeof path, "%s/%s", dir, kept[k]);
        before[k] = test_read_all(path, &len);
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char want[256];
        ck_assert_msg(run_in(dir, cases[c].args) == 2, "%s: %s%s", cases[c].args, out_buf, err_buf);
        snprintf(want, sizeof want, "%s would overwrite the input %s", cases[c].output, cases[c].input);
        ck_assert_msg(strstr(err_buf, want) && strstr(err_buf, "no output may name an input"), "%s: %s",
                      cases[c].args, err_buf);
        ck_assert_msg(!strstr(out_buf, "status="), "%s solved: %s", cases[c].args, out_buf);
        for (int k = 0; k < 3; ++k) {
            char *now;
            snprintf(path, sizeof path, "%s/%s", dir, kept[k]);
            now = test_read_all(path, &len);
            ck_assert_msg(strcmp(now, before[k]) == 0, "%s changed %s", cases[c].args, kept[k]);
            free(now);
        }
    }
    for (int k = 0; k < 3; ++k) free(before[k]);
    /* what only lies beside an input runs: another name in the input's
     * directory, an input inside --vtk DIR under a name it does not write */
    ck_assert_msg(run_in(dir, "solve in.dat --device ref --out in2.dat") == 0, "%s", err_buf);
    ck_assert_msg(run_in(dir, "simulate s.scene --steps 1 --device ref --vtk sub --out sub/s.scene") == 0, "%s",
                  err_buf);
    ck_assert_msg(run_in(dir, "simulate sub/s.scene --steps 1 --device ref --vtk sub") == 0, "%s", err_buf);
    remove_dir(dir);
}
END_TEST

/* An output that cannot be written is refused before any work: a file
 * named with a trailing / (a directory), and, for a user other than
 * root, whom permissions do not stop, a directory that takes no new
 * files (every output is written beside its target, then renamed). */
START_TEST(unwritable_outputs_refused_first)
{
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"solve in.dat --device ref --out new.txt/", "--out new.txt/: names a directory (the trailing /)"},
        {"simulate s.scene --steps 1 --device ref --out new.scene/", "--out new.scene/: names a directory"},
        {"gen stack --n 2 -o new.scene/", "-o new.scene/: names a directory"},
        {"export s.scene -o new.dat/", "-o new.dat/: names a directory"},
        {"simulate s.scene --steps 1 --device ref --png ro/x.png", "--png ro/x.png: cannot write there: directory"},
        {"solve in.dat --device ref --plot ro/p.png", "--plot ro/p.png: cannot write there: directory"},
        {"gen stack --n 2 -o ro/a.scene", "-o ro/a.scene: cannot write there: directory"},
    };
    const char *dir = inputs_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/ro", dir);
    ck_assert_int_eq(mkdir(path, 0555), 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        if (strstr(cases[c].args, "ro/") && geteuid() == 0) continue;
        ck_assert_msg(run_in(dir, cases[c].args) == 2, "%s: %s%s", cases[c].args, out_buf, err_buf);
        ck_assert_msg(strstr(err_buf, cases[c].expect) && !strstr(out_buf, "status=") && !strstr(out_buf, "wrote"),
                      "%s: %s%s", cases[c].args, out_buf, err_buf);
    }
    chmod(path, 0755);
    remove_dir(dir);
}
END_TEST

/* An option given twice is refused, naming it, in every command (the
 * last no longer wins silently); so is one without its value. Nothing is
 * written. */
START_TEST(option_twice_or_without_value_named)
{
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"solve in.dat --device ref --tol 1e-6 --tol 1e-8", "--tol given twice"},
        {"solve in.dat --device ref -o x.r --out y.r", "--out given twice"},
        {"solve in.dat --device ref --compare --compare", "--compare given twice"},
        {"check in.dat r.txt --tol 1 --tol 2", "--tol given twice"},
        {"simulate s.scene --steps 1 --steps 2 --device ref", "--steps given twice"},
        {"simulate s.scene --steps 1 --device ref --csv x.csv --csv y.csv", "--csv given twice"},
        {"simulate s.scene --steps 1 --device ref --device ref", "--device given twice"},
        {"demo --n 3 --n 4", "--n given twice"},
        {"demo --siconos --tol 1 --tol 2", "--tol given twice"},
        {"gen stack --n 2 --n 3 -o x.scene", "--n given twice"},
        {"gen stack --n 2 -o x.scene --out y.scene", "-o/--out given twice"},
        {"export s.scene -o x.dat -o y.dat", "-o/--out given twice"},
        {"solve in.dat --device ref --tol", "option --tol is missing its value"},
        {"simulate s.scene --steps 1 --device ref --csv", "option --csv is missing its value"},
        {"simulate s.scene --steps", "option --steps is missing its value"},
        {"demo --png", "option --png is missing its value"},
        {"demo --siconos --dir", "option --dir is missing its value"},
        {"gen stack --n", "option --n is missing its value"},
        {"export s.scene -o", "option -o is missing its value"},
    };
    const char *dir = inputs_dir();
    char path[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        ck_assert_msg(run_in(dir, cases[c].args) == 2, "%s: %s%s", cases[c].args, out_buf, err_buf);
        ck_assert_msg(strstr(err_buf, cases[c].expect), "%s: %s", cases[c].args, err_buf);
    }
    /* mujoco's own options go through the same parser (a CLI built
     * without MuJoCo says only that: `make mujoco` builds it) */
    static const struct {
        const char *args, *expect;
    } mujoco[] = {
        {"mujoco m.xml --steps 1 --steps 2", "--steps given twice"},
        {"mujoco m.xml --steps 1 --compare", "option --compare is missing its value"},
        {"mujoco m.xml --steps 1 --tol 1 --tol 2", "--tol given twice"},
    };
    for (size_t c = 0; c < sizeof mujoco / sizeof mujoco[0]; ++c) {
        ck_assert_msg(run_in(dir, mujoco[c].args) == 2, "%s: %s%s", mujoco[c].args, out_buf, err_buf);
        ck_assert_msg(strstr(err_buf, mujoco[c].expect) || strstr(err_buf, "built without MuJoCo"), "%s: %s",
                      mujoco[c].args, err_buf);
    }
    static const char *const unwritten[] = {"x.r", "y.r", "x.csv", "y.csv", "x.scene", "y.scene", "x.dat", "y.dat"};
    for (size_t k = 0; k < sizeof unwritten / sizeof unwritten[0]; ++k) {
        snprintf(path, sizeof path, "%s/%s", dir, unwritten[k]);
        ck_assert_msg(access(path, F_OK) != 0, "%s written", unwritten[k]);
    }
    remove_dir(dir);
}
END_TEST

/* A usage error (or a generator refusing its parameters) is two lines on
 * stderr: the reason, then how to get the command's help (the usage
 * itself, 51 lines for solve, is not printed). */
START_TEST(usage_error_is_reason_and_hint)
{
    static const struct {
        const char *args, *reason, *hint;
    } cases[] = {
        {"solve in.dat --device ref --facets 8", "--facets does not apply", "clcone solve --help"},
        {"solve in.dat --tol -1", "--tol needs a number > 0", "clcone solve --help"},
        {"solve", "solve needs a problem FILE", "clcone solve --help"},
        {"check in.dat", "check needs a problem FILE and a reactions file", "clcone check --help"},
        {"simulate s.scene --steps 0", "--steps needs an integer >= 1", "clcone simulate --help"},
        {"simulate s.scene --steps 1 --warm r.txt", "--warm does not apply", "clcone simulate --help"},
        {"gen pile --n 3 --mu x -o p.scene", "--mu needs a finite number", "clcone gen --help"},
        {"gen", "gen needs a generator NAME", "clcone gen --help"},
        {"gen pile --n 2000000 -o p.scene", "is too large", "clcone gen --help"},
        {"solve in.dat --max-iter 99999999999", "--max-iter needs an integer from 1 to 2147483647", "clcone solve --help"},
        {"export", "export needs a SCENE", "clcone export --help"},
        {"demo --n 0", "--n needs an integer >= 1", "clcone demo --help"},
        {"demo --siconos --model ccp", "--model does not apply", "clcone demo --siconos --help"},
        {"solvers --bogus", "unexpected argument '--bogus'", "clcone solvers --help"},
        {"devices x", "unexpected argument 'x'", "clcone devices --help"},
        {"frobnicate", "unknown command 'frobnicate'", "clcone help"},
    };
    const char *dir = inputs_dir();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char want[256];
        int lines = 0;
        ck_assert_msg(run_in(dir, cases[c].args) == 2, "%s: %s%s", cases[c].args, out_buf, err_buf);
        for (const char *p = err_buf; *p; ++p) lines += *p == '\n';
        snprintf(want, sizeof want, "\nRun '%s' for ", cases[c].hint);
        ck_assert_msg(lines == 2 && strncmp(err_buf, "clcone: ", 8) == 0 && strstr(err_buf, cases[c].reason)
                          && strstr(err_buf, want),
                      "%s: %s", cases[c].args, err_buf);
    }
    remove_dir(dir);
}
END_TEST

/* The main help states the rules for outputs and options. */
START_TEST(help_states_the_rules)
{
    ck_assert_int_eq(run_in("/tmp", "--help"), 0);
    ck_assert_msg(strstr(out_buf, "No output may name an input") && strstr(out_buf, "or another output")
                      && strstr(out_buf, "no option may be given twice"),
                  "%s", out_buf);
}
END_TEST

/* check measures reactions under the law their file records (and the
 * pyramid's facets and fit), not Coulomb by default: a ccp answer is
 * converged under ccp and far from it under Coulomb; --model measures
 * under another and says what the file records; a file without the
 * record is measured under Coulomb, as before. */
START_TEST(check_takes_the_recorded_model)
{
    const char *dir = inputs_dir();
    char args[4096], header[512], cmd[4200];
    double solved = -1, checked = -2, coulomb = -3;
    snprintf(args, sizeof args, "solve '%s' --device ref --model ccp --out ccp.r",
             problem("Capsules-i125-1213.hdf5"));
    ck_assert_msg(run_in(dir, args) == 0, "%s", err_buf);
    ck_assert(sscanf(strstr(test_last_line(out_buf), "error="), "error=%lf", &solved) == 1);
    snprintf(args, sizeof args, "%s/ccp.r", dir);
    test_slurp(args, header, sizeof header);
    ck_assert_msg(strstr(header, " model=ccp solver=hybrid\n"), "%s", header);
    snprintf(args, sizeof args, "check '%s' ccp.r", problem("Capsules-i125-1213.hdf5"));
    ck_assert_msg(run_in(dir, args) == 0, "%s%s", out_buf, err_buf);
    ck_assert_msg(strstr(out_buf, "model:     ccp (recorded in ccp.r's header"), "%s", out_buf);
    ck_assert(sscanf(strstr(test_last_line(out_buf), "error="), "error=%lf", &checked) == 1);
    ck_assert_double_eq_tol(checked, solved, 1e-6 * solved);
    snprintf(args, sizeof args, "check '%s' ccp.r --model coulomb", problem("Capsules-i125-1213.hdf5"));
    ck_assert_int_eq(run_in(dir, args), 1);
    ck_assert_msg(strstr(out_buf, "model:     coulomb (--model; ccp.r records ccp)"), "%s", out_buf);
    ck_assert(sscanf(strstr(test_last_line(out_buf), "error="), "error=%lf", &coulomb) == 1);
    ck_assert_double_gt(coulomb, 1e3 * solved);
    /* an old file: the header line without the record */
    snprintf(cmd, sizeof cmd, "cd '%s' && sed '1s/ model=.*//' ccp.r > old.r", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(args, sizeof args, "check '%s' old.r", problem("Capsules-i125-1213.hdf5"));
    ck_assert_int_eq(run_in(dir, args), 1);
    ck_assert_msg(strstr(out_buf, "model:     coulomb (the default: old.r records none"), "%s", out_buf);
    /* the pyramid's facets and fit come with it */
    ck_assert_msg(run_in(dir, "solve in.dat --device ref --model pyramid --facets 5 --fit inner --out p.r") == 0,
                  "%s", err_buf);
    snprintf(args, sizeof args, "%s/p.r", dir);
    test_slurp(args, header, sizeof header);
    ck_assert_msg(strstr(header, " model=pyramid facets=5 fit=inner solver=lemke\n"), "%s", header);
    ck_assert_msg(run_in(dir, "check in.dat p.r") == 0, "%s%s", out_buf, err_buf);
    ck_assert_msg(strstr(out_buf, "pyramid:   5 facets, inner fit"), "%s", out_buf);
    remove_dir(dir);
}
END_TEST

/* The reactions file's record of its solve through the library: written
 * and read back word for word; a header of an older clcone (tolerance
 * only) reads with none recorded; a word the reader cannot take (too
 * long, not a word) is not written, and one in a file is not read. */
START_TEST(reactions_record_round_trip)
{
    static const double r[6] = {1, 0.1, -0.2, 2, 0, 0.5};
    clcone_reactions_info in, out;
    clcone_error e;
    double got[6];
    char path[64]; /* its own copy: the helper's buffer is reused by the temporaries below */
    snprintf(path, sizeof path, "%s", test_write_temp("", 0));
    memset(&in, 0, sizeof in);
    in.tol = 1e-6;
    in.precision = CLCONE_FLOAT;
    snprintf(in.model, sizeof in.model, "pyramid");
    snprintf(in.solver, sizeof in.solver, "lemke");
    snprintf(in.fit, sizeof in.fit, "inner");
    in.facets = 12;
    ck_assert_msg(clcone_write_reactions_info(path, 2, r, &in, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_read_reactions_info(path, 2, got, &out, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_mem_eq(got, r, sizeof r);
    ck_assert(out.tol == in.tol && out.precision == CLCONE_FLOAT && out.facets == 12);
    ck_assert_str_eq(out.model, "pyramid");
    ck_assert_str_eq(out.solver, "lemke");
    ck_assert_str_eq(out.fit, "inner");
    /* an older file: tolerance and precision only */
    {
        static const char old[] = "# clcone reactions: 2 contacts, r_n r_t1 r_t2 per contact; solved to tol=1e-05 "
                                  "precision=double\n1 0 0\n2 0 0\n";
        const char *op = test_write_temp(old, sizeof old - 1);
        ck_assert_msg(clcone_read_reactions_info(op, 2, got, &out, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert(out.tol == 1e-5 && out.model[0] == 0 && out.solver[0] == 0 && out.facets == 0);
        unlink(op);
    }
    /* what is not a word the reader takes is neither written nor read */
    snprintf(in.model, sizeof in.model, "Two words");
    ck_assert_msg(clcone_write_reactions_info(path, 2, r, &in, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_read_reactions_info(path, 2, got, &out, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert(out.model[0] == 0);
    ck_assert_str_eq(out.solver, "lemke");
    {
        /* a model name longer than any is not read; facets clcone never
         * writes are refused (test_io's reactions_header_refused) */
        static const char odd[] = "# clcone reactions: 2 contacts; solved to tol=1e-05 precision=double "
                                  "model=averyveryverylongmodelname\n1 0 0\n2 0 0\n";
        const char *op = test_write_temp(odd, sizeof odd - 1);
        ck_assert_msg(clcone_read_reactions_info(op, 2, got, &out, &e) == CLCONE_OK, "%s", e.msg);
        ck_assert(out.model[0] == 0 && out.facets == 0);
        unlink(op);
    }
    unlink(path);
}
END_TEST

/* demo --siconos names the reference solver it runs (the library's
 * default for coulomb on the reference), not a fixed "NSGS". */
START_TEST(demo_siconos_names_its_solvers)
{
    clcone_options o;
    char args[4200], want[128];
    clcone_options_default(&o);
    clcone_options_resolve(&o, NULL);
    char dir[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(test_problems_dir(), dir));
    snprintf(args, sizeof args, "demo --siconos --device ref --dir '%s'", dir);
    ck_assert_msg(run_in("/tmp", args) == 0, "%s", err_buf);
    snprintf(want, sizeof want, "reference: %s, double, 1 thread", clcone_solver_name(o.solver));
    ck_assert_msg(strstr(out_buf, want), "%s", out_buf);
}
END_TEST

Suite *suite_outputs(void)
{
    Suite *s = suite_create("outputs");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, no_output_names_an_input);
    tcase_add_test(t, option_twice_or_without_value_named);
    tcase_add_test(t, usage_error_is_reason_and_hint);
    tcase_add_test(t, unwritable_outputs_refused_first);
    tcase_add_test(t, help_states_the_rules);
    tcase_add_test(t, check_takes_the_recorded_model);
    tcase_add_test(t, reactions_record_round_trip);
    tcase_add_test(t, demo_siconos_names_its_solvers);
    suite_add_tcase(s, t);
    return s;
}
