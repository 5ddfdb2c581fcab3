/* The MJCF files of bench section 5 (sec_mujoco.c): piles of spheres and
 * of cubes written as MuJoCo models, and the memory MuJoCo will size for
 * them. Built only with -DBENCH_MUJOCO, as the section is. */
#ifdef BENCH_MUJOCO
#include "mujoco_models.h"
#include "cone.h"

#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>

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

/* The pile of clcone_gen_pile: its moving spheres, and its container's
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
    mjcf_head(x, "clcone_sphere_pile", mu, dt, ncon_est);
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
    mjcf_head(x, "clcone_cube_pile", mu, dt, ncon_est);
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

#endif
