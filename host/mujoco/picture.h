/* A MuJoCo state drawn by clcone's renderer (`clcone mujoco --png`); built with the adapter. */
#ifndef CLCONE_MUJOCO_PICTURE_H
#define CLCONE_MUJOCO_PICTURE_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

/* d's geoms as the last mj_step left them, drawn as clcone_render_png draws a world (the
 * shapes: docs/mujoco.md), into a width x height PNG at path, title on top. */
clcone_status clc_mj_render_png(const mjModel *m, const mjData *d, const char *path, int width, int height,
                                   const char *title, clcone_error *err);

#endif
