/* Spectral bounds of W that both backends take their step sizes and
 * checks from. */
#include "core/analysis.h"
#include "cone.h"
#include "schedule.h"

#include <math.h>

void clc_sym3_eig_range(const double A0[9], double *lo, double *hi)
{
    double A[9], p1, qm, p2, pp, B[9], detB, rr, phi;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) A[3 * a + b] = 0.5 * (A0[3 * a + b] + A0[3 * b + a]);
    p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    qm = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 == 0.0) {
        *lo = fmin(A[0], fmin(A[4], A[8]));
        *hi = fmax(A[0], fmax(A[4], A[8]));
        return;
    }
    p2 = (A[0] - qm) * (A[0] - qm) + (A[4] - qm) * (A[4] - qm) + (A[8] - qm) * (A[8] - qm) + 2 * p1;
    pp = sqrt(p2 / 6.0);
    for (int i = 0; i < 9; ++i) B[i] = (A[i] - ((i % 4) == 0 ? qm : 0.0)) / pp;
    detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6])
           + B[2] * (B[3] * B[7] - B[4] * B[6]);
    rr = detB / 2.0;
    phi = rr <= -1 ? CONE_PI / 3.0 : rr >= 1 ? 0.0 : acos(rr) / 3.0;
    *hi = qm + 2 * pp * cos(phi);
    *lo = qm + 2 * pp * cos(phi + 2.0 * CONE_PI / 3.0);
}

int clc_diag_slot(const clcone_problem *p, int c)
{
    for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k)
        if (p->col[k] == c) return k;
    return -1;
}

double clc_row_block_norm(const clcone_problem *p, int c)
{
    double s = 0;
    for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
        double f = 0;
        for (int a = 0; a < 9; ++a) f += p->blocks[9 * k + a] * p->blocks[9 * k + a];
        s += sqrt(f);
    }
    return s;
}

double clc_lane_sum(const double *v, int n)
{
    double lane[CONE_REDUCE_WG];
    for (int l = 0; l < CONE_REDUCE_WG; ++l) {
        lane[l] = 0;
        for (int i = l; i < n; i += CONE_REDUCE_WG) lane[l] += v[i];
    }
    for (int w = CONE_REDUCE_WG / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
    return lane[0];
}
