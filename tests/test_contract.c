/* The solver contract (host/solve/contract.c): every (form, model,
 * solver) row the table offers is accepted on its backends and refused elsewhere with a
 * message naming what is offered, the defaults are the table's, and the
 * table in docs/solvers.md is the one `clcone solvers --markdown` prints. */
#include "testutil.h"

#include "solve/solve_entries.h"

#include <string.h>

static const clcone_offer *row_of(clcone_form f, clcone_model m, clcone_solver s)
{
    for (int i = 0; clcone_offer_at(i); ++i) {
        const clcone_offer *o = clcone_offer_at(i);
        if ((o->forms & CLCONE_FORM_BIT(f)) && o->model == m && o->solver == s) return o;
    }
    return NULL;
}

static int form_has_model(clcone_form f, clcone_model m)
{
    for (int i = 0; clcone_offer_at(i); ++i)
        if ((clcone_offer_at(i)->forms & CLCONE_FORM_BIT(f)) && clcone_offer_at(i)->model == m) return 1;
    return 0;
}

/* Whether the row's offer names the backend. */
static int runs_on_backend(const clc_contract_row *r, int device)
{
    return device ? r->offer.device : r->offer.reference;
}

/* Whether the row has the entry that runs it on the backend. */
static int has_entry(const clc_contract_row *r, int device)
{
    switch (r->kind) {
    case CLC_RUN_LOCAL: return device ? r->run.local.dev != NULL : r->run.local.ref != NULL;
    case CLC_RUN_SAP: return r->run.sap != NULL;
    case CLC_RUN_BLOCKS: return device ? r->run.blocks.dev != NULL : r->run.blocks.ref != NULL;
    case CLC_RUN_PRIMAL: return device ? r->run.primal.dev != NULL : r->run.primal.ref != NULL;
    }
    return 0;
}

START_TEST(every_pair_follows_the_table)
{
    clcone_context *dev = test_context(CLCONE_FLOAT);
    for (int f = 0; f < CLCONE_FORM_COUNT; ++f)
        for (int m = 0; m < CLCONE_MODEL_COUNT; ++m)
            for (int s = 0; s < CLCONE_SOLVER_COUNT; ++s)
                for (int backend = 0; backend < 2; ++backend) {
                    const clcone_offer *row = row_of((clcone_form)f, (clcone_model)m, (clcone_solver)s);
                    const clc_contract_row *ran = NULL;
                    int offered = row && (backend ? row->device : row->reference);
                    clcone_options o;
                    clcone_error e;
                    clcone_status st;
                    clcone_options_default(&o);
                    o.model = (clcone_model)m;
                    o.solver = (clcone_solver)s;
                    o.tol = 1e-6;
                    st = clc_contract_validate(CLCONE_FORM_BIT(f), &o, backend ? dev : NULL, &ran, &e);
                    ck_assert_msg(offered ? st == CLCONE_OK : st == CLCONE_ENOTSUP,
                                  "form %s model %s solver %s backend %d: %d %s", clcone_form_name((clcone_form)f),
                                  clcone_model_name(o.model), clcone_solver_name(o.solver), backend, st, e.msg);
                    if (!offered && form_has_model((clcone_form)f, o.model)) {
                        char list[256];
                        clcone_offers_describe(CLCONE_FORM_BIT(f), o.model, backend, list, sizeof list);
                        ck_assert_msg(strstr(e.msg, list[0] ? list : "none there") &&
                                          strstr(e.msg, clcone_solver_name(o.solver)), "%s", e.msg);
                    } else if (!offered) /* the model's forms are named */
                        ck_assert_msg(strstr(e.msg, "is solved on"), "%s", e.msg);
                    if (offered) /* a backend that offers the pair has its entry */
                        ck_assert(ran && &ran->offer == row && has_entry(ran, backend));
                }
    clcone_context_free(dev);
}
END_TEST

/* sap takes its one solver by name and refuses the others, as every
 * model does; and on a local-form problem it names the body form. */
START_TEST(sap_is_a_row_like_the_others)
{
    clcone_options o;
    clcone_error e;
    const clc_contract_row *row;
    clcone_options_default(&o);
    o.model = CLCONE_MODEL_SAP;
    o.solver = CLCONE_SOLVER_JACOBI;
    ck_assert_int_eq(clc_contract_validate(CLCONE_FORM_BIT(CLCONE_FORM_BODY), &o, NULL, &row, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "solver jacobi is not available for model sap") && strstr(e.msg, "newton (default)"),
                  "%s", e.msg);
    o.solver = CLCONE_SOLVER_DEFAULT;
    clcone_options_resolve(&o, NULL);
    ck_assert_int_eq(o.solver, CLCONE_SOLVER_NEWTON);
    ck_assert_int_eq(clc_contract_validate(CLCONE_FORM_BIT(CLCONE_FORM_BODY), &o, NULL, &row, &e), CLCONE_OK);
    ck_assert_int_eq(row->kind, CLC_RUN_SAP);
    ck_assert_int_eq(clc_contract_validate(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), &o, NULL, &row, &e), CLCONE_ENOTSUP);
    ck_assert_msg(strstr(e.msg, "model sap is solved on a scene (body form), not on a problem's local form"), "%s",
                  e.msg);
}
END_TEST

/* Each form's default solver and tolerance on each backend are its rows'. */
START_TEST(defaults_are_the_tables)
{
    clcone_context *dev = test_context(CLCONE_FLOAT);
    for (int f = 0; f < CLCONE_FORM_COUNT; ++f)
        for (int m = 0; m < CLCONE_MODEL_COUNT; ++m)
            for (int backend = 0; backend < 2; ++backend) {
                clcone_options o;
                const clcone_offer *row;
                const clc_contract_row *r;
                if (!form_has_model((clcone_form)f, (clcone_model)m)) continue;
                clcone_options_default(&o);
                o.model = (clcone_model)m;
                r = clc_contract_resolve(CLCONE_FORM_BIT(f), &o, backend ? dev : NULL);
                row = row_of((clcone_form)f, o.model, o.solver);
                ck_assert_msg(r && row == &r->offer && (backend ? row->device_default : row->reference_default),
                              "form %s model %s backend %d: %s", clcone_form_name((clcone_form)f),
                              clcone_model_name(o.model), backend, clcone_solver_name(o.solver));
                ck_assert(o.tol == (backend ? row->tol_float : row->tol_double));
            }
    clcone_context_free(dev);
}
END_TEST

/* A batch of scenes is solved in the scenes' local forms, so the scenes
 * form offers what the local form offers, on the same backends and with
 * the same defaults; sap, which has no local form, is not offered. */
START_TEST(scenes_take_the_local_forms_rows)
{
    for (int m = 0; m < CLCONE_MODEL_COUNT; ++m)
        for (int s = CLCONE_SOLVER_DEFAULT; s < CLCONE_SOLVER_COUNT; ++s)
            for (int device = 0; device < 2; ++device) {
                clcone_options o;
                clcone_options_default(&o);
                o.model = (clcone_model)m;
                o.solver = (clcone_solver)s;
                ck_assert_int_eq(clcone_form_offers(CLCONE_FORM_SCENES, &o, device),
                                 clcone_form_offers(CLCONE_FORM_LOCAL, &o, device));
            }
    {
        clcone_options o;
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_SAP;
        ck_assert(!clcone_form_offers(CLCONE_FORM_SCENES, &o, 1) && clcone_form_offers(CLCONE_FORM_BODY, &o, 1));
        o.model = CLCONE_MODEL_COULOMB;
        o.solver = CLCONE_SOLVER_NSGS; /* the reference's only */
        ck_assert(clcone_form_offers(CLCONE_FORM_SCENES, &o, 0) && !clcone_form_offers(CLCONE_FORM_SCENES, &o, 1));
        ck_assert(!clcone_form_offers(CLCONE_FORM_COUNT, &o, 0) && !clcone_form_offers(CLCONE_FORM_LOCAL, NULL, 0));
    }
}
END_TEST

/* A scene in parts over MPI ranks runs only the rows marked parts, on a
 * device: Jacobi-style iterations (jacobi, apgd), which read no other
 * part's contacts between exchanges; the refusal names the model's. */
START_TEST(parts_run_the_rows_marked_so)
{
    clcone_context *dev = test_context(CLCONE_FLOAT);
    for (int m = 0; m < CLCONE_MODEL_COUNT; ++m)
        for (int s = 0; s < CLCONE_SOLVER_COUNT; ++s)
            for (int backend = 0; backend < 2; ++backend) {
                const clc_contract_row *row = clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_BODY), (clcone_model)m,
                                                                (clcone_solver)s), *ran;
                clcone_options o;
                clcone_error e;
                int want = backend && row && row->offer.device && row->parts;
                clcone_options_default(&o);
                o.model = (clcone_model)m;
                o.solver = (clcone_solver)s;
                o.tol = 1e-6;
                if (row && row->parts)
                    ck_assert(s == CLCONE_SOLVER_JACOBI || s == CLCONE_SOLVER_APGD);
                ck_assert_int_eq(clc_contract_validate_parts(&o, backend ? dev : NULL, &ran, &e) == CLCONE_OK,
                                 want);
                if (want) ck_assert_ptr_eq(ran, row);
                else if (row && runs_on_backend(row, backend))
                    ck_assert_msg(strstr(e.msg, "a scene in parts runs ") && strstr(e.msg, "on a device"), "%s",
                                  e.msg);
            }
    {
        clcone_options o;
        const clc_contract_row *ran;
        clcone_error e;
        clcone_options_default(&o);
        o.model = CLCONE_MODEL_COULOMB;
        o.solver = CLCONE_SOLVER_CGS;
        o.tol = 1e-6;
        ck_assert_int_eq(clc_contract_validate_parts(&o, dev, &ran, &e), CLCONE_ENOTSUP);
        ck_assert_msg(strstr(e.msg, "runs jacobi or apgd on a device") && strstr(e.msg, "not cgs"), "%s", e.msg);
        o.model = CLCONE_MODEL_PYRAMID;
        ck_assert_int_eq(clc_contract_validate_parts(&o, dev, &ran, &e), CLCONE_ENOTSUP);
        ck_assert_msg(strstr(e.msg, "runs jacobi on a device"), "%s", e.msg);
    }
    clcone_context_free(dev);
}
END_TEST

START_TEST(docs_show_the_table)
{
    static char out[1 << 14], err[1 << 12];
    size_t len;
    char *doc = test_read_all("docs/solvers.md", &len);
    ck_assert_int_eq(test_run_cli(NULL, "solvers --markdown", out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strstr(doc, out), "docs/solvers.md's solver table differs from `clcone solvers --markdown`:\n%s", out);
    free(doc);
}
END_TEST

/* The stepper's fallback is the table's: the model's Gauss-Seidel (nsgs
 * or pgs on the reference, cgs on devices), none for sap or where the
 * solver asked for is that one. */
START_TEST(fallbacks_are_the_tables)
{
    clcone_context *dev = test_context(CLCONE_FLOAT);
    for (int m = 0; m < CLCONE_MODEL_COUNT; ++m)
        for (int backend = 0; backend < 2; ++backend)
            for (int s = CLCONE_SOLVER_DEFAULT; s < CLCONE_SOLVER_COUNT; ++s) {
                clcone_options o, r;
                clcone_solver want;
                clcone_options_default(&o);
                o.model = (clcone_model)m;
                o.solver = (clcone_solver)s;
                r = o;
                clcone_options_resolve(&r, backend ? dev : NULL);
                if (!clc_contract_find(CLCONE_FORM_BIT(CLCONE_FORM_BODY), r.model, r.solver)) continue;
                want = backend                          ? CLCONE_SOLVER_CGS
                       : m == CLCONE_MODEL_COULOMB      ? CLCONE_SOLVER_NSGS
                                                        : CLCONE_SOLVER_PGS;
                if (m == CLCONE_MODEL_SAP || want == o.solver) want = CLCONE_SOLVER_DEFAULT;
                ck_assert_msg(clc_contract_fallback(&o, backend ? dev : NULL) == want, "model %s solver %s backend %d",
                              clcone_model_name(o.model), clcone_solver_name(o.solver), backend);
            }
    clcone_context_free(dev);
}
END_TEST

/* The CLI's lists are the table's: `clcone solvers` names every pair with
 * its help line, and `solve --help` every model and solver it offers. */
START_TEST(cli_lists_are_the_tables)
{
    static char out[1 << 15], err[1 << 12], help[1 << 15];
    ck_assert_int_eq(test_run_cli(NULL, "solvers", out, sizeof out, err, sizeof err), 0);
    ck_assert_int_eq(test_run_cli(NULL, "solve --help", help, sizeof help, err, sizeof err), 0);
    for (int i = 0; clcone_offer_at(i); ++i) {
        const clcone_offer *o = clcone_offer_at(i);
        const char *solver = clcone_solver_name(o->solver);
        char line[512];
        int f = 0;
        while (!(o->forms & CLCONE_FORM_BIT(f))) ++f;
        ck_assert(o->help && o->help[0]);
        snprintf(line, sizeof line, "%-7s %-8s %-7s %s\n", clcone_form_name((clcone_form)f),
                 clcone_model_name(o->model), solver, o->help);
        ck_assert_msg(strstr(out, line), "`clcone solvers` lacks \"%s\"", line);
        ck_assert_msg(strstr(help, clcone_model_name(o->model)) && strstr(help, solver), "solve --help lacks %s %s",
                      clcone_model_name(o->model), solver);
    }
    /* an unknown name is refused with the table's names */
    ck_assert_int_eq(test_run_cli(NULL, "solve x.dat --solver nope", out, sizeof out, err, sizeof err), 2);
    for (int s = 0; s < CLCONE_SOLVER_COUNT; ++s)
        ck_assert_msg(strstr(err, clcone_solver_name((clcone_solver)s)), "%s", err);
}
END_TEST

/* The rules for options and generator parameters given that do not
 * apply, which the CLI and Python share: each refusal names the option,
 * what applies passes. */
START_TEST(given_options_are_judged_by_the_library)
{
    static const struct {
        clcone_model model;
        unsigned given;
        int scene;
        const char *expect; /* NULL: accepted */
    } cases[] = {
        {CLCONE_MODEL_COULOMB, CLCONE_GIVEN_FACETS, 0, "facets does not apply"},
        {CLCONE_MODEL_PYRAMID, CLCONE_GIVEN_FACETS | CLCONE_GIVEN_FIT, 0, NULL},
        {CLCONE_MODEL_CCP, CLCONE_GIVEN_SOFT_IMPEDANCE, 0, "soft_impedance does not apply"},
        {CLCONE_MODEL_SOFT, CLCONE_GIVEN_SOFT_DT, 0, NULL},
        {CLCONE_MODEL_SOFT, CLCONE_GIVEN_SOFT_DT, 1, "soft_dt does not apply: a scene's"},
        {CLCONE_MODEL_COULOMB, CLCONE_GIVEN_SAP_BETA, 0, "sap_beta does not apply"},
        {CLCONE_MODEL_SAP, CLCONE_GIVEN_SAP_BETA | CLCONE_GIVEN_TOL, 1, NULL},
        {CLCONE_MODEL_SAP, CLCONE_GIVEN_SOLVER, 1, NULL}, /* the table judges which */
        {CLCONE_MODEL_SAP, CLCONE_GIVEN_CHECK_EVERY, 1, "check_every does not apply"},
        {CLCONE_MODEL_CCP, CLCONE_GIVEN_SOLVER | CLCONE_GIVEN_MAX_ITER | CLCONE_GIVEN_MAX_SECONDS, 0, NULL},
        {CLCONE_MODEL_CCP, 1u << 20, 0, "unknown option bits"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        clcone_options o;
        clcone_error e = {0};
        clcone_status s;
        clcone_options_default(&o);
        o.model = cases[k].model;
        o.tol = 1e-6;
        s = clcone_options_check_given(&o, cases[k].given, cases[k].scene, &e);
        ck_assert_msg(cases[k].expect ? s == CLCONE_EINVAL && strstr(e.msg, cases[k].expect) : s == CLCONE_OK,
                      "case %zu: %d %s", k, (int)s, e.msg);
    }
    {
        clcone_options o;
        clcone_error e;
        clcone_options_default(&o);
        o.tol = 0;
        ck_assert_int_eq(clcone_options_check_given(&o, 0, 0, &e), CLCONE_OK);
        ck_assert_int_eq(clcone_options_check_given(&o, CLCONE_GIVEN_TOL, 0, &e), CLCONE_EINVAL);
        ck_assert_msg(strstr(e.msg, "tol needs a number > 0"), "%s", e.msg);
    }
}
END_TEST

START_TEST(given_generator_parameters_are_judged_by_the_library)
{
    static const struct {
        const char *name;
        unsigned given;
        const char *expect; /* NULL: accepted */
    } cases[] = {
        {"pile", CLCONE_GEN_GIVEN_N | CLCONE_GEN_GIVEN_SEED | CLCONE_GEN_GIVEN_SPREAD, NULL},
        {"pile", CLCONE_GEN_GIVEN_SEED, "n (the size) is needed for pile"},
        {"stack", CLCONE_GEN_GIVEN_N | CLCONE_GEN_GIVEN_SEED, "seed does not apply: only pile uses it, not stack"},
        {"grid", CLCONE_GEN_GIVEN_N | CLCONE_GEN_GIVEN_SPREAD, "spread does not apply"},
        {"wall", CLCONE_GEN_GIVEN_N | CLCONE_GEN_GIVEN_THETA, "theta does not apply: only incline uses it"},
        {"incline", CLCONE_GEN_GIVEN_THETA, NULL},
        {"incline", CLCONE_GEN_GIVEN_N, "n does not apply: only pile, stack, wall, grid use it, not incline"},
        {"tower", CLCONE_GEN_GIVEN_N, NULL}, /* clcone_world_generate names it */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        clcone_error e = {0};
        clcone_status s = clcone_gen_check_given(cases[k].name, cases[k].given, &e);
        ck_assert_msg(cases[k].expect ? s == CLCONE_EINVAL && strstr(e.msg, cases[k].expect) : s == CLCONE_OK,
                      "case %zu: %d %s", k, (int)s, e.msg);
    }
}
END_TEST

Suite *suite_contract(void)
{
    Suite *s = suite_create("contract");
    TCase *t = tcase_create("contract");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, every_pair_follows_the_table);
    tcase_add_test(t, sap_is_a_row_like_the_others);
    tcase_add_test(t, defaults_are_the_tables);
    tcase_add_test(t, scenes_take_the_local_forms_rows);
    tcase_add_test(t, parts_run_the_rows_marked_so);
    tcase_add_test(t, docs_show_the_table);
    tcase_add_test(t, fallbacks_are_the_tables);
    tcase_add_test(t, cli_lists_are_the_tables);
    tcase_add_test(t, given_options_are_judged_by_the_library);
    tcase_add_test(t, given_generator_parameters_are_judged_by_the_library);
    suite_add_tcase(s, t);
    return s;
}
