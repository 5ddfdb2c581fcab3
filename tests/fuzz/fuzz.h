/* Shared by the libFuzzer harnesses (one per reader): the input copied to
 * a buffer of exactly its size, so that AddressSanitizer catches a reader
 * that runs past the end or relies on a terminating NUL. */
#ifndef CLCONE_FUZZ_H
#define CLCONE_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (buf && size) memcpy(buf, data, size);
    return buf;
}

/* A reader must fail with a message or succeed with a valid result. */
static inline void fuzz_check(clcone_status s, const clcone_error *e)
{
    if (s != CLCONE_OK && e->msg[0] == 0) abort();
}

#endif
