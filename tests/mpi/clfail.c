/* A device that fails mid-run, for tests/mpi/run.sh: preloaded
 * (LD_PRELOAD) into one rank, it passes OpenCL's kernel launches and
 * buffer writes on until the CLFAIL_LAUNCH-th launch or the
 * CLFAIL_WRITE-th write, which it refuses with CL_OUT_OF_RESOURCES, as
 * every one after it: that rank fails where the other ranks go on, as a
 * device lost in mid-run would. CLFAIL_NAN=N: the N-th buffer read
 * (blocking) succeeds but fills its bytes with NaN, as a device that
 * computed NaN on that rank alone. Built by run.sh alone (no OpenCL
 * headers: the entries' types are spelled out). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CL_OUT_OF_RESOURCES (-5)

typedef int32_t launch_fn(void *, void *, uint32_t, const size_t *, const size_t *, const size_t *, uint32_t,
                          const void *, void *);
typedef int32_t read_fn(void *, void *, uint32_t, size_t, size_t, void *, uint32_t, const void *, void *);
typedef int32_t write_fn(void *, void *, uint32_t, size_t, size_t, const void *, uint32_t, const void *, void *);

int32_t clEnqueueNDRangeKernel(void *queue, void *kernel, uint32_t dim, const size_t *offset, const size_t *global,
                               const size_t *local, uint32_t nwait, const void *wait, void *event);
int32_t clEnqueueWriteBuffer(void *queue, void *buf, uint32_t blocking, size_t offset, size_t size, const void *ptr,
                             uint32_t nwait, const void *wait, void *event);
int32_t clEnqueueReadBuffer(void *queue, void *buf, uint32_t blocking, size_t offset, size_t size, void *ptr,
                            uint32_t nwait, const void *wait, void *event);

/* Whether this call, the *count-th of its kind, is to fail (env: from
 * which one on, or with once only that one); the real entry `name` into
 * *next. */
static int fails(const char *env, int once, long *count, void **next, const char *name)
{
    const char *at = getenv(env);
    if (!*next) *next = dlsym(RTLD_NEXT, name);
    if (!at) return 0;
    ++*count;
    return once ? *count == atol(at) : *count >= atol(at);
}

int32_t clEnqueueNDRangeKernel(void *queue, void *kernel, uint32_t dim, const size_t *offset, const size_t *global,
                               const size_t *local, uint32_t nwait, const void *wait, void *event)
{
    static long count;
    static void *next;
    if (fails("CLFAIL_LAUNCH", 0, &count, &next, "clEnqueueNDRangeKernel")) return CL_OUT_OF_RESOURCES;
    return ((launch_fn *)next)(queue, kernel, dim, offset, global, local, nwait, wait, event);
}

int32_t clEnqueueWriteBuffer(void *queue, void *buf, uint32_t blocking, size_t offset, size_t size, const void *ptr,
                             uint32_t nwait, const void *wait, void *event)
{
    static long count;
    static void *next;
    if (fails("CLFAIL_WRITE", 0, &count, &next, "clEnqueueWriteBuffer")) return CL_OUT_OF_RESOURCES;
    return ((write_fn *)next)(queue, buf, blocking, offset, size, ptr, nwait, wait, event);
}

int32_t clEnqueueReadBuffer(void *queue, void *buf, uint32_t blocking, size_t offset, size_t size, void *ptr,
                            uint32_t nwait, const void *wait, void *event)
{
    static long count;
    static void *next;
    int nan = fails("CLFAIL_NAN", 1, &count, &next, "clEnqueueReadBuffer") && blocking;
    int32_t e = ((read_fn *)next)(queue, buf, blocking, offset, size, ptr, nwait, wait, event);
    if (e == 0 && nan) memset(ptr, 0xff, size); /* all ones: a NaN in every double and float */
    return e;
}
