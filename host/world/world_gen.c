/* Generated worlds (clcone_world_generate): the body-form generators of
 * scene_gen.c with shapes and the container as planes, plus the brick
 * pyramid and the incline. */
#include "core/internal.h"
#include "world/world_parts.h"
#include "cone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Contacts of the generated wall and incline come from the collision
 * detection itself, at a margin that only rounding can reach. */
#define GEN_DETECT_MARGIN 1e-9

void clcone_gen_params_default(clcone_gen_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->n = 1000;
    p->mu = 0.5;
    p->dt = 0.01;
    p->spread = 0.1;
    p->theta = 0.3;
    p->seed = 1;
}

static void shape_set(clcone_shape *sh, clcone_shape_kind kind, double sx, double sy, double sz, double mass)
{
    memset(sh, 0, sizeof *sh);
    sh->kind = kind;
    sh->size[0] = sx;
    sh->size[1] = sy;
    sh->size[2] = sz;
    sh->quat[0] = 1.0;
    sh->mass = mass;
}

static void plane_set(clcone_plane *p, double nx, double ny, double nz, double offset)
{
    p->normal[0] = nx;
    p->normal[1] = ny;
    p->normal[2] = nz;
    p->offset = offset;
}

/* A world around a generated scene (taken over: *s is left empty). The
 * generator's bodies carry one step of gravity as free velocity; a
 * world's carry the current velocity, which is zero at rest. */
static clcone_status world_adopt(clcone_world *w, clcone_scene *s, int nplanes, double mu, double dt,
                                 clcone_error *err)
{
    clcone_status st = clc_world_alloc(w, s->nbodies, 0, nplanes, err);
    if (st) {
        clcone_scene_free(s);
        return st;
    }
    free(w->s.bodies);
    free(w->s.contacts);
    w->s = *s;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < w->s.nbodies; ++i) memset(w->s.bodies[i].v, 0, sizeof w->s.bodies[i].v);
    w->mu = mu;
    w->dt = dt;
    return CLCONE_OK;
}

static double sphere_mass(double r)
{
    return 4.0 / 3.0 * CONE_PI * r * r * r;
}

static clcone_status world_pile(const clcone_gen_params *p, clcone_world *w, clcone_error *err)
{
    clcone_scene s;
    double box[2], *rad;
    clcone_status st;
    if (p->n < 1) return clc_fail(err, CLCONE_EINVAL, "pile of %d spheres: need at least 1", p->n);
    /* rad is allocated before clc_gen_pile_ex checks the size */
    if ((st = clc_gen_size_check("pile", p->n, err))) return st;
    rad = clc_calloc((size_t)p->n, sizeof *rad, err, "pile radii");
    if (!rad) return CLCONE_ENOMEM;
    if ((st = clc_gen_pile_ex(p->n, p->mu, p->dt, p->spread, p->seed, &s, rad, box, err)) ||
        (st = world_adopt(w, &s, 5, p->mu, p->dt, err))) {
        free(rad);
        return st;
    }
    for (int i = 0; i < w->s.nbodies; ++i)
        shape_set(&w->shapes[i], CLCONE_SHAPE_SPHERE, rad[i], 0, 0, sphere_mass(rad[i]));
    /* the order of the generator's wall contacts */
    plane_set(&w->planes[0], 0, 0, 1, 0);
    plane_set(&w->planes[1], 1, 0, 0, 0);
    plane_set(&w->planes[2], -1, 0, 0, -box[0]);
    plane_set(&w->planes[3], 0, 1, 0, 0);
    plane_set(&w->planes[4], 0, -1, 0, -box[1]);
    free(rad);
    return CLCONE_OK;
}

static clcone_status world_stack(const clcone_gen_params *p, clcone_world *w, clcone_error *err)
{
    clcone_scene s;
    clcone_status st;
    if ((st = clc_gen_stack(p->n, p->mu, p->dt, &s, err)) || (st = world_adopt(w, &s, 1, p->mu, p->dt, err)))
        return st;
    for (int i = 0; i < w->s.nbodies; ++i) shape_set(&w->shapes[i], CLCONE_SHAPE_BOX, 0.5, 0.5, 0.5, 1.0);
    plane_set(&w->planes[0], 0, 0, 1, 0);
    return CLCONE_OK;
}

static clcone_status world_grid(const clcone_gen_params *p, clcone_world *w, clcone_error *err)
{
    clcone_scene s;
    clcone_status st;
    if ((st = clc_gen_grid(p->n, p->n, p->mu, p->dt, &s, err)) || (st = world_adopt(w, &s, 1, p->mu, p->dt, err)))
        return st;
    for (int i = 0; i < w->s.nbodies; ++i)
        shape_set(&w->shapes[i], CLCONE_SHAPE_SPHERE, 0.5, 0, 0, sphere_mass(0.5));
    plane_set(&w->planes[0], 0, 0, 1, 0);
    return CLCONE_OK;
}

/* Bricks of 1 x 0.5 x 0.5 (unit density), rows offset by half a brick so
 * every brick above the bottom row rests on two; neighbours in a row are
 * WALL_GAP apart so that only the vertical faces' absence of contact, not
 * rounding, decides what touches. */
#define WALL_GAP 0.02
static clcone_status world_wall(const clcone_gen_params *p, clcone_world *w, clcone_error *err)
{
    long long nb;
    int m = 0;
    clcone_status st;
    if (p->n < 1) return clc_fail(err, CLCONE_EINVAL, "wall with %d bricks in the bottom row: need at least 1", p->n);
    if ((st = clc_gen_size_check("wall", 0.5 * p->n * ((double)p->n + 1), err)) ||
        (st = clc_gen_check_mu_dt(p->mu, p->dt, err)))
        return st;
    nb = (long long)p->n * (p->n + 1) / 2;
    if ((st = clc_world_alloc(w, (int)nb, 0, 1, err))) return st;
    w->mu = p->mu;
    w->dt = p->dt;
    plane_set(&w->planes[0], 0, 0, 1, 0);
    for (int row = 0; row < p->n; ++row)
        for (int j = 0; j < p->n - row; ++j, ++m) {
            clcone_body *b = &w->s.bodies[m];
            b->x[0] = 0.5 + row * 0.5 * (1.0 + WALL_GAP) + j * (1.0 + WALL_GAP);
            b->x[2] = 0.25 + 0.5 * row;
            shape_set(&w->shapes[m], CLCONE_SHAPE_BOX, 0.5, 0.25, 0.25, 0.25);
        }
    clcone_world_update_inertia(w);
    if ((st = clcone_world_detect(w, GEN_DETECT_MARGIN, NULL, err))) clcone_world_free(w);
    return st;
}

/* A unit box (mass 1) resting on the plane through the origin whose
 * normal is the z axis turned by -theta about y: the slope rises along +x
 * and gravity pulls the box down it with g sin(theta). */
static clcone_status world_incline(const clcone_gen_params *p, clcone_world *w, clcone_error *err)
{
    double th = p->theta, n[3];
    clcone_status st;
    if (!isfinite(th) || th < 0 || th >= 0.5 * CONE_PI)
        return clc_fail(err, CLCONE_EINVAL, "incline angle theta = %g must be in [0, pi/2)", th);
    if ((st = clc_gen_check_mu_dt(p->mu, p->dt, err))) return st;
    if ((st = clc_world_alloc(w, 1, 0, 1, err))) return st;
    w->mu = p->mu;
    w->dt = p->dt;
    n[0] = -sin(th);
    n[1] = 0;
    n[2] = cos(th);
    plane_set(&w->planes[0], n[0], n[1], n[2], 0);
    shape_set(&w->shapes[0], CLCONE_SHAPE_BOX, 0.5, 0.5, 0.5, 1.0);
    w->shapes[0].quat[0] = cos(0.5 * th);
    w->shapes[0].quat[2] = -sin(0.5 * th);
    for (int k = 0; k < 3; ++k) w->s.bodies[0].x[k] = 0.5 * n[k];
    clcone_world_update_inertia(w);
    if ((st = clcone_world_detect(w, GEN_DETECT_MARGIN, NULL, err))) clcone_world_free(w);
    return st;
}

/* The generators, and the parameters each uses beyond mu and dt. */
static const struct {
    const char *name;
    clcone_status (*fn)(const clcone_gen_params *, clcone_world *, clcone_error *);
    unsigned uses; /* CLCONE_GEN_GIVEN_* */
} GENS[] = {{"pile", world_pile, CLCONE_GEN_GIVEN_N | CLCONE_GEN_GIVEN_SEED | CLCONE_GEN_GIVEN_SPREAD},
            {"stack", world_stack, CLCONE_GEN_GIVEN_N},
            {"wall", world_wall, CLCONE_GEN_GIVEN_N},
            {"grid", world_grid, CLCONE_GEN_GIVEN_N},
            {"incline", world_incline, CLCONE_GEN_GIVEN_THETA}};
#define NGENS ((int)(sizeof GENS / sizeof GENS[0]))

static int gen_index(const char *name)
{
    for (int k = 0; k < NGENS; ++k)
        if (strcmp(name, GENS[k].name) == 0) return k;
    return -1;
}

clcone_status clcone_gen_check_given(const char *name, unsigned given, clcone_error *err)
{
    static const struct {
        unsigned bit;
        const char *name;
    } PARAMS[] = {{CLCONE_GEN_GIVEN_N, "n"}, {CLCONE_GEN_GIVEN_SEED, "seed"}, {CLCONE_GEN_GIVEN_SPREAD, "spread"},
                  {CLCONE_GEN_GIVEN_THETA, "theta"}};
    CLCONE_REQUIRE(err, name);
    int k = gen_index(name);
    if (k < 0) return CLCONE_OK; /* clcone_world_generate's to refuse */
    if (given >= 2u * CLCONE_GEN_GIVEN_THETA)
        return clc_fail(err, CLCONE_EINVAL, "unknown generator parameter bits 0x%x given",
                           given & ~(2u * CLCONE_GEN_GIVEN_THETA - 1));
    /* the size means something else for each generator, so no default fits them all */
    if ((GENS[k].uses & CLCONE_GEN_GIVEN_N) && !(given & CLCONE_GEN_GIVEN_N))
        return clc_fail(err, CLCONE_EINVAL, "n (the size) is needed for %s: what it counts differs by generator",
                           name);
    for (size_t i = 0; i < sizeof PARAMS / sizeof PARAMS[0]; ++i) {
        char users[64] = "";
        int count = 0;
        if (!(given & PARAMS[i].bit) || (GENS[k].uses & PARAMS[i].bit)) continue;
        for (int j = 0; j < NGENS; ++j)
            if (GENS[j].uses & PARAMS[i].bit) {
                if (count++) strncat(users, ", ", sizeof users - strlen(users) - 1);
                strncat(users, GENS[j].name, sizeof users - strlen(users) - 1);
            }
        return clc_fail(err, CLCONE_EINVAL, "%s does not apply: only %s use%s it, not %s", PARAMS[i].name, users,
                           count > 1 ? "" : "s", name);
    }
    return CLCONE_OK;
}

clcone_status clcone_world_generate(const char *name, const clcone_gen_params *p, clcone_world *w,
                                    clcone_error *err)
{
    CLCONE_REQUIRE(err, name);
    CLCONE_REQUIRE(err, p);
    CLCONE_REQUIRE(err, w);
    clcone_status st;
    int k = gen_index(name);
    memset(w, 0, sizeof *w);
    if (k < 0)
        return clc_fail(err, CLCONE_EINVAL, "unknown generator '%s' (pile, stack, wall, grid, incline)", name);
    if ((st = GENS[k].fn(p, w, err))) return st;
    clcone_world_update_inertia(w);
    return CLCONE_OK;
}
