/* The 23 Siconos problems of tests/data/problems in their README's order: demo --siconos, tests. */
#ifndef CLCONE_SHARED_PROBLEMS_H
#define CLCONE_SHARED_PROBLEMS_H

static const char *const SHARED_PROBLEMS[] = {
    "FrictionContact3D_1c.dat", "FrictionContact3D_RR_1c.dat", "Rover11035.dat",
    "Rover4396.dat", "FC3D_Example1.dat", "FC3D_Example1_SBM.dat",
    "GFC3D_TwoRods1-condensed.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat",
    "Rover1039.dat", "Rover4144.dat", "Rover4493.dat", "Rover4622.dat",
    "Rover1040.dat", "Rover3865.dat", "Rover4609.dat", "NESpheres_10_1.dat",
    "OneObject-i1028-138.hdf5.dat", "OneObject-i100000-499.hdf5.dat",
    "BoxesStack1-i100000-32.hdf5.dat", "Confeti-ex03-Fc3D-SBM.dat",
    "Capsules-i101-404.dat", "Capsules-i100-1090.dat", "Capsules-i125-1213.hdf5",
};
#define NSHARED_PROBLEMS ((int)(sizeof SHARED_PROBLEMS / sizeof SHARED_PROBLEMS[0]))

#endif
