/* Independent items on several threads (core/parallel.h). */
#define _POSIX_C_SOURCE 200809L
#include "core/parallel.h"
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct item_thread {
    clc_item_fn fn;
    void *job;
    int t, threads, n, failed;
    clcone_status s;
    clcone_error err;
} item_thread;

static void *run_items(void *arg)
{
    item_thread *j = arg;
    for (int i = j->t; i < j->n && !j->s; i += j->threads)
        if ((j->s = j->fn(j->job, i, &j->err))) j->failed = i;
    return NULL;
}

/* The lowest failing item of threads' runs into err and *failed. */
static clcone_status lowest_failure(const item_thread *j, int threads, int *failed, clcone_error *err)
{
    const item_thread *bad = NULL;
    for (int t = 0; t < threads; ++t)
        if (j[t].s && (!bad || j[t].failed < bad->failed)) bad = &j[t];
    if (!bad) return CLCONE_OK;
    *err = bad->err;
    if (failed) *failed = bad->failed;
    return bad->s;
}

clcone_status clc_each_item(int threads, int n, clc_item_fn fn, void *job, int *failed, clcone_error *err)
{
    item_thread one = {fn, job, 0, 1, n, -1, CLCONE_OK, {0}}, *j;
    pthread_t *tid;
    char *started;
    clcone_status s;
    if (failed) *failed = -1;
    if (threads > n) threads = n;
    if (threads <= 1) { /* the common single thread: nothing allocated */
        run_items(&one);
        return lowest_failure(&one, 1, failed, err);
    }
    j = clc_calloc((size_t)threads, sizeof *j, err, "the threads' items");
    tid = clc_calloc((size_t)threads, sizeof *tid, err, "the threads");
    started = clc_calloc((size_t)threads, 1, err, "the threads");
    s = CLCONE_ENOMEM;
    if (j && tid && started) {
        for (int t = 0; t < threads; ++t) j[t] = (item_thread){fn, job, t, threads, n, -1, CLCONE_OK, {0}};
        for (int t = 1; t < threads; ++t) started[t] = pthread_create(&tid[t], NULL, run_items, &j[t]) == 0;
        run_items(&j[0]);
        for (int t = 1; t < threads; ++t)
            if (started[t]) pthread_join(tid[t], NULL);
            else run_items(&j[t]);
        s = lowest_failure(j, threads, failed, err);
    }
    free(j);
    free(tid);
    free(started);
    return s;
}
