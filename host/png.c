/* A picture of a world without any viewer: an orthographic, z-buffered
 * rendering of spheres (per-pixel normals) and boxes (flat faces), Lambert
 * shaded, coloured by the contact force on each body, written as a PNG of
 * our own (stored deflate blocks, CRC-32 and Adler-32), so there is no
 * library to install. */
#include "internal.h"
#include "scene.h"
#include "world.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* View: looking along +y, turned 30 degrees about z and 25 down. */
#define AZIMUTH 0.52
#define ELEVATION 0.44
#define MARGIN_PX 20
#define MAX_SIDE 8192

typedef struct view {
    double right[3], up[3], fwd[3];
    double scale, ox, oy;   /* screen = (p . right - ox) * scale, ... */
    int W, H;
    float *z;
    unsigned char *rgb;
    double light[3];        /* towards the light, view coordinates */
} view;

static void to_view(const view *V, const double p[3], double out[3])
{
    out[0] = (clcone_dot3(p, V->right) - V->ox) * V->scale;
    out[1] = V->H - 1 - (clcone_dot3(p, V->up) - V->oy) * V->scale;   /* rows grow downward */
    out[2] = clcone_dot3(p, V->fwd) * V->scale;
}

static void colormap(double t, double c[3])
{
    static const double stops[5][3] = {
        {0.23, 0.30, 0.75}, {0.30, 0.65, 0.95}, {0.45, 0.85, 0.45}, {0.98, 0.80, 0.25}, {0.85, 0.15, 0.10}};
    double x = fmin(fmax(t, 0.0), 1.0) * 4.0;
    int k = x >= 4.0 ? 3 : (int)x;
    double f = x - k;
    for (int i = 0; i < 3; ++i) c[i] = stops[k][i] * (1 - f) + stops[k + 1][i] * f;
}

static void put(view *V, int x, int y, float z, const double col[3], double shade)
{
    size_t i = (size_t)y * (size_t)V->W + (size_t)x;
    if (z >= V->z[i]) return;
    V->z[i] = z;
    for (int k = 0; k < 3; ++k) V->rgb[3 * i + k] = (unsigned char)fmin(255.0, 255.0 * col[k] * shade + 0.5);
}

static double lambert(const view *V, const double n[3])
{
    return 0.35 + 0.65 * fmax(0.0, clcone_dot3(n, V->light));
}

static void draw_sphere(view *V, const double c[3], double r, const double col[3])
{
    double p[3];
    int x0, x1, y0, y1;
    to_view(V, c, p);
    r *= V->scale;
    x0 = (int)fmax(0, floor(p[0] - r));
    x1 = (int)fmin(V->W - 1, ceil(p[0] + r));
    y0 = (int)fmax(0, floor(p[1] - r));
    y1 = (int)fmin(V->H - 1, ceil(p[1] + r));
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            double dx = x + 0.5 - p[0], dy = y + 0.5 - p[1], d2 = dx * dx + dy * dy, dz, n[3];
            if (d2 > r * r) continue;
            dz = sqrt(r * r - d2);
            /* screen y grows downward: flip it back for the normal */
            n[0] = dx / r;
            n[1] = -dy / r;
            n[2] = -dz / r;
            put(V, x, y, (float)(p[2] - dz), col, lambert(V, n));
        }
}

static double edge(const double a[3], const double b[3], double x, double y)
{
    return (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
}

static void draw_triangle(view *V, const double *a, const double *b, const double *c, const double col[3], double shade)
{
    double area = edge(a, b, c[0], c[1]);
    int x0, x1, y0, y1;
    if (fabs(area) < 1e-12) return;
    x0 = (int)fmax(0, floor(fmin(a[0], fmin(b[0], c[0]))));
    x1 = (int)fmin(V->W - 1, ceil(fmax(a[0], fmax(b[0], c[0]))));
    y0 = (int)fmax(0, floor(fmin(a[1], fmin(b[1], c[1]))));
    y1 = (int)fmin(V->H - 1, ceil(fmax(a[1], fmax(b[1], c[1]))));
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
            double px = x + 0.5, py = y + 0.5;
            double wa = edge(b, c, px, py) / area, wb = edge(c, a, px, py) / area, wc = edge(a, b, px, py) / area;
            if (wa < 0 || wb < 0 || wc < 0) continue;
            put(V, x, y, (float)(wa * a[2] + wb * b[2] + wc * c[2]), col, shade);
        }
}

static void draw_box(view *V, const clcone_body *b, const clcone_shape *sh, const double col[3])
{
    double cw[8][3], cv[8][3], R[9];
    /* faces as corner indices (bit 0 x, bit 1 y, bit 2 z), by axis and sign */
    static const int faces[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
    clcone_quat_to_mat(sh->quat, R);
    for (int k = 0; k < 8; ++k) {
        clcone_box_corner(b, sh, k, cw[k]);
        to_view(V, cw[k], cv[k]);
    }
    for (int f = 0; f < 6; ++f) {
        int axis = f / 2;
        double sg = f % 2 ? 1.0 : -1.0, nw[3], nv[3];
        for (int k = 0; k < 3; ++k) nw[k] = sg * R[3 * k + axis];
        nv[0] = clcone_dot3(nw, V->right);
        nv[1] = clcone_dot3(nw, V->up);
        nv[2] = clcone_dot3(nw, V->fwd);
        if (nv[2] >= 0) continue;   /* facing away */
        draw_triangle(V, cv[faces[f][0]], cv[faces[f][1]], cv[faces[f][2]], col, lambert(V, nv));
        draw_triangle(V, cv[faces[f][0]], cv[faces[f][2]], cv[faces[f][3]], col, lambert(V, nv));
    }
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

/* ---- PNG ---- */

static unsigned long crc_table[256];
static int crc_ready;

static void crc_init(void)
{
    for (unsigned long n = 0; n < 256; ++n) {
        unsigned long c = n;
        for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320UL ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
    crc_ready = 1;
}

static unsigned long crc_update(unsigned long crc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static void be32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Writes a chunk whose data are given in pieces (so IDAT needs no copy). */
static int chunk(FILE *f, const char *type, const unsigned char *const *parts, const size_t *lens, int nparts)
{
    unsigned char b[4];
    unsigned long crc = 0xFFFFFFFFUL;
    size_t len = 0;
    for (int i = 0; i < nparts; ++i) len += lens[i];
    be32(b, (unsigned long)len);
    fwrite(b, 1, 4, f);
    fwrite(type, 1, 4, f);
    crc = crc_update(crc, (const unsigned char *)type, 4);
    for (int i = 0; i < nparts; ++i) {
        fwrite(parts[i], 1, lens[i], f);
        crc = crc_update(crc, parts[i], lens[i]);
    }
    be32(b, crc ^ 0xFFFFFFFFUL);
    fwrite(b, 1, 4, f);
    return ferror(f) ? -1 : 0;
}

typedef struct png_ctx {
    int W, H;
    const unsigned char *rgb;
} png_ctx;

static int write_png(void *file, const void *ctx)
{
    static const unsigned char sig[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
    const png_ctx *c = ctx;
    FILE *f = file;
    unsigned char ihdr[13], zhdr[2] = {0x78, 0x01}, adler[4];
    size_t row = 3 * (size_t)c->W + 1, total = row * (size_t)c->H, done = 0;
    unsigned long a = 1, b = 0;
    const unsigned char *p1[1];
    size_t l1[1];
    if (!crc_ready) crc_init();
    fwrite(sig, 1, 8, f);
    be32(ihdr, (unsigned long)c->W);
    be32(ihdr + 4, (unsigned long)c->H);
    ihdr[8] = 8;   /* bits per channel */
    ihdr[9] = 2;   /* RGB */
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    p1[0] = ihdr;
    l1[0] = 13;
    if (chunk(f, "IHDR", p1, l1, 1)) return -1;
    p1[0] = zhdr;
    l1[0] = 2;
    if (chunk(f, "IDAT", p1, l1, 1)) return -1;
    /* the filtered image (filter byte 0 per row) in stored blocks of at
     * most 65535 bytes, one IDAT chunk each */
    {
        unsigned char *blk = malloc(65535 + 5);
        if (!blk) return -1;
        while (done < total) {
            size_t n = total - done > 65535 ? 65535 : total - done;
            const unsigned char *pp[1];
            size_t ll[1];
            blk[0] = done + n == total ? 1 : 0;
            blk[1] = (unsigned char)(n & 0xff);
            blk[2] = (unsigned char)(n >> 8);
            blk[3] = (unsigned char)(~n & 0xff);
            blk[4] = (unsigned char)((~n >> 8) & 0xff);
            for (size_t k = 0; k < n; ++k) {
                size_t off = done + k, y = off / row, x = off % row;
                unsigned char v = x == 0 ? 0 : c->rgb[y * 3 * (size_t)c->W + x - 1];
                blk[5 + k] = v;
                a = (a + v) % 65521UL;
                b = (b + a) % 65521UL;
            }
            pp[0] = blk;
            ll[0] = n + 5;
            if (chunk(f, "IDAT", pp, ll, 1)) {
                free(blk);
                return -1;
            }
            done += n;
        }
        free(blk);
    }
    be32(adler, (b << 16) | a);
    p1[0] = adler;
    l1[0] = 4;
    if (chunk(f, "IDAT", p1, l1, 1)) return -1;
    if (chunk(f, "IEND", NULL, l1, 0)) return -1;
    return ferror(f) ? -1 : 0;
}

clcone_status clcone_render_png(const char *path, const clcone_world *w, const double *r, int width, int height,
                                clcone_error *err)
{
    view V;
    double lo[2] = {DBL_MAX, DBL_MAX}, hi[2] = {-DBL_MAX, -DBL_MAX}, fmaxv = 0, *force, L[3] = {-0.35, 0.5, -0.8};
    size_t npix;
    clcone_status st;
    png_ctx pc;
    if (width < 16 || height < 16 || width > MAX_SIDE || height > MAX_SIDE)
        return clcone_fail(err, CLCONE_EINVAL, "%s: picture size %d x %d must be within 16 .. %d", path, width, height,
                           MAX_SIDE);
    memset(&V, 0, sizeof V);
    V.W = width;
    V.H = height;
    V.fwd[0] = sin(AZIMUTH) * cos(ELEVATION);
    V.fwd[1] = cos(AZIMUTH) * cos(ELEVATION);
    V.fwd[2] = -sin(ELEVATION);
    V.right[0] = cos(AZIMUTH);
    V.right[1] = -sin(AZIMUTH);
    clcone_cross3(V.right, V.fwd, V.up);
    for (int k = 0; k < 3; ++k) V.light[k] = L[k] / sqrt(clcone_dot3(L, L));
    /* fit every body's bounding sphere */
    for (int i = 0; i < w->s.nbodies; ++i) {
        double rb = clcone_shape_bound(&w->shapes[i]), u = clcone_dot3(w->s.bodies[i].x, V.right),
               v = clcone_dot3(w->s.bodies[i].x, V.up);
        lo[0] = fmin(lo[0], u - rb);
        hi[0] = fmax(hi[0], u + rb);
        lo[1] = fmin(lo[1], v - rb);
        hi[1] = fmax(hi[1], v + rb);
    }
    if (w->s.nbodies == 0) lo[0] = lo[1] = -1, hi[0] = hi[1] = 1;
    V.scale = fmin((width - 2 * MARGIN_PX) / fmax(hi[0] - lo[0], 1e-9), (height - 2 * MARGIN_PX) / fmax(hi[1] - lo[1], 1e-9));
    V.ox = 0.5 * (lo[0] + hi[0]) - 0.5 * width / V.scale;
    V.oy = 0.5 * (lo[1] + hi[1]) - 0.5 * height / V.scale;
    npix = (size_t)width * (size_t)height;
    V.z = clcone_calloc(npix, sizeof *V.z, err, "depth buffer");
    V.rgb = V.z ? clcone_calloc(3 * npix, 1, err, "picture") : NULL;
    force = V.rgb ? clcone_calloc((size_t)w->s.nbodies + 1, sizeof *force, err, "body forces") : NULL;
    if (!force) {
        free(V.z);
        free(V.rgb);
        return CLCONE_ENOMEM;
    }
    /* background: a vertical grey gradient */
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            size_t i = (size_t)y * (size_t)width + (size_t)x;
            unsigned char g = (unsigned char)(235 - 40 * y / height);
            V.z[i] = FLT_MAX;
            V.rgb[3 * i] = V.rgb[3 * i + 1] = V.rgb[3 * i + 2] = g;
        }
    clcone_world_body_forces(w, r, force);
    fmaxv = colour_scale(force, w->s.nbodies);
    for (int i = 0; i < w->s.nbodies; ++i) {
        double col[3];
        colormap(fmaxv > 0 ? force[i] / fmaxv : 0.0, col);
        if (w->shapes[i].kind == CLCONE_SHAPE_SPHERE) draw_sphere(&V, w->s.bodies[i].x, w->shapes[i].size[0], col);
        else draw_box(&V, &w->s.bodies[i], &w->shapes[i], col);
    }
    pc.W = width;
    pc.H = height;
    pc.rgb = V.rgb;
    st = clcone_write_atomic(path, write_png, &pc, err);
    free(V.z);
    free(V.rgb);
    free(force);
    return st;
}
