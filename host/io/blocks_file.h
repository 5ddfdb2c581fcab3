/* The general-block problem's text format (docs/formats.md section 7). */
#ifndef CLCONE_IO_BLOCKS_FILE_H
#define CLCONE_IO_BLOCKS_FILE_H

#include "core/blocks.h"

/* Reads and validates: CLCONE_EFORMAT "file:line:" for syntax, CLCONE_EINVAL naming the block,
 * row or entry for values, CLCONE_EIO for the file. */
clcone_status clc_read_blocks(const char *path, clc_bproblem *p, clcone_error *err);
/* The same from memory (name for messages). */
clcone_status clc_parse_blocks(const char *name, const char *buf, size_t len, clc_bproblem *p, clcone_error *err);
/* Writes p's stored blocks in %.17g (read back bit for bit), atomically. */
clcone_status clc_write_blocks(const char *path, const clc_bproblem *p, clcone_error *err);

#endif
