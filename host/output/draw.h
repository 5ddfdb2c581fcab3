/* Drawing helpers shared by the pictures (png.c) and the plots (plot.c):
 * a cairo image surface checked for errors, text placed by an anchor,
 * tick spacing, and the PNG written atomically. */
#ifndef CLCONE_DRAW_H
#define CLCONE_DRAW_H

#include <cairo.h>

#include <clcone/output.h>

/* Sides of every picture and plot. */
#define CLCONE_DRAW_MIN_SIDE 96
#define CLCONE_DRAW_MAX_SIDE 8192

/* Checks the size and that the directory of path exists (so that a
 * missing directory is named before anything is drawn), then creates an
 * RGB surface and its context. On failure both are NULL. */
clcone_status clc_draw_begin(const char *path, int width, int height, cairo_surface_t **surface, cairo_t **cr,
                                clcone_error *err);
/* Writes the surface to path (PNG through cairo's libpng writer,
 * atomically) and frees both. */
clcone_status clc_draw_finish(const char *path, cairo_surface_t *surface, cairo_t *cr, clcone_error *err);

/* Text whose anchor point (ax, ay in [0, 1] of the text's width and of its
 * height above the baseline) lands on (x, y). */
void clc_draw_text(cairo_t *cr, double x, double y, double ax, double ay, const char *text);
/* Font size that fits a width x height canvas. */
double clc_draw_font_size(int width, int height);
/* A step of 1, 2 or 5 times a power of ten giving about `ticks` ticks
 * over span (> 0). */
double clc_draw_nice_step(double span, int ticks);

#endif
