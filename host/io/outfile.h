/* The atomic output files every writer goes through (io/outfile.c). */
#ifndef CLCONE_IO_OUTFILE_H
#define CLCONE_IO_OUTFILE_H

#include "core/internal.h"

/* Writes an output file the way clcone_out_open does (clcone.h): fn
 * writes to the FILE* (returning 0 on success); a regular file is
 * replaced atomically only when everything succeeded. */
typedef int (*clc_writer_fn)(void *file, const void *ctx);
clcone_status clc_write_atomic(const char *path, clc_writer_fn fn,
                                  const void *ctx, clcone_error *err);
/* The same, except that whatever path is (a FIFO, a link, a device) is
 * replaced by a regular file: for files clcone owns, the program cache. */
clcone_status clc_write_replace(const char *path, clc_writer_fn fn,
                                   const void *ctx, clcone_error *err);

#endif
