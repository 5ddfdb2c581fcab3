/* The dense Newton's limits, one for both backends so that they refuse the same problems. */
#ifndef CLCONE_NEWTON_LIMITS_H
#define CLCONE_NEWTON_LIMITS_H

/* The most contacts of a problem the dense Newton takes (docs/measured.md). */
#define CLCONE_NEWTON_REF_MAX_CONTACTS 512
/* From this tolerance up a device's hybrid runs its sweeps alone, but for coulomb in double and coulomb's problems
 * past the dense limit; the reference's switch decides at any tolerance (why: docs/measured.md). */
#define CLCONE_DEVICE_HYBRID_BELOW 1e-6

/* Whether a device's hybrid lets its switch stop a problem's sweeps (for its Newton within the dense limit, for
 * the host's second phase past it) at tol, in double or float. Float Newton at loose tolerances took seconds where
 * the sweeps took milliseconds; past the limit the host's second phase runs in double on either device, and the
 * float sweeps stall there above coulomb's loose tolerances (the rocks of bench/models at 1e-5: 20 s a step). */
static inline int clc_device_hybrid_switches(double tol, int dbl, int coulomb, int past)
{
    return tol < CLCONE_DEVICE_HYBRID_BELOW || (coulomb && (dbl || past));
}

#endif
