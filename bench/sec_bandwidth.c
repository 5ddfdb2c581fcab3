/* Section 2: the hardware limit. A STREAM-style triad a = b + s c on the
 * same OpenCL device (float, scalar and float4 kernels, large buffers, best
 * of several runs), the bytes one body-form Jacobi iteration must move and
 * the bandwidth that iteration achieves, as a fraction of the probe. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "opencl/opencl.h"

#include <stdlib.h>
#include <string.h>

static const char *TRIAD_SRC =
    "__kernel void triad(int n, __global float *a, __global const float *b,\n"
    "                    __global const float *c, float s)\n"
    "{ int i = get_global_id(0); if (i < n) a[i] = b[i] + s * c[i]; }\n"
    "__kernel void triad4(int n4, __global float4 *a, __global const float4 *b,\n"
    "                     __global const float4 *c, float s)\n"
    "{ int i = get_global_id(0); if (i < n4) a[i] = b[i] + s * c[i]; }\n";

static int is_static_body(const clcone_body *b)
{
    if (b->inv_mass != 0) return 0;
    for (int k = 0; k < 9; ++k)
        if (b->inv_inertia[k] != 0) return 0;
    return 1;
}

double bench_jacobi_bytes(const clcone_scene *s, int rs, long long *E_out, long long *nbm_out)
{
    long long n = s->ncontacts, nb = s->nbodies, E = 0, nbm = 0;
    char *touched = calloc((size_t)nb + 1, 1);
    for (long long c = 0; c < n; ++c) {
        const clcone_contact *ct = &s->contacts[c];
        int ids[2] = {ct->a, ct->b};
        for (int k = 0; k < 2; ++k)
            if (ids[k] >= 0 && !is_static_body(&s->bodies[ids[k]])) {
                E++;
                if (touched && !touched[ids[k]]) {
                    touched[ids[k]] = 1;
                    nbm++;
                }
            }
    }
    free(touched);
    if (E_out) *E_out = E;
    if (nbm_out) *nbm_out = nbm;
    /* body_gather: ptr (nb+1 ints), bc (E ints), bs (E chars); frame 9n,
     *   x 3n, arm 3E, inv_mass nb, inv_inertia 9nb reals; writes dv 6nb.
     * body_jacobi_step: ca, cb (2n ints), prob (n ints), active (1 int);
     *   frame 9n, arm 3E, dv 6nbm, Rd 3n, q 3n, mu n, omega n, r 3n
     *   reals; writes rn 3n. */
    return 4.0 * (double)(nb + 1) + 5.0 * (double)E + 12.0 * (double)n + 4.0
           + (double)rs * (35.0 * (double)n + 6.0 * (double)E + 16.0 * (double)nb + 6.0 * (double)nbm);
}

static int triad_best(bench *b, FILE *f, clcone_context *c, int vec4, size_t n, int reps, double *best_gbs,
                      double *median_gbs)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem A = NULL, B = NULL, C = NULL;
    clcone_error err;
    cl_int e;
    int ok = 0, ni = (int)(vec4 ? n / 4 : n);
    float s = 3.0f;
    double *gbs = calloc((size_t)reps, sizeof *gbs);
    const char *name = vec4 ? "triad4" : "triad";
    if (!gbs) {
        bench_fail(b, f, "triad: out of memory");
        return 0;
    }
    if (clc_build_source(c, TRIAD_SRC, "-cl-std=CL1.2", &prog, &err)) {
        bench_fail(b, f, "triad kernel build failed: %s", err.msg);
        goto out;
    }
    k = clCreateKernel(prog, name, &e);
    if (e != CL_SUCCESS) {
        bench_fail(b, f, "clCreateKernel(%s): %s", name, clc_cl_error_name(e));
        k = NULL;
        goto out;
    }
    if (clc_buf_alloc(c, n * sizeof(float), &A, &err) || clc_buf_alloc(c, n * sizeof(float), &B, &err)
        || clc_buf_alloc(c, n * sizeof(float), &C, &err)) {
        bench_fail(b, f, "triad buffers of %zu floats: %s", n, err.msg);
        goto out;
    }
    {
        float one = 1.0f, two = 2.0f, zero = 0.0f;
        if (clEnqueueFillBuffer(c->queue, B, &one, sizeof one, 0, n * sizeof(float), 0, NULL, NULL)
            || clEnqueueFillBuffer(c->queue, C, &two, sizeof two, 0, n * sizeof(float), 0, NULL, NULL)
            || clEnqueueFillBuffer(c->queue, A, &zero, sizeof zero, 0, n * sizeof(float), 0, NULL, NULL)
            || clFinish(c->queue)) {
            bench_fail(b, f, "triad: filling the buffers failed");
            goto out;
        }
    }
    if (clSetKernelArg(k, 0, sizeof(int), &ni) || clSetKernelArg(k, 1, sizeof(cl_mem), &A)
        || clSetKernelArg(k, 2, sizeof(cl_mem), &B) || clSetKernelArg(k, 3, sizeof(cl_mem), &C)
        || clSetKernelArg(k, 4, sizeof(float), &s)) {
        bench_fail(b, f, "triad: clSetKernelArg failed");
        goto out;
    }
    /* one untimed launch: POCL compiles the kernel at its first launch */
    if (clc_run(c, k, (size_t)ni, 0, name, &err) || clFinish(c->queue)) {
        bench_fail(b, f, "triad warm-up launch failed: %s", err.msg);
        goto out;
    }
    for (int r = 0; r < reps; ++r) {
        double t = bench_now();
        if (clc_run(c, k, (size_t)ni, 0, name, &err) || clFinish(c->queue)) {
            bench_fail(b, f, "triad launch failed: %s", err.msg);
            goto out;
        }
        gbs[r] = 3.0 * (double)n * sizeof(float) / (bench_now() - t) / 1e9;
    }
    {
        /* check the result once: a = 1 + 3 * 2 */
        float probe[4];
        if (clEnqueueReadBuffer(c->queue, A, CL_TRUE, (n / 2) * sizeof(float), sizeof probe, probe, 0, NULL, NULL)
            != CL_SUCCESS
            || probe[0] != 7.0f || probe[3] != 7.0f) {
            bench_fail(b, f, "triad result wrong or unreadable (expected 7)");
            goto out;
        }
    }
    *best_gbs = 0;
    for (int r = 0; r < reps; ++r)
        if (gbs[r] > *best_gbs) *best_gbs = gbs[r];
    for (int i = 1; i < reps; ++i)
        for (int j = i; j > 0 && gbs[j - 1] > gbs[j]; --j) {
            double t = gbs[j];
            gbs[j] = gbs[j - 1];
            gbs[j - 1] = t;
        }
    *median_gbs = gbs[reps / 2];
    ok = 1;
out:
    clc_buf_free(c, &A);
    clc_buf_free(c, &B);
    clc_buf_free(c, &C);
    if (k) clReleaseKernel(k);
    if (prog) clReleaseProgram(prog);
    free(gbs);
    return ok;
}

void bench_section_bandwidth(bench *b, FILE *f)
{
    clcone_context *c = b->fctx;
    size_t n = b->quick ? ((size_t)1 << 24) : ((size_t)1 << 25);
    int reps = b->quick ? 8 : 12;
    double best[2] = {0, 0}, med[2] = {0, 0};
    int ok[2] = {0, 0};
    if (!c) return;
    if ((unsigned long long)(n * sizeof(float)) > c->info.max_alloc) n = (size_t)(c->info.max_alloc / 4 / 16 * 16);
    for (int v = 0; v < 2; ++v) ok[v] = triad_best(b, f, c, v, n, reps, &best[v], &med[v]);
    fprintf(f, "Triad `a[i] = b[i] + s*c[i]` in float on %s, three buffers of %zu floats (%.0f MiB each), "
               "%d timed launches after one untimed (POCL compiles at the first launch); bytes counted as "
               "STREAM does: 3 x 4 bytes per element (two reads, one write). Wall time of the launch + clFinish.\n\n",
            b->dev_short, n, (double)n * 4 / (1 << 20), reps);
    fprintf(f, "| device | precision | kernel | best GB/s | median GB/s |\n|---|---|---|---|---|\n");
    for (int v = 0; v < 2; ++v)
        if (ok[v])
            fprintf(f, "| %s | float | %s | %.2f | %.2f |\n", b->dev_short, v ? "triad4 (float4)" : "triad (scalar)",
                    best[v], med[v]);
    b->triad_gbs = best[0] > best[1] ? best[0] : best[1];
    if (b->triad_gbs > 0) fprintf(f, "\nProbe bandwidth (best of both): **%.2f GB/s**.\n\n", b->triad_gbs);

    /* The Jacobi iteration's traffic */
    fprintf(f, "### Bytes one body-form Jacobi iteration must move\n\n"
               "One device Jacobi iteration on a scene is two kernels (kernels/body_form.cl): "
               "`body_gather` over nb bodies and `body_jacobi_step` (w = J dv + R r formed in registers, "
               "then the projected step) over n contacts. Counting every array element a kernel touches once "
               "(perfect reuse inside a kernel, none between kernels), with s the real size (4 float, 8 "
               "double), E the (contact, moving side) pairs of the per-body lists and nbm the moving bodies "
               "that have contacts:\n\n"
               "- body_gather: reads ptr 4(nb+1), bc 4E, bs 1E bytes; frame 9n, x 3n, arm 3E, inv_mass nb, "
               "inv_inertia 9nb reals; writes dv 6nb reals\n"
               "- body_jacobi_step: reads ca, cb 8n, prob 4n, active 4 bytes; frame 9n, arm 3E, dv 6nbm, "
               "Rd 3n, q 3n, mu n, omega n, r 3n reals; writes r' 3n reals\n\n"
               "**bytes/iteration = 4(nb+1) + 5E + 12n + 4 + s (35n + 6E + 16nb + 6nbm)**\n\n");
    {
        clcone_scene s;
        clcone_error err;
        clcone_options o;
        int L = b->quick ? 129 : 408, H = 2, M = b->quick ? 60 : 60, flag = 0;
        double per = 0, t100 = 0, bytes;
        long long E = 0, nbm = 0;
        if (clc_gen_grid(L, H, 0.5, 0.01, &s, &err)) {
            bench_fail(b, f, "grid %dx%dx%d: %s", L, L, H, err.msg);
            return;
        }
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_CCP;
        o.solver = CLCONE_SOLVER_JACOBI;
        bytes = bench_jacobi_bytes(&s, 4, &E, &nbm);
        if (bench_iter_time(c, &s, &o, M, &per, &t100, &flag, &err)) {
            bench_fail(b, f, "device Jacobi on the %dx%dx%d grid: %s", L, L, H, err.msg);
        } else {
            double gbs = bytes / (per * 1e-3) / 1e9;
            b->bw_scene_contacts = s.ncontacts;
            b->bw_iter_ms = per;
            b->bw_t100_ms = t100;
            b->bw_L = L;
            b->bw_flag = flag;
            fprintf(f, "Measured on the grid scene %dx%dx%d (clc_gen_grid, mu 0.5, dt 0.01): n = %d contacts, "
                       "nb = %d bodies, E = %lld, nbm = %lld; float: %.1f MB per iteration (%.0f bytes per contact). "
                       "Time of one iteration = (T(100 + %d iterations) - T(100 iterations)) / %d, both runs "
                       "with no error check after the library's fixed first 100 (check_every = 2^30).\n\n",
                    L, L, H, s.ncontacts, s.nbodies, E, nbm, bytes / 1e6, bytes / s.ncontacts, M, M);
            fprintf(f, "| device | precision | model | solver | contacts | time/iteration | bytes/iteration | "
                       "achieved GB/s | achieved / probe |\n|---|---|---|---|---|---|---|---|---|\n");
            fprintf(f, "| %s | float | ccp | jacobi (body form) | %d | %.2f ms%s | %.1f MB | %.2f | %.3f |\n\n",
                    b->dev_short, s.ncontacts, per, bench_time_flag(flag), bytes / 1e6, gbs,
                    b->triad_gbs > 0 ? gbs / b->triad_gbs : 0.0);
            if (flag == BENCH_TIME_NOISY)
                fprintf(f, "(b) **unreliable**: over three tries the %d extra iterations cost under a quarter of the "
                           "mean iteration of the 100-iteration run (%.1f ms, checks included); the machine was "
                           "loaded by other processes (see the load average in the header).\n\n",
                        M, t100 / 100);
        }
        clcone_scene_free(&s);
    }
}
