/* OpenCL devices, contexts, checked calls, buffers and launches (the
 * programs and their cache: programs.c). */
#define _POSIX_C_SOURCE 200809L
#include "opencl/opencl.h"
#include "schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* from cl_khr_icd: the ICD loader found no platform */
#define CL_PLATFORM_NOT_FOUND_KHR_VALUE (-1001)


#define NO_PLATFORM_HELP                                                                  \
    "no OpenCL platform found. Install an OpenCL driver: on Debian/Ubuntu "               \
    "`sudo apt-get install pocl-opencl-icd ocl-icd-opencl-dev` runs the kernels on the " \
    "CPU (or install your GPU vendor's OpenCL ICD); `clinfo -l` should then list a "     \
    "device. Use `--device ref` for the CPU reference without OpenCL"

const char *clc_cl_error_name(cl_int e)
{
    switch (e) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_PLATFORM_NOT_FOUND_KHR_VALUE: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

clcone_status clc_cl_fail(clcone_error *err, cl_int e, const char *what)
{
    return clc_fail(err, CLCONE_EDEVICE, "OpenCL: %s failed: %s (%d)", what,
                       clc_cl_error_name(e), (int)e);
}

static void info_string(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS) snprintf(buf, len, "?");
    buf[len - 1] = 0;
}

/* CLCONE_NO_FP64 set to anything but "" or "0" makes every device look
 * as most consumer and mobile GPUs are: without cl_khr_fp64. A CPU
 * device then shows what a user of such a GPU sees (tests/test_limits.c). */
static int no_fp64_asked(void)
{
    const char *v = getenv("CLCONE_NO_FP64");
    return v && *v && strcmp(v, "0") != 0;
}

static void fill_info(cl_platform_id pl, cl_device_id d, int index, clcone_device_info *o)
{
    cl_device_type type = 0;
    cl_uint cu = 0;
    cl_ulong mem = 0, alloc = 0;
    char ext[8192];
    memset(o, 0, sizeof *o);
    o->index = index;
    if (clGetPlatformInfo(pl, CL_PLATFORM_NAME, sizeof o->platform, o->platform, NULL) != CL_SUCCESS)
        snprintf(o->platform, sizeof o->platform, "?");
    o->platform[sizeof o->platform - 1] = 0;
    info_string(d, CL_DEVICE_NAME, o->name, sizeof o->name);
    info_string(d, CL_DEVICE_VERSION, o->version, sizeof o->version);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
    info_string(d, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
    o->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    o->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    o->compute_units = (int)cu;
    o->global_mem = mem;
    o->max_alloc = alloc;
    o->fp64 = strstr(ext, "cl_khr_fp64") != NULL && !no_fp64_asked();
}

/* Walks every device of every platform in a fixed order; calls fn for
 * each until it returns non-zero. */
typedef int (*device_visit)(cl_platform_id, cl_device_id, int index, void *ctx);
static clcone_status visit_devices(device_visit fn, void *ctx, int *count, clcone_error *err)
{
    cl_uint np = 0;
    cl_platform_id pls[16];
    int index = 0;
    cl_int e, why = CL_SUCCESS;
    const char *pocl_cache = getenv("POCL_CACHE_DIR");
    char names[256] = "";
    /* POCL asserts on an empty one and takes the whole process down */
    if (pocl_cache && !*pocl_cache)
        return clc_fail(err, CLCONE_EINVAL,
                           "POCL_CACHE_DIR is set but empty, which POCL cannot run with: unset it or set it to a "
                           "directory");
    e = clGetPlatformIDs(16, pls, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR_VALUE || (e == CL_SUCCESS && np == 0))
        return clc_fail(err, CLCONE_EDEVICE, "%s", NO_PLATFORM_HELP);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clGetPlatformIDs");
    if (np > 16) np = 16;
    for (cl_uint p = 0; p < np; ++p) {
        cl_uint nd = 0;
        cl_device_id devs[64];
        char name[64] = "?";
        clGetPlatformInfo(pls[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        name[sizeof name - 1] = 0;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s'%s'", p ? ", " : "", name);
        if ((e = clGetDeviceIDs(pls[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd)) != CL_SUCCESS) {
            why = e;
            continue;
        }
        if (nd > 64) nd = 64;
        for (cl_uint d = 0; d < nd; ++d, ++index)
            if (fn && fn(pls[p], devs[d], index, ctx)) {
                if (count) *count = index + 1;
                return CLCONE_OK;
            }
    }
    if (count) *count = index;
    if (index == 0)
        return clc_fail(err, CLCONE_EDEVICE,
                           "OpenCL platform %s found, but it offers no device (clGetDeviceIDs: %s): its driver "
                           "could not start one. POCL needs a writable cache directory (POCL_CACHE_DIR, else "
                           "XDG_CACHE_HOME/pocl, else ~/.cache/pocl); `clinfo` shows the driver's own view. Use "
                           "`--device ref` for the CPU reference",
                           names, clc_cl_error_name(why));
    return CLCONE_OK;
}

typedef struct list_ctx {
    clcone_device_info *list;
} list_ctx;

static int visit_list(cl_platform_id pl, cl_device_id d, int index, void *vctx)
{
    list_ctx *l = vctx;
    fill_info(pl, d, index, &l->list[index]);
    return 0;
}

clcone_status clcone_list_devices(clcone_device_info **list, int *count, clcone_error *err)
{
    CLCONE_REQUIRE(err, list);
    CLCONE_REQUIRE(err, count);
    list_ctx l;
    int n = 0;
    clcone_status s = visit_devices(NULL, NULL, &n, err);
    *list = NULL;
    *count = 0;
    if (s) return s;
    l.list = clc_calloc((size_t)n, sizeof *l.list, err, "device list");
    if (!l.list) return CLCONE_ENOMEM;
    s = visit_devices(visit_list, &l, &n, err);
    if (s) {
        free(l.list);
        return s;
    }
    *list = l.list;
    *count = n;
    return CLCONE_OK;
}

void clcone_device_list_free(clcone_device_info *list)
{
    free(list);
}

/* Device choice: by index, by name substring, or the default rule. */
typedef struct pick_ctx {
    const char *spec;
    int want_index;   /* >= 0: by index */
    int want_gpu;     /* default rule pass: 1 GPU, 0 CPU/any */
    cl_platform_id pl;
    cl_device_id dev;
    int index;
    int found;
} pick_ctx;

static int visit_pick(cl_platform_id pl, cl_device_id d, int index, void *vctx)
{
    pick_ctx *k = vctx;
    clcone_device_info info;
    int ok;
    fill_info(pl, d, index, &info);
    if (k->want_index >= 0) ok = index == k->want_index;
    else if (k->spec)
        ok = strstr(info.name, k->spec) != NULL
             || ((strcmp(k->spec, "cpu") == 0 || strcmp(k->spec, "CPU") == 0) && info.is_cpu)
             || ((strcmp(k->spec, "gpu") == 0 || strcmp(k->spec, "GPU") == 0) && info.is_gpu);
    else ok = k->want_gpu ? info.is_gpu : 1;
    if (ok) {
        k->pl = pl;
        k->dev = d;
        k->index = index;
        k->found = 1;
    }
    return ok;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; ++s)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

clcone_status clcone_context_create(const char *spec, clcone_precision prec,
                                    clcone_context **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, out);
    pick_ctx k;
    clcone_context *c;
    cl_int e;
    clcone_status s;
    int n = 0, from_env = !spec || !*spec;
    *out = NULL;
    if (prec != CLCONE_FLOAT && prec != CLCONE_DOUBLE)
        return clc_fail(err, CLCONE_EINVAL, "precision %d: CLCONE_FLOAT or CLCONE_DOUBLE", (int)prec);
    if (from_env) spec = getenv("CLCONE_DEVICE");
    if (spec && !*spec) spec = NULL;
    if (spec && strcmp(spec, "ref") == 0)
        return clc_fail(err, CLCONE_EINVAL, "device 'ref' is the CPU reference, not an OpenCL device");
    memset(&k, 0, sizeof k);
    k.want_index = -1;
    if (spec && all_digits(spec)) {
        long v = strlen(spec) <= 9 ? strtol(spec, NULL, 10) : 1000000000L;
        k.want_index = (int)v; /* an index past the list matches nothing */
    }
    k.spec = spec && k.want_index < 0 ? spec : NULL;
    k.want_gpu = 1;
    if ((s = visit_devices(visit_pick, &k, &n, err))) return s;
    if (!k.found && !spec) {
        k.want_gpu = 0;
        if ((s = visit_devices(visit_pick, &k, &n, err))) return s;
    }
    if (!k.found)
        return clc_fail(err, CLCONE_EDEVICE,
                           "no OpenCL device matches '%s'%s (%d devices; `clcone devices` lists them)",
                           spec ? spec : "", spec && from_env ? " (from $CLCONE_DEVICE)" : "", n);
    c = clc_calloc(1, sizeof *c, err, "context");
    if (!c) return CLCONE_ENOMEM;
    c->platform = k.pl;
    c->device = k.dev;
    c->prec = prec;
    c->real_size = prec == CLCONE_DOUBLE ? sizeof(double) : sizeof(float);
    fill_info(k.pl, k.dev, k.index, &c->info);
    info_string(c->device, CL_DRIVER_VERSION, c->driver, sizeof c->driver);
    if (clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_wg, &c->max_wg, NULL) != CL_SUCCESS
        || c->max_wg == 0)
        c->max_wg = 1;
    if (clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof c->local_mem, &c->local_mem, NULL) != CL_SUCCESS)
        c->local_mem = 0;
    if (prec == CLCONE_DOUBLE && !c->info.fp64) {
        s = clc_fail(err, CLCONE_ENOTSUP,
                        "device '%s' has no cl_khr_fp64: double precision is not available there "
                        "(use --precision float or --device ref)", c->info.name);
        free(c);
        return s;
    }
    c->ctx = clCreateContext(NULL, 1, &c->device, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        free(c);
        return clc_cl_fail(err, e, "clCreateContext");
    }
    c->queue = clCreateCommandQueue(c->ctx, c->device, 0, &e);
    if (e != CL_SUCCESS) {
        clReleaseContext(c->ctx);
        free(c);
        return clc_cl_fail(err, e, "clCreateCommandQueue");
    }
    *out = c;
    return CLCONE_OK;
}

void clcone_context_free(clcone_context *c)
{
    if (!c) return;
    if (c->kept_free) c->kept_free(c, c->kept);
    for (int i = 0; i < c->nprograms; ++i)
        if (c->programs[i]) clReleaseProgram(c->programs[i]);
    free(c->programs);
    if (c->queue) clReleaseCommandQueue(c->queue);
    if (c->ctx) clReleaseContext(c->ctx);
    free(c);
}

const clcone_device_info *clcone_context_device(const clcone_context *c) { return c ? &c->info : NULL; }
/* NULL is the CPU reference, which runs in double */
clcone_precision clcone_context_precision(const clcone_context *c) { return c ? c->prec : CLCONE_DOUBLE; }

size_t clcone_context_memory(const clcone_context *c) { return c ? c->mem_held : 0; }

/* ------------------------------------------------------------------ */
/* Buffers and launches                                                */
/* ------------------------------------------------------------------ */

static clcone_status create_buffer(clcone_context *c, size_t bytes, const void *host, cl_mem *out,
                                   clcone_error *err)
{
    cl_int e;
    if (bytes == 0) { /* OpenCL has no empty buffers; nothing to copy */
        bytes = 16;
        host = NULL;
    }
    if (bytes > c->info.max_alloc)
        return clc_fail(err, CLCONE_EDEVICE,
                           "OpenCL: a %zu-byte buffer exceeds the device's largest allocation "
                           "(%llu bytes) on '%s': the problem is too large for this device",
                           bytes, c->info.max_alloc, c->info.name);
    /* a driver may accept buffers beyond its memory and fail (or page)
     * at the launch: the sum is checked here, where the size has a name */
    if (c->info.global_mem && bytes > c->info.global_mem - (c->mem_held < c->info.global_mem ? c->mem_held : c->info.global_mem))
        return clc_fail(err, CLCONE_EDEVICE,
                           "OpenCL: the problem does not fit in the %llu bytes of global memory of '%s': "
                           "%zu bytes are in use and a %zu-byte buffer more is needed",
                           c->info.global_mem, c->info.name, c->mem_held, bytes);
    *out = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                          (void *)host, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        return clc_fail(err, CLCONE_EDEVICE, "OpenCL: cannot allocate %zu bytes on '%s': %s (%d)",
                           bytes, c->info.name, clc_cl_error_name(e), (int)e);
    }
    c->mem_held += bytes;
    return CLCONE_OK;
}

void clc_buf_free(clcone_context *c, cl_mem *m)
{
    size_t bytes = 0;
    if (!*m) return;
    if (c && clGetMemObjectInfo(*m, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) == CL_SUCCESS)
        c->mem_held -= bytes < c->mem_held ? bytes : c->mem_held;
    clReleaseMemObject(*m);
    *m = NULL;
}

clcone_status clc_buf_alloc(clcone_context *c, size_t bytes, cl_mem *out, clcone_error *err)
{
    return create_buffer(c, bytes, NULL, out, err);
}

clcone_status clc_buf_reserve(clcone_context *c, cl_mem *m, size_t *cap, size_t bytes, int *fresh,
                              clcone_error *err)
{
    size_t want = *cap + *cap / 2;
    clcone_status s;
    *fresh = !*m || *cap < bytes;
    if (!*fresh) return CLCONE_OK;
    if (want < bytes || want > c->info.max_alloc) want = bytes;
    clc_buf_free(c, m);
    *cap = 0;
    if (want > bytes && clc_buf_alloc(c, want, m, err) != CLCONE_OK) want = bytes; /* the room to spare does not fit */
    if (!*m && (s = clc_buf_alloc(c, want, m, err))) return s;
    *cap = want;
    return CLCONE_OK;
}

clcone_status clc_buf_ints(clcone_context *c, const int *x, size_t n, cl_mem *out,
                              clcone_error *err)
{
    static const int zero[4] = {0, 0, 0, 0};
    return create_buffer(c, n * sizeof(int), n ? (const void *)x : zero, out, err);
}

/* Doubles into `stage` in the device precision. A value that float
 * cannot hold is refused, not rounded to inf or 0: beyond FLT_MAX it
 * becomes inf, and a normal-range-starved array (every entry below
 * FLT_MIN, say a W of 1e-50) flushes to zeros that leave the solver
 * spinning to its cap. A tiny entry beside much larger ones in the same
 * array is below float's rounding of them anyway and may flush. */
clcone_status clc_stage_reals(const clcone_context *c, const char *what, size_t per, const double *x, size_t n,
                                 void *stage, clcone_error *err)
{
    double amax = 0;
    if (c->prec == CLCONE_DOUBLE) {
        memcpy(stage, x, n * sizeof(double));
        return per == 3 ? clc_check_squares(x, n, DBL_MAX, what, err) : CLCONE_OK;
    }
    for (size_t i = 0; i < n; ++i) amax = fmax(amax, fabs(x[i]));
    for (size_t i = 0; i < n; ++i) {
        double a = fabs(x[i]);
        if (a > FLT_MAX || (a != 0 && a < FLT_MIN && a > amax * FLT_EPSILON)) {
            if (per > 1)
                return clc_fail(err, CLCONE_EINVAL,
                                   "%s %zu entry %zu: %g is outside float range (magnitudes %g to %g): solve "
                                   "in double precision or on the reference",
                                   what, i / per, i % per, x[i], FLT_MIN, FLT_MAX);
            return clc_fail(err, CLCONE_EINVAL,
                               "%s %zu: %g is outside float range (magnitudes %g to %g): solve in double "
                               "precision or on the reference", what, i, x[i], FLT_MIN, FLT_MAX);
        }
        ((float *)stage)[i] = (float)x[i];
    }
    return per == 3 ? clc_check_squares(x, n, FLT_MAX, what, err) : CLCONE_OK;
}

void clc_unstage_reals(const clcone_context *c, const void *stage, double *x, size_t n)
{
    if (c->prec == CLCONE_DOUBLE) memcpy(x, stage, n * sizeof(double));
    else
        for (size_t i = 0; i < n; ++i) x[i] = ((const float *)stage)[i];
}

/* A staging copy made for one transfer. */
static clcone_status to_device_reals(clcone_context *c, const char *what, size_t per, const double *x, size_t n,
                                     void **out, clcone_error *err)
{
    clcone_status s;
    *out = clc_calloc(n ? n : 1, c->real_size, err, "staging buffer");
    if (!*out) return CLCONE_ENOMEM;
    if ((s = clc_stage_reals(c, what, per, x, n, *out, err))) {
        free(*out);
        *out = NULL;
    }
    return s;
}

clcone_status clc_buf_reals(clcone_context *c, const char *what, size_t per, const double *x, size_t n,
                               cl_mem *out, clcone_error *err)
{
    void *tmp;
    clcone_status s = to_device_reals(c, what, per, x, n, &tmp, err);
    if (s) return s;
    s = create_buffer(c, n * c->real_size, tmp, out, err);
    free(tmp);
    return s;
}

clcone_status clc_write_reals(clcone_context *c, const char *what, size_t per, cl_mem b, const double *x,
                                 size_t n, clcone_error *err)
{
    void *tmp;
    cl_int e;
    clcone_status s = to_device_reals(c, what, per, x, n, &tmp, err);
    if (s) return s;
    e = n ? clEnqueueWriteBuffer(c->queue, b, CL_TRUE, 0, n * c->real_size, tmp, 0, NULL, NULL) : CL_SUCCESS;
    free(tmp);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueWriteBuffer");
}

clcone_status clc_read_reals(clcone_context *c, cl_mem b, double *x, size_t n, clcone_error *err)
{
    void *tmp = clc_calloc(n ? n : 1, c->real_size, err, "staging buffer");
    cl_int e;
    if (!tmp) return CLCONE_ENOMEM;
    e = clEnqueueReadBuffer(c->queue, b, CL_TRUE, 0, n * c->real_size, tmp, 0, NULL, NULL);
    if (e == CL_SUCCESS) clc_unstage_reals(c, tmp, x, n);
    free(tmp);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueReadBuffer");
}

clcone_status clc_set_args(cl_kernel k, const char *name, int n, const karg *a, clcone_error *err)
{
    for (int i = 0; i < n; ++i) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, a[i].size, a[i].ptr);
        if (e != CL_SUCCESS) {
            char what[128];
            snprintf(what, sizeof what, "setting argument %d of kernel %s", i, name);
            return clc_cl_fail(err, e, what);
        }
    }
    return CLCONE_OK;
}

clcone_status clc_kernel_lanes(clcone_context *c, cl_kernel k, const char *name, size_t want,
                                  size_t *lanes, clcone_error *err)
{
    size_t most = 0;
    cl_ulong local = 0;
    cl_int e = clGetKernelWorkGroupInfo(k, c->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);
    if (e == CL_SUCCESS)
        e = clGetKernelWorkGroupInfo(k, c->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    if (e != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "clGetKernelWorkGroupInfo(%s)", name);
        return clc_cl_fail(err, e, what);
    }
    if (c->local_mem && local > c->local_mem)
        return clc_fail(err, CLCONE_EDEVICE,
                           "OpenCL: kernel %s needs %llu bytes of local memory; '%s' has %llu", name,
                           (unsigned long long)local, c->info.name, (unsigned long long)c->local_mem);
    if (most > c->max_wg) most = c->max_wg;
    *lanes = want < most ? want : most ? most : 1;
    return CLCONE_OK;
}

clcone_status clc_reduce_rows(clcone_context *c, cl_kernel k, int nprob, cl_mem prob_off, int K,
                                 cl_mem vals, cl_mem out, clcone_error *err)
{
    size_t lanes;
    clcone_status s;
    if ((s = SET_ARGS(k, "reduce_rows", err, KI(nprob), KM(prob_off), KI(K), KM(vals), KM(out),
                      KLOCAL((size_t)CONE_REDUCE_WG * (size_t)K * c->real_size)))
        || (s = clc_kernel_lanes(c, k, "reduce_rows", CONE_REDUCE_WG, &lanes, err)))
        return s;
    return clc_run(c, k, (size_t)nprob * lanes, lanes, "reduce_rows", err);
}

clcone_status clc_run(clcone_context *c, cl_kernel k, size_t global, size_t local,
                         const char *name, clcone_error *err)
{
    cl_int e;
    size_t g;
    clcone_status s;
    if (global == 0) return CLCONE_OK;
    /* a size of our choosing rather than the runtime's, which may vary
     * with the global size: a device that compiles per work-group size
     * at the first launch (POCL) then does it once per kernel, in the
     * warm-up of a plan, not in a later solve */
    if (!local && (s = clc_kernel_lanes(c, k, name, CLCONE_DEFAULT_WG, &local, err))) return s;
    g = (global + local - 1) / local * local;
    e = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &g, &local, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "running kernel %s", name);
        return clc_cl_fail(err, e, what);
    }
    return CLCONE_OK;
}
