/* Independent items on several threads (core/parallel.h). */
#define _POSIX_C_SOURCE 200809L
#include "core/parallel.h"
#include "core/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The items the threads share: the next one to claim, and whether one
 * failed (no more are claimed then). */
typedef struct item_queue {
    atomic_int next, stop;
} item_queue;

typedef struct item_thread {
    clc_item_fn fn;
    void *job;
    item_queue *queue;
    int n, failed;
    clcone_status s;
    clcone_error err;
} item_thread;

/* Claims items in increasing order until none is left or one failed: every
 * item below a failing one was claimed before it and runs to its end, so
 * the lowest failure is the one a single thread would stop at. */
static void *run_items(void *arg)
{
    item_thread *j = arg;
    for (;;) {
        int i;
        if (atomic_load(&j->queue->stop) || (i = atomic_fetch_add(&j->queue->next, 1)) >= j->n) return NULL;
        if ((j->s = j->fn(j->job, i, &j->err))) {
            j->failed = i;
            atomic_store(&j->queue->stop, 1);
            return NULL;
        }
    }
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
    item_queue queue;
    item_thread one = {fn, job, &queue, n, -1, CLCONE_OK, {0}}, *j;
    pthread_t *tid;
    char *started;
    clcone_status s;
    atomic_init(&queue.next, 0);
    atomic_init(&queue.stop, 0);
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
        for (int t = 0; t < threads; ++t) j[t] = (item_thread){fn, job, &queue, n, -1, CLCONE_OK, {0}};
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

/* The caller's progress callback behind a lock. */
typedef struct locked_progress {
    pthread_mutex_t lock;
    void (*fn)(void *user, int prob, int iter, double error);
    void *user;
} locked_progress;

static void progress_locked(void *user, int prob, int iter, double error)
{
    locked_progress *L = user;
    pthread_mutex_lock(&L->lock);
    L->fn(L->user, prob, iter, error);
    pthread_mutex_unlock(&L->lock);
}

clcone_status clc_each_problem(clcone_options *o, int n, clc_item_fn fn, void *job, clcone_error *err)
{
    int threads = o->history || o->threads < 1 ? 1 : o->threads;
    locked_progress L = {PTHREAD_MUTEX_INITIALIZER, o->progress, o->progress_user};
    clcone_status s;
    if (threads > 1 && n > 1 && o->progress) {
        o->progress = progress_locked;
        o->progress_user = &L;
    }
    s = clc_each_item(threads, n, fn, job, NULL, err);
    o->progress = L.fn;
    o->progress_user = L.user;
    return s;
}

/* OpenMP's API (libgomp), declared here: omp.h is GCC's own header, which
 * clang (the fuzzers' build) finds only where LLVM's libomp-dev is. */
int omp_get_dynamic(void);
void omp_set_dynamic(int dynamic_threads);

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int dynamic_was; /* the locking thread's OpenMP dyn-var */

/* CHOLMOD 3's supernodal factor assembles in OpenMP teams of a fixed four
 * threads, whatever OMP_NUM_THREADS says; on two cores they spun against
 * each other (317,000 futex calls, a third of the time in the kernel: the
 * 3,000-contact pile's ipm 2.3 s, 0.93 s with one thread). Dynamic
 * threads let libgomp give a team no more than the idle cores. */
void clc_blas_begin(int calls_blas)
{
    if (!calls_blas) return;
    pthread_mutex_lock(&blas_lock);
    dynamic_was = omp_get_dynamic();
    omp_set_dynamic(1);
}

void clc_blas_end(int calls_blas)
{
    if (!calls_blas) return;
    omp_set_dynamic(dynamic_was);
    pthread_mutex_unlock(&blas_lock);
}
