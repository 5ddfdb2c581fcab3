/* Internal file I/O helpers shared by dat.c, output/hdf5.c and reactions.c:
 * one tokenizer for every text format, whole-file loading, and one builder
 * that turns scalar matrix entries into the block-CSR W of clcone_problem. */
#ifndef CLCONE_IO_H
#define CLCONE_IO_H

#include <stddef.h>
#include <stdint.h>

#include <clcone/ext.h>

#include "core/internal.h"
#include "io/outfile.h"

/* Whitespace-separated tokens of an in-memory text, with line tracking so
 * that every error can name "file:line". */
typedef struct clc_tok {
    const char *name;     /* file name used in messages */
    const char *cur;      /* next unread byte */
    const char *end;      /* one past the last byte */
    int line;             /* line of `cur` (1-based) */
    int comments;         /* 1: '#' starts a comment running to end of line */
    const char *tok;      /* last token read (not NUL-terminated), or NULL */
    size_t len;           /* its length */
    int tok_line;         /* its line */
    size_t ntok;          /* tokens read so far */
} clc_tok;

void clc_tok_init(clc_tok *t, const char *name, const char *buf,
                     size_t len, int comments);

/* Advances to the next token; returns 0 at end of input (t->tok = NULL). */
int clc_tok_next(clc_tok *t);

/* The number syntax of every text reader: the whole NUL-terminated s as a
 * base-10 integer that fits a long, or as a finite real (strtod's syntax;
 * underflow to the closest double is accepted). 1 on success. */
int clc_parse_long(const char *s, long *v);
int clc_parse_real(const char *s, double *v);

/* Reads the next token as an integer in [lo, hi] or as a finite real. The
 * printf-style fmt names the value for the message ("q[%d]"); it is only
 * formatted on failure. Errors are CLCONE_EFORMAT with "file:line:". */
clcone_status clc_tok_int(clc_tok *t, long lo, long hi, int *v,
                             clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(6, 7);
clcone_status clc_tok_real(clc_tok *t, double *v, clcone_error *err,
                              const char *fmt, ...) CLCONE_PRINTF(4, 5);

/* CLCONE_EFORMAT "file:line: expected <fmt...>, found '<last token>'" (or
 * "unexpected end of file" when the input ran out). */
clcone_status clc_tok_reject(const clc_tok *t, clcone_error *err,
                                const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* CLCONE_EFORMAT "file:line: <fmt...>" at the line of the last token, for
 * structural errors that are not about one token's spelling. */
clcone_status clc_tok_fail(const clc_tok *t, clcone_error *err,
                              const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* Guards allocations against sizes that the file cannot possibly hold:
 * fails unless at least `count` more tokens fit in the unread bytes (a
 * token needs one byte plus a separator). fmt names the claim. */
clcone_status clc_tok_need(const clc_tok *t, uint64_t count,
                              clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(4, 5);

/* Loads a whole file, NUL-terminated (the NUL is not counted in *len).
 * CLCONE_EIO when it cannot be opened or read. */
clcone_status clc_load_file(const char *path, char **buf, size_t *len,
                               clcone_error *err);

/* 1 when the bytes carry the HDF5 signature at offset 0, 512, 1024, ...
 * (a user block may precede the superblock). */
int clc_buf_is_hdf5(const char *buf, size_t len);

/* Builds p (allocated here; q and mu are left zero for the caller) with n
 * contacts from `count` scalar entries of the 3n x 3n W: row[k], col[k]
 * (0-based, already checked to be in range) and val[k]. Duplicate entries
 * are summed (the CSparse convention). Exactly the blocks holding a
 * non-zero value are kept, plus every diagonal block, columns sorted. */
clcone_status clc_problem_from_entries(clcone_problem *p, int n,
                                          size_t count, const int *row,
                                          const int *col, const double *val,
                                          clcone_error *err);

/* Parses a Siconos .dat FrictionContactProblem held in memory (name is for
 * messages). p is not validated beyond the file structure. */
clcone_status clc_parse_dat(const char *name, const char *buf, size_t len,
                               clcone_problem *p, clcone_error *err);

/* A problem file held in memory (.dat or, by its signature, FCLib HDF5
 * through hdf5: libclcone_output's reader, or NULL, which refuses such a
 * file), parsed and validated as clcone_read_problem does. */
clcone_status clc_parse_problem(const char *name, const char *buf, size_t len, clcone_problem_parse_fn *hdf5,
                                   clcone_problem *p, clcone_error *err);

/* Scene files (docs/formats.md section 9) are the world layer's to parse; io/
 * only tells them apart: their first line that is neither blank nor a
 * comment starts with the signature, after an optional UTF-8 byte order
 * mark (clc_bom_len bytes). */
#define CLCONE_SCENE_SIGNATURE "clcone-scene"
size_t clc_bom_len(const char *buf, size_t len);
int clc_buf_is_world(const char *buf, size_t len);

/* The world layer's scene parser (clc_parse_world), handed in by
 * clcone_read_input, so that io/ reads every input without calling up. */
typedef clcone_status (*clc_scene_parse_fn)(const char *name, const char *buf, size_t len, clcone_world *w,
                                               clcone_error *err);
/* clcone_read_input_ext (ext.h), a scene file parsed by parse_scene. */
clcone_status clc_read_input_with(const char *path, clcone_input *in, clc_scene_parse_fn parse_scene,
                                     clcone_problem_parse_fn *hdf5, clcone_error *err);

/* A reactions file held in memory, read as clcone_read_reactions does
 * (n >= 0, r of 3n; r untouched on failure). */
clcone_status clc_parse_reactions(const char *name, const char *buf, size_t len, int n, double *r,
                                     clcone_error *err);
/* A general-block problem's forces (core/blocks.h, m rows) as a file of
 * its own kind beside reactions files: "# clcone forces: M rows" and the
 * record of the solve (clcone_write_reactions_info's words), then one
 * number a line, %.17g, written atomically; read as reactions are (f
 * untouched on failure, info from the header, NULL: not wanted). */
clcone_status clc_write_forces_info(const char *path, int m, const double *f, const clcone_reactions_info *info,
                                       clcone_error *err);
clcone_status clc_read_forces_info(const char *path, int m, double *f, clcone_reactions_info *info,
                                      clcone_error *err);

#endif
