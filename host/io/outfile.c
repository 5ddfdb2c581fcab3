/* Output files: written to a temporary sibling and renamed over the
 * target only when everything succeeded (clcone_out_*, clcone.h). Here in
 * io/, the lowest layer that writes files (.dat problems, reactions),
 * so that every writer above (scenes, VTK, pictures, plots) shares it. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "io/outfile.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

struct clcone_out {
    FILE *f;
    char *target;   /* the file that ends up holding the output */
    char *tmp;      /* its temporary sibling; NULL when writing through */
};

/* The temporaries being written, for clcone_out_discard_temps: a fixed
 * table of lock-free slots, which a signal handler may walk while the
 * interrupted code was claiming or freeing one. An output opened while
 * every slot is taken is written all the same, only not discarded. */
#define TEMP_SLOTS 64
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "a signal handler reads the slots");
static _Atomic(char *) temp_slots[TEMP_SLOTS];

static void temp_track(char *tmp)
{
    for (int i = 0; i < TEMP_SLOTS; ++i) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&temp_slots[i], &none, tmp)) return;
    }
}

static void temp_untrack(char *tmp)
{
    for (int i = 0; i < TEMP_SLOTS; ++i) {
        char *mine = tmp;
        if (atomic_compare_exchange_strong(&temp_slots[i], &mine, NULL)) return;
    }
}

void clcone_out_discard_temps(void)
{
    for (int i = 0; i < TEMP_SLOTS; ++i) {
        char *tmp = atomic_load(&temp_slots[i]);
        if (tmp) unlink(tmp);
    }
}

static void out_free(clcone_out *o)
{
    if (o->tmp) temp_untrack(o->tmp);
    free(o->target);
    free(o->tmp);
    free(o);
}

/* A fresh file next to target, created with O_EXCL so that it is ours:
 * mkstemp would do, but it forces mode 0600, where a new output should
 * follow the umask (0666 & ~umask, as the kernel applies it to open) and a
 * replaced one keep its mode. */
static int create_sibling(clcone_out *o, const struct stat *old)
{
    static unsigned counter;
    size_t len = strlen(o->target) + 32;
    struct timespec ts;
    if (!(o->tmp = malloc(len))) return -1;
    for (int attempt = 0; attempt < 100; ++attempt) {
        int fd, err;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(o->tmp, len, "%s.tmp%ld.%lx%x", o->target, (long)getpid(), (unsigned long)ts.tv_nsec,
                 counter++);
        /* tracked before it exists: a signal taken between the file's
         * creation and its tracking (a second Ctrl-C right after the
         * first, whose handler ran on return from open) left it behind */
        temp_track(o->tmp);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666);
        if (fd >= 0) {
            /* a mode we cannot set is no reason to lose the output */
            if (old) (void)fchmod(fd, old->st_mode & 07777);
            return fd;
        }
        err = errno;
        temp_untrack(o->tmp);
        if (err != EEXIST) return -1;
    }
    return -1;
}

/* The file that a chain of symbolic links ending nowhere (a dangling
 * link) names, to be created there as a link is followed; path itself
 * when it is no link. NULL with errno set on a loop (ELOOP) or an error. */
static char *link_end(const char *path)
{
    char *cur = strdup(path);
    for (int hop = 0; cur && hop < 40; ++hop) {
        struct stat lst;
        char buf[4096], *next;
        const char *slash;
        size_t d;
        ssize_t n;
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode)) return cur;
        if ((n = readlink(cur, buf, sizeof buf - 1)) < 0) break;
        buf[n] = 0;
        /* a relative target is relative to the link's directory */
        slash = strrchr(cur, '/');
        d = buf[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        if ((next = malloc(d + (size_t)n + 1))) {
            memcpy(next, cur, d);
            memcpy(next + d, buf, (size_t)n + 1);
        }
        free(cur);
        cur = next;
        if (hop == 39) errno = ELOOP;
    }
    free(cur);
    return NULL;
}

/* The file that output path lands on: through its links, to their end
 * when they dangle (exists: stat(path) succeeded). NULL with errno set. */
static char *landing(const char *path, int exists)
{
    struct stat lst;
    if (!exists) return link_end(path);
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) return realpath(path, NULL);
    return strdup(path);
}

clcone_status clcone_out_target(const char *path, char **target, clcone_error *err)
{
    struct stat st;
    int exists;
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, target);
    *target = NULL;
    if (!*path) return clc_fail(err, CLCONE_EINVAL, "output file: empty path");
    exists = stat(path, &st) == 0;
    /* a link loop or a file used as a directory: nothing to write there */
    if ((!exists && errno != ENOENT) || !(*target = landing(path, exists)))
        return clc_fail(err, CLCONE_EIO, "%s: cannot write there: %s", path, strerror(errno));
    return CLCONE_OK;
}

static clcone_status out_open(const char *path, int replace, clcone_out **out, clcone_error *err)
{
    struct stat st;
    clcone_out *o;
    int exists, fd;
    *out = NULL;
    if (!path || !*path) return clc_fail(err, CLCONE_EINVAL, "output file: empty path");
    exists = stat(path, &st) == 0;
    if (!replace && !exists && errno != ENOENT)
        return clc_fail(err, CLCONE_EIO, "%s: cannot write there: %s", path, strerror(errno));
    o = calloc(1, sizeof *o);
    if (!o) return clc_fail(err, CLCONE_ENOMEM, "%s: out of memory", path);
    if (!replace && exists && !S_ISREG(st.st_mode)) {
        /* /dev/null, a terminal, a FIFO: written through, never replaced */
        o->target = strdup(path);
        o->f = o->target ? fopen(path, "w") : NULL;
        if (!o->f) {
            clcone_status s = clc_fail(err, CLCONE_EIO, "%s: cannot open for writing: %s", path,
                                          strerror(errno));
            out_free(o);
            return s;
        }
        *out = o;
        return CLCONE_OK;
    }
    /* A symbolic link stays one: its target is what gets replaced, or
     * created when the link dangles. */
    o->target = replace ? strdup(path) : landing(path, exists);
    if (!o->target) {
        clcone_status s = clc_fail(err, CLCONE_EIO, "%s: %s", path, strerror(errno));
        out_free(o);
        return s;
    }
    fd = create_sibling(o, exists && S_ISREG(st.st_mode) ? &st : NULL);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        clcone_status s = clc_fail(err, CLCONE_EIO, "%s: cannot create a temporary file next to it: %s", path,
                                      strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        out_free(o);
        return s;
    }
    *out = o;
    return CLCONE_OK;
}

clcone_status clcone_out_open(const char *path, clcone_out **out, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, out);
    return out_open(path, 0, out, err);
}

FILE *clcone_out_file(clcone_out *o)
{
    return o ? o->f : NULL;
}

clcone_status clcone_out_close(clcone_out *o, int keep, clcone_error *err)
{
    int ok, saved;
    clcone_status s = CLCONE_OK;
    if (!o) return CLCONE_OK;
    errno = 0;
    ok = fflush(o->f) == 0 && !ferror(o->f);
    saved = errno;
    ok = (fclose(o->f) == 0) && ok;
    if (!saved) saved = errno;
    if (keep && ok && o->tmp && rename(o->tmp, o->target) != 0) {
        ok = 0;
        saved = errno;
    }
    if (keep && !ok)
        s = clc_fail(err, CLCONE_EIO, "%s: write failed: %s", o->target, saved ? strerror(saved) : "I/O error");
    if (o->tmp && (!keep || !ok)) unlink(o->tmp);
    out_free(o);
    return s;
}

static clcone_status write_with(const char *path, int replace, clc_writer_fn fn, const void *ctx,
                                clcone_error *err)
{
    clcone_out *o;
    clcone_status s = out_open(path, replace, &o, err);
    int ok;
    if (s) return s;
    ok = fn(o->f, ctx) == 0;
    if (!ok) {
        int saved = errno; /* the writer's; closing sets errno afresh */
        clcone_out_close(o, 0, NULL);
        return clc_fail(err, CLCONE_EIO, "%s: write failed: %s", path, saved ? strerror(saved) : "I/O error");
    }
    return clcone_out_close(o, 1, err);
}

clcone_status clc_write_atomic(const char *path, clc_writer_fn fn, const void *ctx, clcone_error *err)
{
    return write_with(path, 0, fn, ctx, err);
}

clcone_status clc_write_replace(const char *path, clc_writer_fn fn, const void *ctx, clcone_error *err)
{
    return write_with(path, 1, fn, ctx, err);
}
