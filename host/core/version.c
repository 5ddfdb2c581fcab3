/* The run-time version, so a program can tell which library it loaded. */
#include <clcone/clcone.h>

const char *clcone_version(void)
{
    return CLCONE_VERSION;
}
