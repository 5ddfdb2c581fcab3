/* OpenCL devices, contexts, buffers and the program cache. */
#define _POSIX_C_SOURCE 200809L
#include "opencl/opencl.h"
#include "io/outfile.h"
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

/* Kernel sources embedded by the Makefile (build/kernels_embedded.c). */
extern const char clcone_src_cone_h[];
extern const char clcone_src_local_solve_h[];
extern const char clcone_src_schedule_h[];
extern const char clcone_src_contact_h[];
extern const char clcone_src_group_solve_cl[];
extern const char clcone_src_reduce_cl[];
extern const char clcone_src_local_form_cl[];
extern const char clcone_src_apgd_cl[];
extern const char clcone_src_acgs_cl[];
extern const char clcone_src_iterate_cl[];
extern const char clcone_src_body_form_cl[];
extern const char clcone_src_jacobian_h[];
extern const char clcone_src_sap_math_h[];
extern const char clcone_src_sap_cl[];

/* The programs, one per .cl file: each is built from the shared headers
 * (the cone math, the one-contact updates, the schedule constants and
 * the per-contact helpers of contact.h) and its own file, plus SAP's
 * math for sap.cl. A program is built the first time one of its kernels
 * is asked for (clcone_kernel), so a run compiles only what it launches:
 * on POCL, storing a program in the cache compiles every kernel in it. A
 * kernel belongs to the program whose file declares it as `__kernel void
 * NAME(`. */
#define PROGRAM_PARTS_MAX 6
static const struct program_def {
    const char *name;
    const char *parts[PROGRAM_PARTS_MAX]; /* the last one declares the kernels */
} PROGRAMS[] = {
    {"reduce", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_reduce_cl}},
    {"iterate", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
                 clcone_src_iterate_cl}},
    {"local_form", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
                    clcone_src_local_form_cl}},
    {"group_solve", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
                     clcone_src_group_solve_cl}},
    {"apgd", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
              clcone_src_apgd_cl}},
    {"acgs", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
              clcone_src_acgs_cl}},
    {"body_form", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_contact_h,
                   clcone_src_body_form_cl}},
    {"sap", {clcone_src_cone_h, clcone_src_local_solve_h, clcone_src_schedule_h, clcone_src_jacobian_h,
             clcone_src_sap_math_h, clcone_src_sap_cl}},
};
_Static_assert(sizeof PROGRAMS / sizeof PROGRAMS[0] == CLCONE_NPROGRAMS,
               "CLCONE_NPROGRAMS (opencl.h) counts the rows of PROGRAMS");

#define NO_PLATFORM_HELP                                                                  \
    "no OpenCL platform found. Install an OpenCL driver: on Debian/Ubuntu "               \
    "`sudo apt-get install pocl-opencl-icd ocl-icd-opencl-dev` runs the kernels on the " \
    "CPU (or install your GPU vendor's OpenCL ICD); `clinfo -l` should then list a "     \
    "device. Use `--device ref` for the CPU reference without OpenCL"

const char *clcone_cl_error_name(cl_int e)
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

clcone_status clcone_cl_fail(clcone_error *err, cl_int e, const char *what)
{
    return clcone_fail(err, CLCONE_EDEVICE, "OpenCL: %s failed: %s (%d)", what,
                       clcone_cl_error_name(e), (int)e);
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
        return clcone_fail(err, CLCONE_EINVAL,
                           "POCL_CACHE_DIR is set but empty, which POCL cannot run with: unset it or set it to a "
                           "directory");
    e = clGetPlatformIDs(16, pls, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR_VALUE || (e == CL_SUCCESS && np == 0))
        return clcone_fail(err, CLCONE_EDEVICE, "%s", NO_PLATFORM_HELP);
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clGetPlatformIDs");
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
        return clcone_fail(err, CLCONE_EDEVICE,
                           "OpenCL platform %s found, but it offers no device (clGetDeviceIDs: %s): its driver "
                           "could not start one. POCL needs a writable cache directory (POCL_CACHE_DIR, else "
                           "XDG_CACHE_HOME/pocl, else ~/.cache/pocl); `clinfo` shows the driver's own view. Use "
                           "`--device ref` for the CPU reference",
                           names, clcone_cl_error_name(why));
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
    l.list = clcone_calloc((size_t)n, sizeof *l.list, err, "device list");
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
    int n = 0;
    *out = NULL;
    if (!spec || !*spec) spec = getenv("CLCONE_DEVICE");
    if (spec && !*spec) spec = NULL;
    if (spec && strcmp(spec, "ref") == 0)
        return clcone_fail(err, CLCONE_EINVAL, "device 'ref' is the CPU reference, not an OpenCL device");
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
        return clcone_fail(err, CLCONE_EDEVICE,
                           "no OpenCL device matches '%s' (%d devices; `clcone devices` lists them)",
                           spec ? spec : "", n);
    c = clcone_calloc(1, sizeof *c, err, "context");
    if (!c) return CLCONE_ENOMEM;
    c->platform = k.pl;
    c->device = k.dev;
    c->prec = prec;
    c->real_size = prec == CLCONE_DOUBLE ? sizeof(double) : sizeof(float);
    fill_info(k.pl, k.dev, k.index, &c->info);
    if (clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_wg, &c->max_wg, NULL) != CL_SUCCESS
        || c->max_wg == 0)
        c->max_wg = 1;
    if (clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof c->local_mem, &c->local_mem, NULL) != CL_SUCCESS)
        c->local_mem = 0;
    if (prec == CLCONE_DOUBLE && !c->info.fp64) {
        s = clcone_fail(err, CLCONE_ENOTSUP,
                        "device '%s' has no cl_khr_fp64: double precision is not available there "
                        "(use --precision float or --device ref)", c->info.name);
        free(c);
        return s;
    }
    c->ctx = clCreateContext(NULL, 1, &c->device, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        free(c);
        return clcone_cl_fail(err, e, "clCreateContext");
    }
    c->queue = clCreateCommandQueue(c->ctx, c->device, 0, &e);
    if (e != CL_SUCCESS) {
        clReleaseContext(c->ctx);
        free(c);
        return clcone_cl_fail(err, e, "clCreateCommandQueue");
    }
    *out = c;
    return CLCONE_OK;
}

void clcone_context_free(clcone_context *c)
{
    if (!c) return;
    for (int i = 0; i < CLCONE_NPROGRAMS; ++i)
        if (c->programs[i]) clReleaseProgram(c->programs[i]);
    if (c->queue) clReleaseCommandQueue(c->queue);
    if (c->ctx) clReleaseContext(c->ctx);
    free(c);
}

const clcone_device_info *clcone_context_device(const clcone_context *c) { return c ? &c->info : NULL; }
/* NULL is the CPU reference, which runs in double */
clcone_precision clcone_context_precision(const clcone_context *c) { return c ? c->prec : CLCONE_DOUBLE; }

/* ------------------------------------------------------------------ */
/* Program build and cache                                             */
/* ------------------------------------------------------------------ */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; ++s) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ^ 0xff; /* separator, so ("ab","c") != ("a","bc") */
}

void clcone_cache_key(const clcone_context *c, const char *options, const char *source,
                      char key[17])
{
    char drv[128];
    uint64_t h = 1469598103934665603ULL;
    info_string(c->device, CL_DRIVER_VERSION, drv, sizeof drv);
    h = fnv1a(h, c->info.platform);
    h = fnv1a(h, c->info.name);
    h = fnv1a(h, c->info.version);
    h = fnv1a(h, drv);
    h = fnv1a(h, options);
    h = fnv1a(h, source);
    snprintf(key, 17, "%016llx", (unsigned long long)h);
}

/* Cache directory: $CLCONE_CACHE_DIR ("off" disables), else
 * $XDG_CACHE_HOME/clcone, else $HOME/.cache/clcone. */
static int cache_dir(char *buf, size_t len)
{
    const char *d = getenv("CLCONE_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (d && strcmp(d, "off") == 0) return 0;
    if (d && *d) snprintf(buf, len, "%s", d);
    else if (x && *x) snprintf(buf, len, "%s/clcone", x);
    else if (h && *h) snprintf(buf, len, "%s/.cache/clcone", h);
    else return 0;
    return 1;
}

static void mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

/* Cache entry layout: magic, the 16-digit key, the source length, the
 * binary length, a 64-bit FNV-1a checksum of the binary, the binary. A
 * file whose magic, key or source length do not match what is being
 * built is stale and never used; one whose length or checksum does not
 * match its bytes is damaged and never reaches the driver, which trusts
 * what it is given (a flipped byte crashed it). FNV-1a is enough: each
 * step is a bijection of the state, so any single changed byte changes
 * the sum, and the cache only guards against accidents. */
#define CACHE_MAGIC "CLCONE-PROGRAM-CACHE-2\n"

static uint64_t fnv1a_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Opened without blocking and checked to be a regular file: a FIFO left
 * in the cache directory would otherwise wait forever for a writer. */
static FILE *open_regular(const char *path)
{
    struct stat st;
    FILE *f;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "rb"))) {
        close(fd);
        return NULL;
    }
    return f;
}

static unsigned char *cache_load(const char *path, const char *key, size_t srclen, size_t *binlen)
{
    FILE *f = open_regular(path);
    char magic[sizeof CACHE_MAGIC], k[17];
    unsigned long long sl = 0, bl = 0, sum = 0;
    unsigned char *bin = NULL;
    if (!f) return NULL;
    if (fread(magic, 1, sizeof CACHE_MAGIC - 1, f) != sizeof CACHE_MAGIC - 1) goto bad;
    magic[sizeof CACHE_MAGIC - 1] = 0;
    if (strcmp(magic, CACHE_MAGIC) != 0) goto bad;
    if (fread(k, 1, 16, f) != 16) goto bad;
    k[16] = 0;
    if (strcmp(k, key) != 0) goto bad;
    if (fread(&sl, sizeof sl, 1, f) != 1 || sl != srclen) goto bad;
    if (fread(&bl, sizeof bl, 1, f) != 1 || bl == 0 || bl > (1ULL << 30)) goto bad;
    if (fread(&sum, sizeof sum, 1, f) != 1) goto bad;
    bin = malloc((size_t)bl + 1);
    /* exactly bl bytes: one more means the file is not what was written */
    if (!bin || fread(bin, 1, (size_t)bl + 1, f) != bl || fnv1a_bytes(bin, (size_t)bl) != sum) goto bad;
    fclose(f);
    *binlen = (size_t)bl;
    return bin;
bad:
    free(bin);
    fclose(f);
    return NULL;
}

typedef struct cache_blob {
    const char *key;
    unsigned long long srclen, binlen, sum;
    const unsigned char *bin;
} cache_blob;

static int cache_write_fn(void *vf, const void *vctx)
{
    FILE *f = vf;
    const cache_blob *b = vctx;
    return fwrite(CACHE_MAGIC, 1, sizeof CACHE_MAGIC - 1, f) == sizeof CACHE_MAGIC - 1
                   && fwrite(b->key, 1, 16, f) == 16 && fwrite(&b->srclen, sizeof b->srclen, 1, f) == 1
                   && fwrite(&b->binlen, sizeof b->binlen, 1, f) == 1
                   && fwrite(&b->sum, sizeof b->sum, 1, f) == 1
                   && fwrite(b->bin, 1, (size_t)b->binlen, f) == b->binlen
               ? 0
               : -1;
}

static void cache_store(cl_program prog, const char *path, const char *key, size_t srclen)
{
    size_t binlen = 0;
    unsigned char *bin;
    cache_blob b;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof binlen, &binlen, NULL) != CL_SUCCESS
        || binlen == 0)
        return;
    bin = malloc(binlen);
    if (!bin) return;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
        b.key = key;
        b.srclen = srclen;
        b.binlen = binlen;
        b.sum = fnv1a_bytes(bin, binlen);
        b.bin = bin;
        /* a cache that cannot be written only costs the next compile; a
         * bad entry (even a FIFO or a link) is replaced, not written into */
        clcone_write_replace(path, cache_write_fn, &b, NULL);
    }
    free(bin);
}

static clcone_status build_log_fail(clcone_context *c, cl_program prog, cl_int e, clcone_error *err)
{
    char log[768] = "";
    size_t len = 0;
    clGetProgramBuildInfo(prog, c->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &len);
    if (len == 0 || len > sizeof log - 1) {
        /* the log is longer than the message: keep its head */
        char *full;
        clGetProgramBuildInfo(prog, c->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        full = malloc(len + 1);
        if (full && clGetProgramBuildInfo(prog, c->device, CL_PROGRAM_BUILD_LOG, len, full, NULL) == CL_SUCCESS) {
            full[len] = 0;
            snprintf(log, sizeof log, "%s", full);
        }
        free(full);
    }
    log[sizeof log - 1] = 0;
    return clcone_fail(err, CLCONE_EDEVICE,
                       "OpenCL: building program '%s'%s failed on '%s': %s (%d); build log:\n%s",
                       c->building ? c->building : "(given source)", c->building ? " (kernels/*.cl)" : "",
                       c->info.name, clcone_cl_error_name(e), (int)e, log);
}

clcone_status clcone_build_source(clcone_context *c, const char *source, const char *options,
                                  cl_program *out, clcone_error *err)
{
    char key[17], dir[3800];
    size_t srclen = strlen(source);
    cl_int e;
    cl_program prog = NULL;
    int have_cache = cache_dir(dir, sizeof dir);
    *out = NULL;
    c->cache_hit = 0;
    c->cache_path[0] = 0;
    clcone_cache_key(c, options, source, key);
    if (have_cache) {
        size_t binlen = 0;
        unsigned char *bin;
        snprintf(c->cache_path, sizeof c->cache_path, "%s/%s.bin", dir, key);
        bin = cache_load(c->cache_path, key, srclen, &binlen);
        if (bin) {
            const unsigned char *bp = bin;
            cl_int st;
            prog = clCreateProgramWithBinary(c->ctx, 1, &c->device, &binlen, &bp, &st, &e);
            free(bin);
            if (e == CL_SUCCESS && st == CL_SUCCESS
                && clBuildProgram(prog, 1, &c->device, options, NULL, NULL) == CL_SUCCESS) {
                c->cache_hit = 1;
                *out = prog;
                return CLCONE_OK;
            }
            if (prog) clReleaseProgram(prog);
            prog = NULL;
        }
    }
    if (c->on_compile && c->building) c->on_compile(c->on_compile_user, c->building, c->info.name);
    prog = clCreateProgramWithSource(c->ctx, 1, &source, &srclen, &e);
    if (e != CL_SUCCESS) return clcone_cl_fail(err, e, "clCreateProgramWithSource");
    e = clBuildProgram(prog, 1, &c->device, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        clcone_status s = build_log_fail(c, prog, e, err);
        clReleaseProgram(prog);
        return s;
    }
    if (have_cache) {
        mkdirs(dir);
        cache_store(prog, c->cache_path, key, srclen);
    }
    *out = prog;
    return CLCONE_OK;
}

void clcone_build_options(const clcone_context *c, char *buf, size_t len)
{
    snprintf(buf, len, "-DCLCONE_OPENCL%s -cl-std=CL1.2", c->prec == CLCONE_DOUBLE ? " -DCLCONE_DOUBLE" : "");
}

void clcone_context_on_compile(clcone_context *c, clcone_compile_notice fn, void *user)
{
    if (!c) return;
    c->on_compile = fn;
    c->on_compile_user = user;
}

/* The program that declares kernel `name`, or -1. */
static int program_of(const char *name)
{
    char decl[160];
    snprintf(decl, sizeof decl, "__kernel void %s(", name);
    for (int i = 0; i < CLCONE_NPROGRAMS; ++i) {
        const char *const *parts = PROGRAMS[i].parts;
        int last = 0;
        while (last + 1 < PROGRAM_PARTS_MAX && parts[last + 1]) ++last;
        if (strstr(parts[last], decl)) return i;
    }
    return -1;
}

static clcone_status build_program(clcone_context *c, int i, clcone_error *err)
{
    const struct program_def *def = &PROGRAMS[i];
    size_t total = 1;
    char *src, opts[128];
    clcone_status s;
    for (int k = 0; k < PROGRAM_PARTS_MAX && def->parts[k]; ++k) total += strlen(def->parts[k]);
    src = clcone_calloc(total, 1, err, "kernel source");
    if (!src) return CLCONE_ENOMEM;
    for (int k = 0; k < PROGRAM_PARTS_MAX && def->parts[k]; ++k) strcat(src, def->parts[k]);
    clcone_build_options(c, opts, sizeof opts);
    c->building = def->name;
    s = clcone_build_source(c, src, opts, &c->programs[i], err);
    c->building = NULL;
    free(src);
    return s;
}

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
        return clcone_fail(err, CLCONE_EDEVICE,
                           "OpenCL: a %zu-byte buffer exceeds the device's largest allocation "
                           "(%llu bytes) on '%s': the problem is too large for this device",
                           bytes, c->info.max_alloc, c->info.name);
    /* a driver may accept buffers beyond its memory and fail (or page)
     * at the launch: the sum is checked here, where the size has a name */
    if (c->info.global_mem && bytes > c->info.global_mem - (c->mem_held < c->info.global_mem ? c->mem_held : c->info.global_mem))
        return clcone_fail(err, CLCONE_EDEVICE,
                           "OpenCL: the problem does not fit in the %llu bytes of global memory of '%s': "
                           "%zu bytes are in use and a %zu-byte buffer more is needed",
                           c->info.global_mem, c->info.name, c->mem_held, bytes);
    *out = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                          (void *)host, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        return clcone_fail(err, CLCONE_EDEVICE, "OpenCL: cannot allocate %zu bytes on '%s': %s (%d)",
                           bytes, c->info.name, clcone_cl_error_name(e), (int)e);
    }
    c->mem_held += bytes;
    return CLCONE_OK;
}

void clcone_buf_free(clcone_context *c, cl_mem *m)
{
    size_t bytes = 0;
    if (!*m) return;
    if (c && clGetMemObjectInfo(*m, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) == CL_SUCCESS)
        c->mem_held -= bytes < c->mem_held ? bytes : c->mem_held;
    clReleaseMemObject(*m);
    *m = NULL;
}

clcone_status clcone_buf_alloc(clcone_context *c, size_t bytes, cl_mem *out, clcone_error *err)
{
    return create_buffer(c, bytes, NULL, out, err);
}

clcone_status clcone_buf_ints(clcone_context *c, const int *x, size_t n, cl_mem *out,
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
clcone_status clcone_stage_reals(const clcone_context *c, const char *what, size_t per, const double *x, size_t n,
                                 void *stage, clcone_error *err)
{
    double amax = 0;
    if (c->prec == CLCONE_DOUBLE) {
        memcpy(stage, x, n * sizeof(double));
        return CLCONE_OK;
    }
    for (size_t i = 0; i < n; ++i) amax = fmax(amax, fabs(x[i]));
    for (size_t i = 0; i < n; ++i) {
        double a = fabs(x[i]);
        if (a > FLT_MAX || (a != 0 && a < FLT_MIN && a > amax * FLT_EPSILON)) {
            if (per > 1)
                return clcone_fail(err, CLCONE_EINVAL,
                                   "%s %zu entry %zu: %g is outside float range (magnitudes %g to %g): solve "
                                   "in double precision or on the reference",
                                   what, i / per, i % per, x[i], FLT_MIN, FLT_MAX);
            return clcone_fail(err, CLCONE_EINVAL,
                               "%s %zu: %g is outside float range (magnitudes %g to %g): solve in double "
                               "precision or on the reference", what, i, x[i], FLT_MIN, FLT_MAX);
        }
        ((float *)stage)[i] = (float)x[i];
    }
    return CLCONE_OK;
}

void clcone_unstage_reals(const clcone_context *c, const void *stage, double *x, size_t n)
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
    *out = clcone_calloc(n ? n : 1, c->real_size, err, "staging buffer");
    if (!*out) return CLCONE_ENOMEM;
    if ((s = clcone_stage_reals(c, what, per, x, n, *out, err))) {
        free(*out);
        *out = NULL;
    }
    return s;
}

clcone_status clcone_buf_reals(clcone_context *c, const char *what, size_t per, const double *x, size_t n,
                               cl_mem *out, clcone_error *err)
{
    void *tmp;
    clcone_status s = to_device_reals(c, what, per, x, n, &tmp, err);
    if (s) return s;
    s = create_buffer(c, n * c->real_size, tmp, out, err);
    free(tmp);
    return s;
}

clcone_status clcone_write_reals(clcone_context *c, const char *what, size_t per, cl_mem b, const double *x,
                                 size_t n, clcone_error *err)
{
    void *tmp;
    cl_int e;
    clcone_status s = to_device_reals(c, what, per, x, n, &tmp, err);
    if (s) return s;
    e = n ? clEnqueueWriteBuffer(c->queue, b, CL_TRUE, 0, n * c->real_size, tmp, 0, NULL, NULL) : CL_SUCCESS;
    free(tmp);
    return e == CL_SUCCESS ? CLCONE_OK : clcone_cl_fail(err, e, "clEnqueueWriteBuffer");
}

clcone_status clcone_read_reals(clcone_context *c, cl_mem b, double *x, size_t n, clcone_error *err)
{
    void *tmp = clcone_calloc(n ? n : 1, c->real_size, err, "staging buffer");
    cl_int e;
    if (!tmp) return CLCONE_ENOMEM;
    e = clEnqueueReadBuffer(c->queue, b, CL_TRUE, 0, n * c->real_size, tmp, 0, NULL, NULL);
    if (e == CL_SUCCESS) clcone_unstage_reals(c, tmp, x, n);
    free(tmp);
    return e == CL_SUCCESS ? CLCONE_OK : clcone_cl_fail(err, e, "clEnqueueReadBuffer");
}

clcone_status clcone_set_args(cl_kernel k, const char *name, int n, const karg *a, clcone_error *err)
{
    for (int i = 0; i < n; ++i) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, a[i].size, a[i].ptr);
        if (e != CL_SUCCESS) {
            char what[128];
            snprintf(what, sizeof what, "setting argument %d of kernel %s", i, name);
            return clcone_cl_fail(err, e, what);
        }
    }
    return CLCONE_OK;
}

clcone_status clcone_kernel(clcone_context *c, const char *name, cl_kernel *k, clcone_error *err)
{
    cl_int e;
    clcone_status s;
    int i = program_of(name);
    *k = NULL;
    if (i < 0) return clcone_fail(err, CLCONE_EDEVICE, "OpenCL: no program declares kernel '%s'", name);
    if (!c->programs[i] && (s = build_program(c, i, err))) return s;
    *k = clCreateKernel(c->programs[i], name, &e);
    if (e != CL_SUCCESS) {
        *k = NULL;
        return clcone_fail(err, CLCONE_EDEVICE, "OpenCL: kernel '%s' not found: %s (%d)", name,
                           clcone_cl_error_name(e), (int)e);
    }
    return CLCONE_OK;
}

clcone_status clcone_kernel_lanes(clcone_context *c, cl_kernel k, const char *name, size_t want,
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
        return clcone_cl_fail(err, e, what);
    }
    if (c->local_mem && local > c->local_mem)
        return clcone_fail(err, CLCONE_EDEVICE,
                           "OpenCL: kernel %s needs %llu bytes of local memory; '%s' has %llu", name,
                           (unsigned long long)local, c->info.name, (unsigned long long)c->local_mem);
    if (most > c->max_wg) most = c->max_wg;
    *lanes = want < most ? want : most ? most : 1;
    return CLCONE_OK;
}

clcone_status clcone_reduce_rows(clcone_context *c, cl_kernel k, int nprob, cl_mem prob_off, int K,
                                 cl_mem vals, cl_mem out, clcone_error *err)
{
    size_t lanes;
    clcone_status s;
    if ((s = SET_ARGS(k, "reduce_rows", err, KI(nprob), KM(prob_off), KI(K), KM(vals), KM(out),
                      KLOCAL((size_t)CONE_REDUCE_WG * (size_t)K * c->real_size)))
        || (s = clcone_kernel_lanes(c, k, "reduce_rows", CONE_REDUCE_WG, &lanes, err)))
        return s;
    return clcone_run(c, k, (size_t)nprob * lanes, lanes, "reduce_rows", err);
}

clcone_status clcone_run(clcone_context *c, cl_kernel k, size_t global, size_t local,
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
    if (!local && (s = clcone_kernel_lanes(c, k, name, CLCONE_DEFAULT_WG, &local, err))) return s;
    g = (global + local - 1) / local * local;
    e = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &g, &local, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "running kernel %s", name);
        return clcone_cl_fail(err, e, what);
    }
    return CLCONE_OK;
}
