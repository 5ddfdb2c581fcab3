/* clcone: frictional contact problems solved on OpenCL devices.
 *
 * Public API. Every function that can fail returns a clcone_status and, when
 * given a non-NULL clcone_error, fills it with a message naming what failed
 * and where (contact, body, row, file line). The library never prints and
 * never exits.
 *
 * Conventions (Siconos/FCLib local form): a problem has n contacts, each with
 * a 3-vector in its contact frame, normal component first: r = (r_n, r_t1,
 * r_t2). The relative velocity is u = W r + q, W being 3n x 3n and stored as
 * 3x3 blocks in block-CSR.
 *
 * This umbrella header includes every topic header of include/clcone/:
 * base.h (version, status, errors), problem.h, scene.h (body form),
 * solve.h (options, results, solves, plans), device.h (OpenCL), measure.h,
 * files.h, world.h (with VTK output) and sim.h (time stepping). output.h
 * (pictures, plots, HDF5) is libclcone_output's, ext.h the extension API:
 * neither is included here. */
#ifndef CLCONE_H
#define CLCONE_H

#include "base.h"
#include "problem.h"
#include "scene.h"
#include "solve.h"
#include "device.h"
#include "measure.h"
#include "files.h"
#include "world.h"
#include "sim.h"

#endif
