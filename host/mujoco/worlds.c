/* Many worlds of one MuJoCo model in one batch a step (mujoco/worlds.h). */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/worlds.h"
#include "mujoco/guard.h"
#include "core/internal.h"
#include "solve/blocks_solve.h"
#include "mujoco/mj_primal.h"
#include "core/parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct clc_worlds {
    clcone_context *ctx;
    const mjModel *m;
    int n, threads;
    int borrowed;                /* d is the caller's (clc_worlds_borrow) */
    clc_mujoco **ad;          /* per world: its warm start */
    mjData **d;
    clc_mujoco_pending *pd;   /* per world: this step's problem */
    clc_mujoco_stats *st;
};

static unsigned long long splitmix64(unsigned long long *x)
{
    unsigned long long z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void clc_worlds_perturb(const mjModel *m, mjData *d, unsigned long long seed, int k, double scale)
{
    unsigned long long x = seed + (unsigned long long)k * 0x9E3779B97F4A7C15ULL;
    if (k == 0) return;
    for (int i = 0; i < (int)m->nv; ++i) {
        double u = (double)(splitmix64(&x) >> 11) * 0x1.0p-53; /* the top 53 bits: exact in [0, 1) */
        d->qvel[i] += scale * (2 * u - 1);
    }
}

static clcone_status in_world(clcone_status s, int k, clcone_error *err);

/* A limit in bytes from the first number in file path (or "max": none),
 * less the usage in file used when given; -1 when there is none. */
static double file_limit(const char *path, const char *used)
{
    FILE *f = fopen(path, "r");
    double lim = -1, u = 0;
    if (!f) return -1;
    if (fscanf(f, "%lf", &lim) != 1) lim = -1;
    fclose(f);
    if (lim >= 0 && used && (f = fopen(used, "r"))) {
        if (fscanf(f, "%lf", &u) != 1) u = 0;
        fclose(f);
    }
    /* cgroup v1 writes "no limit" as about 2^63 */
    return lim >= 0 && lim < 0x1p60 ? fmax(lim - u, 0) : -1;
}

/* The smaller of a and b, a limit of -1 being none. */
static double tighter(double a, double b) { return a < 0 ? b : b < 0 ? a : fmin(a, b); }

/* Bytes this process can still commit (MemAvailable, a cgroup's limit
 * less its usage), or -1 when none is known; *from names the source. */
static double resident_left(const char **from)
{
    char line[256];
    double avail = -1, cg;
    FILE *f = fopen("/proc/meminfo", "r");
    *from = "MemAvailable";
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &avail) == 1) {
            avail *= 1024;
            break;
        }
    if (f) fclose(f);
    cg = tighter(file_limit("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 file_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    if (cg >= 0 && (avail < 0 || cg < avail)) *from = "the cgroup's memory limit less its usage";
    return tighter(avail, cg);
}

/* Bytes of address space left under RLIMIT_AS and RLIMIT_DATA (ulimit -v,
 * -d), or -1 when unlimited. */
static double address_left(void)
{
    struct rlimit as, data;
    double lim = -1, used = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lf", &used) == 1) used *= (double)sysconf(_SC_PAGESIZE);
        fclose(f);
    }
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) lim = (double)as.rlim_cur;
    if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY) lim = tighter(lim, (double)data.rlim_cur);
    return lim < 0 ? -1 : fmax(lim - used, 0);
}

clcone_status clc_worlds_check_memory(const mjModel *m, long long ndata, const char *label, clcone_error *err)
{
    mjData *d;
    const char *from;
    double used, need, virt, left = resident_left(&from), aleft = address_left();
    clcone_status s = clc_mujoco_make_data(m, label, &d, err);
    if (s) return s;
    /* an error of MuJoCo's there (its arena too small, say) comes again at
     * the worlds' first step, named there; its arena counts whole here */
    used = clc_mujoco_forward(m, d, label, err) ? (double)m->narena : (double)d->maxuse_arena;
    mj_deleteData(d);
    need = (double)ndata * ((double)sizeof(mjData) + (double)m->nbuffer + used);
    virt = (double)ndata * ((double)sizeof(mjData) + (double)m->nbuffer + (double)m->narena);
    if (left >= 0 && need > left)
        return clc_fail(err, CLCONE_ENOMEM, "%s: %lld MuJoCo data need about %.3g GiB (%.3g MiB each: its buffer "
                                               "and the arena its initial state uses), more than the %.3g GiB left "
                                               "(%s); use fewer worlds",
                           label, ndata, need / 0x1p30, need / (double)ndata / 0x1p20, left / 0x1p30, from);
    if (aleft >= 0 && virt > aleft)
        return clc_fail(err, CLCONE_ENOMEM, "%s: %lld MuJoCo data take %.3g GiB of address space (%.3g MiB each: "
                                               "its buffer and its whole arena), more than the %.3g GiB the process's "
                                               "limit (ulimit -v or -d) leaves; use fewer worlds",
                           label, ndata, virt / 0x1p30, virt / (double)ndata / 0x1p20, aleft / 0x1p30);
    return CLCONE_OK;
}

void clc_worlds_free(clc_worlds *w)
{
    if (!w) return;
    for (int k = 0; k < w->n; ++k) {
        if (w->ad) clc_mujoco_free(w->ad[k]);
        if (w->d && w->d[k] && !w->borrowed) mj_deleteData(w->d[k]);
        if (w->pd) clc_mujoco_pending_free(&w->pd[k]);
    }
    free(w->ad);
    free(w->d);
    free(w->pd);
    free(w->st);
    free(w);
}

/* n worlds of m with their adapters and no data yet. */
static clcone_status worlds_alloc(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                  int n, int threads, clc_worlds **out, clcone_error *err)
{
    clc_worlds *w;
    clcone_status s;
    *out = NULL;
    if (n < 1 || n > CLCONE_WORLDS_MAX)
        return clc_fail(err, CLCONE_EINVAL, "worlds: %d worlds asked for; 1 to %d are stepped", n,
                           CLCONE_WORLDS_MAX);
    if (threads < 1 || threads > CLCONE_WORLDS_THREADS)
        return clc_fail(err, CLCONE_EINVAL, "worlds: %d threads asked for; 1 to %d run MuJoCo's stages", threads,
                           CLCONE_WORLDS_THREADS);
    w = clc_calloc(1, sizeof *w, err, "the worlds");
    if (!w) return CLCONE_ENOMEM;
    w->ctx = ctx;
    w->m = m;
    w->n = n;
    w->threads = threads < n ? threads : n;
    w->ad = clc_calloc((size_t)n, sizeof *w->ad, err, "the worlds' adapters");
    w->d = clc_calloc((size_t)n, sizeof *w->d, err, "the worlds' MuJoCo data");
    w->pd = clc_calloc((size_t)n, sizeof *w->pd, err, "the worlds' problems");
    w->st = clc_calloc((size_t)n, sizeof *w->st, err, "the worlds' figures");
    if (!w->ad || !w->d || !w->pd || !w->st) {
        clc_worlds_free(w);
        return CLCONE_ENOMEM;
    }
    for (int k = 0; k < n; ++k)
        if ((s = clc_mujoco_create(ctx, o, label, &w->ad[k], err))) {
            clc_worlds_free(w);
            return s;
        }
    *out = w;
    return CLCONE_OK;
}

clcone_status clc_worlds_create(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, unsigned long long seed, double scale, clc_worlds **out,
                                   clcone_error *err)
{
    clc_worlds *w;
    clcone_status s;
    *out = NULL;
    if (n >= 1 && n <= CLCONE_WORLDS_MAX && (s = clc_worlds_check_memory(m, n, label, err))) return s;
    if ((s = worlds_alloc(ctx, o, label, m, n, threads, &w, err))) return s;
    for (int k = 0; k < n; ++k) {
        if ((s = clc_mujoco_make_data(m, label, &w->d[k], err))) {
            clc_worlds_free(w);
            return in_world(s, k, err);
        }
        clc_worlds_perturb(m, w->d[k], seed, k, scale);
    }
    *out = w;
    return CLCONE_OK;
}

clcone_status clc_worlds_borrow(clcone_context *ctx, const clcone_options *o, const char *label, const mjModel *m,
                                   int n, int threads, clc_worlds **out, clcone_error *err)
{
    clcone_status s = worlds_alloc(ctx, o, label, m, n, threads, out, err);
    if (!s) (*out)->borrowed = 1;
    return s;
}

int clc_worlds_count(const clc_worlds *w) { return w->n; }

mjData *clc_worlds_data(const clc_worlds *w, int k) { return w->d[k]; }

const clc_mujoco_stats *clc_worlds_stats_of(const clc_worlds *w, int k) { return &w->st[k]; }

/* err's message with "world k: " in front. */
static clcone_status in_world(clcone_status s, int k, clcone_error *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return clc_fail(err, s, "world %d: %.*s", k, (int)sizeof msg - 24, msg);
}

/* Whether world pd's problem joins the 3-row batch (solve_batch): it has
 * rows, in the 3-row form; those on the general-block form
 * (mujoco/general.c) make the general batch (solve_general_batch). */
static int in_batch(const clc_mujoco_pending *pd) { return pd->nb && !pd->general && !pd->primal; }

/* World k's primal problem (MuJoCo's Newton, mujoco/mj_primal.h), if it
 * has one, solved alone. */
static clcone_status solve_primal_item(void *arg, int k, clcone_error *err)
{
    clc_worlds *w = arg;
    clcone_status s = CLCONE_OK;
    if (w->pd[k].primal && w->pd[k].nb) s = clc_mujoco_solve_pending(w->ad[k], &w->pd[k], &w->st[k], err);
    return s ? in_world(s, k, err) : s;
}

/* On a device, the worlds' primal problems as one batch, every island
 * of every world in one launch (clc_mj_primal_solve_many), in world
 * order; the batch's clock is each world's time. */
static clcone_status solve_primal_batch(clc_worlds *w, clcone_error *err)
{
    clc_mj_primal **pr = clc_calloc((size_t)w->n, sizeof *pr, err, "the primal batch's worlds");
    clcone_prob_result *res = clc_calloc((size_t)w->n, sizeof *res, err, "the primal batch's results");
    int *world = clc_calloc((size_t)w->n, sizeof *world, err, "the primal batch's worlds");
    int np = 0, failed = -1;
    clcone_options o;
    clcone_status s = CLCONE_ENOMEM;
    if (!pr || !res || !world) goto out;
    for (int k = 0; k < w->n; ++k)
        if (w->pd[k].primal && w->pd[k].nb) {
            pr[np] = w->pd[k].primal;
            world[np++] = k;
        }
    s = CLCONE_OK;
    if (!np) goto out;
    clc_mujoco_solve_options(w->ad[0], NULL, NULL, &o);
    o.warm_start = pr[0]->warm; /* the model's flag: every world's */
    if ((s = clc_mj_primal_solve_many(w->ctx, np, pr, &o, w->threads, res, &failed, err))) {
        if (failed >= 0) s = in_world(s, world[failed], err);
        goto out;
    }
    for (int j = 0; j < np; ++j) w->st[world[j]].res = res[j];
out:
    free(pr);
    free(res);
    free(world);
    return s;
}

/* One world's result into ws's totals. A device batch's clock is the
 * batch's: its time is the last stop (*last_ms, added by the caller);
 * the reference's problems run one after another. */
static void add_world_result(const clc_worlds *w, const clcone_prob_result *pr, clc_worlds_stats *ws,
                             double *last_ms)
{
    ++ws->solved;
    if (!w->ctx) ws->solve_ms += pr->time_ms;
    else if (pr->time_ms > *last_ms) *last_ms = pr->time_ms;
    if (pr->status > ws->status) ws->status = pr->status;
    if (pr->error > ws->error) ws->error = pr->error;
    if (pr->iters > ws->iters) ws->iters = pr->iters;
}

/* The worlds' primal problems, on a device one batch, on the reference a
 * world a thread at a time (the same results for any number of
 * threads), into ws's totals. */
static clcone_status solve_primal_worlds(clc_worlds *w, clc_worlds_stats *ws, clcone_error *err)
{
    clcone_status s = w->ctx ? solve_primal_batch(w, err)
                             : clc_each_item(w->threads, w->n, solve_primal_item, w, NULL, err);
    double last_ms = 0;
    for (int k = 0; !s && k < w->n; ++k)
        if (w->pd[k].primal && w->pd[k].nb) add_world_result(w, &w->st[k].res, ws, &last_ms);
    ws->solve_ms += last_ms;
    return s;
}

/* The worlds on the general-block form as one batch
 * (clc_solve_blocks_batch), in world order, each solved as it would be
 * alone; their forces in pd->r, results in st->res, into ws's totals. */
static clcone_status solve_general_batch(clc_worlds *w, clc_worlds_stats *ws, clcone_error *err)
{
    const clc_bproblem **p = clc_calloc((size_t)w->n, sizeof *p, err, "the general batch's problems");
    double **f = clc_calloc((size_t)w->n, sizeof *f, err, "the general batch's forces");
    clcone_prob_result *res = clc_calloc((size_t)w->n, sizeof *res, err, "the general batch's results");
    int *world = clc_calloc((size_t)w->n, sizeof *world, err, "the general batch's worlds");
    int np = 0, failed = -1;
    double last_ms = 0;
    clcone_options o;
    clcone_status s = CLCONE_ENOMEM;
    if (!p || !f || !res || !world) goto out;
    for (int k = 0; k < w->n; ++k)
        if (w->pd[k].general && w->pd[k].nb) {
            p[np] = &w->pd[k].bp;
            f[np] = w->pd[k].r;
            world[np++] = k;
        }
    s = CLCONE_OK;
    if (!np) goto out;
    clc_mujoco_solve_options(w->ad[0], NULL, NULL, &o);
    if ((s = clc_solve_blocks_batch(w->ctx, np, p, &o, w->threads, f, res, &failed, err))) {
        if (failed >= 0) s = in_world(s, world[failed], err);
        else clc_error_prefix(err, "the batch of %d worlds' general-block problems", np);
        goto out;
    }
    for (int j = 0; j < np; ++j) {
        w->st[world[j]].res = res[j];
        add_world_result(w, &res[j], ws, &last_ms);
    }
    ws->solve_ms += last_ms;
out:
    free(p);
    free(f);
    free(res);
    free(world);
    return s;
}

/* The batch of the worlds with 3-row problems, in world order: their
 * problems concatenated, with their R, a_ref and warm starts; solved on
 * one plan, the forces handed back to each world's pd->r and its result
 * to its st->res. */
static clcone_status solve_batch(clc_worlds *w, clc_worlds_stats *ws, clcone_error *err)
{
    const clcone_problem **parts = NULL;
    clcone_problem batch = {0};
    clcone_plan *plan = NULL;
    clcone_result res = {0};
    clcone_options o;
    double *R = NULL, *aref = NULL, *r = NULL, t0 = clc_now_ms();
    int np = 0, nb = 0, nr = 0;
    clcone_status s = CLCONE_ENOMEM;
    for (int k = 0; k < w->n; ++k) {
        if (!in_batch(&w->pd[k])) continue;
        nb += w->pd[k].nb;
        nr += w->pd[k].nr;
    }
    parts = clc_calloc((size_t)w->n, sizeof *parts, err, "the batch's parts");
    R = clc_calloc((size_t)nr + 1, sizeof *R, err, "the batch's R");
    aref = clc_calloc((size_t)nr + 1, sizeof *aref, err, "the batch's a_ref");
    r = clc_calloc((size_t)nr + 1, sizeof *r, err, "the batch's forces");
    if (!parts || !R || !aref || !r) goto out;
    for (int k = 0, at = 0; k < w->n; ++k) {
        const clc_mujoco_pending *pd = &w->pd[k];
        size_t len = (size_t)pd->nr * sizeof *r;
        if (!in_batch(pd)) continue;
        parts[np++] = &pd->p;
        memcpy(R + at, pd->R, len);
        memcpy(aref + at, pd->aref, len);
        memcpy(r + at, pd->r, len);
        at += pd->nr;
    }
    ws->solved = np;
    if (!np) {
        s = CLCONE_OK;
        goto out;
    }
    if ((s = clcone_batch_concat(parts, np, &batch, err))) goto out;
    clc_mujoco_solve_options(w->ad[0], R, aref, &o);
    if ((s = clcone_plan_create(w->ctx, &batch, &o, &plan, err))) goto out;
    ws->batch_ms = clc_now_ms() - t0;
    if ((s = clcone_plan_solve(plan, r, &res, err))) goto out;
    ws->solve_ms = res.time_ms;
    for (int k = 0, j = 0, at = 0; k < w->n; ++k) {
        clc_mujoco_pending *pd = &w->pd[k];
        const clcone_prob_result *pr;
        if (!in_batch(pd)) continue;
        pr = &res.items[j++];
        memcpy(pd->r, r + at, (size_t)pd->nr * sizeof *r);
        at += pd->nr;
        w->st[k].res = *pr;
        if (pr->status > ws->status) ws->status = pr->status;
        if (pr->error > ws->error) ws->error = pr->error;
        if (pr->iters > ws->iters) ws->iters = pr->iters;
    }
out:
    if (s && np) { /* the batch as a whole: no one world's */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        clc_fail(err, s, "the batch of %d worlds' problems (%d blocks): %.*s", np, nb, (int)sizeof msg - 80, msg);
    }
    clcone_plan_free(plan);
    clcone_result_free(&res);
    clcone_problem_free(&batch);
    free(parts);
    free(R);
    free(aref);
    free(r);
    return s;
}

/* One half of world k's step. */
typedef struct half_job {
    clc_worlds *w;
    int second;
} half_job;

static clcone_status run_half(void *arg, int k, clcone_error *err)
{
    half_job *j = arg;
    clc_worlds *w = j->w;
    clcone_status s = j->second ? clc_mujoco_end(w->ad[k], w->m, w->d[k], &w->pd[k], &w->st[k], err)
                                : clc_mujoco_begin(w->ad[k], w->m, w->d[k], NULL, &w->pd[k], &w->st[k], err);
    return s ? in_world(s, k, err) : s;
}

/* A half of every world's step on the worlds' threads. Each world's half
 * touches only that world, so the worlds end the same whatever the
 * threads; the error is the lowest failing world's, the one a single
 * thread stops at. */
static clcone_status each_world(clc_worlds *w, int second, clcone_error *err)
{
    half_job job = {w, second};
    clc_mujoco_handlers outer = clc_mujoco_hold();
    clcone_status s = clc_each_item(w->threads, w->n, run_half, &job, NULL, err);
    clc_mujoco_release(outer);
    return s;
}

clcone_status clc_worlds_step_data(clc_worlds *w, mjData *const *d, clc_worlds_stats *ws, clcone_error *err)
{
    memcpy(w->d, d, (size_t)w->n * sizeof *w->d);
    return clc_worlds_step(w, ws, err);
}

clcone_status clc_worlds_step(clc_worlds *w, clc_worlds_stats *ws, clcone_error *err)
{
    clcone_status s;
    double t0 = clc_now_ms(), t1;
    memset(ws, 0, sizeof *ws);
    s = each_world(w, 0, err);
    t1 = clc_now_ms();
    for (int k = 0; k < w->n; ++k) {
        ws->rows += w->st[k].nefc;
        ws->contacts += w->st[k].ncon;
        ws->blocks += w->st[k].blocks;
        ws->build_ms += w->st[k].setup_ms;
    }
    if (!s) s = solve_batch(w, ws, err);
    if (!s) s = solve_general_batch(w, ws, err);
    if (!s) s = solve_primal_worlds(w, ws, err);
    ws->host_ms = t1 - t0;
    t0 = clc_now_ms();
    if (!s) s = each_world(w, 1, err);
    ws->host_ms += clc_now_ms() - t0;
    for (int k = 0; k < w->n; ++k) clc_mujoco_pending_free(&w->pd[k]);
    return s;
}
