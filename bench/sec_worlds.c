/* Section 9: many MuJoCo worlds in one batch a step (`clcone mujoco
 * --worlds N`, host/mujoco/worlds.c) against MuJoCo stepping the same
 * worlds one after another with its own solver.
 *
 * The bench runs the CLI beside it (the adapter links into the CLI, not
 * into libclcone or the bench) with --compare mujoco, which times both on
 * the same perturbed worlds in one process, and reads its lines: the last
 * one's worlds/s and MuJoCo's, the steps' host, build, batch and solve
 * times. A model the adapter refuses (rows it does not solve yet) is a
 * row saying so with the CLI's message, not a failure of the run. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* One CLI run's figures. */
typedef struct worlds_run {
    int rc;                          /* the CLI's exit status, -1: not run */
    char status[32], message[600];   /* its status, or its last line on an error */
    double wps, mj_wps, speedup;     /* world steps a second, clcone and MuJoCo */
    double host_ms, build_ms, batch_ms, solve_ms; /* per step, averaged */
    double mj_constraint_ms;         /* MuJoCo's constraint solver a step, all worlds (its timer) */
    double wall_s, cpu_s;            /* the whole CLI run: wall time and CPU time (every thread) */
    int contacts;
} worlds_run;

static double cpu_children_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
}

/* Runs `clcone mujoco MODEL --worlds n --steps K --compare mujoco` with
 * MuJoCo's Newton method on the reference (device NULL) or on that device
 * in double, and reads it. */
static void run_cli(const char *cli, const char *model, int n, int steps, const char *device, worlds_run *r)
{
    char cmd[16384], line[4096];
    int nsteps = 0, err_seen = 0;
    double t0 = bench_now(), c0 = cpu_children_s();
    FILE *p;
    memset(r, 0, sizeof *r);
    r->rc = -1;
    snprintf(cmd, sizeof cmd, "'%s' mujoco '%s' --worlds %d --steps %d --compare mujoco --solver newton --device '%s'%s 2>&1",
             cli, model, n, steps, device ? device : "ref", device ? " --precision double" : "");
    p = popen(cmd, "r");
    if (!p) return;
    while (fgets(line, sizeof line, p)) {
        const char *h = strstr(line, " host_ms ");
        double host, build, batch, solve;
        line[strcspn(line, "\n")] = 0;
        if (h && sscanf(h, " host_ms %lf build_ms %lf batch_ms %lf solve_ms %lf", &host, &build, &batch, &solve) == 4) {
            r->host_ms += host;
            r->build_ms += build;
            r->batch_ms += batch;
            r->solve_ms += solve;
            ++nsteps;
        }
        /* the last result line, or the CLI's error (stderr is unbuffered,
         * so it may come before stdout's last lines) */
        if (strncmp(line, "clcone: ", 8) == 0 || (strncmp(line, "status=", 7) == 0 && !err_seen))
            snprintf(r->message, sizeof r->message, "%.590s", line);
        err_seen |= strncmp(line, "clcone: ", 8) == 0;
    }
    r->rc = pclose(p);
    r->rc = r->rc >= 0 && WIFEXITED(r->rc) ? WEXITSTATUS(r->rc) : -1;
    r->wall_s = bench_now() - t0;
    r->cpu_s = cpu_children_s() - c0;
    if (nsteps) {
        r->host_ms /= nsteps;
        r->build_ms /= nsteps;
        r->batch_ms /= nsteps;
        r->solve_ms /= nsteps;
    }
    if ((r->rc == 0 || r->rc == 1) && strncmp(r->message, "status=", 7) == 0) {
        const char *c = strstr(r->message, " contacts="), *w = strstr(r->message, " worlds_per_s="),
                   *mc = strstr(r->message, " mujoco_constraint_ms_per_step=");
        sscanf(r->message, "status=%31s", r->status);
        if (c) sscanf(c, " contacts=%d", &r->contacts);
        if (w) sscanf(w, " worlds_per_s=%lf mujoco_worlds_per_s=%lf speedup=%lf", &r->wps, &r->mj_wps, &r->speedup);
        if (mc) sscanf(mc, " mujoco_constraint_ms_per_step=%lf", &r->mj_constraint_ms);
    }
}

/* A copy of the model at src with elliptic cones (cone="elliptic" put in
 * its <option> tag), at dst: the humanoid's rows the adapter solves
 * today. 0 on success. */
static int elliptic_copy(const char *src, const char *dst)
{
    size_t len = 0;
    char *text = NULL, *opt;
    FILE *in = fopen(src, "rb"), *out = NULL;
    int rc = -1;
    if (!in) return -1;
    if (fseek(in, 0, SEEK_END) == 0 && (len = (size_t)ftell(in)) > 0 && fseek(in, 0, SEEK_SET) == 0 &&
        (text = calloc(len + 1, 1)) != NULL && fread(text, 1, len, in) == len && (opt = strstr(text, "<option ")) &&
        !strstr(text, "cone=") && (out = fopen(dst, "wb")) != NULL) {
        opt += strlen("<option ");
        rc = fwrite(text, 1, (size_t)(opt - text), out) == (size_t)(opt - text) && fputs("cone=\"elliptic\" ", out) >= 0 &&
                     fputs(opt, out) >= 0
                 ? 0
                 : -1;
        if (fclose(out) != 0) rc = -1;
    }
    fclose(in);
    free(text);
    return rc;
}

void bench_section_worlds(bench *b, FILE *f)
{
    /* the shared models, and the humanoid with elliptic cones */
    static const char *const models[] = {"sleep/dominos.xml", "humanoid/humanoid.xml", "humanoid (elliptic copy)"};
    static const int full_n[] = {16, 64, 256, 1024}, quick_n[] = {16, 64};
    const int *ns = b->quick ? quick_n : full_n;
    const int nn = b->quick ? 2 : 4;
    char cli[4200], model[4400], problems[4096];
    const char *device = bench_cli_device(b);
    snprintf(problems, sizeof problems, "%s", b->problems);
    if (!bench_cli_ready(b, f, cli, sizeof cli)) return;
    fprintf(f, "N copies of a model (`clcone mujoco MODEL --worlds N --steps K --compare mujoco --solver newton`, "
               "world k >= 1 from the model's state with qvel perturbed by up to 0.01, seed 1): each step MuJoCo's "
               "stages run per world on the host (one thread), all the worlds' constraint problems are solved as "
               "one clcone batch, then each world finishes its step; against MuJoCo's own `mj_step` (the model's "
               "solver and options) stepping the same worlds one after another, timed in the same process. "
               "Worlds/s counts world steps a second (N K over the wall time of the K steps; K = %d for the "
               "dominos, %d for the humanoid). The per-step columns: host = MuJoCo's stages and building the "
               "problems (build = the building alone: MuJoCo's primal problem per world, its M and J by islands, "
               "no J M^-1 J'), batch = gathering the worlds' problems, solve = the batch's solve, against "
               "MuJoCo's constraint solver on the same worlds' step (`mjTIMER_CONSTRAINT`, its own timer, summed "
               "over the worlds; the model's solver and tolerance). Both backends run MuJoCo's Newton method on "
               "its primal problem: reference = the CPU reference in double, one thread (its solve time is the "
               "worlds' solves summed); device = the bench's device in double, every island of every world in "
               "one launch (`--device %s`). The CLI run's CPU time (every thread, MuJoCo's stepping and the "
               "comparison included) is beside its wall time. The humanoid's elliptic copy is `humanoid.xml` "
               "with `cone=\"elliptic\"` (the shared model's contacts are pyramidal).\n\n",
            b->quick ? 3 : 5, b->quick ? 10 : 20, device);
    fprintf(f, "| model | N | backend | status | contacts (all worlds, most) | clcone worlds/s | MuJoCo worlds/s | "
               "speedup | host ms | build ms | batch ms | solve ms | MuJoCo constraint ms | CLI wall s, CPU s |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; ++mi) {
        int refused = 0; /* a refused model is refused at every N */
        const int steps = mi == 0 ? (b->quick ? 3 : 5) : (b->quick ? 10 : 20);
        if (mi == 2) {
            char src[4400];
            snprintf(src, sizeof src, "%s/../models/mujoco/humanoid/humanoid.xml", problems);
            snprintf(model, sizeof model, "%s/humanoid_elliptic.xml", b->out);
            if (elliptic_copy(src, model) != 0) {
                bench_fail(b, f, "cannot write %s, the elliptic copy of %s", model, src);
                continue;
            }
        } else snprintf(model, sizeof model, "%s/../models/mujoco/%s", problems, models[mi]);
        for (int i = 0; i < nn && !refused; ++i)
            for (int dev = 0; dev < 2; ++dev) {
                worlds_run r;
                if (refused || (dev && !b->dctx)) continue;
                run_cli(cli, model, ns[i], steps, dev ? device : NULL, &r);
                if (r.rc == 2 || r.rc < 0 || !r.status[0]) {
                    /* refused (rows not solved yet) or broken: the CLI's message */
                    fprintf(f, "| %s | %d | %s | not run (exit %d) | %s |||||||||\n", models[mi], ns[i],
                            dev ? "device" : "reference", r.rc, r.message);
                    if (r.rc != 2) bench_fail(b, f, "%s, %d worlds: the CLI failed: %s", models[mi], ns[i], r.message);
                    refused = r.rc == 2;
                    continue;
                }
                fprintf(f, "| %s | %d | %s | %s | %d | %.1f | %.1f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f, %.2f |\n",
                        models[mi], ns[i], dev ? "device" : "reference", r.status, r.contacts, r.wps, r.mj_wps,
                        r.speedup, r.host_ms, r.build_ms, r.batch_ms, r.solve_ms, r.mj_constraint_ms, r.wall_s,
                        r.cpu_s);
                fflush(f);
            }
    }
    fprintf(f, "\n");
}
