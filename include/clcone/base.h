/* clcone public API: version, the export macro, status codes and error messages. */
#ifndef CLCONE_API_BASE_H
#define CLCONE_API_BASE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLCONE_VERSION_MAJOR 0
#define CLCONE_VERSION_MINOR 3
#define CLCONE_VERSION_PATCH 0
#define CLCONE_VERSION "0.3.0"

/* Marks an exported declaration (the library is built -fvisibility=hidden). */
#if defined(__GNUC__)
#define CLCONE_API __attribute__((visibility("default")))
#else
#define CLCONE_API
#endif

/* The linked library's version ("0.3.0"); CLCONE_VERSION is the header's. */
CLCONE_API const char *clcone_version(void);

typedef enum clcone_status {
    CLCONE_OK = 0,
    CLCONE_EINVAL,   /* invalid argument (a needed pointer NULL too) or problem data */
    CLCONE_EIO,      /* file could not be opened, read or written */
    CLCONE_EFORMAT,  /* file content malformed */
    CLCONE_ENOMEM,   /* host allocation failed */
    CLCONE_EDEVICE,  /* OpenCL platform, device, build or run failure */
    CLCONE_ENOTSUP   /* combination not supported (e.g. solver for model) */
} clcone_status;

typedef struct clcone_error {
    clcone_status code;
    char msg[1024];
} clcone_error;

/* Human name of a status code ("invalid input", ...). */
CLCONE_API const char *clcone_status_name(clcone_status s);

#ifdef __cplusplus
}
#endif
#endif
