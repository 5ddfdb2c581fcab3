/* libFuzzer harness: FCLib HDF5 local problems, opened from memory as
 * clcone_read_problem opens them, and validated as it validates them. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size);
    clcone_problem p;
    clcone_error e = {0};
    clcone_status s;
    if (!buf) return 0;
    s = clcone_parse_fclib_hdf5("fuzz.hdf5", buf, size, &p, &e);
    if (s == CLCONE_OK) {
        s = clcone_problem_validate(&p, &e);
        clcone_problem_free(&p);
    }
    fuzz_check(s, &e);
    free(buf);
    return 0;
}
