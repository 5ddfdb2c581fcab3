/* libclcone_output's API (clcone-output.pc): pictures and plots (cairo), FCLib HDF5 problems;
 * not included by clcone.h. */
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

/* Sides of every picture and plot, in pixels. */
#define CLCONE_DRAW_MIN_SIDE 96
#define CLCONE_DRAW_MAX_SIDE 8192

/* CLCONE_OK where width x height is a size clcone_render_png and clcone_plot_png draw; else
 * CLCONE_EINVAL naming the sides' range: a caller that draws after a run can check first. */
CLCONE_API clcone_status clcone_check_picture_size(int width, int height, clcone_error *err);

/* A PNG of the world from -y, bodies coloured by their contact force (docs/library.md), title
 * (NULL: none) on top; width and height within CLCONE_DRAW_MIN_SIDE .. CLCONE_DRAW_MAX_SIDE. */
CLCONE_API clcone_status clcone_render_png(const char *path, const clcone_world *w,
                                const double *r, int width, int height,
                                const char *title, clcone_error *err);

/* Line plots as a PNG, panels on `columns` columns; points <= 0 on a log axis and non-finite
 * ones are left out (the line breaks). */
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
    const char *note;         /* non-NULL: a line in the middle of the plot (why it is empty) */
} clcone_plot_panel;

CLCONE_API clcone_status clcone_plot_png(const char *path, const char *title,
                              const clcone_plot_panel *panels, int npanels,
                              int columns, int width, int height,
                              clcone_error *err);

#ifdef __cplusplus
}
#endif
#endif
