/* Preloaded into the CLI under Oclgrind by tests/oclgrind/run.sh: buffers
 * are never released, so Oclgrind never hands a released buffer's index
 * to a new one. Its uninitialised-value plugin (21.10 to 26.03) keeps a
 * released buffer's shadow memory for the next buffer given that index:
 * a new buffer larger than the old one then reads as uninitialised past
 * the old size however a kernel fills it (stores past it are dropped),
 * and one no larger inherits the old buffer's state. Every run that
 * solves twice in one context without a plan (a MuJoCo model stepped,
 * each step's problem its own) would report on a clean kernel, or miss
 * a read before a write. With this, each buffer gets a fresh index and a
 * fresh, poisoned shadow. The memory is the process's until it exits. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem memobj)
{
    return memobj ? CL_SUCCESS : CL_INVALID_MEM_OBJECT;
}
