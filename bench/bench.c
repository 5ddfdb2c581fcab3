/* clcone benchmark driver: runs the sections (2, 1, 3, 4, 7, 6, 5, 8, 9, 10: the
 * hardware limit first, since the scaling figures are set against it) and
 * writes bench/results/report.md with the machine, the OpenCL device and
 * the peak memory of the run.
 *
 * usage: bench [--out DIR] [--problems DIR] [--device SPEC] [--quick] [--sections 1234567890]
 * (--sections runs only the listed sections, 0 for 10, for development)
 * BENCH_QUICK=1 in the environment is the same as --quick. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "opencl/opencl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <libgen.h>
#include <time.h>
#include <unistd.h>

void bench_cli_path(char *buf, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(buf, len, "build/clcone");
        return;
    }
    exe[n] = 0;
    snprintf(buf, len, "%s/clcone", dirname(exe));
}

int bench_cli_ready(bench *b, FILE *f, char *cli, size_t len)
{
    bench_cli_path(cli, len);
    if (access(cli, X_OK) == 0) return 1;
    bench_fail(b, f, "the CLI %s is not there (make bench builds it)", cli);
    return 0;
}

const char *bench_cli_device(const bench *b)
{
    return b->spec ? b->spec : !b->dctx ? "gpu" : clcone_context_device(b->dctx)->is_gpu ? "gpu" : "cpu";
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_elapsed(const bench *b) { return bench_now() - b->t0; }

int bench_repeat(int runs, double ms) { return runs < BENCH_REPEATS && ms < BENCH_REPEAT_MS; }

clcone_status bench_plan_solve_best(clcone_plan *plan, double *r, size_t nr, clcone_result *res, double *ms,
                                    clcone_error *err)
{
    double last;
    int runs = 0;
    *ms = INFINITY;
    memset(res, 0, sizeof *res);
    do {
        clcone_status st;
        double t;
        clcone_result_free(res);
        memset(r, 0, nr * sizeof *r);
        t = bench_now();
        st = clcone_plan_solve(plan, r, res, err);
        last = (bench_now() - t) * 1e3;
        if (st) return st;
        *ms = fmin(*ms, last);
    } while (bench_repeat(++runs, last));
    return CLCONE_OK;
}

void bench_fail(bench *b, FILE *f, const char *fmt, ...)
{
    va_list ap;
    char msg[2048];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->failures++;
    fprintf(f, "\n> **FAILED:** %s\n\n", msg);
    fprintf(stderr, "bench: FAILED: %s\n", msg);
}

FILE *bench_data(bench *b, FILE *sec, const char *name)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", b->out, name);
    f = fopen(path, "w");
    if (!f) bench_fail(b, sec, "cannot write %s: %s", path, strerror(errno));
    return f;
}

int bench_plot(bench *b, FILE *sec, const char *name, const char *body)
{
    char path[4096], cmd[8400];
    FILE *f;
    int rc;
    if (!b->gnuplot_ok) {
        fprintf(sec, "\n(plot %s.png not drawn: gnuplot was not found; the data are in %s.dat)\n\n", name,
                name);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.gp", b->out, name);
    f = fopen(path, "w");
    if (!f) {
        bench_fail(b, sec, "cannot write %s: %s", path, strerror(errno));
        return 0;
    }
    fprintf(f, "set terminal pngcairo size 900,600 noenhanced font 'sans,11'\n");
    fprintf(f, "set output '%s.png'\n", name);
    fputs(body, f);
    if (fclose(f) != 0) {
        bench_fail(b, sec, "cannot write %s", path);
        return 0;
    }
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot '%s.gp' > '%s.gplog' 2>&1", b->out, name, name);
    rc = system(cmd);
    if (rc != 0) {
        bench_fail(b, sec, "gnuplot failed on %s/%s.gp (exit %d; see %s.gplog)", b->out, name, rc, name);
        return 0;
    }
    fprintf(sec, "\n![%s](%s.png)\n\n", name, name);
    return 1;
}

const char *bench_fmt_ms(double ms, char *buf, size_t len)
{
    if (!(ms == ms)) snprintf(buf, len, "-");
    else if (ms >= 1e4) snprintf(buf, len, "%.1f s", ms / 1e3);
    else if (ms >= 1e3) snprintf(buf, len, "%.2f s", ms / 1e3);
    else if (ms >= 1) snprintf(buf, len, "%.3g ms", ms);
    else snprintf(buf, len, "%.3g us", ms * 1e3);
    return buf;
}

clcone_status bench_solve_scene(clcone_context *ctx, const clcone_scene *s, const clcone_options *o,
                                clcone_prob_result *out, double *r_out, clcone_error *err)
{
    clcone_result res;
    clcone_status st;
    double *r = r_out ? r_out : calloc(3 * (size_t)s->ncontacts + 3, sizeof *r);
    memset(out, 0, sizeof *out);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "out of memory for %d reactions", s->ncontacts);
        return CLCONE_ENOMEM;
    }
    st = clcone_solve_scene(ctx, s, o, r, &res, err);
    if (!st) {
        *out = res.items[0];
        clcone_result_free(&res);
    }
    if (!r_out) free(r);
    return st;
}

clcone_status bench_iter_time(clcone_context *ctx, const clcone_scene *s, const clcone_options *o0, int M,
                             double *per_iter_ms, double *t100_ms, int *flag, clcone_error *err)
{
    clcone_options o = *o0;
    clcone_prob_result a, c;
    clcone_status st;
    double ta = INFINITY, tc = INFINITY;
    o.tol = 0;
    o.check_every = 1 << 30;
    o.max_seconds = 0;
    *flag = BENCH_TIME_OK;
    /* the shortest of up to three runs each (the machine may be shared and
     * noise only ever adds time): repeated while a run takes under a
     * second, or while the difference is implausibly small (an iteration
     * under a quarter of the 100-iteration run's mean, checks included) */
    for (int rep = 0; rep < 3; ++rep) {
        o.max_iter = 100;
        if ((st = bench_solve_scene(ctx, s, &o, &a, NULL, err))) return st;
        if (a.iters < 100) {
            /* stopped early: the error reached exactly 0 (tol = 0) */
            *per_iter_ms = a.time_ms / a.iters;
            if (t100_ms) *t100_ms = a.time_ms;
            *flag = BENCH_TIME_EXACT;
            return CLCONE_OK;
        }
        if (a.time_ms < ta) ta = a.time_ms;
        o.max_iter = 100 + M;
        if ((st = bench_solve_scene(ctx, s, &o, &c, NULL, err))) return st;
        if (c.iters < 100 + M) {
            *per_iter_ms = c.time_ms / c.iters;
            if (t100_ms) *t100_ms = ta;
            *flag = BENCH_TIME_EXACT;
            return CLCONE_OK;
        }
        if (c.time_ms < tc) tc = c.time_ms;
        if (c.time_ms > 1000 && (tc - ta) / M >= 0.25 * ta / 100) break;
    }
    *per_iter_ms = (tc - ta) / M;
    if (*per_iter_ms < 0.25 * ta / 100) *flag = BENCH_TIME_NOISY;
    if (t100_ms) *t100_ms = ta;
    return CLCONE_OK;
}

const char *bench_time_flag(int flag)
{
    return flag == BENCH_TIME_EXACT ? " (a)" : flag == BENCH_TIME_NOISY ? " (b)" : "";
}

static void loadavg(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    snprintf(buf, len, "?");
    if (!f) return;
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
    fclose(f);
}

static void cpu_model(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(buf, len, "unknown (no /proc/cpuinfo)");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ') p++;
                p[strcspn(p, "\n")] = 0;
                snprintf(buf, len, "%s", p);
            }
            break;
        }
    fclose(f);
}

static long long mem_total_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long v = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lld kB", &v) == 1) break;
    fclose(f);
    return v;
}

static void dev_string(clcone_context *c, cl_device_info what, char *buf, size_t len)
{
    size_t got = 0;
    if (clGetDeviceInfo(c->device, what, len - 1, buf, &got) != CL_SUCCESS) snprintf(buf, len, "?");
    buf[len - 1] = 0;
}

static int mkdir_p(const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static const char *const SEC_TITLES[BENCH_SECTIONS] = {
    "1. Scaling: grids and piles, device vs CPU reference",
    "2. Hardware limit: triad bandwidth and the Jacobi iteration's traffic",
    "3. Batches of small scenes: one batch vs one by one",
    "4. Siconos problems: iterations, times and performance profiles",
    "5. MuJoCo as a peer",
    "6. Direction bias of the pyramid",
    "7. Siconos itself as the peer: NSGS and NSN against clcone, one judge",
    "8. Hard contact without creep: a pinched capsule's slip, MuJoCo against clcone coulomb",
    "9. MuJoCo worlds in one batch against MuJoCo one after another",
    "10. Second order: scenes and large piles to 1e-8",
};

/* The float and double contexts (spec as --device) and the device's
 * description; ver and cver (256 chars) get its OpenCL versions. */
static void open_contexts(bench *B, const char *spec, char *ver, char *cver)
{
    clcone_error err;
    char drv[256] = "?";
    if (clcone_context_create(spec, CLCONE_FLOAT, &B->fctx, &err)) {
        snprintf(B->fctx_err, sizeof B->fctx_err, "%s", err.msg);
        B->fctx = NULL;
    }
    if (clcone_context_create(spec, CLCONE_DOUBLE, &B->dctx, &err)) {
        snprintf(B->dctx_err, sizeof B->dctx_err, "%s", err.msg);
        B->dctx = NULL;
    }
    if (B->fctx) {
        const clcone_device_info *di = clcone_context_device(B->fctx);
        dev_string(B->fctx, CL_DRIVER_VERSION, drv, sizeof drv);
        dev_string(B->fctx, CL_DEVICE_VERSION, ver, 256);
        dev_string(B->fctx, CL_DEVICE_OPENCL_C_VERSION, cver, 256);
        snprintf(B->dev_name, sizeof B->dev_name, "%s (%s, driver %s)", di->name, di->platform, drv);
        snprintf(B->dev_short, sizeof B->dev_short, "%.40s", di->name);
    } else {
        snprintf(B->dev_name, sizeof B->dev_name, "none");
        snprintf(B->dev_short, sizeof B->dev_short, "none");
    }
}

/* The report's head: the machine, the device and the run. */
static void report_head(FILE *md, bench *B, const char *ver, const char *cver, const char *load0,
                        const char *load1, const struct rusage *ru)
{
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    fprintf(md, "# clcone benchmark report\n\n");
    fprintf(md, "All figures below were measured in this one run (`%s`), on this machine; "
                "comparisons are ratios of figures from the same run.\n\n",
            B->quick ? "BENCH_QUICK=1 make bench" : "make bench");
    fprintf(md, "| | |\n|---|---|\n");
    fprintf(md, "| CPU | %s |\n", cpu);
    fprintf(md, "| cores (online) | %ld |\n", sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(md, "| memory | %.1f GiB |\n", (double)mem_total_kb() / (1024.0 * 1024.0));
    fprintf(md, "| OpenCL device | %s |\n", B->dev_name);
    if (B->fctx) {
        const clcone_device_info *di = clcone_context_device(B->fctx);
        fprintf(md, "| device version | %s; %s; %d compute units, %.1f GiB global memory, fp64 %s |\n", ver,
                cver, di->compute_units, (double)di->global_mem / (1 << 30), di->fp64 ? "yes" : "no");
    } else {
        fprintf(md, "| device error | %s |\n", B->fctx_err);
    }
    if (!B->dctx) fprintf(md, "| double context | not available: %s |\n", B->dctx_err);
    fprintf(md, "| CPU reference | clcone_solve with a NULL context: double, one thread |\n");
    fprintf(md, "| run time | %.1f s (mode: %s) |\n", bench_elapsed(B), B->quick ? "quick" : "full");
    fprintf(md, "| peak memory (ru_maxrss) | %.1f MiB (the bench process, whole run) |\n",
            (double)ru->ru_maxrss / 1024.0);
    fprintf(md, "| /proc/loadavg at start / end | %s / %s (other processes on the machine add noise to the times) |\n",
            load0, load1);
    fprintf(md, "| failures noted | %d |\n\n", B->failures);
    fprintf(md, "Section times:");
    for (int i = 0; i < BENCH_SECTIONS; ++i) fprintf(md, " %d: %.1f s%s", i + 1, B->sec_seconds[i],
                                                     i + 1 < BENCH_SECTIONS ? "," : ".\n\n");
}

/* Runs the sections in their order (those --sections names, all without
 * it) into their buffers. */
static void run_sections(bench *B, const char *only)
{
    static const int order[BENCH_SECTIONS] = {1, 0, 2, 3, 6, 5, 4, 7, 8, 9};
    void (*fns[BENCH_SECTIONS])(bench *, FILE *) = {bench_section_scaling, bench_section_bandwidth,
                                                     bench_section_batches, bench_section_siconos,
                                                     bench_section_mujoco, bench_section_bias,
                                                     bench_section_peer, bench_section_creep,
                                                     bench_section_worlds, bench_section_second};
    for (int k = 0; k < BENCH_SECTIONS; ++k) {
        int i = order[k];
        double t = bench_now();
        if (only && !strchr(only, i < 9 ? '1' + i : '0')) {
            fprintf(B->sec[i], "(not run: --sections %s)\n", only);
            continue;
        }
        fprintf(stderr, "bench: section %s (%.0f s into the run)\n", SEC_TITLES[i], bench_elapsed(B));
        if (!B->fctx)
            bench_fail(B, B->sec[i], "no OpenCL float context, the device parts are skipped: %s", B->fctx_err);
        fns[i](B, B->sec[i]);
        B->sec_seconds[i] = bench_now() - t;
        fflush(B->sec[i]);
    }
}

int main(int argc, char **argv)
{
    bench B;
    const char *spec = NULL, *env, *only = NULL;
    char path[4096], ver[256] = "?", cver[256] = "?";
    FILE *md;
    struct rusage ru;
    char load0[128], load1[128];
    memset(&B, 0, sizeof B);
    B.t0 = bench_now();
    loadavg(load0, sizeof load0);
    B.out = "bench/results";
    B.problems = getenv("CLCONE_PROBLEMS") ? getenv("CLCONE_PROBLEMS") : "tests/data/problems";
    env = getenv("BENCH_QUICK");
    B.quick = env && *env && strcmp(env, "0") != 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) B.out = argv[++i];
        else if (strcmp(argv[i], "--problems") == 0 && i + 1 < argc) B.problems = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) spec = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) B.quick = 1;
        else if (strcmp(argv[i], "--sections") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: bench [--out DIR] [--problems DIR] [--device SPEC] [--quick] [--sections 1234567890]\n");
            return 2;
        }
    }
    if (mkdir_p(B.out) != 0) {
        fprintf(stderr, "bench: cannot create %s: %s\n", B.out, strerror(errno));
        return 1;
    }
    B.gnuplot_ok = system("command -v gnuplot > /dev/null 2>&1") == 0;
    B.spec = spec;
    open_contexts(&B, spec, ver, cver);
    for (int i = 0; i < BENCH_SECTIONS; ++i) {
        B.sec[i] = open_memstream(&B.sec_text[i], &B.sec_len[i]);
        if (!B.sec[i]) {
            fprintf(stderr, "bench: open_memstream failed\n");
            return 1;
        }
    }
    run_sections(&B, only);
    getrusage(RUSAGE_SELF, &ru);
    loadavg(load1, sizeof load1);
    snprintf(path, sizeof path, "%s/report.md", B.out);
    md = fopen(path, "w");
    if (!md) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    report_head(md, &B, ver, cver, load0, load1, &ru);
    for (int i = 0; i < BENCH_SECTIONS; ++i) {
        fclose(B.sec[i]);
        fprintf(md, "## %s\n\n%s\n", SEC_TITLES[i], B.sec_text[i] ? B.sec_text[i] : "");
        free(B.sec_text[i]);
    }
    if (fclose(md) != 0) {
        fprintf(stderr, "bench: cannot write %s\n", path);
        return 1;
    }
    clcone_context_free(B.fctx);
    clcone_context_free(B.dctx);
    fprintf(stderr, "bench: wrote %s in %.1f s, %d failure(s) noted, peak memory %.1f MiB\n", path,
            bench_elapsed(&B), B.failures, (double)ru.ru_maxrss / 1024.0);
    return 0;
}
