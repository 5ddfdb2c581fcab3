/* What GPUs differ in, on the CPU device: no fp64 (CLCONE_NO_FP64),
 * work-groups smaller than the kernels' preferred 64 lanes, little local
 * memory, little global memory. `make oclgrind` runs the same limits on a
 * simulated GPU-like device. */
#include "testutil.h"

#include <stdint.h>

/* A device without cl_khr_fp64 (as most consumer and mobile GPUs): double
 * is refused with a message that names the device and the way out, the
 * device list says so, and float solves as it does with fp64. */
START_TEST(device_without_fp64)
{
    clcone_context *c = NULL, *f;
    clcone_device_info *list = NULL;
    clcone_problem p;
    clcone_error e;
    double *r1, *r2;
    int n = 0;
    ck_assert_msg(clcone_read_problem(test_problem_path("Capsules-i101-404.dat"), &p, &e) == CLCONE_OK, "%s", e.msg);
    r1 = calloc(3 * (size_t)p.n, sizeof *r1);
    r2 = calloc(3 * (size_t)p.n, sizeof *r2);
    f = test_context(CLCONE_FLOAT);
    test_solve_one(f, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-5, 300, 10, r1);
    clcone_context_free(f);

    setenv("CLCONE_NO_FP64", "1", 1);
    ck_assert_int_eq(clcone_context_create(NULL, CLCONE_DOUBLE, &c, &e), CLCONE_ENOTSUP);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(e.msg, "no cl_khr_fp64") && strstr(e.msg, "--precision float"), "%s", e.msg);
    ck_assert_int_eq(clcone_list_devices(&list, &n, &e), CLCONE_OK);
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; ++i) ck_assert_int_eq(list[i].fp64, 0);
    clcone_device_list_free(list);
    f = test_context(CLCONE_FLOAT);
    ck_assert_int_eq(clcone_context_device(f)->fp64, 0);
    test_solve_one(f, &p, NULL, CLCONE_MODEL_CCP, CLCONE_SOLVER_APGD, 1e-5, 300, 10, r2);
    ck_assert_mem_eq(r1, r2, 3 * (size_t)p.n * sizeof *r1);
    clcone_context_free(f);
    setenv("CLCONE_NO_FP64", "0", 1); /* "0" is off, as unset */
    c = test_context(CLCONE_DOUBLE);
    clcone_context_free(c);
    unsetenv("CLCONE_NO_FP64");
    free(r1);
    free(r2);
    clcone_problem_free(&p);
}
END_TEST

/* The CLI says the same, exit 2. */
START_TEST(cli_double_without_fp64)
{
    char args[4096], out[4096], err[4096];
    snprintf(args, sizeof args, "solve %s --device cpu --precision double", test_problem_path("Rover1040.dat"));
    ck_assert_int_eq(test_run_cli("CLCONE_NO_FP64=1", args, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "no cl_khr_fp64"), "%s", err);
}
END_TEST

/* A driver environment that POCL cannot start with: an empty
 * POCL_CACHE_DIR (POCL aborts the process) is refused before the driver
 * sees it; a cache home that is a file leaves the platform without
 * devices, which is told apart from no platform at all. */
START_TEST(cli_driver_environment)
{
    char out[4096], err[4096];
    ck_assert_int_eq(test_run_cli("POCL_CACHE_DIR=", "devices", out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "POCL_CACHE_DIR is set but empty"), "%s", err);
    /* POCL reads the cache home only where POCL_CACHE_DIR is unset */
    ck_assert_int_eq(test_run_cli("env -u POCL_CACHE_DIR XDG_CACHE_HOME=/etc/passwd", "devices", out, sizeof out, err,
                                  sizeof err),
                     2);
    ck_assert_msg(strstr(err, "found, but it offers no device") && !strstr(err, "no OpenCL platform found"), "%s",
                  err);
}
END_TEST

/* reduce_rows on a double context: its kernel and its buffers (problem
 * offsets, values, sums). */
typedef struct reduce_case {
    clcone_context *c;
    cl_kernel k;
    cl_mem off, vals, out;
} reduce_case;

static reduce_case reduce_open(const int *off, int np, const double *vals, size_t nvals, size_t nout)
{
    reduce_case t;
    clcone_error e;
    t.c = test_context(CLCONE_DOUBLE);
    ck_assert_msg(clc_kernel(t.c, "reduce_rows", &t.k, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert(clc_buf_ints(t.c, off, (size_t)np + 1, &t.off, &e) == CLCONE_OK);
    ck_assert(clc_buf_reals(t.c, "value", 1, vals, nvals, &t.vals, &e) == CLCONE_OK);
    ck_assert(clc_buf_alloc(t.c, sizeof(double) * nout, &t.out, &e) == CLCONE_OK);
    return t;
}

static void reduce_close(reduce_case *t)
{
    clReleaseKernel(t->k);
    clc_buf_free(t->c, &t->off);
    clc_buf_free(t->c, &t->vals);
    clc_buf_free(t->c, &t->out);
    clcone_context_free(t->c);
}

/* reduce_rows gives the same bits whatever lanes a device allows: 1 (a
 * CPU device's choice), 7 (not a power of two), 32 (a warp) and 64. */
START_TEST(reduce_rows_same_bits_at_any_lanes)
{
    enum { NP = 3, K = 4, N = 203 };
    const int off[NP + 1] = {0, 5, 5, N}; /* an empty problem too */
    const size_t lanes[4] = {1, 7, 32, 64};
    double vals[N * K], sums[4][NP * K];
    reduce_case t;
    clcone_error e;
    for (int i = 0; i < N * K; ++i) vals[i] = sin(1.0 + i) * (1 + i % 17) * 1e3;
    t = reduce_open(off, NP, vals, N * K, NP * K);
    for (int l = 0; l < 4; ++l) {
        ck_assert(clc_reduce_rows(t.c, t.k, NP, t.off, K, t.vals, t.out, &e) == CLCONE_OK); /* its arguments */
        ck_assert_msg(clc_run(t.c, t.k, NP * lanes[l], lanes[l], "reduce_rows", &e) == CLCONE_OK, "%s", e.msg);
        ck_assert(clc_read_reals(t.c, t.out, sums[l], NP * K, &e) == CLCONE_OK);
    }
    for (int l = 1; l < 4; ++l) ck_assert_mem_eq(sums[0], sums[l], sizeof sums[0]);
    ck_assert(sums[0][K] == 0); /* the empty problem */
    reduce_close(&t);
}
END_TEST

/* A launch whose local memory the device does not have is refused,
 * naming the kernel and both sizes; a work-group size never exceeds
 * what the kernel takes. */
START_TEST(local_memory_and_work_group_limits)
{
    const int off[2] = {0, 1};
    const double one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    reduce_case t = reduce_open(off, 1, one, 8, 8);
    size_t lanes = 0, most = 0;
    clcone_error e;
    cl_ulong had = t.c->local_mem;
    ck_assert(clGetKernelWorkGroupInfo(t.k, t.c->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL)
              == CL_SUCCESS);
    ck_assert(clc_kernel_lanes(t.c, t.k, "reduce_rows", 1u << 20, &lanes, &e) == CLCONE_OK);
    ck_assert_uint_ge(lanes, 1);
    ck_assert_uint_le(lanes, most);
    ck_assert_uint_le(lanes, t.c->max_wg);
    t.c->local_mem = 1024; /* 64 lanes x 8 sums x 8 bytes need 4096 */
    ck_assert_int_eq(clc_reduce_rows(t.c, t.k, 1, t.off, 8, t.vals, t.out, &e), CLCONE_EDEVICE);
    ck_assert_msg(strstr(e.msg, "reduce_rows needs") && strstr(e.msg, "bytes of local memory")
                      && strstr(e.msg, "has 1024"), "%s", e.msg);
    t.c->local_mem = had;
    ck_assert(clc_reduce_rows(t.c, t.k, 1, t.off, 8, t.vals, t.out, &e) == CLCONE_OK);
    reduce_close(&t);
}
END_TEST

/* A problem larger than the device's global memory in all, though each
 * buffer fits the largest allocation, is refused before the solve,
 * naming the sizes; freed buffers give their bytes back. */
START_TEST(global_memory_counted)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_problem p;
    clcone_error e;
    double *r;
    cl_ulong had = c->info.global_mem;
    cl_mem m = NULL;
    size_t held = c->mem_held;
    ck_assert(clc_buf_alloc(c, 1000, &m, &e) == CLCONE_OK);
    ck_assert_uint_eq(c->mem_held, held + 1000);
    clc_buf_free(c, &m);
    ck_assert_ptr_null(m);
    ck_assert_uint_eq(c->mem_held, held);
    ck_assert_msg(clcone_read_problem(test_problem_path("Capsules-i100-1090.dat"), &p, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    c->info.global_mem = 65536; /* W alone is 44,856 bytes in float */
    {
        clcone_options o;
        clcone_result res;
        clcone_options_default(&o);
        ck_assert_int_eq(clcone_solve(c, &p, &o, r, &res, &e), CLCONE_EDEVICE);
        ck_assert_msg(strstr(e.msg, "does not fit in the 65536 bytes of global memory"), "%s", e.msg);
    }
    ck_assert_uint_eq(c->mem_held, held); /* the failed plan gave its buffers back */
    c->info.global_mem = had;
    free(r);
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

Suite *suite_limits(void)
{
    Suite *s = suite_create("limits");
    TCase *t = tcase_create("limits");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, device_without_fp64);
    tcase_add_test(t, cli_double_without_fp64);
    tcase_add_test(t, cli_driver_environment);
    tcase_add_test(t, reduce_rows_same_bits_at_any_lanes);
    tcase_add_test(t, local_memory_and_work_group_limits);
    tcase_add_test(t, global_memory_counted);
    suite_add_tcase(s, t);
    return s;
}
