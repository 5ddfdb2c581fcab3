/* The atomic output files every writer goes through. */
#ifndef CLCONE_IO_OUTFILE_H
#define CLCONE_IO_OUTFILE_H

#include "core/internal.h"

/* Writes path as clcone_out_open does, fn writing to the FILE* (0 on success). */
typedef int (*clc_writer_fn)(void *file, const void *ctx);
clcone_status clc_write_atomic(const char *path, clc_writer_fn fn,
                                  const void *ctx, clcone_error *err);
/* The same, but path (a FIFO, a link) becomes a regular file: for clcone's own (program cache). */
clcone_status clc_write_replace(const char *path, clc_writer_fn fn,
                                   const void *ctx, clcone_error *err);

#endif
