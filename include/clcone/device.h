/* clcone public API: OpenCL devices. */
#ifndef CLCONE_API_DEVICE_H
#define CLCONE_API_DEVICE_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OpenCL devices                                                      */

typedef struct clcone_device_info {
    int index;                  /* position in the list (--device N) */
    char platform[128];
    char name[128];
    char version[128];          /* OpenCL version string */
    int is_gpu;
    int is_cpu;                 /* CL_DEVICE_TYPE_CPU (POCL's pthread device) */
    int compute_units;
    unsigned long long global_mem;
    unsigned long long max_alloc;
    int fp64;                   /* cl_khr_fp64 */
} clcone_device_info;

/* Lists every device of every platform (*list is released with
 * clcone_device_list_free). With no platform installed: CLCONE_EDEVICE and
 * a message on how to fix it. */
CLCONE_API clcone_status clcone_list_devices(clcone_device_info **list, int *count,
                                  clcone_error *err);
/* Releases a list of clcone_list_devices; NULL does nothing. */
CLCONE_API void clcone_device_list_free(clcone_device_info *list);

/* clcone_context, a device with its queue and built programs, is declared
 * once, in solve.h (included above): C99 refuses a repeated typedef. */

typedef enum clcone_precision {
    CLCONE_FLOAT = 0,
    CLCONE_DOUBLE
} clcone_precision;

/* Opens a device. spec: NULL or "" = $CLCONE_DEVICE if set, else the
 * first GPU, else the first CPU device; "N" = index in the device list;
 * "cpu" / "gpu" (or CPU / GPU) = first device of that type, or whose
 * name contains it; anything else = first device whose name contains
 * spec. ("ref", the CPU
 * reference, is not an OpenCL device: callers pass a NULL context for
 * it.) Double precision needs cl_khr_fp64. One thread at a time uses a
 * context and what is made on it (plans, steppers): they share its queue,
 * its programs, built at first use, and its count of device memory (the
 * Python package takes a lock per context). Plans on the reference share
 * nothing: each may run on its own thread. */
CLCONE_API clcone_status clcone_context_create(const char *spec, clcone_precision prec,
                                    clcone_context **ctx, clcone_error *err);
CLCONE_API void clcone_context_free(clcone_context *ctx);
/* Called before the context compiles one of its kernel programs from
 * source, with the program's name ("group_solve") and the device's: a
 * program is compiled the first time a solve needs one of its kernels
 * (at plan creation), unless the program cache holds it, and a compile
 * takes seconds to a minute on a CPU device. The CLI prints a line on
 * stderr so that a first run does not look hung. fn NULL: no notice. */
typedef void (*clcone_compile_notice)(void *user, const char *program, const char *device);
CLCONE_API void clcone_context_on_compile(clcone_context *ctx, clcone_compile_notice fn, void *user);
CLCONE_API const clcone_device_info *clcone_context_device(const clcone_context *ctx);
CLCONE_API clcone_precision clcone_context_precision(const clcone_context *ctx);
/* Bytes of device buffers the context's plans hold now (0 for NULL, the
 * reference); a buffer that would pass the device's memory is refused
 * with CLCONE_EDEVICE before it is made. */
CLCONE_API size_t clcone_context_memory(const clcone_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
