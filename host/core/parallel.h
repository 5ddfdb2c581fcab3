/* Independent items on several threads, with the results of one. */
#ifndef CLCONE_CORE_PARALLEL_H
#define CLCONE_CORE_PARALLEL_H

#include <clcone/clcone.h>

/* Item i of a job, touching only what is item i's (the same bits on any number of threads). */
typedef clcone_status (*clc_item_fn)(void *job, int i, clcone_error *err);

/* fn(job, i) for i < n on `threads` threads, each claiming the next item when done with its last
 * (docs/architecture.md); the status and message are the lowest failing item's, *failed (if not
 * NULL) that item or -1. */
clcone_status clc_each_item(int threads, int n, clc_item_fn fn, void *job, int *failed, clcone_error *err);

/* fn(job, i) for each of a batch's n problems on o's threads (clcone_options.threads; one where
 * o keeps a history, whose points stay in the batch's order), o's progress callback meanwhile
 * routed through a lock, so that the caller's is called by one thread at a time (o is restored). */
clcone_status clc_each_problem(clcone_options *o, int n, clc_item_fn fn, void *job, clcone_error *err);

/* One thread at a time between clc_blas_begin(1) and clc_blas_end(1), and no lock for 0: the
 * sections that call BLAS (CHOLMOD's supernodal factors). A BLAS need not be safe to call from two
 * threads at once, and Debian's serial OpenBLAS 0.3.21 is not: a threaded batch's sparse Newton
 * steps differed from the same problems solved alone. Inside, OpenMP's dynamic threads are on
 * (CHOLMOD's own teams, parallel.c), and the caller's setting comes back at the end. */
void clc_blas_begin(int calls_blas);
void clc_blas_end(int calls_blas);

#endif
