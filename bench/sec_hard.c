/* Section 8's second table: hard contact (`clcone mujoco --model
 * coulomb`) on the shared models whose cones are pyramidal, by apgd on
 * the general-block form (coulomb's default there before) against the
 * default, MuJoCo's Newton on the primal problem in proximal rounds
 * (host/ref/primal_prox.c). The bench runs the CLI (the adapter links
 * into it) and reads its last line. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#ifdef BENCH_MUJOCO

/* One CLI run's last line: status, error, iterations, solve time. */
typedef struct hard_run {
    int rc;
    char status[32], line[600];
    double error, ms;
    long iters;
} hard_run;

static void run_hard(const char *cli, const char *model, int steps, const char *device, const char *solver,
                     hard_run *r)
{
    char cmd[16384], line[4096];
    FILE *p;
    memset(r, 0, sizeof *r);
    r->rc = -1;
    snprintf(cmd, sizeof cmd, "'%s' mujoco '%s' --steps %d --model coulomb --device '%s'%s%s%s 2>&1", cli, model,
             steps, device ? device : "ref", device ? " --precision double" : "", solver ? " --solver " : "",
             solver ? solver : "");
    if (!(p = popen(cmd, "r"))) return;
    while (fgets(line, sizeof line, p))
        if (strncmp(line, "status=", 7) == 0 || strncmp(line, "clcone: ", 8) == 0)
            snprintf(r->line, sizeof r->line, "%.590s", strtok(line, "\n"));
    r->rc = pclose(p);
    r->rc = r->rc >= 0 && WIFEXITED(r->rc) ? WEXITSTATUS(r->rc) : -1;
    if (sscanf(r->line, "status=%31s error=%lf iters=%ld time_ms=%lf", r->status, &r->error, &r->iters, &r->ms) != 4)
        r->status[0] = 0;
}

void bench_hard_models(bench *b, FILE *f)
{
    static const char *const models[] = {"humanoid/humanoid.xml", "humanoid/100_humanoids.xml",
                                         "replicate/stonehenge.xml", "replicate/newton_cradle.xml"};
    static const char *const solvers[] = {"apgd", NULL};
    const int steps = 50; /* the humanoids' apgd slows from step 20 on */
    char cli[4200], model[4400];
    const char *device = bench_cli_device(b);
    if (!bench_cli_ready(b, f, cli, sizeof cli)) return;
    fprintf(f, "### Hard contact on the shared models: apgd against MuJoCo's Newton in proximal rounds\n\n"
               "`clcone mujoco MODEL --steps %d --model coulomb` from the model's state (R = 0 on the contact "
               "rows; these models' cones are pyramidal, so no state takes the 3-row form): `--solver apgd` on the "
               "general-block form (coulomb's default there before) against the default, MuJoCo's Newton on the "
               "primal problem "
               "in proximal rounds, each a soft problem whose R on the contacts shrinks toward 0 "
               "(docs/mujoco.md). Reference: the CPU reference in double at its tolerance (1e-8); device: `--device "
               "%s --precision double` (1e-8). Iterations: apgd's, or Newton's steps over every round, summed over "
               "the steps; ms: the steps' solves summed; the error is the last step's, each form's own measure of "
               "the same hard problem.\n\n"
               "| model | backend | apgd: status, error, iterations, ms | proximal Newton: status, error, "
               "iterations, ms | apgd / proximal time |\n|---|---|---|---|---|\n",
            steps, device);
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; ++mi) {
        snprintf(model, sizeof model, "%s/../models/mujoco/%s", b->problems, models[mi]);
        for (int dev = 0; dev < 2; ++dev) {
            hard_run r[2];
            if (dev && !b->dctx) continue;
            for (int s = 0; s < 2; ++s) {
                run_hard(cli, model, steps, dev ? device : NULL, solvers[s], &r[s]);
                if (!r[s].status[0] || (r[s].rc != 0 && r[s].rc != 1))
                    bench_fail(b, f, "%s, %s: the CLI failed (exit %d): %s", models[mi], solvers[s] ? solvers[s] : "default",
                               r[s].rc, r[s].line);
            }
            if (!r[0].status[0] || !r[1].status[0]) continue;
            fprintf(f, "| %s | %s | %s, %.1e, %ld, %.3g | %s, %.1e, %ld, %.3g | %.1f |\n", models[mi],
                    dev ? "device, double" : "reference", r[0].status, r[0].error, r[0].iters, r[0].ms, r[1].status,
                    r[1].error, r[1].iters, r[1].ms, r[1].ms > 0 ? r[0].ms / r[1].ms : 0);
            fflush(f);
        }
    }
    fprintf(f, "\n");
}

#endif
