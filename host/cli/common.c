/* What every command of the command line shares: argument parsing and
 * refusal of options that do not apply, error and last-line printing,
 * progress lines and solves through a plan. */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_usage_hint(const char *usage)
{
    const char *p = strncmp(usage, "usage: clcone ", 14) == 0 ? usage + 14 : "", *q = p, *end = p;
    /* the command: the usage's words before its first argument (FILE,
     * [--n N], <command>), as "demo --siconos" */
    for (;;) {
        size_t n = strspn(q, "abcdefghijklmnopqrstuvwxyz-");
        if (n == 0 || (q[n] != ' ' && q[n] != '\n' && q[n] != 0)) break;
        end = q + n;
        if (q[n] != ' ') break;
        q += n + 1;
    }
    if (end == p) fprintf(stderr, "Run 'clcone help' for the commands.\n");
    else fprintf(stderr, "Run 'clcone %.*s --help' for its options.\n", (int)(end - p), p);
}

int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "clcone: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    cli_usage_hint(usage);
    return EXIT_USAGE;
}

int lib_error(const clcone_error *e)
{
    fprintf(stderr, "clcone: error (%s): %s\n", clcone_status_name(e->code), e->msg);
    return EXIT_USAGE;
}

void cli_name_file(clcone_error *e, const char *file)
{
    char msg[2 * sizeof e->msg]; /* both parts; cut to the message size */
    size_t n = strlen(file);
    if (strncmp(e->msg, file, n) == 0 && e->msg[n] == ':') return;
    snprintf(msg, sizeof msg, "%s: %s", file, e->msg);
    memcpy(e->msg, msg, sizeof e->msg - 1);
    e->msg[sizeof e->msg - 1] = 0;
}

int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return s[0] && !*end && errno == 0 && isfinite(*v);
}

static int parse_int(const char *s, int *v)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(s, &end, 10);
    if (!s[0] || *end || errno || x < -2147483647L || x > 2147483647L) return 0;
    *v = (int)x;
    return 1;
}

int cli_int_opt(const char *usage, const char *opt, const char *val, int lo, int hi, int *out)
{
    char fmt[128], *end;
    long long x;
    if (parse_int(val, out) && *out >= lo && *out <= hi) return 0;
    errno = 0;
    x = strtoll(val, &end, 10);
    /* a whole number past an int names the bound it broke, not only lo */
    if (hi < INT_MAX || (val[0] && !*end && (errno == ERANGE || x > INT_MAX)))
        snprintf(fmt, sizeof fmt, "%s needs an integer from %d to %d, got '%%s'", opt, lo, hi);
    else snprintf(fmt, sizeof fmt, "%s needs an integer >= %d, got '%%s'", opt, lo);
    return usage_error(usage, fmt, val);
}


/* The options parse_args takes with a value; cli_args.given has bit k set
 * when VALUE_OPTS[k] was given. */
static const char *const VALUE_OPTS[] = {
    "--model", "--solver", "--facets", "--fit", "--tol", "--device", "--precision", "--max-iter",
    "--check-every", "--max-seconds", "--soft-timeconst", "--soft-dampratio", "--soft-impedance",
    "--soft-dt", "--sap-beta", "--sap-stiffness", "--sap-dissipation", "--out", "--warm", "--dir", "--plot", "--threads"};

static int value_opt_index(const char *opt)
{
    for (int k = 0; k < (int)(sizeof VALUE_OPTS / sizeof VALUE_OPTS[0]); ++k)
        if (strcmp(opt, VALUE_OPTS[k]) == 0) return k;
    return -1;
}

int cli_given(const cli_args *a, const char *opt)
{
    int k = value_opt_index(opt);
    if (strcmp(opt, "--compare") == 0) return a->compare;
    if (strcmp(opt, "--progress") == 0) return a->progress;
    return k >= 0 && (a->given >> k & 1u);
}

int cli_refuse(const cli_args *a, const char *usage, const char *const *opts, const char *why)
{
    for (; *opts; ++opts)
        if (cli_given(a, *opts)) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s does not apply: %s", *opts, why);
            return usage_error(usage, "%s", msg);
        }
    return 0;
}

/* Parses the options shared by the commands; returns 0 or an exit code. */
int parse_args(int argc, char **argv, const char *usage, int maxpos, cli_args *a)
{
    clcone_error e;
    int rc;
    memset(a, 0, sizeof *a);
    clcone_options_default(&a->o);
    for (int i = 0; i < argc; ++i) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int k;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            printf("%s", usage);
            if (strstr(usage, "--solver")) cli_print_solvers(stdout, 0);
            return -1;
        }
        if (strcmp(opt, "--compare") == 0 || strcmp(opt, "--progress") == 0) {
            int *flag = opt[3] == 'o' ? &a->compare : &a->progress;
            if (*flag) return usage_error(usage, "%s given twice", opt);
            *flag = 1;
            continue;
        }
        if (strcmp(opt, "--mpi") == 0) {
            /* the usages of solve and simulate name it: no other command runs over ranks */
#ifdef CLCONE_MPI
            if (!strstr(usage, "--mpi"))
                return usage_error(usage, "%s: only solve and simulate run over MPI ranks", opt);
            if (a->mpi) return usage_error(usage, "%s given twice", opt);
            a->mpi = 1;
            continue;
#else
            return usage_error(usage, "%s needs clcone-mpi (make mpi) under mpirun: this clcone is built without MPI",
                               opt);
#endif
        }
        if (strcmp(opt, "-o") == 0) opt = "--out"; /* as gen takes it; twice with --out is twice */
        if (opt[0] != '-' || opt[1] == 0) {
            if (a->npos >= maxpos)
                return usage_error(usage, maxpos > 2 ? "too many files from '%s' on (at most " CLI_MAX_FILES_TEXT ")"
                                                     : "unexpected argument '%s'", opt);
            a->positional[a->npos++] = opt;
            continue;
        }
        if ((k = value_opt_index(opt)) < 0) return usage_error(usage, "unknown option '%s'", opt);
        if (!val) return usage_error(usage, "option %s is missing its value", argv[i]);
        /* a second value is refused rather than one silently dropped */
        if (a->given >> k & 1u) return usage_error(usage, strcmp(opt, "--out") == 0 ? "%s given twice (-o is --out)"
                                                                                    : "%s given twice", opt);
        a->given |= 1u << k;
        ++i;
        if (strcmp(opt, "--model") == 0) {
            if (clcone_parse_model(val, &a->o.model, &e)) return usage_error(usage, "%s", e.msg);
        } else if (strcmp(opt, "--solver") == 0) {
            if (clcone_parse_solver(val, &a->o.solver, &e)) return usage_error(usage, "%s", e.msg);
        } else if (strcmp(opt, "--facets") == 0) {
            if ((rc = cli_int_opt(usage, opt, val, 3, CLCONE_MAX_FACETS, &a->o.facets))) return rc;
        } else if (strcmp(opt, "--fit") == 0) {
            if (strcmp(val, "outer") == 0) a->o.fit = CLCONE_FIT_OUTER;
            else if (strcmp(val, "inner") == 0) a->o.fit = CLCONE_FIT_INNER;
            else return usage_error(usage, "--fit takes outer or inner, got '%s'", val);
        } else if (strcmp(opt, "--tol") == 0) {
            if (!parse_double(val, &a->o.tol) || !(a->o.tol > 0))
                return usage_error(usage, "--tol needs a number > 0, got '%s'", val);
        } else if (strcmp(opt, "--device") == 0) {
            /* the library reads "" as the default device: given empty, it was a mistake */
            if (!val[strspn(val, " \t")])
                return usage_error(usage, "--device needs ref, an index or part of a device name, got '%s'", val);
            a->device = val;
        } else if (strcmp(opt, "--precision") == 0) {
            if (strcmp(val, "float") == 0) a->prec = CLCONE_FLOAT;
            else if (strcmp(val, "double") == 0) a->prec = CLCONE_DOUBLE;
            else return usage_error(usage, "--precision takes float or double, got '%s'", val);
        } else if (strcmp(opt, "--max-iter") == 0) {
            if ((rc = cli_int_opt(usage, opt, val, 1, INT_MAX, &a->o.max_iter))) return rc;
        } else if (strcmp(opt, "--check-every") == 0) {
            if ((rc = cli_int_opt(usage, opt, val, 1, INT_MAX, &a->o.check_every))) return rc;
        } else if (strcmp(opt, "--threads") == 0) {
            if ((rc = cli_int_opt(usage, opt, val, 1, CLCONE_SOLVE_THREADS, &a->o.threads))) return rc;
        } else if (strcmp(opt, "--max-seconds") == 0) {
            if (!parse_double(val, &a->o.max_seconds) || a->o.max_seconds < 0)
                return usage_error(usage, "--max-seconds needs a number >= 0, got '%s'", val);
        } else if (strcmp(opt, "--soft-timeconst") == 0 || strcmp(opt, "--soft-dampratio") == 0
                   || strcmp(opt, "--soft-impedance") == 0 || strcmp(opt, "--soft-dt") == 0
                   || strncmp(opt, "--sap-", 6) == 0) {
            /* ranges are the library's to check (clcone_solve names them) */
            double *dst = strcmp(opt, "--soft-timeconst") == 0   ? &a->o.soft_timeconst
                          : strcmp(opt, "--soft-dampratio") == 0 ? &a->o.soft_dampratio
                          : strcmp(opt, "--soft-impedance") == 0 ? &a->o.soft_impedance
                          : strcmp(opt, "--soft-dt") == 0        ? &a->o.soft_dt
                          : strcmp(opt, "--sap-stiffness") == 0  ? &a->o.sap_stiffness
                          : strcmp(opt, "--sap-dissipation") == 0 ? &a->o.sap_dissipation
                                                                 : &a->o.sap_beta;
            if (!parse_double(val, dst)) return usage_error(usage, "%s needs a number", opt);
        } else if (strcmp(opt, "--out") == 0) {
            a->out = val;
        } else if (strcmp(opt, "--warm") == 0) {
            a->warm = val;
        } else if (strcmp(opt, "--plot") == 0) {
            a->plot = val;
        } else {
            a->dir = val;
        }
    }
    return 0;
}

/* A first run compiles the kernel programs it needs, seconds to a minute
 * on a CPU device: say so, so that it does not look hung. Whether the
 * cache is on is the environment's ($CLCONE_CACHE_DIR=off, no HOME), so
 * the notice names the condition rather than promising "once". */
static void compile_notice(void *user, const char *program, const char *device)
{
    (void)user;
    fprintf(stderr, "clcone: compiling OpenCL program '%s' for '%s' (the kernel cache, when on, "
                    "keeps it for later runs)\n",
            program, device);
}

void cli_on_compile(clcone_context *ctx)
{
    if (ctx) clcone_context_on_compile(ctx, compile_notice, NULL);
}

clcone_status cli_open_device(const char *device, clcone_precision prec, clcone_context **ctx, clcone_error *e)
{
    clcone_status s = clcone_context_create(device, prec, ctx, e);
    if (!s) cli_on_compile(*ctx);
    return s;
}

int is_ref(const char *device)
{
    if (!device) device = getenv("CLCONE_DEVICE");
    return device && strcmp(device, "ref") == 0;
}

int cli_given_error(const char *usage, const clcone_error *e)
{
    size_t name = strcspn(e->msg, " :(");
    fprintf(stderr, "clcone: --");
    for (size_t i = 0; i < name; ++i) fputc(e->msg[i] == '_' ? '-' : e->msg[i], stderr);
    fprintf(stderr, "%s\n", e->msg + name);
    cli_usage_hint(usage);
    return EXIT_USAGE;
}

int cli_check_applicable(const cli_args *a, const char *usage, int scene)
{
    /* the flags whose use the library judges (clcone_options_check_given) */
    static const struct {
        const char *opt;
        unsigned bit;
    } GIVEN[] = {{"--solver", CLCONE_GIVEN_SOLVER},
                 {"--facets", CLCONE_GIVEN_FACETS},
                 {"--fit", CLCONE_GIVEN_FIT},
                 {"--tol", CLCONE_GIVEN_TOL},
                 {"--max-iter", CLCONE_GIVEN_MAX_ITER},
                 {"--check-every", CLCONE_GIVEN_CHECK_EVERY},
                 {"--max-seconds", CLCONE_GIVEN_MAX_SECONDS},
                 {"--soft-timeconst", CLCONE_GIVEN_SOFT_TIMECONST},
                 {"--soft-dampratio", CLCONE_GIVEN_SOFT_DAMPRATIO},
                 {"--soft-impedance", CLCONE_GIVEN_SOFT_IMPEDANCE},
                 {"--soft-dt", CLCONE_GIVEN_SOFT_DT},
                 {"--sap-beta", CLCONE_GIVEN_SAP_BETA},
                 {"--sap-stiffness", CLCONE_GIVEN_SAP_STIFFNESS},
                 {"--sap-dissipation", CLCONE_GIVEN_SAP_DISSIPATION}};
    static const char *const device[] = {"--compare", NULL};
    static const char *const precision[] = {"--precision", NULL};
    unsigned given = 0;
    clcone_error e;
    int rc;
    for (size_t k = 0; k < sizeof GIVEN / sizeof GIVEN[0]; ++k)
        if (cli_given(a, GIVEN[k].opt)) given |= GIVEN[k].bit;
    if (clcone_options_check_given(&a->o, given, scene, &e)) return cli_given_error(usage, &e);
    if ((is_ref(a->device)
         && (rc = cli_refuse(a, usage, device, "the reference (--device ref) is the CPU solver in double")))
        || (is_ref(a->device) && a->prec != CLCONE_DOUBLE
            && (rc = cli_refuse(a, usage, precision, "the reference (--device ref) runs in double only"))))
        return rc;
    return 0;
}

/* Shown from the first second on, at most twice a second. */
static void progress_line(void *user, int prob, int iter, double error)
{
    cli_progress *p = user;
    double now = cli_now_ms();
    if (now - p->t0 < 1000 || now - p->last < 500) return;
    p->last = now;
    p->shown = 1;
    if (prob > 0) fprintf(stderr, "\rsolving problem %d: iteration %d, error %.3e, %.1f s   ", prob, iter, error,
                          (now - p->t0) / 1e3);
    else fprintf(stderr, "\rsolving: iteration %d, error %.3e, %.1f s   ", iter, error, (now - p->t0) / 1e3);
    fflush(stderr);
}

void cli_progress_attach(const cli_args *a, clcone_options *o, cli_progress *p)
{
    memset(p, 0, sizeof *p);
    p->t0 = cli_now_ms();
    if (!a->progress && !isatty(2)) return;
    o->progress = progress_line;
    o->progress_user = p;
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown) fprintf(stderr, "\n");
    p->shown = 0;
}

double cli_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}


double cli_max_abs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
    return m;
}

double cli_max_abs_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

void print_last_line(const char *status, double error, int iters, double ms, int n)
{
    printf("status=%s error=%.6e iters=%d time_ms=%.3f contacts=%d\n", status, error, iters, ms, n);
}

void describe_backend(const clcone_context *ctx, char *buf, size_t len)
{
    if (!ctx) snprintf(buf, len, "ref (CPU reference, double)");
    else
        snprintf(buf, len, "%s [%s] (OpenCL, %s)", clcone_context_device(ctx)->name,
                 clcone_context_device(ctx)->platform,
                 clcone_context_precision(ctx) == CLCONE_DOUBLE ? "double" : "float");
}

int cli_plan_solve(clcone_context *ctx, const clcone_problem *p, const clcone_scene *sc, const clcone_options *o,
                   double *r, clcone_result *res, clcone_error *e)
{
    clcone_plan *pl;
    clcone_status s = sc ? clcone_plan_create_scene(ctx, sc, o, &pl, e) : clcone_plan_create(ctx, p, o, &pl, e);
    if (s) return s;
    s = clcone_plan_solve(pl, r, res, e);
    clcone_plan_free(pl);
    return s;
}

/* With --compare: the same problem with the CPU reference, side by side. */

/* One cell of the solver table: the library's list of the solvers of
 * model m on forms on a backend ("nsgs (default), cgs"), in markdown
 * each name quoted as code. */
static void print_solvers_of(FILE *f, unsigned forms, clcone_model m, int device, int markdown)
{
    char list[512];
    const char *sep = "";
    clcone_offers_describe(forms, m, device, list, sizeof list);
    if (!list[0]) fprintf(f, "-");
    else if (!markdown) fputs(list, f);
    else
        for (char *item = strtok(list, ","); item; item = strtok(NULL, ","), sep = ", ") {
            size_t n;
            item += strspn(item, " ");
            n = strcspn(item, " ");
            fprintf(f, "%s`%.*s`%s", sep, (int)n, item, item + n);
        }
}

/* The names of the forms in a row's mask, as "local, body". */
static void print_forms(FILE *f, unsigned forms)
{
    const char *sep = "";
    for (int k = 0; k < CLCONE_FORM_COUNT; ++k)
        if (forms & CLCONE_FORM_BIT(k)) {
            fprintf(f, "%s%s", sep, clcone_form_name((clcone_form)k));
            sep = ", ";
        }
}

/* Whether row i is the first of its (forms, model): the table's lines. */
static int first_of_its_line(int i)
{
    const clcone_offer *o = clcone_offer_at(i);
    for (int j = 0; j < i; ++j)
        if (clcone_offer_at(j)->forms == o->forms && clcone_offer_at(j)->model == o->model) return 0;
    return 1;
}

void cli_print_solvers(FILE *f, enum cli_solvers_form form)
{
    int markdown = form == CLI_SOLVERS_MARKDOWN;
    if (markdown)
        fprintf(f, "| forms | model | reference solvers (`--device ref`) | device solvers |\n|---|---|---|---|\n");
    else fprintf(f, "Solvers by form and model (the library's table, `clcone solvers`):\n");
    for (int i = 0; clcone_offer_at(i); ++i) {
        const clcone_offer *o = clcone_offer_at(i);
        if (!first_of_its_line(i)) continue;
        fprintf(f, markdown ? "| " : "  ");
        print_forms(f, o->forms);
        fprintf(f, markdown ? " | `%s` | " : ": %s\n    ref: ", clcone_model_name(o->model));
        print_solvers_of(f, o->forms, o->model, 0, markdown);
        fprintf(f, markdown ? " | " : "\n    device: ");
        print_solvers_of(f, o->forms, o->model, 1, markdown);
        fprintf(f, markdown ? " |\n" : "\n");
    }
    if (form != CLI_SOLVERS_HELP) return;
    fprintf(f, "What each does:\n");
    for (int i = 0; clcone_offer_at(i); ++i) {
        const clcone_offer *o = clcone_offer_at(i);
        int k = 0;
        while (!(o->forms & CLCONE_FORM_BIT(k))) ++k; /* a row's first form names it */
        fprintf(f, "  %-7s %-8s %-7s %s\n", clcone_form_name((clcone_form)k), clcone_model_name(o->model),
                clcone_solver_name(o->solver), o->help);
    }
}

const char *cli_base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}
