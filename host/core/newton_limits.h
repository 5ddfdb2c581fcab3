/* The dense Newton's limits, one for both backends so that they refuse the same problems. */
#ifndef CLCONE_NEWTON_LIMITS_H
#define CLCONE_NEWTON_LIMITS_H

/* The most contacts of a problem the dense Newton takes (docs/measured.md). */
#define CLCONE_NEWTON_REF_MAX_CONTACTS 512
/* From this tolerance up a device's hybrid runs its sweeps alone, but for coulomb in double; the reference's
 * switch decides at any tolerance (why: docs/measured.md). */
#define CLCONE_DEVICE_HYBRID_BELOW 1e-6

#endif
