/* Pictures and plots: decoded with libpng (size, colour type, what is
 * drawn where), the convergence history they plot, and the errors for
 * bad sizes and missing directories, from the library and the CLI. */
#include <math.h>
#include <png.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static char out_buf[1 << 16], err_buf[1 << 14];

static int cli(const char *args)
{
    return test_run_cli(NULL, args, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

/* The image as 8-bit RGB rows (malloc'ed); the test fails unless libpng
 * decodes it as exactly that. */
static unsigned char *read_png(const char *path, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    png_structp png;
    png_infop info;
    unsigned char *volatile rgb = NULL;
    png_bytep *volatile rows = NULL;
    ck_assert_msg(f != NULL, "missing %s", path);
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(png);
    info = png_create_info_struct(png);
    ck_assert_ptr_nonnull(info);
    if (setjmp(png_jmpbuf(png))) ck_abort_msg("%s: libpng cannot decode it", path);
    png_init_io(png, f);
    png_read_info(png, info);
    *w = (int)png_get_image_width(png, info);
    *h = (int)png_get_image_height(png, info);
    ck_assert_int_eq(png_get_bit_depth(png, info), 8);
    ck_assert_int_eq(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB);
    rgb = malloc(3 * (size_t)*w * (size_t)*h);
    rows = malloc((size_t)*h * sizeof *rows);
    ck_assert(rgb && rows);
    for (int y = 0; y < *h; ++y) rows[y] = rgb + 3 * (size_t)*w * (size_t)y;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    free(rows);
    return rgb;
}

static const unsigned char *pixel(const unsigned char *rgb, int w, int x, int y)
{
    return rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
}

static int differs(const unsigned char *a, const unsigned char *b)
{
    for (int k = 0; k < 3; ++k)
        if (abs(a[k] - b[k]) > 8) return 1;
    return 0;
}

/* Pixels within 12 of colour c in every channel. */
static long count_colour(const unsigned char *rgb, int w, int h, const unsigned char c[3])
{
    long n = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const unsigned char *p = pixel(rgb, w, x, y);
            n += abs(p[0] - c[0]) <= 12 && abs(p[1] - c[1]) <= 12 && abs(p[2] - c[2]) <= 12;
        }
    return n;
}

/* The PNG at path is w x h and shows both of the first two series
 * colours of a plot (blue, then red), each on more than `min` pixels. */
static void check_plot(const char *path, int w, int h, long min)
{
    static const unsigned char blue[3] = {31, 120, 181}, red[3] = {214, 38, 41};
    int W, H;
    unsigned char *rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, w);
    ck_assert_int_eq(H, h);
    ck_assert_int_gt(count_colour(rgb, W, H, blue), min);
    ck_assert_int_gt(count_colour(rgb, W, H, red), min);
    free(rgb);
}

static long file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (long)st.st_size;
}

/* A unit sphere on the floor z = 0 (planes 1) or in empty space (0). */
static void sphere_world(int planes, clcone_world *w)
{
    char text[512];
    const char *path;
    clcone_error e;
    int n = snprintf(text, sizeof text,
                     "clcone-scene 1\ndt 0.01\ngravity 0 0 -9.81\nmu 0.5\nbodies 1\n"
                     "sphere 1 0.5  0 0 0.5  1 0 0 0  0 0 0  0 0 0\nplanes %d\n%scontacts 0\nend\n",
                     planes, planes ? "plane 0 0 1 0\n" : "");
    path = test_write_temp(text, (size_t)n);
    ck_assert_msg(clcone_read_world(path, w, &e) == CLCONE_OK, "%s", e.msg);
    unlink(path);
}

/* Rows below the sphere, in its centre column, that are not the
 * background of their row (the left margin shows the background). The
 * colour bar, blue at its foot too, is in the right quarter. */
static int rows_below_sphere(const unsigned char *rgb, int w, int h)
{
    long sx = 0, n = 0;
    int bottom = -1, cx, count = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < 3 * w / 4; ++x) {
            const unsigned char *p = pixel(rgb, w, x, y);
            if (p[2] > p[0] + 25 && p[2] > p[1] + 20) { /* the sphere is blue: no force on it */
                sx += x;
                ++n;
                if (y > bottom) bottom = y;
            }
        }
    ck_assert_msg(n > 100, "no sphere in the picture (%ld blue pixels)", n);
    cx = (int)(sx / n);
    for (int y = bottom + 1; y < h; ++y) count += differs(pixel(rgb, w, cx, y), pixel(rgb, w, 1, y));
    return count;
}

START_TEST(png_floor_drawn)
{
    clcone_world w;
    clcone_error e;
    char path[] = "/tmp/clcone-png-XXXXXX";
    int fd = mkstemp(path), W, H, with, without;
    unsigned char *rgb;
    ck_assert(fd >= 0);
    close(fd);
    sphere_world(1, &w);
    ck_assert_msg(clcone_render_png(path, &w, NULL, 400, 300, "a sphere on the floor", &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
    rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, 400);
    ck_assert_int_eq(H, 300);
    with = rows_below_sphere(rgb, W, H);
    free(rgb);

    sphere_world(0, &w);
    ck_assert_msg(clcone_render_png(path, &w, NULL, 400, 300, NULL, &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
    rgb = read_png(path, &W, &H);
    without = rows_below_sphere(rgb, W, H);
    free(rgb);
    unlink(path);
    /* the floor reaches well below the sphere's silhouette on screen */
    ck_assert_msg(with > H / 10, "only %d floor rows below the sphere", with);
    ck_assert_int_eq(without, 0);
}
END_TEST

START_TEST(png_compressed_with_colour_bar)
{
    clcone_world w;
    clcone_gen_params gp;
    clcone_error e;
    char path[] = "/tmp/clcone-png-XXXXXX";
    int fd = mkstemp(path), W, H;
    unsigned char *rgb;
    static const unsigned char red[3] = {217, 38, 26}, blue[3] = {59, 77, 191}; /* the colour map's ends */
    ck_assert(fd >= 0);
    close(fd);
    clcone_gen_params_default(&gp);
    gp.n = 4;
    ck_assert_msg(clcone_world_generate("stack", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_render_png(path, &w, NULL, 1200, 900, "stack", &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
    rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, 1200);
    ck_assert_int_eq(H, 900);
    /* deflate, not stored blocks: a tenth of the raw 3.2 MB at most */
    ck_assert_msg(file_size(path) < 3L * W * H / 10, "%ld bytes", file_size(path));
    /* the colour bar shows both ends of the map even with no force */
    ck_assert_int_gt(count_colour(rgb, W, H, red), 50);
    ck_assert_int_gt(count_colour(rgb, W, H, blue), 50);
    free(rgb);
    unlink(path);
}
END_TEST

/* The colour bar's labels fit in the picture: at the default size, with
 * forces whose scale prints long ("\u2265 4.94e+03"), the last columns
 * hold only the background gradient, untouched by any glyph. */
START_TEST(png_colour_bar_label_fits)
{
    clcone_world w;
    clcone_gen_params gp;
    clcone_error e;
    char path[] = "/tmp/clcone-png-XXXXXX";
    int fd = mkstemp(path), W, H, touched = 0;
    double *r;
    unsigned char *rgb;
    ck_assert(fd >= 0);
    close(fd);
    clcone_gen_params_default(&gp);
    gp.n = 4;
    ck_assert_msg(clcone_world_generate("stack", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)w.s.ncontacts, sizeof *r);
    for (int c = 0; c < w.s.ncontacts; ++c) r[3 * c] = 12.3457;
    ck_assert_msg(clcone_render_png(path, &w, r, 1200, 900, "stack", &e) == CLCONE_OK, "%s", e.msg);
    clcone_world_free(&w);
    free(r);
    rgb = read_png(path, &W, &H);
    for (int y = 0; y < H; ++y)
        for (int x = W - 4; x < W; ++x) {
            const unsigned char *p = pixel(rgb, W, x, y);
            int g = 235 - 40 * y / H;
            touched += p[0] != g || p[1] != g || p[2] != g;
        }
    ck_assert_msg(touched == 0, "%d pixels of the last 4 columns are not background", touched);
    free(rgb);
    unlink(path);
}
END_TEST

START_TEST(png_bad_size_and_directory)
{
    clcone_world w;
    clcone_error e;
    clcone_plot_series s = {"s", 0, NULL, NULL};
    clcone_plot_panel p;
    sphere_world(1, &w);
    ck_assert_int_eq(clcone_render_png("/tmp/x.png", &w, NULL, 95, 300, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strcmp(e.msg, "/tmp/x.png: each side must be within 96 .. 8192 pixels (got 95 x 300)") == 0, "%s",
                  e.msg);
    ck_assert_int_eq(clcone_render_png("/tmp/x.png", &w, NULL, 400, 8193, NULL, &e), CLCONE_EINVAL);
    ck_assert_int_eq(clcone_check_picture_size(96, 8192, &e), CLCONE_OK);
    ck_assert_int_eq(clcone_check_picture_size(8193, 96, &e), CLCONE_EINVAL);
    w.s.bodies[0].x[0] = NAN; /* a diverged state is refused, not drawn over the whole picture */
    ck_assert_int_eq(clcone_render_png("/tmp/x.png", &w, NULL, 400, 300, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "/tmp/x.png: ") && strstr(e.msg, "body 0"), "%s", e.msg);
    w.s.bodies[0].x[0] = 0;
    ck_assert_int_eq(clcone_render_png("/tmp/clcone-no-such-dir/sub/x.png", &w, NULL, 400, 300, NULL, &e), CLCONE_EIO);
    ck_assert_msg(strstr(e.msg, "/tmp/clcone-no-such-dir/sub") && strstr(e.msg, "No such file or directory"), "%s",
                  e.msg);
    clcone_world_free(&w);
    memset(&p, 0, sizeof p);
    p.nseries = 1;
    p.series = &s;
    ck_assert_int_eq(clcone_plot_png("/tmp/clcone-no-such-dir/p.png", NULL, &p, 1, 1, 400, 300, &e), CLCONE_EIO);
    ck_assert_msg(strstr(e.msg, "/tmp/clcone-no-such-dir"), "%s", e.msg);
    ck_assert_int_eq(clcone_plot_png("/tmp/p.png", NULL, &p, 0, 1, 400, 300, &e), CLCONE_EINVAL);
    s.n = 3;
    ck_assert_int_eq(clcone_plot_png("/tmp/p.png", NULL, &p, 1, 1, 400, 300, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "panel 0, series 0"), "%s", e.msg);
}
END_TEST

/* A picture or plot on a full disk (/dev/full) says so, as every other
 * output does, not "I/O error". */
START_TEST(png_on_full_disk_names_the_error)
{
    static const double x[2] = {1, 2}, y[2] = {1, 0.5};
    clcone_plot_series s = {"s", 2, x, y};
    clcone_plot_panel p;
    clcone_world w;
    clcone_error e;
    sphere_world(1, &w);
    ck_assert_int_eq(clcone_render_png("/dev/full", &w, NULL, 400, 300, "full", &e), CLCONE_EIO);
    ck_assert_msg(strstr(e.msg, "/dev/full: write failed: No space left on device"), "%s", e.msg);
    clcone_world_free(&w);
    memset(&p, 0, sizeof p);
    p.nseries = 1;
    p.series = &s;
    ck_assert_int_eq(clcone_plot_png("/dev/full", "full", &p, 1, 1, 400, 300, &e), CLCONE_EIO);
    ck_assert_msg(strstr(e.msg, "/dev/full: write failed: No space left on device"), "%s", e.msg);
}
END_TEST

START_TEST(plot_is_valid_png)
{
    static const double x[6] = {1, 2, 3, 4, 5, 6}, y1[6] = {1, 0.1, NAN, 1e-3, -1, 1e-5},
                        y2[6] = {2, 0.5, 0.2, 0.05, 0.01, 0.002};
    clcone_plot_series s[2] = {{"first", 6, x, y1}, {"second", 6, x, y2}};
    clcone_plot_panel p[2];
    clcone_error e;
    char path[] = "/tmp/clcone-plot-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    memset(p, 0, sizeof p);
    for (int k = 0; k < 2; ++k) {
        p[k].xlabel = "iteration";
        p[k].ylabel = "error";
        p[k].ylog = 1;
        p[k].xlog = k;
        p[k].nseries = 2;
        p[k].series = s;
        p[k].hline_label = "tolerance";
        p[k].hline = 1e-4;
    }
    ck_assert_msg(clcone_plot_png(path, "two panels", p, 2, 2, 800, 400, &e) == CLCONE_OK, "%s", e.msg);
    check_plot(path, 800, 400, 200);
    unlink(path);
}
END_TEST

/* The history's last point is the result, checks are in order. */
static void check_history(const clcone_history *h, const clcone_prob_result *r)
{
    ck_assert_int_gt(h->count, 10);
    ck_assert_int_eq(h->truncated, 0);
    for (int i = 1; i < h->count; ++i) {
        ck_assert_int_gt(h->points[i].iter, h->points[i - 1].iter);
        ck_assert(h->points[i].time_ms >= h->points[i - 1].time_ms);
        ck_assert_int_eq(h->points[i].prob, 0);
    }
    ck_assert_int_eq(h->points[0].iter, 1);
    ck_assert_int_eq(h->points[h->count - 1].iter, r->iters);
    ck_assert(h->points[h->count - 1].error == r->error);
}

START_TEST(history_reference_and_device)
{
    clcone_problem p;
    clcone_options o;
    clcone_result res;
    clcone_error e;
    clcone_history h;
    clcone_context *ctx;
    double *r;
    ck_assert_msg(clcone_read_problem(test_problem_path("Capsules-i101-404.dat"), &p, &e) == CLCONE_OK, "%s", e.msg);
    r = calloc(3 * (size_t)p.n, sizeof *r);
    clcone_options_default(&o);
    o.tol = 1e-6;
    memset(&h, 0, sizeof h);
    o.history = &h;
    ck_assert_msg(clcone_solve(NULL, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    check_history(&h, &res.items[0]);
    clcone_result_free(&res);
    clcone_history_free(&h);
    ck_assert_ptr_null(h.points);

    ctx = test_context(CLCONE_DOUBLE);
    o.solver = CLCONE_SOLVER_CGS;
    ck_assert_msg(clcone_solve(ctx, &p, &o, r, &res, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_int_eq(res.items[0].status, CLCONE_CONVERGED);
    check_history(&h, &res.items[0]);
    clcone_result_free(&res);
    clcone_history_free(&h);
    clcone_context_free(ctx);
    clcone_problem_free(&p);
    free(r);
}
END_TEST

/* Text-dark pixels in the middle of the first panel of a 1400 x 620
 * solve plot (an empty plot area is white there). */
static int dark_pixels_in_middle(const char *path)
{
    int W, H, n = 0;
    unsigned char *rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, 1400);
    for (int y = H / 2 - 40; y < H / 2 + 40; ++y)
        for (int x = 150; x < 600; ++x) {
            const unsigned char *p = pixel(rgb, W, x, y);
            n += p[0] < 80 && p[1] < 80 && p[2] < 80;
        }
    free(rgb);
    return n;
}

START_TEST(cli_solve_plot_compare)
{
    char dir[] = "/tmp/clcone-plotcli-XXXXXX", args[4096], path[4200];
    const char *file = test_problem_path("Capsules-i101-404.dat");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "solve %s --precision double --tol 1e-6 --compare --plot %s/c.png", file, dir);
    ck_assert_msg(cli(args) == 0, "%s%s", out_buf, err_buf);
    snprintf(path, sizeof path, "%s/c.png", dir);
    ck_assert_msg(strstr(out_buf, "plot:     ") && strstr(out_buf, path), "%s", out_buf);
    check_plot(path, 1400, 620, 500); /* the device and the reference, both drawn */

    snprintf(args, sizeof args, "solve %s --device ref --plot %s/missing/c.png", file, dir);
    ck_assert_int_eq(cli(args), 2);
    ck_assert_msg(strstr(err_buf, "missing") && strstr(err_buf, "No such file or directory"), "%s", err_buf);
    /* lemke records no history: the plot says so inside its axes */
    snprintf(args, sizeof args, "solve %s --device ref --solver lemke --model pyramid --plot %s/l.png",
             test_problem_path("Rover4396.dat"), dir);
    ck_assert_msg(cli(args) == 0, "%s%s", out_buf, err_buf);
    ck_assert_msg(strstr(err_buf, "no convergence history: lemke records none"), "%s", err_buf);
    snprintf(path, sizeof path, "%s/l.png", dir);
    ck_assert_int_gt(dark_pixels_in_middle(path), 100);
    snprintf(args, sizeof args, "check %s %s/r.txt --plot %s/x.png", file, dir, dir);
    ck_assert_int_eq(cli(args), 2);
    ck_assert_msg(strstr(err_buf, "--plot"), "%s", err_buf);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

START_TEST(cli_simulate_png_and_plot)
{
    char dir[] = "/tmp/clcone-simplot-XXXXXX", args[4096], path[4200];
    unsigned char *rgb;
    int W, H;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof args, "gen incline -o %s/inc.scene", dir);
    ck_assert_msg(cli(args) == 0, "%s", err_buf);
    snprintf(args, sizeof args, "simulate %s/inc.scene --steps 5 --device ref --png %s/a.png --png-size 640x480 --plot %s/b.png",
             dir, dir, dir);
    ck_assert_msg(cli(args) == 0, "%s%s", out_buf, err_buf);
    ck_assert(strstr(out_buf, "picture:") && strstr(out_buf, "plot:"));
    snprintf(path, sizeof path, "%s/a.png", dir);
    rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, 640);
    ck_assert_int_eq(H, 480);
    free(rgb);
    snprintf(path, sizeof path, "%s/b.png", dir);
    rgb = read_png(path, &W, &H);
    ck_assert_int_eq(W, 1000);
    ck_assert_int_eq(H, 1000);
    free(rgb);

    snprintf(args, sizeof args, "simulate %s/inc.scene --steps 1 --device ref --png %s/a.png --png-size 10x10", dir, dir);
    ck_assert_int_eq(cli(args), 2);
    ck_assert_msg(strstr(err_buf, "--png-size: each side must be within 96 .. 8192 pixels (got 10 x 10)"), "%s", err_buf);
    snprintf(args, sizeof args, "simulate %s/inc.scene --steps 1 --device ref --png %s/a.png --png-size big", dir, dir);
    ck_assert_int_eq(cli(args), 2);
    snprintf(args, sizeof args, "simulate %s/inc.scene --steps 1 --device ref --png-size 640x480", dir);
    ck_assert_int_eq(cli(args), 2);
    snprintf(args, sizeof args, "simulate %s/inc.scene --steps 1 --device ref --png %s/no/dir/a.png", dir, dir);
    ck_assert_int_eq(cli(args), 2);
    ck_assert_msg(strstr(err_buf, "/no/dir") && strstr(err_buf, "No such file or directory"), "%s", err_buf);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

Suite *suite_png(void)
{
    Suite *s = suite_create("png");
    TCase *t = tcase_create("png");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, png_floor_drawn);
    tcase_add_test(t, png_compressed_with_colour_bar);
    tcase_add_test(t, png_colour_bar_label_fits);
    tcase_add_test(t, png_bad_size_and_directory);
    tcase_add_test(t, png_on_full_disk_names_the_error);
    tcase_add_test(t, plot_is_valid_png);
    tcase_add_test(t, history_reference_and_device);
    tcase_add_test(t, cli_solve_plot_compare);
    tcase_add_test(t, cli_simulate_png_and_plot);
    suite_add_tcase(s, t);
    return s;
}
