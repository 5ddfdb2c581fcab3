/* `clcone solve` and `clcone check` on a general-block problem file
 * (clcone-blocks 1, docs/formats.md section 7): the library's solver with
 * solve's report, forces files for --out and --warm, check's measure, and
 * what does not apply refused. The binary is $CLCONE_CLI, else
 * build/clcone. */
#include "testutil.h"
#include "core/blocks.h"
#include "io/blocks_file.h"
#include "solve/blocks_solve.h"

#include <string.h>

static char out_buf[1 << 16], err_buf[1 << 14];

static int run_cli(const char *args)
{
    return test_run_cli(NULL, args, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

/* One block of each kind, coupled: a cone of 3 rows (friction 0.5 and
 * 0.8), a box of bound 0.3, a nonnegative row and a free row. */
static const char PROBLEM[] = "# one block of each kind\n"
                              "clcone-blocks 1\nblocks 4 rows 6\ncone 3 0.5 0.8\nbox 1 0.3\nnonneg 1\nfree 1\n"
                              "q -1 0.2 0.1 0.5 -0.4 0.3\nW 14\n0 0 2\n1 1 2\n2 2 2\n0 1 0.1\n1 0 0.1\n3 3 1\n"
                              "4 4 1\n5 5 1.5\n0 3 0.2\n3 0 0.2\n4 5 0.1\n5 4 0.1\n2 4 0.05\n4 2 0.05\n";

/* The iterations on the last line. */
static int last_iters(void)
{
    int it = -1;
    ck_assert(sscanf(strstr(test_last_line(out_buf), "iters="), "iters=%d", &it) == 1);
    return it;
}

START_TEST(solve_and_check_a_blocks_file)
{
    char dir[] = "/tmp/clcone-blocks-XXXXXX", path[128], fpath[128], args[1024], *text;
    clc_bproblem p;
    clcone_prob_result res;
    clcone_options o;
    clcone_error e;
    double f[6] = {0}, got[6];
    size_t len;
    int cold;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/p.blocks", dir);
    snprintf(fpath, sizeof fpath, "%s/f.txt", dir);
    {
        FILE *fp = fopen(path, "w");
        ck_assert_ptr_nonnull(fp);
        fputs(PROBLEM, fp);
        fclose(fp);
    }
    /* the library's own solve, which the command line must reproduce bit for bit */
    ck_assert_msg(clc_read_blocks(path, &p, &e) == CLCONE_OK, "%s", e.msg);
    clcone_options_default(&o);
    o.solver = CLCONE_SOLVER_APGD;
    o.tol = 1e-8;
    ck_assert_msg(clc_solve_blocks(NULL, &p, &o, f, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.status, CLCONE_CONVERGED);
    snprintf(args, sizeof args, "solve %s --device ref --out %s", path, fpath);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    ck_assert_msg(strstr(out_buf, "general-block problem: 4 blocks (1 free, 1 box, 1 nonneg, 1 cone), 6 rows")
                      && strstr(out_buf, "solver:   apgd") && strstr(test_last_line(out_buf), "contacts=4"),
                  "%s", out_buf);
    ck_assert_int_eq(last_iters(), res.iters);
    text = test_read_all(fpath, &len);
    {
        static const char header[] = "# clcone forces: 6 rows, f per row; solved to tol=1e-08 precision=double "
                                     "solver=apgd\n";
        ck_assert_msg(strncmp(text, header, sizeof header - 1) == 0, "%s", text);
    }
    ck_assert(sscanf(strchr(text, '\n'), "%lf %lf %lf %lf %lf %lf", &got[0], &got[1], &got[2], &got[3], &got[4],
                     &got[5]) == 6);
    ck_assert_mem_eq(got, f, sizeof f);
    free(text);
    /* check measures the file's forces with the library's measure and the recorded tolerance */
    snprintf(args, sizeof args, "check %s %s", path, fpath);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    {
        double err = -1;
        ck_assert(sscanf(strstr(test_last_line(out_buf), "error="), "error=%lf", &err) == 1);
        ck_assert_double_eq_tol(err, clc_bproblem_error(&p, f, NULL), 1e-6 * err);
        ck_assert_msg(strstr(out_buf, "tolerance: 1e-08 (from "), "%s", out_buf);
    }
    /* warm from the answer, pgs needs fewer sweeps than cold */
    snprintf(args, sizeof args, "solve %s --device ref --solver pgs", path);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    cold = last_iters();
    snprintf(args, sizeof args, "solve %s --device ref --solver pgs --warm %s", path, fpath);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    ck_assert_int_lt(last_iters(), cold);
    /* forces of all zeros are far from the answer: check says maxiter */
    {
        FILE *fp = fopen(fpath, "w");
        ck_assert_ptr_nonnull(fp);
        fputs("0 0 0 0 0 0\n", fp);
        fclose(fp);
    }
    snprintf(args, sizeof args, "check %s %s", path, fpath);
    ck_assert_int_eq(run_cli(args), 1);
    ck_assert_msg(strncmp(test_last_line(out_buf), "status=maxiter", 14) == 0, "%s", out_buf);
    /* a forces file of the wrong count names the row */
    {
        FILE *fp = fopen(fpath, "w");
        ck_assert_ptr_nonnull(fp);
        fputs("0 0 0 0 0\n", fp);
        fclose(fp);
    }
    ck_assert_int_eq(run_cli(args), 2);
    ck_assert_msg(strstr(err_buf, "f of row 5 (the file must hold exactly 6 numbers, one per row)"), "%s", err_buf);
    /* through a pipe (one read of the file), and on the device against the reference */
    snprintf(args, sizeof args, "solve /dev/stdin --device ref < %s", path);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    snprintf(args, sizeof args, "solve %s --precision double --compare", path);
    ck_assert_msg(run_cli(args) == 0, "%s%s", out_buf, err_buf);
    ck_assert_msg(strstr(out_buf, "compare:") && strstr(out_buf, "(OpenCL, double)"), "%s", out_buf);
    clc_bproblem_free(&p);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* What a general-block problem has no use for is refused, naming it: a
 * model (its sets are the file's), a solver the backend does not run on
 * it, a batch (it is solved alone). */
START_TEST(blocks_file_refusals)
{
    static const struct {
        const char *args, *expect;
    } cases[] = {
        {"solve %s --device ref --model ccp", "--model does not apply: a general-block problem"},
        {"solve %s --device ref --facets 6", "--facets does not apply"},
        {"solve %s --device ref --solver nsgs", "solver nsgs is not available for model coulomb on the general-block problem on the CPU reference (offered: apgd (default), pgs)"},
        {"solve %s %s --device ref", "is solved alone"},
        {"check %s /dev/null --model coulomb", "--model does not apply: a general-block problem"},
    };
    const char *path = test_write_temp(PROBLEM, sizeof PROBLEM - 1);
    char args[1024];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        snprintf(args, sizeof args, cases[k].args, path, path);
        ck_assert_msg(run_cli(args) == 2, "%s: %s", args, out_buf);
        ck_assert_msg(strstr(err_buf, cases[k].expect), "%s: %s", args, err_buf);
    }
    unlink(path);
}
END_TEST

Suite *suite_cli_blocks(void)
{
    Suite *s = suite_create("cli_blocks");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, solve_and_check_a_blocks_file);
    tcase_add_test(t, blocks_file_refusals);
    suite_add_tcase(s, t);
    return s;
}
