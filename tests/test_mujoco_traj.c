/* Trajectories with clcone as MuJoCo's constraint solver against MuJoCo's
 * own (issue 21): the shared humanoid and dominos stepped from the
 * model's initial state by mj_step (the model's solver, Newton at
 * tolerance 1e-8) and by the adapter (soft model, clcone's default
 * solver and tolerance, 1e-8 in double), side by side; and what `clcone
 * mujoco` keeps of a run (--csv, --qpos, --png). Built with MuJoCo
 * when the Makefile found it; without it the suite is empty (the mujoco
 * suite checks the CLI's message). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clcone/clcone.h>
#include "testutil.h"

#ifdef CLCONE_MUJOCO
#include <png.h>
#include "mujoco/adapter.h"

/* Largest |qpos - qpos_mujoco| (metres, radians, quaternion components)
 * allowed over the first 100 steps. Measured (reference and POCL double
 * alike to the digits): humanoid 1.5e-9, dominos 2.4e-10; the two solvers
 * stop at different points inside their 1e-8 tolerances and the steps
 * carry that on. 1e-7 leaves 70x over the humanoid for another libm or
 * device's rounding, yet clcone solving to 1e-6 instead of 1e-8 already
 * breaks it (1.6e-7 on the humanoid): forces off by a relative 1e-6 fail. */
#define TRAJ_BOUND_100 1e-7

/* The humanoid's bound over 1,000 steps: it falls and lies still, so the
 * difference stays small (1.5e-8 measured at step 1,000); 65x that. */
#define HUMANOID_BOUND_1000 1e-6

/* A domino has fallen when its long axis leans past this from the
 * vertical. At step 1,000 (measured, both ways) the toppled ones lie at
 * 75-82 degrees on their neighbours, the falling front at 37-70, the
 * others stand below 10; at step 4,000 all lean 80.7-90. */
#define FALLEN_DEG 30.0

/* Largest difference of a domino's lean, clcone against MuJoCo, at step
 * 1,000: 0.46 degrees measured (the front's falling domino), 4x that. */
#define LEAN_BOUND_DEG 2.0

typedef struct traj {
    mjModel *m;
    mjData *dm, *dc; /* MuJoCo's own trajectory, clcone's */
    double first100; /* largest qpos difference over steps 1-100 */
    double worst;    /* over all the steps */
} traj;

static double qpos_diff(const mjModel *m, const mjData *a, const mjData *b)
{
    double d = 0;
    for (int i = 0; i < (int)m->nq; ++i) d = fmax(d, fabs(a->qpos[i] - b->qpos[i]));
    return d;
}

/* Steps the shared model rel K times both ways from its initial state,
 * clcone on ctx (NULL: the reference); the largest differences are logged
 * at steps 100, 200, 500, 1,000, ... as the run reaches them. Every step
 * with rows must converge. */
static void follow(clcone_context *ctx, const char *rel, int K, traj *t)
{
    char path[4096], msg[1000];
    clcone_options o;
    clc_mujoco *a;
    clcone_error e;
    snprintf(path, sizeof path, "%s", test_model_path(rel));
    t->m = mj_loadXML(path, NULL, msg, sizeof msg);
    ck_assert_msg(t->m != NULL, "%s", msg);
    t->dm = mj_makeData(t->m);
    t->dc = mj_makeData(t->m);
    t->first100 = t->worst = 0;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    ck_assert_int_eq(clc_mujoco_create(ctx, &o, path, &a, &e), CLCONE_OK);
    for (int s = 1; s <= K; ++s) {
        clc_mujoco_stats st;
        mj_step(t->m, t->dm);
        ck_assert_msg(clc_mujoco_step(a, t->m, t->dc, NULL, &st, &e) == CLCONE_OK, "step %d: %s", s, e.msg);
        if (st.blocks) ck_assert_msg(st.res.status == CLCONE_CONVERGED, "%s step %d: %s", rel, s, st.res.reason);
        t->worst = fmax(t->worst, qpos_diff(t->m, t->dm, t->dc));
        if (s <= 100) t->first100 = t->worst;
        if (s == 100 || s == 200 || s % 500 == 0)
            fprintf(stderr, "mujoco trajectory %s, %s: largest qpos difference over steps 1-%d: %.3e\n", rel,
                    ctx ? "device double" : "reference", s, t->worst);
    }
    clc_mujoco_free(a);
}

static void traj_free(traj *t)
{
    mj_deleteData(t->dm);
    mj_deleteData(t->dc);
    mj_deleteModel(t->m);
}

/* Free body j's lean: the angle of its z axis from the world's, degrees
 * (a domino's z is its long axis). */
static double tilt_deg(const mjModel *m, const mjData *d, int j)
{
    const double *q = d->qpos + m->jnt_qposadr[j] + 3;
    double zz = 1 - 2 * (q[1] * q[1] + q[2] * q[2]);
    return acos(fmax(-1, fmin(1, zz))) * 180 / acos(-1);
}

/* The humanoid (pyramidal contacts, joint limits; the soft default,
 * MuJoCo's Newton on the primal problem, on both backends) 1,000 steps
 * on the reference, 100 on POCL in double. */
START_TEST(humanoid_follows_mujoco)
{
    clcone_context *ctx = _i ? test_context(CLCONE_DOUBLE) : NULL;
    traj t;
    follow(ctx, "humanoid/humanoid.xml", _i ? 100 : 1000, &t);
    ck_assert_double_le(t.first100, TRAJ_BOUND_100);
    ck_assert_double_le(t.worst, HUMANOID_BOUND_1000);
    traj_free(&t);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* At the end of t's dominos run: every domino leans as under MuJoCo (to
 * LEAN_BOUND_DEG, and on the same side of FALLEN_DEG), and the chain has
 * toppled some of them. */
static void leans_match(const traj *t)
{
    int fell = 0, nfree = 0;
    for (int j = 0; j < (int)t->m->njnt; ++j) {
        double lm, lc;
        if (t->m->jnt_type[j] != mjJNT_FREE) continue;
        lm = tilt_deg(t->m, t->dm, j);
        lc = tilt_deg(t->m, t->dc, j);
        ++nfree;
        fell += lm > FALLEN_DEG;
        ck_assert_msg(fabs(lm - lc) <= LEAN_BOUND_DEG && (lm > FALLEN_DEG) == (lc > FALLEN_DEG),
                      "the domino of joint %d leans %.2f deg under MuJoCo, %.2f under clcone", j, lm, lc);
    }
    fprintf(stderr, "mujoco trajectory sleep/dominos.xml: %d of %d dominos past %g deg under MuJoCo and clcone\n", fell,
            nfree, FALLEN_DEG);
    ck_assert_int_eq(nfree, 96);
    ck_assert_int_ge(fell, 10);
}

/* The dominos (elliptic contacts, impratio 10, sleeping: the 3-row form)
 * 1,000 steps on the reference, 100 on POCL in double. Their chain takes
 * about 3,700 steps to topple all 96 (both ways; docs/mujoco.md), too long for a
 * test: at step 1,000 the 16 dominos MuJoCo has toppled are exactly those
 * clcone has (the chain has reached the same domino) and every domino
 * leans as under MuJoCo to LEAN_BOUND_DEG. From step 600 on the
 * trajectories part faster (1.5e-5 at step 700, 4.7e-3 at 1,000: contacts
 * start a step apart as the chain runs on), so positions are not bounded
 * there. */
START_TEST(dominos_follow_mujoco)
{
    clcone_context *ctx = _i ? test_context(CLCONE_DOUBLE) : NULL;
    traj t;
    follow(ctx, "sleep/dominos.xml", _i ? 100 : 1000, &t);
    ck_assert_double_le(t.first100, TRAJ_BOUND_100);
    if (!ctx) leans_match(&t);
    traj_free(&t);
    if (ctx) clcone_context_free(ctx);
}
END_TEST

/* The humanoid stepped k times by the library as `clcone mujoco` steps
 * it (reference, soft, the default options), energy on: qpos after each
 * step in q (k x nq), MuJoCo's energy of each step's start in en (k x 2),
 * each step's start time in t. */
static void library_run(const mjModel *m0, int k, double *q, double *en, double *t)
{
    mjModel *m = mj_copyModel(NULL, m0);
    mjData *d = mj_makeData(m);
    clcone_options o;
    clc_mujoco *a;
    clcone_error e;
    m->opt.enableflags |= mjENBL_ENERGY;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SOFT;
    clcone_options_resolve(&o, NULL);
    o.solver = CLCONE_SOLVER_DEFAULT;
    ck_assert_int_eq(clc_mujoco_create(NULL, &o, "humanoid", &a, &e), CLCONE_OK);
    for (int s = 0; s < k; ++s) {
        clc_mujoco_stats st;
        t[s] = d->time;
        ck_assert_msg(clc_mujoco_step(a, m, d, NULL, &st, &e) == CLCONE_OK, "%s", e.msg);
        memcpy(q + (size_t)s * m->nq, d->qpos, (size_t)m->nq * sizeof *q);
        en[2 * s] = d->energy[0];
        en[2 * s + 1] = d->energy[1];
    }
    clc_mujoco_free(a);
    mj_deleteData(d);
    mj_deleteModel(m);
}

/* `clcone mujoco --csv --qpos`: the files hold what the library's own run
 * gives, bit for bit (the CSV's %.17g reads back exactly): the CSV a
 * line a step (its start time and energy, its solve), qpos every K
 * steps as .npy (numpy's format 1.0, header then rows) or CSV; the
 * options that do not fit are refused. */
START_TEST(cli_keeps_the_trajectory)
{
    enum { K = 10, EVERY = 3 };
    char path[4096], msg[1000], args[8192], out[1 << 16], err[4096], line[8192], hdr[128];
    char dir[] = "/tmp/clcone-traj-XXXXXX", csv[64], npy[64], qcsv[64];
    mjModel *m;
    double *q, en[2 * K], t[K];
    FILE *f;
    int nq, rows = 0;
    snprintf(path, sizeof path, "%s", test_model_path("humanoid/humanoid.xml"));
    m = mj_loadXML(path, NULL, msg, sizeof msg);
    ck_assert_msg(m != NULL, "%s", msg);
    nq = (int)m->nq;
    q = malloc((size_t)K * nq * sizeof *q);
    library_run(m, K, q, en, t);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/log.csv", dir);
    snprintf(npy, sizeof npy, "%s/q.npy", dir);
    snprintf(qcsv, sizeof qcsv, "%s/q.csv", dir);
    snprintf(args, sizeof args, "mujoco %s --steps %d --device ref --csv %s --qpos %s --qpos-every %d", path, K, csv,
             npy, EVERY);
    ck_assert_msg(test_run_cli(NULL, args, out, sizeof out, err, sizeof err) == 0, "%s", err);

    /* the log: its header, then step s's start and solve */
    ck_assert_ptr_nonnull(f = fopen(csv, "r"));
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "step,time,potential,kinetic,energy,rows,contacts,blocks,status,iters,error,solve_ms\n");
    for (int s = 0; s < K; ++s) {
        int step, nefc, ncon, nb, iters;
        double time, pot, kin, tot, error;
        char status[32];
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(sscanf(line, "%d,%lf,%lf,%lf,%lf,%d,%d,%d,%31[a-z],%d,%lf", &step, &time, &pot, &kin, &tot,
                                &nefc, &ncon, &nb, status, &iters, &error),
                         11);
        ck_assert_int_eq(step, s);
        ck_assert(time == t[s] && pot == en[2 * s] && kin == en[2 * s + 1] && tot == pot + kin);
        ck_assert_str_eq(status, "converged");
        ck_assert(nefc > 0 && ncon > 0 && nb > 0 && iters > 0 && error <= 1e-8);
    }
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    /* the humanoid starts at rest, above the floor */
    ck_assert(en[1] == 0 && en[0] > 0);

    /* the .npy: rows after steps 3, 6 and 9 */
    ck_assert_ptr_nonnull(f = fopen(npy, "rb"));
    ck_assert_int_eq((int)fread(hdr, 1, sizeof hdr, f), 128);
    ck_assert(memcmp(hdr, "\x93NUMPY\x01\x00", 8) == 0 && hdr[8] == 118 && hdr[9] == 0 && hdr[127] == '\n');
    snprintf(line, sizeof line, "'shape': (%d, %d)", K / EVERY, nq);
    ck_assert_msg(strstr(hdr + 10, line) && strstr(hdr + 10, "'descr': '<f8'"), "%.118s", hdr + 10);
    for (double v[64]; fread(v, sizeof *v, (size_t)nq, f) == (size_t)nq; ++rows)
        ck_assert(memcmp(v, q + (size_t)((rows + 1) * EVERY - 1) * nq, (size_t)nq * sizeof *v) == 0);
    ck_assert_int_eq(rows, K / EVERY);
    fclose(f);

    /* qpos as CSV, every step: step, its end time, qpos */
    snprintf(args, sizeof args, "mujoco %s --steps 4 --device ref --qpos %s", path, qcsv);
    ck_assert_msg(test_run_cli(NULL, args, out, sizeof out, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_nonnull(f = fopen(qcsv, "r"));
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert(strncmp(line, "step,time,qpos0,qpos1,", 22) == 0);
    for (int s = 0; s < 4; ++s) {
        char *p = line, *end;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq((int)strtol(p, &p, 10), s + 1);
        ck_assert(strtod(p + 1, &p) == t[s + 1]);
        for (int i = 0; i < nq; ++i, p = end) ck_assert(strtod(p + 1, &end) == q[(size_t)s * nq + i]);
        ck_assert_str_eq(p, "\n");
    }
    fclose(f);

    /* what does not fit */
    snprintf(args, sizeof args, "mujoco %s --steps 2 --qpos-every 2", path);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--qpos-every does not apply: no --qpos FILE"));
    snprintf(args, sizeof args, "mujoco %s --steps 2 --qpos %s --qpos-every 0", path, npy);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--qpos-every needs an integer >= 1, got '0'"));
    snprintf(args, sizeof args, "mujoco %s --steps 2 --worlds 2 --csv %s", path, csv);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--csv records a run of one world, not of --worlds N"));
    snprintf(args, sizeof args, "mujoco %s --steps 2 --csv %s/no/such/dir/log.csv", path, dir);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);

    unlink(csv);
    unlink(npy);
    unlink(qcsv);
    rmdir(dir);
    free(q);
    mj_deleteModel(m);
}
END_TEST

/* `clcone mujoco --png`: the humanoid after 50 steps drawn at the size
 * asked for, its bodies in the colour map's blue (no force) and the feet
 * on the floor in its red end (their contact forces, the most of any
 * body); refused with --worlds. */
START_TEST(cli_draws_the_last_state)
{
    char dir[] = "/tmp/clcone-mjpng-XXXXXX", png[64], args[8192], out[1 << 16], err[4096];
    png_image img;
    unsigned char *rgb;
    int blue = 0, red = 0;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(png, sizeof png, "%s/h.png", dir);
    snprintf(args, sizeof args, "mujoco %s --steps 50 --device ref --png %s --png-size 320x240",
             test_model_path("humanoid/humanoid.xml"), png);
    ck_assert_msg(test_run_cli(NULL, args, out, sizeof out, err, sizeof err) == 0, "%s", err);
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert_msg(png_image_begin_read_from_file(&img, png), "%s", img.message);
    ck_assert_int_eq(img.width, 320);
    ck_assert_int_eq(img.height, 240);
    img.format = PNG_FORMAT_RGB;
    rgb = malloc(PNG_IMAGE_SIZE(img));
    ck_assert_msg(png_image_finish_read(&img, NULL, rgb, 0, NULL), "%s", img.message);
    for (size_t i = 0; i < 320 * 240; ++i) {
        const unsigned char *c = rgb + 3 * i;
        blue += c[2] > 100 && c[2] > c[0] + 60;
        red += c[0] > 150 && c[0] > c[2] + 80 && c[1] < 120;
    }
    fprintf(stderr, "mujoco --png of the humanoid: %d blue and %d red pixels of 320 x 240\n", blue, red);
    ck_assert_int_gt(blue, 2000);
    ck_assert_int_gt(red, 10);
    free(rgb);
    snprintf(args, sizeof args, "mujoco %s --steps 1 --worlds 2 --png %s", test_model_path("humanoid/humanoid.xml"),
             png);
    ck_assert_int_eq(test_run_cli(NULL, args, out, sizeof out, err, sizeof err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--png records a run of one world"));
    unlink(png);
    rmdir(dir);
}
END_TEST

/* SIGTERM during a `clcone mujoco` run with --csv and --qpos: the run
 * stops after its step and exits 130, the log and the .npy (its header
 * counting them) hold the finished steps, over the old files, and no
 * temporary is left. The signal goes once a temporary is there: the
 * handlers are in before the outputs open. */
START_TEST(cli_signal_keeps_the_recorded_steps)
{
    char dir[] = "/tmp/clcone-mjsig-XXXXXX", cmd[8192], out[4096], csv[64], npy[64], *text, *shape;
    long rows = -1, nq = -1, lines = 0;
    size_t size;
    FILE *f;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/log.csv", dir);
    snprintf(npy, sizeof npy, "%s/q.npy", dir);
    ck_assert_ptr_nonnull(f = fopen(csv, "w"));
    fputs("an old log\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s mujoco %s --steps 100000000 --device ref --csv %s --qpos %s >/dev/null 2>&1 & p=$!; i=0; "
             "while ! ls %s | grep -q tmp && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done; sleep 0.2; "
             "kill -TERM $p; wait $p; echo rc=$?; ls %s",
             getenv("CLCONE_CLI"), test_model_path("humanoid/humanoid.xml"), csv, npy, dir, dir);
    test_sh(cmd, out, sizeof out, NULL, 0);
    ck_assert_msg(strstr(out, "rc=130") && !strstr(out, "tmp"), "%s", out);
    text = test_read_all(csv, &size);
    ck_assert_msg(strncmp(text, "step,time,", 10) == 0, "%.200s", text);
    for (size_t i = 0; i < size; ++i) lines += text[i] == '\n';
    free(text);
    text = test_read_all(npy, &size);
    ck_assert_ptr_nonnull(shape = strstr(text + 10, "'shape': ("));
    ck_assert_int_eq(sscanf(shape, "'shape': (%ld, %ld)", &rows, &nq), 2);
    ck_assert_int_ge(rows, 1);
    ck_assert_int_eq(rows, lines - 1);
    ck_assert_uint_eq(size, 128 + (size_t)rows * (size_t)nq * sizeof(double));
    free(text);
    unlink(csv);
    unlink(npy);
    rmdir(dir);
}
END_TEST

#endif

/* Without MuJoCo the suite is empty, saying so. */
Suite *suite_mujoco_traj(void)
{
    Suite *s = suite_create("mujoco_traj");
#ifdef CLCONE_MUJOCO
    TCase *tc = tcase_create("mujoco_traj");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, humanoid_follows_mujoco, 0, 2);
    tcase_add_loop_test(tc, dominos_follow_mujoco, 0, 2);
    tcase_add_test(tc, cli_keeps_the_trajectory);
    tcase_add_test(tc, cli_draws_the_last_state);
    tcase_add_test(tc, cli_signal_keeps_the_recorded_steps);
    suite_add_tcase(s, tc);
#else
    fprintf(stderr, "mujoco_traj suite: built without MuJoCo; nothing to test\n");
#endif
    return s;
}
