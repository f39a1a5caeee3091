/* A plan for another model than the one a profile measured
 * (analysis/plan_scale.c, the model read in plan_input.c): scaled by
 * FLOPs per token where the profile records its model, a one-layer
 * figure said so or refused, curves taken as the plan's model's.
 * covers: calibrator/analysis/plan_scale.c */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cal_err.h"
#include "plan.h"
#include "plan_input.h"
#include "plan_json.h"
#include "test_util.h"

#define PROFILE_A CAL_TEST_DATA "/profile_a.json"
#define REF CAL_TEST_SOURCE_DIR "/tests/data/kvm-xeon-2core-avx512.json"

/* qwen2-0.5b: one layer's matrices (q, k, v, o, gate, up, down) and the
 * model's 24 layers plus its LM head. */
#define QWEN_LAYER (2.0 * 896 * 896 + 2.0 * 896 * 128 + 3.0 * 896 * 4864)
#define QWEN_MODEL (24 * QWEN_LAYER + 151936.0 * 896)

/* profile_a with `edit` applied to its tree, read as a plan machine. */
static void read_edited(cal_plan_inputs_t *in, void (*edit)(json_t *)) {
  json_error_t je;
  json_t *root = json_load_file(PROFILE_A, 0, &je);
  assert_non_null(root);
  edit(root);
  char path[] = "/tmp/test_plan_scale_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(json_dumpfd(root, fd, 0), 0);
  close(fd);
  json_decref(root);
  char err[512];
  memset(in, 0, sizeof *in);
  int rc = cal_plan_inputs_add(in, path, err, sizeof err);
  unlink(path);
  if (rc < 0)
    fail_msg("%s", err);
}

static json_t *qwen_shape(void) {
  return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i}", "preset",
                   "qwen2-0.5b", "hidden", 896, "heads", 14, "kv_heads", 2,
                   "head_dim", 64, "ffn", 4864, "seq", 128);
}

/* A profile whose headline is the model's step (prefill of all layers
 * and the head), as the mode records it. */
static void model_headline(json_t *root) {
  json_t *bs = json_object_get(root, "batch_sweep");
  json_object_set_new(bs, "model", qwen_shape());
  json_t *pre = json_object_get(json_object_get(bs, "modes"), "prefill");
  json_object_set_new(pre, "layers", json_integer(24));
  json_object_set_new(pre, "vocab", json_integer(151936));
  json_object_set_new(root, "batch_source",
                      json_pack("{s:s, s:s, s:s}", "mode", "prefill", "preset",
                                "qwen2-0.5b", "workload",
                                "the model's forward pass"));
}

/* A one-layer headline whose profile lost the layer's shape. */
static void layer_without_shape(json_t *root) {
  json_object_set_new(root, "batch_source",
                      json_pack("{s:s, s:s}", "mode", "prefill", "workload",
                                "one decoder layer, forward pass"));
}

static cal_plan_opts_t model_of(double params) {
  cal_plan_opts_t o = {.params = params, .training = CAL_TRAIN_FULL,
                       .dtype = CAL_DT_BF16};
  cal_mem_assume_default(o.training, &o.assume);
  return o;
}

static void scaled_from_the_model(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_edited(&in, model_headline);
  cal_plan_machine_t *m = &in.ms[0];
  assert_false(m->one_layer);
  assert_double_equal(m->flops_params, QWEN_MODEL, 1);
  cal_plan_opts_t o = model_of(7e9);
  char err[512];
  assert_int_equal(cal_plan_scale(&o, in.ms, in.n, err, sizeof err), 0);
  assert_double_equal(m->flops_ratio, QWEN_MODEL / 7e9, 1e-12);
  assert_double_equal(m->measured_throughput, 776.0, 1e-9);
  assert_double_equal(m->throughput, 776.0 * QWEN_MODEL / 7e9, 1e-9);
  assert_true(m->ci_low < m->throughput && m->ci_high > m->throughput);
  assert_non_null(strstr(m->basis, "scaled by FLOPs per token"));
  /* the plan's JSON says where it came from */
  cal_plan_t *p = NULL;
  assert_int_equal(cal_plan_compute(&o, in.ms, in.n, &p, err, sizeof err), 0);
  json_t *doc = cal_plan_json(p);
  json_t *sf = json_object_get(
      json_array_get(json_object_get(doc, "machines"), 0), "scaled_from");
  assert_string_equal(json_string_value(json_object_get(sf, "preset")),
                      "qwen2-0.5b");
  assert_double_equal(
      json_real_value(json_object_get(sf, "flops_per_token_ratio")),
      QWEN_MODEL / 7e9, 1e-12);
  json_decref(doc);
  cal_plan_free(p);
  cal_plan_inputs_free(&in);
}

/* The reference profile's headline is one layer's prefill: scaled from
 * that layer, and said so; without a model, said so and not scaled. */
static void one_layer_said(void **state) {
  (void)state;
  cal_plan_inputs_t in = {0};
  char err[512];
  assert_int_equal(cal_plan_inputs_add(&in, REF, err, sizeof err), 0);
  cal_plan_machine_t *m = &in.ms[0];
  double thr = m->throughput;
  assert_true(m->one_layer);
  assert_double_equal(m->flops_params, QWEN_LAYER, 1);
  cal_plan_opts_t none = {0};
  assert_int_equal(cal_plan_scale(&none, in.ms, in.n, err, sizeof err), 0);
  assert_double_equal(m->throughput, thr, 0);
  assert_true(isnan(m->flops_ratio));
  assert_non_null(strstr(m->basis, "one decoder layer"));
  cal_plan_opts_t o = model_of(5e8);
  assert_int_equal(cal_plan_scale(&o, in.ms, in.n, err, sizeof err), 0);
  assert_double_equal(m->throughput, thr * QWEN_LAYER / 5e8, 1e-9);
  assert_non_null(strstr(m->basis, "one decoder layer"));
  cal_plan_inputs_free(&in);
}

/* A one-layer figure that cannot be scaled is refused in one line. */
static void one_layer_refused(void **state) {
  (void)state;
  cal_plan_inputs_t in;
  read_edited(&in, layer_without_shape);
  assert_true(in.ms[0].one_layer);
  cal_plan_opts_t o = model_of(7e9);
  char err[512];
  assert_int_equal(cal_plan_scale(&o, in.ms, in.n, err, sizeof err),
                   CAL_EINVAL);
  assert_non_null(strstr(err, "one decoder layer"));
  assert_null(strchr(err, '\n'));
  cal_plan_inputs_free(&in);
}

/* A curve (and a profile without its model) is taken as the plan's
 * model's, and the basis says so. */
static void curve_taken_as_given(void **state) {
  (void)state;
  cal_plan_machine_t ms[2];
  memset(ms, 0, sizeof ms);
  ms[0].source = CAL_PLAN_SRC_CSV;
  ms[1].source = CAL_PLAN_SRC_PROFILE;
  for (int i = 0; i < 2; i++) {
    ms[i].throughput = 10.0;
    ms[i].flops_ratio = NAN;
  }
  cal_plan_opts_t o = model_of(7e9);
  char err[512];
  assert_int_equal(cal_plan_scale(&o, ms, 2, err, sizeof err), 0);
  for (int i = 0; i < 2; i++) {
    assert_double_equal(ms[i].throughput, 10.0, 0);
    assert_true(isnan(ms[i].flops_ratio));
    assert_non_null(strstr(ms[i].basis, "taken as the plan's model's"));
  }
}

CAL_TEST_MAIN(cmocka_unit_test(scaled_from_the_model),
              cmocka_unit_test(one_layer_said),
              cmocka_unit_test(one_layer_refused),
              cmocka_unit_test(curve_taken_as_given))
