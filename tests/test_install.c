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
    /* a static link sees every global symbol: they too keep to clcone_
     * (but for the sanitizers' own, __asan_ and __odr_asan., in a
     * sanitized build) */
    snprintf(cmd, sizeof cmd,
             "nm -g --defined-only %s/usr/lib/libclcone.a | awk 'NF == 3 && $3 !~ /^(clcone_|__odr_asan[._]|__asan_)/'",
             dir);
    ck_assert_int_eq(test_sh(cmd, out, sizeof out, NULL, 0), 0);
    ck_assert_msg(out[0] == 0, "global beyond clcone_ in libclcone.a: %s", out);
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

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
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
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_install(void)
{
    Suite *s = suite_create("install");
    TCase *t = tcase_create("install");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, install_then_build_example_with_pkg_config);
    tcase_add_test(t, public_headers_alone_c99_pedantic_beside_user_headers);
    suite_add_tcase(s, t);
    return s;
}
