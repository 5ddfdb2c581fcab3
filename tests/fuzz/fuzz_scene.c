/* libFuzzer harness: clcone scene files (clc_parse_world); a scene
 * that reads must also validate, since solve and simulate trust it. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size);
    clcone_world w;
    clcone_error e = {0};
    clcone_status s;
    if (!buf) return 0;
    s = clc_parse_world("fuzz.scene", buf, size, &w, &e);
    if (s == CLCONE_OK) {
        if (clcone_world_validate(&w, &e) != CLCONE_OK) abort();
        clcone_world_free(&w);
    }
    fuzz_check(s, &e);
    free(buf);
    return 0;
}
