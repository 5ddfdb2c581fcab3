/* Section 5: MuJoCo as a peer (built only with -DBENCH_MUJOCO, i.e. when
 * the Makefile found MuJoCo: the PyPI wheel in a venv under the build
 * folder, else Debian's libmujoco-dev). Piles of spheres (clcone_gen_pile)
 * and of cubes are written as MJCF (free bodies, unit density, condim 3,
 * elliptic cones) and MuJoCo's own constraint problem at that state is
 * taken as it is: its dual W = efc_AR = J M^-1 J' + R, q = efc_b =
 * J qacc_smooth - aref, min 1/2 f'Wf + q'f over the friction cones. MuJoCo's
 * PGS, CG and Newton mj_fwdConstraint are timed on it, their accuracy
 * measured with clcone's ccp natural map, and clcone (model ccp, reference
 * and device) solves the same (W, q, mu) to each MuJoCo solver's accuracy. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "cone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BENCH_MUJOCO

void bench_section_mujoco(bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "**Skipped**: the bench was built without MuJoCo. `make bench` installs the PyPI wheel `mujoco` "
               "into a virtual environment under the build folder and links against its `libmujoco.so`; that "
               "failed (no network or no `python3 -m venv`) and Debian's `libmujoco-dev` headers were not "
               "installed either. Fix one of the two and run `make bench` again for this section.\n\n");
}

#else

#include <mujoco/mujoco.h>
#include "mujoco_models.h"

#ifndef BENCH_MUJOCO_FROM
#define BENCH_MUJOCO_FROM "an unnamed installation"
#endif

#define NSOL 3
#define NCFG 11

static const char *const sol_name[NSOL] = {"PGS", "CG", "Newton"};
static const int sol_id[NSOL] = {mjSOL_PGS, mjSOL_CG, mjSOL_NEWTON};

typedef struct mj_scene {
    int cubes; /* 0: spheres of clcone_gen_pile, 1: a lattice pile of cubes */
    int n;     /* spheres asked of clcone_gen_pile, or cubes along an edge */
} mj_scene;

/* clcone's side: the reference (dev 0) and the device in float (1) and
 * double (2), on MuJoCo's W as it is, or (body) on the same problem in
 * clcone's body form (mj_body_form): matrix-free J M^-1 J' + R. */
typedef struct ccfg {
    int dev;
    clcone_solver solver;
    int body;
} ccfg;

static const ccfg cfgs[NCFG] = {{0, CLCONE_SOLVER_APGD, 0},
                                {0, CLCONE_SOLVER_ACGS, 0},
                                {1, CLCONE_SOLVER_APGD, 0},
                                {1, CLCONE_SOLVER_CGS, 0},
                                {1, CLCONE_SOLVER_ACGS, 0},
                                {2, CLCONE_SOLVER_APGD, 0},
                                {2, CLCONE_SOLVER_CGS, 0},
                                {2, CLCONE_SOLVER_ACGS, 0},
                                {1, CLCONE_SOLVER_APGD, 1},
                                {1, CLCONE_SOLVER_CGS, 1},
                                {1, CLCONE_SOLVER_ACGS, 1}};


static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Index of block (i, j) in p, -1 when absent. */
static int find_block(const clcone_problem *p, int i, int j)
{
    int lo = p->row_ptr[i], hi = p->row_ptr[i + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (p->col[mid] == j) return mid;
        if (p->col[mid] < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* MuJoCo's dual problem at the current state as a clcone problem, and d
 * left ready for mj_fwdConstraint. The Jacobian is sparse (MuJoCo's own
 * choice for nv >= 60, as all scenes here have; it then keeps AR sparse,
 * CSR in efc order, so a large pile never needs a dense nefc^2 matrix); the 3 rows of
 * contact i (normal, tangent 1, tangent 2 of MuJoCo's contact frame, at
 * efc_address 3i with condim 3) are clcone's local rows of contact i, and
 * MuJoCo's elliptic dual cone ||(f1/mu1, f2/mu2)|| <= f_n with
 * mu1 = mu2 = mu is clcone's K_mu. Returns 0, or -1 with err filled. */
static int read_dual(mjModel *m, mjData *d, clcone_problem *p, clcone_error *err)
{
    int nc, nnzb = 0, *mark = NULL, *slot = NULL, *cols = NULL, rc = -1;
    m->opt.jacobian = mjJAC_SPARSE;
    m->opt.solver = mjSOL_PGS;
    mj_forward(m, d);
    /* MuJoCo forms AR only inside PGS's call; this keeps it in d */
    mj_projectConstraint(m, d);
    nc = d->ncon;
    if (d->warning[mjWARN_CONTACTFULL].number || d->warning[mjWARN_CNSTRFULL].number) {
        snprintf(err->msg, sizeof err->msg, "MuJoCo ran out of contact or constraint memory (warnings %d, %d)",
                 d->warning[mjWARN_CONTACTFULL].number, d->warning[mjWARN_CNSTRFULL].number);
        return -1;
    }
    if (nc == 0 || d->nefc != 3 * nc || !d->efc_AR_rownnz) {
        snprintf(err->msg, sizeof err->msg,
                 "MuJoCo made %d constraint rows for %d contacts (3 per contact expected, condim 3 elliptic) %s", d->nefc,
                 nc, d->efc_AR_rownnz ? "" : "and no sparse AR");
        return -1;
    }
    for (int i = 0; i < nc; ++i)
        if (d->contact[i].efc_address != 3 * i || d->contact[i].dim != 3 ||
            d->contact[i].friction[0] != d->contact[i].friction[1]) {
            snprintf(err->msg, sizeof err->msg, "MuJoCo contact %d: efc_address %d dim %d friction %g %g (expected %d, 3, equal)",
                     i, d->contact[i].efc_address, d->contact[i].dim, d->contact[i].friction[0],
                     d->contact[i].friction[1], 3 * i);
            return -1;
        }
    mark = malloc(sizeof(int) * (size_t)nc);
    slot = malloc(sizeof(int) * (size_t)nc);
    cols = malloc(sizeof(int) * (size_t)nc);
    if (!mark || !slot || !cols) {
        snprintf(err->msg, sizeof err->msg, "out of memory for %d contacts", nc);
        goto out;
    }
    /* two passes over AR: count each block row's distinct block columns,
     * then scatter the values into sorted 3x3 blocks */
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < nc; ++i) mark[i] = -1;
        for (int i = 0; i < nc; ++i) {
            int nb = 0;
            for (int a = 0; a < 3; ++a) {
                int r = 3 * i + a;
                for (int k = 0; k < d->efc_AR_rownnz[r]; ++k) {
                    int jc = d->efc_AR_colind[d->efc_AR_rowadr[r] + k] / 3;
                    if (mark[jc] != i) {
                        mark[jc] = i;
                        cols[nb++] = jc;
                    }
                }
            }
            if (pass == 0) {
                nnzb += nb;
                continue;
            }
            qsort(cols, (size_t)nb, sizeof *cols, cmp_int);
            p->row_ptr[i + 1] = p->row_ptr[i] + nb;
            for (int k = 0; k < nb; ++k) {
                p->col[p->row_ptr[i] + k] = cols[k];
                slot[cols[k]] = p->row_ptr[i] + k;
            }
            for (int a = 0; a < 3; ++a) {
                int r = 3 * i + a;
                for (int k = 0; k < d->efc_AR_rownnz[r]; ++k) {
                    int adr = d->efc_AR_rowadr[r] + k, c = d->efc_AR_colind[adr];
                    p->blocks[9 * (size_t)slot[c / 3] + 3 * a + c % 3] = d->efc_AR[adr];
                }
                p->q[r] = d->efc_b[r];
            }
            p->mu[i] = d->contact[i].friction[0];
        }
        if (pass == 0 && clcone_problem_alloc(p, nc, nnzb, err)) goto out;
    }
    /* APGD's gradient step assumes a symmetric W; AR is symmetric up to
     * the rounding of its products */
    for (int i = 0; i < nc; ++i)
        for (int k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
            int j = p->col[k], t = j > i ? find_block(p, j, i) : -1;
            if (j <= i) continue;
            if (t < 0) {
                snprintf(err->msg, sizeof err->msg, "MuJoCo's AR couples contacts %d and %d one way only", i, j);
                goto out;
            }
            for (int a = 0; a < 3; ++a)
                for (int c = 0; c < 3; ++c) {
                    double *u = &p->blocks[9 * (size_t)k + 3 * a + c], *v = &p->blocks[9 * (size_t)t + 3 * c + a];
                    *u = *v = 0.5 * (*u + *v);
                }
        }
    rc = clcone_problem_validate(p, err) ? -1 : 0;
out:
    free(mark);
    free(slot);
    free(cols);
    return rc;
}

/* MuJoCo's problem at (m, d) in clcone's body form: a body per MuJoCo body
 * but the world (centre of mass xipos, inverse inertia ximat diag(1/I)
 * ximat', free "velocity" = the centre's acceleration under qacc_smooth,
 * from mj_jacBodyCom), a contact per MuJoCo contact between geom[1]'s
 * body a and geom[0]'s b (the world as b = -1; when geom[1] is the
 * world's, a and b swap and the normal turns), and the soft model with R =
 * efc_R and a_ref = efc_aref given. clcone's tangents are its own
 * (clcone_contact_frame), so per contact map[9 i..] takes clcone's
 * reactions to MuJoCo's rows: f = M r, M = s F_mj F_cl' (F: frame rows,
 * s = -1 for a swapped contact); velocities and a_ref go by M'. Then
 * W_cl + R = M' efc_AR M and q_cl - a_ref = M' efc_b: the same cone QP
 * (K_mu is invariant under M), up to rounding. R of the two tangent rows
 * must be equal (MuJoCo's isotropic elliptic cones). Returns 0, or -1 with
 * err filled. */
static int mj_body_form(const mjModel *m, const mjData *d, clcone_scene *s, double *R, double *aref, double *map,
                        clcone_error *err)
{
    int nb = m->nbody - 1, nc = d->ncon;
    mjtNum *jacp = malloc(sizeof(mjtNum) * 6 * (size_t)m->nv), *jacr = jacp ? jacp + 3 * (size_t)m->nv : NULL;
    memset(s, 0, sizeof *s);
    s->bodies = calloc((size_t)nb, sizeof *s->bodies);
    s->contacts = calloc((size_t)nc, sizeof *s->contacts);
    if (!jacp || !s->bodies || !s->contacts) {
        snprintf(err->msg, sizeof err->msg, "out of memory for the body form of %d bodies, %d contacts", nb, nc);
        goto fail;
    }
    s->nbodies = nb;
    s->ncontacts = nc;
    for (int j = 0; j < nb; ++j) {
        clcone_body *bd = &s->bodies[j];
        const mjtNum *X = d->ximat + 9 * (j + 1), *I = m->body_inertia + 3 * (j + 1);
        mj_jacBodyCom(m, d, jacp, jacr, j + 1);
        for (int a = 0; a < 3; ++a) {
            bd->x[a] = d->xipos[3 * (j + 1) + a];
            for (int c = 0; c < 3; ++c) {
                double v = 0;
                for (int k = 0; k < 3; ++k) v += X[3 * a + k] * X[3 * c + k] / I[k];
                bd->inv_inertia[3 * a + c] = v;
            }
            bd->v[a] = bd->v[3 + a] = 0;
            for (int i = 0; i < m->nv; ++i) {
                bd->v[a] += jacp[(size_t)a * m->nv + i] * d->qacc_smooth[i];
                bd->v[3 + a] += jacr[(size_t)a * m->nv + i] * d->qacc_smooth[i];
            }
        }
        bd->inv_mass = 1.0 / m->body_mass[j + 1];
    }
    for (int i = 0; i < nc; ++i) {
        const mjContact *con = &d->contact[i];
        clcone_contact *ct = &s->contacts[i];
        int b0 = m->geom_bodyid[con->geom[0]], b1 = m->geom_bodyid[con->geom[1]];
        double sg = b1 ? 1.0 : -1.0, F[9];
        ct->a = (b1 ? b1 : b0) - 1;
        ct->b = (b1 ? b0 : 0) - 1;
        for (int a = 0; a < 3; ++a) {
            ct->point[a] = con->pos[a];
            ct->normal[a] = sg * con->frame[a];
        }
        ct->mu = con->friction[0];
        ct->gap = con->dist;
        if (fabs(d->efc_R[3 * i + 1] - d->efc_R[3 * i + 2]) > 1e-12 * fabs(d->efc_R[3 * i + 1])) {
            snprintf(err->msg, sizeof err->msg, "MuJoCo contact %d: tangent R %g and %g differ (an anisotropic cone)", i,
                     d->efc_R[3 * i + 1], d->efc_R[3 * i + 2]);
            goto fail;
        }
        clcone_contact_frame(ct->normal, F);
        for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 3; ++c) {
                double v = 0;
                for (int k = 0; k < 3; ++k) v += con->frame[3 * a + k] * F[3 * c + k];
                map[9 * (size_t)i + 3 * a + c] = sg * v;
            }
        for (int a = 0; a < 3; ++a) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += map[9 * (size_t)i + 3 * k + a] * d->efc_aref[3 * i + k];
            aref[3 * i + a] = v;
            R[3 * i + a] = d->efc_R[3 * i + (a ? 1 : 0)];
        }
    }
    free(jacp);
    return clcone_scene_validate(s, err) ? -1 : 0;
fail:
    free(jacp);
    clcone_scene_free(s);
    return -1;
}

/* MuJoCo's rows f = M r from clcone's body-form reactions r (mj_body_form). */
static void mj_rows_from_body(int nc, const double *map, const double *r, double *f)
{
    for (int i = 0; i < nc; ++i)
        for (int a = 0; a < 3; ++a) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += map[9 * (size_t)i + 3 * a + k] * r[3 * i + k];
            f[3 * i + a] = v;
        }
}

/* Best wall time (ms) of the calls of run made within tmin seconds: at
 * least one, at most max_runs. With warm, a first call is a warm-up, not
 * counted, unless it took tmin or more: a call that long is timed once, by
 * that first call (then *runs = 0). run returns 0 when it may be repeated,
 * 1 when once is enough (a capped run that did not converge), -1 on
 * failure (then NaN). */
static double best_ms(int (*run)(void *), void *arg, int warm, int max_runs, double tmin, int *runs)
{
    double best = INFINITY, t0 = bench_now();
    int k = 0, rc = 0;
    if (warm) {
        if (run(arg) < 0) return NAN;
        *runs = 0;
        if (bench_now() - t0 >= tmin) return (bench_now() - t0) * 1e3;
        t0 = bench_now();
    }
    while (rc == 0 && k < max_runs && (k == 0 || bench_now() - t0 < tmin)) {
        double t = bench_now();
        rc = run(arg);
        if (rc < 0) return NAN;
        best = fmin(best, (bench_now() - t) * 1e3);
        ++k;
    }
    *runs = k;
    return best;
}

typedef struct mj_call {
    const mjModel *m;
    mjData *d;
} mj_call;

static int mj_once(void *arg)
{
    mj_call *c = arg;
    mj_fwdConstraint(c->m, c->d);
    return 0;
}

static int mj_iterations(const mjData *d)
{
#if mjVERSION_HEADER >= 300
    /* MuJoCo solves each constraint island apart: the slowest counts */
    int it = 0, ni = d->nisland < 1 ? 1 : d->nisland < mjNISLAND ? d->nisland : mjNISLAND;
    for (int i = 0; i < ni; ++i) it = it > d->solver_niter[i] ? it : d->solver_niter[i];
    return it;
#else
    return d->solver_iter;
#endif
}

static int mj_islands(const mjData *d)
{
#if mjVERSION_HEADER >= 300
    return d->nisland;
#else
    (void)d;
    return 1;
#endif
}

typedef struct cc_call {
    clcone_plan *plan;
    int n;
    double *r;
    clcone_prob_result res;
    clcone_error err;
} cc_call;

static int cc_once(void *arg)
{
    cc_call *c = arg;
    clcone_result res;
    memset(c->r, 0, sizeof(double) * 3 * (size_t)c->n);
    if (clcone_plan_solve(c->plan, c->r, &res, &c->err)) return -1;
    c->res = res.items[0];
    clcone_result_free(&res);
    return c->res.status == CLCONE_CONVERGED ? 0 : 1;
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static double max_abs(const double *a, int n)
{
    double m = 0;
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
    return m;
}

/* Settings of the runs, in one place for the text of the report. */
typedef struct mj_settings {
    int max_runs; /* best of the calls made in tmin s, at most max_runs */
    double tmin;
    double cap;             /* clcone: seconds per solve */
    double budget;          /* section: seconds; later scenes are skipped */
    int iterations;         /* MuJoCo's defaults, read from the models */
    double tolerance;
} mj_settings;

/* Whether MuJoCo 2.2 would need more than a quarter of the machine's
 * memory for the scene (then a line says so, in place of a failure). */
static int too_big(FILE *f, int ncon_est, const char *path)
{
    double need = mj_dense_ar_bytes(ncon_est), mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (need <= mem / 4) return 0;
    fprintf(f, "`%s` left out: MuJoCo %s would allocate %.1f GB for its dense AR, more than a quarter of the %.1f GB "
               "of memory (MuJoCo 3 and later size it sparsely).\n\n",
            strrchr(path, '/') + 1, mj_versionString(), need / 1e9, mem / 1e9);
    return 1;
}

/* One scene's run: MuJoCo's model and data, its dual problem p, its
 * three solvers' times, errors and forces, and clcone's buffers. */
typedef struct mj_run {
    bench *b;
    FILE *f;
    mj_settings *S;
    char path[4096], label[64];
    int nbodies, nc, nefc, order[NSOL], failed[NCFG], body_state; /* body form: 0 not built, 1 built, -1 failed */
    int runs[NSOL], iters[NSOL];
    double tmj[NSOL], emj[NSOL], *fmj[NSOL], *r, *rmj, *bR, *baref, *bmap, best_dev;
    char best_cfg[96];
    clcone_scene s, bs;
    clcone_problem p;
    mjModel *m;
    mjData *d;
} mj_run;

/* The scene's MJCF file written and loaded, and MuJoCo's dual problem
 * read; 0, or -1 after a failure noted (or a scene too big, said). */
static int mj_load(mj_run *R, const mj_scene *sc, double mu, double dt)
{
    bench *b = R->b;
    FILE *f = R->f;
    char errbuf[1000] = "";
    clcone_error err;
    int ncon_est;
    if (sc->cubes) {
        /* up to four cubes below and four above, four corners each */
        ncon_est = 20 * sc->n * sc->n * sc->n;
        snprintf(R->path, sizeof R->path, "%s/mujoco_cubes_%d.xml", b->out, sc->n * sc->n * sc->n);
        if (too_big(f, ncon_est, R->path)) return -1;
        if (write_cubes(R->path, sc->n, mu, dt, ncon_est, &R->nbodies)) {
            bench_fail(b, f, "cannot write %s", R->path);
            return -1;
        }
        snprintf(R->label, sizeof R->label, "%d cubes", R->nbodies);
    } else {
        if (clcone_gen_pile(sc->n, mu, dt, 0.1, 1, &R->s, &err)) {
            bench_fail(b, f, "pile of %d: %s", sc->n, err.msg);
            return -1;
        }
        /* headroom for MuJoCo finding more contacts than clcone did */
        ncon_est = 2 * R->s.ncontacts + 64;
        snprintf(R->path, sizeof R->path, "%s/mujoco_spheres_%d.xml", b->out, sc->n);
        if (too_big(f, ncon_est, R->path)) return -1;
        if (write_spheres(R->path, &R->s, mu, dt, ncon_est, &R->nbodies)) {
            bench_fail(b, f, "cannot write %s", R->path);
            return -1;
        }
        snprintf(R->label, sizeof R->label, "%d spheres", R->nbodies);
    }
    fprintf(stderr, "bench: mujoco: %s\n", R->label);
    R->m = mj_loadXML(R->path, NULL, errbuf, sizeof errbuf);
    if (!R->m) {
        bench_fail(b, f, "MuJoCo could not load %s: %s", R->path, errbuf);
        return -1;
    }
    R->d = mj_makeData(R->m);
    if (!R->d) {
        bench_fail(b, f, "mj_makeData failed on %s", R->path);
        return -1;
    }
    /* every call then starts from qacc_smooth: the same problem each time */
    R->m->opt.disableflags |= mjDSBL_WARMSTART;
    R->S->iterations = R->m->opt.iterations;
    R->S->tolerance = R->m->opt.tolerance;
    if (read_dual(R->m, R->d, &R->p, &err)) {
        bench_fail(b, f, "%s: %s", R->label, err.msg);
        return -1;
    }
    R->nc = R->p.n;
    R->nefc = 3 * R->nc;
    return 0;
}

/* MuJoCo's three solvers on the scene, timed, their forces kept and their
 * errors measured as clcone measures ccp's; the MuJoCo table's rows, and
 * the solvers ordered loosest error first. 0, or -1 out of memory. */
static int mj_solvers(mj_run *R, FILE *t_mj)
{
    char buf[64], buf2[64];
    double fmax_n;
    for (int k = 0; k < NSOL; ++k) {
        mj_call c = {R->m, R->d};
        clcone_options o;
        R->fmj[k] = malloc(sizeof(double) * (size_t)R->nefc);
        if (!R->fmj[k]) {
            bench_fail(R->b, R->f, "out of memory");
            return -1;
        }
        R->m->opt.solver = sol_id[k];
        R->tmj[k] = best_ms(mj_once, &c, 1, R->S->max_runs, R->S->tmin, &R->runs[k]);
        R->iters[k] = mj_iterations(R->d);
        memcpy(R->fmj[k], R->d->efc_force, sizeof(double) * (size_t)R->nefc);
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_CCP;
        R->emj[k] = clcone_error_of(&R->p, &o, R->fmj[k], 0, R->nc);
    }
    fmax_n = fmax(max_abs(R->fmj[2], R->nefc), 1e-300);
    for (int k = 0; k < NSOL; ++k)
        fprintf(t_mj, "| %s | MuJoCo %s (CPU, 1 thread) | double | %s | %d | %s | %s | %.2e | %.2e |\n", R->label,
                mj_versionString(), sol_name[k], R->iters[k], bench_fmt_ms(R->tmj[k], buf, sizeof buf),
                R->runs[k] ? (snprintf(buf2, sizeof buf2, "%d", R->runs[k]), buf2) : "1, its warm-up", R->emj[k],
                max_abs_diff(R->fmj[k], R->fmj[2], R->nefc) / fmax_n);
    /* loosest target first: a configuration that misses one is not run
     * on the tighter ones */
    for (int k = 0; k < NSOL; ++k) R->order[k] = k;
    for (int i = 0; i < NSOL; ++i)
        for (int j = i + 1; j < NSOL; ++j)
            if (R->emj[R->order[j]] > R->emj[R->order[i]]) {
                int t = R->order[i];
                R->order[i] = R->order[j];
                R->order[j] = t;
            }
    return 0;
}

/* The body form of MuJoCo's problem, built once, for the first
 * configuration that needs it. */
static void mj_body_form_once(mj_run *R)
{
    clcone_error err;
    if (R->body_state != 0) return;
    R->bR = malloc(sizeof(double) * (size_t)R->nefc);
    R->baref = malloc(sizeof(double) * (size_t)R->nefc);
    R->bmap = malloc(sizeof(double) * 3 * (size_t)R->nefc);
    R->body_state = R->bR && R->baref && R->bmap && mj_body_form(R->m, R->d, &R->bs, R->bR, R->baref, R->bmap, &err) == 0 ? 1 : -1;
    if (R->body_state < 0)
        bench_fail(R->b, R->f, "%s: body form: %s", R->label, R->bR && R->baref && R->bmap ? err.msg : "out of memory");
}

/* clcone's configuration j to each MuJoCo solver's error, loosest first:
 * the clcone table's rows, and the best device time at CG's error. */
static void mj_clcone_config(mj_run *R, int j, FILE *t_cc)
{
    bench *b = R->b;
    clcone_context *ctx = cfgs[j].dev == 0 ? NULL : cfgs[j].dev == 1 ? b->fctx : b->dctx;
    const char *eng = cfgs[j].dev ? b->dev_short : "CPU reference", *prec = cfgs[j].dev == 1 ? "float" : "double";
    const char *sname = clcone_solver_name(cfgs[j].solver), *form = cfgs[j].body ? " (body form)" : "";
    const char *label = R->label;
    char buf[64];
    clcone_options o;
    if (cfgs[j].dev && !ctx) return;
    if (cfgs[j].body) mj_body_form_once(R);
    if (cfgs[j].body && R->body_state < 0) return;
    clcone_options_default(&o);
    o.model = cfgs[j].body ? CLCONE_MODEL_SOFT : CLCONE_MODEL_CCP;
    o.soft_R = cfgs[j].body ? R->bR : NULL;
    o.soft_aref = cfgs[j].body ? R->baref : NULL;
    o.solver = cfgs[j].solver;
    o.max_seconds = R->S->cap;
    for (int kk = 0; kk < NSOL; ++kk) {
        int k = R->order[kk], nr = 0;
        cc_call c = {NULL, R->p.n, R->r, {0}, {0}};
        double t, e_mj;
        const double *f_cc = cfgs[j].body ? R->rmj : R->r;
        if (R->failed[j]) {
            fprintf(t_cc, "| %s | %s%s | %s | %s | %s, %.2e | not run: missed the looser %s target | | | | |\n",
                    label, eng, form, prec, sname, sol_name[k], R->emj[k], sol_name[R->failed[j] - 1]);
            continue;
        }
        o.tol = R->emj[k];
        /* upload, colouring and first launches before any timing */
        if (cfgs[j].body ? clcone_plan_create_scene(ctx, &R->bs, &o, &c.plan, &c.err)
                         : clcone_plan_create(ctx, &R->p, &o, &c.plan, &c.err)) {
            bench_fail(b, R->f, "%s: %s %s %s (set-up): %s", label, eng, prec, sname, c.err.msg);
            R->failed[j] = k + 1;
            continue;
        }
        t = best_ms(cc_once, &c, 0, R->S->max_runs, R->S->tmin, &nr);
        clcone_plan_free(c.plan);
        if (!(t == t)) {
            bench_fail(b, R->f, "%s: %s %s %s on MuJoCo's problem: %s", label, eng, prec, sname, c.err.msg);
            R->failed[j] = k + 1;
            continue;
        }
        if (cfgs[j].body) mj_rows_from_body(R->nc, R->bmap, R->r, R->rmj);
        e_mj = cfgs[j].body ? clcone_error_of(&R->p, &(clcone_options){.model = CLCONE_MODEL_CCP}, R->rmj, 0, R->nc)
                            : c.res.error;
        if (c.res.status != CLCONE_CONVERGED) R->failed[j] = k + 1;
        else if (ctx && k == 1 && t < R->best_dev) {
            R->best_dev = t;
            snprintf(R->best_cfg, sizeof R->best_cfg, "%s %s%s", prec, sname, form);
        }
        fprintf(t_cc, "| %s | %s%s | %s | %s | %s, %.2e | %s (%.2e) | %d | %s (best of %d) | %s%.3g | %.2e |\n", label,
                eng, form, prec, sname, sol_name[k], R->emj[k], clcone_run_status_name(c.res.status), e_mj,
                c.res.iters, bench_fmt_ms(t, buf, sizeof buf), nr,
                c.res.status == CLCONE_CONVERGED ? "" : ">= ", t / R->tmj[k],
                max_abs_diff(f_cc, R->fmj[k], R->nefc) / fmax(max_abs(R->fmj[k], R->nefc), 1e-300));
    }
}

/* One scene: MuJoCo's problem, its three solvers, clcone to each
 * solver's accuracy. Rows go to the three tables' streams. */
static void run_scene(bench *b, FILE *f, mj_settings *S, const mj_scene *sc, FILE *t_scene, FILE *t_mj,
                      FILE *t_cc, FILE *t_sum)
{
    const double mu = 0.5, dt = 0.01;
    char buf[64], buf2[64];
    mj_run *R = calloc(1, sizeof *R);
    if (!R) {
        bench_fail(b, f, "out of memory");
        return;
    }
    R->b = b;
    R->f = f;
    R->S = S;
    R->best_dev = INFINITY;
    if (mj_load(R, sc, mu, dt)) goto out;
    if (sc->cubes) snprintf(buf, sizeof buf, "- (MuJoCo's collision only)");
    else snprintf(buf, sizeof buf, "%d", R->s.ncontacts);
    fprintf(t_scene, "| %s | %d | %s | %d | %d | %d | %d | `%s` |\n", R->label, R->nbodies, buf, R->nc, R->nefc,
            R->p.nnzb, mj_islands(R->d), strrchr(R->path, '/') + 1);
    if (mj_solvers(R, t_mj)) goto out;
    R->r = malloc(sizeof(double) * (size_t)R->nefc);
    R->rmj = malloc(sizeof(double) * (size_t)R->nefc);
    if (!R->r || !R->rmj) {
        bench_fail(b, f, "out of memory");
        goto out;
    }
    for (int j = 0; j < NCFG; ++j) mj_clcone_config(R, j, t_cc);
    if (R->best_cfg[0])
        fprintf(t_sum, "| %s | %.2e | %s | %s | %s | %.3g | %s |\n", R->label, R->emj[1],
                bench_fmt_ms(R->tmj[1], buf, sizeof buf), R->best_cfg, bench_fmt_ms(R->best_dev, buf2, sizeof buf2),
                R->best_dev / R->tmj[1], R->best_dev <= R->tmj[1] ? "yes" : "no");
    else
        fprintf(t_sum, "| %s | %.2e | %s | none converged within %.1f s | | | no |\n", R->label, R->emj[1],
                bench_fmt_ms(R->tmj[1], buf, sizeof buf), S->cap);
out:
    if (R->d) mj_deleteData(R->d);
    if (R->m) mj_deleteModel(R->m);
    for (int k = 0; k < NSOL; ++k) free(R->fmj[k]);
    free(R->r);
    free(R->rmj);
    free(R->bR);
    free(R->baref);
    free(R->bmap);
    clcone_problem_free(&R->p);
    clcone_scene_free(&R->s);
    clcone_scene_free(&R->bs);
    free(R);
}

void bench_section_mujoco(bench *b, FILE *f)
{
    /* the largest last: the budget may leave it out */
    static const mj_scene full[] = {{0, 512}, {1, 8}, {0, 4096}};
    static const mj_scene quick[] = {{0, 512}, {1, 8}};
    const mj_scene *sc = b->quick ? quick : full;
    int nsc = b->quick ? (int)(sizeof quick / sizeof *quick) : (int)(sizeof full / sizeof *full);
    mj_settings S = {10, 0.5, b->quick ? 0.5 : 2.0, b->quick ? 40 : 300, 0, 0};
    char *txt[5] = {NULL};
    size_t len[5];
    FILE *t[5];
    double t0 = bench_now();
    for (int i = 0; i < 5; ++i) {
        t[i] = open_memstream(&txt[i], &len[i]);
        if (!t[i]) {
            bench_fail(b, f, "open_memstream failed");
            for (int j = 0; j < i; ++j) fclose(t[j]);
            for (int j = 0; j < i; ++j) free(txt[j]);
            return;
        }
    }
    for (int i = 0; i < nsc; ++i) {
        if (bench_now() - t0 > S.budget) {
            fprintf(t[4], "Scene %d of %d skipped: the section's budget of %.0f s was spent.\n\n", i + 1, nsc, S.budget);
            continue;
        }
        run_scene(b, t[4], &S, &sc[i], t[0], t[1], t[2], t[3]);
    }
    for (int i = 0; i < 5; ++i) fclose(t[i]);
    fprintf(f, "MuJoCo **%s** (`mj_versionString()`; headers %d), from %s. Each scene is written as MJCF in this "
               "directory (free bodies of unit density, a floor plane, for the spheres also the container's walls "
               "as planes; condim 3, `cone=\"elliptic\"`, friction %.1f, margin 1e-6, timestep %.2f, default "
               "solref/solimp) and MuJoCo's own collision makes the contacts. The problem compared is MuJoCo's own "
               "dual at that state: W = `efc_AR` = J M^-1 J' + R (after `mj_projectConstraint`, read in MuJoCo's "
               "sparse layout), q = `efc_b` = J qacc_smooth - aref, min 1/2 f'Wf + q'f over the elliptic cones, "
               "whose rows (normal, tangent 1, tangent 2 at `efc_address` 3i) are clcone's local form and K_mu as "
               "they are (model **ccp**; W symmetrised, rounding only). Every error below is clcone's ccp "
               "natural-map error on that (W, q, mu).%s\n\n",
            mj_versionString(), mj_version(), BENCH_MUJOCO_FROM, 0.5, 0.01,
            b->quick ? " Quick mode: the 4096-sphere pile is left out." : "");
    fprintf(f, "| scene | bodies | clcone contacts (clcone_gen_pile) | MuJoCo contacts | rows nefc | W blocks (3x3) | "
               "islands | MJCF |\n|---|---|---|---|---|---|---|---|\n%s\n",
            txt[0]);
    fprintf(f, "MuJoCo `mj_fwdConstraint`, warm start disabled (every call starts from qacc_smooth: the same "
               "problem each time), the model's default iterations (%d) and tolerance (%g), sparse Jacobian "
               "(MuJoCo's own choice at these sizes), one thread. Time: after an untimed warm-up call, the best of "
               "the calls made in %.1f s (at least one, at most %d); a warm-up call that itself took longer is "
               "the one timed call. Iterations: the largest over the islands. "
               "Force difference: max |f - f_Newton| / max |f_Newton|.\n\n",
            S.iterations, S.tolerance, S.tmin, S.max_runs);
    fprintf(f, "| scene | engine | precision | solver | iterations | time | calls | error | force difference vs "
               "Newton |\n|---|---|---|---|---|---|---|---|---|\n%s\n",
            txt[1]);
    fprintf(f, "clcone on the same (W, q, mu), model ccp, from r = 0, tol = the MuJoCo solver's error, capped at %.1f s "
               "a solve. Time: `clcone_plan_solve` on a plan made untimed first (the plan uploads W, q and mu and "
               "runs every kernel once, so compilation is excluded; the solve uploads r = 0, iterates and downloads "
               "r), best of as above when it "
               "converged, one run when capped. Ratio: clcone time / MuJoCo time at that accuracy (>= when not "
               "reached). Force difference: max |r - f| / max |f| against that MuJoCo solver's f. A configuration "
               "that misses a target is not run on the tighter ones. Rows marked **body form** solve the same "
               "problem without W: clcone's scene of MuJoCo's bodies (centre of mass, mass, world inverse inertia, "
               "free velocity = the centres' acceleration under qacc_smooth) and contacts, the soft model with "
               "MuJoCo's own R = `efc_R` and a_ref = `efc_aref`, so W = J M^-1 J' + R is applied matrix-free; the "
               "reactions, in clcone's own tangent directions, are rotated back to MuJoCo's rows and their error "
               "is measured on MuJoCo's (W, q, mu) as for every row (the plan uploads the bodies and contacts "
               "untimed).\n\n",
            S.cap);
    fprintf(f, "| scene | engine | precision | solver | target (MuJoCo solver, error) | status (error) | iterations | "
               "time | ratio clcone / MuJoCo | force difference |\n|---|---|---|---|---|---|---|---|---|---|\n%s\n",
            txt[2]);
    fprintf(f, "Target (reported, not tuned to): the device reaches MuJoCo CG's accuracy in at most 1.0x CG's time, "
               "both measured above.\n\n| scene | CG error | CG time | fastest device configuration | its time | "
               "ratio | met |\n|---|---|---|---|---|---|---|\n%s\n%s",
            txt[3], txt[4]);
    for (int i = 0; i < 5; ++i) free(txt[i]);
}

#endif
