/* The device programs: one per .cl file of kernels/, each built from the
 * headers its first line names (a comment "needs: cone.h schedule.h ...",
 * in that order) and the file itself, the first time one of its kernels is
 * asked for (clc_kernel), so a run compiles only what it launches (on
 * POCL, storing a program in the cache compiles every kernel in it); and
 * the cache of built programs. A kernel belongs to the program whose
 * file declares it as `__kernel void NAME(`. A new .cl file is a new
 * program without a line of host code. */
#define _POSIX_C_SOURCE 200809L
#include "opencl/opencl.h"
#include "io/outfile.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every .h and .cl file of kernels/ by name, embedded by the Makefile
 * (build/kernels_embedded.c), ending with {NULL, NULL}. */
struct clc_kernel_file {
    const char *name;
    const char *source;
};
extern const struct clc_kernel_file clc_kernel_files[];

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; ++s) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ^ 0xff; /* separator, so ("ab","c") != ("a","bc") */
}

void clc_cache_key(const clcone_context *c, const char *options, const char *source,
                      char key[17])
{
    uint64_t h = 1469598103934665603ULL;
    h = fnv1a(h, c->info.platform);
    h = fnv1a(h, c->info.name);
    h = fnv1a(h, c->info.version);
    h = fnv1a(h, c->driver);
    h = fnv1a(h, options);
    h = fnv1a(h, source);
    snprintf(key, 17, "%016llx", (unsigned long long)h);
}

enum { CACHE_NONE, CACHE_BINARIES, CACHE_MARKS };

/* Cache directory: $CLCONE_CACHE_DIR ("off" disables), else
 * $XDG_CACHE_HOME/clcone, else $HOME/.cache/clcone; which kind of entry
 * it keeps. On POCL by default only marks (an empty KEY.built: this
 * program was built here before, so its first build's notice is not
 * given again): POCL keeps a kernel cache of its own (source, options,
 * device), and asking it for a program's binary makes it first compile
 * every kernel for any work-group size: the newton program's first
 * build took 6.6 minutes so, 11 s without, and a warm start is as quick
 * from POCL's cache (2-core AMD EPYC, POCL 3.1). A directory named in
 * $CLCONE_CACHE_DIR keeps binaries there too. */
static int cache_dir(const clcone_context *c, char *buf, size_t len)
{
    const char *d = getenv("CLCONE_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (d && strcmp(d, "off") == 0) return CACHE_NONE;
    /* a path that does not fit is no cache, never a truncated one (another
     * directory); a relative XDG_CACHE_HOME is ignored, as the XDG rules
     * say */
    if (d && *d) return (size_t)snprintf(buf, len, "%s", d) < len ? CACHE_BINARIES : CACHE_NONE;
    if (x && x[0] == '/') n = snprintf(buf, len, "%s/clcone", x);
    else if (h && *h) n = snprintf(buf, len, "%s/.cache/clcone", h);
    else return CACHE_NONE;
    if (n < 0 || (size_t)n >= len) return CACHE_NONE;
    return strstr(c->info.platform, "Portable Computing Language") ? CACHE_MARKS : CACHE_BINARIES;
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
        clc_write_replace(path, cache_write_fn, &b, NULL);
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
    return clc_fail(err, CLCONE_EDEVICE,
                       "OpenCL: building program '%s'%s failed on '%s': %s (%d); build log:\n%s",
                       c->building ? c->building : "(given source)", c->building ? " (kernels/*.cl)" : "",
                       c->info.name, clc_cl_error_name(e), (int)e, log);
}

clcone_status clc_build_source(clcone_context *c, const char *source, const char *options,
                                  cl_program *out, clcone_error *err)
{
    char key[17], dir[3800];
    size_t srclen = strlen(source);
    cl_int e;
    cl_program prog = NULL;
    int cache = cache_dir(c, dir, sizeof dir), seen = 0;
    *out = NULL;
    c->cache_hit = 0;
    c->cache_path[0] = 0;
    clc_cache_key(c, options, source, key);
    if (cache == CACHE_MARKS) {
        snprintf(c->cache_path, sizeof c->cache_path, "%s/%s.built", dir, key);
        seen = access(c->cache_path, F_OK) == 0;
    }
    if (cache == CACHE_BINARIES) {
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
    if (c->on_compile && c->building && !seen) c->on_compile(c->on_compile_user, c->building, c->info.name);
    prog = clCreateProgramWithSource(c->ctx, 1, &source, &srclen, &e);
    if (e != CL_SUCCESS) return clc_cl_fail(err, e, "clCreateProgramWithSource");
    e = clBuildProgram(prog, 1, &c->device, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        clcone_status s = build_log_fail(c, prog, e, err);
        clReleaseProgram(prog);
        return s;
    }
    if (cache != CACHE_NONE && !seen) mkdirs(dir);
    if (cache == CACHE_MARKS && !seen) {
        FILE *f = fopen(c->cache_path, "wb");
        if (f) fclose(f);
    }
    if (cache == CACHE_BINARIES) cache_store(prog, c->cache_path, key, srclen);
    *out = prog;
    return CLCONE_OK;
}

void clc_build_options(const clcone_context *c, char *buf, size_t len)
{
    snprintf(buf, len, "-DCLCONE_OPENCL%s -cl-std=CL1.2", c->prec == CLCONE_DOUBLE ? " -DCLCONE_DOUBLE" : "");
}

void clcone_context_on_compile(clcone_context *c, clcone_compile_notice fn, void *user)
{
    if (!c) return;
    c->on_compile = fn;
    c->on_compile_user = user;
}

/* Program i: the i-th .cl file of clc_kernel_files; NULL past the
 * last. */
static const struct clc_kernel_file *program_file(int i)
{
    for (const struct clc_kernel_file *f = clc_kernel_files; f->name; ++f) {
        size_t n = strlen(f->name);
        if (n > 3 && strcmp(f->name + n - 3, ".cl") == 0 && i-- == 0) return f;
    }
    return NULL;
}

/* The program that declares kernel `name`, or -1. */
static int program_of(const char *name)
{
    char decl[160];
    const struct clc_kernel_file *f;
    snprintf(decl, sizeof decl, "__kernel void %s(", name);
    for (int i = 0; (f = program_file(i)); ++i)
        if (strstr(f->source, decl)) return i;
    return -1;
}

#define NEEDS "/* needs:"

clcone_status clc_program_source(const char *file, const char *source, char **out, clcone_error *err)
{
    const char *p = source + strlen(NEEDS), *end = strstr(source, "*/");
    size_t total = strlen(source) + 1;
    char *src = NULL;
    *out = NULL;
    if (strncmp(source, NEEDS, strlen(NEEDS)) != 0 || !end || memchr(source, '\n', (size_t)(end - source)))
        return clc_fail(err, CLCONE_EINVAL, "kernels/%s: the first line must be `" NEEDS " HEADER.h ... */`",
                           file);
    /* two passes over the names: the length, then the text */
    for (int pass = 0; pass < 2; ++pass) {
        for (const char *q = p; q < end;) {
            size_t n;
            const struct clc_kernel_file *h = clc_kernel_files;
            q += strspn(q, " ");
            n = strcspn(q, " *");
            if (n == 0) break;
            while (h->name && (strlen(h->name) != n || strncmp(h->name, q, n) != 0)) ++h;
            if (!h->name) {
                free(src);
                return clc_fail(err, CLCONE_EINVAL, "kernels/%s needs %.*s, which kernels/ does not have", file,
                                   (int)n, q);
            }
            if (pass == 0) total += strlen(h->source);
            else strcat(src, h->source);
            q += n;
        }
        if (pass == 0 && !(src = clc_calloc(total, 1, err, "kernel source"))) return CLCONE_ENOMEM;
    }
    strcat(src, source);
    *out = src;
    return CLCONE_OK;
}

static clcone_status build_program(clcone_context *c, int i, clcone_error *err)
{
    const struct clc_kernel_file *f = program_file(i);
    char *src, opts[128], name[64];
    clcone_status s;
    if ((s = clc_program_source(f->name, f->source, &src, err))) return s;
    snprintf(name, sizeof name, "%.*s", (int)(strlen(f->name) - 3), f->name);
    clc_build_options(c, opts, sizeof opts);
    c->building = name;
    s = clc_build_source(c, src, opts, &c->programs[i], err);
    c->building = NULL;
    free(src);
    return s;
}

clcone_status clc_kernel(clcone_context *c, const char *name, cl_kernel *k, clcone_error *err)
{
    cl_int e;
    clcone_status s;
    int i = program_of(name);
    *k = NULL;
    if (i < 0) return clc_fail(err, CLCONE_EDEVICE, "OpenCL: no program declares kernel '%s'", name);
    if (!c->programs) {
        while (program_file(c->nprograms)) c->nprograms++;
        if (!(c->programs = clc_calloc((size_t)c->nprograms, sizeof *c->programs, err, "programs")))
            return CLCONE_ENOMEM;
    }
    if (!c->programs[i] && (s = build_program(c, i, err))) return s;
    *k = clCreateKernel(c->programs[i], name, &e);
    if (e != CL_SUCCESS) {
        *k = NULL;
        return clc_fail(err, CLCONE_EDEVICE, "OpenCL: kernel '%s' not found: %s (%d)", name,
                           clc_cl_error_name(e), (int)e);
    }
    return CLCONE_OK;
}
