/* Worlds stepped together (clcone_sim_step_many, `simulate SCENE...`):
 * world k of a batch ends in the state it reaches stepped alone, to the
 * bit, on the device (its small steps one batch) and on the reference;
 * what cannot be one batch is refused with the world it names. */
#include "testutil.h"

#include <sys/stat.h>

enum { NWORLDS = 6, STEPS = 40 };

/* World k: piles of 3 to 12 spheres (as `gen pile --n N --seed S`) and a
 * stack of 4 boxes, lively enough that contacts come and go. */
static void world(int k, clcone_world *w)
{
    clcone_gen_params gp;
    clcone_error e;
    clcone_gen_params_default(&gp);
    gp.n = k == NWORLDS - 1 ? 4 : 3 + (k * 5) % 10;
    gp.seed = 7 + (unsigned)k;
    ck_assert_msg(clcone_world_generate(k == NWORLDS - 1 ? "stack" : "pile", &gp, w, &e) == CLCONE_OK, "%s", e.msg);
}

static clcone_sim *stepper(clcone_world *w, clcone_context *c, clcone_model m, int threads)
{
    clcone_sim_options so;
    clcone_sim *s;
    clcone_error e;
    clcone_sim_options_default(&so);
    so.solve.model = m;
    so.threads = so.solve.threads = threads;
    ck_assert_msg(clcone_sim_create(w, c, &so, &s, &e) == CLCONE_OK, "%s", e.msg);
    return s;
}

/* Positions and velocities of w's bodies equal b's, bit for bit. */
static void same_state(const clcone_world *a, const clcone_world *b, int k)
{
    ck_assert_int_eq(a->s.nbodies, b->s.nbodies);
    for (int i = 0; i < a->s.nbodies; ++i)
        ck_assert_msg(memcmp(a->s.bodies[i].x, b->s.bodies[i].x, sizeof a->s.bodies[i].x) == 0
                          && memcmp(a->s.bodies[i].v, b->s.bodies[i].v, sizeof a->s.bodies[i].v) == 0
                          && memcmp(a->shapes[i].quat, b->shapes[i].quat, sizeof a->shapes[i].quat) == 0,
                      "world %d body %d: the batch's state differs from the world's alone", k, i);
}

/* ccp (the stepper's default) and coulomb on a float device, ccp and
 * coulomb on the reference, the worlds' host parts (on the reference
 * their solves, on the device the batch's hand-overs) on 1 to 3 threads:
 * every world of the batch as alone on one, every step applied. */
START_TEST(worlds_batch_equals_each_alone)
{
    static const struct {
        int device;
        clcone_model m;
        int threads;
    } cases[] = {{1, CLCONE_MODEL_CCP, 1}, {1, CLCONE_MODEL_COULOMB, 3}, {0, CLCONE_MODEL_CCP, 2},
                 {0, CLCONE_MODEL_COULOMB, 3}};
    clcone_context *c = cases[_i].device ? test_context(CLCONE_FLOAT) : NULL;
    clcone_world wb[NWORLDS], wa[NWORLDS];
    clcone_sim *sb[NWORLDS], *sa[NWORLDS];
    clcone_step_info in[NWORLDS], one;
    clcone_error e;
    int joined = 0;
    for (int k = 0; k < NWORLDS; ++k) {
        world(k, &wb[k]);
        world(k, &wa[k]);
        sb[k] = stepper(&wb[k], c, cases[_i].m, cases[_i].threads);
        sa[k] = stepper(&wa[k], c, cases[_i].m, 1);
    }
    for (int t = 0; t < STEPS; ++t) {
        ck_assert_msg(clcone_sim_step_many(sb, NWORLDS, in, &e) == CLCONE_OK, "%s", e.msg);
        for (int k = 0; k < NWORLDS; ++k) {
            ck_assert_msg(clcone_sim_step(sa[k], &one, &e) == CLCONE_OK, "%s", e.msg);
            ck_assert(in[k].applied && one.applied);
            ck_assert_int_eq(in[k].step, t + 1);
            ck_assert_int_eq(in[k].contacts, one.contacts);
            ck_assert_int_eq(in[k].solve.iters, one.solve.iters);
            ck_assert_int_eq(in[k].solve.status, one.solve.status);
            joined += in[k].contacts > 0;
        }
    }
    ck_assert_msg(joined > NWORLDS * STEPS / 2, "only %d steps had contacts: livelier worlds", joined);
    /* the batch's device buffers are counted while its steppers live */
    ck_assert(cases[_i].device ? clcone_context_memory(c) > 0 : clcone_context_memory(c) == 0);
    for (int k = 0; k < NWORLDS; ++k) {
        same_state(&wb[k], &wa[k], k);
        clcone_sim_free(sb[k]);
        clcone_sim_free(sa[k]);
        clcone_world_free(&wb[k]);
        clcone_world_free(&wa[k]);
    }
    ck_assert_uint_eq(clcone_context_memory(c), 0);
    clcone_context_free(c);
}
END_TEST

/* One batch, one device, one set of options, each world once; a NULL
 * or an empty batch is refused, naming the world. */
START_TEST(worlds_batch_refuses_what_cannot_be_one)
{
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_world w[3];
    clcone_sim *s[3], *pair[2];
    clcone_step_info in[3];
    clcone_sim_options so;
    clcone_error e;
    for (int k = 0; k < 3; ++k) world(k, &w[k]);
    s[0] = stepper(&w[0], c, CLCONE_MODEL_CCP, 1);
    s[1] = stepper(&w[1], NULL, CLCONE_MODEL_CCP, 1);
    clcone_sim_options_default(&so);
    so.threads = CLCONE_SIM_THREADS + 1;
    ck_assert_int_eq(clcone_sim_create(&w[2], c, &so, &s[2], &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "threads 257"), "%s", e.msg);
    so.threads = 1;
    so.solve.tol = 1e-3;
    ck_assert_msg(clcone_sim_create(&w[2], c, &so, &s[2], &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(clcone_sim_step_many(s, 2, in, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "world 1") && strstr(e.msg, "device"), "%s", e.msg);
    pair[0] = s[0];
    pair[1] = s[2];
    ck_assert_int_eq(clcone_sim_step_many(pair, 2, in, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "world 1") && strstr(e.msg, "options"), "%s", e.msg);
    pair[1] = s[0];
    ck_assert_int_eq(clcone_sim_step_many(pair, 2, in, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "same world"), "%s", e.msg);
    pair[1] = NULL;
    ck_assert_int_eq(clcone_sim_step_many(pair, 2, in, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "world 1"), "%s", e.msg);
    ck_assert_int_eq(clcone_sim_step_many(s, 0, in, &e), CLCONE_EINVAL);
    ck_assert_int_eq(clcone_sim_step_many(NULL, 1, in, &e), CLCONE_EINVAL);
    /* nothing was stepped */
    ck_assert_int_eq(clcone_sim_step(s[0], &in[0], &e), CLCONE_OK);
    ck_assert_int_eq(in[0].step, 1);
    for (int k = 0; k < 3; ++k) {
        clcone_sim_free(s[k]);
        clcone_world_free(&w[k]);
    }
    clcone_context_free(c);
}
END_TEST

static char out_buf[1 << 16];

/* `simulate A B --out DIR` writes each world's final state as
 * `simulate A --out FILE` does alone, byte for byte, a line per world and
 * a CSV with a world column; the single-world outputs are refused. */
START_TEST(worlds_cli_matches_alone)
{
    char dir[] = "/tmp/clcone-worlds-XXXXXX", args[4096], *a, *b;
    size_t na, nb;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "gen pile --n 9 --seed 3 -o %s/a.scene && %s gen stack --n 3 -o %s/b.scene", dir,
             getenv("CLCONE_CLI") ? getenv("CLCONE_CLI") : "build/clcone", dir);
    ck_assert_int_eq(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0), 0);
    snprintf(args, sizeof args, "simulate %s/a.scene %s/b.scene --steps 30 --out %s/out --csv %s/log.csv", dir, dir,
             dir, dir);
    ck_assert_msg(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0) == 0, "%s", out_buf);
    ck_assert_msg(strstr(out_buf, "world 0: ") && strstr(out_buf, "world 1: ")
                      && strstr(test_last_line(out_buf), "status=converged"),
                  "%s", out_buf);
    snprintf(args, sizeof args, "simulate %s/a.scene --steps 30 --out %s/a-alone.scene", dir, dir);
    ck_assert_msg(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0) == 0, "%s", out_buf);
    snprintf(args, sizeof args, "%s/out/a.scene", dir);
    a = test_read_all(args, &na);
    snprintf(args, sizeof args, "%s/a-alone.scene", dir);
    b = test_read_all(args, &nb);
    ck_assert_msg(na == nb && memcmp(a, b, na) == 0, "world a of the batch differs from a alone");
    free(a);
    free(b);
    snprintf(args, sizeof args, "%s/log.csv", dir);
    a = test_read_all(args, &na);
    ck_assert_msg(strncmp(a, "world,step,contacts,", 20) == 0 && strstr(a, "\n1,30,"), "%.200s", a);
    free(a);
    snprintf(args, sizeof args, "simulate %s/a.scene %s/b.scene --steps 3 --png %s/x.png", dir, dir, dir);
    ck_assert_int_eq(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0), 2);
    ck_assert_msg(strstr(out_buf, "--png takes one SCENE"), "%s", out_buf);
    snprintf(args, sizeof args, "simulate %s/a.scene %s/a.scene --steps 3 --out %s/out2", dir, dir, dir);
    ck_assert_int_eq(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0), 2);
    ck_assert_msg(strstr(out_buf, "same name"), "%s", out_buf);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* Two boxes on the ground, sunk by `sink` at a time step of `dt`: soft's
 * a_ref reads both. */
static void write_sunk_stack(const char *path, double dt, double sink)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "clcone-scene 1\ndt %g\ngravity 0 0 -9.81\nmu 0.5\nbodies 2\n"
               "box 1 0.5 0.5 0.5 0 0 %g 1 0 0 0 0 0 0 0 0 0\nbox 1 0.5 0.5 0.5 0 0 %g 1 0 0 0 0 0 0 0 0 0\n"
               "planes 1\nplane 0 0 1 0\ncontacts 8\n",
            dt, 0.5 - sink, 1.5 - 2 * sink);
    for (int c = 0; c < 8; ++c)
        fprintf(f, "contact %d %d %g %g %g 0 0 1 0.5 %g\n", c / 4, c < 4 ? -1 : 0, c % 2 ? 0.5 : -0.5,
                c % 4 < 2 ? -0.5 : 0.5, c < 4 ? -sink : 1 - 2 * sink, -sink);
    fputs("end\n", f);
    fclose(f);
}

/* Soft scenes join a device batch with their own gaps and time steps
 * (a_ref reads both): each scene's forces in the batch are those of the
 * scene solved alone on the reference. */
START_TEST(worlds_soft_scenes_batch_with_their_own_terms)
{
    static const char *const devices[] = {"--device 0 --precision double", "--device ref"};
    char dir[] = "/tmp/clcone-worlds-XXXXXX", args[4096], path[4200];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.scene", dir);
    write_sunk_stack(path, 0.01, 0.01);
    snprintf(path, sizeof path, "%s/b.scene", dir);
    write_sunk_stack(path, 0.02, 0.002);
    snprintf(path, sizeof path, "%s/batch", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    for (int d = 0; d < 2; ++d) {
        snprintf(args, sizeof args, "solve %s/a.scene %s/b.scene --model soft %s --tol 1e-10 --out %s/batch", dir,
                 dir, devices[d], dir);
        ck_assert_msg(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0) == 0, "%s", out_buf);
        for (int k = 0; k < 2; ++k) {
            double ra[24], rb[24], big = 0, diff = 0;
            clcone_error e;
            snprintf(args, sizeof args, "solve %s/%c.scene --model soft --device ref --tol 1e-10 --out %s/alone.r",
                     dir, "ab"[k], dir);
            ck_assert_msg(test_run_cli(NULL, args, out_buf, sizeof out_buf, NULL, 0) == 0, "%s", out_buf);
            snprintf(path, sizeof path, "%s/alone.r", dir);
            ck_assert_msg(clcone_read_reactions(path, 8, ra, &e) == CLCONE_OK, "%s", e.msg);
            snprintf(path, sizeof path, "%s/batch/%c.scene.r", dir, "ab"[k]);
            ck_assert_msg(clcone_read_reactions(path, 8, rb, &e) == CLCONE_OK, "%s", e.msg);
            for (int i = 0; i < 24; ++i) {
                big = fmax(big, fabs(ra[i]));
                diff = fmax(diff, fabs(ra[i] - rb[i]));
            }
            ck_assert_msg(big > 0 && diff <= 1e-7 * big, "%c.scene %s: batch and alone differ by %g of %g", "ab"[k],
                          devices[d], diff, big);
        }
    }
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

Suite *suite_worlds(void)
{
    Suite *s = suite_create("worlds");
    TCase *t = tcase_create("worlds");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, worlds_batch_equals_each_alone, 0, 4);
    tcase_add_test(t, worlds_batch_refuses_what_cannot_be_one);
    tcase_add_test(t, worlds_cli_matches_alone);
    tcase_add_test(t, worlds_soft_scenes_batch_with_their_own_terms);
    suite_add_tcase(s, t);
    return s;
}
