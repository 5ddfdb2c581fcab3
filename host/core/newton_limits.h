/* The dense Newton's limits, shared by the reference (ref/newton.c) and
 * the device (opencl/newton.c), which must refuse and fall back on
 * the same problems so that the two backends agree on which solver ran. */
#ifndef CLCONE_NEWTON_LIMITS_H
#define CLCONE_NEWTON_LIMITS_H

/* The most contacts a problem the dense Newton takes may have: at 512 an
 * LU costs (3n)^3/3 = 1.2 GFlop a step and J, its factors and J'J hold
 * 19 MB each (the largest shared problem has 286 contacts). */
#define CLCONE_NEWTON_REF_MAX_CONTACTS 512
/* The hybrid's sweeps run alone at tolerances from this one up. */
#define CLCONE_HYBRID_BELOW 1e-6

#endif
