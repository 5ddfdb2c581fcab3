/* A MuJoCo run's trajectory in files (mujoco/traj.h). */
#include "mujoco/traj.h"
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The .npy header's length, magic to '\n': version 1.0 wants a multiple of
 * 64; the row count is written once known, into this fixed room (room
 * for a count of 20 digits). */
#define NPY_HEADER 128

struct clc_mj_traj {
    clcone_out *csv_out, *qpos_out; /* written beside, renamed over at close (clcone_out_open) */
    FILE *csv, *qpos;
    const char *csv_path, *qpos_path;
    int npy, every, nq;
    long rows;
};

/* The .npy header of rows x nq doubles, NPY_HEADER bytes. */
static void npy_header(FILE *f, long rows, int nq)
{
    char dict[NPY_HEADER];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%ld, %d), }", rows, nq);
    /* magic (6), version (2), header length (2), then the dict padded
     * with spaces and ended by '\n' */
    unsigned hl = NPY_HEADER - 10;
    memset(dict + len, ' ', sizeof dict - (size_t)len);
    dict[hl - 1] = '\n';
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc((int)(hl & 0xff), f);
    fputc((int)(hl >> 8), f);
    fwrite(dict, 1, hl, f);
}

static clcone_status io_error(clcone_error *err, const char *path, const char *what)
{
    return clc_fail(err, CLCONE_EIO, "%s: cannot %s: %s", path, what, strerror(errno));
}

/* t's files made so far discarded, t freed; s, the open's error. */
static clcone_status open_failed(clc_mj_traj *t, clcone_status s)
{
    clcone_out_close(t->csv_out, 0, NULL);
    clcone_out_close(t->qpos_out, 0, NULL);
    free(t);
    return s;
}

clcone_status clc_mj_traj_open(mjModel *m, const char *csv, const char *qpos, int every, clc_mj_traj **out,
                                  clcone_error *err)
{
    clc_mj_traj *t = clc_calloc(1, sizeof *t, err, "the trajectory's files");
    size_t ql = qpos ? strlen(qpos) : 0;
    clcone_status s;
    *out = NULL;
    if (!t) return CLCONE_ENOMEM;
    t->csv_path = csv;
    t->qpos_path = qpos;
    t->every = every;
    t->nq = (int)m->nq;
    t->npy = ql >= 4 && strcmp(qpos + ql - 4, ".npy") == 0;
    if (csv && (s = clcone_out_open(csv, &t->csv_out, err))) return open_failed(t, s);
    if (qpos && (s = clcone_out_open(qpos, &t->qpos_out, err))) return open_failed(t, s);
    t->csv = clcone_out_file(t->csv_out);
    t->qpos = clcone_out_file(t->qpos_out);
    if (t->csv) {
        m->opt.enableflags |= mjENBL_ENERGY;
        fprintf(t->csv, "step,time,potential,kinetic,energy,rows,contacts,blocks,status,iters,error,solve_ms\n");
    }
    if (t->qpos && t->npy) npy_header(t->qpos, 0, t->nq);
    else if (t->qpos) {
        fprintf(t->qpos, "step,time");
        for (int i = 0; i < t->nq; ++i) fprintf(t->qpos, ",qpos%d", i);
        fprintf(t->qpos, "\n");
    }
    *out = t;
    return CLCONE_OK;
}

clcone_status clc_mj_traj_record(clc_mj_traj *t, const mjModel *m, const mjData *d, int k, double t0,
                                    const clc_mujoco_stats *st, clcone_error *err)
{
    if (t->csv) {
        /* a step without rows solved nothing: converged, no error */
        fprintf(t->csv, "%d,%.17g,%.17g,%.17g,%.17g,%d,%d,%d,%s,%d,%.17g,%.6f\n", k, t0, d->energy[0], d->energy[1],
                d->energy[0] + d->energy[1], st->nefc, st->ncon, st->blocks,
                clcone_run_status_name(st->blocks ? st->res.status : CLCONE_CONVERGED), st->res.iters,
                st->blocks ? st->res.error : 0, st->res.time_ms);
        if (ferror(t->csv)) return io_error(err, t->csv_path, "write it");
    }
    if (t->qpos && (k + 1) % t->every == 0) {
        if (t->npy) fwrite(d->qpos, sizeof *d->qpos, (size_t)m->nq, t->qpos);
        else {
            fprintf(t->qpos, "%d,%.17g", k + 1, d->time);
            for (int i = 0; i < t->nq; ++i) fprintf(t->qpos, ",%.17g", d->qpos[i]);
            fprintf(t->qpos, "\n");
        }
        ++t->rows;
        if (ferror(t->qpos)) return io_error(err, t->qpos_path, "write it");
    }
    return CLCONE_OK;
}

clcone_status clc_mj_traj_close(clc_mj_traj *t, clcone_error *err)
{
    clcone_status s = CLCONE_OK;
    if (!t) return s;
    clcone_error second;
    clcone_status s2;
    if (t->qpos && t->npy && (fseek(t->qpos, 0, SEEK_SET) == 0)) npy_header(t->qpos, t->rows, t->nq);
    /* what was recorded is kept: both renamed over their targets; the
     * first failure is the one reported */
    s = clcone_out_close(t->qpos_out, 1, err);
    s2 = clcone_out_close(t->csv_out, 1, s ? &second : err);
    if (!s) s = s2;
    free(t);
    return s;
}
