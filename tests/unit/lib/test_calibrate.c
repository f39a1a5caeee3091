/* libcalibrate's public API, through the shared library, against the code
 * the commands run (linked here from cal_core): a good profile's figures,
 * a bad profile's status and message, curve analysis equal to
 * cal_curve_analyze (`calibrate peak`), a split equal to cal_plan_split_ci
 * (`calibrate plan`), and the version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <calibrate/calibrate.h>

#include "cal_err.h"
#include "curve.h"
#include "plan_math.h"
#include "profile.h"
#include "test_util.h"

#define REF CAL_TEST_DATA "/kvm-xeon-2core-avx512.json"
#define PROF_A CAL_TEST_DATA_DIR "/profile_a.json"

static void test_version(void **state) {
  (void)state;
  char want[32];
  assert_int_equal(cal_version_number(), CALIBRATE_VERSION_NUMBER);
  snprintf(want, sizeof want, "%d.%d.%d", CALIBRATE_VERSION_MAJOR,
           CALIBRATE_VERSION_MINOR, CALIBRATE_VERSION_PATCH);
  assert_string_equal(cal_version_string(), want);
}

static void test_good_profile(void **state) {
  (void)state;
  cal_machine_t *m = NULL;
  char err[256] = "untouched";
  assert_int_equal(cal_machine_load(REF, &m, err, sizeof err), CAL_SUCCESS);
  assert_non_null(m);
  assert_string_equal(cal_machine_path(m), REF);
  assert_string_equal(cal_machine_name(m), "Intel(R) Xeon(R) Processor");

  /* the same figures the internal loader sees */
  cal_profile_t *p = NULL;
  char why[256];
  assert_int_equal(cal_profile_load(REF, &p, why, sizeof why), 0);
  double all, one;
  assert_int_equal(cal_machine_gflops(m, NULL, &all, &one), CAL_SUCCESS);
  assert_true(all == cal_json_num(p->root, "gflops", NAN));
  assert_true(one == cal_json_num(p->root, "gflops_per_core", NAN));
  assert_int_equal(cal_machine_gflops(m, "fp64", &all, &one), CAL_SUCCESS);
  const json_t *fp64 = json_object_get(
      json_object_get(json_object_get(p->root, "gemm"), "dtypes"), "fp64");
  assert_true(all == cal_json_num(fp64, "best_gflops_all_threads", NAN));
  assert_true(one == cal_json_num(fp64, "best_gflops_1_thread", NAN));
  /* bf16 is recorded as unsupported there: no figure, never a zero */
  assert_int_equal(cal_machine_gflops(m, "bf16", &all, &one),
                   CAL_FAIL_NOTFOUND);
  assert_true(isnan(all) && isnan(one));
  assert_int_equal(cal_machine_gflops(m, "fp8", NULL, NULL),
                   CAL_FAIL_NOTFOUND);

  int64_t batch;
  double thr, mem;
  assert_int_equal(cal_machine_throughput(m, &batch, &thr), CAL_SUCCESS);
  assert_int_equal(batch, 32);
  assert_true(thr == cal_json_num(p->root, "throughput", NAN));
  assert_int_equal(cal_machine_memory(m, &mem), CAL_SUCCESS);
  assert_true(mem == cal_json_num(json_object_get(json_object_get(
                                      p->root, "machine"), "memory"),
                                  "available_bytes", NAN));

  /* the curve agrees with what the sweep recorded */
  cal_batchcurve_t *c = NULL;
  const json_t *pre = json_object_get(
      json_object_get(json_object_get(p->root, "batch_sweep"), "modes"),
      "prefill");
  assert_int_equal(cal_machine_curve(m, NULL, &c), CAL_SUCCESS);
  int64_t pb;
  double peak;
  assert_int_equal(cal_batchcurve_peak(c, &pb, &peak), CAL_SUCCESS);
  assert_int_equal(pb, (int64_t)cal_json_num(pre, "peak_batch_size", 0));
  assert_true(fabs(peak - cal_json_num(pre, "peak_examples_per_s", 0)) <=
              1e-9 * peak);
  assert_int_equal(cal_batchcurve_knee(c),
                   (int64_t)cal_json_num(pre, "knee_batch_size", 0));
  assert_int_equal(cal_batchcurve_optimal(c), batch);
  assert_string_equal(cal_batchcurve_shape(c), cal_json_str(pre, "shape"));
  assert_int_equal(cal_batchcurve_size(c),
                   json_array_size(json_object_get(pre, "points")));
  assert_int_equal(cal_batchcurve_point(c, cal_batchcurve_size(c), NULL, NULL,
                                        NULL, NULL),
                   CAL_FAIL_INVAL);
  cal_batchcurve_free(c);
  c = NULL;
  assert_int_equal(cal_machine_curve(m, "decode", &c), CAL_SUCCESS);
  cal_batchcurve_free(c);
  c = (cal_batchcurve_t *)1;
  assert_int_equal(cal_machine_curve(m, "training", &c), CAL_FAIL_NOTFOUND);
  assert_null(c);

  cal_profile_free(p);
  cal_machine_free(m);
  cal_machine_free(NULL);
  cal_batchcurve_free(NULL);
  cal_worksplit_free(NULL);
}

/* A profile without per-dtype GEMM figures. */
static void test_missing_figures(void **state) {
  (void)state;
  cal_machine_t *m = NULL;
  assert_int_equal(cal_machine_load(PROF_A, &m, NULL, 0), CAL_SUCCESS);
  assert_string_equal(cal_machine_name(m), "machine_a");
  double all = 0;
  assert_int_equal(cal_machine_gflops(m, "fp32", &all, NULL),
                   CAL_FAIL_NOTFOUND);
  assert_true(isnan(all));
  assert_int_equal(cal_machine_gflops(m, NULL, &all, NULL), CAL_SUCCESS);
  assert_true(all == 150.0);
  cal_machine_free(m);
}

/* One bad profile through the API and through the loader: the same status
 * and the same line. */
static void expect_bad(const char *text, int want) {
  char err[512] = "", why[512] = "";
  cal_machine_t *m = (cal_machine_t *)1;
  cal_profile_t *p = NULL;
  int rc = cal_machine_parse(text, strlen(text), "bad.json", &m, err,
                             sizeof err);
  assert_int_equal(rc, want);
  assert_null(m);
  assert_int_equal(cal_profile_parse(text, strlen(text), "bad.json", &p, why,
                                     sizeof why),
                   want);
  assert_string_equal(err, why);
  assert_non_null(strstr(err, "bad.json"));
  assert_null(strchr(err, '\n'));
  assert_true(strlen(cal_status_message(rc)) > 0);
}

static void test_bad_profile(void **state) {
  (void)state;
  expect_bad("{\"schema\": \"calibrate-profile/1\", \"gflops\": \"fast\"}",
             CAL_FAIL_SCHEMA);
  expect_bad("{\"schema\": \"something-else/1\"}", CAL_FAIL_SCHEMA);
  expect_bad("{\"schema\": \"calibrate-prof", CAL_FAIL_PARSE);

  char err[512];
  cal_machine_t *m = (cal_machine_t *)1;
  assert_int_equal(cal_machine_load(CAL_TEST_DATA_DIR "/absent.json", &m, err,
                                    sizeof err),
                   CAL_FAIL_IO);
  assert_null(m);
  assert_non_null(strstr(err, "absent.json"));
  /* a directory is not a profile, and a short buffer stays terminated */
  char tiny[8];
  assert_int_equal(cal_machine_load(CAL_TEST_DATA_DIR, &m, tiny, sizeof tiny),
                   CAL_FAIL_IO);
  assert_int_equal(strlen(tiny), sizeof tiny - 1);
  assert_int_equal(cal_machine_load(NULL, &m, NULL, 0), CAL_FAIL_INVAL);
  assert_int_equal(cal_machine_load(REF, NULL, NULL, 0), CAL_FAIL_INVAL);
  assert_string_equal(cal_status_message(CAL_SUCCESS), "success");
  assert_string_equal(cal_status_message(CAL_FAIL_SCHEMA),
                      cal_strerror(CAL_ESCHEMA));
}

/* Rows with repeats and a rising-then-falling curve, against the analysis
 * of the same points by cal_curve_analyze. */
static void test_curve_equals_peak(void **state) {
  (void)state;
  static const int64_t b[] = {8, 1, 2, 4, 8, 16, 1, 2, 4, 16, 32, 32, 8};
  static const double t[] = {430, 100, 190, 300, 450, 445, 104, 200, 310,
                             440, 380, 385, 445};
  size_t n = sizeof b / sizeof *b;
  for (int pick = CAL_PICK_PEAK; pick <= CAL_PICK_KNEE; pick++) {
    cal_batchcurve_t *c = NULL;
    assert_int_equal(cal_batchcurve_analyze(b, t, n, 5, pick, &c),
                     CAL_SUCCESS);
    /* the same points, by hand */
    static const double s1[] = {100, 104}, s2[] = {190, 200},
                        s4[] = {300, 310}, s8[] = {430, 450, 445},
                        s16[] = {445, 440}, s32[] = {380, 385};
    cal_curve_point_t pts[] = {
        {1, CAL_POINT_OK, s1, 2},   {2, CAL_POINT_OK, s2, 2},
        {4, CAL_POINT_OK, s4, 2},   {8, CAL_POINT_OK, s8, 3},
        {16, CAL_POINT_OK, s16, 2}, {32, CAL_POINT_OK, s32, 2}};
    cal_curve_opts_t o;
    cal_curve_opts_default(&o);
    o.tolerance = 0.05;
    o.policy = pick == CAL_PICK_KNEE ? CAL_OPTIMIZE_KNEE
                                     : CAL_OPTIMIZE_THROUGHPUT;
    cal_curve_result_t *r = NULL;
    assert_int_equal(cal_curve_analyze(pts, 6, &o, &r), 0);
    int64_t pb;
    double peak;
    assert_int_equal(cal_batchcurve_peak(c, &pb, &peak), CAL_SUCCESS);
    assert_int_equal(pb, r->peak_batch_size);
    assert_true(peak == r->peak_median);
    assert_int_equal(cal_batchcurve_knee(c), r->knee_batch_size);
    assert_int_equal(cal_batchcurve_optimal(c), r->optimal_batch_size);
    assert_string_equal(cal_batchcurve_shape(c),
                        cal_curve_shape_name(r->shape));
    assert_int_equal(cal_batchcurve_size(c), r->n);
    for (size_t i = 0; i < r->n; i++) {
      int64_t bi;
      double med, lo, hi;
      assert_int_equal(cal_batchcurve_point(c, i, &bi, &med, &lo, &hi),
                       CAL_SUCCESS);
      assert_int_equal(bi, r->points[i].batch_size);
      assert_true(med == r->points[i].stats.median);
      assert_true(lo == r->points[i].stats.ci_low);
      assert_true(hi == r->points[i].stats.ci_high);
    }
    cal_curve_result_free(r);
    cal_batchcurve_free(c);
  }

  /* bad curves */
  cal_batchcurve_t *c = (cal_batchcurve_t *)1;
  static const int64_t zero[] = {0};
  static const double neg[] = {-1}, one[] = {1};
  assert_int_equal(cal_batchcurve_analyze(b, t, 0, 3, CAL_PICK_PEAK, &c),
                   CAL_FAIL_INVAL);
  assert_null(c);
  assert_int_equal(cal_batchcurve_analyze(zero, one, 1, 3, CAL_PICK_PEAK, &c),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_batchcurve_analyze(b, neg, 1, 3, CAL_PICK_PEAK, &c),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_batchcurve_analyze(b, t, n, 100, CAL_PICK_PEAK, &c),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_batchcurve_analyze(b, t, n, 3, 7, &c), CAL_FAIL_INVAL);
  assert_null(c);
}

static void test_split_equals_plan(void **state) {
  (void)state;
  const double thr[] = {56.6304175, 776, 278, 0, NAN, 300};
  const double lo[] = {51.9, 760.48, 272.44, NAN, NAN, NAN};
  const double hi[] = {60.7, 783.76, 280.78, NAN, NAN, NAN};
  const size_t n = 6;
  const uint64_t counts[] = {0, 1, 12345, (uint64_t)1 << 40};
  for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
    for (int with_ci = 0; with_ci < 2; with_ci++) {
      cal_worksplit_t *s = NULL;
      cal_split_entry_t ent[6];
      cal_split_t sp;
      assert_int_equal(cal_worksplit_compute(thr, with_ci ? lo : NULL,
                                             with_ci ? hi : NULL, n,
                                             counts[k], &s),
                       CAL_SUCCESS);
      assert_int_equal(cal_plan_split_ci(thr, with_ci ? lo : NULL,
                                         with_ci ? hi : NULL, n, counts[k],
                                         ent, &sp),
                       0);
      assert_true(cal_worksplit_makespan_s(s) == sp.makespan_s);
      assert_true(cal_worksplit_even_makespan_s(s) == sp.even_makespan_s);
      assert_true(cal_worksplit_speedup(s) == sp.speedup);
      assert_int_equal(cal_worksplit_heterogeneous(s), sp.heterogeneous);
      uint64_t sum = 0;
      for (size_t i = 0; i < n; i++) {
        int in, strag;
        double share, fin;
        uint64_t cnt;
        assert_int_equal(
            cal_worksplit_machine(s, i, &in, &share, &cnt, &fin, &strag),
            CAL_SUCCESS);
        assert_int_equal(in, ent[i].usable);
        assert_true(share == ent[i].share);
        assert_int_equal(cnt, ent[i].count);
        assert_true(fin == ent[i].finish_s || (isnan(fin) &&
                                               isnan(ent[i].finish_s)));
        assert_int_equal(strag, ent[i].straggler);
        sum += cnt;
      }
      assert_int_equal(sum, counts[k]);
      assert_int_equal(cal_worksplit_machine(s, n, NULL, NULL, NULL, NULL,
                                             NULL),
                       CAL_FAIL_INVAL);
      cal_worksplit_free(s);
    }
  }
  /* nobody to split over, nothing to split, too much to split */
  const double none[] = {0, NAN};
  cal_worksplit_t *s = (cal_worksplit_t *)1;
  assert_int_equal(cal_worksplit_compute(none, NULL, NULL, 2, 10, &s),
                   CAL_FAIL_INVAL);
  assert_null(s);
  assert_int_equal(cal_worksplit_compute(thr, NULL, NULL, 0, 10, &s),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_worksplit_compute(thr, NULL, NULL, 1,
                                         ((uint64_t)1 << 53) + 1, &s),
                   CAL_FAIL_INVAL);
}

/* The prefill points of a loaded profile's tree, to edit. */
static json_t *prefill_points(cal_profile_t *p) {
  return json_object_get(
      json_object_get(
          json_object_get(json_object_get(p->root, "batch_sweep"), "modes"),
          "prefill"),
      "points");
}

/* The machine of an edited profile's tree, parsed as the file `name`. */
static cal_machine_t *machine_of(const cal_profile_t *p, const char *name) {
  char err[256], *text = json_dumps(p->root, JSON_COMPACT);
  assert_non_null(text);
  cal_machine_t *m = NULL;
  assert_int_equal(cal_machine_parse(text, strlen(text), name, &m, err,
                                     sizeof err),
                   CAL_SUCCESS);
  free(text);
  return m;
}

/* A batch point of many samples (a hand-made or merged profile): loaded
 * and analysed in n log n.  Not a timed test: the quadratic paths it
 * guards took minutes, past the test's time limit. */
static void test_many_samples(void **state) {
  (void)state;
  enum { N = 300001 };
  cal_profile_t *p = NULL;
  char why[256];
  assert_int_equal(cal_profile_load(PROF_A, &p, why, sizeof why), 0);
  json_t *pts = prefill_points(p);
  json_t *pt = json_array_get(pts, 0), *samples = json_array();
  assert_non_null(pt);
  for (size_t i = 0; i < N; i++) /* 100 one more time than 101 */
    json_array_append_new(samples, json_real(100.0 + (double)(i % 2)));
  json_object_set_new(pt, "samples_examples_per_s", samples);
  json_object_set_new(pt, "examples_per_s", json_real(100.0));
  json_object_set_new(pt, "stats", json_pack("{s:I, s:f, s:f, s:f, s:f}", "n",
                                             (json_int_t)N, "median", 100.0,
                                             "mean", 100.5, "min", 100.0,
                                             "max", 101.0));
  json_object_del(pt, "samples_ms");
  cal_machine_t *m = machine_of(p, "many.json");
  cal_batchcurve_t *c = NULL;
  assert_int_equal(cal_machine_curve(m, "prefill", &c), CAL_SUCCESS);
  int64_t b;
  double med, lo, hi;
  assert_int_equal(cal_batchcurve_point(c, 0, &b, &med, &lo, &hi),
                   CAL_SUCCESS);
  assert_true(med == 100.0);
  assert_true(lo == 100.0 && hi <= 101.0);
  cal_batchcurve_free(c);
  cal_machine_free(m);
  cal_profile_free(p);
}

/* The library's memory figure is plan's: the same function, 18 bytes a
 * trained bf16 parameter, activations only where given. */
static void test_memory_need(void **state) {
  (void)state;
  cal_memory_need_t n;
  assert_int_equal(cal_memory_need(1e9, "bf16", "full", 4, 1e8, 0, &n),
                   CAL_SUCCESS);
  assert_true(n.weights_bytes == 2e9 && n.master_bytes == 4e9);
  assert_true(n.gradients_bytes == 4e9 && n.optimizer_bytes == 8e9);
  assert_true(n.activations_bytes == 4e8 && n.total_bytes == 18.4e9);
  assert_int_equal(cal_memory_need(1e9, "fp32", "inference", 1, 0, 0, &n),
                   CAL_SUCCESS);
  assert_true(n.total_bytes == 4e9);
  assert_int_equal(cal_memory_need(1e9, "bf16", "lora", 1, 0, 1e6, &n),
                   CAL_SUCCESS);
  assert_true(n.weights_bytes == 2e9 + 4e6 && n.total_bytes == 2e9 + 16e6);
  cal_dtype_t d;
  cal_training_t t;
  assert_int_equal(cal_dtype_parse("bf16", &d), 0);
  assert_int_equal(cal_training_parse("full", &t), 0);
  cal_mem_assume_t a;
  cal_mem_need_t m;
  cal_mem_assume_default(t, &a);
  a.activation_bytes_per_example = 1e8;
  assert_int_equal(cal_plan_memory(1e9, d, t, 4, &a, &m), 0);
  assert_true(m.total_bytes == 18.4e9);
  assert_int_equal(cal_memory_need(1e9, "fp8", "full", 1, 0, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(1e9, "bf16", "train", 1, 0, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(NAN, "bf16", "full", 1, 0, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(1e9, "bf16", "full", 0, 0, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(1e9, "bf16", "full", 1, -1, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(1e9, NULL, "full", 1, 0, 0, &n),
                   CAL_FAIL_INVAL);
  assert_int_equal(cal_memory_need(1e9, "bf16", "full", 1, 0, 0, NULL),
                   CAL_FAIL_INVAL);
}

/* The library's curve leaves out what the sweep's own curve leaves out:
 * a point that swapped and one whose threads did not run side by side
 * (profile_a's prefill peaks at 32, then 64). */
static void test_curve_skips_what_the_sweep_skips(void **state) {
  (void)state;
  cal_profile_t *p = NULL;
  char why[256];
  assert_int_equal(cal_profile_load(PROF_A, &p, why, sizeof why), 0);
  json_t *pts = prefill_points(p);
  json_object_set_new(json_array_get(pts, 3), "swapped", json_true());
  json_object_set_new(json_array_get(pts, 4), "threads_not_parallel",
                      json_string("one core's arithmetic between them"));
  cal_machine_t *m = machine_of(p, "odd.json");
  cal_batchcurve_t *c = NULL;
  assert_int_equal(cal_machine_curve(m, "prefill", &c), CAL_SUCCESS);
  int64_t b;
  double peak;
  assert_int_equal(cal_batchcurve_peak(c, &b, &peak), CAL_SUCCESS);
  assert_int_equal(b, 16);
  assert_true(peak == 620.0);
  assert_true(cal_curve_point_usable(1, 0, 0));
  assert_false(cal_curve_point_usable(1, 1, 0));
  assert_false(cal_curve_point_usable(1, 0, 1));
  assert_false(cal_curve_point_usable(0, 0, 0));
  cal_batchcurve_free(c);
  cal_machine_free(m);
  cal_profile_free(p);
}

CAL_TEST_MAIN(
    cmocka_unit_test(test_version), cmocka_unit_test(test_memory_need),
    cmocka_unit_test(test_curve_skips_what_the_sweep_skips), cmocka_unit_test(test_good_profile),
    cmocka_unit_test(test_missing_figures), cmocka_unit_test(test_bad_profile),
    cmocka_unit_test(test_curve_equals_peak),
    cmocka_unit_test(test_split_equals_plan),
    cmocka_unit_test(test_many_samples))
