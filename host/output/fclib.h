/* The FCLib HDF5 reader, for the CLI and the fuzz harness to hand to libclcone's readers. */
#ifndef CLCONE_OUTPUT_FCLIB_H
#define CLCONE_OUTPUT_FCLIB_H

#include <clcone/ext.h>

/* Reads /fclib_local of an in-memory FCLib HDF5 image; p is not validated beyond the structure. */
clcone_problem_parse_fn clc_parse_fclib_hdf5;

#endif
