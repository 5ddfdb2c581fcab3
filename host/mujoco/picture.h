/* A MuJoCo state drawn by clcone's renderer (`clcone mujoco --png`,
 * mujoco/picture.c). Built with the adapter. */
#ifndef CLCONE_MUJOCO_PICTURE_H
#define CLCONE_MUJOCO_PICTURE_H

#include <clcone/clcone.h>
#include <mujoco/mujoco.h>

/* d's geoms at their current place (as the last mj_step's kinematics
 * left them) as clcone_render_png draws a world: spheres, boxes, planes
 * as they are; a capsule as a row of spheres along its axis; a cylinder,
 * an ellipsoid and a mesh as the box around them (a mesh: its bounding
 * box); height fields and SDFs left out. A geom of the world body is
 * static; each body is coloured by the magnitude of its MuJoCo contact
 * forces (mj_contactForce). PNG of width x height at path, title on top. */
clcone_status clc_mj_render_png(const mjModel *m, const mjData *d, const char *path, int width, int height,
                                   const char *title, clcone_error *err);

#endif
