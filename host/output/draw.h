/* Drawing helpers shared by the pictures (png.c) and the plots (plot.c). */
#ifndef CLCONE_DRAW_H
#define CLCONE_DRAW_H

#include <cairo.h>

#include <clcone/output.h>

/* Checks the size and path's directory before drawing, then makes an RGB surface and its
 * context (both NULL on failure). */
clcone_status clc_draw_begin(const char *path, int width, int height, cairo_surface_t **surface, cairo_t **cr,
                                clcone_error *err);
/* Writes the surface to path as PNG, atomically, and frees both. */
clcone_status clc_draw_finish(const char *path, cairo_surface_t *surface, cairo_t *cr, clcone_error *err);

/* Text whose anchor (ax, ay in [0, 1] of its width and height above the baseline) is (x, y). */
void clc_draw_text(cairo_t *cr, double x, double y, double ax, double ay, const char *text);
/* Font size that fits a width x height canvas. */
double clc_draw_font_size(int width, int height);
/* A 1, 2 or 5 times 10^k step giving about `ticks` ticks over span (> 0). */
double clc_draw_nice_step(double span, int ticks);

#endif
