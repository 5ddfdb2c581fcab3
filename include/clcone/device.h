/* clcone public API: OpenCL devices. */
#ifndef CLCONE_API_DEVICE_H
#define CLCONE_API_DEVICE_H

#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Every device of every platform (free *list with clcone_device_list_free); none installed:
 * CLCONE_EDEVICE saying how to fix it. */
CLCONE_API clcone_status clcone_list_devices(clcone_device_info **list, int *count,
                                  clcone_error *err);
/* Releases a list of clcone_list_devices; NULL does nothing. */
CLCONE_API void clcone_device_list_free(clcone_device_info *list);

/* clcone_context, a device with its queue and programs, is declared in solve.h. */

typedef enum clcone_precision {
    CLCONE_FLOAT = 0,
    CLCONE_DOUBLE
} clcone_precision;

/* spec NULL or "": $CLCONE_DEVICE, else the first GPU, else the first CPU; "N": list index;
 * "cpu"/"gpu" (or CPU/GPU): the first of that type or naming it; else the first whose name
 * contains spec ("ref" is ctx NULL). Double needs cl_khr_fp64. One thread at a time uses a
 * context and what is made on it (plans, steppers); reference plans share nothing. */
CLCONE_API clcone_status clcone_context_create(const char *spec, clcone_precision prec,
                                    clcone_context **ctx, clcone_error *err);
CLCONE_API void clcone_context_free(clcone_context *ctx);
/* fn(user, program, device) before each kernel program is compiled from source; NULL: none. */
typedef void (*clcone_compile_notice)(void *user, const char *program, const char *device);
CLCONE_API void clcone_context_on_compile(clcone_context *ctx, clcone_compile_notice fn, void *user);
CLCONE_API const clcone_device_info *clcone_context_device(const clcone_context *ctx);
CLCONE_API clcone_precision clcone_context_precision(const clcone_context *ctx);
/* Bytes the context's plans hold on the device, and the buffers its last primal batch (MuJoCo's
 * Newton) keeps for the next (0 for NULL); past its memory: CLCONE_EDEVICE. */
CLCONE_API size_t clcone_context_memory(const clcone_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
