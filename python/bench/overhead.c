/* The C side of the Python overhead measurement (overhead.py): plan
 * solves of one problem file in a loop on a backend, the wall time per
 * call, median of runs. Usage: overhead FILE ref|DEVICE CALLS RUNS */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <clcone/clcone.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    clcone_problem p;
    clcone_context *ctx = NULL;
    clcone_options o;
    clcone_plan *pl;
    clcone_error e;
    int calls = argc > 3 ? atoi(argv[3]) : 10000, runs = argc > 4 ? atoi(argv[4]) : 5;
    double per[64];
    if (argc < 3 || runs < 1 || runs > 64 || calls < 1) {
        fprintf(stderr, "usage: overhead FILE ref|DEVICE CALLS RUNS\n");
        return 2;
    }
    clcone_options_default(&o);
    o.warm_start = 1; /* as clcone.Plan makes its plans */
    if (clcone_read_problem(argv[1], &p, &e)
        || (strcmp(argv[2], "ref") != 0 && clcone_context_create(argv[2], CLCONE_FLOAT, &ctx, &e))
        || clcone_plan_create(ctx, &p, &o, &pl, &e)) {
        fprintf(stderr, "overhead: %s\n", e.msg);
        return 2;
    }
    double *r = calloc(3 * (size_t)p.n, sizeof *r);
    for (int k = 0; k < runs; ++k) {
        double t0 = now_us();
        for (int i = 0; i < calls; ++i) {
            clcone_result res;
            memset(r, 0, 3 * sizeof *r * (size_t)p.n);
            if (clcone_plan_solve(pl, r, &res, &e)) {
                fprintf(stderr, "overhead: %s\n", e.msg);
                return 2;
            }
            clcone_result_free(&res);
        }
        per[k] = (now_us() - t0) / calls;
    }
    qsort(per, (size_t)runs, sizeof *per, cmp);
    printf("%.2f\n", per[runs / 2]);
    clcone_plan_free(pl);
    clcone_context_free(ctx);
    clcone_problem_free(&p);
    free(r);
    return 0;
}
