/* The source checks CI runs (tools/check-layers.sh, tools/check-size.sh,
 * tools/check-filemap.sh), each on a small tree made here, so that what
 * they refuse is shown to be refused: a call cycle between two files of
 * one folder, a folder the layer list leaves out, a file over 800 lines,
 * a function over 120, a file the map leaves out, a name, path, call or
 * link of the docs that leads nowhere; and the repository's own map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *root(void)
{
    const char *r = getenv("CLCONE_ROOT");
    return r && *r ? r : ".";
}

/* A fresh folder with a host/ tree; the caller removes it. */
static void make_tree(char *dir, size_t len)
{
    char cmd[512];
    snprintf(dir, len, "/tmp/clcone-tools-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "mkdir -p %s/host/a %s/host/b %s/obj/a %s/obj/b %s/include/clcone %s/kernels", dir, dir,
             dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *dir, const char *file, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Compiles the tree's sources and runs check-layers on it with `layers`. */
static int check_layers(const char *dir, const char *layers, char *out, size_t len)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && for f in host/*/*.c; do o=obj/${f#host/}; cc -c $f -o ${o%%.c}.o || exit 9; done"
             " && sh %s/tools/check-layers.sh obj '%s'",
             dir, root(), layers);
    return test_sh(cmd, out, len, NULL, 0);
}

START_TEST(test_layers_cycle_in_folder)
{
    char dir[64], out[4096];
    make_tree(dir, sizeof dir);
    put(dir, "host/a/x.c", "void y(void);\nvoid x(int n) { if (n) y(); }\n");
    put(dir, "host/a/y.c", "void x(int n);\nvoid y(void) { x(0); }\n");
    put(dir, "host/b/z.c", "void x(int n);\nvoid z(void) { x(1); }\n");
    ck_assert_int_eq(check_layers(dir, "a b", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "call cycle") && strstr(out, "host/a/x.c") && strstr(out, "host/a/y.c"), "%s", out);
    /* without the cycle the same tree passes */
    put(dir, "host/a/y.c", "void y(void) {}\n");
    ck_assert_msg(check_layers(dir, "a b", out, sizeof out) == 0, "%s", out);
    /* the list is the Makefile's: an upward call and a folder left out */
    ck_assert_int_eq(check_layers(dir, "b a", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "calls x of host/a/x.c in the higher layer a"), "%s", out);
    ck_assert_int_eq(check_layers(dir, "a", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "b is not a layer"), "%s", out);
    remove_tree(dir);
}
END_TEST

/* pad comment lines, then a function f of n lines in all. */
static void put_function(const char *dir, const char *file, int n, int pad)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < pad; ++i) fprintf(f, "/* %d */\n", i);
    fprintf(f, "static int f(void)\n{\n    int s = 0;\n");
    for (int i = 0; i < n - 5; ++i) fprintf(f, "    s += %d;\n", i);
    fprintf(f, "    return s;\n}\n");
    fclose(f);
}

static int check_size(const char *dir, const char *file, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && sh %s/tools/check-size.sh %s", dir, root(), file);
    return test_sh(cmd, out, len, NULL, 0);
}

START_TEST(test_size_limits)
{
    char dir[64], out[4096];
    make_tree(dir, sizeof dir);
    put_function(dir, "host/a/ok.c", 120, 680);
    ck_assert_msg(check_size(dir, "host/a/ok.c", out, sizeof out) == 0, "%s", out);
    put_function(dir, "host/a/long.c", 121, 0);
    ck_assert_int_eq(check_size(dir, "host/a/long.c", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "host/a/long.c:1: f has 121 lines"), "%s", out);
    put_function(dir, "host/a/big.c", 120, 681);
    ck_assert_int_eq(check_size(dir, "host/a/big.c", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "host/a/big.c has 801 lines") && !strstr(out, " f has"), "%s", out);
    remove_tree(dir);
}
END_TEST

/* Runs check-filemap on the tree (not a git checkout: every file counts). */
static int check_filemap(const char *dir, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sh %s/tools/check-filemap.sh %s", root(), dir);
    return test_sh(cmd, out, len, NULL, 0);
}

START_TEST(test_filemap_flags_what_leads_nowhere)
{
    char dir[64], out[4096], cmd[256];
    make_tree(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/docs", dir);
    ck_assert_int_eq(system(cmd), 0);
    put(dir, "host/a/x.c", "int x_fn(void) { return 0; }\n");
    put(dir, "host/a/y.c", "int y;\n");
    put(dir, "docs/architecture.md", "# A\n\n## File map\n\n    host/a/  x.c (`x_fn()`), y.c\n\n"
                                     "## Else\n\nSee `host/a/x.c`.\n");
    put(dir, "README.md", "[the map](docs/architecture.md)\n");
    ck_assert_msg(check_filemap(dir, out, sizeof out) == 0, "%s", out);
    put(dir, "host/b/z.c", "int z;\n");
    put(dir, "docs/architecture.md", "# A\n\n## File map\n\n    host/a/  x.c, y.c, w.c\n    host/b/  none yet\n\n"
                                     "## Else\n\n`host/a/v.c` calls `gone_fn()`.\n");
    put(dir, "README.md", "[the map](docs/missing.md)\n");
    ck_assert_int_eq(check_filemap(dir, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "host/b/z.c is not named in docs/architecture.md's entry for host/b/"), "%s", out);
    ck_assert_msg(strstr(out, "entry for host/a/ names w.c: no host/a/w.c"), "%s", out);
    ck_assert_msg(strstr(out, "docs/architecture.md names host/a/v.c: no such path"), "%s", out);
    ck_assert_msg(strstr(out, "names `gone_fn`, which no source file has"), "%s", out);
    ck_assert_msg(strstr(out, "README.md links to docs/missing.md, which does not exist"), "%s", out);
    remove_tree(dir);
}
END_TEST

/* The repository's own map and links, as `make check-filemap` checks them. */
START_TEST(test_filemap_of_the_repository)
{
    char out[8192];
    ck_assert_msg(check_filemap(root(), out, sizeof out) == 0, "%s", out);
}
END_TEST

Suite *suite_tools(void)
{
    Suite *s = suite_create("tools");
    TCase *tc = tcase_create("tools");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_layers_cycle_in_folder);
    tcase_add_test(tc, test_size_limits);
    tcase_add_test(tc, test_filemap_flags_what_leads_nowhere);
    tcase_add_test(tc, test_filemap_of_the_repository);
    suite_add_tcase(s, tc);
    return s;
}
