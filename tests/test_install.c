/* The library as another C project adopts it: `make install` into a
 * staging tree, the example built there with pkg-config alone and run
 * against the installed shared library. $CLCONE_ROOT (the repository) and
 * $CLCONE_BUILD (the build folder) come from the Makefile's test targets,
 * $CLCONE_EXAMPLE_FLAGS carries the sanitizer flags of `make sanitize`. */
#include "testutil.h"

#include <string.h>

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* Removes a test's temporary folder. */
static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(install_then_build_example_with_pkg_config)
{
    static char out[1 << 16];
    const char *root = env_or("CLCONE_ROOT", "."), *build = env_or("CLCONE_BUILD", "build");
    const char *flags = env_or("CLCONE_EXAMPLE_FLAGS", "");
    char dir[] = "/tmp/clcone-install-XXXXXX", cmd[8192], pc[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(pc, sizeof pc, "PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_LIBDIR=%s/usr/lib/pkgconfig", dir, dir);

    /* MAKEFLAGS cleared: the outer make's jobserver is not ours */
    snprintf(cmd, sizeof cmd, "MAKEFLAGS= make -s -C '%s' BUILD='%s' install DESTDIR=%s PREFIX=/usr", root, build,
             dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    snprintf(cmd, sizeof cmd, "readelf -d %s/usr/lib/libclcone.so | grep SONAME", dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0 && strstr(out, "[libclcone.so.0]"), "%s", out);
    /* only the public API is exported */
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/usr/lib/libclcone.so | awk '$3 !~ /^clcone_/'", dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, NULL, 0), 0);
    ck_assert_msg(out[0] == 0, "exported beyond clcone_: %s", out);
    /* a static link sees every global symbol: they too keep to clcone_ and clc_
     * (but for the sanitizers' own, __asan_ and __odr_asan., in a
     * sanitized build) */
    snprintf(cmd, sizeof cmd,
             "nm -g --defined-only %s/usr/lib/libclcone.a | awk 'NF == 3 && $3 !~ /^(clcone_|clc_|__odr_asan[._]|__asan_)/'",
             dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, NULL, 0), 0);
    ck_assert_msg(out[0] == 0, "global beyond clcone_ and clc_ in libclcone.a: %s", out);
    snprintf(cmd, sizeof cmd, "%s pkg-config --modversion clcone", pc);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0 && strcmp(out, CLCONE_VERSION "\n") == 0, "%s",
                  out);

    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -Wall -Wextra -Werror %s '%s/examples/box_and_pile.c' $(%s pkg-config --cflags --libs clcone)"
             " -lm -o %s/box_and_pile",
             flags, root, pc, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    /* run against the installed shared library, nothing else */
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/usr/lib ldd %s/box_and_pile | grep libclcone", dir, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0 && strstr(out, dir), "%s", out);
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/usr/lib %s/box_and_pile", dir, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s", out);
    ck_assert_msg(strstr(out, "clcone " CLCONE_VERSION " (header " CLCONE_VERSION ")"), "%s", out);
    ck_assert_msg(strstr(out, "a box on the ground: 1 bodies, 4 contacts"), "%s", out);
    ck_assert_msg(strstr(out, "a pile of spheres in a box: 40 bodies"), "%s", out);
    {
        int conv = 0;
        for (const char *p = out; (p = strstr(p, " converged after ")); ++p) ++conv;
        ck_assert_msg(conv == 4, "%s", out);
    }

    remove_tree(dir);
}
END_TEST

/* Every public header compiles alone as C99 with -pedantic (a C99 program
 * may adopt them), included as <clcone/x.h> beside a user's own headers of
 * the same bare names, which must not be taken for the library's. */
START_TEST(public_headers_alone_c99_pedantic_beside_user_headers)
{
    static char out[1 << 16];
    const char *root = env_or("CLCONE_ROOT", ".");
    char dir[] = "/tmp/clcone-headers-XXXXXX", cmd[8192];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cd '%s/include/clcone' && n=0 && for h in *.h; do"
             " printf '#error the user header %%s was included\n' $h > %s/$h;"
             " printf '#include <clcone/%%s>\nint main(void) { return 0; }\n' $h > %s/use.c;"
             " cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I%s -I'%s/include' %s/use.c || exit 1;"
             " n=$((n + 1)); done; echo $n headers",
             root, dir, dir, dir, root, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    ck_assert_msg(strstr(out, " headers") && atoi(out) >= 11, "%s", out);
    remove_tree(dir);
}
END_TEST

/* `make install PREFIX=P` into a fresh prefix, then tests/install-check.sh:
 * nothing installed names the build tree or the clone, and with the build
 * folder moved aside the installed clcone (--version, solve, mujoco),
 * clcone-mpi where Open MPI is installed, a program on clcone-output.pc
 * and README.md's C example built with README.md's own pkg-config line
 * run. The script runs in a session
 * of its own (setsid) and moves the build folder back on every exit: a
 * timeout here kills this process group, not the script. */
START_TEST(installed_prefix_runs_without_the_build_tree)
{
    static char out[1 << 16];
    const char *root = env_or("CLCONE_ROOT", "."), *build = env_or("CLCONE_BUILD", "build");
    char dir[] = "/tmp/clcone-prefix-XXXXXX", cmd[8192];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "MAKEFLAGS= make -s -C '%s' BUILD='%s' install PREFIX=%s", root, build, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    snprintf(cmd, sizeof cmd, "cd '%s' && setsid -w bash tests/install-check.sh %s '%s'", root, dir, build);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    snprintf(cmd, sizeof cmd, "%s/clcone", build);
    ck_assert_msg(access(cmd, X_OK) == 0, "the build folder %s is not back:\n%s", build, out);
    ck_assert_msg(strstr(out, "moved ") && strstr(out, "installed clcone --version: clcone " CLCONE_VERSION "\n")
                      && strstr(out, "installed clcone solve: status=converged") && strstr(out, "installed clcone mujoco")
                      && strstr(out, "README.md's example ran: converged: r = (")
                      && strstr(out, "installed libclcone.so needs no cairo or HDF5")
                      && strstr(out, "clcone-output.pc read HDF5 and drew a plot"),
                  "%s", out);
    remove_tree(dir);
}
END_TEST

/* A MuJoCo older than the adapter compiles against (Debian bookworm's
 * libmujoco-dev is 2.2.2) is left out of the build with a message naming
 * it, not a failed build: a mujoco.h saying 222 (and refusing to be
 * compiled) as the system's, a build of the CLI and the tests in a
 * folder of its own (no MuJoCo wheel there either), whose `clcone mujoco` says what was found and how
 * to get MuJoCo, and whose mujoco suites pass. */
START_TEST(old_mujoco_left_out_of_the_build)
{
    static char out[1 << 16];
    const char *root = env_or("CLCONE_ROOT", ".");
    char dir[] = "/tmp/clcone-oldmj-XXXXXX", cmd[8192], err[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/include/mujoco && printf '#define mjVERSION_HEADER 222\\n#error not to be compiled\\n'"
             " > %s/include/mujoco/mujoco.h",
             dir, dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, NULL, 0), 0);
    /* -O0: the build is what is tested, not the code it makes */
    snprintf(cmd, sizeof cmd,
             "MAKEFLAGS= make -C '%s' BUILD=%s/build CFLAGS=-O0 EXTRA_CFLAGS= EXTRA_LDFLAGS="
             " MUJOCO_SYSTEM_H=%s/include/mujoco/mujoco.h MUJOCO_VENV=%s/build/venv"
             " %s/build/clcone %s/build/tests",
             root, dir, dir, dir, dir, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    ck_assert_msg(strstr(out, "clcone: building without the MuJoCo adapter: MuJoCo 2.2.2 (") &&
                      strstr(out, "is older than 3.11.0"),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "%s/build/clcone mujoco m.xml --steps 1", dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "built without MuJoCo: MuJoCo 2.2.2 (") && strstr(err, "`make mujoco` installs"), "%s",
                  err);
    snprintf(cmd, sizeof cmd, "nm %s/build/clcone | grep -c -E ' (mj_|clcone_mujoco_)'", dir);
    test_sh(cmd, out, sizeof out, NULL, 0);
    ck_assert_msg(atoi(out) == 0, "MuJoCo's symbols in a CLI built without it: %s", out);
    snprintf(cmd, sizeof cmd, "cd '%s' && CLCONE_CLI=%s/build/clcone %s/build/tests mujoco mujoco_traj mujoco_worlds",
             root, dir, dir);
    ck_assert_msg(test_sh(cmd, out, sizeof out, NULL, 0) == 0, "%s\n%s", cmd, out);
    remove_tree(dir);
}
END_TEST

Suite *suite_install(void)
{
    Suite *s = suite_create("install");
    TCase *t = tcase_create("install");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, install_then_build_example_with_pkg_config);
    tcase_add_test(t, public_headers_alone_c99_pedantic_beside_user_headers);
    tcase_add_test(t, installed_prefix_runs_without_the_build_tree);
    tcase_add_test(t, old_mujoco_left_out_of_the_build);
    suite_add_tcase(s, t);
    return s;
}
