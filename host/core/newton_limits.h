/* The dense Newton's limits, one for both backends so that they refuse the same problems. */
#ifndef CLCONE_NEWTON_LIMITS_H
#define CLCONE_NEWTON_LIMITS_H

/* The most contacts of a problem the dense Newton takes (docs/measured.md). */
#define CLCONE_NEWTON_REF_MAX_CONTACTS 512
/* The hybrid's sweeps run alone at tolerances from this one up. */
#define CLCONE_HYBRID_BELOW 1e-6

#endif
