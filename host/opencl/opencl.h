/* OpenCL plumbing shared by the device solvers: the context, checked calls and
 * buffers (opencl.c), the programs and their cache (programs.c). */
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
    cl_program *programs;         /* one per .cl file, built at its first kernel */
    int nprograms;
    const char *building;         /* the program being built, for messages */
    clcone_compile_notice on_compile;
    void *on_compile_user;
    char cache_path[4096];        /* the last program built: its cache entry */
    int cache_hit;                /* the last program built came from the cache */
    size_t max_wg;                /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;           /* CL_DEVICE_LOCAL_MEM_SIZE */
    size_t mem_held;              /* bytes of the buffers made and not freed */
    void *kept;                   /* what a solver keeps between calls (opencl/primal.c's), */
    void (*kept_free)(clcone_context *c, void *kept); /* freed with the context or by the next keeper */
};

/* Work-group size of launches that do not need a particular one. */
#define CLCONE_DEFAULT_WG 64

/* Human text of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *clc_cl_error_name(cl_int e);

/* Sets err from a failed call; returns CLCONE_EDEVICE. */
clcone_status clc_cl_fail(clcone_error *err, cl_int e, const char *what);

/* Device buffer of n host doubles in the context's precision; one float cannot carry is CLCONE_EINVAL. */
clcone_status clc_buf_reals(clcone_context *c, const char *what, size_t per,
                               const double *x, size_t n, cl_mem *out,
                               clcone_error *err);
clcone_status clc_buf_ints(clcone_context *c, const int *x, size_t n,
                              cl_mem *out, clcone_error *err);
/* Uninitialised device buffer of n reals (or bytes when real is 0). */
clcone_status clc_buf_alloc(clcone_context *c, size_t bytes, cl_mem *out,
                               clcone_error *err);
/* *m with room for `bytes`, kept from call to call: *fresh = 1 when made now (its contents
 * undefined). A buffer that grows gets half again what it had (*cap, in bytes), so that sizes
 * creeping up call after call make few buffers; the first is made to measure. */
clcone_status clc_buf_reserve(clcone_context *c, cl_mem *m, size_t *cap, size_t bytes, int *fresh,
                              clcone_error *err);
/* Releases such a buffer (NULL: nothing) and gives its bytes back to the context's account. */
void clc_buf_free(clcone_context *c, cl_mem *m);
/* Host doubles into (checked as clc_buf_reals) and out of a staging area, for non-blocking transfers. */
clcone_status clc_stage_reals(const clcone_context *c, const char *what, size_t per,
                                 const double *x, size_t n, void *stage, clcone_error *err);
void clc_unstage_reals(const clcone_context *c, const void *stage, double *x, size_t n);
/* Overwrites b's first n reals with host doubles (blocking; checked as clc_buf_reals). */
clcone_status clc_write_reals(clcone_context *c, const char *what, size_t per, cl_mem b,
                                 const double *x, size_t n, clcone_error *err);
/* Reads n reals back as doubles. */
clcone_status clc_read_reals(clcone_context *c, cl_mem b, double *x,
                                size_t n, clcone_error *err);
/* Kernel arguments all in one statement: SET_ARGS(k, "name", err, KI(n), KM(buf), KLOCAL(bytes)). */
typedef struct karg {
    size_t size;
    const void *ptr;  /* NULL: __local memory of `size` bytes */
} karg;
#define KM(m) ((karg){sizeof(cl_mem), &(m)})
#define KI(i) ((karg){sizeof(int), &(i)})
#define KLOCAL(bytes) ((karg){(bytes), NULL})
/* A real argument in the context's precision: KR(c, v), v a kreal outliving the SET_ARGS call. */
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

/* Per-problem sums of K-value rows into out[K g ..] (kernels/reduce.cl), the same bits on any lanes. */
clcone_status clc_reduce_rows(clcone_context *c, cl_kernel k, int nprob, cl_mem prob_off, int K,
                                 cl_mem vals, cl_mem out, clcone_error *err);

/* Creates a kernel by name, building its program at its first kernel on this context. */
clcone_status clc_kernel(clcone_context *c, const char *name,
                            cl_kernel *k, clcone_error *err);
/* Lanes for kernel k (arguments set): want, or the kernel's limit if smaller; fails if its local memory won't fit. */
clcone_status clc_kernel_lanes(clcone_context *c, cl_kernel k, const char *name, size_t want,
                                  size_t *lanes, clcone_error *err);
/* Enqueues a 1-D kernel over global items, rounded up (kernels guard their index); local 0: the default. */
clcone_status clc_run(clcone_context *c, cl_kernel k, size_t global,
                         size_t local, const char *name, clcone_error *err);

/* The program cache key (FNV-1a over device, driver, options and source), exposed for the tests. */
void clc_cache_key(const clcone_context *c, const char *options,
                      const char *source, char key[17]);

/* Builds source (tests provoke build failures with it); the build log in err on failure. */
clcone_status clc_build_source(clcone_context *c, const char *source,
                                  const char *options, cl_program *out,
                                  clcone_error *err);

/* A .cl file's program source: the headers its "needs:" line names, then the file; malloc'ed into *out. */
clcone_status clc_program_source(const char *file, const char *source, char **out, clcone_error *err);

/* Options used to build the clcone program on this context. */
void clc_build_options(const clcone_context *c, char *buf, size_t len);

#endif
