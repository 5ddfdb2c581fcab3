/* A box on the ground and a small pile of spheres, each solved on the
 * default OpenCL device and on the CPU reference, through the public API
 * only. Build against an installed clcone:
 *
 *     cc box_and_pile.c $(pkg-config --cflags --libs clcone) -lm -o box_and_pile
 *
 * Exit status 0 when all four solves converge, 1 when one does not, 2 on
 * an error (no OpenCL device, out of memory). */
#include <clcone/clcone.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Solves the world's contact problem on ctx (NULL: the reference) and
 * prints one result; returns 1 when it converged, 0 when not, -1 on error. */
static int solve(clcone_context *ctx, const clcone_scene *s, double tol, double *r)
{
    clcone_options o;
    clcone_result res;
    clcone_error e;
    int converged;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_CCP;
    o.solver = CLCONE_SOLVER_APGD;
    o.tol = tol;
    if (clcone_solve_scene(ctx, s, &o, r, &res, &e) != CLCONE_OK) {
        fprintf(stderr, "box_and_pile: %s\n", e.msg);
        return -1;
    }
    printf("  %-9s %s after %d iterations, error %.1e\n", ctx ? "device" : "reference",
           clcone_run_status_name(res.items[0].status), res.items[0].iters, res.items[0].error);
    converged = res.items[0].status == CLCONE_CONVERGED;
    clcone_result_free(&res);
    return converged;
}

/* Generates the world `name` with n, solves it on both sides and prints
 * how far apart the body velocities after the impulses are (unique for
 * the convex ccp model even where the reactions are not, as in a pile);
 * returns the number of solves that converged (0..2), or -1 on error. */
static int solve_both(clcone_context *ctx, const char *label, const char *name, int n)
{
    clcone_gen_params gp;
    clcone_world w;
    clcone_scene s;
    clcone_error e;
    double *rd = NULL, *rr = NULL, *vd = NULL, *vr = NULL, diff = 0, scale = 0;
    int cd = -1, cr = -1;
    clcone_gen_params_default(&gp);
    gp.n = n;
    if (clcone_world_generate(name, &gp, &w, &e) != CLCONE_OK) {
        fprintf(stderr, "box_and_pile: %s\n", e.msg);
        return -1;
    }
    if (clcone_world_contact_scene(&w, &s, &e) != CLCONE_OK) {
        fprintf(stderr, "box_and_pile: %s\n", e.msg);
        clcone_world_free(&w);
        return -1;
    }
    printf("%s: %d bodies, %d contacts\n", label, s.nbodies, s.ncontacts);
    rd = calloc(3 * (size_t)s.ncontacts, sizeof *rd);
    rr = calloc(3 * (size_t)s.ncontacts, sizeof *rr);
    vd = malloc(6 * (size_t)s.nbodies * sizeof *vd);
    vr = malloc(6 * (size_t)s.nbodies * sizeof *vr);
    if (rd && rr && vd && vr) {
        /* float devices round at about 1e-7 relative: 1e-5 is what they reach */
        cd = solve(ctx, &s, clcone_context_precision(ctx) == CLCONE_DOUBLE ? 1e-8 : 1e-5, rd);
        cr = cd < 0 ? -1 : solve(NULL, &s, 1e-8, rr);
    } else {
        fprintf(stderr, "box_and_pile: out of memory\n");
    }
    if (cd >= 0 && cr >= 0) {
        /* velocity changes M^-1 J^T r; the free velocity is their scale */
        clcone_scene_apply_impulses(&s, rd, vd);
        clcone_scene_apply_impulses(&s, rr, vr);
        for (int i = 0; i < 6 * s.nbodies; ++i) {
            diff = fmax(diff, fabs(vd[i] - vr[i]));
            scale = fmax(scale, fabs(s.bodies[i / 6].v[i % 6]));
        }
        printf("  velocities after the impulses differ by %.1e of the free velocity\n", diff / scale);
    }
    free(rd);
    free(rr);
    free(vd);
    free(vr);
    clcone_scene_free(&s);
    clcone_world_free(&w);
    return cd < 0 || cr < 0 ? -1 : cd + cr;
}

int main(void)
{
    clcone_context *ctx = NULL;
    clcone_error e;
    int box, pile;
    if (clcone_context_create(NULL, CLCONE_FLOAT, &ctx, &e) != CLCONE_OK) {
        fprintf(stderr, "box_and_pile: %s\n", e.msg);
        return 2;
    }
    printf("clcone %s (header %s) on %s\n", clcone_version(), CLCONE_VERSION, clcone_context_device(ctx)->name);
    box = solve_both(ctx, "a box on the ground", "stack", 1);
    pile = box < 0 ? -1 : solve_both(ctx, "a pile of spheres in a box", "pile", 40);
    clcone_context_free(ctx);
    if (box < 0 || pile < 0) return 2;
    return box + pile == 4 ? 0 : 1;
}
