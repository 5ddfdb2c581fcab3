/* The MPI library part's own calls (include/clcone/mpi/ranks.h), run by
 * tests/mpi/run.sh under mpirun: the assignment, the agreement, a warm
 * started batch and warm-started scenes (which the CLI does not take)
 * against clcone_solve of the whole batch and clcone_solve_scene of each
 * scene in one process, bitwise, and the argument checks, which
 * must fail on every rank alike. Not a Check suite: Check forks each
 * test, and MPI does not survive a fork. Rank 0 prints
 * "N passed, M failed"; the exit code is 1 on a failure. */
#include <clcone/mpi/ranks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, passed, failed;

/* Counted on every rank; rank 0 names what failed anywhere. */
static void check(int cond, const char *what)
{
    int all;
    MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) ++passed;
    else ++failed;
    if (rank == 0) printf("%s %s\n", all ? "PASS" : "FAIL", what);
}

static void test_assign(void)
{
    static const int contacts[] = {5, 40, 7, 40, 1, 12, 0, 30};
    static const int want3[] = {1, 0, 0, 1, 2, 2, 2, 2};
    int owner[8], again[8], load[3] = {0, 0, 0};
    clcone_error e;
    int ok = clcone_mpi_assign(8, contacts, 3, owner, &e) == CLCONE_OK;
    ok = ok && clcone_mpi_assign(8, contacts, 3, again, &e) == CLCONE_OK;
    ok = ok && memcmp(owner, again, sizeof owner) == 0;
    for (int k = 0; ok && k < 8; ++k) load[owner[k]] += contacts[k];
    check(ok && memcmp(owner, want3, sizeof owner) == 0 && load[0] == 47 && load[1] == 45 && load[2] == 43,
          "assign: largest first to the least loaded rank, the same every time");
    check(clcone_mpi_assign(3, contacts, 0, owner, &e) == CLCONE_EINVAL && strstr(e.msg, "0 ranks"),
          "assign: no ranks refused");
}

static void test_agree(void)
{
    clcone_error e;
    clcone_status st = CLCONE_OK;
    char want[128];
    memset(&e, 0, sizeof e);
    if (rank == size - 1) {
        st = CLCONE_EIO;
        snprintf(e.msg, sizeof e.msg, "disk %d full", rank);
    }
    st = clcone_mpi_agree(MPI_COMM_WORLD, st, &e);
    snprintf(want, sizeof want, "rank %d of %d: disk %d full", size - 1, size, size - 1);
    check(st == CLCONE_EIO && e.code == CLCONE_EIO && strcmp(e.msg, want) == 0,
          "agree: the failing rank's status and message on every rank");
    check(clcone_mpi_agree(MPI_COMM_WORLD, CLCONE_OK, &e) == CLCONE_OK, "agree: all well is well");
}

/* The default options for model, at most max_iter iterations, resolved
 * for ctx. */
static void resolved(const clcone_context *ctx, clcone_model model, int max_iter, clcone_options *o)
{
    clcone_options_default(o);
    o->model = model;
    o->max_iter = max_iter;
    clcone_options_resolve(o, ctx);
}

/* The batch of the given shared problems (read on root). */
static void read_batch(const char *dir, clcone_problem *batch)
{
    static const char *const names[] = {"Capsules-i101-404.dat", "Rover1040.dat", "BoxesStack1-i100000-32.hdf5.dat",
                                        "FC3D_Example1.dat", "Confeti-ex03-Fc3D-SBM.dat"};
    clcone_problem parts[5];
    const clcone_problem *ptrs[5];
    clcone_error e;
    int ok = 1;
    char path[4096];
    memset(batch, 0, sizeof *batch);
    for (int k = 0; k < 5; ++k) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        ok = ok && clcone_read_problem(path, &parts[k], &e) == CLCONE_OK;
        if (!ok) fprintf(stderr, "%s\n", e.msg);
        ptrs[k] = &parts[k];
    }
    if (ok) ok = clcone_batch_concat(ptrs, 5, batch, &e) == CLCONE_OK;
    for (int k = 0; ok && k < 5; ++k) clcone_problem_free(&parts[k]);
    if (!ok) exit(2);
}

/* A warm-started batch over the ranks equals clcone_solve of it; soft:
 * with soft's R and a_ref given per contact, which go with each rank's
 * problems (and then no argument checks). */
static void test_warm_batch(clcone_context *ctx, const char *dir, int soft)
{
    clcone_problem batch;
    clcone_options o;
    clcone_result one, over;
    clcone_error e;
    double *r0 = NULL, *r1 = NULL, *rk = NULL, *R = NULL, *aref = NULL;
    int same = 1, st;
    memset(&batch, 0, sizeof batch);
    memset(&one, 0, sizeof one);
    memset(&over, 0, sizeof over);
    resolved(ctx, soft ? CLCONE_MODEL_SOFT : CLCONE_MODEL_CCP, 400, &o);
    if (rank == 0) {
        read_batch(dir, &batch);
        r0 = calloc(3 * (size_t)batch.n, sizeof *r0);
        r1 = calloc(3 * (size_t)batch.n, sizeof *r1);
        rk = calloc(3 * (size_t)batch.n, sizeof *rk);
        R = calloc(3 * (size_t)batch.n, sizeof *R);
        aref = calloc(3 * (size_t)batch.n, sizeof *aref);
        for (int i = 0; soft && i < 3 * batch.n; ++i) {
            R[i] = 0.01 * (1 + i % 5);
            aref[i] = i % 3 ? 0 : -0.1 * (1 + i % 7);
        }
        o.soft_R = soft ? R : NULL;
        o.soft_aref = soft ? aref : NULL;
        /* a start that is not zero: a short solve's reactions */
        o.max_iter = 20;
        if (clcone_solve(ctx, &batch, &o, r0, &one, &e)) fprintf(stderr, "%s\n", e.msg);
        clcone_result_free(&one);
        o.max_iter = 400;
        o.warm_start = 1;
        memcpy(r1, r0, 3 * (size_t)batch.n * sizeof *r1);
        memcpy(rk, r0, 3 * (size_t)batch.n * sizeof *rk);
        if (clcone_solve(ctx, &batch, &o, r1, &one, &e)) fprintf(stderr, "%s\n", e.msg);
    }
    st = clcone_mpi_solve_batch(MPI_COMM_WORLD, 0, ctx, rank == 0 ? &batch : NULL, rank == 0 ? &o : NULL,
                                rank == 0 ? rk : NULL, rank == 0 ? &over : NULL, &e);
    if (st && rank == 0) fprintf(stderr, "%s\n", e.msg);
    if (rank == 0 && !st) {
        same = over.nprob == batch.nprob && memcmp(r1, rk, 3 * (size_t)batch.n * sizeof *rk) == 0;
        for (int k = 0; same && k < batch.nprob; ++k)
            same = over.items[k].iters == one.items[k].iters && over.items[k].status == one.items[k].status
                   && over.items[k].error == one.items[k].error;
        same = same && memcmp(r0, rk, 3 * (size_t)batch.n * sizeof *rk) != 0;
    }
    check(st == CLCONE_OK && same, soft ? "solve_batch: soft's R and a_ref over the ranks, as clcone_solve, bitwise"
                                        : "solve_batch: a warm-started batch over the ranks equals clcone_solve, bitwise");
    if (soft) goto done;

    /* argument checks: what root passes decides for every rank */
    o.progress = rank == 0 ? (void (*)(void *, int, int, double))1 : NULL;
    st = clcone_mpi_solve_batch(MPI_COMM_WORLD, 0, ctx, rank == 0 ? &batch : NULL, rank == 0 ? &o : NULL,
                                rank == 0 ? rk : NULL, rank == 0 ? &over : NULL, &e);
    check(st == CLCONE_ENOTSUP && strstr(e.msg, "not distributed"), "solve_batch: progress refused on every rank");
    st = clcone_mpi_solve_batch(MPI_COMM_WORLD, 0, ctx, NULL, NULL, NULL, NULL, &e);
    check(st == CLCONE_EINVAL && strstr(e.msg, "root needs the batch"), "solve_batch: no batch refused on every rank");
    st = clcone_mpi_solve_batch(MPI_COMM_WORLD, size, ctx, NULL, NULL, NULL, NULL, &e);
    check(st == CLCONE_EINVAL && strstr(e.msg, "outside"), "solve_batch: a root outside the ranks refused");
done:
    clcone_result_free(&one);
    clcone_result_free(&over);
    clcone_problem_free(&batch);
    free(r0);
    free(r1);
    free(rk);
    free(R);
    free(aref);
}

/* Scenes: five generated piles, warm-started, over the ranks against
 * clcone_solve_scene of each alone, bitwise, the third at another time
 * step (a new plan on its rank). */
static void test_warm_scenes(clcone_context *ctx)
{
    enum { NS = 5 };
    clcone_scene sc[NS];
    clcone_world w;
    clcone_gen_params gp;
    clcone_options o;
    clcone_result over, one;
    clcone_error e;
    double dt[NS], *r0 = NULL, *rk = NULL;
    int total = 0, same = 1, st, made = 0;
    memset(sc, 0, sizeof sc);
    memset(&over, 0, sizeof over);
    resolved(ctx, CLCONE_MODEL_SOFT, 200, &o);
    if (rank == 0) {
        for (int k = 0; k < NS; ++k, ++made) {
            clcone_gen_params_default(&gp);
            gp.n = 10 + 7 * k;
            gp.seed = (unsigned)k + 1;
            dt[k] = k == 2 ? 0.005 : 0.01;
            if (clcone_world_generate("pile", &gp, &w, &e) || clcone_world_contact_scene(&w, &sc[k], &e)) exit(2);
            clcone_world_free(&w);
            total += sc[k].ncontacts;
        }
        r0 = calloc(3 * (size_t)total, sizeof *r0);
        rk = calloc(3 * (size_t)total, sizeof *rk);
        for (int i = 0; i < 3 * total; ++i) r0[i] = i % 3 == 0 ? 0.01 : 0;
        memcpy(rk, r0, 3 * (size_t)total * sizeof *rk);
    }
    o.warm_start = 1;
    st = clcone_mpi_solve_scenes(MPI_COMM_WORLD, 0, ctx, sc, rank == 0 ? NS : 0, dt, rank == 0 ? &o : NULL,
                                 rk, rank == 0 ? &over : NULL, &e);
    if (st && rank == 0) fprintf(stderr, "%s\n", e.msg);
    for (int k = 0, c = 0; rank == 0 && !st && k < NS; c += sc[k++].ncontacts) {
        clcone_options ok = o;
        ok.soft_dt = dt[k];
        same = same && clcone_solve_scene(ctx, &sc[k], &ok, r0 + 3 * c, &one, &e) == CLCONE_OK;
        same = same && one.items[0].iters == over.items[k].iters && one.items[0].error == over.items[k].error
               && memcmp(r0 + 3 * c, rk + 3 * c, 3 * (size_t)sc[k].ncontacts * sizeof *rk) == 0;
        clcone_result_free(&one);
    }
    check(st == CLCONE_OK && same && (rank != 0 || over.nprob == NS),
          "solve_scenes: warm-started scenes over the ranks equal clcone_solve_scene of each, bitwise");
    for (int k = 0; k < made; ++k) clcone_scene_free(&sc[k]);
    clcone_result_free(&over);
    free(r0);
    free(rk);
}

/* One scene over the ranks, warm-started (the CLI takes no --warm over
 * ranks): the reactions and iterations of clcone_solve_scene, bitwise;
 * its error, from exact sums, the same bits on 1 rank (root alone, a
 * communicator of its own) and on all; what went over the wire. */
static void test_warm_domain(clcone_context *ctx)
{
    clcone_scene sc;
    clcone_world w;
    clcone_gen_params gp;
    clcone_options o;
    clcone_result over, alone, one;
    clcone_mpi_domain_stats ds;
    clcone_error e;
    MPI_Comm solo;
    double *r0 = NULL, *rk = NULL, *r1 = NULL;
    int st, same = 1;
    memset(&sc, 0, sizeof sc);
    memset(&over, 0, sizeof over);
    memset(&alone, 0, sizeof alone);
    memset(&one, 0, sizeof one);
    resolved(ctx, CLCONE_MODEL_CCP, 150, &o);
    o.solver = CLCONE_SOLVER_APGD;
    o.max_seconds = 0;
    o.warm_start = 1;
    if (rank == 0) {
        clcone_gen_params_default(&gp);
        gp.n = 600;
        if (clcone_world_generate("pile", &gp, &w, &e) || clcone_world_contact_scene(&w, &sc, &e)) exit(2);
        clcone_world_free(&w);
        r0 = calloc(3 * (size_t)sc.ncontacts, sizeof *r0);
        rk = calloc(3 * (size_t)sc.ncontacts, sizeof *rk);
        r1 = calloc(3 * (size_t)sc.ncontacts, sizeof *r1);
        for (int i = 0; i < 3 * sc.ncontacts; ++i) r0[i] = i % 3 == 0 ? 0.01 * (1 + i % 7) : 0;
        memcpy(rk, r0, 3 * (size_t)sc.ncontacts * sizeof *rk);
        memcpy(r1, r0, 3 * (size_t)sc.ncontacts * sizeof *r1);
    }
    st = clcone_mpi_solve_domain(MPI_COMM_WORLD, 0, ctx, rank == 0 ? &sc : NULL, rank == 0 ? &o : NULL, rk,
                                 rank == 0 ? &over : NULL, rank == 0 ? &ds : NULL, &e);
    if (st && rank == 0) fprintf(stderr, "%s\n", e.msg);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    if (rank == 0 && !st) {
        same = clcone_mpi_solve_domain(solo, 0, ctx, &sc, &o, r1, &alone, NULL, &e) == CLCONE_OK
               && alone.items[0].error == over.items[0].error && alone.items[0].iters == over.items[0].iters;
        same = same && clcone_solve_scene(ctx, &sc, &o, r0, &one, &e) == CLCONE_OK;
        same = same && one.items[0].iters == over.items[0].iters && one.items[0].status == over.items[0].status
               && memcmp(r0, rk, 3 * (size_t)sc.ncontacts * sizeof *rk) == 0
               && memcmp(r0, r1, 3 * (size_t)sc.ncontacts * sizeof *rk) == 0;
        MPI_Comm_free(&solo);
    }
    check(st == CLCONE_OK && same,
          "solve_domain: a warm-started scene over the ranks equals clcone_solve_scene, bitwise; its error is "
          "the same bits on 1 rank and on all");
    check(st == CLCONE_OK && (rank != 0 || size == 1 || (ds.ghosts > 0 && ds.shared > 0 && ds.exchanges > 0 &&
                                                         ds.halo_bytes >= ds.halo_bytes_max && ds.ranks == size)),
          "solve_domain: the stats count ghosts, shared contacts and exchanges");
    clcone_scene_free(&sc);
    clcone_result_free(&over);
    clcone_result_free(&alone);
    clcone_result_free(&one);
    free(r0);
    free(rk);
    free(r1);
}

int main(int argc, char **argv)
{
    clcone_context *ctx = NULL;
    clcone_error e;
    const char *dir = getenv("CLCONE_PROBLEMS");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_assign();
    test_agree();
    check(clcone_mpi_context_create(MPI_COMM_WORLD, NULL, CLCONE_DOUBLE, &ctx, &e) == CLCONE_OK,
          "context_create: each rank opens the node's device by its local rank");
    if (ctx) test_warm_batch(ctx, dir && *dir ? dir : "tests/data/problems", 0);
    if (ctx) test_warm_batch(ctx, dir && *dir ? dir : "tests/data/problems", 1);
    if (ctx) test_warm_scenes(ctx);
    if (ctx) test_warm_domain(ctx);
    clcone_context_free(ctx);
    if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
