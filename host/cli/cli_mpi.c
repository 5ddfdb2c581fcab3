/* clcone-mpi: the command line under mpirun (built into clcone-mpi only,
 * with CLCONE_MPI). Rank 0 runs the command line as clcone does; the
 * other ranks wait for it, for the collective part of `solve --mpi`,
 * which each runs from its own copy of the same command line, and then
 * for the exit code, which every rank returns, so that mpirun's is the
 * command's. Rank 0 tells them either way, so a command that stops
 * early leaves no rank waiting. */
#include <clcone/mpi/ranks.h>
#include "cli/cli.h"

#include <stdio.h>

enum { MSG_SOLVE = 1, MSG_END };

static int cli_rank;

static void tell_ranks(int what, int rc)
{
    int msg[2] = {what, rc};
    MPI_Bcast(msg, 2, MPI_INT, 0, MPI_COMM_WORLD);
}

clcone_status cli_mpi_solve(cli_args *a, const clcone_problem *batch, clcone_context **ctx, double *r,
                            clcone_result *res, clcone_error *e)
{
    clcone_status st;
    if (cli_rank == 0) tell_ranks(MSG_SOLVE, 0);
    if ((st = clcone_mpi_context_create(MPI_COMM_WORLD, a->device, a->prec, ctx, e))) return st;
    cli_on_compile(*ctx);
    clcone_options_resolve(&a->o, *ctx);
    return clcone_mpi_solve_batch(MPI_COMM_WORLD, 0, *ctx, batch, cli_rank == 0 ? &a->o : NULL, r, res, e);
}

/* A rank other than 0: each MSG_SOLVE is rank 0 in `solve --mpi` of the
 * command line this rank was started with too. */
static int serve(int argc, char **argv)
{
    static cli_args a;
    int msg[2];
    for (;;) {
        clcone_context *ctx = NULL;
        clcone_error e;
        MPI_Bcast(msg, 2, MPI_INT, 0, MPI_COMM_WORLD);
        if (msg[0] == MSG_END) return msg[1];
        parse_args(argc - 2, argv + 2, "--mpi", CLI_MAX_FILES, &a);
        cli_mpi_solve(&a, NULL, &ctx, NULL, NULL, &e);
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
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) return EXIT_USAGE;
        rc = serve(argc, argv);
    } else {
        rc = run(argc, argv);
        tell_ranks(MSG_END, rc);
    }
    MPI_Finalize();
    return rc;
}
