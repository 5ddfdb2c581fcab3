/* The MuJoCo adapter (mujoco/adapter.h). MuJoCo's dual at a state is
 * min 1/2 f'(A + R) f + f'(J qacc_smooth - aref) over the rows' sets, A =
 * J M^-1 J'. An elliptic contact of condim 3 has the dual cone
 * ||(f1, f2)|| <= friction[0] f0 (its rows normal, tangent, tangent; impratio
 * only scales R of the tangent rows): clcone's K_mu with mu = friction[0],
 * and the whole problem is clcone's soft model with R = efc_R and
 * a_ref = efc_aref given. A joint or tendon limit or a frictionless
 * contact (f >= 0) is a block with mu = 0, whose two idle rows the cone
 * holds at 0. That is the 3-row form; the soft model takes the
 * general-block form (mujoco/general.c) when some row does not fit it. */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/mj_common.h"
#include "mujoco/guard.h"
#include "mujoco/mj_primal.h"
#include "mujoco/hard_aref.h"
#include "core/internal.h"
#include "solve/blocks_solve.h"
#include "solve/solve_entries.h"
#include "cone.h"
#include "block_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block's identity from step to step, for the warm start: a contact by
 * its geom pair and its rank among that pair's contacts, a limit by its
 * constraint type and object. */
typedef struct mj_key {
    int type, a, b, rank;
} mj_key;

/* A block's key and forces (MuJoCo's rows of it, n of them); the key
 * first, so that cmp_key compares both. */
typedef struct mj_warm {
    mj_key k;
    int n;
    double r[BLK_MAX_ROWS];
} mj_warm;

struct clc_mujoco {
    clcone_context *ctx;
    clcone_options o;
    char label[256];
    int hard; /* coulomb: a state on the general-block form goes to the primal form's proximal rounds */
    int nprev;
    mj_warm *prev; /* last step's blocks, sorted by key */
};

/* Rows of row i's block in the 3-row form: 3 for an elliptic condim-3
 * contact with one friction coefficient, 1 for a limit or frictionless
 * contact, 0 for a row it does not hold (the general-block form,
 * mujoco/general.c, does). */
static int block_rows(const mjData *d, int i)
{
    switch (d->efc_type[i]) {
    case mjCNSTR_LIMIT_JOINT:
    case mjCNSTR_LIMIT_TENDON:
    case mjCNSTR_CONTACT_FRICTIONLESS: return 1;
    case mjCNSTR_CONTACT_ELLIPTIC: {
        const mjContact *c = &d->contact[d->efc_id[i]];
        return c->dim == 3 && c->friction[0] == c->friction[1] ? 3 : 0;
    }
    default: return 0;
    }
}

/* Rows a MuJoCo constraint takes: an elliptic contact its dim, a
 * pyramidal one 2 (dim - 1), everything else 1. */
static int mj_rows(const mjData *d, int i)
{
    const mjContact *c = d->efc_type[i] >= mjCNSTR_CONTACT_PYRAMIDAL ? &d->contact[d->efc_id[i]] : NULL;
    if (!c) return 1;
    return d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC ? c->dim : (c->dim > 1 ? 2 * (c->dim - 1) : 1);
}

/* CLCONE_ENOTSUP naming every unsupported kind with its count, or OK. */
static clcone_status check_rows(const mjData *d, const char *label, clcone_error *err)
{
    /* per mjtConstraint, and elliptic contacts per condim (1, 3, 4, 6) */
    int count[mjCNSTR_CONTACT_ELLIPTIC + 1] = {0}, ell[7] = {0}, first = -1;
    char list[600] = "";
    size_t len = 0;
    for (int i = 0; i < d->nefc; i += mj_rows(d, i)) {
        if (block_rows(d, i)) continue;
        if (first < 0) first = i;
        if (d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) {
            const mjContact *c = &d->contact[d->efc_id[i]];
            ++ell[c->dim >= 1 && c->dim <= 6 ? c->dim : 0];
        } else ++count[d->efc_type[i]];
    }
    if (first < 0) return CLCONE_OK;
    for (int t = 0; t < mjCNSTR_CONTACT_ELLIPTIC; ++t)
        if (count[t] && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s: %d", len ? ", " : "", clc_mj_row_kind(t), count[t]);
    for (int k = 0; k < 7; ++k)
        if (ell[k] && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%selliptic contact of condim %d%s: %d",
                                    len ? ", " : "", k, k == 3 ? " with two friction coefficients" : "", ell[k]);
    return clc_fail(err, CLCONE_ENOTSUP,
                       "%s: constraints the 3-row form (--model coulomb) does not hold (kind: count) %s; the first at "
                       "row %d of %d; it holds elliptic contacts of condim 3 with one friction coefficient, "
                       "frictionless contacts, joint and tendon limits; coulomb's default solver takes every "
                       "kind on the primal form (--solver apgd the general-block form, when the state has no "
                       "elliptic contact); --model soft solves every kind",
                       label, list, first, d->nefc);
}

/* The blocks of d's rows: row[b] their first row, nrow[b] 1 or 3. */
static int count_blocks(const mjData *d, int *row, int *nrow)
{
    int nb = 0;
    for (int i = 0; i < d->nefc; i += block_rows(d, i)) {
        if (row) {
            row[nb] = i;
            nrow[nb] = block_rows(d, i);
        }
        ++nb;
    }
    return nb;
}

static int find_block(const clcone_problem *p, int i, int j)
{
    const int *c = bsearch(&j, p->col + p->row_ptr[i], (size_t)(p->row_ptr[i + 1] - p->row_ptr[i]), sizeof j, clc_mj_cmp_int);
    return c ? (int)(c - p->col) : -1;
}

/* W's values: A_rs = J_r . (M^-1 J_s') on the blocks' real rows, computed
 * once per pair (b <= c) and mirrored, so W is symmetric to the bit; an
 * idle row's diagonal is its block's normal diagonal (W_nn > 0 and the
 * step sizes of the normal row). */
/* The 3-row form's structure: A's block-CSR copied into p. */
static clcone_status structure(const mjModel *m, const clc_mj_rows *J, int nb, const int *row, const int *nrow,
                               clcone_problem *p, clcone_error *err)
{
    int *rp, *cl, nnzb;
    clcone_status s = clc_mj_structure(m, J, nb, row, nrow, &rp, &cl, &nnzb, err);
    if (!s && !(s = clcone_problem_alloc(p, nb, nnzb, err))) {
        memcpy(p->row_ptr, rp, sizeof *rp * ((size_t)nb + 1));
        memcpy(p->col, cl, sizeof *cl * (size_t)nnzb);
    }
    free(rp);
    free(cl);
    return s;
}

static void fill_w(const clc_mj_rows *J, const int *row, const int *nrow, clcone_problem *p)
{
    for (int b = 0; b < p->n; ++b)
        for (int k = p->row_ptr[b]; k < p->row_ptr[b + 1]; ++k) {
            int c = p->col[k], t;
            if (c < b) continue;
            t = find_block(p, c, b);
            for (int x = 0; x < nrow[b]; ++x)
                for (int y = 0; y < nrow[c]; ++y) {
                    double s = clc_mj_dot(J, row[b] + x, row[c] + y);
                    p->blocks[9 * (size_t)k + 3 * x + y] = s;
                    p->blocks[9 * (size_t)t + 3 * y + x] = s;
                }
            if (c == b && nrow[b] == 1) p->blocks[9 * (size_t)k + 4] = p->blocks[9 * (size_t)k + 8] = p->blocks[9 * (size_t)k];
        }
}

clcone_status clc_mujoco_problem(const mjModel *m, mjData *d, int coulomb, const char *label, clcone_problem *p,
                                    double **R, double **aref, int **row, clcone_error *err)
{
    int nefc = d->nefc, nb, *nrow = NULL;
    clc_mj_rows J = {0};
    clcone_status s;
    memset(p, 0, sizeof *p);
    *R = *aref = NULL;
    *row = NULL;
    if ((s = check_rows(d, label, err))) return s;
    if (nefc == 0) return clc_fail(err, CLCONE_EINVAL, "%s: no constraint rows at this state", label);
    nb = count_blocks(d, NULL, NULL);
    s = CLCONE_ENOMEM;
    *row = clc_calloc((size_t)nb, sizeof **row, err, "block rows");
    nrow = clc_calloc((size_t)nb, sizeof *nrow, err, "block sizes");
    *R = clc_calloc(3 * (size_t)nb, sizeof **R, err, "R");
    *aref = clc_calloc(3 * (size_t)nb, sizeof **aref, err, "a_ref");
    if (!*row || !nrow || !*R || !*aref) goto out;
    count_blocks(d, *row, nrow);
    if ((s = clc_mj_rows_build(m, d, label, &J, err))) goto out;
    if ((s = structure(m, &J, nb, *row, nrow, p, err))) goto out;
    fill_w(&J, *row, nrow, p);
    for (int b = 0; b < nb; ++b) {
        int r0 = (*row)[b], contact = d->efc_type[r0] >= mjCNSTR_CONTACT_FRICTIONLESS;
        p->mu[b] = nrow[b] == 3 ? d->contact[d->efc_id[r0]].friction[0] : 0.0;
        for (int x = 0; x < nrow[b]; ++x) {
            double Ri = d->efc_R[r0 + x], ai = d->efc_aref[r0 + x];
            p->q[3 * b + x] = J.jqs[r0 + x];
            if (!coulomb) {
                (*R)[3 * b + x] = Ri;
                (*aref)[3 * b + x] = ai;
                continue;
            }
            /* exact Coulomb on contacts; a limit keeps MuJoCo's R, in W */
            p->q[3 * b + x] -= ai;
            if (!contact) p->blocks[9 * (size_t)find_block(p, b, b) + 4 * x] += Ri;
        }
    }
    if ((s = clcone_problem_validate(p, err))) clc_mj_state_error(s, label, err);
out:
    free(nrow);
    clc_mj_rows_free(&J);
    if (s) {
        clcone_problem_free(p);
        free(*R);
        free(*aref);
        free(*row);
        *R = *aref = NULL;
        *row = NULL;
    }
    return s;
}

/* The forms MuJoCo's problem comes in: the 3-row form where every row is
 * a contact's, else the general-block form; the primal one for the
 * solvers that take it. */
#define MUJOCO_FORMS                                                                                         \
    (CLCONE_FORM_BIT(CLCONE_FORM_LOCAL) | CLCONE_FORM_BIT(CLCONE_FORM_BLOCKS) | CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL))

/* Whether a form of MuJoCo's problem runs solver s for model m on the
 * reference or on a device (dev), by the library's table: a solver of
 * the primal form is solved there (begin_primal's rule), so its row
 * decides. */
static int solver_runs(clcone_model m, clcone_solver s, int dev)
{
    const clcone_offer *f;
    unsigned forms = MUJOCO_FORMS;
    if (s == CLCONE_SOLVER_DEFAULT) return 1;
    for (int i = 0; (f = clcone_offer_at(i)) != NULL; ++i)
        if ((f->forms & CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL)) && f->model == m && f->solver == s)
            forms = CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL);
    for (int i = 0; (f = clcone_offer_at(i)) != NULL; ++i)
        if ((f->forms & forms) && f->model == m && f->solver == s && (dev ? f->device : f->reference)) return 1;
    return 0;
}

clcone_status clc_mujoco_check_solver(const clcone_options *o, int device, int flags, clcone_error *err)
{
    static const char *const what[] = {[CLCONE_FORM_LOCAL] = "on the 3-row form",
                                       [CLCONE_FORM_BLOCKS] = "on the general-block form",
                                       [CLCONE_FORM_PRIMAL] = "on its primal problem"};
    const clcone_form forms[] = {CLCONE_FORM_LOCAL, CLCONE_FORM_BLOCKS, CLCONE_FORM_PRIMAL};
    const char *dash = flags ? "--" : "";
    char offers[300], why[sizeof err->msg];
    int n, listed = 0;
    if (solver_runs(o->model, o->solver, device)) return CLCONE_OK;
    n = snprintf(why, sizeof why, "%ssolver %s: MuJoCo's problem (%smodel %s) is solved %s by", dash,
                 clcone_solver_name(o->solver), dash, clcone_model_name(o->model),
                 device ? "on a device" : "on the reference");
    for (int k = 0; k < 3 && n > 0 && (size_t)n < sizeof why; ++k) {
        clcone_offers_describe(CLCONE_FORM_BIT(forms[k]), o->model, device, offers, sizeof offers);
        if (offers[0])
            n += snprintf(why + n, sizeof why - (size_t)n, "%s %s %s", listed++ ? ";" : "", offers, what[forms[k]]);
    }
    if (device && solver_runs(o->model, o->solver, 0) && n > 0 && (size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n, "; %s runs on the reference only (%s)",
                 clcone_solver_name(o->solver), flags ? "--device ref" : "device 'ref'");
    return clc_fail(err, CLCONE_ENOTSUP, "%s", why);
}

clcone_status clc_mujoco_check_options(const clcone_options *o, int device, clcone_error *err)
{
    clcone_status s;
    if (o->model != CLCONE_MODEL_SOFT && o->model != CLCONE_MODEL_COULOMB)
        return clc_fail(err, CLCONE_ENOTSUP, "MuJoCo's problem is solved with the soft model (MuJoCo's own R and "
                                                "a_ref) or coulomb (R = 0 on contacts), not %s",
                           clcone_model_name(o->model));
    return (s = clc_mujoco_check_solver(o, device, 0, err)) ? s : clc_stopping_check(o, err);
}

clcone_status clc_mujoco_create(clcone_context *ctx, const clcone_options *o, const char *label,
                                   clc_mujoco **out, clcone_error *err)
{
    clc_mujoco *a;
    clcone_options primal;
    clcone_status s;
    *out = NULL;
    if ((s = clc_mujoco_check_options(o, ctx != NULL, err))) return s;
    a = clc_calloc(1, sizeof *a, err, "the MuJoCo adapter");
    if (!a) return CLCONE_ENOMEM;
    a->ctx = ctx;
    a->o = *o;
    /* the primal form's default, where the table has one on this backend,
     * comes first: MuJoCo's Newton beats apgd and pgs on the reference on
     * every model measured (docs/mujoco.md) */
    primal = *o;
    if (o->solver == CLCONE_SOLVER_DEFAULT && clc_contract_resolve(CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL), &primal, ctx)
        && o->model == CLCONE_MODEL_SOFT)
        a->o.solver = primal.solver;
    /* coulomb keeps its solver for the 3-row form, whose default is the
     * hybrid, and takes the primal form's where it has one (newton) */
    a->hard = o->model == CLCONE_MODEL_COULOMB
              && clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL), o->model, primal.solver);
    snprintf(a->label, sizeof a->label, "%s", label ? label : "MuJoCo model");
    /* a device's kernel built now, not in the first step's solve */
    if ((a->hard || clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL), a->o.model, a->o.solver))
        && (s = clc_solve_primal_prepare(ctx, &primal, err))) {
        clc_error_prefix(err, "%s", a->label);
        clc_mujoco_free(a);
        return s;
    }
    *out = a;
    return CLCONE_OK;
}

void clc_mujoco_free(clc_mujoco *a)
{
    if (!a) return;
    free(a->prev);
    free(a);
}

static int cmp_key(const void *x, const void *y)
{
    const mj_key *a = x, *b = y;
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static void block_keys(const mjData *d, const int *row, int nb, mj_key *key)
{
    for (int b = 0; b < nb; ++b) {
        int i = row[b], t = d->efc_type[i];
        key[b] = (mj_key){t, d->efc_id[i], -1, 0};
        if (t >= mjCNSTR_CONTACT_FRICTIONLESS) {
            key[b].a = d->contact[d->efc_id[i]].geom[0];
            key[b].b = d->contact[d->efc_id[i]].geom[1];
        }
        /* MuJoCo lists a pair's contacts, and the blocks of an equality
         * longer than a block, one after another */
        if (b > 0 && key[b - 1].type == t && key[b - 1].a == key[b].a && key[b - 1].b == key[b].b)
            key[b].rank = key[b - 1].rank + 1;
    }
}

/* Last step's forces of the blocks still there (matched by key) as r0,
 * block b's at r0 + off[b] (off NULL: the 3-row form, 3 b). */
static int warm_start(const clc_mujoco *a, const mj_key *key, const int *off, int nb, double *r0)
{
    int matched = 0;
    for (int b = 0; b < nb; ++b) {
        const mj_warm *w = a->nprev ? bsearch(&key[b], a->prev, (size_t)a->nprev, sizeof *a->prev, cmp_key) : NULL;
        int o = off ? off[b] : 3 * b, n = off ? off[b + 1] - off[b] : 3;
        for (int x = 0; x < n; ++x) r0[o + x] = w && x < w->n ? w->r[x] : 0.0;
        matched += w != NULL;
    }
    return matched;
}

/* Keeps this step's keys and forces (as warm_start's r0), sorted by key, for the next. */
static clcone_status remember(clc_mujoco *a, const mj_key *key, const double *r, const int *off, int nb,
                              clcone_error *err)
{
    mj_warm *w = clc_calloc((size_t)nb + 1, sizeof *w, err, "warm-start forces");
    if (!w) return CLCONE_ENOMEM;
    for (int b = 0; b < nb; ++b) {
        w[b].k = key[b];
        w[b].n = off ? off[b + 1] - off[b] : 3;
        memcpy(w[b].r, r + (off ? off[b] : 3 * b), sizeof *w[b].r * (size_t)w[b].n);
    }
    qsort(w, (size_t)nb, sizeof *w, cmp_key);
    free(a->prev);
    a->prev = w;
    a->nprev = nb;
    return CLCONE_OK;
}

static double max_abs(const double *x, int n)
{
    double v = 0;
    for (int i = 0; i < n; ++i) v = fmax(v, fabs(x[i]));
    return v;
}

/* max |x - y| / max(max |y|, max |scale|). */
static double rel_diff(const double *x, const double *y, const double *scale, int n)
{
    double dmax = 0, ymax = fmax(max_abs(y, n), max_abs(scale, n));
    for (int i = 0; i < n; ++i) dmax = fmax(dmax, fabs(x[i] - y[i]));
    return ymax > 0 ? dmax / ymax : dmax;
}

/* MuJoCo's outputs of a constraint solve from the forces r of the blocks:
 * efc_force, efc_state (as MuJoCo's dual solvers set it), efc_b,
 * qfrc_constraint = J'f and qacc = qacc_smooth + M^-1 qfrc_constraint. */
static void write_back(const mjModel *m, mjData *d, const clcone_problem *p, const int *row, const double *r)
{
    for (int b = 0; b < p->n; ++b) {
        int i = row[b];
        if (d->efc_type[i] != mjCNSTR_CONTACT_ELLIPTIC) {
            d->efc_force[i] = r[3 * b];
            d->efc_state[i] = r[3 * b] > 0 ? mjCNSTRSTATE_QUADRATIC : mjCNSTRSTATE_SATISFIED;
            continue;
        }
        for (int x = 0; x < 3; ++x) d->efc_force[i + x] = r[3 * b + x];
        {
            double fn = r[3 * b], ft = hypot(r[3 * b + 1], r[3 * b + 2]);
            int st = !(fn > 0) ? mjCNSTRSTATE_SATISFIED
                     : ft >= p->mu[b] * fn * (1 - 1e-12) && ft > 0 ? mjCNSTRSTATE_CONE : mjCNSTRSTATE_QUADRATIC;
            for (int x = 0; x < 3; ++x) d->efc_state[i + x] = st;
        }
    }
    clc_mj_finish(m, d);
}

void clc_mujoco_pending_free(clc_mujoco_pending *pd)
{
    clcone_problem_free(&pd->p);
    clc_bproblem_free(&pd->bp);
    free(pd->R);
    free(pd->aref);
    free(pd->r);
    free(pd->fixed);
    free(pd->row);
    free(pd->key);
    free(pd->fmj);
    free(pd->amj);
    if (pd->primal) clc_mj_primal_free(pd->primal);
    free(pd->primal);
    memset(pd, 0, sizeof *pd);
}

void clc_mujoco_solve_options(const clc_mujoco *a, const double *R, const double *aref, clcone_options *o)
{
    *o = a->o;
    o->warm_start = 1;
    if (o->model == CLCONE_MODEL_SOFT) {
        o->soft_R = R;
        o->soft_aref = aref;
    }
}

/* A non-finite force from clcone's solve at efc row i: not applied. */
static clcone_status bad_force(const clc_mujoco *a, const mjData *d, int i, const clc_mujoco_stats *st,
                               clcone_error *err)
{
    return clc_fail(err, CLCONE_EINVAL, "%s: clcone's solve gave a non-finite force at row %d (%s): %s, not applied",
                       a->label, i, clc_mj_row_kind(d->efc_type[i]), clcone_run_status_name(st->res.status));
}

/* Whether every row fits the 3-row form (clc_mujoco_problem). */
static int fits_3row(const mjData *d)
{
    for (int i = 0; i < d->nefc; i += mj_rows(d, i))
        if (!block_rows(d, i)) return 0;
    return 1;
}

/* The first row that A leaves without a diagonal, which the 3-row form
 * cannot take (its W_nn must be > 0: a contact's normal row, a 1-row
 * block), or -1; all: any row (the general-block form's W_ii); contacts:
 * contact rows only. */
static int first_zero_row(const mjModel *m, const mjData *d, int all, int contacts)
{
    for (int i = 0; i < d->nefc; ++i) {
        int normal = d->efc_type[i] != mjCNSTR_CONTACT_ELLIPTIC || i == d->contact[d->efc_id[i]].efc_address;
        if ((all || normal) && (!contacts || d->efc_type[i] >= mjCNSTR_CONTACT_FRICTIONLESS)
            && clc_mj_zero_row(m, d, i))
            return i;
    }
    return -1;
}

/* CLCONE_ENOTSUP when coulomb (R = 0 on contact rows) meets a contact
 * row of A's without a diagonal: a contact that cannot move along it, so
 * W = A there has a zero diagonal, and exact Coulomb leaves its force
 * undetermined (the soft model's R > 0 makes W + R's diagonal positive:
 * soft takes it on the general-block form). */
static clcone_status coulomb_zero_row(const clc_mujoco *a, const mjModel *m, const mjData *d, int general,
                                      clcone_error *err)
{
    int i = first_zero_row(m, d, general, 1);
    const mjContact *c;
    if (i < 0) return CLCONE_OK;
    c = &d->contact[d->efc_id[i]];
    return clc_fail(err, CLCONE_ENOTSUP, "%s: %s %d (geoms %d and %d) cannot move along its constraint row %d "
                                            "(a zero Jacobian row: W = J M^-1 J' has a zero diagonal there), so exact "
                                            "Coulomb (--model coulomb, R = 0 on contact rows) leaves its force "
                                            "undetermined; --model soft (MuJoCo's R > 0) solves it",
                       a->label, clc_mj_row_kind(d->efc_type[i]), d->efc_id[i], c->geom[0], c->geom[1], i);
}

/* Whether d's problem leaves the 3-row form: soft when a row does not fit
 * it or A has a zero diagonal (the 3-row form checks W without R; the
 * general-block form's W is A + R); coulomb when a row does not fit, for
 * the primal form's proximal rounds (a->hard), or for the general-block
 * form without elliptic contacts (general.c says why), else the 3-row
 * form refuses it, naming the rows. */
static int goes_general(const clc_mujoco *a, const mjModel *m, const mjData *d)
{
    if (a->o.model == CLCONE_MODEL_SOFT && first_zero_row(m, d, 0, 0) >= 0) return 1;
    if (fits_3row(d)) return 0;
    if (a->o.model == CLCONE_MODEL_COULOMB && !a->hard)
        for (int i = 0; i < d->nefc; ++i)
            if (d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) return 0;
    return 1;
}

/* pd's keys and forces for nr entries of nb blocks (off as warm_start's),
 * warm-started from last step's. */
static clcone_status warm_pending(clc_mujoco *a, const mjData *d, const int *first_row, const int *off,
                                  clc_mujoco_pending *pd, clc_mujoco_stats *st, clcone_error *err)
{
    pd->key = clc_calloc((size_t)pd->nb + 1, sizeof *pd->key, err, "block keys");
    pd->r = clc_calloc((size_t)pd->nr + 1, sizeof *pd->r, err, "forces");
    if (!pd->key || !pd->r) return CLCONE_ENOMEM;
    block_keys(d, first_row, pd->nb, pd->key);
    st->warm_matched = warm_start(a, pd->key, off, pd->nb, pd->r);
    return CLCONE_OK;
}

/* MuJoCo's primal problem for its Newton method (hard: coulomb's, R = 0
 * on the contacts): no A and no dual warm start (the start is MuJoCo's,
 * qacc_warmstart). */
static clcone_status begin_primal(clc_mujoco *a, const mjModel *m, mjData *d, int hard, clc_mujoco_pending *pd,
                                  clc_mujoco_stats *st, double t0, clcone_error *err)
{
    clcone_status s;
    a->nprev = 0;
    if (!(pd->primal = clc_calloc(1, sizeof *pd->primal, err, "the primal problem"))) return CLCONE_ENOMEM;
    if ((s = clc_mj_primal_build(m, d, a->label, hard, pd->primal, err))) return s;
    for (int k = 0; k < pd->primal->n; ++k) pd->nb += pd->primal->isl[k].nb;
    pd->nr = d->nefc;
    st->blocks = pd->nb;
    st->setup_ms = clc_now_ms() - t0;
    return CLCONE_OK;
}

/* The constraint stage up to the solve: MuJoCo's solver first when
 * comparing (its forces and qacc kept in pd), then clcone's problem and
 * its warm start: on the 3-row form when every row fits it, else on the
 * general-block form (goes_general). */
static clcone_status begin_constraints(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                       clc_mujoco_pending *pd, clc_mujoco_stats *st, clcone_error *err)
{
    int nefc = d->nefc, nv = (int)m->nv, general;
    double t0;
    clcone_status s;
    if (nefc == 0) { /* MuJoCo's own shortcut: nothing to solve */
        mj_fwdConstraint(m, d);
        a->nprev = 0; /* the next step's contacts are new */
        if (compare) st->force_rel_diff = st->qacc_rel_diff = 0;
        return CLCONE_OK;
    }
    if (compare) {
        pd->fmj = clc_calloc((size_t)nefc, sizeof *pd->fmj, err, "MuJoCo's forces");
        pd->amj = clc_calloc((size_t)nv, sizeof *pd->amj, err, "MuJoCo's qacc");
        if (!pd->fmj || !pd->amj) return CLCONE_ENOMEM;
        t0 = clc_now_ms();
        mj_fwdConstraint(compare, d);
        st->mujoco_ms = clc_now_ms() - t0;
        memcpy(pd->fmj, d->efc_force, sizeof *pd->fmj * (size_t)nefc);
        memcpy(pd->amj, d->qacc, sizeof *pd->amj * (size_t)nv);
    }
    t0 = clc_now_ms();
    if (a->o.model == CLCONE_MODEL_SOFT && clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_PRIMAL), a->o.model, a->o.solver))
        return begin_primal(a, m, d, 0, pd, st, t0, err);
    general = goes_general(a, m, d);
    if (a->o.model == CLCONE_MODEL_COULOMB) {
        if ((s = coulomb_zero_row(a, m, d, general, err))) return s;
        if ((s = clc_mj_hard_aref(m, d, a->label, err))) return s;
        if (general && a->hard) return begin_primal(a, m, d, 1, pd, st, t0, err);
    }
    if (general) {
        if ((s = clc_mujoco_bproblem(m, d, a->o.model == CLCONE_MODEL_COULOMB, a->label, &pd->bp, err))) return s;
        pd->general = 1;
        pd->nb = pd->bp.nb;
        pd->nr = pd->bp.m;
        if (!(pd->fixed = clc_calloc((size_t)pd->nr, sizeof *pd->fixed, err, "decoupled forces")))
            return CLCONE_ENOMEM;
        clc_mujoco_bproblem_decouple(m, d, &pd->bp, pd->fixed);
        s = warm_pending(a, d, pd->bp.off, pd->bp.off, pd, st, err);
        /* a decoupled row's force in the solve is 0 */
        for (int i = 0; !s && i < pd->nr; ++i)
            if (!isnan(pd->fixed[i])) pd->r[i] = 0;
    } else {
        if ((s = clc_mujoco_problem(m, d, a->o.model == CLCONE_MODEL_COULOMB, a->label, &pd->p, &pd->R,
                                       &pd->aref, &pd->row, err)))
            return s;
        pd->nb = pd->p.n;
        pd->nr = 3 * pd->p.n;
        s = warm_pending(a, d, pd->row, NULL, pd, st, err);
    }
    st->blocks = pd->nb;
    st->setup_ms = clc_now_ms() - t0;
    return s;
}

/* After MuJoCo's Newton: its solution written back as MuJoCo's, compared. */
static clcone_status end_primal(const clc_mujoco *a, const mjModel *m, mjData *d, const clc_mujoco_pending *pd,
                                clc_mujoco_stats *st, clcone_error *err)
{
    const clc_mj_primal *pr = pd->primal;
    for (int x = 0; x < d->nefc; ++x)
        if (!isfinite(pr->f[x])) return bad_force(a, d, pr->row[x], st, err);
    clc_mj_primal_write(m, d, pr);
    if (pd->fmj) {
        st->force_rel_diff = rel_diff(d->efc_force, pd->fmj, pd->fmj, d->nefc);
        st->qacc_rel_diff = rel_diff(d->qacc, pd->amj, d->qacc_smooth, (int)m->nv);
    }
    return CLCONE_OK;
}

/* The constraint stage after the solve: clcone's forces (pd->r) written
 * back as MuJoCo's outputs, compared, and kept for the next warm start. */
static clcone_status end_constraints(clc_mujoco *a, const mjModel *m, mjData *d, clc_mujoco_pending *pd,
                                     clc_mujoco_stats *st, clcone_error *err)
{
    double *r = pd->r;
    if (pd->nb == 0) return CLCONE_OK;
    if (pd->primal) return end_primal(a, m, d, pd, st, err);
    for (int i = 0; pd->fixed && i < pd->nr; ++i)
        if (!isnan(pd->fixed[i])) r[i] = pd->fixed[i];
    for (int i = 0; i < pd->nr; ++i)
        if (!isfinite(r[i])) return bad_force(a, d, pd->general ? i : pd->row[i / 3], st, err);
    if (pd->general) clc_mujoco_bproblem_write(m, d, &pd->bp, r);
    else write_back(m, d, &pd->p, pd->row, r);
    if (pd->fmj) {
        /* qacc of a body at rest is qacc_smooth cancelled to ~0 by the
         * constraint: measured against the larger of the two terms */
        st->force_rel_diff = rel_diff(d->efc_force, pd->fmj, pd->fmj, d->nefc);
        st->qacc_rel_diff = rel_diff(d->qacc, pd->amj, d->qacc_smooth, (int)m->nv);
    }
    /* the next step's warm start is the solve's (0 on a decoupled row) */
    for (int i = 0; pd->fixed && i < pd->nr; ++i)
        if (!isnan(pd->fixed[i])) r[i] = 0;
    return remember(a, pd->key, r, pd->general ? pd->bp.off : NULL, pd->nb, err);
}

/* The arguments of a step's half, run under the MuJoCo error guard. */
typedef struct mj_half {
    clc_mujoco *a;
    const mjModel *m, *compare;
    mjData *d;
    clc_mujoco_pending *pd;
    clc_mujoco_stats *st;
    clcone_error *err;
} mj_half;

/* mj_step's stages up to the constraint solve, and clcone's problem. */
static clcone_status first_half(void *arg)
{
    const mj_half *h = arg;
    clc_mujoco *a = h->a;
    const mjModel *m = h->m;
    mjData *d = h->d;
    clc_mujoco_marks mk;
    clcone_status s;
    /* RK4 evaluates mj_forward at its substeps, MuJoCo's solver inside;
     * the discrete step map solves in the effective metric, not in M */
    if (m->opt.integrator == mjINT_RK4 || m->opt.integrator == mjINT_DISCRETE)
        return clc_fail(h->err, CLCONE_ENOTSUP, "%s: integrator %s; use Euler, implicit or implicitfast", a->label,
                        m->opt.integrator == mjINT_RK4 ? "RK4 runs MuJoCo's own solver at its substeps"
                                                       : "discrete solves MuJoCo's constraints in its effective metric, "
                                                         "not in M as clcone does");
    if (m->opt.noslip_iterations > 0)
        return clc_fail(h->err, CLCONE_ENOTSUP, "%s: noslip_iterations %d: MuJoCo's noslip pass after the solve is "
                                                   "not done by clcone; set it to 0",
                           a->label, m->opt.noslip_iterations);
    clc_mujoco_mark(d, &mk);
    mj_step1(m, d);
    mj_fwdActuation(m, d);
    mj_fwdAcceleration(m, d);
    /* a state MuJoCo reset (mj_checkPos, mj_checkVel: a NaN or a huge
     * value), or contacts and rows its arena dropped: stepping on would be
     * a silently different run */
    if ((s = clc_mujoco_lost(d, &mk, a->label, "not stepped", h->err))) return s;
    /* the effective metric (M + K) is not M: mj_solveM would be wrong */
    if (d->efm_active)
        return clc_fail(h->err, CLCONE_ENOTSUP, "%s: MuJoCo's implicit effective metric (flex stiffness) is "
                                                   "active; clcone forms J M^-1 J' with M alone",
                           a->label);
    h->st->nefc = d->nefc;
    h->st->ncon = d->ncon;
    return begin_constraints(a, m, d, h->compare, h->pd, h->st, h->err);
}

/* The forces written back, then mj_step's stages after the solve. */
static clcone_status second_half(void *arg)
{
    const mj_half *h = arg;
    const mjModel *m = h->m;
    mjData *d = h->d;
    clcone_status s;
    clc_mujoco_marks mk;
    char what[160] = "the step is lost";
    if ((s = end_constraints(h->a, m, d, h->pd, h->st, h->err))) return s;
    d->flg_rnepost = 0; /* as mj_step2: sensors recompute what reads the forces */
    if (h->pd->nb)
        snprintf(what, sizeof what, "qacc with clcone's forces (%s, error %.3g); the step is lost",
                 clcone_run_status_name(h->st->res.status), h->st->res.error);
    clc_mujoco_mark(d, &mk);
    mj_sensorAcc(m, d);
    mj_checkAcc(m, d);
    /* a NaN or huge qacc: MuJoCo reset the state (and ran its own solver) */
    if ((s = clc_mujoco_lost(d, &mk, h->a->label, what, h->err))) return s;
    if (m->opt.integrator == mjINT_IMPLICIT || m->opt.integrator == mjINT_IMPLICITFAST) mj_implicit(m, d);
    else mj_Euler(m, d);
    return CLCONE_OK;
}

clcone_status clc_mujoco_begin(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                  clc_mujoco_pending *pd, clc_mujoco_stats *st, clcone_error *err)
{
    mj_half h = {a, m, compare, d, pd, st, err};
    memset(st, 0, sizeof *st);
    memset(pd, 0, sizeof *pd);
    st->force_rel_diff = st->qacc_rel_diff = -1;
    return clc_mujoco_call(first_half, &h, a->label, err);
}

clcone_status clc_mujoco_end(clc_mujoco *a, const mjModel *m, mjData *d, clc_mujoco_pending *pd,
                                clc_mujoco_stats *st, clcone_error *err)
{
    mj_half h = {a, m, NULL, d, pd, st, err};
    return clc_mujoco_call(second_half, &h, a->label, err);
}

/* pd's primal problem, its islands one batch (mujoco/mj_primal.h). */
static clcone_status solve_primal(const clc_mujoco *a, clc_mujoco_pending *pd, clc_mujoco_stats *st,
                                  clcone_error *err)
{
    clcone_options o;
    clcone_status s;
    clc_mujoco_solve_options(a, NULL, NULL, &o);
    o.warm_start = pd->primal->warm;
    if ((s = clc_mj_primal_solve(a->ctx, pd->primal, &o, &st->res, err))) clc_error_prefix(err, "%s", a->label);
    return s;
}

/* pd's dual problem on its form. */
static clcone_status solve_dual(clc_mujoco *a, clc_mujoco_pending *pd, clc_mujoco_stats *st,
                                clcone_error *err)
{
    clcone_plan *plan = NULL;
    clcone_result res = {0};
    clcone_options o;
    clcone_status s;
    double t0 = clc_now_ms();
    clc_mujoco_solve_options(a, pd->R, pd->aref, &o);
    if (pd->general) {
        if ((s = clc_solve_blocks(a->ctx, &pd->bp, &o, pd->r, &st->res, err))) clc_error_prefix(err, "%s", a->label);
        return s;
    }
    if ((s = clcone_plan_create(a->ctx, &pd->p, &o, &plan, err))) return s;
    st->setup_ms += clc_now_ms() - t0;
    if (!(s = clcone_plan_solve(plan, pd->r, &res, err))) st->res = res.items[0];
    clcone_plan_free(plan);
    clcone_result_free(&res);
    return s;
}

clcone_status clc_mujoco_solve_pending(clc_mujoco *a, clc_mujoco_pending *pd, clc_mujoco_stats *st,
                                         clcone_error *err)
{
    return pd->primal ? solve_primal(a, pd, st, err) : solve_dual(a, pd, st, err);
}

clcone_status clc_mujoco_step(clc_mujoco *a, const mjModel *m, mjData *d, const mjModel *compare,
                                 clc_mujoco_stats *st, clcone_error *err)
{
    clc_mujoco_pending pd;
    clcone_status s = clc_mujoco_begin(a, m, d, compare, &pd, st, err);
    if (!s && pd.nb) s = clc_mujoco_solve_pending(a, &pd, st, err);
    if (!s) s = clc_mujoco_end(a, m, d, &pd, st, err);
    clc_mujoco_pending_free(&pd);
    return s;
}
