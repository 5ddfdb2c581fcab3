/* A picture of a world without a viewer: an orthographic, z-buffered
 * rendering of spheres (per-pixel normals), boxes (flat faces) and the
 * static planes, Lambert shaded, the bodies coloured by the contact force
 * on them. cairo then adds the outlines, the colour bar and the title and
 * writes the PNG (draw.h). */
#include "output/draw.h"
#include "core/internal.h"
#include "core/body_form.h"
#include "world/world_parts.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* View: looking along +y, turned 30 degrees about z and 25 down. */
#define AZIMUTH 0.52
#define ELEVATION 0.44

/* Planes: translucent fill, a darker rim one and a half pixels wide. */
#define PLANE_ALPHA 0.45
#define RIM_ALPHA 0.85
#define RIM_PX 1.5

typedef struct view {
    double right[3], up[3], fwd[3];
    /* screen x = cx + (p . right - uc) scale, y = cy - (p . up - vc) scale
     * (rows grow downward), depth = p . fwd scale */
    double scale, cx, cy, uc, vc;
    int W, H;
    float *z;
    unsigned char *rgb;
    double light[3];        /* towards the light, in (right, up, fwd) */
} view;

static const double COLOUR_STOPS[5][3] = {
    {0.23, 0.30, 0.75}, {0.30, 0.65, 0.95}, {0.45, 0.85, 0.45}, {0.98, 0.80, 0.25}, {0.85, 0.15, 0.10}};
static const double PLANE_COLOUR[3] = {0.80, 0.74, 0.62};
static const double RIM_COLOUR[3] = {0.32, 0.30, 0.27};

static void to_view(const view *V, const double p[3], double out[3])
{
    out[0] = V->cx + (clc_dot3(p, V->right) - V->uc) * V->scale;
    out[1] = V->cy - (clc_dot3(p, V->up) - V->vc) * V->scale;
    out[2] = clc_dot3(p, V->fwd) * V->scale;
}

static void colormap(double t, double c[3])
{
    double x = fmin(fmax(t, 0.0), 1.0) * 4.0;
    int k = x >= 4.0 ? 3 : (int)x;
    double f = x - k;
    for (int i = 0; i < 3; ++i) c[i] = COLOUR_STOPS[k][i] * (1 - f) + COLOUR_STOPS[k + 1][i] * f;
}

/* Opaque surfaces (alpha 1) write the depth; translucent ones blend over
 * what is behind them and hide nothing. */
static void put(view *V, int x, int y, float z, const double col[3], double shade, double alpha)
{
    size_t i = (size_t)y * (size_t)V->W + (size_t)x;
    if (z >= V->z[i]) return;
    if (alpha >= 1) V->z[i] = z;
    for (int k = 0; k < 3; ++k) {
        double c = fmin(255.0, 255.0 * col[k] * shade);
        V->rgb[3 * i + k] = (unsigned char)((1 - alpha) * V->rgb[3 * i + k] + alpha * c + 0.5);
    }
}

/* A pixel index within [0, hi] (clamped before the conversion, so far-off
 * geometry converts no out-of-range double). */
static int px_clamp(double v, int hi)
{
    return (int)fmin(hi, fmax(0.0, v));
}

static double lambert(const view *V, const double n[3])
{
    return 0.35 + 0.65 * fmax(0.0, clc_dot3(n, V->light));
}

static void draw_sphere(view *V, const double c[3], double r, const double col[3])
{
    double p[3];
    int x0, x1, y0, y1;
    to_view(V, c, p);
    r *= V->scale;
    x0 = px_clamp(floor(p[0] - r), V->W - 1);
    x1 = px_clamp(ceil(p[0] + r), V->W - 1);
    y0 = px_clamp(floor(p[1] - r), V->H - 1);
    y1 = px_clamp(ceil(p[1] + r), V->H - 1);
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            double dx = x + 0.5 - p[0], dy = y + 0.5 - p[1], d2 = dx * dx + dy * dy, dz, n[3];
            if (d2 > r * r) continue;
            dz = sqrt(r * r - d2);
            /* screen y grows downward: flip it back for the normal */
            n[0] = dx / r;
            n[1] = -dy / r;
            n[2] = -dz / r;
            put(V, x, y, (float)(p[2] - dz), col, lambert(V, n), 1.0);
        }
}

/* A convex polygon p (screen coordinates, n corners in order) of a
 * surface with world normal nw. Depth follows the surface's plane. With
 * alpha < 1 the polygon is translucent and its rim is drawn darker. */
static void fill_convex(view *V, const double (*p)[3], int n, const double nw[3], const double col[3], double alpha)
{
    double nv[3] = {clc_dot3(nw, V->right), clc_dot3(nw, V->up), clc_dot3(nw, V->fwd)};
    double area = 0, lo[2] = {DBL_MAX, DBL_MAX}, hi[2] = {-DBL_MAX, -DBL_MAX}, shade = lambert(V, nv), sg;
    int x0, x1, y0, y1;
    if (n < 3 || fabs(nv[2]) < 1e-6) return;   /* seen edge-on */
    for (int i = 0; i < n; ++i) {
        const double *a = p[i], *b = p[(i + 1) % n];
        area += a[0] * b[1] - b[0] * a[1];
        for (int k = 0; k < 2; ++k) lo[k] = fmin(lo[k], a[k]), hi[k] = fmax(hi[k], a[k]);
    }
    if (fabs(area) < 1e-9) return;
    sg = area > 0 ? 1.0 : -1.0;
    x0 = px_clamp(floor(lo[0]), V->W - 1);
    x1 = px_clamp(ceil(hi[0]), V->W - 1);
    y0 = px_clamp(floor(lo[1]), V->H - 1);
    y1 = px_clamp(ceil(hi[1]), V->H - 1);
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            double px = x + 0.5, py = y + 0.5, inside = DBL_MAX, z;
            for (int i = 0; i < n && inside >= 0; ++i) {
                const double *a = p[i], *b = p[(i + 1) % n];
                double ex = b[0] - a[0], ey = b[1] - a[1], len = hypot(ex, ey);
                if (len > 1e-12) inside = fmin(inside, sg * (ex * (py - a[1]) - ey * (px - a[0])) / len);
            }
            if (inside < 0) continue;
            /* the plane n . (s - p0) = 0 in screen axes (right, -up, fwd) */
            z = p[0][2] - (nv[0] * (px - p[0][0]) - nv[1] * (py - p[0][1])) / nv[2];
            if (alpha < 1 && inside < RIM_PX) put(V, x, y, (float)z, RIM_COLOUR, 1.0, RIM_ALPHA);
            else put(V, x, y, (float)z, col, shade, alpha);
        }
}

static void draw_box(view *V, const clcone_body *b, const clcone_shape *sh, const double col[3])
{
    double cw[8][3], cv[8][3], R[9];
    /* faces as corner indices (bit 0 x, bit 1 y, bit 2 z), by axis and sign */
    static const int faces[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
    clc_quat_to_mat(sh->quat, R);
    for (int k = 0; k < 8; ++k) {
        clc_box_corner(b, sh, k, cw[k]);
        to_view(V, cw[k], cv[k]);
    }
    for (int f = 0; f < 6; ++f) {
        int axis = f / 2;
        double sg = f % 2 ? 1.0 : -1.0, nw[3], quad[4][3];
        for (int k = 0; k < 3; ++k) nw[k] = sg * R[3 * k + axis];
        if (clc_dot3(nw, V->fwd) >= 0) continue;   /* facing away */
        for (int k = 0; k < 4; ++k) memcpy(quad[k], cv[faces[f][k]], sizeof quad[k]);
        fill_convex(V, (const double (*)[3])quad, 4, nw, col, 1.0);
    }
}

/* Keeps the part of polygon `in` (n corners) where a . x >= b; returns the
 * corners written to out (at most n + 1). */
static int clip_polygon(const double (*in)[3], int n, const double a[3], double b, double tol, double (*out)[3])
{
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const double *P = in[i], *Q = in[(i + 1) % n];
        double dp = clc_dot3(a, P) - b, dq = clc_dot3(a, Q) - b;
        if (dp >= -tol) memcpy(out[m++], P, sizeof out[0]);
        if ((dp >= -tol) != (dq >= -tol)) {
            double t = dp / (dp - dq);
            for (int k = 0; k < 3; ++k) out[m][k] = P[k] + t * (Q[k] - P[k]);
            ++m;
        }
    }
    return m;
}

/* The face of the free region that plane i bounds: the plane clipped to
 * the box [lo, hi] and to every other plane's free side, so a container's
 * floor ends at its walls. buf holds 2 (10 + nplanes) corners; returns the
 * corner count (0: nothing to draw) and the corners in *poly. */
static int plane_face(const clcone_world *w, int i, const double lo[3], const double hi[3], double (*buf)[3],
                      double (**poly)[3])
{
    const clcone_plane *pl = &w->planes[i];
    int cap = 10 + w->nplanes, n = 4;
    double F[9], c[3], d = 0, L = 0, tol;
    double (*cur)[3] = buf, (*nxt)[3] = buf + cap;
    clcone_contact_frame(pl->normal, F);
    for (int k = 0; k < 3; ++k) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        L += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    L = sqrt(L);   /* a square of half side L about c covers the box's section */
    tol = 1e-9 * L;
    d = clc_dot3(pl->normal, c) - pl->offset;
    for (int k = 0; k < 3; ++k) c[k] -= d * pl->normal[k];
    for (int q = 0; q < 4; ++q) {
        double s1 = q == 1 || q == 2 ? 1.0 : -1.0, s2 = q >= 2 ? 1.0 : -1.0;
        for (int k = 0; k < 3; ++k) cur[q][k] = c[k] + L * (s1 * F[3 + k] + s2 * F[6 + k]);
    }
    for (int j = -6; j < w->nplanes && n >= 3; ++j) {
        double a[3] = {0, 0, 0}, b;
        double (*t)[3];
        if (j == i) continue;
        if (j < 0) {   /* the six faces of the box */
            int k = (j + 6) / 2, upper = (j + 6) % 2;
            a[k] = upper ? -1.0 : 1.0;
            b = upper ? -hi[k] : lo[k];
        } else {
            memcpy(a, w->planes[j].normal, sizeof a);
            b = w->planes[j].offset;
        }
        n = clip_polygon((const double (*)[3])cur, n, a, b, tol, nxt);
        t = cur;
        cur = nxt;
        nxt = t;
    }
    *poly = cur;
    return n >= 3 ? n : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The force that maps to full red: the 98th percentile, so that a few
 * jammed bodies do not turn everything else blue. */
static double colour_scale(const double *f, int n)
{
    double *c, s;
    if (n == 0) return 0;
    c = malloc((size_t)n * sizeof *c);
    if (!c) {
        s = 0;
        for (int i = 0; i < n; ++i) s = fmax(s, f[i]);
        return s;
    }
    memcpy(c, f, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    s = c[(size_t)(0.98 * (n - 1))];
    if (!(s > 0)) s = c[n - 1];
    free(c);
    return s;
}

/* Bounding box of the bodies, padded so that the planes show around them. */
static void region(const clcone_world *w, double lo[3], double hi[3])
{
    double ext = 0, rmax = 0, pad;
    for (int k = 0; k < 3; ++k) lo[k] = DBL_MAX, hi[k] = -DBL_MAX;
    for (int i = 0; i < w->s.nbodies; ++i) {
        double rb = clcone_shape_bound(&w->shapes[i]);
        rmax = fmax(rmax, rb);
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], w->s.bodies[i].x[k] - rb);
            hi[k] = fmax(hi[k], w->s.bodies[i].x[k] + rb);
        }
    }
    if (w->s.nbodies == 0)
        for (int k = 0; k < 3; ++k) lo[k] = -1, hi[k] = 1;
    for (int k = 0; k < 3; ++k) ext = fmax(ext, hi[k] - lo[k]);
    pad = fmax(0.15 * ext, 2 * rmax);
    for (int k = 0; k < 3; ++k) lo[k] -= pad, hi[k] += pad;
}

static void grow(double lo[2], double hi[2], double u, double v, double r)
{
    lo[0] = fmin(lo[0], u - r);
    hi[0] = fmax(hi[0], u + r);
    lo[1] = fmin(lo[1], v - r);
    hi[1] = fmax(hi[1], v + r);
}

/* One label of the colour bar, left-aligned at x (drawn unless measuring);
 * returns how far right of x its ink reaches. */
static double bar_text(cairo_t *cr, double x, double y, double ay, const char *text, int draw)
{
    cairo_text_extents_t te;
    cairo_text_extents(cr, text, &te);
    if (draw) clc_draw_text(cr, x, y, 0.0, ay, text);
    return fmax(te.x_advance, te.x_bearing + te.width);
}

/* The colour bar with its left edge at x, from y0 (top) to y1, labelled
 * up to the force scale; with draw 0 it only measures. Returns how far
 * right of x its widest label reaches, which sets the bar's room, so that
 * no label is cut at the picture's edge. */
static double colour_bar(cairo_t *cr, double x, double y0, double y1, double fs, double scale, int draw)
{
    double bw = 1.2 * fs, lx = bw + 0.4 * fs, step, reach;
    char buf[48];
    if (draw) {
        cairo_pattern_t *g = cairo_pattern_create_linear(0, y1, 0, y0);
        for (int k = 0; k < 5; ++k)
            cairo_pattern_add_color_stop_rgb(g, k / 4.0, COLOUR_STOPS[k][0], COLOUR_STOPS[k][1], COLOUR_STOPS[k][2]);
        cairo_rectangle(cr, x, y0, bw, y1 - y0);
        cairo_set_source(cr, g);
        cairo_fill(cr);
        cairo_pattern_destroy(g);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_set_line_width(cr, 1.0);
        cairo_rectangle(cr, x + 0.5, y0 + 0.5, bw - 1, y1 - y0 - 1);
        cairo_stroke(cr);
    }
    cairo_set_font_size(cr, fs);
    reach = bar_text(cr, x, y0 - 0.6 * fs, 0.0, "force (N)", draw);
    cairo_set_font_size(cr, 0.85 * fs);
    if (!(scale > 0))
        return fmax(reach, lx + fmax(bar_text(cr, x + lx, y1, 0.5, "0", draw), bar_text(cr, x + lx, y0, 0.5, "none", draw)));
    step = clc_draw_nice_step(scale, 4);
    /* nice ticks up to the scale, then the scale itself ("and above") */
    for (int k = 0; k * step < 0.88 * scale; ++k) {
        double y = y1 - (y1 - y0) * k * step / scale;
        snprintf(buf, sizeof buf, "%g", k * step);
        if (draw) {
            cairo_move_to(cr, x + bw, y);
            cairo_line_to(cr, x + bw + 0.3 * fs, y);
            cairo_stroke(cr);
        }
        reach = fmax(reach, lx + bar_text(cr, x + lx, y, 0.5, buf, draw));
    }
    snprintf(buf, sizeof buf, "\xe2\x89\xa5 %.3g", scale);   /* U+2265, greater-than or equal */
    return fmax(reach, lx + bar_text(cr, x + lx, y0, 0.5, buf, draw));
}

static void title_line(cairo_t *cr, const char *title, double x, double y, double room, double fs)
{
    cairo_text_extents_t te;
    cairo_set_font_size(cr, 1.1 * fs);
    cairo_text_extents(cr, title, &te);
    if (te.x_advance > room) cairo_set_font_size(cr, 1.1 * fs * room / te.x_advance);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    clc_draw_text(cr, x, y, 0.0, 1.0, title);
}

/* Everything cairo draws over the z-buffered picture: planes seen from
 * their solid side (in front of the free region, so in front of every
 * body) as dashed outlines, the colour bar and the title. */
static void overlay(cairo_t *cr, const view *V, const clcone_world *w, const double lo[3], const double hi[3],
                    double (*buf)[3], const char *title, double fs, double margin, double bar_x, double top,
                    double scale)
{
    double dash[2] = {6, 4};
    cairo_set_source_rgba(cr, RIM_COLOUR[0], RIM_COLOUR[1], RIM_COLOUR[2], 0.8);
    cairo_set_line_width(cr, 1.3);
    cairo_set_dash(cr, dash, 2, 0);
    for (int i = 0; i < w->nplanes; ++i) {
        double (*poly)[3];
        int n;
        if (clc_dot3(w->planes[i].normal, V->fwd) <= 0) continue;
        n = plane_face(w, i, lo, hi, buf, &poly);
        for (int k = 0; k < n; ++k) {
            double s[3];
            to_view(V, poly[k], s);
            if (k == 0) cairo_move_to(cr, s[0], s[1]);
            else cairo_line_to(cr, s[0], s[1]);
        }
        if (n) cairo_close_path(cr);
        cairo_stroke(cr);
    }
    cairo_set_dash(cr, NULL, 0, 0);
    colour_bar(cr, bar_x, top + 2 * fs, V->H - margin - fs, fs, scale, 1);
    if (title) title_line(cr, title, margin, 0.6 * fs, V->W - 2 * margin, fs);
}

clcone_status clcone_render_png(const char *path, const clcone_world *w, const double *r, int width, int height,
                                const char *title, clcone_error *err)
{
    CLCONE_REQUIRE(err, path);
    CLCONE_REQUIRE(err, w);
    view V;
    double lo2[2] = {DBL_MAX, DBL_MAX}, hi2[2] = {-DBL_MAX, -DBL_MAX}, lo[3], hi[3], scale, *force = NULL,
           L[3] = {-0.35, 0.5, -0.8}, (*buf)[3] = NULL;
    double fs = clc_draw_font_size(width, height), margin = fs, bar_w, top = title ? 2.2 * fs : 0;
    double area_w, area_h;
    size_t npix;
    cairo_surface_t *sf;
    cairo_t *cr;
    clcone_status st;
    unsigned char *data;
    int stride;
    if (!w) return clc_fail(err, CLCONE_EINVAL, "%s: no world to draw", path ? path : "(no file)");
    /* finite positions and sizes, unit normals: what the view fit needs */
    if ((st = clcone_world_validate(w, err))) {
        clc_error_prefix(err, "%s", path ? path : "(no file)");
        return st;
    }
    if ((st = clc_draw_begin(path, width, height, &sf, &cr, err))) return st;
    memset(&V, 0, sizeof V);
    V.W = width;
    V.H = height;
    V.fwd[0] = sin(AZIMUTH) * cos(ELEVATION);
    V.fwd[1] = cos(AZIMUTH) * cos(ELEVATION);
    V.fwd[2] = -sin(ELEVATION);
    V.right[0] = cos(AZIMUTH);
    V.right[1] = -sin(AZIMUTH);
    clc_cross3(V.right, V.fwd, V.up);
    for (int k = 0; k < 3; ++k) V.light[k] = L[k] / sqrt(clc_dot3(L, L));
    npix = (size_t)width * (size_t)height;
    V.z = clc_calloc(npix, sizeof *V.z, err, "depth buffer");
    V.rgb = V.z ? clc_calloc(3 * npix, 1, err, "picture") : NULL;
    force = V.rgb ? clc_calloc((size_t)w->s.nbodies + 1, sizeof *force, err, "body forces") : NULL;
    buf = force ? clc_calloc(2 * (10 + (size_t)w->nplanes), sizeof *buf, err, "plane outlines") : NULL;
    if (!buf) {
        st = CLCONE_ENOMEM;
        cairo_destroy(cr);
        cairo_surface_destroy(sf);
        goto out;
    }
    clc_world_body_forces(w, r, force);
    scale = colour_scale(force, w->s.nbodies);
    /* the colour bar's room: its widest label and a margin */
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    bar_w = fmax(6.5 * fs, colour_bar(cr, 0, 0, 1, fs, scale, 0) + margin);
    /* fit every body's bounding sphere and the planes' faces into the area
     * left of the colour bar and below the title */
    region(w, lo, hi);
    for (int i = 0; i < w->s.nbodies; ++i)
        grow(lo2, hi2, clc_dot3(w->s.bodies[i].x, V.right), clc_dot3(w->s.bodies[i].x, V.up),
             clcone_shape_bound(&w->shapes[i]));
    for (int i = 0; i < w->nplanes; ++i) {
        double (*poly)[3];
        int n = plane_face(w, i, lo, hi, buf, &poly);
        for (int k = 0; k < n; ++k) grow(lo2, hi2, clc_dot3(poly[k], V.right), clc_dot3(poly[k], V.up), 0);
    }
    if (lo2[0] > hi2[0]) grow(lo2, hi2, 0, 0, 1);
    area_w = fmax(1.0, width - bar_w - 2 * margin);
    area_h = fmax(1.0, height - top - 2 * margin);
    V.scale = fmin(area_w / fmax(hi2[0] - lo2[0], 1e-9), area_h / fmax(hi2[1] - lo2[1], 1e-9));
    V.cx = margin + 0.5 * area_w;
    V.cy = top + margin + 0.5 * area_h;
    V.uc = 0.5 * (lo2[0] + hi2[0]);
    V.vc = 0.5 * (lo2[1] + hi2[1]);
    /* background: a vertical grey gradient */
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            size_t i = (size_t)y * (size_t)width + (size_t)x;
            unsigned char g = (unsigned char)(235 - 40 * y / height);
            V.z[i] = FLT_MAX;
            V.rgb[3 * i] = V.rgb[3 * i + 1] = V.rgb[3 * i + 2] = g;
        }
    for (int i = 0; i < w->s.nbodies; ++i) {
        double col[3];
        colormap(scale > 0 ? force[i] / scale : 0.0, col);
        if (w->shapes[i].kind == CLCONE_SHAPE_SPHERE) draw_sphere(&V, w->s.bodies[i].x, w->shapes[i].size[0], col);
        else draw_box(&V, &w->s.bodies[i], &w->shapes[i], col);
    }
    /* translucent after the opaque bodies, so the depth test sees them */
    for (int i = 0; i < w->nplanes; ++i) {
        double (*poly)[3];
        int n;
        if (clc_dot3(w->planes[i].normal, V.fwd) > 0) continue;   /* seen from behind: outlined below */
        n = plane_face(w, i, lo, hi, buf, &poly);
        for (int k = 0; k < n; ++k) {
            double s[3];
            to_view(&V, poly[k], s);
            memcpy(poly[k], s, sizeof s);
        }
        fill_convex(&V, (const double (*)[3])poly, n, w->planes[i].normal, PLANE_COLOUR, PLANE_ALPHA);
    }
    cairo_surface_flush(sf);
    data = cairo_image_surface_get_data(sf);
    stride = cairo_image_surface_get_stride(sf);
    for (int y = 0; y < height; ++y) {
        uint32_t *row = (uint32_t *)(void *)(data + (size_t)y * (size_t)stride);
        for (int x = 0; x < width; ++x) {
            const unsigned char *p = V.rgb + 3 * ((size_t)y * (size_t)width + (size_t)x);
            row[x] = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        }
    }
    cairo_surface_mark_dirty(sf);
    overlay(cr, &V, w, lo, hi, buf, title, fs, margin, width - bar_w, top, scale);
    st = clc_draw_finish(path, sf, cr, err);
out:
    free(V.z);
    free(V.rgb);
    free(force);
    free(buf);
    return st;
}
