/* libclcone_output's API (clcone-output.pc): pictures and plots (cairo)
 * and FCLib HDF5 problems (HDF5), the formats whose libraries a solver
 * does not need, kept out of libclcone. Not included by clcone.h. */
#ifndef CLCONE_API_OUTPUT_H
#define CLCONE_API_OUTPUT_H

#include "clcone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An FCLib HDF5 local problem, or what clcone_read_problem reads. */
CLCONE_API clcone_status clcone_read_problem_hdf5(const char *path, clcone_problem *p, clcone_error *err);
/* clcone_read_input, FCLib HDF5 local problems too. */
CLCONE_API clcone_status clcone_read_input_hdf5(const char *path, clcone_input *in, clcone_error *err);

/* Orthographic picture of the world seen from the -y side, a little from
 * above; bodies shaded and coloured by the magnitude of the contact force
 * on them (blue = none, red = the 98th percentile and above, with a
 * colour bar in newtons), the static planes as translucent surfaces
 * clipped to the region around the bodies (planes seen from behind as
 * outlines), and `title` (NULL = none) on top. PNG (RGB, compressed),
 * width x height within 64 .. 8192. */
CLCONE_API clcone_status clcone_render_png(const char *path, const clcone_world *w,
                                const double *r, int width, int height,
                                const char *title, clcone_error *err);

/* Line plots as a PNG: panels on a grid of `columns` columns, each with
 * its axes (linear or log), series and an optional dashed reference line
 * (a tolerance). On a log axis points <= 0 are left out; non-finite
 * points are left out everywhere (the line breaks there). */
typedef struct clcone_plot_series {
    const char *label;   /* legend entry, NULL = none */
    int n;
    const double *x, *y; /* n points each */
} clcone_plot_series;

typedef struct clcone_plot_panel {
    const char *title, *xlabel, *ylabel;  /* each may be NULL */
    int xlog, ylog;
    int nseries;
    const clcone_plot_series *series;
    const char *hline_label;  /* non-NULL: a dashed line at y = hline */
    double hline;
    const char *note;         /* non-NULL: a line written in the middle of
                                 the plot area (why it is empty, say) */
} clcone_plot_panel;

CLCONE_API clcone_status clcone_plot_png(const char *path, const char *title,
                              const clcone_plot_panel *panels, int npanels,
                              int columns, int width, int height,
                              clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
