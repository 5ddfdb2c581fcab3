/* Body-form scene generators: a box stack, a pile of spheres in a box
 * container and a simple cubic grid of spheres. All bodies start at rest
 * with the free velocity of one step under gravity; contacts are exact
 * (gap ~ 0) at the generated positions. */
#include "core/internal.h"
#include "core/body_form.h"
#include "world/world_parts.h"
#include "cone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT3 1.73205080756887729353

clcone_status clc_gen_check_mu_dt(double mu, double dt, clcone_error *err)
{
    if (!isfinite(mu) || mu < 0.0)
        return clc_fail(err, CLCONE_EINVAL, "friction coefficient mu = %g must be finite and >= 0", mu);
    if (!isfinite(dt) || !(dt > 0.0))
        return clc_fail(err, CLCONE_EINVAL, "time step dt = %g must be finite and > 0", dt);
    return CLCONE_OK;
}

/* Every generator refuses more bodies than this, before it computes or
 * allocates anything. Measured with `clcone gen` on the development
 * machine (2 cores, shared): a million bodies take 0.44-0.46 GB and
 * 28-36 s for grid 100 and wall 1000 (4 million contacts), 123 s for a
 * pile of a million; ten times more would run for many minutes, and the
 * sizes users can type (grid 2147483647) ask for exabytes. Counts are
 * formed in double, so no product of user sizes can overflow first. */
#define GEN_MAX_BODIES 1000000

clcone_status clc_gen_size_check(const char *what, double bodies, clcone_error *err)
{
    if (bodies <= GEN_MAX_BODIES) return CLCONE_OK;
    return clc_fail(err, CLCONE_EINVAL,
                       "%s of %.4g bodies is too large (the generators make at most %d bodies, about 0.5 GB)",
                       what, bodies, GEN_MAX_BODIES);
}

static clcone_status scene_alloc(clcone_scene *s, long long nbodies, long long ncontacts,
                                 clcone_error *err)
{
    if (nbodies > INT_MAX || ncontacts > CLCONE_SCENE_MAX_CONTACTS)
        return clc_fail(err, CLCONE_EINVAL,
                           "scene of %lld bodies and %lld contacts is too large "
                           "(at most %d bodies and %d contacts)",
                           nbodies, ncontacts, INT_MAX, CLCONE_SCENE_MAX_CONTACTS);
    s->bodies = clc_calloc((size_t)nbodies, sizeof *s->bodies, err, "scene bodies");
    s->contacts = clc_calloc((size_t)ncontacts, sizeof *s->contacts, err, "scene contacts");
    if (!s->bodies || !s->contacts) {
        clcone_scene_free(s);
        return CLCONE_ENOMEM;
    }
    s->nbodies = (int)nbodies;
    s->ncontacts = (int)ncontacts;
    return CLCONE_OK;
}

/* A body at rest at x with a diagonal inertia; its free velocity is one
 * step of gravity. */
static void body_at_rest(clcone_body *b, const double x[3], double mass, double inertia, double dt)
{
    memset(b, 0, sizeof *b);
    memcpy(b->x, x, sizeof b->x);
    b->inv_mass = 1.0 / mass;
    b->inv_inertia[0] = b->inv_inertia[4] = b->inv_inertia[8] = 1.0 / inertia;
    b->v[2] = -CLCONE_SCENE_GRAVITY * dt;
}

/* Solid sphere of unit density. */
static void sphere_body(clcone_body *b, const double x[3], double r, double dt)
{
    double m = 4.0 / 3.0 * CONE_PI * r * r * r;
    body_at_rest(b, x, m, 0.4 * m * r * r, dt);
}

static void set_contact(clcone_contact *c, int a, int b, const double p[3], const double n[3],
                        double mu, double gap)
{
    c->a = a;
    c->b = b;
    memcpy(c->point, p, sizeof c->point);
    memcpy(c->normal, n, sizeof c->normal);
    c->mu = mu;
    c->gap = gap;
}

clcone_status clc_gen_stack(int k, double mu, double dt, clcone_scene *s, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    static const double up[3] = {0.0, 0.0, 1.0};
    clcone_status st;
    memset(s, 0, sizeof *s);
    if (k < 1) return clc_fail(err, CLCONE_EINVAL, "stack of %d boxes: need at least 1", k);
    if ((st = clc_gen_size_check("stack", k, err)) || (st = clc_gen_check_mu_dt(mu, dt, err)))
        return st;
    if ((st = scene_alloc(s, k, 4LL * k, err))) return st;
    for (int i = 0; i < k; ++i) {
        double x[3] = {0.0, 0.0, 0.5 + i};
        /* unit cube of mass 1: I = m (1^2 + 1^2) / 12 about every axis */
        body_at_rest(&s->bodies[i], x, 1.0, 1.0 / 6.0, dt);
        /* box i rests on box i - 1, box 0 on the world (-1) */
        for (int q = 0; q < 4; ++q) {
            double p[3] = {q & 1 ? 0.5 : -0.5, q & 2 ? 0.5 : -0.5, (double)i};
            set_contact(&s->contacts[4 * i + q], i, i - 1, p, up, mu, 0.0);
        }
    }
    return CLCONE_OK;
}

clcone_status clc_gen_grid(int L, int H, double mu, double dt, clcone_scene *s,
                              clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    static const double axis[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    long long nb, nc;
    int m = 0;
    clcone_status st;
    memset(s, 0, sizeof *s);
    if (L < 1 || H < 1)
        return clc_fail(err, CLCONE_EINVAL, "grid of %d x %d x %d spheres: need L >= 1 and H >= 1",
                           L, L, H);
    if ((st = clc_gen_size_check("grid", (double)L * L * H, err)) || (st = clc_gen_check_mu_dt(mu, dt, err)))
        return st;
    nb = (long long)L * L * H;
    /* pairs along x and y, along z, and the bottom layer on the ground */
    nc = 2LL * (L - 1) * L * H + (long long)L * L * (H - 1) + (long long)L * L;
    if ((st = scene_alloc(s, nb, nc, err))) return st;
    for (int k = 0; k < H; ++k)
        for (int j = 0; j < L; ++j)
            for (int i = 0; i < L; ++i) {
                int id = (k * L + j) * L + i;
                double x[3] = {i, j, 0.5 + k};
                /* each neighbour pair once: the +x, +y, +z neighbour is the a
                 * side, so the normal is that axis */
                int nbr[3] = {i + 1 < L ? id + 1 : -1, j + 1 < L ? id + L : -1,
                              k + 1 < H ? id + L * L : -1};
                sphere_body(&s->bodies[id], x, 0.5, dt);
                if (k == 0) {
                    double p[3] = {i, j, 0.0};
                    set_contact(&s->contacts[m++], id, -1, p, axis[2], mu, 0.0);
                }
                for (int d = 0; d < 3; ++d) {
                    double p[3] = {x[0] + 0.5 * axis[d][0], x[1] + 0.5 * axis[d][1],
                                   x[2] + 0.5 * axis[d][2]};
                    if (nbr[d] >= 0) set_contact(&s->contacts[m++], nbr[d], id, p, axis[d], mu, 0.0);
                }
            }
    return CLCONE_OK;
}

/* ------------------------------------------------------------------ */
/* Pile                                                                */
/* ------------------------------------------------------------------ */

/* The pile is built by deposition, one sphere at a time, onto FCC slots
 * (close-packed layers stacked A, B, C) of a box container. Each sphere
 * falls straight down at its slot, then settles in the lowest nearby
 * pocket: a spot touching three supports exactly (spheres already placed,
 * the floor, a wall), solved in closed form, checked free of overlap with
 * every placed neighbour. With equal radii the pockets are the FCC slots
 * themselves. With a radius spread no lattice fits, but each sphere still
 * rests on three supports, so the pile is isostatic-like (about 3 contacts
 * per sphere, coordination near 6) and contacts stay exact. A slot with no
 * free pocket is skipped. Contacts are detected afterwards from the final
 * geometry rather than remembered from the construction, so touching
 * pairs the construction did not aim for are included too. */

/* A placement may overlap a neighbour by rounding only. */
#define OVERLAP_TOL 1e-10
/* Spheres (or a sphere and a wall) this close count as touching. */
#define TOUCH_TOL 1e-9
/* A closed-form placement must meet its three supports this well. */
#define SOLVE_TOL 1e-9
/* Supports considered per sphere (C(8,3) = 56 triples), how far beyond
 * touching the drop point they may be, and how far from the drop point a
 * sphere may roll: under one diameter, so that it stays near its slot. The
 * score weight makes sideways travel cost as much as height, which keeps
 * equal spheres on their FCC slots (a neighbouring hollow at the same
 * height loses). Tuned on piles of 1000: every sphere gets 3 supports and
 * few slots are skipped up to spread 0.45. */
#define SUPPORT_MAX 8
#define SUPPORT_REACH 1.0
#define SETTLE_REACH 0.75
#define SCORE_DH 1.0
/* two points per triple of supports */
#define MAX_CANDIDATES (SUPPORT_MAX * (SUPPORT_MAX - 1) * (SUPPORT_MAX - 2) / 3)

typedef struct support {
    int plane;        /* 0: sphere, centre at distance R from c; 1: a.x = b */
    double c[3], R;
    double a[3], b;
    double gap;       /* distance from the drop point, for ranking */
} support;

typedef struct pile {
    double wx, wy;    /* container: floor z = 0, walls x = 0, wx, y = 0, wy */
    double rmax;
    /* Uniform cells of edge h >= 2 rmax, so that spheres that touch or
     * overlap always lie in the same or adjacent cells. The grid grows
     * upward with the pile. */
    double h;
    int cx, cy, cz, top;   /* top: highest occupied cell layer, -1 if none */
    int *head, *next;
    double *pos, *rad;
    int *nbr, nnbr, cap;   /* result of the last gather */
} pile;

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int cell_coord(const pile *P, double v, int n)
{
    double f = floor(v / P->h);
    return f < 0 ? 0 : f >= n ? n - 1 : (int)f;
}

static size_t cell_index(const pile *P, int ix, int iy, int iz)
{
    return ((size_t)iz * (size_t)P->cy + (size_t)iy) * (size_t)P->cx + (size_t)ix;
}

static clcone_status pile_insert(pile *P, int i, clcone_error *err)
{
    const double *x = P->pos + 3 * (size_t)i;
    int ix = cell_coord(P, x[0], P->cx), iy = cell_coord(P, x[1], P->cy);
    int iz = cell_coord(P, x[2], INT_MAX);
    size_t cell;
    if (iz >= P->cz) {
        int ncz = iz + 1 > 2 * P->cz ? iz + 1 : 2 * P->cz;
        size_t layer = (size_t)P->cx * (size_t)P->cy;
        int *h = realloc(P->head, layer * (size_t)ncz * sizeof *h);
        if (!h) return clc_fail(err, CLCONE_ENOMEM, "pile: cannot grow the cell grid to %d layers", ncz);
        for (size_t k = layer * (size_t)P->cz; k < layer * (size_t)ncz; ++k) h[k] = -1;
        P->head = h;
        P->cz = ncz;
    }
    cell = cell_index(P, ix, iy, iz);
    P->next[i] = P->head[cell];
    P->head[cell] = i;
    if (iz > P->top) P->top = iz;
    return CLCONE_OK;
}

/* Collects into P->nbr the spheres in cells within `reach` of x
 * horizontally and in cell layers [iz0, iz1]. */
static clcone_status pile_gather(pile *P, const double x[3], int reach, int iz0, int iz1,
                                 clcone_error *err)
{
    int ix = cell_coord(P, x[0], P->cx), iy = cell_coord(P, x[1], P->cy);
    P->nnbr = 0;
    iz0 = iz0 < 0 ? 0 : iz0;
    iz1 = iz1 > P->top ? P->top : iz1;
    for (int kz = iz0; kz <= iz1; ++kz)
        for (int ky = clampi(iy - reach, 0, P->cy - 1); ky <= clampi(iy + reach, 0, P->cy - 1); ++ky)
            for (int kx = clampi(ix - reach, 0, P->cx - 1); kx <= clampi(ix + reach, 0, P->cx - 1); ++kx)
                for (int j = P->head[cell_index(P, kx, ky, kz)]; j >= 0; j = P->next[j]) {
                    if (P->nnbr == P->cap) {
                        int ncap = P->cap ? 2 * P->cap : 256;
                        int *nb = realloc(P->nbr, (size_t)ncap * sizeof *nb);
                        if (!nb) return clc_fail(err, CLCONE_ENOMEM, "pile: cannot grow the neighbour list");
                        P->nbr = nb;
                        P->cap = ncap;
                    }
                    P->nbr[P->nnbr++] = j;
                }
    return CLCONE_OK;
}

static clcone_status pile_gather_around(pile *P, const double x[3], int reach, clcone_error *err)
{
    int iz = cell_coord(P, x[2], INT_MAX);
    return pile_gather(P, x, reach, iz - reach, iz + reach, err);
}

static double dist3(const double a[3], const double b[3])
{
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrt(clc_dot3(d, d));
}

/* Whether a sphere of radius r centred at x fits: inside the container and
 * clear of every placed sphere. */
static clcone_status pile_fits(pile *P, const double x[3], double r, int *ok, clcone_error *err)
{
    clcone_status st;
    *ok = x[2] >= r - OVERLAP_TOL && x[0] >= r - OVERLAP_TOL && x[0] <= P->wx - r + OVERLAP_TOL &&
          x[1] >= r - OVERLAP_TOL && x[1] <= P->wy - r + OVERLAP_TOL;
    if (!*ok) return CLCONE_OK;
    if ((st = pile_gather_around(P, x, 1, err))) return st;
    for (int k = 0; k < P->nnbr && *ok; ++k) {
        int j = P->nbr[k];
        *ok = dist3(x, P->pos + 3 * (size_t)j) >= r + P->rad[j] - OVERLAP_TOL;
    }
    return CLCONE_OK;
}

/* Height at which a sphere of radius r dropped straight down at (x, y)
 * first touches the floor or a placed sphere: above every obstacle of the
 * column, so always a free spot. */
static clcone_status pile_drop(pile *P, double x[3], double r, clcone_error *err)
{
    clcone_status st;
    x[2] = r;
    for (int iz = P->top; iz >= 0; --iz) {
        /* centres in layer iz lie below (iz + 1) h, so nothing there or
         * lower can lift the sphere higher than this */
        if (x[2] >= (iz + 1) * P->h + r + P->rmax) break;
        if ((st = pile_gather(P, x, 1, iz, iz, err))) return st;
        for (int k = 0; k < P->nnbr; ++k) {
            const double *c = P->pos + 3 * (size_t)P->nbr[k];
            double dx = x[0] - c[0], dy = x[1] - c[1], R = r + P->rad[P->nbr[k]];
            double h2 = dx * dx + dy * dy;
            if (h2 < R * R) x[2] = fmax(x[2], c[2] + sqrt(R * R - h2));
        }
    }
    return CLCONE_OK;
}

static int meets(const support *s, const double x[3])
{
    if (s->plane) return fabs(clc_dot3(s->a, x) - s->b) <= SOLVE_TOL;
    return fabs(dist3(x, s->c) - s->R) <= SOLVE_TOL;
}

/* Points meeting three supports (at most 2; rounding is checked by
 * meets_all). Sphere equations are
 * subtracted from the first sphere's, leaving two planes whose line is
 * intersected with that sphere; coordinates are taken relative to its
 * centre so that large containers lose no precision. Three planes meet in
 * one point. */
static int solve_supports(const support *const sp[3], double out[2][3])
{
    const support *s0 = NULL;
    double A[3][3], rhs[3], o[3] = {0, 0, 0}, d[3], dd, y0[3], u[3], v[3], disc;
    int nl = 0;
    for (int k = 0; k < 3; ++k)
        if (!sp[k]->plane && !s0) s0 = sp[k];
    if (s0) memcpy(o, s0->c, sizeof o);
    for (int k = 0; k < 3; ++k) {
        const support *s = sp[k];
        if (s == s0) continue;
        if (s->plane) {
            memcpy(A[nl], s->a, sizeof A[nl]);
            rhs[nl] = s->b - clc_dot3(s->a, o);
        } else {
            for (int i = 0; i < 3; ++i) A[nl][i] = s->c[i] - o[i];
            rhs[nl] = 0.5 * (s0->R * s0->R - s->R * s->R + clc_dot3(A[nl], A[nl]));
        }
        ++nl;
    }
    if (!s0) {
        double det;
        clc_cross3(A[1], A[2], u);
        det = clc_dot3(A[0], u);
        if (fabs(det) < 1e-12) return 0;
        /* Cramer: x = (r0 (A1 x A2) + r1 (A2 x A0) + r2 (A0 x A1)) / det */
        clc_cross3(A[2], A[0], v);
        clc_cross3(A[0], A[1], d);
        for (int i = 0; i < 3; ++i) out[0][i] = (rhs[0] * u[i] + rhs[1] * v[i] + rhs[2] * d[i]) / det;
        return 1;
    } else {
        double t;
        clc_cross3(A[0], A[1], d);
        dd = clc_dot3(d, d);
        if (dd < 1e-24 * clc_dot3(A[0], A[0]) * clc_dot3(A[1], A[1]) || dd == 0.0) return 0;
        /* the point of both planes nearest o, then +-t along their line */
        clc_cross3(A[1], d, u);
        clc_cross3(d, A[0], v);
        for (int i = 0; i < 3; ++i) y0[i] = (rhs[0] * u[i] + rhs[1] * v[i]) / dd;
        disc = s0->R * s0->R - clc_dot3(y0, y0);
        if (disc < 0.0) return 0;
        t = sqrt(disc / dd);
        for (int i = 0; i < 3; ++i) {
            out[0][i] = o[i] + y0[i] + t * d[i];
            out[1][i] = o[i] + y0[i] - t * d[i];
        }
        return 2;
    }
}

/* An ill-conditioned triple can give roots that miss their supports. */
static int meets_all(const support *const sp[3], const double x[3])
{
    return meets(sp[0], x) && meets(sp[1], x) && meets(sp[2], x);
}

/* Keeps the SUPPORT_MAX supports nearest the drop point, ordered by gap. */
static void keep_support(support *S, int *ns, const support *s)
{
    int k;
    if (s->gap > SUPPORT_REACH) return;
    if (*ns == SUPPORT_MAX && s->gap >= S[SUPPORT_MAX - 1].gap) return;
    k = *ns < SUPPORT_MAX ? (*ns)++ : SUPPORT_MAX - 1;
    for (; k > 0 && S[k - 1].gap > s->gap; --k) S[k] = S[k - 1];
    S[k] = *s;
}

static void plane_support(support *s, double ax, double ay, double az, double b, double gap)
{
    memset(s, 0, sizeof *s);
    s->plane = 1;
    s->a[0] = ax;
    s->a[1] = ay;
    s->a[2] = az;
    s->b = b;
    s->gap = gap;
}

typedef struct candidate {
    double x[3], score;
} candidate;

/* Settles sphere i (radius already set) in a pocket near slot (sx, sy):
 * a spot touching three supports, within SETTLE_REACH of where it would
 * first land falling straight down, free of overlap, the lowest by
 * height + SCORE_DH * horizontal offset. *placed = 0 when there is none;
 * with `force` it then stays where it first lands (one contact). */
static clcone_status pile_place(pile *P, int i, double sx, double sy, int force, int *placed,
                                clcone_error *err)
{
    double r = P->rad[i], drop[3];
    support S[SUPPORT_MAX], tmp;
    candidate C[MAX_CANDIDATES];
    int ns = 0, nc = 0, ok = 0;
    clcone_status st;

    *placed = 0;
    drop[0] = fmin(fmax(sx, r), P->wx - r);
    drop[1] = fmin(fmax(sy, r), P->wy - r);
    if ((st = pile_drop(P, drop, r, err))) return st;

    /* supports: the floor, the walls (each as the plane the centre must lie
     * on to touch it) and placed spheres, ranked by distance from the drop
     * point */
    plane_support(&tmp, 0, 0, 1, r, drop[2] - r);
    keep_support(S, &ns, &tmp);
    plane_support(&tmp, 1, 0, 0, r, drop[0] - r);
    keep_support(S, &ns, &tmp);
    plane_support(&tmp, 1, 0, 0, P->wx - r, P->wx - r - drop[0]);
    keep_support(S, &ns, &tmp);
    plane_support(&tmp, 0, 1, 0, r, drop[1] - r);
    keep_support(S, &ns, &tmp);
    plane_support(&tmp, 0, 1, 0, P->wy - r, P->wy - r - drop[1]);
    keep_support(S, &ns, &tmp);
    if ((st = pile_gather_around(P, drop, 2, err))) return st;
    for (int k = 0; k < P->nnbr; ++k) {
        int j = P->nbr[k];
        memset(&tmp, 0, sizeof tmp);
        memcpy(tmp.c, P->pos + 3 * (size_t)j, sizeof tmp.c);
        tmp.R = r + P->rad[j];
        tmp.gap = dist3(drop, tmp.c) - tmp.R;
        keep_support(S, &ns, &tmp);
    }

    for (int a = 0; a < ns; ++a)
        for (int b = a + 1; b < ns; ++b)
            for (int c = b + 1; c < ns; ++c) {
                const support *sp[3] = {&S[a], &S[b], &S[c]};
                double roots[2][3];
                int nr = solve_supports(sp, roots);
                for (int k = 0; k < nr; ++k) {
                    double dx = roots[k][0] - drop[0], dy = roots[k][1] - drop[1];
                    double dh = sqrt(dx * dx + dy * dy), score = roots[k][2] + SCORE_DH * dh;
                    int m;
                    if (dh > SETTLE_REACH || !meets_all(sp, roots[k])) continue;
                    /* insertion after equal scores keeps ties in a fixed order */
                    for (m = nc++; m > 0 && C[m - 1].score > score; --m) C[m] = C[m - 1];
                    memcpy(C[m].x, roots[k], sizeof C[m].x);
                    C[m].score = score;
                }
            }
    for (int k = 0; k < nc && !ok; ++k) {
        if ((st = pile_fits(P, C[k].x, r, &ok, err))) return st;
        if (ok) memcpy(drop, C[k].x, sizeof drop);
    }
    if (!ok && !force) return CLCONE_OK;
    memcpy(P->pos + 3 * (size_t)i, drop, sizeof drop);
    *placed = 1;
    return pile_insert(P, i, err);
}

/* Contacts of sphere i with the floor, the walls and lower-numbered
 * spheres, in that order (spheres by increasing index). Written to out
 * when non-NULL; returns the count through *count. */
static clcone_status pile_contacts_of(pile *P, int i, double mu, clcone_contact *out, int *count,
                                      clcone_error *err)
{
    const double *x = P->pos + 3 * (size_t)i;
    double r = P->rad[i];
    /* floor and walls: gap, normal into the container, point on the wall */
    const struct { double gap, n[3], p[3]; } walls[5] = {
        {x[2] - r, {0, 0, 1}, {x[0], x[1], 0}},
        {x[0] - r, {1, 0, 0}, {0, x[1], x[2]}},
        {P->wx - x[0] - r, {-1, 0, 0}, {P->wx, x[1], x[2]}},
        {x[1] - r, {0, 1, 0}, {x[0], 0, x[2]}},
        {P->wy - x[1] - r, {0, -1, 0}, {x[0], P->wy, x[2]}},
    };
    int m = 0;
    clcone_status st;
    for (int w = 0; w < 5; ++w) {
        if (walls[w].gap > TOUCH_TOL) continue;
        if (out) set_contact(&out[m], i, -1, walls[w].p, walls[w].n, mu, walls[w].gap);
        ++m;
    }
    if ((st = pile_gather_around(P, x, 1, err))) return st;
    /* sort the lower neighbours by index so W rows come out ordered */
    for (int k = 0; k < P->nnbr; ++k) {
        int j = P->nbr[k], l = k;
        for (; l > 0 && P->nbr[l - 1] > j; --l) P->nbr[l] = P->nbr[l - 1];
        P->nbr[l] = j;
    }
    for (int k = 0; k < P->nnbr && P->nbr[k] < i; ++k) {
        int j = P->nbr[k];
        const double *y = P->pos + 3 * (size_t)j;
        double d = dist3(x, y), gap = d - r - P->rad[j];
        if (gap > TOUCH_TOL) continue;
        if (out) {
            double n[3] = {(x[0] - y[0]) / d, (x[1] - y[1]) / d, (x[2] - y[2]) / d};
            /* i is the a side, so the normal points from j to i; the point
             * sits mid-gap */
            double p[3] = {y[0] + n[0] * (P->rad[j] + 0.5 * gap), y[1] + n[1] * (P->rad[j] + 0.5 * gap),
                           y[2] + n[2] * (P->rad[j] + 0.5 * gap)};
            set_contact(&out[m], i, j, p, n, mu, gap);
        }
        ++m;
    }
    *count = m;
    return CLCONE_OK;
}

static void pile_free(pile *P)
{
    free(P->head);
    free(P->next);
    free(P->pos);
    free(P->rad);
    free(P->nbr);
    memset(P, 0, sizeof *P);
}

/* Uniform in [0, 1): 64-bit LCG (Knuth's MMIX constants), top 53 bits. Our
 * own generator so the pile is the same on every platform. */
static double lcg_uniform(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

clcone_status clc_gen_pile(int n, double mu, double dt, double spread, unsigned seed,
                              clcone_scene *s, clcone_error *err)
{
    CLCONE_REQUIRE(err, s);
    return clc_gen_pile_ex(n, mu, dt, spread, seed, s, NULL, NULL, err);
}

clcone_status clc_gen_pile_ex(int n, double mu, double dt, double spread, unsigned seed,
                                 clcone_scene *s, double *radius, double box[2], clcone_error *err)
{
    /* row spacing of a close-packed layer of unit spheres, and the offsets
     * of layers A, B, C */
    const double row_dy = 0.5 * SQRT3;
    const double shift[3][2] = {{0.0, 0.0}, {0.5, SQRT3 / 6.0}, {0.0, SQRT3 / 3.0}};
    unsigned long long state = (unsigned long long)seed ^ 0x9E3779B97F4A7C15ULL;
    pile P;
    clcone_status st = CLCONE_OK;
    double side;
    int nx, ny, per_layer;
    long long total = 0;

    memset(s, 0, sizeof *s);
    memset(&P, 0, sizeof P);
    if (n < 1) return clc_fail(err, CLCONE_EINVAL, "pile of %d spheres: need at least 1", n);
    if ((st = clc_gen_size_check("pile", n, err)) || (st = clc_gen_check_mu_dt(mu, dt, err)))
        return st;
    if (!(spread >= 0.0 && spread < 0.5))
        return clc_fail(err, CLCONE_EINVAL, "spread = %g (the radius spread) must be in [0, 0.5)", spread);

    /* a roughly cubic pile: FCC holds one unit sphere per 1/sqrt(2) volume */
    side = cbrt(n / sqrt(2.0));
    nx = (int)fmax(1.0, floor(side + 0.5));
    ny = (int)fmax(1.0, floor(side / row_dy + 0.5));
    per_layer = nx * ny;
    P.rmax = 0.5 + spread;
    P.h = 2.0 * P.rmax;
    P.wx = fmax(nx + 0.5, 2.0 * P.rmax);
    /* room in y for the rows of every layer, shifted by up to sqrt(3)/3 */
    P.wy = fmax(1.0 + (ny - 1) * row_dy + shift[2][1], 2.0 * P.rmax);
    P.cx = (int)ceil(P.wx / P.h);
    P.cy = (int)ceil(P.wy / P.h);
    P.top = -1;
    P.next = clc_calloc((size_t)n, sizeof *P.next, err, "pile cell links");
    P.pos = clc_calloc(3 * (size_t)n, sizeof *P.pos, err, "pile positions");
    P.rad = clc_calloc((size_t)n, sizeof *P.rad, err, "pile radii");
    if (!P.next || !P.pos || !P.rad) {
        st = CLCONE_ENOMEM;
        goto done;
    }
    (void)lcg_uniform(&state);
    /* Slots are visited in order; a slot whose sphere finds no pocket stays
     * empty and the sphere tries the next one, so spheres do not perch on
     * single others. After a whole layer's worth of failures in a row the
     * sphere is left where it lands, which bounds the work. */
    for (long long k = 0, fails = 0, i = 0; i < n; ++k) {
        int layer = (int)(k / per_layer), slot = (int)(k % per_layer), row = slot / nx, col = slot % nx;
        /* a slot pushed past the far x wall by the layer shift wraps to the
         * near wall, where the wall stands in for the missing sphere */
        double sx = 0.5 + fmod(col + 0.5 * (row & 1) + shift[layer % 3][0], (double)nx);
        double sy = 0.5 + row * row_dy + shift[layer % 3][1];
        int placed;
        if (fails == 0) P.rad[i] = 0.5 + spread * (2.0 * lcg_uniform(&state) - 1.0);
        if ((st = pile_place(&P, (int)i, sx, sy, fails >= per_layer, &placed, err))) goto done;
        fails = placed ? 0 : fails + 1;
        i += placed;
    }
    for (int i = 0; i < n; ++i) {
        int got;
        if ((st = pile_contacts_of(&P, i, mu, NULL, &got, err))) goto done;
        total += got;
    }
    if ((st = scene_alloc(s, n, total, err))) goto done;
    for (int i = 0, m = 0; i < n; ++i) {
        int got;
        if ((st = pile_contacts_of(&P, i, mu, s->contacts + m, &got, err))) goto done;
        sphere_body(&s->bodies[i], P.pos + 3 * (size_t)i, P.rad[i], dt);
        if (radius) radius[i] = P.rad[i];
        m += got;
    }
    if (box) {
        box[0] = P.wx;
        box[1] = P.wy;
    }
done:
    if (st) clcone_scene_free(s);
    pile_free(&P);
    return st;
}
