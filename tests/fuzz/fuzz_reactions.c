/* libFuzzer harness: reactions files (clc_parse_reactions). The first
 * byte picks the number of contacts (0..15), the rest is the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double r[48];
    char *buf;
    clcone_error e = {0};
    int n;
    if (size == 0) return 0;
    n = data[0] % 16;
    buf = fuzz_copy(data + 1, size - 1);
    if (!buf) return 0;
    fuzz_check(clc_parse_reactions("fuzz.txt", buf, size - 1, n, r, &e), &e);
    free(buf);
    return 0;
}
