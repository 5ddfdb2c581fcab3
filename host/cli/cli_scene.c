/* Scene commands: gen, export and solve on a scene file (stepping:
 * cli_sim.c). */
#define _POSIX_C_SOURCE 200809L
#include <clcone/clcone.h>
#include "cli/cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const USAGE_GEN =
    "usage: clcone gen NAME --n N [--mu M] [--seed S] [--theta T] [--spread W] [--dt H] -o FILE\n"
    "NAME: pile    about N spheres (radius 0.5 +- W, default W 0.1) in a box container\n"
    "      stack   N unit boxes on the ground\n"
    "      wall    a pyramid of 1 x 0.5 x 0.5 bricks, N in the bottom row\n"
    "      grid    N x N x N spheres of radius 0.5 in a cubic lattice\n"
    "      incline one unit box on a plane tilted by T radians (default 0.3)\n"
    "--n is required (but for incline, which takes none); --seed and --spread are\n"
    "pile's, --theta is incline's, and refused elsewhere. Defaults: --mu 0.5,\n"
    "--seed 1, --dt 0.01, --spread 0.1, --theta 0.3. An option given twice is\n"
    "refused. The file is a clcone scene (docs/formats.md section 9), bodies\n"
    "at rest with their contacts.\n";

int cli_want_help(int argc, char **argv, const char *usage)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s", usage);
            if (strstr(usage, "--solver")) cli_print_solvers(stdout, 0);
            return 1;
        }
    return 0;
}

const char *cli_take_opt(int *argc, char **argv, const char *name, cli_opt_fault *fault)
{
    const char *v = NULL;
    int seen = 0;
    for (int i = 0; i < *argc;) {
        if (strcmp(argv[i], name) != 0) {
            ++i;
            continue;
        }
        if ((i + 1 >= *argc || ++seen > 1) && !fault->opt) {
            fault->opt = name;
            fault->twice = seen > 1;
        }
        if (i + 1 >= *argc) return v;
        v = argv[i + 1];
        for (int k = i; k + 2 < *argc; ++k) argv[k] = argv[k + 2];
        *argc -= 2;
    }
    return v;
}

int cli_opt_fault_error(const char *usage, const cli_opt_fault *fault)
{
    if (!fault->opt) return 0;
    return usage_error(usage, fault->twice ? "%s given twice" : "option %s is missing its value", fault->opt);
}

/* ------------------------------------------------------------------ */

int cli_solve_world(cli_args *a, clcone_world *world)
{
    clcone_world w = *world;
    clcone_scene sc;
    clcone_context *ctx = NULL;
    clcone_result res;
    clcone_error e;
    double *r = NULL, *r0 = NULL;
    char backend[400];
    cli_progress prog;
    clcone_history hist[2]; /* --plot: the solve's, the reference's with --compare */
    int rc;
    size_t m;
    memset(&sc, 0, sizeof sc);
    memset(hist, 0, sizeof hist);
    a->o.soft_dt = w.dt;
    if (clcone_world_contact_scene(&w, &sc, &e)) goto fail;
    m = 3 * (size_t)sc.ncontacts;
    r = calloc(m + 1, sizeof *r);
    r0 = calloc(m + 1, sizeof *r0);
    if (!r || !r0) {
        e.code = CLCONE_ENOMEM;
        snprintf(e.msg, sizeof e.msg, "out of memory for %d contacts", sc.ncontacts);
        goto fail;
    }
    if (a->warm) {
        if (clcone_read_reactions(a->warm, sc.ncontacts, r, &e)) goto fail;
        a->o.warm_start = 1;
        memcpy(r0, r, m * sizeof *r);
    }
    if (!is_ref(a->device) && cli_open_device(a->device, a->prec, &ctx, &e)) goto fail;
    describe_backend(ctx, backend, sizeof backend);
    clcone_options_resolve(&a->o, ctx);
    cli_progress_attach(a, &a->o, &prog);
    if (a->plot) a->o.history = &hist[0];
    rc = cli_plan_solve(ctx, NULL, &sc, &a->o, r, &res, &e);
    cli_progress_end(&prog);
    a->o.progress = NULL;
    if (rc) {
        cli_name_file(&e, a->positional[0]);
        goto fail;
    }
    {
        const clcone_prob_result *it = &res.items[0];
        printf("scene:    %s (%d bodies, %d contacts, %d planes)\n", a->positional[0], w.s.nbodies, sc.ncontacts,
               w.nplanes);
        printf("model:    %s, solver %s, device %s\n", clcone_model_name(a->o.model), clcone_solver_name(a->o.solver),
               backend);
        if (!(rc = cli_print_result(a, ctx, NULL, sc.ncontacts, r, it)))
            rc = cli_finish_solve(a, ctx, NULL, &sc, r0, r, it, hist);
    }
    clcone_result_free(&res);
    goto done;
fail:
    rc = lib_error(&e);
done:
    cli_solve_release(hist, ctx, r, r0);
    clcone_scene_free(&sc);
    clcone_world_free(&w);
    return rc;
}

static const char *const USAGE_EXPORT =
    "usage: clcone export SCENE -o P.dat\n"
    "Writes the scene's contact problem at its current state (free velocity\n"
    "v + dt g, the contacts in the file) in the local form u = W r + q as a\n"
    "Siconos .dat file, so that other solvers can take it: `clcone solve P.dat\n"
    "--device ref` gives the reactions of `clcone solve SCENE --device ref`.\n";

/* `export SCENE -o P.dat`: the local form of a scene's contact problem. */
int cmd_export(int argc, char **argv)
{
    const char *in_path = NULL, *out = NULL;
    clcone_input in;
    clcone_scene sc;
    clcone_problem p;
    clcone_error e;
    int rc;
    if (cli_want_help(argc, argv, USAGE_EXPORT)) return 0;
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) return usage_error(USAGE_EXPORT, "option %s is missing its value", argv[i]);
            if (out) return usage_error(USAGE_EXPORT, "-o/--out given twice (export writes one file)%s", "");
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(USAGE_EXPORT, "unknown option '%s'", argv[i]);
        } else if (in_path) {
            return usage_error(USAGE_EXPORT, "export takes one SCENE (got a second: '%s')", argv[i]);
        } else {
            in_path = argv[i];
        }
    }
    if (!in_path || !out) return usage_error(USAGE_EXPORT, "export needs %s", !in_path ? "a SCENE" : "-o P.dat");
    {
        const cli_output outs[] = {{"-o", out, 0, NULL, NULL}};
        const cli_input ins[] = {{"SCENE", in_path}};
        if ((rc = cli_check_outputs(outs, 1, ins, 1))) return rc;
    }
    if (clcone_read_input_hdf5(in_path, &in, &e)) return lib_error(&e);
    if (!in.is_world) {
        clcone_input_free(&in);
        fprintf(stderr, "clcone: %s: not a scene file (export writes a scene's problem; this one is already a "
                        "local-form problem)\n", in_path);
        return EXIT_USAGE;
    }
    memset(&sc, 0, sizeof sc);
    memset(&p, 0, sizeof p);
    rc = clcone_world_contact_scene(&in.world, &sc, &e) || clcone_scene_to_local(&sc, &p, &e)
         || clcone_write_problem_dat(out, &p, &e);
    if (rc) {
        cli_name_file(&e, in_path);
        rc = lib_error(&e);
    } else {
        printf("wrote %s: the local form of %s, %d contacts\n", out, in_path, p.n);
    }
    clcone_problem_free(&p);
    clcone_scene_free(&sc);
    clcone_input_free(&in);
    return rc;
}

/* ------------------------------------------------------------------ */

int cmd_gen(int argc, char **argv)
{
    clcone_gen_params p;
    clcone_world w;
    clcone_error e;
    const char *name = NULL, *out = NULL;
    unsigned given = 0; /* CLCONE_GEN_GIVEN_*: which parameters the library judges */
    unsigned seen = 0;  /* bit k: opts[k] given */
    int rc;
    if (cli_want_help(argc, argv, USAGE_GEN)) return 0;
    clcone_gen_params_default(&p);
    for (int i = 0; i < argc; ++i) {
        /* gen's options, a bit of seen each (-o is --out) */
        static const char *const opts[] = {"--out", "--n", "--seed", "--mu", "--theta", "--spread", "--dt"};
        enum { NOPTS = sizeof opts / sizeof opts[0] };
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        int k;
        if (strncmp(opt, "-", 1) != 0) {
            if (name) return usage_error(USAGE_GEN, "unexpected argument '%s'", opt);
            name = opt;
            continue;
        }
        if (!val) return usage_error(USAGE_GEN, "option %s is missing its value", opt);
        ++i;
        /* an option given twice is refused, as everywhere */
        for (k = 0; k < NOPTS && strcmp(strcmp(opt, "-o") == 0 ? "--out" : opt, opts[k]) != 0; ++k) continue;
        if (k < NOPTS && (seen >> k & 1u))
            return usage_error(USAGE_GEN, k == 0 ? "-o/--out given twice%s" : "%s given twice", k == 0 ? "" : opt);
        seen |= k < NOPTS ? 1u << k : 0;
        if (strcmp(opt, "-o") == 0 || strcmp(opt, "--out") == 0) out = val;
        else if (strcmp(opt, "--n") == 0) {
            if ((rc = cli_int_opt(USAGE_GEN, opt, val, 1, INT_MAX, &k))) return rc;
            p.n = k;
            given |= CLCONE_GEN_GIVEN_N;
        } else if (strcmp(opt, "--seed") == 0) {
            if ((rc = cli_int_opt(USAGE_GEN, opt, val, 0, INT_MAX, &k))) return rc;
            p.seed = (unsigned)k;
            given |= CLCONE_GEN_GIVEN_SEED;
        } else if (strcmp(opt, "--mu") == 0 || strcmp(opt, "--theta") == 0 || strcmp(opt, "--spread") == 0 ||
                   strcmp(opt, "--dt") == 0) {
            if (!parse_double(val, &d)) {
                fprintf(stderr, "clcone: %s needs a finite number, got '%s'\n", opt, val);
                cli_usage_hint(USAGE_GEN);
                return EXIT_USAGE;
            }
            if (opt[2] == 'm') p.mu = d;
            else if (opt[2] == 't') p.theta = d, given |= CLCONE_GEN_GIVEN_THETA;
            else if (opt[2] == 's') p.spread = d, given |= CLCONE_GEN_GIVEN_SPREAD;
            else p.dt = d;
        } else {
            return usage_error(USAGE_GEN, "unknown option '%s'", opt);
        }
    }
    if (!name) return usage_error(USAGE_GEN, "gen needs a generator NAME%s", "");
    if (clcone_gen_check_given(name, given, &e)) return cli_given_error(USAGE_GEN, &e);
    if (!out) return usage_error(USAGE_GEN, "gen needs an output file (-o FILE)%s", "");
    {
        const cli_output outs[] = {{"-o", out, 0, NULL, NULL}};
        if ((rc = cli_check_outputs(outs, 1, NULL, 0))) return rc;
    }
    if (clcone_world_generate(name, &p, &w, &e)) {
        /* the generator refuses only its parameters: the options' help fits */
        rc = lib_error(&e);
        if (e.code == CLCONE_EINVAL) cli_usage_hint(USAGE_GEN);
        return rc;
    }
    if (clcone_write_world(out, &w, &e)) {
        clcone_world_free(&w);
        return lib_error(&e);
    }
    printf("wrote %s: %s, %d bodies, %d contacts, %d planes\n", out, name, w.s.nbodies, w.s.ncontacts, w.nplanes);
    clcone_world_free(&w);
    return 0;
}
