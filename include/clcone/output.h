/* clcone public API: VTK, pictures and plots. */
#ifndef CLCONE_API_OUTPUT_H
#define CLCONE_API_OUTPUT_H

#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output. Forces are impulses r / dt. */
/* Legacy VTK polydata of the bodies (points at the centres; point data
 * velocity, angular_velocity, size, orientation, shape, contact_force)
 * and of the contacts (a second file: force = r / dt in world
 * coordinates, normal, gap). r may be NULL. */
CLCONE_API clcone_status clcone_write_vtk(const char *bodies_path, const char *contacts_path,
                               const clcone_world *w, const double *r,
                               clcone_error *err);
/* ParaView collection of frames: files[k] at time times[k]. */
CLCONE_API clcone_status clcone_write_pvd(const char *path, int nframes,
                               const char *const *files, const double *times,
                               int parts, clcone_error *err);
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
