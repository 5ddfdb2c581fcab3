/* Files a user hands clcone and files it writes: damaged program-cache
 * entries, values the float device cannot carry, output files that are
 * links or special files, input from pipes, and scene values found bad
 * only after reading; through the library and through the CLI. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "opencl/opencl.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

/* ---- program cache ---- */

static char cache_dir[] = "/tmp/clcone-cache-XXXXXX";

static void use_fresh_cache(void)
{
    ck_assert_ptr_nonnull(mkdtemp(cache_dir));
    setenv("CLCONE_CACHE_DIR", cache_dir, 1);
}

static void drop_cache(void)
{
    test_remove_dir(cache_dir);
    unsetenv("CLCONE_CACHE_DIR");
}

/* A flipped byte inside the stored binary (header intact) never reaches
 * the driver, which trusts it and crashed on it: the entry is rebuilt,
 * replaced, and serves again. */
START_TEST(cache_damaged_binary_rebuilt)
{
    clcone_context *c;
    char entry[4096];
    struct stat st;
    int fd;
    unsigned char b;
    use_fresh_cache();
    c = test_context_built(CLCONE_FLOAT);
    ck_assert_int_eq(c->cache_hit, 0);
    snprintf(entry, sizeof entry, "%s", c->cache_path);
    clcone_context_free(c);
    ck_assert_int_eq(stat(entry, &st), 0);
    fd = open(entry, O_RDWR);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, &b, 1, st.st_size / 2), 1);
    b ^= 0x5a;
    ck_assert_int_eq(pwrite(fd, &b, 1, st.st_size / 2), 1);
    close(fd);
    c = test_context_built(CLCONE_FLOAT);
    ck_assert_int_eq(c->cache_hit, 0);
    clcone_context_free(c);
    c = test_context_built(CLCONE_FLOAT);
    ck_assert_int_eq(c->cache_hit, 1);
    clcone_context_free(c);
    drop_cache();
}
END_TEST

/* A FIFO where the entry should be made the process wait forever for a
 * writer; now it is not opened, and a regular entry replaces it. */
START_TEST(cache_fifo_entry_replaced)
{
    clcone_context *c;
    char entry[4096];
    struct stat st;
    use_fresh_cache();
    c = test_context_built(CLCONE_FLOAT);
    snprintf(entry, sizeof entry, "%s", c->cache_path);
    clcone_context_free(c);
    ck_assert_int_eq(unlink(entry), 0);
    ck_assert_int_eq(mkfifo(entry, 0600), 0);
    c = test_context_built(CLCONE_FLOAT);
    ck_assert_int_eq(c->cache_hit, 0);
    clcone_context_free(c);
    ck_assert_int_eq(stat(entry, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    drop_cache();
}
END_TEST

/* ---- values outside float's range ---- */

/* One contact, W = w I, q = (qn, 0, 0), friction mu. */
static void one_contact(clcone_problem *p, double w, double qn, double mu)
{
    double W[9] = {w, 0, 0, 0, w, 0, 0, 0, w}, q[3] = {qn, 0, 0};
    clcone_error e;
    ck_assert_msg(clcone_problem_from_dense(p, 1, W, q, &mu, &e) == CLCONE_OK, "%s", e.msg);
}

static void assert_float_refuses(const clcone_problem *p, const char *needle)
{
    clcone_context *c = test_context_built(CLCONE_FLOAT);
    clcone_options o;
    clcone_result res;
    clcone_error e = {0};
    double r[3] = {0, 0, 0};
    clcone_options_default(&o);
    ck_assert_int_eq(clcone_solve(c, p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, needle) && strstr(e.msg, "outside float range"), "'%s' lacks '%s'", e.msg, needle);
    /* the reference, in double, has no such limit */
    ck_assert_int_eq(clcone_solve(NULL, p, &o, r, &res, &e), CLCONE_OK);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    clcone_result_free(&res);
    clcone_context_free(c);
}

START_TEST(float_range_refused_at_upload)
{
    clcone_problem p;
    one_contact(&p, 1e-50, 0, 0.5);
    assert_float_refuses(&p, "W block 0 entry 0: 1e-50");
    clcone_problem_free(&p);
    one_contact(&p, 1, -1, 1e300);
    assert_float_refuses(&p, "mu of contact 0: 1e+300");
    clcone_problem_free(&p);
}
END_TEST

/* An entry far below the others of its array is below float's rounding
 * of them: it may flush to zero, and the solve goes on. */
START_TEST(float_range_tiny_beside_large_accepted)
{
    double W[9] = {2, 1e-50, 0, 1e-50, 2, 0, 0, 0, 2}, q[3] = {-1, 0, 0}, mu = 0.5, r[3] = {0, 0, 0};
    clcone_problem p;
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_options o;
    clcone_result res;
    clcone_error e;
    ck_assert(clcone_problem_from_dense(&p, 1, W, q, &mu, &e) == CLCONE_OK);
    clcone_options_default(&o);
    ck_assert_msg(clcone_solve(c, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    clcone_result_free(&res);
    clcone_problem_free(&p);
    clcone_context_free(c);
}
END_TEST

/* Two coupled contacts, W = [2I I; I 2I], q = s (-1, 0.3, 0, -0.5, 0, 0.2). */
static void coupled_pair(clcone_problem *p, double s)
{
    double W[36] = {0}, q[6] = {-s, 0.3 * s, 0, -0.5 * s, 0, 0.2 * s}, mu[2] = {0.5, 0.3};
    clcone_error e;
    for (int i = 0; i < 6; ++i) {
        W[7 * i] = 2;
        W[6 * i + (i + 3) % 6] = 1;
    }
    ck_assert_msg(clcone_problem_from_dense(p, 2, W, q, mu, &e) == CLCONE_OK, "%s", e.msg);
}

/* The error measure squares and sums q, r and u: where that sum overflows
 * the measuring precision it measured nothing (F / inf = 0), and apgd in
 * float called a wrong answer (double error 0.24) converged. Such a q is
 * refused by name; at half the exponent both precisions still solve it. */
START_TEST(squared_norms_overflow_refused)
{
    static const clcone_solver solvers[] = {CLCONE_SOLVER_DEFAULT, CLCONE_SOLVER_APGD, CLCONE_SOLVER_CGS};
    clcone_context *cf = test_context_built(CLCONE_FLOAT), *cd = test_context_built(CLCONE_DOUBLE);
    clcone_problem p;
    clcone_options o;
    clcone_result res;
    clcone_error e = {0};
    double r[6];
    clcone_options_default(&o);
    coupled_pair(&p, 1e20);
    for (size_t k = 0; k < sizeof solvers / sizeof *solvers; ++k) {
        o.solver = solvers[k];
        ck_assert_int_eq(clcone_solve(cf, &p, &o, r, &res, &e), CLCONE_EINVAL);
        ck_assert_msg(strstr(e.msg, "sum of squares overflows float") && strstr(e.msg, "solve in double"), "%s",
                      e.msg);
    }
    o.solver = CLCONE_SOLVER_DEFAULT;
    ck_assert_msg(clcone_solve(cd, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    ck_assert(clcone_error_coulomb(&p, r, 0, 2, NULL) <= o.tol);
    clcone_result_free(&res);
    clcone_problem_free(&p);
    coupled_pair(&p, 1e200);
    ck_assert_int_eq(clcone_problem_validate(&p, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "q entries up to 1e+200: their sum of squares overflows double"), "%s", e.msg);
    ck_assert_int_eq(clcone_solve(NULL, &p, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_int_eq(clcone_solve(cd, &p, &o, r, &res, &e), CLCONE_EINVAL);
    clcone_problem_free(&p);
    /* a measure whose scale overflowed is NaN (diverged), never 0 */
    ck_assert(isnan(clc_scaled_error(1.0, INFINITY, 1.0, 1.0)));
    ck_assert(isnan(clc_scaled_error(1.0, 1.0, 1.0, INFINITY)));
    ck_assert(clc_scaled_error(4.0, 1.0, 16.0, 1.0) == 0.5);
    clcone_context_free(cf);
    clcone_context_free(cd);
}
END_TEST

#define HDR "clcone-scene 1\ndt 0.01\ngravity 0 0 -9.81\nmu 0.5\n"
#define TAIL "planes 1\nplane 0 0 1 0\ncontacts 1\ncontact 0 -1 0 0 0 0 0 1 0.5 0\nend\n"
#define HEAVY HDR "bodies 1\nsphere 1e308 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL

START_TEST(float_range_scene_mass)
{
    const char *path = test_write_temp(HEAVY, strlen(HEAVY));
    clcone_world w;
    clcone_scene s;
    clcone_context *c = test_context(CLCONE_FLOAT);
    clcone_options o;
    clcone_result res;
    clcone_error e = {0};
    double r[3] = {0, 0, 0};
    ck_assert_msg(clcone_read_world(path, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert(clcone_world_contact_scene(&w, &s, &e) == CLCONE_OK);
    clcone_options_default(&o);
    ck_assert_int_eq(clcone_solve_scene(c, &s, &o, r, &res, &e), CLCONE_EINVAL);
    /* the first array uploaded that carries 1 / mass names it: the hybrid
     * solves a scene within 512 contacts in its local form, W's block of
     * contact 0 */
    ck_assert_msg(strstr(e.msg, "W block 0 entry 0: 1e-308 is outside float range"), "%s", e.msg);
    o.solver = CLCONE_SOLVER_CGS; /* the body form's arrays */
    ck_assert_int_eq(clcone_solve_scene(c, &s, &o, r, &res, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "of body 0: 1e-308 is outside float range")
                      || strstr(e.msg, "of contact 0 entry 0: 1e-308 is outside float range"),
                  "%s", e.msg);
    clcone_scene_free(&s);
    clcone_world_free(&w);
    clcone_context_free(c);
    unlink(path);
}
END_TEST

/* ---- output files ---- */

static char out_dir[] = "/tmp/clcone-out-XXXXXX";

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", out_dir, name);
}

static void write_r(const char *path)
{
    double r[3] = {1, 2, 3};
    clcone_error e;
    ck_assert_msg(clcone_write_reactions(path, 1, r, &e) == CLCONE_OK, "%s", e.msg);
}

/* A link stays a link (its target gets the output); a special file is
 * written through, never replaced by a regular file. */
START_TEST(output_through_links_and_devices)
{
    char target[256], link[256], devlink[256];
    struct stat st;
    double r[3];
    clcone_error e;
    ck_assert_ptr_nonnull(mkdtemp(out_dir));
    path_in(target, sizeof target, "target.txt");
    path_in(link, sizeof link, "link.txt");
    path_in(devlink, sizeof devlink, "null.txt");
    write_r(target);
    ck_assert_int_eq(symlink("target.txt", link), 0);
    ck_assert_int_eq(symlink("/dev/null", devlink), 0);
    write_r(link);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(clcone_read_reactions(link, 1, r, &e), CLCONE_OK);
    ck_assert_double_eq(r[2], 3);
    write_r(devlink);
    ck_assert_int_eq(lstat(devlink, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    unlink(link);
    unlink(devlink);
    unlink(target);
    rmdir(out_dir);
}
END_TEST

/* A new file follows the umask (it was always 0600); a replaced one keeps
 * its mode. */
START_TEST(output_mode_follows_umask)
{
    char path[256];
    struct stat st;
    mode_t old = umask(027);
    ck_assert_ptr_nonnull(mkdtemp(out_dir));
    path_in(path, sizeof path, "r.txt");
    write_r(path);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    ck_assert_int_eq(chmod(path, 0604), 0);
    write_r(path);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0604);
    umask(old);
    unlink(path);
    rmdir(out_dir);
}
END_TEST

/* ---- input from pipes ---- */

/* The read end of a pipe, as a path, with a child writing `len` bytes of
 * text into it (more than a pipe buffer holds, for the HDF5 file). */
static void pipe_of(const char *text, size_t len, char *path, size_t cap, pid_t *child)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    *child = fork();
    ck_assert_int_ge(*child, 0);
    if (*child == 0) {
        close(fd[0]);
        for (size_t off = 0; off < len;) {
            ssize_t n = write(fd[1], text + off, len - off);
            if (n <= 0) _exit(1);
            off += (size_t)n;
        }
        _exit(0);
    }
    close(fd[1]);
    snprintf(path, cap, "/dev/fd/%d", fd[0]);
}

static void pipe_done(const char *path, pid_t child)
{
    close(atoi(path + strlen("/dev/fd/")));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

/* A device that never ends (/dev/zero, /dev/urandom) is refused at its
 * first NUL byte, not read until memory runs out; by every reader. */
START_TEST(endless_devices_refused)
{
    static const char *const dev[] = {"/dev/zero", "/dev/urandom"};
    for (int k = 0; k < 2; ++k) {
        clcone_problem p;
        clcone_input in;
        clcone_error e;
        double r[3];
        ck_assert_int_eq(clcone_read_problem(dev[k], &p, &e), CLCONE_EFORMAT);
        ck_assert_msg(strstr(e.msg, dev[k]) && strstr(e.msg, "is NUL: not a text file"), "%s", e.msg);
        ck_assert_int_eq(clcone_read_reactions(dev[k], 1, r, &e), CLCONE_EFORMAT);
        ck_assert_msg(strstr(e.msg, "is NUL: not a text file"), "%s", e.msg);
        ck_assert_int_eq(clcone_read_input(dev[k], &in, &e), CLCONE_EFORMAT);
        ck_assert_msg(strstr(e.msg, "is NUL: not a text file"), "%s", e.msg);
    }
}
END_TEST

/* The format sniffing used to consume the stream and then find it empty. */
START_TEST(input_from_pipe)
{
    static const char *const files[] = {"Rover4396.dat", "Capsules-i125-1213.hdf5"};
    static const char scene[] = "# a comment first\n\n" HDR "bodies 1\nsphere 1 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL;
    char path[64];
    pid_t child;
    clcone_error e;
    for (int k = 0; k < 2; ++k) {
        size_t len;
        char *text = test_read_all(test_problem_path(files[k]), &len);
        clcone_problem a, b;
        ck_assert_msg(clcone_read_problem_hdf5(test_problem_path(files[k]), &a, &e) == CLCONE_OK, "%s", e.msg);
        pipe_of(text, len, path, sizeof path, &child);
        ck_assert_msg(clcone_read_problem_hdf5(path, &b, &e) == CLCONE_OK, "%s: %s", files[k], e.msg);
        pipe_done(path, child);
        ck_assert_int_eq(a.n, b.n);
        ck_assert_int_eq(a.nnzb, b.nnzb);
        ck_assert_int_eq(memcmp(a.blocks, b.blocks, 9 * sizeof(double) * (size_t)a.nnzb), 0);
        ck_assert_int_eq(memcmp(a.q, b.q, 3 * sizeof(double) * (size_t)a.n), 0);
        clcone_problem_free(&a);
        clcone_problem_free(&b);
        free(text);
    }
    {
        clcone_input in;
        pipe_of(scene, strlen(scene), path, sizeof path, &child);
        ck_assert_msg(clcone_read_input(path, &in, &e) == CLCONE_OK, "%s", e.msg);
        pipe_done(path, child);
        ck_assert_int_eq(in.is_world, 1);
        ck_assert_int_eq(in.world.s.nbodies, 1);
        ck_assert_int_eq(in.world.s.ncontacts, 1);
        clcone_input_free(&in);
    }
    {
        double r[3];
        pipe_of("# r\n1 2 3\n", 10, path, sizeof path, &child);
        ck_assert_msg(clcone_read_reactions(path, 1, r, &e) == CLCONE_OK, "%s", e.msg);
        pipe_done(path, child);
        ck_assert_double_eq(r[1], 2);
    }
}
END_TEST

/* ---- scene values ---- */

START_TEST(scene_subnormal_is_a_number)
{
    static const char text[] = HDR "bodies 1\nsphere 1 0.5 1e-310 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL;
    const char *path = test_write_temp(text, strlen(text));
    clcone_world w;
    clcone_error e;
    ck_assert_msg(clcone_read_world(path, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_double_eq(w.s.bodies[0].x[0], 1e-310);
    clcone_world_free(&w);
    unlink(path);
}
END_TEST

/* v + dt g overflows: named at the body's line, not later by the solve
 * as "body 0: free velocity is not finite" with neither file nor line. */
START_TEST(scene_free_velocity_overflow_named)
{
    static const char text[] = "clcone-scene 1\ndt 10\ngravity 0 0 -1e308\nmu 0.5\n"
                               "bodies 1\nsphere 1 0.5 0 0 0.5 1 0 0 0 0 0 -1e308 0 0 0\n" TAIL;
    const char *path = test_write_temp(text, strlen(text));
    char where[96];
    clcone_world w;
    clcone_error e;
    ck_assert_int_eq(clcone_read_world(path, &w, &e), CLCONE_EFORMAT);
    snprintf(where, sizeof where, "%s:6:", path);
    ck_assert_msg(strstr(e.msg, where) && strstr(e.msg, "free velocity"), "%s", e.msg);
    unlink(path);
}
END_TEST

/* The scene format's example (docs/formats.md section 9) has comments after the values; a byte
 * order mark that an editor put in front does not make it a .dat. */
START_TEST(scene_inline_comments_and_bom)
{
    static const char text[] = "\xef\xbb\xbf" "clcone-scene 1   # made by hand\ndt 0.01   # time step\n"
                               "gravity 0 0 -9.81\nmu 0.5 # default friction\nbodies 1\n"
                               "sphere 1 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\t# a ball\n" TAIL;
    const char *path = test_write_temp(text, strlen(text));
    clcone_input in;
    clcone_error e;
    ck_assert_msg(clcone_read_input(path, &in, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(in.is_world, 1);
    ck_assert_double_eq(in.world.dt, 0.01);
    ck_assert_double_eq(in.world.mu, 0.5);
    ck_assert_int_eq(in.world.s.nbodies, 1);
    clcone_input_free(&in);
    unlink(path);
}
END_TEST

/* Lengths past the scene bound (1e8) are refused at their line, naming
 * the body, contact or plane, not later as a W or an energy that is not
 * a number. */
START_TEST(scene_lengths_bounded)
{
    static const struct {
        const char *text, *line, *item;
    } cases[] = {
        {HDR "bodies 1\nsphere 1 0.5 1e300 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL, ":6:", "body 0: position 1e300"},
        {HDR "bodies 1\nbox 1 1e300 0.5 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL, ":6:", "body 0: size 1e300"},
        {HDR "bodies 1\nsphere 1e300 1e5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\n" TAIL, ":6:", "body 0: mass 1e300"},
        {HDR "bodies 1\nsphere 1 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\nplanes 1\nplane 0 0 1 -2e8\n", ":8:",
         "plane 0: offset -2e8"},
        {HDR "bodies 1\nsphere 1 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\nplanes 0\ncontacts 1\n"
             "contact 0 -1 0 1e9 0 0 0 1 0.5 0\nend\n",
         ":9:", "contact 0: point 1e9"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const char *path = test_write_temp(cases[k].text, strlen(cases[k].text));
        char where[96];
        clcone_world w;
        clcone_error e;
        ck_assert_int_eq(clcone_read_world(path, &w, &e), CLCONE_EFORMAT);
        snprintf(where, sizeof where, "%s%s", path, cases[k].line);
        ck_assert_msg(strstr(e.msg, where) && strstr(e.msg, cases[k].item), "case %zu: %s", k, e.msg);
        unlink(path);
    }
}
END_TEST

/* ---- generator sizes ---- */

/* Sizes that ask for gigabytes (or overflowed: grid n^3 in long long) are
 * refused before anything is allocated, naming the limit. */
START_TEST(generator_sizes_limited)
{
    static const struct {
        const char *name;
        int n;
    } big[] = {{"grid", 2147483647}, {"wall", 20000}, {"pile", 1000001}, {"stack", 1000001}};
    clcone_gen_params p;
    clcone_world w;
    clcone_error e;
    clcone_scene s;
    clcone_gen_params_default(&p);
    for (size_t k = 0; k < sizeof big / sizeof big[0]; ++k) {
        p.n = big[k].n;
        ck_assert_int_eq(clcone_world_generate(big[k].name, &p, &w, &e), CLCONE_EINVAL);
        ck_assert_msg(strstr(e.msg, big[k].name) && strstr(e.msg, "at most 1000000 bodies"), "%s", e.msg);
        ck_assert_ptr_null(w.s.bodies);
    }
    ck_assert_int_eq(clc_gen_grid(2147483647, 2147483647, 0.5, 0.01, &s, &e), CLCONE_EINVAL);
    ck_assert_ptr_null(s.bodies);
    p.n = 101;                                 /* 101^3 = 1030301 */
    ck_assert_int_eq(clcone_world_generate("grid", &p, &w, &e), CLCONE_EINVAL);
    p.n = 3;
    ck_assert_msg(clcone_world_generate("wall", &p, &w, &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
}
END_TEST

/* ---- the command line ---- */

static char out_buf[1 << 16], err_buf[1 << 14];

static int run_cli(const char *args)
{
    return test_run_cli(NULL, args, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

static const char *last_line(void)
{
    return test_last_line(out_buf);
}

/* `clcone solve` on a FIFO fed once, as from `cat FILE |`. */
START_TEST(cli_solve_from_fifo)
{
    char fifo[64], args[256];
    size_t len;
    char *text = test_read_all(test_problem_path("Rover4396.dat"), &len);
    pid_t child;
    ck_assert_ptr_nonnull(mkdtemp(out_dir));
    snprintf(fifo, sizeof fifo, "%s/in", out_dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int fd = open(fifo, O_WRONLY);
        if (fd < 0 || write(fd, text, len) != (ssize_t)len) _exit(1);
        _exit(0);
    }
    snprintf(args, sizeof args, "solve %s --device ref", fifo);
    ck_assert_int_eq(run_cli(args), 0);
    ck_assert_msg(strncmp(last_line(), "status=converged ", 17) == 0, "%s | %s", last_line(), err_buf);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    unlink(fifo);
    rmdir(out_dir);
    free(text);
}
END_TEST

/* A value the float device cannot carry: exit 2, no result line, and the
 * message names the file, the array, the index and the value. */
START_TEST(cli_float_range_names_file)
{
    static const char dat[] = "3\n1\n0\n3\n3\n3\n3\n1e-50 0 0 0 1e-50 0 0 0 1e-50\n0 0 0\n0.5\n";
    const char *path = test_write_temp(dat, strlen(dat));
    char args[256], want[128];
    snprintf(args, sizeof args, "solve %s --precision float", path);
    ck_assert_int_eq(run_cli(args), 2);
    snprintf(want, sizeof want, "%s: W block 0 entry 0: 1e-50 is outside float range", path);
    ck_assert_msg(strstr(err_buf, want), "%s", err_buf);
    ck_assert_ptr_null(strstr(out_buf, "status="));
    unlink(path);
}
END_TEST

/* An error found while stepping a scene file names the file and the step:
 * a sphere whose mass float cannot hold, on a float device. */
START_TEST(cli_simulate_step_error_names_file)
{
    static const char scene[] = "clcone-scene 1\ndt 0.01\ngravity 0 0 -9.81\nmu 0.5\nbodies 1\n"
                                "sphere 1e300 0.5 0 0 0.5 1 0 0 0 0 0 0 0 0 0\nplanes 1\nplane 0 0 1 0\n"
                                "contacts 0\nend\n";
    const char *path = test_write_temp(scene, strlen(scene));
    char args[512], want[512];
    snprintf(args, sizeof args, "simulate %s --steps 2 --precision float", path);
    ck_assert_int_eq(run_cli(args), 2);
    snprintf(want, sizeof want, "%s: step 1: ", path);
    ck_assert_msg(strstr(err_buf, want) && strstr(err_buf, "outside float range"), "%s", err_buf);
    ck_assert_ptr_null(strstr(out_buf, "status="));
    unlink(path);
}
END_TEST

/* A link loop is an error, not replaced by a regular file; a dangling
 * link creates its target and stays a link; the CLI refuses a loop before
 * it solves anything. */
START_TEST(output_link_loop_and_dangling_link)
{
    char l1[256], l2[256], dangling[256], target[256], args[1024];
    struct stat st;
    double r[3] = {1, 2, 3}, back[3];
    clcone_error e;
    ck_assert_ptr_nonnull(mkdtemp(out_dir));
    path_in(l1, sizeof l1, "L1");
    path_in(l2, sizeof l2, "L2");
    path_in(dangling, sizeof dangling, "dangling.txt");
    path_in(target, sizeof target, "target.txt");
    ck_assert_int_eq(symlink("L2", l1), 0);
    ck_assert_int_eq(symlink("L1", l2), 0);
    ck_assert_int_eq(clcone_write_reactions(l1, 1, r, &e), CLCONE_EIO);
    ck_assert_msg(strstr(e.msg, l1) && strstr(e.msg, "symbolic links"), "%s", e.msg);
    ck_assert_int_eq(lstat(l1, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    snprintf(args, sizeof args, "solve '%s' --device ref --out %s", test_problem_path("Rover4396.dat"), l1);
    ck_assert_int_eq(run_cli(args), 2);
    ck_assert_msg(strstr(err_buf, "symbolic links") && !strstr(out_buf, "status="), "%s%s", out_buf, err_buf);
    snprintf(args, sizeof args, "gen stack --n 2 -o %s", l2);
    ck_assert_int_eq(run_cli(args), 2);
    ck_assert_int_eq(lstat(l2, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));

    ck_assert_int_eq(symlink("target.txt", dangling), 0);
    ck_assert_msg(clcone_write_reactions(dangling, 1, r, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(lstat(dangling, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(clcone_read_reactions(target, 1, back, &e), CLCONE_OK);
    ck_assert_double_eq(back[2], 3);
    unlink(l1);
    unlink(l2);
    unlink(dangling);
    unlink(target);
    ck_assert_int_eq(rmdir(out_dir), 0);
}
END_TEST

/* The CSV log replaces an old one only when the run gets to the end: a run
 * that fails (here, refused for its --out before the first step) leaves
 * the old log whole. */
START_TEST(cli_csv_kept_when_run_fails)
{
    char scene[256], csv[256], args[1024], got[256];
    FILE *f;
    ck_assert_ptr_nonnull(mkdtemp(out_dir));
    path_in(scene, sizeof scene, "stack.scene");
    path_in(csv, sizeof csv, "log.csv");
    snprintf(args, sizeof args, "gen stack --n 2 -o %s", scene);
    ck_assert_int_eq(run_cli(args), 0);
    f = fopen(csv, "w");
    fputs("old log\n", f);
    fclose(f);
    snprintf(args, sizeof args, "simulate %s --steps 2 --device ref --csv %s --out %s/no/such/dir/x.scene", scene,
             csv, out_dir);
    ck_assert_int_eq(run_cli(args), 2);
    test_slurp(csv, got, sizeof got);
    ck_assert_str_eq(got, "old log\n");
    snprintf(args, sizeof args, "simulate %s --steps 2 --device ref --csv %s", scene, csv);
    ck_assert_int_eq(run_cli(args), 0);
    ck_assert_msg(strncmp(last_line(), "status=converged ", 17) == 0, "%s", last_line());
    test_slurp(csv, got, sizeof got);
    ck_assert_msg(strncmp(got, "step,", 5) == 0, "%s", got);
    unlink(csv);
    unlink(scene);
    rmdir(out_dir);
}
END_TEST

Suite *suite_files(void)
{
    Suite *s = suite_create("files");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, cache_damaged_binary_rebuilt);
    tcase_add_test(t, cache_fifo_entry_replaced);
    tcase_add_test(t, float_range_refused_at_upload);
    tcase_add_test(t, float_range_tiny_beside_large_accepted);
    tcase_add_test(t, float_range_scene_mass);
    tcase_add_test(t, squared_norms_overflow_refused);
    tcase_add_test(t, output_through_links_and_devices);
    tcase_add_test(t, output_mode_follows_umask);
    tcase_add_test(t, output_link_loop_and_dangling_link);
    tcase_add_test(t, scene_inline_comments_and_bom);
    tcase_add_test(t, scene_lengths_bounded);
    tcase_add_test(t, input_from_pipe);
    tcase_add_test(t, endless_devices_refused);
    tcase_add_test(t, scene_subnormal_is_a_number);
    tcase_add_test(t, scene_free_velocity_overflow_named);
    tcase_add_test(t, generator_sizes_limited);
    tcase_add_test(t, cli_solve_from_fifo);
    tcase_add_test(t, cli_float_range_names_file);
    tcase_add_test(t, cli_csv_kept_when_run_fails);
    tcase_add_test(t, cli_simulate_step_error_names_file);
    suite_add_tcase(s, t);
    return s;
}
