/* The network's share of a data-parallel step (plan_net.h) on given
 * numbers: compute-bound, network-bound, the crossover, and the all-reduce
 * curve's interpolation; and in the plan, which throughput the step's
 * compute time rests on. */
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
#include "plan.h"
#include "plan_input.h"
#include "plan_json.h"
#include "plan_net.h"
#include "plan_render.h"
#include "profile.h"
#include "test_util.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fmax(1, fabs(b)))

/* 100 and 50 examples/s, 300 examples a step: 2 s of compute, 3 s for
 * the faster machine alone. */
static const double thr2[] = {100, 50};

static void compute_bound(void **state) {
  (void)state;
  cal_net_step_t s;
  assert_int_equal(cal_net_step(thr2, 2, 300, 0.05, 0.10, &s), 0);
  NEAR(s.compute_s, 2.0);
  NEAR(s.step_s, 2.05);
  NEAR(s.step_overlap_s, 2.0);
  NEAR(s.alone_s, 3.0);
  assert_false(s.slower_than_fastest);
  assert_false(s.slower_overlap);
  NEAR(s.fleet_throughput, 300 / 2.05);
  NEAR(s.allreduce_fraction, 0.05 / 2.05);
  assert_int_equal(s.crossover_accum, 1);
  assert_int_equal(s.amortise_accum, 1); /* 0.05 x 0.9 / (0.1 x 2) < 1 */
  assert_int_equal(s.accum, 1);
}

static void network_bound(void **state) {
  (void)state;
  cal_net_step_t s;
  assert_int_equal(cal_net_step(thr2, 2, 300, 4.0, 0.10, &s), 0);
  NEAR(s.step_s, 6.0);
  NEAR(s.step_overlap_s, 4.0); /* even fully hidden, 4 s > 3 s */
  assert_true(s.slower_than_fastest);
  assert_true(s.slower_overlap);
  /* k x 2 + 4 < k x 3 from k = 5 (k = 4 ties) */
  assert_int_equal(s.crossover_accum, 5);
  /* 4 / (k x 2 + 4) <= 0.1 from k = 18 */
  assert_int_equal(s.amortise_accum, 18);
  assert_int_equal(s.accum, 18);
  NEAR(s.accum_step_s, 40.0);
  NEAR(s.accum_throughput, 18 * 300 / 40.0);
}

static void crossover(void **state) {
  (void)state;
  cal_net_step_t s;
  /* all-reduce 1 s: the step ties the fastest alone (3 s): not slower */
  assert_int_equal(cal_net_step(thr2, 2, 300, 1.0, 0.10, &s), 0);
  NEAR(s.step_s, 3.0);
  assert_false(s.slower_than_fastest);
  assert_int_equal(s.crossover_accum, 2); /* 2 x 2 + 1 = 5 < 6 */
  /* a little more: slower without accumulation, overlap hides it */
  assert_int_equal(cal_net_step(thr2, 2, 300, 1.01, 0.10, &s), 0);
  assert_true(s.slower_than_fastest);
  assert_false(s.slower_overlap);
  assert_int_equal(s.crossover_accum, 2);
  /* one machine: the fleet never beats it */
  const double one[] = {100, NAN};
  assert_int_equal(cal_net_step(one, 2, 300, 0.5, 0.10, &s), 0);
  assert_true(s.slower_than_fastest);
  assert_int_equal(s.crossover_accum, 0);
  assert_int_equal(s.amortise_accum, 2); /* 0.5 x 0.9 / (0.1 x 3) = 1.5 */
}

static void bad_steps(void **state) {
  (void)state;
  cal_net_step_t s;
  const double none[] = {0, -1};
  assert_int_equal(cal_net_step(none, 2, 300, 1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 0, 1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 300, -1, 0.1, &s), CAL_EINVAL);
  assert_int_equal(cal_net_step(thr2, 2, 300, 1, 1.0, &s), CAL_EINVAL);
}

static void curve(void **state) {
  (void)state;
  const double b[] = {1024, 4096}, t[] = {1e-5, 4e-5};
  cal_net_curve_t c = {b, t, 2};
  double v;
  int ex;
  assert_int_equal(cal_net_allreduce_s(&c, 2048, &v, &ex), 0);
  NEAR(v, 2e-5); /* log-log: halfway */
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 512, &v, &ex), 0);
  NEAR(v, 1e-5); /* latency floor */
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 4096, &v, &ex), 0);
  NEAR(v, 4e-5);
  assert_false(ex);
  assert_int_equal(cal_net_allreduce_s(&c, 8192, &v, &ex), 0);
  NEAR(v, 8e-5); /* the largest size's bandwidth */
  assert_true(ex);
  const double bb[] = {4096, 1024};
  cal_net_curve_t bad = {bb, t, 2};
  assert_int_equal(cal_net_allreduce_s(&bad, 2048, &v, &ex), CAL_EINVAL);
  cal_net_curve_t empty = {b, t, 0};
  assert_int_equal(cal_net_allreduce_s(&empty, 2048, &v, &ex), CAL_EINVAL);
}

/* profile_a (776 examples/s at batch 32, prefill) edited in memory: its
 * batch_source.mode, and a train curve (100 examples/s at batch 16) when
 * with_train; read as a plan machine. */
static cal_profile_t *machine_a(const char *mode, int with_train,
                                cal_plan_machine_t *m) {
  cal_profile_t *p = NULL;
  char err[256];
  assert_int_equal(cal_profile_load(CAL_TEST_DATA "/profile_a.json", &p, err,
                                    sizeof err),
                   0);
  if (mode)
    json_object_set_new(p->root, "batch_source",
                        json_pack("{s:s}", "mode", mode));
  if (with_train)
    json_object_set_new(
        json_object_get(json_object_get(p->root, "batch_sweep"), "modes"),
        "train",
        json_pack("{s:i, s:[{s:i, s:s, s:f}]}", "optimal_batch_size", 16,
                  "points", "batch_size", 16, "status", "ok",
                  "examples_per_s", 100.0));
  /* the view is built when a profile is parsed: parse the edited tree */
  char *text = json_dumps(p->root, JSON_COMPACT);
  cal_profile_t *q = NULL;
  assert_non_null(text);
  assert_int_equal(cal_profile_parse(text, strlen(text), p->path, &q, err,
                                     sizeof err),
                   0);
  free(text);
  cal_profile_free(p);
  assert_int_equal(cal_plan_read_machine(q, m), 0);
  return q;
}

/* The plan of one machine with a fleet's all-reduce curve: its "network"
 * object (a new reference) and the rendered table in *text (free it). */
/* What one case of the network's share leaves behind. */
static void plan_free(json_t *n, char *text, cal_profile_t *p) {
  json_decref(n);
  free(text);
  cal_profile_free(p);
}

static json_t *plan_network(const cal_plan_machine_t *m, char **text) {
  static const double b[] = {1e3, 1e9}, t[] = {1e-5, 1.0};
  cal_plan_net_t net = {.curve = {b, t, 2}, .ranks = 2, .hosts = 2,
                        .source = "fleet.json"};
  cal_plan_opts_t o = {.dtype = CAL_DT_BF16, .training = CAL_TRAIN_FULL,
                       .params = 1e6, .net = &net};
  cal_mem_assume_default(o.training, &o.assume);
  char err[256];
  cal_plan_t *plan = NULL;
  if (cal_plan_compute(&o, m, 1, &plan, err, sizeof err) < 0)
    fail_msg("plan: %s", err);
  json_t *doc = cal_plan_json(plan);
  assert_non_null(doc);
  json_t *n = json_incref(json_object_get(doc, "network"));
  json_decref(doc);
  assert_true(json_is_object(n));
  size_t len = 0;
  FILE *f = open_memstream(text, &len);
  assert_non_null(f);
  cal_plan_render(f, plan, 0);
  fclose(f);
  cal_plan_free(plan);
  return n;
}

static const char *machine_str(const json_t *net, const char *k) {
  return json_string_value(
      json_object_get(json_array_get(json_object_get(net, "machines"), 0), k));
}

/* The step's compute time is a training step's only when the throughput
 * is: prefill's figure is inference, said in the JSON, the arithmetic and
 * the table; a train curve is used when the profile has one. */
/* The compute time of n is from `from`'s throughput, with no note. */
static void expect_plain_throughput(const json_t *n, const char *from,
                                    double compute_s) {
  assert_string_equal(machine_str(n, "throughput_from"), from);
  assert_true(json_is_null(json_object_get(n, "compute_note")));
  NEAR(json_number_value(json_object_get(n, "compute_s")), compute_s);
}

static void step_throughput_source(void **state) {
  (void)state;
  cal_plan_machine_t m;
  char *text = NULL;
  /* prefill (found from the point, the profile records no mode) */
  cal_profile_t *p = machine_a(NULL, 0, &m);
  json_t *n = plan_network(&m, &text);
  assert_string_equal(machine_str(n, "throughput_mode"), "prefill");
  assert_string_equal(machine_str(n, "throughput_from"), "inference");
  const char *note = json_string_value(json_object_get(n, "compute_note"));
  assert_non_null(note);
  assert_non_null(strstr(note, "inference throughput"));
  NEAR(json_number_value(json_object_get(n, "compute_s")), 32 / 776.0);
  const char *line = json_string_value(
      json_array_get(json_object_get(n, "arithmetic"), 2));
  assert_non_null(strstr(line, "machine_a 776 (prefill: inference)"));
  assert_non_null(strstr(text, "Note on the throughput: the compute time "
                               "uses inference throughput"));
  plan_free(n, text, p);

  /* the same with a train curve: its optimum, no note */
  p = machine_a("prefill", 1, &m);
  n = plan_network(&m, &text);
  expect_plain_throughput(n, "train_curve", 16 / 100.0);
  assert_null(strstr(text, "Note on the throughput"));
  plan_free(n, text, p);

  /* the top-level figure is the train mode's: used as it is */
  p = machine_a("train", 0, &m);
  n = plan_network(&m, &text);
  expect_plain_throughput(n, "train", 32 / 776.0);
  plan_free(n, text, p);
}

CAL_TEST_MAIN(
    cmocka_unit_test(compute_bound), cmocka_unit_test(network_bound),
    cmocka_unit_test(crossover), cmocka_unit_test(bad_steps),
    cmocka_unit_test(curve), cmocka_unit_test(step_throughput_source))
