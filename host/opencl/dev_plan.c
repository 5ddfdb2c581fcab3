/* Device plans (clc_dev_plan, the device side of clcone_plan): a
 * batch opened once on a problem or scene, solved many times by the
 * solver's device entry; scenes replaced on the same buffers, uploading
 * only what changed. */
#include "opencl/dev_batch.h"

#include <stdlib.h>
#include <string.h>

/* The buffers a plan keeps from one scene to the next
 * (clc_dev_plan_set_scene), grown only when a scene needs more. */
enum kept {
    KEPT_Q, KEPT_MU, KEPT_PROB, KEPT_PROB_OFF, KEPT_R, KEPT_W, KEPT_TERMS, KEPT_BPTR, KEPT_BC, KEPT_BS, KEPT_CA,
    KEPT_CB, KEPT_FRAME, KEPT_ARM, KEPT_WCC, KEPT_RD, KEPT_INV_MASS, KEPT_INV_INERTIA, KEPT_DV, KEPT_COUNT
};

/* A problem or scene uploaded once and solved many times (clcone_plan's
 * device side). The options are an owned copy, since the uploaded state
 * refers to them; a local-form problem is the owner's (clcone_plan's
 * copy), read again by each solve; the host
 * arrays of the last scene are kept, to upload only what differs from
 * them. */
struct clc_dev_plan {
    clc_dev_batch d;
    clcone_options o;      /* what the kernels run (soft as ccp) */
    clcone_options given;  /* as the caller gave them */
    clc_dev_fn *entry;  /* the solver's device entry */
    clc_body_host b;           /* body form */
    clc_body_csr L;
    size_t cap[KEPT_COUNT]; /* bytes of each kept buffer */
    size_t stage_cap;       /* reals of d.stage */
    clc_dev_counts counts;
};

static cl_mem *kept_mem(clc_dev_batch *d, enum kept k)
{
    cl_mem *m[KEPT_COUNT] = {&d->q,     &d->mu,    &d->prob,  &d->prob_off, &d->r,    &d->w,
                             &d->terms, &d->body.bptr,  &d->body.bc,    &d->body.bs,       &d->body.ca,   &d->body.cb,
                             &d->body.frame, &d->body.arm,   &d->body.Wcc,   &d->body.Rd,       &d->body.inv_mass, &d->body.inv_inertia,
                             &d->body.dv};
    return m[k];
}

/* Kept buffer k with room for `bytes` (clc_buf_reserve); *fresh = 1
 * when it was made now (nothing of the last scene is in it). */
static clcone_status kept_reserve(clc_dev_plan *pl, enum kept k, size_t bytes, int *fresh, clcone_error *err)
{
    clcone_status s = clc_buf_reserve(pl->d.c, kept_mem(&pl->d, k), &pl->cap[k], bytes, fresh, err);
    pl->counts.buffers += !s && *fresh;
    return s;
}

/* Whether a kept buffer already holds x: old (old_bytes; NULL when
 * nothing was put there) is what the last scene put there, and the
 * kernels read only the first `bytes`. */
static int kept_holds(int fresh, const void *x, size_t bytes, const void *old, size_t old_bytes)
{
    return !fresh && old && old_bytes >= bytes && (bytes == 0 || memcmp(x, old, bytes) == 0);
}

static clcone_status kept_bytes(clc_dev_plan *pl, enum kept k, const void *x, size_t bytes, const void *old,
                                size_t old_bytes, clcone_error *err)
{
    int fresh;
    cl_int e;
    clcone_status s = kept_reserve(pl, k, bytes, &fresh, err);
    if (s || bytes == 0 || kept_holds(fresh, x, bytes, old, old_bytes)) return s;
    pl->counts.uploads++;
    e = clEnqueueWriteBuffer(pl->d.c->queue, *kept_mem(&pl->d, k), CL_TRUE, 0, bytes, x, 0, NULL, NULL);
    return e == CL_SUCCESS ? CLCONE_OK : clc_cl_fail(err, e, "clEnqueueWriteBuffer");
}

/* Reals are compared only with an old array of the same length: the
 * float range check of an upload looks at the whole array. */
static clcone_status kept_reals(clc_dev_plan *pl, enum kept k, const char *what, size_t per, const double *x,
                                size_t n, const double *old, size_t old_n, clcone_error *err)
{
    int fresh;
    clcone_status s = kept_reserve(pl, k, n * pl->d.c->real_size, &fresh, err);
    if (s || kept_holds(fresh, x, n * sizeof *x, old_n == n ? old : NULL, n * sizeof *x)) return s;
    pl->counts.uploads++;
    return clc_write_reals(pl->d.c, what, per, *kept_mem(&pl->d, k), x, n, err);
}

/* The problem of each contact of h (NULL for a form not yet there: h
 * zeroed; and when out of memory, with err set). */
static int *contact_problems(const clc_dev_host *h, clcone_error *err)
{
    int *prob;
    if (!h->prob_off) return NULL;
    prob = clc_calloc((size_t)h->n + 1, sizeof *prob, err, "contact problems");
    if (prob)
        for (int k = 0; k < h->nprob; ++k)
            for (int c = h->prob_off[k]; c < h->prob_off[k + 1]; ++c) prob[c] = k;
    return prob;
}

/* The arrays every form sizes by its contacts, in kept buffers: h is
 * taken over (the last form's freed), q, mu and the problem of each
 * contact uploaded when they differ from the last form's, the iterate,
 * the products and the residual terms grown when short. Called before
 * the host arrays that the last form's q and mu point into are freed. */
static clcone_status plan_size(clc_dev_plan *pl, clc_dev_host *h, clcone_error *err)
{
    clc_dev_batch *d = &pl->d;
    clcone_context *c = d->c;
    clc_dev_host old = d->h;
    size_t n = (size_t)h->n, on = (size_t)old.n, np1 = (size_t)h->nprob + 1;
    int *prob = contact_problems(h, err), *oprob = prob ? contact_problems(&old, err) : NULL;
    clcone_status s = CLCONE_ENOMEM;
    d->h = *h;
    memset(h, 0, sizeof *h);
    d->n = d->h.n;
    if (!prob || (old.prob_off && !oprob)) goto out;
    if (pl->stage_cap < 3 * n) {
        size_t cap = pl->stage_cap + pl->stage_cap / 2 > 3 * n ? pl->stage_cap + pl->stage_cap / 2 : 3 * n;
        free(d->stage);
        pl->stage_cap = 0;
        if (!(d->stage = clc_calloc(cap + 1, c->real_size, err, "staging buffer"))) goto out;
        pl->stage_cap = cap;
    }
    if ((s = kept_reals(pl, KEPT_Q, "q of contact", 3, d->h.q, 3 * n, old.q, 3 * on, err))
        || (s = kept_reals(pl, KEPT_MU, "mu of contact", 1, d->h.mu, n, old.mu, on, err))
        || (s = kept_bytes(pl, KEPT_PROB, prob, n * sizeof *prob, oprob, on * sizeof *prob, err))
        || (s = kept_bytes(pl, KEPT_PROB_OFF, d->h.prob_off, np1 * sizeof(int), old.prob_off,
                           old.prob_off ? np1 * sizeof(int) : 0, err)))
        goto out;
    {
        int fresh;
        if ((s = kept_reserve(pl, KEPT_R, 3 * n * c->real_size, &fresh, err))
            || (s = kept_reserve(pl, KEPT_W, 3 * n * c->real_size, &fresh, err)))
            goto out;
        s = kept_reserve(pl, KEPT_TERMS, 4 * n * c->real_size, &fresh, err);
    }
out:
    clc_dev_host_free(&old);
    free(prob);
    free(oprob);
    return s;
}

static void plan_release(clc_dev_plan *pl)
{
    clc_dev_close(&pl->d);
    clc_body_host_free(&pl->b);
    clc_body_csr_free(&pl->L);
    free(pl);
}

void clc_dev_plan_free(clc_dev_plan *pl)
{
    if (pl) plan_release(pl);
}

clcone_status clc_dev_plan_local(clcone_context *c, const clcone_problem *p, const clcone_options *o,
                                    clc_dev_fn *entry, clc_dev_plan **out, clcone_error *err)
{
    clc_dev_plan *pl;
    clc_dev_host h;
    clcone_status s;
    *out = NULL;
    if (!(pl = clc_calloc(1, sizeof *pl, err, "device plan"))) return CLCONE_ENOMEM;
    pl->o = pl->given = *o;
    pl->entry = entry;
    pl->d.p = p;
    if (!(s = clc_dev_local_host(p, &h, err)) && !(s = clc_dev_open(&pl->d, c, p->nprob, &pl->o, err))
        && !(s = plan_size(pl, &h, err)) && !(s = clc_buf_ints(c, p->row_ptr, (size_t)p->n + 1, &pl->d.row_ptr, err))
        && !(s = clc_buf_ints(c, p->col, (size_t)p->nnzb, &pl->d.col, err))
        && !(s = clc_buf_reals(c, "W block", 9, p->blocks, 9 * (size_t)p->nnzb, &pl->d.W, err)))
        s = clc_kernel(c, "matvec_local", &pl->d.k_mv, err);
    clc_dev_host_free(&h);
    if (s) {
        plan_release(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clc_dev_plan_set_q(clc_dev_plan *pl, const double *q, clcone_error *err)
{
    return clc_write_reals(pl->d.c, "q of contact", 3, pl->d.q, q, 3 * (size_t)pl->d.n, err);
}

clcone_status clc_dev_plan_warm_up(clc_dev_plan *pl, clcone_error *err)
{
    /* one iteration from r = 0 launches every kernel of the solver, so a
     * device that compiles at the first launch (POCL: per work-group
     * size) does it here */
    clcone_options keep = pl->o;
    double *r = clc_calloc(3 * (size_t)pl->d.n, sizeof *r, err, "warm-up reactions");
    clcone_result res;
    clcone_status s;
    if (!r) return CLCONE_ENOMEM;
    pl->o.max_iter = 1;
    pl->o.max_seconds = 0;
    pl->o.history = NULL;
    pl->o.progress = NULL;
    if (!(s = clc_result_init(&res, pl->d.nprob, err))) {
        s = clc_dev_plan_solve(pl, r, &res, err);
        clcone_result_free(&res);
    }
    pl->o = keep;
    free(r);
    return s;
}

clcone_status clc_dev_plan_solve(clc_dev_plan *pl, double *r, clcone_result *res, clcone_error *err)
{
    clcone_status s;
    pl->d.res = res;
    s = pl->entry(&pl->d, r, err);
    if (!s && pl->d.body.nb && pl->o.model == CLCONE_MODEL_CCP)
        s = clc_body_cost(&pl->d, r, pl->b.q, &res->items[0].cost, err);
    return s;
}

/* The scene's body form in the plan's kept buffers, each array uploaded
 * only when it differs from the last scene's (all of them the first
 * time): masses of bodies that did not change, the contact lists of
 * contacts that kept their bodies, q alone when only the free velocities
 * changed. The colouring is redone only when the contacts' bodies
 * changed. On failure the plan is left unusable. */
static clcone_status scene_upload(clc_dev_plan *pl, const clcone_scene *sc, clcone_error *err)
{
    clc_dev_batch *d = &pl->d;
    clcone_context *c = d->c;
    const clc_body_host *ob = &pl->b;
    const clc_body_csr *oL = &pl->L;
    clc_body_csr L;
    clc_body_host b;
    clc_dev_host h;
    size_t n = (size_t)sc->ncontacts, on = (size_t)d->n, nb = (size_t)sc->nbodies, onb = (size_t)d->body.nb, nl, onl;
    int fresh;
    const clcone_dev_part *part = d->body.part;
    clcone_status s;
    memset(&L, 0, sizeof L);
    memset(&b, 0, sizeof b);
    memset(&h, 0, sizeof h);
    if ((s = clc_body_csr_build(sc, &L, err))
        || (s = clc_body_prepare(sc, &L, part ? part->body_contacts : NULL, &pl->given, &b, &h, err))
        || (part && (s = part->max(part->ctx, &h.Lmax[0], err))))
        goto out;
    nl = (size_t)L.ptr[nb];
    onl = oL->ptr ? (size_t)oL->ptr[onb] : 0;
    if (oL->ptr && n == on && nb == onb && nl == onl && !memcmp(L.ptr, oL->ptr, (nb + 1) * sizeof *L.ptr)
        && (nl == 0 || !memcmp(L.contact, oL->contact, nl * sizeof *L.contact)) && !memcmp(b.ca, ob->ca, n * sizeof *b.ca)
        && !memcmp(b.cb, ob->cb, n * sizeof *b.cb)) {
        /* clc_body_colors depends on nothing else */
        h.ncolors = d->h.ncolors;
        h.color_ptr = d->h.color_ptr;
        h.order = d->h.order;
        d->h.color_ptr = d->h.order = NULL;
    } else if ((s = clc_body_colors(sc, &L, &b, &h, err))) {
        goto out;
    }
    if ((s = plan_size(pl, &h, err))
        || (s = kept_bytes(pl, KEPT_BPTR, L.ptr, (nb + 1) * sizeof *L.ptr, oL->ptr,
                           oL->ptr ? (onb + 1) * sizeof *L.ptr : 0, err))
        || (s = kept_bytes(pl, KEPT_BC, L.contact, nl * sizeof *L.contact, oL->contact, onl * sizeof *L.contact, err))
        || (s = kept_bytes(pl, KEPT_BS, b.bs, nl, ob->bs, onl, err))
        || (s = kept_bytes(pl, KEPT_CA, b.ca, n * sizeof *b.ca, ob->ca, on * sizeof *b.ca, err))
        || (s = kept_bytes(pl, KEPT_CB, b.cb, n * sizeof *b.cb, ob->cb, on * sizeof *b.cb, err))
        || (s = kept_reals(pl, KEPT_FRAME, "frame of contact", 9, b.frame, 9 * n, ob->frame, 9 * on, err))
        || (s = kept_reals(pl, KEPT_ARM, "lever arms of contact", 6, b.arm, 6 * n, ob->arm, 6 * on, err))
        || (s = kept_reals(pl, KEPT_WCC, "diagonal W block of contact", 9, b.Wcc, 9 * n, ob->Wcc, 9 * on, err))
        || (s = kept_reals(pl, KEPT_RD, "regularisation of contact", 3, b.R, 3 * n, ob->R, 3 * on, err))
        || (s = kept_reals(pl, KEPT_INV_MASS, "inverse mass of body", 1, b.inv_mass, nb, ob->inv_mass, onb, err))
        || (s = kept_reals(pl, KEPT_INV_INERTIA, "inverse inertia of body", 9, b.inv_inertia, 9 * nb,
                           ob->inv_inertia, 9 * onb, err))
        || (s = kept_reserve(pl, KEPT_DV, 6 * nb * c->real_size, &fresh, err)))
        goto out;
    clc_body_host_free(&pl->b);
    clc_body_csr_free(&pl->L);
    if (part) {
        free(d->body.halo);
        d->body.halo = clc_calloc((size_t)(part->own - part->send + part->ghosts) * 6 + 1, c->real_size, err,
                                     "halo");
        if (!d->body.halo) {
            s = CLCONE_ENOMEM;
            goto out;
        }
    }
    pl->b = b;
    pl->L = L;
    d->h.prob_off = pl->b.prob_off;
    d->body.nb = (int)nb;
    memset(&b, 0, sizeof b);
    memset(&L, 0, sizeof L);
out:
    clc_body_host_free(&b);
    clc_body_csr_free(&L);
    clc_dev_host_free(&h);
    return s;
}

/* Body-form plan: the scene's Jacobians, masses and per-body contact
 * lists on the device (matrix-free W). The soft model is solved as a ccp
 * on W + R, q - a_ref. */
clcone_status clc_dev_plan_scene(clcone_context *c, const clcone_scene *sc, const clcone_options *o,
                                    clc_dev_fn *entry, const clcone_dev_part *part, clc_dev_plan **out,
                                    clcone_error *err)
{
    clc_dev_plan *pl;
    clcone_status s;
    *out = NULL;
    if (!(pl = clc_calloc(1, sizeof *pl, err, "device plan"))) return CLCONE_ENOMEM;
    pl->o = pl->given = *o;
    pl->o.model = clc_model_solved_as(o->model);
    pl->entry = entry;
    pl->d.body.part = part;
    if ((s = clc_dev_open(&pl->d, c, 1, &pl->o, err)) || (s = clc_kernel(c, "body_gather", &pl->d.body.k_gather, err))
        || (s = clc_kernel(c, "body_contact_apply", &pl->d.body.k_capply, err)) || (s = scene_upload(pl, sc, err))) {
        plan_release(pl);
        return s;
    }
    *out = pl;
    return CLCONE_OK;
}

clcone_status clc_dev_plan_set_scene(clc_dev_plan *pl, const clcone_scene *sc, const clcone_options *o,
                                        clcone_error *err)
{
    pl->given.soft_v0 = o->soft_v0;
    pl->given.soft_R = o->soft_R;
    pl->given.soft_aref = o->soft_aref;
    return scene_upload(pl, sc, err);
}

void clc_dev_plan_set_max_seconds(clc_dev_plan *pl, double seconds)
{
    pl->o.max_seconds = pl->given.max_seconds = seconds;
}

clc_dev_counts clc_dev_plan_counts(const clc_dev_plan *pl)
{
    return pl->counts;
}
