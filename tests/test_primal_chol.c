/* The Cholesky factor of MuJoCo's Newton Hessian (ref/primal_chol.h), sparse
 * and dense, against a dense solve: factored afresh, after rank-one updates
 * and downdates (the incremental Hessian), and a downdate past positive
 * definiteness refused with the factor usable again afresh. */
#include "testutil.h"
#include "ref/primal_chol.h"
#include "cone.h"
#include "block_sets.h"

#define NV 9
#define NR 11

/* Three trees (3, 2 and 4 dofs, M dense and diagonally dominant); rows
 * 0-7 single rows of 2-5 dofs across the trees, rows 8-10 one cone. */
static void problem(clc_pproblem *p)
{
    static const int gs[] = {0, 3, 5, 9};
    unsigned long long x = 12345;
    clcone_error e;
    size_t nm = 9 + 4 + 16;
    int nnz = 0;
    ck_assert_int_eq(clc_pproblem_alloc(p, NV, NR, 9, NR * 5, nm, &e), CLCONE_OK);
    p->ng = 3;
    for (int g = 0; g < 3; ++g) {
        int n = gs[g + 1] - gs[g];
        p->goff[g + 1] = gs[g + 1];
        p->moff[g + 1] = p->moff[g] + n * n;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j <= i; ++j) {
                double v = i == j ? 4 + i : 0.5 / (1 + i + j);
                p->M[p->moff[g] + i * n + j] = p->M[p->moff[g] + j * n + i] = v;
            }
    }
    for (int r = 0; r < NR; ++r) {
        int k = 2 + r % 4, used[NV] = {0};
        for (int t = 0; t < k; ++t) {
            int c;
            do {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                c = (int)((x >> 33) % NV);
            } while (used[c]);
            used[c] = 1;
        }
        for (int c = 0; c < NV; ++c)
            if (used[c]) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                p->jc[nnz] = c;
                p->jv[nnz++] = ((double)(x >> 11) / 9007199254740992.0) * 2 - 1;
            }
        p->jp[r + 1] = nnz;
        p->R[r] = 0.25 + 0.1 * r;
    }
    for (int b = 0; b < 8; ++b) {
        p->off[b + 1] = b + 1;
        p->kind[b] = BLK_NONNEG;
    }
    p->off[9] = NR;
    p->kind[8] = BLK_CONE;
    p->mu[8] = 0.5;
    p->bound[9] = p->bound[10] = 1;
    p->scale = 1;
    p->ls_iterations = 50;
    p->ls_tolerance = 0.01;
}

/* Dense H = M + sum over the rows in `on` of J_r'J_r / R_r. */
static void dense_h(const clc_pproblem *p, const int *on, double H[NV][NV])
{
    memset(H, 0, sizeof(double) * NV * NV);
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) H[g0 + i][g0 + j] = p->M[p->moff[g] + i * n + j];
    }
    for (int r = 0; r < p->m; ++r)
        for (int a = p->jp[r]; on[r] && a < p->jp[r + 1]; ++a)
            for (int b = p->jp[r]; b < p->jp[r + 1]; ++b) H[p->jc[a]][p->jc[b]] += p->jv[a] * p->jv[b] / p->R[r];
}

typedef struct col_arg {
    const pchol *c;
    double (*H)[NV];
} col_arg;

static void column(void *arg, int j, double *w)
{
    const col_arg *a = arg;
    for (int i = j; i < NV; ++i) w[i] += a->H[a->c->orig[i]][a->c->orig[j]];
}

/* An nv x nv H held whole, by columns for the factor (many_trees_factor). */
typedef struct whole_h {
    const pchol *c;
    const double *H;
    int nv;
} whole_h;

static void whole_column(void *arg, int j, double *w)
{
    const whole_h *a = arg;
    for (int i = j; i < a->nv; ++i) w[i] += a->H[(size_t)a->c->orig[i] * a->nv + a->c->orig[j]];
}

/* H x = b by Gaussian elimination with partial pivoting (H is copied). */
static void dense_solve(double H[NV][NV], const double *b, double *x)
{
    double A[NV][NV + 1];
    for (int i = 0; i < NV; ++i) {
        memcpy(A[i], H[i], sizeof(double) * NV);
        A[i][NV] = b[i];
    }
    for (int k = 0; k < NV; ++k) {
        int piv = k;
        for (int i = k + 1; i < NV; ++i)
            if (fabs(A[i][k]) > fabs(A[piv][k])) piv = i;
        for (int j = 0; j <= NV; ++j) {
            double t = A[k][j];
            A[k][j] = A[piv][j];
            A[piv][j] = t;
        }
        for (int i = k + 1; i < NV; ++i)
            for (int j = NV; j >= k; --j) A[i][j] -= A[i][k] / A[k][k] * A[k][j];
    }
    for (int i = NV - 1; i >= 0; --i) {
        double t = A[i][NV];
        for (int j = i + 1; j < NV; ++j) t -= A[i][j] * x[j];
        x[i] = t / A[i][i];
    }
}

/* Row r's entries as positions, ascending, and their values. */
static int row_positions(const pchol *c, const clc_pproblem *p, int r, int *vi, double *vx)
{
    int n = 0;
    for (int pos = 0; pos < NV; ++pos)
        for (int e = p->jp[r]; e < p->jp[r + 1]; ++e)
            if (c->pd[p->jc[e]] == pos) {
                vi[n] = pos;
                vx[n++] = p->jv[e];
            }
    return n;
}

/* The factor's solve against the dense one for the rows in `on`. */
static void check_solve(const pchol *c, const clc_pproblem *p, const int *on, double tol)
{
    double H[NV][NV], b[NV], x[NV], want[NV], tmp[NV], err = 0, scale = 0;
    dense_h(p, on, H);
    for (int i = 0; i < NV; ++i) b[i] = 1 + 0.5 * i - 0.1 * i * i;
    dense_solve(H, b, want);
    clc_pchol_solve(c, b, x, tmp);
    for (int i = 0; i < NV; ++i) {
        err = fmax(err, fabs(x[i] - want[i]));
        scale = fmax(scale, fabs(want[i]));
    }
    ck_assert_msg(err <= tol * scale, "factor's solve off by %g (scale %g)", err, scale);
}

START_TEST(factor_updates_and_downdates)
{
    clc_pproblem p;
    pchol c;
    clcone_error e;
    double H[NV][NV], vx[NV];
    col_arg arg = {&c, H};
    int all[NR], half[NR], none[NR] = {0}, same[NR], vi[NV], n;
    problem(&p);
    ck_assert_msg(clc_pproblem_validate(&p, &e) == CLCONE_OK, "%s", e.msg);
    for (int r = 0; r < NR; ++r) same[r] = r && clc_pproblem_same_dofs(&p, r - 1, r);
    ck_assert_int_eq(clc_pchol_init(&c, &p, _i, same, &e), CLCONE_OK); /* _i: dense */
    ck_assert_int_eq(c.dense, _i);
    for (int r = 0; r < NR; ++r) {
        all[r] = 1;
        half[r] = r % 2;
    }
    /* afresh, every row on: the pattern holds every row, the cone's together */
    dense_h(&p, all, H);
    ck_assert_int_eq(clc_pchol_factor(&c, column, &arg, &e), CLCONE_OK);
    check_solve(&c, &p, all, 1e-13);
    /* from every row to the odd ones by downdates, then back by updates */
    for (int r = 0; r < NR; r += 2) {
        n = row_positions(&c, &p, r, vi, vx);
        ck_assert_int_eq(clc_pchol_update(&c, -1, vi, vx, n, sqrt(1 / p.R[r])), 1);
    }
    check_solve(&c, &p, half, 1e-11);
    for (int r = 0; r < NR; r += 2) {
        n = row_positions(&c, &p, r, vi, vx);
        ck_assert_int_eq(clc_pchol_update(&c, 1, vi, vx, n, sqrt(1 / p.R[r])), 1);
    }
    check_solve(&c, &p, all, 1e-11);
    ck_assert(c.cost > 0 && clc_pchol_path_cost(&c, 0) > 0);
    /* M alone less a row 100 times stronger than it: not positive definite */
    dense_h(&p, none, H);
    ck_assert_int_eq(clc_pchol_factor(&c, column, &arg, &e), CLCONE_OK);
    n = row_positions(&c, &p, 3, vi, vx);
    ck_assert_int_eq(clc_pchol_update(&c, -1, vi, vx, n, 100), 0);
    /* afresh again: the scatter vector was left clean */
    for (int i = 0; i < NV; ++i) ck_assert_double_eq(c.w[i], 0);
    ck_assert_int_eq(clc_pchol_factor(&c, column, &arg, &e), CLCONE_OK);
    check_solve(&c, &p, none, 1e-13);
    /* an indefinite H afresh: refused, naming a dof */
    H[0][0] = -1;
    ck_assert_int_eq(clc_pchol_factor(&c, column, &arg, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "not positive definite") && strstr(e.msg, "at dof 0 of 9"), "%s", e.msg);
    for (int i = 0; i < NV; ++i) ck_assert_double_eq(c.w[i], 0);
    clc_pchol_free(&c);
    clc_pproblem_free(&p);
}
END_TEST

/* More trees than a word of the group graph's bit sets (70: two words a
 * row), each of 1-3 dofs with M dense (a chain: the symbolic pass copies
 * a column from its child), in a ring of rows joining neighbours and a
 * few joining trees far apart: the sparse factor's solve against a
 * dense one, H and the solve checked by their residual. */
START_TEST(many_trees_factor)
{
    enum { NT = 70, ROWS = NT + 12 };
    clc_pproblem p;
    pchol c;
    clcone_error e;
    unsigned long long x = 777;
    int nv = 0, nnz = 0, same[ROWS], len[NT];
    size_t nm = 0;
    double *H, *b, *y, *tmp, err = 0, scale = 0;
    for (int t = 0; t < NT; ++t) {
        len[t] = 1 + t % 3;
        nv += len[t];
        nm += (size_t)len[t] * (size_t)len[t];
    }
    ck_assert_int_eq(clc_pproblem_alloc(&p, nv, ROWS, ROWS, ROWS * 6, nm, &e), CLCONE_OK);
    p.ng = NT;
    for (int t = 0; t < NT; ++t) {
        int n = len[t];
        p.goff[t + 1] = p.goff[t] + n;
        p.moff[t + 1] = p.moff[t] + n * n;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) p.M[p.moff[t] + i * n + j] = i == j ? 3 + i : 0.4 / (1 + i + j);
    }
    for (int r = 0; r < ROWS; ++r) {
        /* tree r and the next around the ring, then pairs far apart */
        int t0 = r < NT ? r : (r - NT) * 5, t1 = r < NT ? (r + 1) % NT : (t0 + 37) % NT, lo = t0 < t1 ? t0 : t1,
            hi = t0 < t1 ? t1 : t0;
        for (int k = 0; k < 2; ++k)
            for (int v = p.goff[k ? hi : lo]; v < p.goff[(k ? hi : lo) + 1]; ++v) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                p.jc[nnz] = v;
                p.jv[nnz++] = ((double)(x >> 11) / 9007199254740992.0) * 2 - 1;
            }
        p.jp[r + 1] = nnz;
        p.R[r] = 0.5;
        p.off[r + 1] = r + 1;
        p.kind[r] = BLK_NONNEG;
    }
    p.scale = 1;
    p.ls_iterations = 50;
    p.ls_tolerance = 0.01;
    ck_assert_msg(clc_pproblem_validate(&p, &e) == CLCONE_OK, "%s", e.msg);
    for (int r = 0; r < ROWS; ++r) same[r] = r && clc_pproblem_same_dofs(&p, r - 1, r);
    ck_assert_int_eq(clc_pchol_init(&c, &p, 0, same, &e), CLCONE_OK);
    H = calloc((size_t)nv * (size_t)nv, sizeof *H);
    b = calloc(3 * (size_t)nv, sizeof *b);
    ck_assert(H && b);
    y = b + nv;
    tmp = y + nv;
    for (int t = 0; t < NT; ++t)
        for (int i = 0; i < len[t]; ++i)
            for (int j = 0; j < len[t]; ++j)
                H[(size_t)(p.goff[t] + i) * nv + p.goff[t] + j] = p.M[p.moff[t] + i * len[t] + j];
    for (int r = 0; r < ROWS; ++r)
        for (int a = p.jp[r]; a < p.jp[r + 1]; ++a)
            for (int d = p.jp[r]; d < p.jp[r + 1]; ++d)
                H[(size_t)p.jc[a] * nv + p.jc[d]] += p.jv[a] * p.jv[d] / p.R[r];
    {
        whole_h arg = {&c, H, nv};
        ck_assert_int_eq(clc_pchol_factor(&c, whole_column, &arg, &e), CLCONE_OK);
    }
    for (int i = 0; i < nv; ++i) b[i] = 1 + 0.3 * (i % 7) - 0.05 * i;
    clc_pchol_solve(&c, b, y, tmp);
    for (int i = 0; i < nv; ++i) { /* b - H y */
        double r = b[i];
        for (int j = 0; j < nv; ++j) r -= H[(size_t)i * nv + j] * y[j];
        err = fmax(err, fabs(r));
        scale = fmax(scale, fabs(b[i]));
    }
    ck_assert_msg(err <= 1e-12 * scale, "the factor's solve leaves a residual of %g (scale %g)", err, scale);
    free(H);
    free(b);
    clc_pchol_free(&c);
    clc_pproblem_free(&p);
}
END_TEST

Suite *suite_primal_chol(void)
{
    Suite *s = suite_create("primal_chol");
    TCase *t = tcase_create("primal_chol");
    tcase_add_loop_test(t, factor_updates_and_downdates, 0, 2);
    tcase_add_test(t, many_trees_factor);
    suite_add_tcase(s, t);
    return s;
}
