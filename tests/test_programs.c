/* The device programs (host/opencl/programs.c): one per .cl file of
 * kernels/, built from the headers its first line names and the file,
 * with a message naming the file when that line is missing or wrong; and
 * every program builds. */
#include "testutil.h"

#include <string.h>

/* embedded by the Makefile (build/kernels_embedded.c) */
extern const char clc_src_schedule_h[];
extern const char clc_src_cone_h[];

START_TEST(program_is_its_needs_then_the_file)
{
    const char *src = "/* needs: schedule.h cone.h */\n__kernel void k(void) {}\n";
    char *out = NULL;
    clcone_error e;
    size_t a = strlen(clc_src_schedule_h), b = strlen(clc_src_cone_h);
    ck_assert_msg(clc_program_source("k.cl", src, &out, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert(strncmp(out, clc_src_schedule_h, a) == 0);
    ck_assert(strncmp(out + a, clc_src_cone_h, b) == 0);
    ck_assert_str_eq(out + a + b, src);
    free(out);
}
END_TEST

START_TEST(program_without_needs_is_refused)
{
    char *out = NULL;
    clcone_error e;
    ck_assert_int_eq(clc_program_source("k.cl", "__kernel void k(void) {}\n", &out, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "kernels/k.cl") && strstr(e.msg, "needs:"), "%s", e.msg);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(clc_program_source("k.cl", "/* needs: schedule.h nope.h */\n", &out, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "kernels/k.cl needs nope.h"), "%s", e.msg);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(clc_program_source("k.cl", "/* needs: schedule.h\n */\n", &out, &e), CLCONE_EINVAL);
    ck_assert_ptr_null(out);
}
END_TEST

/* A kernel of each .cl file of kernels/: each comes from its own program. */
START_TEST(every_program_builds)
{
    static const char *const one_kernel_each[] = {"acgs_terms",    "apgd_candidate",      "blk_mul",
                                                  "body_gather",   "group_solve_local",   "jacobi_step",
                                                  "matvec_local",  "newton_local",        "newton_krylov_local",
                                                  "primal_newton", "reduce_rows",         "sap_step"};
    clcone_context *c = test_context(CLCONE_FLOAT);
    for (size_t i = 0; i < sizeof one_kernel_each / sizeof one_kernel_each[0]; ++i) {
        cl_kernel k = NULL;
        clcone_error e;
        ck_assert_msg(clc_kernel(c, one_kernel_each[i], &k, &e) == CLCONE_OK, "%s: %s", one_kernel_each[i], e.msg);
        clReleaseKernel(k);
    }
    ck_assert_int_eq(c->nprograms, (int)(sizeof one_kernel_each / sizeof one_kernel_each[0]));
    for (int i = 0; i < c->nprograms; ++i) ck_assert_ptr_nonnull(c->programs[i]);
    clcone_context_free(c);
}
END_TEST

Suite *suite_programs(void)
{
    Suite *s = suite_create("programs");
    TCase *t = tcase_create("programs");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, program_is_its_needs_then_the_file);
    tcase_add_test(t, program_without_needs_is_refused);
    tcase_add_test(t, every_program_builds);
    suite_add_tcase(s, t);
    return s;
}
