/* The dense Newton's limit: a device's newton refuses past it, and both backends' hybrids hand larger problems to
 * the sparse second phase (the reference's newton is sparse and has none). */
#ifndef CLCONE_NEWTON_LIMITS_H
#define CLCONE_NEWTON_LIMITS_H

/* The most contacts of a problem the device's dense Newton takes (docs/measured.md). */
#define CLCONE_NEWTON_REF_MAX_CONTACTS 512
/* From this tolerance up a device's hybrid runs its sweeps alone for ccp and soft, whose acgs reaches it in double;
 * in float from the float default's tolerance up, tighter ones being near the float sweeps' rounding floor (a
 * 3,600-contact wall's ccp stood at 4.1e-6 after 60 s at 1e-6). coulomb's switch decides at any tolerance (why:
 * docs/measured.md). */
#define CLCONE_DEVICE_HYBRID_BELOW 1e-6
#define CLCONE_DEVICE_HYBRID_BELOW_FLOAT 1e-5

/* Whether a device's hybrid lets its switch stop a problem's sweeps at tol (for the kernel's Newton in double, the
 * host's in float, the host's second phase past the dense limit). coulomb's sweeps stall above loose tolerances: in
 * float a 12-contact pile at 3.3e-5 against the default's 1e-5, the rocks of bench/models at 20 s a step. */
static inline int clc_device_hybrid_switches(double tol, int coulomb, int dbl)
{
    return tol < (dbl ? CLCONE_DEVICE_HYBRID_BELOW : CLCONE_DEVICE_HYBRID_BELOW_FLOAT) || coulomb;
}

#endif
