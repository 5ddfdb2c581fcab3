/* clcone-mpi: the command line under mpirun (built into clcone-mpi only,
 * with CLCONE_MPI). Rank 0 runs the command line as clcone does; the
 * other ranks wait for it, for the collective part of `solve --mpi`,
 * which each runs from its own copy of the same command line, and then
 * for the exit code, which every rank returns, so that mpirun's is the
 * command's. Rank 0 tells them either way, so a command that stops
 * early leaves no rank waiting. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/mpi/ranks.h>
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rank 0's messages to the others: MSG_SOLVE with whether there are
 * problem files and how many scene files, MSG_SIMULATE with the
 * precision (the device spec follows), or MSG_END with the exit code. */
enum { MSG_SOLVE = 1, MSG_END, MSG_SIMULATE };

static int cli_rank;
/* A rank's own stderr (the ranks but 0 print nothing else) */
static int cli_stderr = 2;

/* A rank's failure inside the exchanges, where the others wait for it:
 * said on its own stderr, then the job ended. */
static void end_stranded(const clcone_error *e)
{
    dprintf(cli_stderr, "clcone: rank %d: %s\n", cli_rank, e->msg);
    MPI_Abort(MPI_COMM_WORLD, EXIT_USAGE);
}

/* One scene alone over the ranks (domain decomposition): rank 0's
 * options with the scene's time step, its time cap and its progress
 * line; what went over the wire on stdout. A rank that failed during the
 * iterations leaves the others in an exchange: it says why on its own
 * stderr and ends the job. */
static clcone_status solve_domain(cli_args *a, const clcone_scene *sc, const double *dt, double *rs,
                                  clcone_result *rsc, clcone_context *ctx, clcone_error *e)
{
    clcone_options od = a->o;
    clcone_mpi_domain_stats ds;
    cli_progress prog;
    clcone_status st;
    od.soft_dt = dt ? dt[0] : od.soft_dt;
    if (cli_rank == 0) cli_progress_attach(a, &od, &prog);
    st = clcone_mpi_solve_domain(MPI_COMM_WORLD, 0, ctx, sc, cli_rank == 0 ? &od : NULL, rs, rsc, &ds, e);
    if (cli_rank == 0) cli_progress_end(&prog);
    if (st && ds.stranded) end_stranded(e);
    if (!st && cli_rank == 0)
        printf("ranks:    %d, the most contacts on one %lld, %lld shared by two; %lld ghost bodies, %lld bytes an "
               "exchange (the most from one rank %lld), %lld exchanges, %lld sums\n",
               ds.ranks, ds.contacts_max, ds.shared, ds.ghosts, ds.halo_bytes, ds.halo_bytes_max, ds.exchanges,
               ds.sums);
    return st;
}

static void tell_ranks(int msg[3])
{
    MPI_Bcast(msg, 3, MPI_INT, 0, MPI_COMM_WORLD);
}

/* Every rank: its device, then the problems (msg[1]) and the msg[2]
 * scenes (sc, dt on rank 0, reactions into rs) over the ranks; rank 0
 * gets the scenes' results in rsc. */
static clcone_status solve_over_ranks(cli_args *a, cli_mpi_batch *b, const int msg[3], const clcone_scene *sc,
                                      const double *dt, double *rs, clcone_result *rsc, clcone_context **ctx,
                                      clcone_error *e)
{
    const clcone_options *o = cli_rank == 0 ? &a->o : NULL;
    clcone_status st = clcone_mpi_context_create(MPI_COMM_WORLD, a->device, a->prec, ctx, e);
    if (st) return st;
    cli_on_compile(*ctx);
    clcone_options_resolve(&a->o, *ctx);
    if (!msg[1] && msg[2] == 1) return solve_domain(a, sc, dt, rs, rsc, *ctx, e);
    if (msg[1]
        && (st = clcone_mpi_solve_batch(MPI_COMM_WORLD, 0, *ctx, b ? b->batch : NULL, o, b ? b->r : NULL,
                                        b ? b->res : NULL, e)))
        return st;
    if (msg[2]) {
        clcone_options os = a->o; /* soft's R and a_ref are the batch's */
        os.soft_R = os.soft_aref = NULL;
        st = clcone_mpi_solve_scenes(MPI_COMM_WORLD, 0, *ctx, sc, msg[2], dt, cli_rank == 0 ? &os : NULL, rs, rsc, e);
    }
    return st;
}

/* Rank 0: the scene files' contact scenes and time steps (*ns of them)
 * and room for their reactions; 0, or the exit code after saying why. */
static int scenes_of(const cli_args *a, const cli_mpi_batch *b, clcone_scene **sc, double **dt, double **rs,
                     int *ns)
{
    clcone_error e;
    size_t contacts = 0;
    *ns = 0;
    for (int k = 0; k < b->nf; ++k) *ns += b->worlds[k].s.bodies != NULL;
    *sc = calloc((size_t)*ns + 1, sizeof **sc);
    *dt = calloc((size_t)*ns + 1, sizeof **dt);
    if (!*sc || !*dt) {
        fprintf(stderr, "clcone: out of memory for %d scenes\n", *ns);
        return EXIT_USAGE;
    }
    for (int k = 0, j = 0; k < b->nf; ++k)
        if (b->worlds[k].s.bodies) {
            memset(&e, 0, sizeof e);
            if (clcone_world_contact_scene(&b->worlds[k], &(*sc)[j], &e)) {
                cli_name_file(&e, a->positional[k]);
                return lib_error(&e);
            }
            (*dt)[j] = b->worlds[k].dt;
            contacts += (size_t)(*sc)[j++].ncontacts;
        }
    if (!(*rs = calloc(3 * contacts + 1, sizeof **rs))) {
        fprintf(stderr, "clcone: out of memory for %zu contacts' reactions\n", contacts);
        return EXIT_USAGE;
    }
    return 0;
}

/* Rank 0: the scenes' results to the scene files' places. */
static int scenes_back(cli_mpi_batch *b, const clcone_scene *sc, const double *rs, const clcone_result *rsc)
{
    size_t c = 0;
    for (int k = 0, j = 0; k < b->nf; ++k)
        if (b->worlds[k].s.bodies) {
            size_t len = 3 * (size_t)sc[j].ncontacts;
            b->out[k] = rsc->items[j];
            b->n[k] = sc[j++].ncontacts;
            if (!(b->rk[k] = malloc(len * sizeof *rs + 1))) {
                fprintf(stderr, "clcone: out of memory for %zu reactions\n", len);
                return EXIT_USAGE;
            }
            memcpy(b->rk[k], rs + c, len * sizeof *rs);
            c += len;
        }
    return 0;
}

int cli_mpi_solve(cli_args *a, cli_mpi_batch *b, clcone_context **ctx)
{
    int msg[3] = {MSG_SOLVE, b->batch != NULL, 0}, rc;
    clcone_scene *sc = NULL;
    double *dt = NULL, *rs = NULL;
    clcone_result rsc;
    clcone_error e;
    memset(&rsc, 0, sizeof rsc);
    /* what can fail on rank 0 alone fails before the others are told */
    if (!(rc = scenes_of(a, b, &sc, &dt, &rs, &msg[2]))) {
        tell_ranks(msg);
        if (solve_over_ranks(a, b, msg, sc, dt, rs, &rsc, ctx, &e)) rc = lib_error(&e);
    }
    if (!rc) {
        *b->ms = (b->batch ? b->res->time_ms : 0) + (msg[2] ? rsc.time_ms : 0);
        rc = scenes_back(b, sc, rs, &rsc);
    }
    for (int j = 0; sc && j < msg[2]; ++j) clcone_scene_free(&sc[j]);
    free(sc);
    free(dt);
    free(rs);
    clcone_result_free(&rsc);
    return rc;
}

/* Rank 0's device spec (empty: none) to the others, into spec. */
static void share_device(char spec[256])
{
    MPI_Bcast(spec, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static clcone_mpi_stepper *cli_stepper;

int cli_mpi_sim_open(const cli_args *a, clcone_context **ctx)
{
    int msg[3] = {MSG_SIMULATE, (int)a->prec, 0};
    char spec[256] = "";
    clcone_error e;
    if (a->device) snprintf(spec, sizeof spec, "%s", a->device);
    tell_ranks(msg);
    share_device(spec);
    if (clcone_mpi_context_create(MPI_COMM_WORLD, spec[0] ? spec : NULL, a->prec, ctx, &e)) return lib_error(&e);
    cli_on_compile(*ctx);
    return 0;
}

int cli_mpi_sim_attach(clcone_sim *sim, clcone_context *ctx, double rebalance)
{
    clcone_error e;
    return clcone_mpi_sim_attach(MPI_COMM_WORLD, 0, ctx, sim, rebalance, &cli_stepper, &e) ? lib_error(&e) : 0;
}

int cli_mpi_sim_sync(clcone_error *e)
{
    return clcone_mpi_sim_sync(cli_stepper, e) != CLCONE_OK;
}

void cli_mpi_sim_close(void)
{
    clcone_error e;
    clcone_mpi_sim_figures f;
    if (clcone_mpi_sim_stranded(cli_stepper)) {
        snprintf(e.msg, sizeof e.msg, "a solve failed during its iterations: the other ranks wait for this one");
        end_stranded(&e);
    }
    if (cli_stepper && !clcone_mpi_sim_figures_get(cli_stepper, &f, &e) && f.steps > 0) {
        printf("ranks:    %d steps: %lld repartitions, %.1f ghosts a step, %.0f bytes sent a step (%.0f in the "
               "solves' halo exchanges)\n",
               (int)f.steps, f.repartitions, (double)f.ghosts / (double)f.steps, (double)f.bytes / (double)f.steps,
               (double)f.halo_bytes / (double)f.steps);
        printf("ranks:    bodies that changed rank: %lld\n", f.moved);
    }
    clcone_mpi_sim_end(MPI_COMM_WORLD, 0, cli_stepper);
    cli_stepper = NULL;
}

/* A rank other than 0 in `simulate --mpi`: its device, then each of rank
 * 0's solves until the run ends. */
static void serve_simulate(const int msg[3])
{
    char spec[256];
    clcone_context *ctx = NULL;
    clcone_error e;
    int stranded;
    share_device(spec);
    if (clcone_mpi_context_create(MPI_COMM_WORLD, spec[0] ? spec : NULL, (clcone_precision)msg[1], &ctx, &e))
        return;
    if (clcone_mpi_sim_serve(MPI_COMM_WORLD, 0, ctx, &stranded, &e) && stranded) end_stranded(&e);
    clcone_context_free(ctx);
}

/* A rank other than 0: each MSG_SOLVE is rank 0 in `solve --mpi` of the
 * command line this rank was started with too. */
static int serve(int argc, char **argv)
{
    static cli_args a;
    int msg[3];
    for (;;) {
        clcone_context *ctx = NULL;
        clcone_error e;
        tell_ranks(msg);
        if (msg[0] == MSG_END) return msg[1];
        if (msg[0] == MSG_SIMULATE) {
            serve_simulate(msg);
            continue;
        }
        parse_args(argc - 2, argv + 2, "--mpi", CLI_MAX_FILES, &a);
        solve_over_ranks(&a, NULL, msg, NULL, NULL, NULL, NULL, &ctx, &e);
        clcone_context_free(ctx);
    }
}

int cli_mpi_main(int argc, char **argv, int (*run)(int, char **))
{
    int rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &cli_rank);
    if (cli_rank != 0) {
        /* what goes wrong on a rank reaches rank 0 (clcone_mpi_agree),
         * which says it once */
        cli_stderr = dup(2);
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) return EXIT_USAGE;
        rc = serve(argc, argv);
    } else {
        int end[3] = {MSG_END, 0, 0};
        end[1] = rc = run(argc, argv);
        tell_ranks(end);
    }
    MPI_Finalize();
    return rc;
}
