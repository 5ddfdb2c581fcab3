/* Loopback ping-pong between ranks 0 and 1 (bench/mpi/run.sh): for each
 * message size, the one-way time (half the median round trip of the
 * repetitions after a warm-up: the median, since the machine is shared
 * and a mean takes in every time another process had the core) and the
 * bandwidth it gives. Prints "bytes one_way_us MB_per_s" lines on rank 0. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, size;
    char *buf;
    double *trip;
    const int max = 1 << 24, most_reps = 2000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = calloc((size_t)max, 1);
    trip = calloc((size_t)most_reps, sizeof *trip);
    if (size < 2 || !buf || !trip) {
        if (rank == 0) fprintf(stderr, "pingpong: needs 2 ranks and %d bytes\n", max);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int bytes = 8; bytes <= max; bytes *= 8) {
        /* fewer repetitions for large messages: each takes longer */
        int reps = bytes <= 4096 ? most_reps : bytes <= (1 << 20) ? 200 : 20;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = -reps / 10; i < reps; ++i) {
            double t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (i >= 0) trip[i] = MPI_Wtime() - t0;
            } else if (rank == 1) {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) {
            double one_way;
            qsort(trip, (size_t)reps, sizeof *trip, by_value);
            one_way = trip[reps / 2] / 2;
            printf("%d %.3f %.1f\n", bytes, one_way * 1e6, bytes / one_way / 1e6);
        }
    }
    free(buf);
    free(trip);
    MPI_Finalize();
    return 0;
}
