/* Line plots (convergence histories, per-step figures) drawn with cairo:
 * panels on a grid, linear or log axes, a legend and a dashed reference
 * line. Also the drawing helpers the pictures share (draw.h). */
#define _POSIX_C_SOURCE 200809L
#include "output/draw.h"
#include "core/internal.h"
#include "io/outfile.h"
#include "cone.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers shared with png.c ---- */

static clcone_status check_dir(const char *path, clcone_error *err)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    struct stat st;
    int ok;
    if (!slash || slash == path) return CLCONE_OK;
    dir = malloc((size_t)(slash - path) + 1);
    if (!dir) return clc_fail(err, CLCONE_ENOMEM, "%s: out of memory", path);
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = 0;
    ok = stat(dir, &st) == 0;
    if (!ok || !S_ISDIR(st.st_mode)) {
        clcone_status s = clc_fail(err, CLCONE_EIO, "%s: cannot write there: %s %s", path, dir,
                                      ok ? "is not a directory" : strerror(errno));
        free(dir);
        return s;
    }
    free(dir);
    return CLCONE_OK;
}

clcone_status clcone_check_picture_size(int width, int height, clcone_error *err)
{
    if (width < CLCONE_DRAW_MIN_SIDE || height < CLCONE_DRAW_MIN_SIDE || width > CLCONE_DRAW_MAX_SIDE
        || height > CLCONE_DRAW_MAX_SIDE)
        return clc_fail(err, CLCONE_EINVAL, "each side must be within %d .. %d pixels (got %d x %d)",
                        CLCONE_DRAW_MIN_SIDE, CLCONE_DRAW_MAX_SIDE, width, height);
    return CLCONE_OK;
}

clcone_status clc_draw_begin(const char *path, int width, int height, cairo_surface_t **surface, cairo_t **cr,
                                clcone_error *err)
{
    clcone_status s;
    *surface = NULL;
    *cr = NULL;
    if (!path || !*path) return clc_fail(err, CLCONE_EINVAL, "no output file given for the PNG");
    if ((s = clcone_check_picture_size(width, height, err))) {
        clc_error_prefix(err, "%s", path);
        return s;
    }
    if ((s = check_dir(path, err))) return s;
    *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    if (cairo_surface_status(*surface) == CAIRO_STATUS_SUCCESS) {
        *cr = cairo_create(*surface);
        if (cairo_status(*cr) == CAIRO_STATUS_SUCCESS) return CLCONE_OK;
    }
    s = clc_fail(err, CLCONE_ENOMEM, "%s: cannot create a %d x %d drawing: %s", path, width, height,
                    cairo_status_to_string(*cr ? cairo_status(*cr) : cairo_surface_status(*surface)));
    if (*cr) cairo_destroy(*cr);
    cairo_surface_destroy(*surface);
    *surface = NULL;
    *cr = NULL;
    return s;
}

static cairo_status_t to_file(void *file, const unsigned char *data, unsigned int len)
{
    return fwrite(data, 1, len, file) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static int write_surface(void *file, const void *surface)
{
    /* cairo takes a non-const surface but only reads it here */
    return cairo_surface_write_to_png_stream((cairo_surface_t *)surface, to_file, file) == CAIRO_STATUS_SUCCESS ? 0
                                                                                                                 : -1;
}

clcone_status clc_draw_finish(const char *path, cairo_surface_t *surface, cairo_t *cr, clcone_error *err)
{
    clcone_status s;
    cairo_status_t cs = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    if (cs != CAIRO_STATUS_SUCCESS)
        s = clc_fail(err, CLCONE_ENOMEM, "%s: drawing failed: %s", path, cairo_status_to_string(cs));
    else
        s = clc_write_atomic(path, write_surface, surface, err);
    cairo_surface_destroy(surface);
    return s;
}

void clc_draw_text(cairo_t *cr, double x, double y, double ax, double ay, const char *text)
{
    cairo_text_extents_t te;
    cairo_font_extents_t fe;
    cairo_text_extents(cr, text, &te);
    cairo_font_extents(cr, &fe);
    cairo_move_to(cr, x - ax * te.x_advance, y + ay * fe.ascent);
    cairo_show_text(cr, text);
}

double clc_draw_font_size(int width, int height)
{
    return fmin(16.0, fmax(7.0, fmin(width, height) / 45.0));
}

double clc_draw_nice_step(double span, int ticks)
{
    double raw = span / (ticks > 0 ? ticks : 1), p = pow(10.0, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * p;
}

/* ---- plots ---- */

static const double PALETTE[][3] = {
    {0.12, 0.47, 0.71}, {0.84, 0.15, 0.16}, {0.17, 0.63, 0.17}, {1.00, 0.50, 0.05}, {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}};
#define NPALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))

typedef struct axis {
    double lo, hi;
    int log;
} axis;

static int usable(double v, int log)
{
    return isfinite(v) && (!log || v > 0);
}

/* Range from the data (lo > hi when there are none), widened to whole
 * decades on a log axis and to whole ticks on a linear one. */
static void axis_fit(axis *a, double lo, double hi, int log)
{
    a->log = log;
    if (log) {
        if (lo > hi) lo = 1, hi = 10;
        a->lo = pow(10.0, floor(log10(lo)));
        a->hi = pow(10.0, ceil(log10(hi)));
        if (a->hi <= a->lo) a->hi = 10 * a->lo;
    } else {
        double step;
        if (lo > hi) lo = 0, hi = 1;
        if (hi - lo <= 1e-12 * fmax(fabs(lo), fabs(hi))) {
            double d = fmax(0.5 * fabs(lo), 0.5);
            lo -= d;
            hi += d;
        }
        step = clc_draw_nice_step(hi - lo, 5);
        a->lo = floor(lo / step) * step;
        a->hi = ceil(hi / step) * step;
    }
}

static double axis_t(const axis *a, double v)
{
    return a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : (v - a->lo) / (a->hi - a->lo);
}

static void tick_label(char *buf, size_t len, const axis *a, double v)
{
    if (a->log) {
        int e = (int)lround(log10(v));
        if (e >= 0 && e <= 3) snprintf(buf, len, "%g", v);
        else snprintf(buf, len, "1e%d", e);
    } else {
        snprintf(buf, len, "%g", fabs(v) < 1e-12 * (a->hi - a->lo) ? 0.0 : v);
    }
}

/* Calls fn for every tick of the axis: labelled major ticks and, on a
 * short log axis, the unlabelled 2 .. 9 between decades. */
typedef void (*tick_fn)(void *ctx, double t, const char *label);

static void axis_ticks(const axis *a, tick_fn fn, void *ctx)
{
    char buf[32];
    if (a->log) {
        int e0 = (int)lround(log10(a->lo)), e1 = (int)lround(log10(a->hi)), every = (e1 - e0 + 7) / 8;
        for (int e = e0; e <= e1; ++e) {
            double v = pow(10.0, e);
            tick_label(buf, sizeof buf, a, v);
            fn(ctx, axis_t(a, v), (e - e0) % every == 0 ? buf : NULL);
            if (e < e1 && e1 - e0 <= 6)
                for (int m = 2; m <= 9; ++m) fn(ctx, axis_t(a, m * v), NULL);
        }
    } else {
        double step = clc_draw_nice_step(a->hi - a->lo, 5);
        for (int k = 0; a->lo + k * step <= a->hi + 1e-9 * step; ++k) {
            double v = a->lo + k * step;
            tick_label(buf, sizeof buf, a, v);
            fn(ctx, axis_t(a, v), buf);
        }
    }
}

typedef struct frame {
    cairo_t *cr;
    double x0, y0, w, h, fs;  /* plot rectangle, font size */
    int vertical;             /* which axis the ticks belong to */
} frame;

static void draw_tick(void *ctx, double t, const char *label)
{
    frame *F = ctx;
    cairo_t *cr = F->cr;
    double len = label ? 0.5 * F->fs : 0.25 * F->fs;
    if (t < -1e-9 || t > 1 + 1e-9) return;
    cairo_set_source_rgb(cr, label ? 0.88 : 0.94, label ? 0.88 : 0.94, label ? 0.88 : 0.94);
    cairo_set_line_width(cr, 1.0);
    if (F->vertical) {
        double y = F->y0 + F->h * (1 - t);
        cairo_move_to(cr, F->x0, y);
        cairo_line_to(cr, F->x0 + F->w, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_move_to(cr, F->x0, y);
        cairo_line_to(cr, F->x0 + len, y);
        cairo_stroke(cr);
        if (label) clc_draw_text(cr, F->x0 - 0.4 * F->fs, y, 1.0, 0.5, label);
    } else {
        double x = F->x0 + F->w * t;
        cairo_move_to(cr, x, F->y0);
        cairo_line_to(cr, x, F->y0 + F->h);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_move_to(cr, x, F->y0 + F->h);
        cairo_line_to(cr, x, F->y0 + F->h - len);
        cairo_stroke(cr);
        if (label) clc_draw_text(cr, x, F->y0 + F->h + 0.4 * F->fs, 0.5, 1.0, label);
    }
}

static void data_range(const clcone_plot_panel *P, int yaxis, double *lo, double *hi)
{
    int log = yaxis ? P->ylog : P->xlog;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int s = 0; s < P->nseries; ++s)
        for (int i = 0; i < P->series[s].n; ++i) {
            double x = P->series[s].x[i], y = P->series[s].y[i], v = yaxis ? y : x;
            if (!usable(x, P->xlog) || !usable(y, P->ylog)) continue;
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    if (yaxis && P->hline_label && usable(P->hline, log)) {
        *lo = fmin(*lo, P->hline);
        *hi = fmax(*hi, P->hline);
    }
}

static void legend_entry(cairo_t *cr, double x, double y, double fs, const double *col, int dashed, const char *label)
{
    cairo_set_source_rgb(cr, col[0], col[1], col[2]);
    cairo_set_line_width(cr, dashed ? 1.5 : 2.0);
    if (dashed) {
        double d[2] = {5, 3};
        cairo_set_dash(cr, d, 2, 0);
    }
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x + 2 * fs, y);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    clc_draw_text(cr, x + 2.5 * fs, y, 0.0, 0.4, label);
}

static void draw_legend(cairo_t *cr, const clcone_plot_panel *P, const frame *F)
{
    static const double grey[3] = {0.35, 0.35, 0.35};
    double wmax = 0, fs = F->fs, row = 1.4 * fs, x, y;
    int n = 0;
    cairo_text_extents_t te;
    for (int s = 0; s < P->nseries; ++s)
        if (P->series[s].label) {
            cairo_text_extents(cr, P->series[s].label, &te);
            wmax = fmax(wmax, te.x_advance);
            ++n;
        }
    if (P->hline_label) {
        cairo_text_extents(cr, P->hline_label, &te);
        wmax = fmax(wmax, te.x_advance);
        ++n;
    }
    if (n == 0) return;
    x = F->x0 + F->w - wmax - 3.5 * fs;
    y = F->y0 + 0.5 * fs;
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_rectangle(cr, x - 0.5 * fs, y, wmax + 3.5 * fs, n * row + 0.4 * fs);
    cairo_fill(cr);
    y += 0.5 * row + 0.2 * fs;
    for (int s = 0; s < P->nseries; ++s)
        if (P->series[s].label) {
            legend_entry(cr, x, y, fs, PALETTE[s % NPALETTE], 0, P->series[s].label);
            y += row;
        }
    if (P->hline_label) legend_entry(cr, x, y, fs, grey, 1, P->hline_label);
}

static void draw_series(cairo_t *cr, const clcone_plot_series *S, const double *col, double width, const axis *ax,
                        const axis *ay, const frame *F, int xlog, int ylog)
{
    int open = 0;
    cairo_set_source_rgb(cr, col[0], col[1], col[2]);
    cairo_set_line_width(cr, width);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (int i = 0; i < S->n; ++i) {
        double px, py;
        if (!usable(S->x[i], xlog) || !usable(S->y[i], ylog)) {
            open = 0;
            continue;
        }
        px = F->x0 + F->w * axis_t(ax, S->x[i]);
        py = F->y0 + F->h * (1 - axis_t(ay, S->y[i]));
        if (open) cairo_line_to(cr, px, py);
        else cairo_move_to(cr, px, py);
        open = 1;
    }
    cairo_stroke(cr);
    /* few points: mark them, so a short history is not a bare segment */
    if (S->n > 40) return;
    for (int i = 0; i < S->n; ++i) {
        if (!usable(S->x[i], xlog) || !usable(S->y[i], ylog)) continue;
        cairo_arc(cr, F->x0 + F->w * axis_t(ax, S->x[i]), F->y0 + F->h * (1 - axis_t(ay, S->y[i])), 2.5, 0,
                  2 * CONE_PI);
        cairo_fill(cr);
    }
}

static void draw_panel(cairo_t *cr, const clcone_plot_panel *P, double cx, double cy, double cw, double ch, double fs)
{
    frame F;
    axis ax, ay;
    double lo, hi;
    F.cr = cr;
    F.fs = fs;
    F.x0 = cx + 6.0 * fs;
    F.y0 = cy + 2.0 * fs;
    F.w = fmax(1.0, cw - 7.5 * fs);
    F.h = fmax(1.0, ch - 5.0 * fs);
    data_range(P, 0, &lo, &hi);
    axis_fit(&ax, lo, hi, P->xlog);
    data_range(P, 1, &lo, &hi);
    axis_fit(&ay, lo, hi, P->ylog);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, F.x0, F.y0, F.w, F.h);
    cairo_fill(cr);
    cairo_set_font_size(cr, 0.85 * fs);
    F.vertical = 0;
    axis_ticks(&ax, draw_tick, &F);
    F.vertical = 1;
    axis_ticks(&ay, draw_tick, &F);
    cairo_save(cr);
    cairo_rectangle(cr, F.x0, F.y0, F.w, F.h);
    cairo_clip(cr);
    if (P->hline_label && usable(P->hline, P->ylog)) {
        double d[2] = {6, 4}, y = F.y0 + F.h * (1 - axis_t(&ay, P->hline));
        cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
        cairo_set_line_width(cr, 1.5);
        cairo_set_dash(cr, d, 2, 0);
        cairo_move_to(cr, F.x0, y);
        cairo_line_to(cr, F.x0 + F.w, y);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    /* earlier series wider, so that one drawn over an equal one still shows
     * (a device and the reference often agree iteration for iteration) */
    for (int s = 0; s < P->nseries; ++s)
        draw_series(cr, &P->series[s], PALETTE[s % NPALETTE], 2.0 + 2.5 * (P->nseries - 1 - s), &ax, &ay, &F,
                    P->xlog, P->ylog);
    if (P->note) {
        cairo_text_extents_t te;
        cairo_set_font_size(cr, fs);
        cairo_text_extents(cr, P->note, &te);
        /* smaller rather than cut when the panel is narrow */
        if (te.x_advance > 0.9 * F.w) cairo_set_font_size(cr, fs * 0.9 * F.w / te.x_advance);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        clc_draw_text(cr, F.x0 + 0.5 * F.w, F.y0 + 0.5 * F.h, 0.5, 0.5, P->note);
    }
    cairo_restore(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, F.x0 + 0.5, F.y0 + 0.5, F.w - 1, F.h - 1);
    cairo_stroke(cr);
    cairo_set_font_size(cr, fs);
    draw_legend(cr, P, &F);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    if (P->title) clc_draw_text(cr, F.x0, cy + 1.4 * fs, 0.0, 0.0, P->title);
    if (P->xlabel) clc_draw_text(cr, F.x0 + 0.5 * F.w, F.y0 + F.h + 1.6 * fs, 0.5, 1.0, P->xlabel);
    if (P->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, cx + 0.6 * fs, F.y0 + 0.5 * F.h);
        cairo_rotate(cr, -CONE_PI / 2);
        clc_draw_text(cr, 0, 0, 0.5, 1.0, P->ylabel);
        cairo_restore(cr);
    }
}

static clcone_status plot_validate(const char *path, const clcone_plot_panel *panels, int npanels, int columns,
                                   clcone_error *err)
{
    if (npanels < 1 || !panels || columns < 1)
        return clc_fail(err, CLCONE_EINVAL, "%s: a plot needs panels (%d given) and columns >= 1 (%d)", path,
                           npanels, columns);
    for (int k = 0; k < npanels; ++k) {
        const clcone_plot_panel *P = &panels[k];
        if (P->nseries < 0 || (P->nseries > 0 && !P->series))
            return clc_fail(err, CLCONE_EINVAL, "%s: panel %d: %d series without data", path, k, P->nseries);
        for (int s = 0; s < P->nseries; ++s)
            if (P->series[s].n < 0 || (P->series[s].n > 0 && (!P->series[s].x || !P->series[s].y)))
                return clc_fail(err, CLCONE_EINVAL, "%s: panel %d, series %d: %d points without data", path, k,
                                   s, P->series[s].n);
    }
    return CLCONE_OK;
}

clcone_status clcone_plot_png(const char *path, const char *title, const clcone_plot_panel *panels, int npanels,
                              int columns, int width, int height, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, panels);
    cairo_surface_t *sf;
    cairo_t *cr;
    clcone_status s;
    double fs = clc_draw_font_size(width, height), top;
    int rows;
    if ((s = plot_validate(path ? path : "(no file)", panels, npanels, columns, err))
        || (s = clc_draw_begin(path, width, height, &sf, &cr, err)))
        return s;
    if (columns > npanels) columns = npanels;
    rows = (npanels + columns - 1) / columns;
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.96);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    top = 0.5 * fs;
    if (title) {
        cairo_set_font_size(cr, 1.15 * fs);
        cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
        clc_draw_text(cr, 0.5 * width, 0.6 * fs, 0.5, 1.0, title);
        top = 2.2 * fs;
    }
    for (int k = 0; k < npanels; ++k) {
        double cw = (double)width / columns, ch = (height - top) / rows;
        cairo_set_font_size(cr, fs);
        draw_panel(cr, &panels[k], (k % columns) * cw, top + (k / columns) * ch, cw, ch, fs);
    }
    return clc_draw_finish(path, sf, cr, err);
}
