/* The outputs of one command, checked before any work is done, so that a
 * run refused for its outputs has solved nothing and written nothing. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A resolved directory (PATH_MAX) and a name. */
#define KEY_LEN 8200

/* path split into its directory ("." when it has none) and its last name,
 * trailing slashes dropped; 0, or -1 when the path is empty or too long. */
static int split_path(const char *path, char *dir, char *base, size_t len)
{
    size_t n = strlen(path);
    const char *slash;
    while (n > 1 && path[n - 1] == '/') --n;
    if (n == 0 || n >= len) return -1;
    memcpy(dir, path, n);
    dir[n] = 0;
    slash = strrchr(dir, '/');
    if (!slash) {
        memcpy(base, dir, n + 1);
        strcpy(dir, ".");
    } else {
        strcpy(base, slash + 1);
        if (slash == dir) dir[1] = 0; /* "/name": the root */
        else dir[slash - dir] = 0;
    }
    return 0;
}

/* Where output o lands, as one string: the resolved file when it exists
 * (through its links), else its resolved directory and its name (at the
 * end of a dangling link). Empty for what is not a regular file or
 * directory (/dev/null, a FIFO), which any number of outputs may share.
 * Returns 0, or EXIT_USAGE after saying why o cannot be written. */
static int output_key(const cli_output *o, char *key, size_t len)
{
    char dir[4096], base[4096], *real = NULL, *target;
    struct stat st;
    clcone_error e;
    int exists = stat(o->path, &st) == 0, dir_ok;
    size_t n = strlen(o->path);
    key[0] = 0;
    if (!o->dir && n > 0 && o->path[n - 1] == '/') {
        fprintf(stderr, "clcone: %s %s: names a directory (the trailing /), not a file\n", o->opt, o->path);
        return EXIT_USAGE;
    }
    if (exists && (o->dir ? !S_ISDIR(st.st_mode) : S_ISDIR(st.st_mode))) {
        fprintf(stderr, "clcone: %s %s: %s\n", o->opt, o->path,
                o->dir ? "exists and is not a directory" : "is a directory, not a file");
        return EXIT_USAGE;
    }
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return 0;
    /* a link loop, a file used as a directory: refused here */
    if (clcone_out_target(o->path, &target, &e)) {
        fprintf(stderr, "clcone: %s %s\n", o->opt, e.msg);
        return EXIT_USAGE;
    }
    if (exists) {
        real = realpath(target, NULL);
    } else if (split_path(target, dir, base, sizeof dir) == 0) {
        dir_ok = stat(dir, &st) == 0;
        if (!dir_ok || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "clcone: %s %s: cannot write there: directory %s: %s (no output creates the "
                    "directories above it)\n", o->opt, o->path, dir, dir_ok ? "not a directory" : strerror(errno));
            free(target);
            return EXIT_USAGE;
        }
        real = realpath(dir, NULL);
    } else {
        errno = ENAMETOOLONG;
    }
    free(target);
    if (!real) {
        fprintf(stderr, "clcone: %s %s: cannot write there: %s\n", o->opt, o->path, strerror(errno));
        return EXIT_USAGE;
    }
    if (exists) snprintf(key, len, "%s", real);
    else snprintf(key, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
    /* every output is written beside its target and renamed over it (a
     * directory's files inside it): the directory must take new files */
    if (exists && !o->dir) {
        char *slash = strrchr(real, '/');
        if (slash) slash[slash == real] = 0;
    }
    if (access(real, W_OK | X_OK) != 0) {
        fprintf(stderr, "clcone: %s %s: cannot write there: directory %s: %s\n", o->opt, o->path, real,
                strerror(errno));
        free(real);
        return EXIT_USAGE;
    }
    free(real);
    return 0;
}

/* The inputs' files (ok[i] when input i is a regular file, through its
 * links: only those can be overwritten). */
typedef struct input_files {
    const cli_input *ins;
    int n;
    struct stat *st;
    int *ok;
} input_files;

/* The input that path would overwrite (a regular file that is one of
 * them, by any name or link): its index, or -1. */
static int input_at(const input_files *in, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    for (int i = 0; i < in->n; ++i)
        if (in->ok[i] && in->st[i].st_dev == st.st_dev && in->st[i].st_ino == st.st_ino) return i;
    return -1;
}

/* Refuses output o when it, or a file it writes in its directory, is an
 * input; 0, or EXIT_USAGE after naming both. */
static int check_not_input(const cli_output *o, const input_files *in)
{
    char path[KEY_LEN];
    struct dirent *de;
    DIR *d;
    int i = input_at(in, o->path), rc = 0;
    if (i >= 0) {
        fprintf(stderr, "clcone: %s %s would overwrite the input %s %s (the same file): no output may name an input\n",
                o->opt, o->path, in->ins[i].what, in->ins[i].path);
        return EXIT_USAGE;
    }
    if (!o->dir || !o->writes || !(d = opendir(o->path))) return 0;
    while (!rc && (de = readdir(d)))
        if (o->writes(de->d_name, o->ctx) && snprintf(path, sizeof path, "%s/%s", o->path, de->d_name) < KEY_LEN
            && (i = input_at(in, path)) >= 0) {
            fprintf(stderr, "clcone: %s %s would overwrite the input %s %s (the same file as %s, which it writes): "
                    "no output may name an input\n", o->opt, o->path, in->ins[i].what, in->ins[i].path, path);
            rc = EXIT_USAGE;
        }
    closedir(d);
    return rc;
}

int cli_check_outputs(const cli_output *outs, int n, const cli_input *ins, int nin)
{
    char (*keys)[KEY_LEN] = calloc((size_t)n + 1, sizeof *keys);
    input_files in = {ins, nin, calloc((size_t)nin + 1, sizeof *in.st), calloc((size_t)nin + 1, sizeof *in.ok)};
    int rc = 0;
    if (!keys || !in.st || !in.ok) {
        fprintf(stderr, "clcone: out of memory\n");
        rc = EXIT_USAGE;
    }
    for (int i = 0; i < nin && !rc; ++i)
        in.ok[i] = ins[i].path && stat(ins[i].path, &in.st[i]) == 0 && S_ISREG(in.st[i].st_mode);
    for (int i = 0; i < n && !rc; ++i) {
        if (!outs[i].path) continue;
        if ((rc = output_key(&outs[i], keys[i], sizeof keys[i])) || (rc = check_not_input(&outs[i], &in))) break;
        for (int j = 0; j < i; ++j)
            if (outs[j].path && keys[i][0] && strcmp(keys[i], keys[j]) == 0) {
                fprintf(stderr, "clcone: %s %s and %s %s are the same file: one output would overwrite the other\n",
                        outs[j].opt, outs[j].path, outs[i].opt, outs[i].path);
                rc = EXIT_USAGE;
                break;
            }
    }
    free(keys);
    free(in.st);
    free(in.ok);
    return rc;
}

int cli_make_dir(const char *opt, const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "clcone: %s %s: cannot create the directory: %s\n", opt, dir, strerror(errno));
    return EXIT_USAGE;
}
