/* libFuzzer harness: Siconos .dat problems (clc_parse_dat and the
 * validation clcone_read_problem applies). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_problem(data, size, 0);
    return 0;
}
