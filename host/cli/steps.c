/* What the stepping commands (simulate of one world or several, the
 * demo) share: SIGINT and SIGTERM caught for a run, the progress bar and
 * the per-step CSV. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The exit code of a run stopped by SIGINT or SIGTERM: 128 + SIGINT, as
 * a shell reports a job ended by Ctrl-C. */
#define EXIT_INTERRUPTED 130

/* Set by SIGINT or SIGTERM during a run: a stepping run stops after the
 * step under way and writes the outputs of the finished steps; a solve
 * stops at the library's next look at its cancel flag (solve_cancel). */
static volatile sig_atomic_t stop_signal, solve_cancel;
/* What the handler says: set before it is installed. */
static const char *stop_says;
static size_t stop_says_len;

static void on_stop_signal(int sig)
{
    ssize_t n;
    if (stop_signal) {
        /* the second: stop at once, as the default action would, but
         * leave no half-written temporary beside an output */
        clcone_out_discard_temps();
        signal(sig, SIG_DFL);
        raise(sig); /* delivered when the handler returns: sig is blocked in it */
        return;
    }
    stop_signal = sig;
    solve_cancel = 1;
    /* write(2) is what a handler may call; nothing to do if it fails */
    n = write(2, stop_says, stop_says_len);
    (void)n;
}

/* The handlers a run's catch_stop_signals replaced. */
static struct sigaction stop_old[2];

/* Handlers for the run, saying `says`; a second signal ends the process
 * at once, for a user who does not want to wait. */
static void catch_stop_signals(const char *says)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    stop_says = says;
    stop_says_len = strlen(says);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    stop_signal = solve_cancel = 0;
    sigaction(SIGINT, &sa, &stop_old[0]);
    sigaction(SIGTERM, &sa, &stop_old[1]);
}

void cli_catch_stop_signals(void)
{
    catch_stop_signals("\nclcone: interrupted; stopping after the current step (again to stop at once)\n");
}

const volatile int *cli_solve_cancel(void)
{
    return &solve_cancel;
}

int cli_solve_interruptible(int (*cmd)(int, char **), int argc, char **argv)
{
    int rc;
    catch_stop_signals("\nclcone: interrupted; stopping the solve (again to stop at once)\n");
    rc = cmd(argc, argv);
    cli_release_stop_signals();
    if (!stop_signal) return rc;
    fprintf(stderr, "clcone: interrupted by %s: the solve stopped early; outputs written hold its last iterate\n",
            stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
    return EXIT_INTERRUPTED;
}

/* gen and export only make a file: a signal stops them at once, the
 * temporary beside it discarded and the target as it was. */
static void on_write_signal(int sig)
{
    static const char says[] = "\nclcone: interrupted; nothing written\n";
    ssize_t n;
    (void)sig;
    clcone_out_discard_temps();
    n = write(2, says, sizeof says - 1);
    (void)n;
    _exit(EXIT_INTERRUPTED);
}

int cli_write_interruptible(int (*cmd)(int, char **), int argc, char **argv)
{
    struct sigaction sa;
    int rc;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_write_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, &stop_old[0]);
    sigaction(SIGTERM, &sa, &stop_old[1]);
    rc = cmd(argc, argv);
    cli_release_stop_signals();
    return rc;
}

void cli_release_stop_signals(void)
{
    sigaction(SIGINT, &stop_old[0], NULL);
    sigaction(SIGTERM, &stop_old[1], NULL);
}

/* After a run a signal stopped: says so; returns EXIT_INTERRUPTED. */
int cli_report_interrupted(int steps_done, int steps)
{
    fprintf(stderr, "clcone: interrupted by %s after step %d of %d; the outputs hold the finished steps\n",
            stop_signal == SIGTERM ? "SIGTERM" : "SIGINT", steps_done, steps);
    return EXIT_INTERRUPTED;
}

void cli_steps_progress(int step, int steps, int contacts, double t0)
{
    char bar[41];
    int fill = (int)(40.0 * step / steps);
    for (int i = 0; i < 40; ++i) bar[i] = i < fill ? '#' : ' ';
    bar[40] = 0;
    fprintf(stderr, "\r[%s] %d/%d steps, %d contacts, %.1f s", bar, step, steps, contacts,
            (cli_now_ms() - t0) / 1000.0);
    if (step == steps) fprintf(stderr, "\n");
    fflush(stderr);
}

void cli_sim_csv_header(FILE *csv, int world_column)
{
    fprintf(csv, "%sstep,contacts,iterations,error,solve_ms,status,ke_free,ke_after,max_penetration,warm_matched,"
                 "fallback,setup_ms\n", world_column ? "world," : "");
}

void cli_sim_csv_row(FILE *csv, int world, const clcone_step_info *in)
{
    /* status: the first solve's; fallback: solver:status of the solve applied instead */
    const clcone_prob_result *first = in->fell_back ? &in->failed : &in->solve;
    if (world >= 0) fprintf(csv, "%d,", world);
    fprintf(csv, "%d,%d,%d,%.6e,%.3f,%s,%.9e,%.9e,%.3e,%d,", in->step, in->contacts, in->solve.iters, in->solve.error,
            in->solve.time_ms, clcone_run_status_name(first->status), in->ke_free, in->ke_after, in->max_penetration,
            in->warm_matched);
    if (in->fell_back) fprintf(csv, "%s:%s,", clcone_solver_name(in->fallback), clcone_run_status_name(in->solve.status));
    else fprintf(csv, "-,");
    fprintf(csv, "%.3f\n", in->setup_ms);
}

int cli_stop_requested(void)
{
    return stop_signal != 0;
}
