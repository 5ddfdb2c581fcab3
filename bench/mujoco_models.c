/* MuJoCo's side of bench section 5 (sec_mujoco.c): piles of spheres and
 * of cubes written as MuJoCo models, the memory MuJoCo will size for
 * them, MuJoCo's constraint problem at a state read as clcone's local
 * form or body form, and the shared models stepped by MuJoCo to a state
 * whose problem is read in the general-block form. Built only with
 * -DBENCH_MUJOCO, as the section is. */
#ifdef BENCH_MUJOCO
#include "mujoco_models.h"
#include "cone.h"
#include "mujoco/adapter.h"

#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MuJoCo sizes its arena from the model file; contacts are what grows it
 * here (rows, Jacobian, the sparse AR and the solvers' work arrays). */
#define ARENA_BYTES_PER_CONTACT 40000
#define ARENA_BYTES_FIXED (16 << 20)

static void mjcf_head(FILE *x, const char *model, double mu, double dt, int ncon_est)
{
    fprintf(x, "<mujoco model=\"%s\">\n"
               "  <option timestep=\"%.17g\" gravity=\"0 0 -9.81\" cone=\"elliptic\"/>\n",
            model, dt);
#if mjVERSION_HEADER >= 300
    fprintf(x, "  <size memory=\"%lldK\"/>\n",
            ((long long)ARENA_BYTES_PER_CONTACT * ncon_est + ARENA_BYTES_FIXED) >> 10);
#else
    fprintf(x, "  <size njmax=\"%d\" nconmax=\"%d\"/>\n", 3 * ncon_est, ncon_est);
#endif
    fprintf(x, "  <default><geom condim=\"3\" friction=\"%.17g 0.005 0.0001\" margin=\"1e-6\"/></default>\n"
               "  <worldbody>\n"
               "    <geom name=\"floor\" type=\"plane\" pos=\"0 0 0\" zaxis=\"0 0 1\" size=\"100 100 1\"/>\n",
            mu);
}

/* Bytes of MuJoCo 2.2's AR for a model sized for ncon_est contacts: it
 * allocates AR densely (njmax^2 numbers and column indices) whatever the
 * Jacobian, where 3.0 on sizes one arena by what is used. */
double mj_dense_ar_bytes(int ncon_est)
{
#if mjVERSION_HEADER >= 300
    (void)ncon_est;
    return 0;
#else
    double nj = 3.0 * ncon_est;
    return nj * nj * (double)(sizeof(mjtNum) + sizeof(int));
#endif
}

static double sphere_radius(const clcone_body *bd) { return cbrt(3.0 / (4.0 * CONE_PI * bd->inv_mass)); }

/* The pile of clc_gen_pile: its moving spheres, and its container's
 * walls as planes at the pile's extent (the generator's walls touch the
 * outer spheres). */
int write_spheres(const char *path, const clcone_scene *s, double mu, double dt, int ncon_est, int *nbodies)
{
    FILE *x = fopen(path, "w");
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    if (!x) return -1;
    *nbodies = 0;
    for (int i = 0; i < s->nbodies; ++i) {
        const clcone_body *bd = &s->bodies[i];
        if (!(bd->inv_mass > 0)) continue;
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], bd->x[k] - sphere_radius(bd));
            hi[k] = fmax(hi[k], bd->x[k] + sphere_radius(bd));
        }
    }
    mjcf_head(x, "clc_sphere_pile", mu, dt, ncon_est);
    fprintf(x, "    <geom name=\"wx0\" type=\"plane\" pos=\"%.17g 0 0\" zaxis=\"1 0 0\" size=\"100 100 1\"/>\n", lo[0]);
    fprintf(x, "    <geom name=\"wx1\" type=\"plane\" pos=\"%.17g 0 0\" zaxis=\"-1 0 0\" size=\"100 100 1\"/>\n", hi[0]);
    fprintf(x, "    <geom name=\"wy0\" type=\"plane\" pos=\"0 %.17g 0\" zaxis=\"0 1 0\" size=\"100 100 1\"/>\n", lo[1]);
    fprintf(x, "    <geom name=\"wy1\" type=\"plane\" pos=\"0 %.17g 0\" zaxis=\"0 -1 0\" size=\"100 100 1\"/>\n", hi[1]);
    for (int i = 0; i < s->nbodies; ++i) {
        const clcone_body *bd = &s->bodies[i];
        if (!(bd->inv_mass > 0)) continue;
        fprintf(x, "    <body pos=\"%.17g %.17g %.17g\"><freejoint/><geom type=\"sphere\" size=\"%.17g\" "
                   "density=\"1\"/></body>\n",
                bd->x[0], bd->x[1], bd->x[2], sphere_radius(bd));
        ++*nbodies;
    }
    fprintf(x, "  </worldbody>\n</mujoco>\n");
    return fclose(x) == 0 ? 0 : -1;
}

static double jitter(unsigned *st, double half)
{
    /* xorshift32: the same cubes on every libc */
    *st ^= *st << 13;
    *st ^= *st >> 17;
    *st ^= *st << 5;
    return half * (2.0 * (*st / 4294967296.0) - 1.0);
}

/* L layers of L x L unit cubes (unit density) on the floor, each layer
 * shifted by half a pitch in x and y so that a cube rests on up to four
 * below it, with small random shifts and turns about z. The gap between
 * neighbours of a layer (pitch 1.1) is more than the jitter can close
 * (2 * 0.01 + 2 * 0.03 / sqrt 2), so contacts are only between layers,
 * face on face: MuJoCo's box-box collision makes them. */
int write_cubes(const char *path, int L, double mu, double dt, int ncon_est, int *nbodies)
{
    const double pitch = 1.1, shift = 0.01, turn = 0.03;
    unsigned st = 1;
    FILE *x = fopen(path, "w");
    if (!x) return -1;
    mjcf_head(x, "clc_cube_pile", mu, dt, ncon_est);
    *nbodies = 0;
    for (int k = 0; k < L; ++k)
        for (int i = 0; i < L; ++i)
            for (int j = 0; j < L; ++j) {
                double off = 0.5 * pitch * (k % 2), yaw = jitter(&st, turn);
                double px = off + pitch * i + jitter(&st, shift), py = off + pitch * j + jitter(&st, shift);
                fprintf(x, "    <body pos=\"%.17g %.17g %.17g\" quat=\"%.17g 0 0 %.17g\"><freejoint/>"
                           "<geom type=\"box\" size=\"0.5 0.5 0.5\" density=\"1\"/></body>\n",
                        px, py, 0.5 + k, cos(0.5 * yaw), sin(0.5 * yaw));
                ++*nbodies;
            }
    fprintf(x, "  </worldbody>\n</mujoco>\n");
    return fclose(x) == 0 ? 0 : -1;
}

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
int mj_read_dual(mjModel *m, mjData *d, clcone_problem *p, clcone_error *err)
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
int mj_body_form(const mjModel *m, const mjData *d, clcone_scene *s, double *R, double *aref, double *map,
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
void mj_rows_from_body(int nc, const double *map, const double *r, double *f)
{
    for (int i = 0; i < nc; ++i)
        for (int a = 0; a < 3; ++a) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += map[9 * (size_t)i + 3 * a + k] * r[3 * i + k];
            f[3 * i + a] = v;
        }
}

int mj_load_stepped(const char *path, int steps, mjModel **m, mjData **d, clc_bproblem *p, clcone_error *err)
{
    char errbuf[1000] = "";
    *d = NULL;
    if (!(*m = mj_loadXML(path, NULL, errbuf, sizeof errbuf))) {
        snprintf(err->msg, sizeof err->msg, "MuJoCo cannot load %s: %.900s", path, errbuf);
        return -1;
    }
    if (!(*d = mj_makeData(*m))) {
        snprintf(err->msg, sizeof err->msg, "mj_makeData failed on %s", path);
        return -1;
    }
    for (int k = 0; k < steps; ++k) mj_step(*m, *d);
    /* the state's problem; under PGS MuJoCo sizes AR in d, which its dual
     * solvers read (mj_fwdConstraint with PGS on a d forward under Newton
     * reads AR that was never made) */
    (*m)->opt.solver = mjSOL_PGS;
    mj_forward(*m, *d);
    mj_projectConstraint(*m, *d);
    if ((*d)->warning[mjWARN_CONTACTFULL].number || (*d)->warning[mjWARN_CNSTRFULL].number ||
        (*d)->warning[mjWARN_BADQACC].number) {
        snprintf(err->msg, sizeof err->msg, "%s: MuJoCo warned while stepping (contacts full %d, constraints full %d, "
                 "bad qacc %d)", path, (*d)->warning[mjWARN_CONTACTFULL].number,
                 (*d)->warning[mjWARN_CNSTRFULL].number, (*d)->warning[mjWARN_BADQACC].number);
        return -1;
    }
    return clc_mujoco_bproblem(*m, *d, 0, path, p, err) ? -1 : 0;
}

#endif
