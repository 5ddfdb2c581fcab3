/* Shared by the libFuzzer harnesses (one per reader): the input copied to
 * a buffer of exactly its size, so that AddressSanitizer catches a reader
 * that runs past the end or relies on a terminating NUL. */
#ifndef CLCONE_FUZZ_H
#define CLCONE_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "output/fclib.h"
#include "world/world_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* A problem file through one reader (hdf5: the FCLib one, else .dat),
 * then the validation clcone_read_problem applies. */
static inline void fuzz_problem(const uint8_t *data, size_t size, int hdf5)
{
    char *buf = fuzz_copy(data, size);
    clcone_problem p;
    clcone_error e = {0};
    clcone_status s;
    if (!buf) return;
    s = hdf5 ? clc_parse_fclib_hdf5("fuzz.hdf5", buf, size, &p, &e) : clc_parse_dat("fuzz.dat", buf, size, &p, &e);
    if (s == CLCONE_OK) {
        s = clcone_problem_validate(&p, &e);
        clcone_problem_free(&p);
    }
    fuzz_check(s, &e);
    free(buf);
}

#endif
