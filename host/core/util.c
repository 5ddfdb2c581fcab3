#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "core/internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

clcone_status clc_fail(clcone_error *err, clcone_status code,
                          const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void clc_error_prefix(clcone_error *err, const char *fmt, ...)
{
    /* room for both parts; the result is cut to the message size */
    char both[2 * sizeof err->msg + 8];
    size_t len;
    va_list ap;
    if (!err) return;
    va_start(ap, fmt);
    vsnprintf(both, sizeof err->msg, fmt, ap);
    va_end(ap);
    len = strlen(both);
    snprintf(both + len, sizeof both - len, ": %s", err->msg);
    memcpy(err->msg, both, sizeof err->msg - 1);
    err->msg[sizeof err->msg - 1] = 0;
}

clcone_status clc_check_squares(const double *x, size_t n, double limit, const char *what, clcone_error *err)
{
    double amax = 0, sum2 = 0;
    int in_float = limit < DBL_MAX;
    for (size_t i = 0; i < n; ++i) {
        amax = fmax(amax, fabs(x[i]));
        sum2 += x[i] * x[i];
    }
    if (!(sum2 > limit / 64)) return CLCONE_OK;
    return clc_fail(err, CLCONE_EINVAL,
                    "%s entries up to %g: their sum of squares overflows %s, the precision the error is "
                    "measured in%s", what, amax, in_float ? "float" : "double",
                    in_float ? ": solve in double precision or on the reference" : ": rescale the problem");
}

const char *clcone_status_name(clcone_status s)
{
    switch (s) {
    case CLCONE_OK: return "ok";
    case CLCONE_EINVAL: return "invalid input";
    case CLCONE_EIO: return "i/o error";
    case CLCONE_EFORMAT: return "malformed file";
    case CLCONE_ENOMEM: return "out of memory";
    case CLCONE_EDEVICE: return "device error";
    case CLCONE_ENOTSUP: return "not supported";
    }
    return "unknown status";
}

double clc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void *allocate(size_t n, size_t size, int zero, clcone_error *err, const char *what)
{
    void *p;
    if (n == 0) n = 1;
    if (size != 0 && n > SIZE_MAX / size) {
        clc_fail(err, CLCONE_ENOMEM, "%s: size overflow (%zu x %zu bytes)",
                    what, n, size);
        return NULL;
    }
    p = zero ? calloc(n, size) : malloc(n * size);
    if (!p)
        clc_fail(err, CLCONE_ENOMEM, "%s: cannot allocate %zu bytes", what,
                    n * size);
    return p;
}

void *clc_calloc(size_t n, size_t size, clcone_error *err, const char *what)
{
    return allocate(n, size, 1, err, what);
}

void *clc_malloc(size_t n, size_t size, clcone_error *err, const char *what)
{
    return allocate(n, size, 0, err, what);
}
