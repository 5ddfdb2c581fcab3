/* The convergence history a solve records when options.history is set:
 * both backends add a point at each check of the shared schedule. */
#include "core/internal.h"

#include <limits.h>
#include <stdlib.h>

void clc_history_add(clcone_history *h, int prob, int iter, double time_ms, double error)
{
    clcone_history_point *pt;
    if (!h || h->truncated) return;
    if (h->count == h->capacity) {
        int cap = h->capacity ? 2 * h->capacity : 256;
        void *grown = h->capacity < INT_MAX / 2 ? realloc(h->points, (size_t)cap * sizeof *h->points) : NULL;
        if (!grown) {
            h->truncated = 1;
            return;
        }
        h->points = grown;
        h->capacity = cap;
    }
    pt = &h->points[h->count++];
    pt->prob = prob;
    pt->iter = iter;
    pt->time_ms = time_ms;
    pt->error = error;
}

void clcone_history_free(clcone_history *h)
{
    if (!h) return;
    free(h->points);
    h->points = NULL;
    h->count = h->capacity = h->truncated = 0;
}
