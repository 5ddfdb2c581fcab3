/* Independent items on several threads, with the results of one. */
#ifndef CLCONE_CORE_PARALLEL_H
#define CLCONE_CORE_PARALLEL_H

#include <clcone/clcone.h>

/* Item i of a job: it touches only what is item i's, so the items end
 * the same, to the bit, on any number of threads. */
typedef clcone_status (*clc_item_fn)(void *job, int i, clcone_error *err);

/* fn(job, i) for i in [0, n): item i on thread i % threads (the calling
 * one and threads - 1 more; a thread that cannot be started has its
 * items run here after), each thread's items in order up to its first
 * failure. The status and message are the lowest failing item's, the one
 * a single thread stops at; *failed (when not NULL) is that item, or -1. */
clcone_status clc_each_item(int threads, int n, clc_item_fn fn, void *job, int *failed, clcone_error *err);

#endif
