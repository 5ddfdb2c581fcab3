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

/* Whitespace-separated tokens of an in-memory text, tracking lines so errors name "file:line". */
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

/* Every text reader's numbers: all of s as a base-10 long or a finite real (strtod syntax); 1 on success. */
int clc_parse_long(const char *s, long *v);
int clc_parse_real(const char *s, double *v);

/* The next token as an int in [lo, hi] or a finite real; fmt ("q[%d]") names it in a CLCONE_EFORMAT. */
clcone_status clc_tok_int(clc_tok *t, long lo, long hi, int *v,
                             clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(6, 7);
clcone_status clc_tok_real(clc_tok *t, double *v, clcone_error *err,
                              const char *fmt, ...) CLCONE_PRINTF(4, 5);

/* CLCONE_EFORMAT "file:line: expected <fmt...>, found '<last token>'" (or "unexpected end of file"). */
clcone_status clc_tok_reject(const clc_tok *t, clcone_error *err,
                                const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* CLCONE_EFORMAT "file:line: <fmt...>" at the last token, for structural errors. */
clcone_status clc_tok_fail(const clc_tok *t, clcone_error *err,
                              const char *fmt, ...) CLCONE_PRINTF(3, 4);

/* Guards allocations: fails unless count more tokens (2 bytes each) fit in the unread bytes. */
clcone_status clc_tok_need(const clc_tok *t, uint64_t count,
                              clcone_error *err, const char *fmt, ...)
    CLCONE_PRINTF(4, 5);

/* Loads a whole file, NUL-terminated (not counted in *len); CLCONE_EIO when it cannot be read. */
clcone_status clc_load_file(const char *path, char **buf, size_t *len,
                               clcone_error *err);

/* 1 when the bytes carry the HDF5 signature at offset 0, 512, 1024, ... (after a user block). */
int clc_buf_is_hdf5(const char *buf, size_t len);

/* p's block-CSR W from checked scalar entries of W, duplicates summed; q and mu left zero. */
clcone_status clc_problem_from_entries(clcone_problem *p, int n,
                                          size_t count, const int *row,
                                          const int *col, const double *val,
                                          clcone_error *err);

/* Parses a Siconos .dat FrictionContactProblem in memory; p not validated beyond its structure. */
clcone_status clc_parse_dat(const char *name, const char *buf, size_t len,
                               clcone_problem *p, clcone_error *err);

/* A .dat or FCLib HDF5 problem in memory, as clcone_read_problem reads it (hdf5 NULL: HDF5 refused). */
clcone_status clc_parse_problem(const char *name, const char *buf, size_t len, clcone_problem_parse_fn *hdf5,
                                   clcone_problem *p, clcone_error *err);

/* Scene files are the world layer's to parse; io/ only tells them apart by signature, after a BOM. */
#define CLCONE_SCENE_SIGNATURE "clcone-scene"
size_t clc_bom_len(const char *buf, size_t len);
int clc_buf_is_world(const char *buf, size_t len);

/* The world layer's scene parser, handed down so that io/ reads every input without calling up. */
typedef clcone_status (*clc_scene_parse_fn)(const char *name, const char *buf, size_t len, clcone_world *w,
                                               clcone_error *err);
/* clcone_read_input_ext (ext.h), a scene file parsed by parse_scene. */
clcone_status clc_read_input_with(const char *path, clcone_input *in, clc_scene_parse_fn parse_scene,
                                     clcone_problem_parse_fn *hdf5, clcone_error *err);

/* A reactions file in memory, read as clcone_read_reactions does (r of 3n untouched on failure). */
clcone_status clc_parse_reactions(const char *name, const char *buf, size_t len, int n, double *r,
                                     clcone_error *err);
/* A general-block problem's forces file (docs/formats.md section 5): written atomically, read as reactions. */
clcone_status clc_write_forces_info(const char *path, int m, const double *f, const clcone_reactions_info *info,
                                       clcone_error *err);
clcone_status clc_read_forces_info(const char *path, int m, double *f, clcone_reactions_info *info,
                                      clcone_error *err);

#endif
