/* What host/opencl/primal.c and kernels/primal.cl agree on for MuJoCo's
 * primal problem (core/primal.h): the rows' zones, the largest cone, and
 * the batch's layout on the device. */
#ifndef CLCONE_PRIMAL_LAYOUT_H
#define CLCONE_PRIMAL_LAYOUT_H

/* A row's zone, in the order of MuJoCo's mjtConstraintState. */
#define PRIMAL_SATISFIED 0
#define PRIMAL_QUADRATIC 1
#define PRIMAL_LINEARNEG 2
#define PRIMAL_LINEARPOS 3
#define PRIMAL_CONE 4

/* Largest cone block (MuJoCo's condim 6). */
#define PRIMAL_CONE_MAX 6

/* The batch's three buffers, each a run of regions: the ints (the
 * layout, J's structure, the factor's pattern; the zones and outcomes
 * written back), the reals (the problems' values; the iterate, forces
 * and errors written back) and the kernel's scratch. The ints begin
 * with every region's offset in its buffer, PQ_N of them. */
#define PQ_INFO 0
#define PQ_OFF 1
#define PQ_KIND 2
#define PQ_JP 3
#define PQ_CP 4
#define PQ_POFF 5
#define PQ_DOFF 6
#define PQ_ROWBLK 7
#define PQ_JC 8
#define PQ_CR 9
#define PQ_PAT 10
#define PQ_MT 11
#define PQ_POS 12
#define PQ_LP 13
#define PQ_LI 14
#define PQ_STATE 15
#define PQ_OUT 16
#define PQ_MU 17 /* the reals */
#define PQ_PRM 18
#define PQ_M 19
#define PQ_JV 20
#define PQ_CV 21
#define PQ_DIN 22
#define PQ_RIN 23
#define PQ_A 24
#define PQ_F 25
#define PQ_OUTR 26
#define PQ_H 27 /* the scratch */
#define PQ_DJ 28
#define PQ_DV 29
#define PQ_RV 30
#define PQ_BLK 31
#define PQ_N 32

/* A problem's ints: its first dof, dofs, first row, rows, first block,
 * blocks, its nv x nv blocks' offset (M, H), its line search's
 * evaluations at most, the offsets of its J entries (by rows and by
 * dofs alike), of its blocks' patterns (the dofs a block's rows move,
 * ascending), of its blocks' D J (a block's rows over its pattern) and
 * of its M's blocks (a tree's n x n, row-major; each dof's three ints
 * from 3 d0 give its tree's first dof, end and the offset o of its row:
 * M's (i, j) at o + j), and of its factor's pattern: each dof's position
 * (nv from d0), L's columns' offsets (nv + 1 from d0 + k) and rows, each
 * column's diagonal first, then its rows ascending (positions).
 * Its row offsets of J (m + 1) start at r0 + k for problem k, its dof
 * offsets (nv + 1) at d0 + k, its blocks' pattern and D J offsets
 * (nb + 1 each) at b0 + k, as the blocks' row offsets do. */
#define PI_D0 0
#define PI_NV 1
#define PI_R0 2
#define PI_M 3
#define PI_B0 4
#define PI_NB 5
#define PI_HOFF 6
#define PI_LS 7
#define PI_NZ0 8
#define PI_PT0 9
#define PI_DJ0 10
#define PI_MB0 11
#define PI_LI0 12
#define PI_N 13

/* The batch's dof vectors besides the iterate (a region of its own,
 * nd reals), a slot of nd reals each (the batch's dofs; a problem's nv
 * from d0 in each): M a, the gradient, H^-1 grad, the direction, M s,
 * the triangular solve's middle and the factor's diagonal. */
#define PD_MA 0
#define PD_GRAD 1
#define PD_MG 2
#define PD_S 3
#define PD_MV 4
#define PD_TMP 5
#define PD_DIAG 6
#define PD_N 7

/* Its row vectors in the scratch, nr reals each (a problem's m from
 * r0): J a - a_ref, J s, and the line search's quadratics (3 nr, a
 * problem's 3 m from 3 r0); the forces have their region (PQ_F). */
#define PR_X 0
#define PR_JV 1
#define PR_QUAD 2
#define PR_N 5

/* A block's reals: a cone's middle-zone Hessian, its line search terms,
 * the block's cost. */
#define PB_HC 0
#define PB_CQ (PRIMAL_CONE_MAX * PRIMAL_CONE_MAX)
#define PB_COST (PB_CQ + 6)
#define PB_N (PB_COST + 1)

/* A problem's outcome: how it stopped (PS_*), iterations, the pivot
 * that was not positive; and its reals: the error and the cost. */
#define PO_STOP 0
#define PO_ITERS 1
#define PO_PIVOT 2
#define PO_N 3
#define PS_TOL 1
#define PS_ITERS 2
#define PS_NONFINITE 3
#define PS_NO_DECREASE 4
#define PS_NOT_PD 5

#endif
