/* OpenCL plumbing shared by the device solvers: the context, checked
 * calls and buffers (opencl.c), the programs and their cache
 * (programs.c). */
#ifndef CLCONE_OPENCL_H
#define CLCONE_OPENCL_H

#include "core/internal.h"

#include <CL/cl.h>

struct clcone_context {
    clcone_device_info info;
    clcone_precision prec;
    size_t real_size;             /* sizeof(float) or sizeof(double) */
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    char driver[128];             /* CL_DRIVER_VERSION, for the cache key */
    cl_program *programs;         /* one per .cl file, each built at its
                                     first kernel (programs.c) */
    int nprograms;
    const char *building;         /* the program being built, for messages */
    clcone_compile_notice on_compile;
    void *on_compile_user;
    char cache_path[4096];        /* the last program built: its cache entry */
    int cache_hit;                /* the last program built came from the cache */
    size_t max_wg;                /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;           /* CL_DEVICE_LOCAL_MEM_SIZE */
    size_t mem_held;              /* bytes of the buffers made and not freed */
};

/* Work-group size of launches that do not need a particular one. */
#define CLCONE_DEFAULT_WG 64

/* Human text of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *clc_cl_error_name(cl_int e);

/* Sets err from a failed call; returns CLCONE_EDEVICE. */
clcone_status clc_cl_fail(clcone_error *err, cl_int e, const char *what);

/* Device buffer from host doubles, converted to the context precision.
 * x holds items of `per` entries named `what` in messages ("W block" ->
 * "W block 12 entry 3: 1e-50 is outside float range ..."); a value float
 * cannot carry is CLCONE_EINVAL. */
clcone_status clc_buf_reals(clcone_context *c, const char *what, size_t per,
                               const double *x, size_t n, cl_mem *out,
                               clcone_error *err);
clcone_status clc_buf_ints(clcone_context *c, const int *x, size_t n,
                              cl_mem *out, clcone_error *err);
/* Uninitialised device buffer of n reals (or bytes when real is 0). */
clcone_status clc_buf_alloc(clcone_context *c, size_t bytes, cl_mem *out,
                               clcone_error *err);
/* Releases a buffer made by the functions above (NULL is nothing) and
 * gives its bytes back to the context's account. */
void clc_buf_free(clcone_context *c, cl_mem *m);
/* Host doubles into a staging area of n reals in the context precision
 * (checked as clc_buf_reals checks them), for transfers that do not
 * block; and back. */
clcone_status clc_stage_reals(const clcone_context *c, const char *what, size_t per,
                                 const double *x, size_t n, void *stage, clcone_error *err);
void clc_unstage_reals(const clcone_context *c, const void *stage, double *x, size_t n);
/* Overwrites the first n reals of b with host doubles (blocking),
 * checked as clc_buf_reals checks them. */
clcone_status clc_write_reals(clcone_context *c, const char *what, size_t per, cl_mem b,
                                 const double *x, size_t n, clcone_error *err);
/* Reads n reals back as doubles. */
clcone_status clc_read_reals(clcone_context *c, cl_mem b, double *x,
                                size_t n, clcone_error *err);
/* Kernel arguments as (size, pointer) pairs, so a call sets them all in
 * one statement: SET_ARGS(k, "name", err, KI(n), KM(buf), KLOCAL(bytes)). */
typedef struct karg {
    size_t size;
    const void *ptr;  /* NULL: __local memory of `size` bytes */
} karg;
#define KM(m) ((karg){sizeof(cl_mem), &(m)})
#define KI(i) ((karg){sizeof(int), &(i)})
#define KLOCAL(bytes) ((karg){(bytes), NULL})
/* A real argument in the context's precision: KR(c, v) with v a kreal
 * that outlives the SET_ARGS call. */
typedef struct kreal {
    double d;
    float f;
} kreal;
#define KREAL(x) ((kreal){(x), (float)(x)})
#define KR(c, v) ((karg){(c)->real_size, (c)->prec == CLCONE_DOUBLE ? (const void *)&(v).d : (const void *)&(v).f})
clcone_status clc_set_args(cl_kernel k, const char *name, int n, const karg *a,
                              clcone_error *err);
#define SET_ARGS(k, name, err, ...)                                              \
    clc_set_args(k, name, (int)(sizeof((karg[]){__VA_ARGS__}) / sizeof(karg)), \
                    (karg[]){__VA_ARGS__}, err)

/* Per-problem sums of K-value rows (kernels/reduce.cl) with kernel k:
 * work-group g sums rows prob_off[g] .. prob_off[g + 1] - 1 of vals into
 * out[K g .. K g + K), the same bits whatever lanes the device allows. */
clcone_status clc_reduce_rows(clcone_context *c, cl_kernel k, int nprob, cl_mem prob_off, int K,
                                 cl_mem vals, cl_mem out, clcone_error *err);

/* Creates a kernel by name, building the program that declares it when
 * it is the first of its kernels on this context (programs.c). */
clcone_status clc_kernel(clcone_context *c, const char *name,
                            cl_kernel *k, clcone_error *err);
/* Work-group size for kernel k whose arguments are set: `want`, or the
 * largest the kernel takes on this device when that is smaller
 * (CL_KERNEL_WORK_GROUP_SIZE: a GPU lowers it for a kernel that needs
 * many registers). Fails, naming the kernel and the sizes, when the
 * local memory the kernel needs (its own __local arrays and __local
 * arguments) exceeds the device's. */
clcone_status clc_kernel_lanes(clcone_context *c, cl_kernel k, const char *name, size_t want,
                                  size_t *lanes, clcone_error *err);
/* Enqueues a 1-D kernel over `global` items (rounded up to the local
 * size; kernels guard their index). local = 0: CLCONE_DEFAULT_WG, or the
 * kernel's largest size (clc_kernel_lanes) when that is smaller. */
clcone_status clc_run(clcone_context *c, cl_kernel k, size_t global,
                         size_t local, const char *name, clcone_error *err);

/* The program cache key of a source and build options for the context's
 * device: 16 hex digits of a 64-bit FNV-1a over device name, device and
 * driver versions, options and source. Exposed for the tests. */
void clc_cache_key(const clcone_context *c, const char *options,
                      const char *source, char key[17]);

/* Builds `source` (tests use it to provoke build failures); the build log
 * is in err on failure. */
clcone_status clc_build_source(clcone_context *c, const char *source,
                                  const char *options, cl_program *out,
                                  clcone_error *err);

/* The source of the program of kernels/FILE (a .cl file's source): the
 * headers its first line, a comment "needs: A.h B.h", names, in order,
 * then the file; malloc'ed into *out. CLCONE_EINVAL naming the file when
 * the line is missing or names a header kernels/ does not have. */
clcone_status clc_program_source(const char *file, const char *source, char **out, clcone_error *err);

/* Options used to build the clcone program on this context. */
void clc_build_options(const clcone_context *c, char *buf, size_t len);

#endif
