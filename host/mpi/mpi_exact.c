/* Sums over ranks that do not depend on how many ranks there are or in
 * which order they add: every double is added exactly into a fixed-point
 * integer (32-bit limbs in int64 slots covering every finite double), the
 * ranks' integers are added by MPI_SUM (integer addition is associative,
 * so any reduction tree gives the same integer), and one deterministic
 * rounding turns the exact sum back into a double. The same terms on 1, 2
 * or 64 ranks give the same bits. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_parts.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bit 0 of limb 0 weighs 2^-XS_BIAS: below the least subnormal's
 * 2^-1074 by a 53-bit significand's width; the top limbs hold 2^1024
 * and the carries of 2^31 ranks' sums. */
#define XS_BIAS 1152
#define XS_LIMBS 72
#define XS_SLOTS (XS_LIMBS + 3) /* then the NaN, +inf and -inf counts */
#define XS_BASE 4294967296.0
/* adds between carries: each adds under 2^33 to a limb */
#define XS_BATCH (1 << 20)

static void xs_carry(int64_t *s)
{
    for (int i = 0; i < XS_LIMBS - 1; ++i) {
        int64_t c = s[i] >= 0 ? s[i] / 4294967296LL : -((-s[i] + 4294967295LL) / 4294967296LL);
        s[i] -= c * 4294967296LL;
        s[i + 1] += c;
    }
}

static void xs_add(int64_t *s, double x)
{
    int e, li, sh;
    uint64_t a, v0, v1;
    int64_t sg;
    if (isnan(x)) {
        s[XS_LIMBS]++;
        return;
    }
    if (isinf(x)) {
        s[x > 0 ? XS_LIMBS + 1 : XS_LIMBS + 2]++;
        return;
    }
    if (x == 0) return;
    /* x = m 2^(e - 53), m an integer below 2^53 (exact for subnormals too) */
    sg = x < 0 ? -1 : 1;
    a = (uint64_t)ldexp(fabs(frexp(x, &e)), 53);
    li = (e - 53 + XS_BIAS) / 32;
    sh = (e - 53 + XS_BIAS) % 32;
    v0 = (a & 0xffffffffu) << sh;
    v1 = (a >> 32) << sh;
    s[li] += sg * (int64_t)(v0 & 0xffffffffu);
    s[li + 1] += sg * (int64_t)((v0 >> 32) + (v1 & 0xffffffffu));
    s[li + 2] += sg * (int64_t)(v1 >> 32);
}

/* The exact sum (carried) rounded to a double in one fixed way. */
static double xs_value(int64_t *s)
{
    double sign = 1, v = 0;
    int top = -1;
    if (s[XS_LIMBS] || (s[XS_LIMBS + 1] && s[XS_LIMBS + 2])) return NAN;
    if (s[XS_LIMBS + 1]) return INFINITY;
    if (s[XS_LIMBS + 2]) return -INFINITY;
    xs_carry(s);
    if (s[XS_LIMBS - 1] < 0) {
        sign = -1;
        for (int i = 0; i < XS_LIMBS; ++i) s[i] = -s[i];
        xs_carry(s);
    }
    for (int i = XS_LIMBS - 1; i >= 0 && top < 0; --i)
        if (s[i]) top = i;
    /* three limbs carry 64 bits and more: enough for a double */
    for (int i = top; i >= 0 && i > top - 3; --i) v += ldexp((double)s[i], 32 * i - XS_BIAS);
    return sign * v;
}

clcone_status clc_mpi_exact_sums(MPI_Comm comm, const double *terms, const int *counted, int n, int K,
                                    double *sums, clcone_error *err)
{
    int64_t *s = calloc((size_t)K * XS_SLOTS, sizeof *s);
    int rc;
    if (!s) return clc_mpi_fail(err, CLCONE_ENOMEM, "out of memory for %d exact sums", K);
    for (int k = 0; k < K; ++k) {
        int64_t *sk = s + (size_t)k * XS_SLOTS;
        for (int c = 0, batch = 0; c < n; ++c) {
            if (!counted[c]) continue;
            xs_add(sk, terms[(size_t)K * c + k]);
            if (++batch == XS_BATCH) {
                xs_carry(sk);
                batch = 0;
            }
        }
        xs_carry(sk);
    }
    rc = MPI_Allreduce(MPI_IN_PLACE, s, K * XS_SLOTS, MPI_INT64_T, MPI_SUM, comm);
    for (int k = 0; k < K; ++k) sums[k] = xs_value(s + (size_t)k * XS_SLOTS);
    free(s);
    return rc == MPI_SUCCESS ? CLCONE_OK : clc_mpi_fail(err, CLCONE_EDEVICE, "MPI_Allreduce of the sums failed");
}
