/* The typed plan (analysis/plan.c, plan_step.c), the inputs it is read
 * from (analysis/plan_input.c through the profile views, the peak
 * document's reader in profile/curve_json.c) and its reporters
 * (report/plan_json.c, report/plan_render.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "curve_json.h"
#include "plan.h"
#include "plan_input.h"
#include "plan_json.h"
#include "plan_render.h"
#include "plan_step.h"
#include "test_fs.h"
#include "test_util.h"

#define PROFILE_A CAL_TEST_DATA "/profile_a.json"
#define PROFILE_B CAL_TEST_DATA "/profile_b.json"

/* The inputs of profile_a and profile_b. */
static void read_ab(cal_plan_inputs_t *in) {
  char err[256];
  memset(in, 0, sizeof *in);
  assert_int_equal(cal_plan_inputs_add(in, PROFILE_A, err, sizeof err), 0);
  assert_int_equal(cal_plan_inputs_add(in, PROFILE_B, err, sizeof err), 0);
  assert_int_equal(in->n, 2);
}

static cal_plan_opts_t model_opts(double params, cal_training_t tr,
                                  cal_dtype_t dt) {
  cal_plan_opts_t o = {.params = params, .training = tr, .dtype = dt};
  cal_mem_assume_default(tr, &o.assume);
  return o;
}

/* A profile's figures come through its view: name, throughput, batch,
 * memory and the CI of the point behind the throughput. */
static void inputs_from_views(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_ab(&in);
  const cal_plan_machine_t *a = &in.ms[0];
  assert_string_equal(a->name, "machine_a");
  assert_int_equal(a->source, CAL_PLAN_SRC_PROFILE);
  assert_double_equal(a->throughput, 776.0, 1e-9);
  assert_int_equal(a->optimal_batch, 32);
  assert_double_equal(a->available, 21.6e9, 1);
  assert_true(isfinite(a->ci_low) && a->ci_low < 776.0);
  assert_true(isfinite(a->ci_high) && a->ci_high > 776.0);
  assert_string_equal(a->mode, "prefill"); /* found, not recorded */
  assert_int_equal(cal_step_source(a), CAL_STEP_INFERENCE);
  assert_true(isnan(a->price_per_hour));
  cal_plan_inputs_free(&in);
}

/* The split as typed figures: shares, counts, times, no model. */
static void typed_split(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_ab(&in);
  cal_plan_opts_t o = {.examples = 1000,
                       .work = {.unit = CAL_WORK_EXAMPLES, .examples = 1000}};
  cal_plan_t *p = NULL;
  char err[256];
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  assert_int_equal(p->nmachines, 2);
  assert_int_equal(p->nexcluded, 0);
  assert_int_equal(p->nsplit, 2);
  assert_null(p->split_note);
  assert_int_equal(p->machines[0].examples + p->machines[1].examples, 1000);
  assert_double_equal(p->machines[0].share, 776.0 / (776.0 + 278.0), 1e-12);
  assert_true(p->machines[0].in_split && p->machines[1].in_split);
  assert_string_equal(p->machines[0].left_out_reason, "");
  assert_true(isfinite(p->machines[0].finish_s));
  assert_true(isnan(p->cost_usd));
  assert_null(p->model);
  assert_null(p->placement);
  assert_false(p->has_net);
  assert_false(cal_plan_fits_nowhere(p));
  cal_plan_free(p);
  cal_plan_inputs_free(&in);
}

/* The placement as an enum with the machines' indices; the no-fit rule. */
static void typed_placement(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_ab(&in);
  char err[256];
  cal_plan_t *p = NULL;
  /* 70B fp16 inference with 200 GB on machine_a: only it holds it */
  cal_plan_opts_t o = model_opts(7e10, CAL_TRAIN_INFERENCE, CAL_DT_FP16);
  in.ms[0].available = 200e9;
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  assert_non_null(p->model);
  assert_int_equal(p->placement->strategy, CAL_PLACE_FITS_SOME);
  assert_string_equal(cal_place_name(p->placement->strategy), "fits_some");
  assert_int_equal(p->placement->nfits_on, 1);
  assert_int_equal(p->placement->fits_on[0], 0);
  assert_false(p->machines[1].in_split);
  assert_non_null(strstr(p->machines[1].left_out_reason, "cannot hold"));
  assert_int_equal(p->machines[1].mem.fits, 0);
  assert_int_equal(p->machines[0].mem.fits, 1);
  assert_false(cal_plan_fits_nowhere(p));
  cal_plan_free(p);
  /* 12B fp16 inference fits neither alone, both together */
  in.ms[0].available = 21.6e9;
  o = model_opts(1.2e10, CAL_TRAIN_INFERENCE, CAL_DT_FP16);
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  assert_int_equal(p->placement->strategy, CAL_PLACE_SHARDED);
  assert_int_equal(p->placement->ngroup, 2);
  assert_int_equal(p->nsplit, 0);
  assert_non_null(p->split_note);
  assert_true(cal_plan_fits_nowhere(p));
  cal_plan_free(p);
  cal_plan_inputs_free(&in);
}

/* Output of one reporter into a new string (free it). */
static char *render(int (*fn)(const void *, int, FILE *, char *, size_t),
                    const cal_plan_t *p, int variant) {
  char *text = NULL, err[128];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_int_equal(fn(p, variant, f, err, sizeof err), 0);
  assert_int_equal(fclose(f), 0);
  return text;
}

/* The three reporters render one typed plan: the JSON document parses
 * back with the plan's figures; table and markdown share the layout. */
static void reporters_render_typed(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_ab(&in);
  cal_plan_opts_t o = model_opts(1e8, CAL_TRAIN_FULL, CAL_DT_BF16);
  o.examples = 500;
  o.work = (cal_work_t){.unit = CAL_WORK_EXAMPLES, .examples = 500};
  o.target = 64;
  cal_plan_t *p = NULL;
  char err[256];
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  char *js = render(cal_plan_render_json, p, 0);
  json_t *doc = json_loads(js, 0, NULL);
  assert_non_null(doc);
  assert_string_equal(json_string_value(json_object_get(doc, "schema")),
                      CAL_PLAN_SCHEMA);
  json_t *m0 = json_array_get(json_object_get(doc, "machines"), 0);
  assert_int_equal(json_integer_value(json_object_get(m0, "examples")),
                   (json_int_t)p->machines[0].examples);
  assert_int_equal(json_integer_value(json_object_get(m0, "micro_batch_size")),
                   p->machines[0].batch.micro_batch);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(doc, "placement"),
                                        "strategy")),
      cal_place_name(p->placement->strategy));
  assert_int_equal(js[strlen(js) - 1], '\n');
  json_decref(doc);
  free(js);
  char *table = render(cal_plan_render_text, p, 0);
  char *md = render(cal_plan_render_text, p, 1);
  cal_assert_contains(table, "Work split", "Batch for effective batch 64",
                      "Placement: data_parallel");
  assert_null(strstr(table, "|---"));
  assert_non_null(strstr(md, "## Work split"));
  assert_non_null(strstr(md, "|---|"));
  free(table);
  free(md);
  cal_plan_free(p);
  cal_plan_inputs_free(&in);
}

/* The peak document's reader: each curve's optimum and CI, and one line
 * naming the file and the curve for a malformed one. */
static void peak_doc_reader(void **state) {
  (void)state;
  json_t *doc = json_pack(
      "{s:s, s:[{s:s, s:[{s:i, s:s, s:f, s:{s:f, s:f, s:f}}], s:i},"
      " {s:n, s:[], s:n}]}",
      "schema", CAL_CURVE_SCHEMA, "curves", "machine", "box", "points",
      "batch_size", 8, "status", "ok", "examples_per_s", 120.0, "stats",
      "ci_low", 110.0, "ci_high", 130.0, "ci_level", 0.95,
      "optimal_batch_size", 8, "machine", "points", "optimal_batch_size");
  cal_peak_curve_t *c = NULL;
  size_t n = 0;
  char err[256];
  assert_true(cal_peak_doc_is(doc));
  assert_int_equal(cal_peak_doc_read(doc, "p.json", &c, &n, err, sizeof err),
                   0);
  assert_int_equal(n, 2);
  assert_string_equal(c[0].machine, "box");
  assert_double_equal(c[0].throughput, 120.0, 0);
  assert_double_equal(c[0].ci_low, 110.0, 0);
  assert_int_equal(c[0].optimal_batch, 8);
  assert_null(c[1].machine);
  assert_true(isnan(c[1].throughput));
  assert_int_equal(c[1].optimal_batch, 0);
  free(c);
  /* an optimal batch without its ok point */
  json_array_set_new(json_object_get(doc, "curves"), 1,
                     json_pack("{s:s, s:[], s:i}", "machine", "x", "points",
                               "optimal_batch_size", 4));
  assert_int_equal(cal_peak_doc_read(doc, "p.json", &c, &n, err, sizeof err),
                   CAL_ESCHEMA);
  assert_non_null(strstr(err, "p.json: curves[1]: no ok point"));
  json_array_set_new(json_object_get(doc, "curves"), 1, json_integer(5));
  assert_int_equal(cal_peak_doc_read(doc, "p.json", &c, &n, err, sizeof err),
                   CAL_ESCHEMA);
  assert_non_null(strstr(err, "curves[1] is not a curve"));
  json_array_clear(json_object_get(doc, "curves"));
  assert_int_equal(cal_peak_doc_read(doc, "p.json", &c, &n, err, sizeof err),
                   CAL_ESCHEMA);
  assert_non_null(strstr(err, "without curves"));
  json_object_set_new(doc, "schema", json_string("calibrate-profile/1"));
  assert_false(cal_peak_doc_is(doc));
  json_decref(doc);
}

/* A fleet profile: its hosts as machines named by host, its all-reduce
 * curve, and the network step over it with the arithmetic. */
static void fleet_input_and_step(void **state) {
  (void)state;
  char err[256], *dir = test_scratch_dir();
  assert_non_null(dir);
  char *path = test_path(dir, "fleet.json");
  json_t *a = json_load_file(PROFILE_A, 0, NULL);
  assert_non_null(a);
  json_t *f = json_pack("{s:s, s:i, s:{s:b}, s:[{s:s, s:o}, {s:s, s:n}]}",
                        "schema", "calibrate-fleet/1", "ranks", 2, "links",
                        "intra_host", 0, "hosts", "host", "node-a", "profile",
                        a, "host", "dead", "profile");
  json_t *pts = json_pack("[{s:i, s:f}, {s:f, s:f}]", "bytes", 1024,
                          "time_us", 20.0, "bytes", 1e9, "time_us", 5e5);
  assert_non_null(f);
  assert_non_null(pts);
  json_object_set_new(f, "allreduce", json_pack("{s:o}", "points", pts));
  assert_int_equal(json_dump_file(f, path, 0), 0);
  json_decref(f);
  cal_plan_inputs_t in = {0};
  assert_int_equal(cal_plan_inputs_add(&in, path, err, sizeof err), 0);
  assert_true(in.has_net);
  assert_int_equal(in.n, 1); /* the host without a profile is none */
  assert_string_equal(in.ms[0].name, "node-a");
  assert_int_equal(in.net.curve.n, 2);
  assert_int_equal(in.net.hosts, 2);
  assert_int_equal(in.net.ranks, 2);
  assert_double_equal(in.net.curve.time_s[1], 0.5, 1e-12);
  assert_int_equal(cal_plan_inputs_add(&in, path, err, sizeof err),
                   CAL_EPARSE); /* one fleet per plan */
  cal_plan_opts_t o = model_opts(1e8, CAL_TRAIN_FULL, CAL_DT_BF16);
  o.net = &in.net;
  cal_plan_t *p = NULL;
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  assert_true(p->has_net);
  const cal_plan_network_t *nw = p->network;
  assert_non_null(nw);
  assert_int_equal(nw->nmachines, 1);
  assert_int_equal(nw->machines[0].from, CAL_STEP_INFERENCE);
  assert_string_equal(cal_step_src_name(nw->machines[0].from), "inference");
  assert_non_null(nw->compute_note);
  assert_true(nw->narith >= 8);
  assert_non_null(strstr(nw->arith[0], "gradients:"));
  assert_ptr_equal(nw->fastest, &in.ms[0]);
  assert_double_equal(nw->global_batch, 32, 0); /* the optimal batch */
  cal_plan_free(p);
  /* without a model: a warning, no estimate */
  o.params = 0;
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  assert_true(p->has_net);
  assert_null(p->network);
  assert_int_equal(p->nwarnings, 1);
  cal_plan_free(p);
  cal_plan_inputs_free(&in);
  remove(path);
  rmdir(dir);
  free(path);
  free(dir);
}

CAL_TEST_MAIN(
    cmocka_unit_test(inputs_from_views), cmocka_unit_test(typed_split),
    cmocka_unit_test(typed_placement),
    cmocka_unit_test(reporters_render_typed),
    cmocka_unit_test(peak_doc_reader), cmocka_unit_test(fleet_input_and_step))
