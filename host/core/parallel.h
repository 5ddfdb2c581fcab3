/* Independent items on several threads, with the results of one. */
#ifndef CLCONE_CORE_PARALLEL_H
#define CLCONE_CORE_PARALLEL_H

#include <clcone/clcone.h>

/* Item i of a job, touching only what is item i's (the same bits on any number of threads). */
typedef clcone_status (*clc_item_fn)(void *job, int i, clcone_error *err);

/* fn(job, i) for i < n, item i on thread i % threads (docs/architecture.md); the status and
 * message are the lowest failing item's, *failed (if not NULL) that item or -1. */
clcone_status clc_each_item(int threads, int n, clc_item_fn fn, void *job, int *failed, clcone_error *err);

#endif
