/* The public API's argument checks: every entry of include/clcone/ that
 * returns a status gives CLCONE_EINVAL, naming itself and the argument,
 * for each pointer it needs that is NULL (before, clcone_solve with a NULL
 * options or r crashed in solve.c); the entries that return no status do
 * nothing (or NaN, NULL) instead of crashing; clcone_problem_from_dense
 * refuses NaN and Inf where it builds the problem. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* Valid arguments every case draws from; `nul` names the one argument
 * (1-based position among the case's pointer arguments) given as NULL. */
typedef struct fixture {
    clcone_problem p;
    clcone_scene s;
    clcone_world w;
    clcone_options o;
    clcone_sim_options so;
    clcone_gen_params gp;
    clcone_plan *plan;
    clcone_sim *sim;
    clcone_result res;
    clcone_step_info info;
    clcone_input in;
    double r[3], q[3];
} fixture;

#define ARG(k, v) (nul == (k) ? NULL : (v))
#define NOPATH "/nonexistent-clcone-dir/x"

typedef clcone_status (*api_call)(fixture *f, int nul, clcone_error *e);

static clcone_status c_list_devices(fixture *f, int nul, clcone_error *e)
{
    clcone_device_info *list;
    int n;
    (void)f;
    return clcone_list_devices(ARG(1, &list), ARG(2, &n), e);
}
static clcone_status c_context_create(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_context_create(NULL, CLCONE_FLOAT, ARG(1, (clcone_context **)NULL), e);
}
static clcone_status c_read_problem(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_problem(ARG(1, NOPATH), ARG(2, &f->p), e);
}
static clcone_status c_write_problem_dat(fixture *f, int nul, clcone_error *e)
{
    return clcone_write_problem_dat(ARG(1, NOPATH), ARG(2, &f->p), e);
}
static clcone_status c_read_reactions(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_reactions(ARG(1, NOPATH), 1, ARG(2, f->r), e);
}
static clcone_status c_write_reactions(fixture *f, int nul, clcone_error *e)
{
    return clcone_write_reactions(ARG(1, NOPATH), 1, ARG(2, f->r), e);
}
static clcone_status c_write_vtk(fixture *f, int nul, clcone_error *e)
{
    return clcone_write_vtk(ARG(1, NOPATH), ARG(2, NOPATH), ARG(3, &f->w), NULL, e);
}
static clcone_status c_write_pvd(fixture *f, int nul, clcone_error *e)
{
    static const char *const files[] = {"a.vtk"};
    static const double times[] = {0};
    (void)f;
    return clcone_write_pvd(ARG(1, NOPATH), 1, ARG(2, files), ARG(3, times), 1, e);
}
static clcone_status c_render_png(fixture *f, int nul, clcone_error *e)
{
    return clcone_render_png(ARG(1, NOPATH), ARG(2, &f->w), NULL, 200, 200, NULL, e);
}
static clcone_status c_plot_png(fixture *f, int nul, clcone_error *e)
{
    clcone_plot_panel panel;
    (void)f;
    memset(&panel, 0, sizeof panel);
    return clcone_plot_png(ARG(1, NOPATH), NULL, ARG(2, &panel), 1, 1, 400, 300, e);
}
static clcone_status c_problem_alloc(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_problem_alloc(ARG(1, (clcone_problem *)NULL), 1, 1, e);
}
static clcone_status c_problem_from_dense(fixture *f, int nul, clcone_error *e)
{
    static const double W[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, mu[1] = {0.5};
    clcone_problem p;
    return clcone_problem_from_dense(ARG(1, &p), 1, ARG(2, W), ARG(3, f->q), ARG(4, mu), e);
}
static clcone_status c_problem_validate(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_problem_validate(ARG(1, (clcone_problem *)NULL), e);
}
static clcone_status c_batch_concat(fixture *f, int nul, clcone_error *e)
{
    const clcone_problem *parts[1] = {&f->p};
    clcone_problem out;
    return clcone_batch_concat(ARG(1, parts), 1, ARG(2, &out), e);
}
static clcone_status c_batch_extract(fixture *f, int nul, clcone_error *e)
{
    clcone_problem out;
    return clcone_batch_extract(ARG(1, &f->p), 0, ARG(2, &out), e);
}
static clcone_status c_scene_validate(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_scene_validate(ARG(1, (clcone_scene *)NULL), e);
}
static clcone_status c_scene_to_local(fixture *f, int nul, clcone_error *e)
{
    clcone_problem p;
    return clcone_scene_to_local(ARG(1, &f->s), ARG(2, &p), e);
}
static clcone_status c_gen_stack(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clc_gen_stack(1, 0.5, 0.01, ARG(1, (clcone_scene *)NULL), e);
}
static clcone_status c_gen_pile(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clc_gen_pile(5, 0.5, 0.01, 0.1, 1, ARG(1, (clcone_scene *)NULL), e);
}
static clcone_status c_gen_grid(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clc_gen_grid(2, 2, 0.5, 0.01, ARG(1, (clcone_scene *)NULL), e);
}
static clcone_status c_sim_create(fixture *f, int nul, clcone_error *e)
{
    clcone_sim *sim;
    return clcone_sim_create(ARG(1, &f->w), NULL, ARG(2, &f->so), ARG(3, &sim), e);
}
static clcone_status c_sim_step(fixture *f, int nul, clcone_error *e)
{
    return clcone_sim_step(ARG(1, f->sim), ARG(2, &f->info), e);
}
static clcone_status c_parse_model(fixture *f, int nul, clcone_error *e)
{
    clcone_model m;
    (void)f;
    return clcone_parse_model(ARG(1, "ccp"), ARG(2, &m), e);
}
static clcone_status c_parse_solver(fixture *f, int nul, clcone_error *e)
{
    clcone_solver v;
    (void)f;
    return clcone_parse_solver(ARG(1, "cgs"), ARG(2, &v), e);
}
static clcone_status c_solve(fixture *f, int nul, clcone_error *e)
{
    return clcone_solve(NULL, ARG(1, &f->p), ARG(2, &f->o), ARG(3, f->r), ARG(4, &f->res), e);
}
static clcone_status c_solve_scene(fixture *f, int nul, clcone_error *e)
{
    double r[12];
    return clcone_solve_scene(NULL, ARG(1, &f->s), ARG(2, &f->o), ARG(3, r), ARG(4, &f->res), e);
}
static clcone_status c_plan_create(fixture *f, int nul, clcone_error *e)
{
    clcone_plan *pl;
    return clcone_plan_create(NULL, ARG(1, &f->p), ARG(2, &f->o), ARG(3, &pl), e);
}
static clcone_status c_plan_create_scene(fixture *f, int nul, clcone_error *e)
{
    clcone_plan *pl;
    return clcone_plan_create_scene(NULL, ARG(1, &f->s), ARG(2, &f->o), ARG(3, &pl), e);
}
static clcone_status c_plan_set_q(fixture *f, int nul, clcone_error *e)
{
    return clcone_plan_set_q(ARG(1, f->plan), ARG(2, f->q), e);
}
static clcone_status c_plan_set_scene(fixture *f, int nul, clcone_error *e)
{
    return clcone_plan_set_scene(ARG(1, f->plan), ARG(2, &f->s), e);
}
static clcone_status c_plan_solve(fixture *f, int nul, clcone_error *e)
{
    return clcone_plan_solve(ARG(1, f->plan), ARG(2, f->r), ARG(3, &f->res), e);
}
static clcone_status c_out_open(fixture *f, int nul, clcone_error *e)
{
    clcone_out *o = NULL;
    (void)f;
    return clcone_out_open(ARG(1, NOPATH), ARG(2, &o), e);
}
static clcone_status c_out_target(fixture *f, int nul, clcone_error *e)
{
    char *t = NULL;
    (void)f;
    return clcone_out_target(ARG(1, NOPATH), ARG(2, &t), e);
}
static clcone_status c_world_validate(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_world_validate(ARG(1, (clcone_world *)NULL), e);
}
static clcone_status c_world_contact_scene(fixture *f, int nul, clcone_error *e)
{
    clcone_scene s;
    return clcone_world_contact_scene(ARG(1, &f->w), ARG(2, &s), e);
}
static clcone_status c_world_generate(fixture *f, int nul, clcone_error *e)
{
    clcone_world w;
    return clcone_world_generate(ARG(1, "stack"), ARG(2, &f->gp), ARG(3, &w), e);
}
static clcone_status c_read_world(fixture *f, int nul, clcone_error *e)
{
    clcone_world w;
    (void)f;
    return clcone_read_world(ARG(1, NOPATH), ARG(2, &w), e);
}
static clcone_status c_write_world(fixture *f, int nul, clcone_error *e)
{
    return clcone_write_world(ARG(1, NOPATH), ARG(2, &f->w), e);
}
static clcone_status c_read_input(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_input(ARG(1, NOPATH), ARG(2, &f->in), e);
}
static clcone_status c_read_input_hdf5(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_input_hdf5(ARG(1, NOPATH), ARG(2, &f->in), e);
}
static clcone_status c_read_input_ext(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_input_ext(ARG(1, NOPATH), NULL, ARG(2, &f->in), e);
}
static clcone_status c_read_problem_hdf5(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_problem_hdf5(ARG(1, NOPATH), ARG(2, &f->p), e);
}
static clcone_status c_read_problem_ext(fixture *f, int nul, clcone_error *e)
{
    return clcone_read_problem_ext(ARG(1, NOPATH), NULL, ARG(2, &f->p), e);
}
static clcone_status c_world_detect(fixture *f, int nul, clcone_error *e)
{
    (void)f;
    return clcone_world_detect(ARG(1, (clcone_world *)NULL), 1e-3, NULL, e);
}

static const struct {
    const char *fn;
    int nptr; /* pointer arguments the case nulls, one at a time */
    api_call call;
} CASES[] = {
    {"clcone_list_devices", 2, c_list_devices},
    {"clcone_context_create", 1, c_context_create},
    {"clcone_read_problem", 2, c_read_problem},
    {"clcone_write_problem_dat", 2, c_write_problem_dat},
    {"clcone_read_reactions", 2, c_read_reactions},
    {"clcone_write_reactions", 2, c_write_reactions},
    {"clcone_write_vtk", 3, c_write_vtk},
    {"clcone_write_pvd", 3, c_write_pvd},
    {"clcone_render_png", 2, c_render_png},
    {"clcone_plot_png", 2, c_plot_png},
    {"clcone_problem_alloc", 1, c_problem_alloc},
    {"clcone_problem_from_dense", 4, c_problem_from_dense},
    {"clcone_problem_validate", 1, c_problem_validate},
    {"clcone_batch_concat", 2, c_batch_concat},
    {"clcone_batch_extract", 2, c_batch_extract},
    {"clcone_scene_validate", 1, c_scene_validate},
    {"clcone_scene_to_local", 2, c_scene_to_local},
    {"clc_gen_stack", 1, c_gen_stack},
    {"clc_gen_pile", 1, c_gen_pile},
    {"clc_gen_grid", 1, c_gen_grid},
    {"clcone_sim_create", 3, c_sim_create},
    {"clcone_sim_step", 2, c_sim_step},
    {"clcone_parse_model", 2, c_parse_model},
    {"clcone_parse_solver", 2, c_parse_solver},
    {"clcone_solve", 4, c_solve},
    {"clcone_solve_scene", 4, c_solve_scene},
    {"clcone_plan_create", 3, c_plan_create},
    {"clcone_plan_create_scene", 3, c_plan_create_scene},
    {"clcone_plan_set_q", 2, c_plan_set_q},
    {"clcone_plan_set_scene", 2, c_plan_set_scene},
    {"clcone_plan_solve", 3, c_plan_solve},
    {"clcone_out_open", 2, c_out_open},
    {"clcone_out_target", 2, c_out_target},
    {"clcone_world_validate", 1, c_world_validate},
    {"clcone_world_contact_scene", 2, c_world_contact_scene},
    {"clcone_world_generate", 3, c_world_generate},
    {"clcone_read_world", 2, c_read_world},
    {"clcone_write_world", 2, c_write_world},
    {"clcone_read_input", 2, c_read_input},
    {"clcone_read_input_hdf5", 2, c_read_input_hdf5},
    {"clcone_read_input_ext", 2, c_read_input_ext},
    {"clcone_read_problem_hdf5", 2, c_read_problem_hdf5},
    {"clcone_read_problem_ext", 2, c_read_problem_ext},
    {"clcone_world_detect", 1, c_world_detect},
};

static void fixture_make(fixture *f)
{
    static const double W[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, mu[1] = {0.5};
    clcone_options po;
    clcone_error e;
    memset(f, 0, sizeof *f);
    f->q[0] = -1;
    ck_assert(clcone_problem_from_dense(&f->p, 1, W, f->q, mu, &e) == CLCONE_OK);
    ck_assert(clc_gen_stack(1, 0.5, 0.01, &f->s, &e) == CLCONE_OK);
    clcone_gen_params_default(&f->gp);
    f->gp.n = 1;
    ck_assert_msg(clcone_world_generate("stack", &f->gp, &f->w, &e) == CLCONE_OK, "%s", e.msg);
    clcone_options_default(&f->o);
    clcone_sim_options_default(&f->so);
    clcone_options_default(&po);
    po.model = CLCONE_MODEL_CCP;
    ck_assert_msg(clcone_plan_create(NULL, &f->p, &po, &f->plan, &e) == CLCONE_OK, "%s", e.msg);
    ck_assert_msg(clcone_sim_create(&f->w, NULL, &f->so, &f->sim, &e) == CLCONE_OK, "%s", e.msg);
}

static void fixture_free(fixture *f)
{
    clcone_sim_free(f->sim);
    clcone_plan_free(f->plan);
    clcone_world_free(&f->w);
    clcone_scene_free(&f->s);
    clcone_problem_free(&f->p);
}

START_TEST(api_null_arguments_are_refused)
{
    fixture f;
    fixture_make(&f);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; ++i)
        for (int k = 1; k <= CASES[i].nptr; ++k) {
            clcone_error e;
            clcone_status s;
            memset(&e, 0, sizeof e);
            s = CASES[i].call(&f, k, &e);
            ck_assert_msg(s == CLCONE_EINVAL, "%s, argument %d NULL: status %d (%s)", CASES[i].fn, k, (int)s, e.msg);
            ck_assert_msg(strstr(e.msg, CASES[i].fn) && strstr(e.msg, "NULL"), "%s, argument %d: '%s'",
                          CASES[i].fn, k, e.msg);
            /* and with no error struct to fill */
            ck_assert_int_eq(CASES[i].call(&f, k, NULL), CLCONE_EINVAL);
        }
    /* r may be NULL only where there is nothing to write */
    {
        clcone_problem empty;
        clcone_error e;
        ck_assert(clcone_problem_alloc(&empty, 0, 0, &e) == CLCONE_OK);
        ck_assert_msg(clcone_solve(NULL, &empty, &f.o, NULL, &f.res, &e) == CLCONE_OK, "%s", e.msg);
        clcone_result_free(&f.res);
        clcone_problem_free(&empty);
    }
    fixture_free(&f);
}
END_TEST

/* Entries without a status: NULL is a no-op, NaN or NULL, never a crash. */
START_TEST(api_null_without_status_is_harmless)
{
    double u[3] = {7, 7, 7}, frame[9] = {0};
    clcone_options_default(NULL);
    clcone_options_resolve(NULL, NULL);
    clcone_sim_options_default(NULL);
    clcone_gen_params_default(NULL);
    clcone_problem_velocity(NULL, NULL, u);
    ck_assert_double_eq(u[0], 7);
    clcone_scene_apply_impulses(NULL, NULL, u);
    clcone_contact_frame(NULL, frame);
    clcone_world_update_inertia(NULL);
    clcone_offers_describe(CLCONE_FORM_BIT(CLCONE_FORM_LOCAL), CLCONE_MODEL_CCP, 0, NULL, 10);
    ck_assert(isnan(clcone_error_coulomb(NULL, NULL, 0, 0, NULL)));
    ck_assert(isnan(clcone_error_of(NULL, NULL, NULL, 0, 0)));
    ck_assert(isnan(clcone_world_kinetic_energy(NULL, NULL)));
    ck_assert_ptr_null(clcone_sim_reactions(NULL));
    ck_assert_ptr_null(clcone_sim_last_scene(NULL, NULL));
    ck_assert_ptr_null(clcone_context_device(NULL));
    ck_assert_int_eq(clcone_context_precision(NULL), CLCONE_DOUBLE);
    ck_assert_int_eq(clcone_is_world_file(NULL), -1);
    clcone_problem_free(NULL);
    clcone_scene_free(NULL);
    clcone_world_free(NULL);
    clcone_result_free(NULL);
    clcone_history_free(NULL);
    clcone_sim_free(NULL);
    clcone_plan_free(NULL);
    clcone_context_free(NULL);
    clcone_input_free(NULL);
    clcone_device_list_free(NULL);
}
END_TEST

/* A NULL inside an array argument, a precision that is none, and a
 * world whose positions are not finite are refused, not crashed on or
 * solved. */
START_TEST(api_bad_items_inside_arguments_are_refused)
{
    clcone_problem out;
    clcone_context *c = NULL;
    clcone_world w;
    clcone_gen_params gp;
    clcone_error e;
    const clcone_problem *parts[2] = {NULL, NULL};
    const char *files[2] = {"a.vtk", NULL};
    double times[1] = {0};
    ck_assert_int_eq(clcone_batch_concat(parts, 2, &out, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "problem 0 of the batch is NULL"), "%s", e.msg);
    ck_assert_int_eq(clcone_write_pvd("/tmp/clcone-x.pvd", 1, files, times, 2, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "frame 0's file name 1 is NULL"), "%s", e.msg);
    ck_assert_int_eq(clcone_context_create(NULL, (clcone_precision)7, &c, &e), CLCONE_EINVAL);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(e.msg, "precision 7"), "%s", e.msg);
    clcone_gen_params_default(&gp);
    gp.n = 3;
    ck_assert_msg(clcone_world_generate("stack", &gp, &w, &e) == CLCONE_OK, "%s", e.msg);
    w.s.bodies[1].x[0] = NAN;
    ck_assert_int_eq(clcone_world_detect(&w, 1e-3, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "body 1: position is not finite"), "%s", e.msg);
    w.s.bodies[1].x[0] = 0;
    w.shapes[2].size[0] = -1;
    ck_assert_int_eq(clcone_world_detect(&w, 1e-3, NULL, &e), CLCONE_EINVAL);
    ck_assert_msg(strstr(e.msg, "body 2: size"), "%s", e.msg);
    clcone_world_free(&w);
}
END_TEST

/* A NaN or Inf in W, q or mu is refused where the problem is built,
 * naming the entry (before, only at the solve). */
START_TEST(api_from_dense_refuses_non_finite)
{
    static const struct {
        int which, index;
        double v;
        const char *name;
    } cases[] = {{0, 0, NAN, "W[0][0]"}, {0, 13, INFINITY, "W[2][1]"}, {0, 35, -INFINITY, "W[5][5]"},
                 {1, 4, NAN, "q[4] (contact 1)"}, {2, 1, INFINITY, "mu[1]"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        double W[36] = {0}, q[6] = {-1, 0, 0, -1, 0, 0}, mu[2] = {0.5, 0.5};
        double *arr[3] = {W, q, mu};
        clcone_problem p;
        clcone_error e;
        for (int k = 0; k < 6; ++k) W[7 * k] = 1;
        arr[cases[i].which][cases[i].index] = cases[i].v;
        ck_assert_int_eq(clcone_problem_from_dense(&p, 2, W, q, mu, &e), CLCONE_EINVAL);
        ck_assert_msg(strstr(e.msg, cases[i].name) && strstr(e.msg, "not finite"), "%s", e.msg);
    }
}
END_TEST

Suite *suite_api(void)
{
    Suite *s = suite_create("api");
    TCase *t = tcase_create("api");
    tcase_add_test(t, api_null_arguments_are_refused);
    tcase_add_test(t, api_null_without_status_is_harmless);
    tcase_add_test(t, api_from_dense_refuses_non_finite);
    tcase_add_test(t, api_bad_items_inside_arguments_are_refused);
    suite_add_tcase(s, t);
    return s;
}
