/* What every text reader shares: the tokenizer, whose errors name the file,
 * line and item, and the one-read file load that lets pipes be sniffed. */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* Tokenizer                                                           */
/* ------------------------------------------------------------------ */

/* Not isspace(): the accepted separators must not depend on the locale. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

void clc_tok_init(clc_tok *t, const char *name, const char *buf,
                     size_t len, int comments)
{
    t->name = name;
    t->cur = buf;
    t->end = buf + len;
    t->line = 1;
    t->comments = comments;
    t->tok = NULL;
    t->len = 0;
    t->tok_line = 1;
    t->ntok = 0;
}

int clc_tok_next(clc_tok *t)
{
    const char *s = t->cur;
    for (;;) {
        while (s < t->end && is_space(*s)) {
            if (*s == '\n') t->line++;
            ++s;
        }
        if (!(t->comments && s < t->end && *s == '#')) break;
        while (s < t->end && *s != '\n') ++s;
    }
    t->tok_line = t->line;
    if (s == t->end) {
        t->cur = s;
        t->tok = NULL;
        t->len = 0;
        return 0;
    }
    t->tok = s;
    while (s < t->end && !is_space(*s) && !(t->comments && *s == '#')) ++s;
    t->len = (size_t)(s - t->tok);
    t->cur = s;
    t->ntok++;
    return 1;
}

/* The last token, shortened and with unprintable bytes escaped, so that a
 * binary file yields a readable message. */
static void quote_token(const clc_tok *t, char *out, size_t cap)
{
    const size_t shown = 40;
    size_t i, o = 0;
    for (i = 0; i < t->len && i < shown; ++i) {
        unsigned char c = (unsigned char)t->tok[i];
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
    if (i < t->len) snprintf(out + o, cap - o, "...");
}

clcone_status clc_tok_reject(const clc_tok *t, clcone_error *err,
                                const char *fmt, ...)
{
    char what[512], found[4 * 40 + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!t->tok)
        return clc_fail(err, CLCONE_EFORMAT, "%s:%d: %s: expected %s",
                           t->name, t->line,
                           t->ntok ? "unexpected end of file" : "empty file",
                           what);
    quote_token(t, found, sizeof found);
    return clc_fail(err, CLCONE_EFORMAT, "%s:%d: expected %s, found '%s'",
                       t->name, t->tok_line, what, found);
}

clcone_status clc_tok_fail(const clc_tok *t, clcone_error *err,
                              const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return clc_fail(err, CLCONE_EFORMAT, "%s:%d: %s", t->name,
                       t->tok ? t->tok_line : t->line, msg);
}

/* Copies the last token into buf as a C string; 0 when it does not fit
 * (no valid number is that long) or holds a NUL byte, where strtod would
 * stop and silently drop the rest ("15\0GARBAGE" is not 15). */
static int token_string(const clc_tok *t, char *buf, size_t cap)
{
    if (!t->tok || t->len >= cap || memchr(t->tok, 0, t->len)) return 0;
    memcpy(buf, t->tok, t->len);
    buf[t->len] = '\0';
    return 1;
}

int clc_parse_long(const char *s, long *v)
{
    char *e;
    errno = 0;
    *v = strtol(s, &e, 10);
    return e != s && *e == '\0' && errno == 0;
}

int clc_parse_real(const char *s, double *v)
{
    char *e;
    *v = strtod(s, &e);
    /* Overflow gives HUGE_VAL and is caught by isfinite; underflow to a
     * subnormal or zero is the closest double and is accepted. */
    return e != s && *e == '\0' && isfinite(*v);
}

clcone_status clc_tok_int(clc_tok *t, long lo, long hi, int *v,
                             clcone_error *err, const char *fmt, ...)
{
    char buf[32], what[400];
    long x;
    int parsed = 0;
    va_list ap;
    if (clc_tok_next(t) && token_string(t, buf, sizeof buf)) {
        parsed = clc_parse_long(buf, &x);
        if (parsed && x >= lo && x <= hi) {
            *v = (int)x;
            return CLCONE_OK;
        }
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!parsed) return clc_tok_reject(t, err, "an integer for %s", what);
    if (lo == hi) return clc_tok_reject(t, err, "%s = %ld", what, lo);
    if (hi >= INT_MAX) return clc_tok_reject(t, err, "%s >= %ld", what, lo);
    return clc_tok_reject(t, err, "%s in [%ld, %ld]", what, lo, hi);
}

clcone_status clc_tok_real(clc_tok *t, double *v, clcone_error *err,
                              const char *fmt, ...)
{
    char buf[512], what[400];
    double x;
    va_list ap;
    if (clc_tok_next(t) && token_string(t, buf, sizeof buf) && clc_parse_real(buf, &x)) {
        *v = x;
        return CLCONE_OK;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return clc_tok_reject(t, err, "a finite real number for %s", what);
}

clcone_status clc_tok_need(const clc_tok *t, uint64_t count,
                              clcone_error *err, const char *fmt, ...)
{
    uint64_t bytes = (uint64_t)(t->end - t->cur);
    uint64_t room = (bytes + 1) / 2;
    char what[400];
    va_list ap;
    if (count <= room) return CLCONE_OK;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return clc_tok_fail(t, err,
                           "%s needs %" PRIu64 " more numbers, but the remaining "
                           "%" PRIu64 " bytes hold at most %" PRIu64
                           " (truncated file or wrong size)",
                           what, count, bytes, room);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

clcone_status clc_load_file(const char *path, char **out, size_t *len,
                               clcone_error *err)
{
    size_t cap = 1 << 16, n = 0;
    char *buf, *bigger;
    FILE *f = fopen(path, "rb");
    struct stat st;
    int failed, saved, stream;
    *out = NULL;
    *len = 0;
    if (!f)
        return clc_fail(err, CLCONE_EIO, "%s: cannot open: %s", path,
                           strerror(errno));
    buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return clc_fail(err, CLCONE_ENOMEM, "%s: out of memory", path);
    }
    /* a device or a pipe can be endless (/dev/zero, /dev/urandom): there
     * a NUL byte outside an HDF5 image ends the read, not the memory */
    stream = fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode);
    errno = 0;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        const char *nul = stream ? memchr(buf + n, 0, got) : NULL;
        n += got;
        if (nul && !clc_buf_is_hdf5(buf, n)) {
            size_t at = (size_t)(nul - buf);
            free(buf);
            fclose(f);
            return clc_fail(err, CLCONE_EFORMAT,
                            "%s: byte %zu is NUL: not a text file (a .dat, scene or reactions file) nor an HDF5 one",
                            path, at);
        }
        if (n < cap - 1) break;
        if (cap > SIZE_MAX / 2 || !(bigger = realloc(buf, cap * 2))) {
            free(buf);
            fclose(f);
            return clc_fail(err, CLCONE_ENOMEM,
                               "%s: out of memory reading %zu bytes", path, n);
        }
        buf = bigger;
        cap *= 2;
    }
    failed = ferror(f);
    saved = errno ? errno : EIO;
    fclose(f);
    if (failed) {
        free(buf);
        return clc_fail(err, CLCONE_EIO, "%s: read error: %s", path,
                           strerror(saved));
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return CLCONE_OK;
}

int clc_buf_is_hdf5(const char *buf, size_t len)
{
    static const char sig[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    for (size_t off = 0; len >= 8 && off <= len - 8; off = off ? 2 * off : 512)
        if (memcmp(buf + off, sig, 8) == 0) return 1;
    return 0;
}
