/* Shared helpers for the Check suites. */
#ifndef CLCONE_TESTUTIL_H
#define CLCONE_TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <clcone/clcone.h>
#include <clcone/ext.h>
#include <clcone/output.h>
#include "cli/shared_problems.h"
#include "opencl/opencl.h"
#include "world/world_parts.h" /* the scene generators */

/* Directory of the Siconos problems: $CLCONE_PROBLEMS, else the
 * repository's copy, tests/data/problems (tests run at the repository
 * root; tests/data/PROVENANCE.md). */
static inline const char *test_problems_dir(void)
{
    const char *d = getenv("CLCONE_PROBLEMS");
    return d && *d ? d : "tests/data/problems";
}

/* Directory of MuJoCo's example models: $CLCONE_MODELS, else the
 * repository's copy, tests/data/models/mujoco. */
static inline const char *test_models_dir(void)
{
    const char *d = getenv("CLCONE_MODELS");
    return d && *d ? d : "tests/data/models/mujoco";
}

/* Full path of file `name` in directory dir (static buffer); the test
 * FAILS (not skips) when the file is missing, since a silently skipped
 * check proves nothing. what names the kind in the message. */
static inline const char *test_data_path(const char *dir, const char *name, const char *what)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    ck_assert_msg(access(buf, R_OK) == 0, "required %s missing: %s", what, buf);
    return buf;
}

/* A Siconos problem file's path; missing fails the test. */
static inline const char *test_problem_path(const char *name)
{
    return test_data_path(test_problems_dir(), name, "problem file");
}

/* A MuJoCo model's path (rel under the models directory); missing fails
 * the test. */
static inline const char *test_model_path(const char *rel)
{
    return test_data_path(test_models_dir(), rel, "model");
}

/* Writes text to a fresh temporary file and returns its path (static
 * buffer; the caller unlinks it). */
static inline const char *test_write_temp(const char *text, size_t len)
{
    static char path[64];
    FILE *f;
    int fd;
    snprintf(path, sizeof path, "/tmp/clcone-test-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* Removes a test's flat temporary directory (a program cache) and every
 * entry in it: a context may store more than the one entry a test looks at. */
static inline void test_remove_dir(const char *dir)
{
    char entry[4096];
    struct dirent *d;
    DIR *h = opendir(dir);
    ck_assert_ptr_nonnull(h);
    while ((d = readdir(h)))
        if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
            snprintf(entry, sizeof entry, "%s/%s", dir, d->d_name);
            ck_assert_int_eq(unlink(entry), 0);
        }
    closedir(h);
    ck_assert_int_eq(rmdir(dir), 0);
}

/* Largest difference of a and b relative to the largest |b|. */
static inline double test_rel_diff(const double *a, const double *b, size_t m)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < m; ++i) {
        double x = a[i] - b[i];
        if (x < 0) x = -x;
        if (x > d) d = x;
        x = b[i] < 0 ? -b[i] : b[i];
        if (x > s) s = x;
    }
    return s > 0 ? d / s : d;
}

/* The default OpenCL device; the test fails when there is none. */
static inline clcone_context *test_context(clcone_precision prec)
{
    clcone_context *c = NULL;
    clcone_error e;
    ck_assert_msg(clcone_context_create(NULL, prec, &c, &e) == CLCONE_OK, "%s", e.msg);
    return c;
}

/* The default device with one kernel program built (reduce.cl's): a
 * context builds each program at the first of its kernels, so the cache
 * tests make it build one. */
static inline clcone_context *test_context_built(clcone_precision prec)
{
    clcone_context *c = test_context(prec);
    cl_kernel k = NULL;
    clcone_error e;
    ck_assert_msg(clc_kernel(c, "reduce_rows", &k, &e) == CLCONE_OK, "%s", e.msg);
    clReleaseKernel(k);
    return c;
}

/* Largest body-velocity difference of a and b relative to the largest
 * free velocity of the scene: bodies at rest end with v ~ 0, so a relative
 * measure on v itself means nothing. */
static inline double test_vel_diff(const clcone_scene *s, const double *a, const double *b)
{
    double d = 0, vs = 0;
    for (int i = 0; i < s->nbodies; ++i)
        for (int k = 0; k < 6; ++k) {
            d = fmax(d, fabs(a[6 * i + k] - b[6 * i + k]));
            vs = fmax(vs, fabs(s->bodies[i].v[k]));
        }
    return d / vs;
}

/* Reads at most len - 1 bytes of a file into buf, NUL-terminated (empty
 * when the file cannot be read). */
static inline void test_slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, len - 1, f);
        fclose(f);
    }
    buf[n] = 0;
}

/* Sends this process's stderr (fd 2, where drivers write) to a temporary
 * file until test_stderr_end, which puts what was written in buf: a test
 * that provokes a driver's own report keeps it out of the suite's output
 * and can check it. */
typedef struct test_stderr {
    int saved;
    char path[32];
} test_stderr;

static inline void test_stderr_begin(test_stderr *t)
{
    int fd;
    snprintf(t->path, sizeof t->path, "/tmp/clcone-stderr-XXXXXX");
    fd = mkstemp(t->path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    t->saved = dup(2);
    ck_assert_int_ge(t->saved, 0);
    ck_assert_int_eq(dup2(fd, 2), 2);
    close(fd);
}

static inline void test_stderr_end(test_stderr *t, char *buf, size_t len)
{
    fflush(stderr);
    ck_assert_int_eq(dup2(t->saved, 2), 2);
    close(t->saved);
    test_slurp(t->path, buf, len);
    unlink(t->path);
}

/* Runs a shell command with stdin from /dev/null; stdout goes to out,
 * stderr to err, or also to out when err is NULL. Returns the exit code. */
static inline int test_sh(const char *cmd, char *out, size_t outlen, char *err, size_t errlen)
{
    char full[16384], o[] = "/tmp/clcone-sh-out-XXXXXX", e[] = "/tmp/clcone-sh-err-XXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e), st;
    ck_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    snprintf(full, sizeof full, "(%s) >%s 2>%s </dev/null", cmd, o, err ? e : "&1");
    st = system(full);
    test_slurp(o, out, outlen);
    if (err) test_slurp(e, err, errlen);
    unlink(o);
    unlink(e);
    ck_assert_msg(WIFEXITED(st), "%s did not exit normally", cmd);
    return WEXITSTATUS(st);
}

/* A whole file in a malloc'ed buffer, NUL-terminated (not counted in
 * *len); the test fails when it cannot be read. */
static inline char *test_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;
    ck_assert_msg(f != NULL, "missing %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The last non-empty line of a command's output (static buffer): the
 * machine-readable result line. */
static inline const char *test_last_line(const char *out)
{
    static char line[1024];
    size_t n = strlen(out);
    const char *p;
    while (n > 0 && out[n - 1] == '\n') --n;
    p = out + n;
    while (p > out && p[-1] != '\n') --p;
    snprintf(line, sizeof line, "%.*s", (int)(out + n - p), p);
    return line;
}

/* Runs `clcone ARGS` as a user does (ARGS are shell words, env an optional
 * VAR=value prefix) with the binary $CLCONE_CLI (the Makefile sets it),
 * else build/clcone; output as test_sh. */
static inline int test_run_cli(const char *env, const char *args, char *out, size_t outlen, char *err,
                               size_t errlen)
{
    const char *cli = getenv("CLCONE_CLI");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s %s", env ? env : "", cli && *cli ? cli : "build/clcone", args);
    return test_sh(cmd, out, outlen, err, errlen);
}

/* `clcone gen NAME --n N --seed S`'s contact problem as a scene (*s) and its local form (*p, unless NULL). */
static inline void test_gen_scene(const char *name, int n, unsigned seed, clcone_scene *s, clcone_problem *p)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_error e;
    clcone_gen_params_default(&gp);
    gp.n = n;
    gp.seed = seed;
    ck_assert_msg(clcone_world_generate(name, &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_world_contact_scene(&w, s, &e) == CLCONE_OK, "%s", e.msg);
    if (p) ck_assert_msg(clcone_scene_to_local(s, p, &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
}

static inline void test_gen_pile(int n, unsigned seed, clcone_scene *s, clcone_problem *p)
{
    test_gen_scene("pile", n, seed, s, p);
}

/* One solve of a problem p, or of the scene sc when p is NULL, with model
 * m, solver v, tol, max_iter and check_every (0: the default; the rest
 * default too); the test fails when the call does. Returns the (single
 * problem's) result. */
static inline void assert_finite(const double *r, int m)
{
    for (int i = 0; i < m; ++i) ck_assert_msg(isfinite(r[i]), "r[%d] = %g is not finite", i, r[i]);
}

static inline clcone_prob_result test_solve_one(clcone_context *c, const clcone_problem *p, const clcone_scene *sc,
                                                clcone_model m, clcone_solver v, double tol, int max_iter,
                                                int check_every, double *r)
{
    clcone_options o;
    clcone_result res;
    clcone_error e;
    clcone_prob_result out;
    clcone_options_default(&o);
    o.model = m;
    o.solver = v;
    o.tol = tol;
    if (max_iter > 0) o.max_iter = max_iter;
    if (check_every > 0) o.check_every = check_every;
    ck_assert_msg((p ? clcone_solve(c, p, &o, r, &res, &e) : clcone_solve_scene(c, sc, &o, r, &res, &e)) == CLCONE_OK,
                  "%s", e.msg);
    out = res.items[0];
    clcone_result_free(&res);
    return out;
}

/* p, then its scene s, by model m's solvers va and vb at tol within
 * max_iter on c: each time the same status, iterations, error and bits. */
static inline void test_solvers_agree(clcone_context *c, const clcone_problem *p, const clcone_scene *s,
                                      clcone_model m, clcone_solver va, clcone_solver vb, double tol, int max_iter)
{
    double *a = calloc(3 * (size_t)p->n, sizeof *a), *b = calloc(3 * (size_t)p->n, sizeof *b);
    for (int scene = 0; scene < 2; ++scene) {
        clcone_prob_result ra = test_solve_one(c, scene ? NULL : p, s, m, va, tol, max_iter, 0, a);
        clcone_prob_result rb = test_solve_one(c, scene ? NULL : p, s, m, vb, tol, max_iter, 0, b);
        ck_assert_int_eq(ra.status, rb.status);
        ck_assert_int_eq(ra.iters, rb.iters);
        ck_assert_double_eq(ra.error, rb.error);
        ck_assert(memcmp(a, b, sizeof(double) * 3 * (size_t)p->n) == 0);
    }
    free(a);
    free(b);
}

/* Problems parts[0..nb) as one batch on c, model m by solver v (tol,
 * max_iter; 0: the default), twice: each gets the status, iterations,
 * inner iterations, error and bits it got alone (alone, r), and the runs
 * (on one host thread, then three) the same bits. Frees r and parts. */
static inline void test_batch_is_alone(clcone_context *c, clcone_problem *parts, int nb, clcone_model m,
                                       clcone_solver v, double tol, int max_iter, const clcone_prob_result *alone,
                                       double **r)
{
    const clcone_problem *ptr[8];
    clcone_problem batch;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    double *rb[2];
    ck_assert_int_le(nb, 8);
    for (int i = 0; i < nb; ++i) ptr[i] = &parts[i];
    ck_assert(clcone_batch_concat(ptr, nb, &batch, &e) == CLCONE_OK);
    clcone_options_default(&o);
    o.model = m;
    o.solver = v;
    o.tol = tol;
    if (max_iter > 0) o.max_iter = max_iter;
    for (int run = 0; run < 2; ++run) {
        o.threads = 1 + 2 * run; /* the second run's host work on three threads: the same bits */
        rb[run] = calloc(3 * (size_t)batch.n, sizeof *rb[run]);
        ck_assert_msg(clcone_solve(c, &batch, &o, rb[run], &res, &e) == CLCONE_OK, "%s", e.msg);
        for (int i = 0; i < nb; ++i) {
            ck_assert_int_eq(res.items[i].status, alone[i].status);
            ck_assert_int_eq(res.items[i].iters, alone[i].iters);
            ck_assert_int_eq(res.items[i].inner_iters, alone[i].inner_iters);
            ck_assert_double_eq(res.items[i].error, alone[i].error);
            ck_assert(memcmp(r[i], rb[run] + 3 * batch.prob_off[i], sizeof(double) * 3 * (size_t)parts[i].n) == 0);
        }
        clcone_result_free(&res);
    }
    ck_assert(memcmp(rb[0], rb[1], sizeof(double) * 3 * (size_t)batch.n) == 0);
    for (int i = 0; i < nb; ++i) {
        free(r[i]);
        clcone_problem_free(&parts[i]);
    }
    free(rb[0]);
    free(rb[1]);
    clcone_problem_free(&batch);
}

/* Each of parts[0..nb) solved alone on c by model m's solver v to tol,
 * converging, then as one batch by test_batch_is_alone. Frees parts. */
static inline void test_converged_batch_is_alone(clcone_context *c, clcone_problem *parts, int nb, clcone_model m,
                                                 clcone_solver v, double tol)
{
    clcone_prob_result alone[8];
    double *r[8];
    ck_assert_int_le(nb, 8);
    for (int k = 0; k < nb; ++k) {
        r[k] = calloc(3 * (size_t)parts[k].n, sizeof *r[k]);
        alone[k] = test_solve_one(c, &parts[k], NULL, m, v, tol, 0, 0, r[k]);
        ck_assert_msg(alone[k].status == CLCONE_CONVERGED, "problem %d alone: %s (%s)", k,
                      clcone_run_status_name(alone[k].status), alone[k].reason);
    }
    test_batch_is_alone(c, parts, nb, m, v, tol, 0, alone, r);
}

/* p past the dense limit, from r = 0 to 1e-8 in model m: ipm (from_ipm
 * set; the reference only) within 80 steps and the hybrid on c, which
 * gets there after sweeps (inner iterations) and the hand-over's steps;
 * the error measured here. r: scratch of 3 p->n. */
static inline void test_ipm_and_hybrid_converge(clcone_context *c, const clcone_problem *p, clcone_model m,
                                                int from_ipm, double *r)
{
    clcone_options o;
    clcone_options_default(&o);
    o.model = m;
    for (int v = !from_ipm; v < 2; ++v) {
        clcone_prob_result out;
        memset(r, 0, 3 * (size_t)p->n * sizeof *r);
        out = test_solve_one(c, p, NULL, m, v ? CLCONE_SOLVER_HYBRID : CLCONE_SOLVER_IPM, 1e-8, 0, 0, r);
        ck_assert_msg(out.status == CLCONE_CONVERGED, "%s: %s after %d iterations, error %g (%s)",
                      v ? "hybrid" : "ipm", clcone_run_status_name(out.status), out.iters, out.error, out.reason);
        ck_assert_double_le(clcone_error_of(p, &o, r, 0, p->n), 1e-8);
        if (!v) ck_assert_int_le(out.iters, 80);
        else ck_assert(out.inner_iters > 0 && out.iters > out.inner_iters);
    }
}

#endif
