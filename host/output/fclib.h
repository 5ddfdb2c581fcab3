/* The FCLib HDF5 reader (output/hdf5.c), for what hands it to libclcone's
 * readers from outside libclcone_output: the CLI and the fuzz harness. */
#ifndef CLCONE_OUTPUT_FCLIB_H
#define CLCONE_OUTPUT_FCLIB_H

#include <clcone/ext.h>

/* Reads /fclib_local of an FCLib HDF5 file image held in memory; p is not
 * validated beyond the file structure. */
clcone_problem_parse_fn clc_parse_fclib_hdf5;

#endif
