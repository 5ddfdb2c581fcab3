/* libFuzzer harness: FCLib HDF5 local problems, opened from memory as
 * clcone_read_problem opens them, and validated as it validates them. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_problem(data, size, 1);
    return 0;
}
