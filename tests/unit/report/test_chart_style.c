/* The series of every chart told apart (issue 27): with one, two and three
 * profiles no two series of a chart share colour and marker or name; the
 * marker allocator on its own (a marker per mark and profile, clashes
 * moved); kernels and shapes placed side by side in one place over every
 * profile; figures no chart can draw left out and counted.
 * covers: calibrator/report/charts_style.c calibrator/report/charts.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "charts.h"
#include "charts_internal.h"
#include "gnuplot.h"
#include "test_util.h"
#include "view.h"

#define REFERENCE                                                            \
  CAL_TEST_DATA "/../../results/reference/kvm-epyc-zen4-2core.json"
#define XEON CAL_TEST_DATA "/kvm-xeon-2core-avx512.json"

/* ---- profiles ---- */

typedef struct profiles {
  json_t *root[3];
  cal_profile_view_t *view[3];
} profiles_t;

/* A third machine: another name, an fp32 batch sweep, its figures
 * scaled. */
static void third_machine(json_t *root) {
  json_object_set_new(root, "device_name", json_string("Zen 5 VM"));
  json_t *modes = json_object_get(json_object_get(root, "batch_sweep"),
                                  "modes");
  const char *k;
  json_t *mode, *pt;
  size_t i;
  json_object_foreach(modes, k, mode) {
    json_array_foreach(json_object_get(mode, "points"), i, pt)
      json_object_set_new(pt, "dtype", json_string("fp32"));
  }
  json_array_foreach(json_object_get(json_object_get(root, "gemm"), "points"),
                     i, pt) {
    json_t *g = json_object_get(pt, "gflops");
    if (json_is_number(g))
      json_object_set_new(pt, "gflops", json_real(json_number_value(g) * .8));
  }
}

static int setup(void **state) {
  profiles_t *p = calloc(1, sizeof *p);
  const char *paths[3] = {REFERENCE, XEON, REFERENCE};
  json_error_t e;
  for (int i = 0; p && i < 3; i++) {
    if (!(p->root[i] = json_load_file(paths[i], 0, &e)))
      return -1;
    if (i == 2)
      third_machine(p->root[i]);
    if (cal_profile_view_build(p->root[i], &p->view[i]) < 0)
      return -1;
  }
  *state = p;
  return p ? 0 : -1;
}

static int teardown(void **state) {
  profiles_t *p = *state;
  for (int i = 0; i < 3; i++) {
    cal_profile_view_free(p->view[i]);
    json_decref(p->root[i]);
  }
  free(p);
  return 0;
}

/* ---- every chart ---- */

/* No two series of the set share colour and marker, or profile and key. */
static void assert_told_apart(const char *chart, const cal_gp_set_t *set) {
  for (size_t i = 0; i < set->n; i++)
    for (size_t j = 0; j < i; j++) {
      const cal_gp_series_t *a = &set->s[i], *b = &set->s[j];
      if (a->lt == b->lt && a->pt == b->pt)
        fail_msg("%s: series %zu (%s) and %zu (%s) share colour %d and "
                 "marker %d", chart, j, b->key, i, a->key, a->lt, a->pt);
      if (a->profile == b->profile && strcmp(a->key, b->key) == 0)
        fail_msg("%s: two series named %s", chart, a->key);
    }
}

static void every_chart_told_apart(void **state) {
  profiles_t *p = *state;
  const char *labels[3] = {"zen4", "xeon", "zen5"};
  for (size_t n = 1; n <= 3; n++) {
    cal_chart_in_t in = {.views = (const cal_profile_view_t *const *)p->view,
                         .labels = labels, .n = n};
    for (size_t c = 0; c < cal_ncharts; c++) {
      cal_gp_set_t set = {0};
      size_t left = 99;
      assert_int_equal(cal_chart_collect(&cal_charts[c], &in, &set, &left),
                       0);
      assert_int_equal(left, 0); /* every figure can be drawn */
      if (set.n < n) /* each profile has every chart's section */
        fail_msg("%s of %zu profiles: %zu series", cal_charts[c].name, n,
                 set.n);
      assert_told_apart(cal_charts[c].name, &set);
      cal_gp_set_free(&set);
    }
  }
}

/* ---- the allocator ---- */

static void add(cal_gp_set_t *set, size_t profile, const char *key, int lt,
                const char *mark, int marker) {
  cal_gp_row_t r = {.x = 1, .lt = lt, .marker = marker};
  snprintf(r.mark, sizeof r.mark, "%s", mark);
  assert_int_equal(cal_gp_set_add(set, profile, key, &r), 0);
}

static void markers_per_mark_and_profile(void **state) {
  (void)state;
  cal_gp_set_t set = {0};
  add(&set, 0, "fp32 openblas", 2, "openblas", CAL_GP_FILLED);
  add(&set, 0, "fp32 onednn", 2, "onednn", CAL_GP_FILLED);
  add(&set, 0, "fp32 onednn, 1 thread", 2, "onednn", CAL_GP_OPEN);
  add(&set, 1, "fp32 openblas", 2, "openblas", CAL_GP_FILLED);
  /* two filled series of one engine (2 and 4 threads): a clash moved */
  add(&set, 1, "fp32 openblas, 4 threads", 2, "openblas", CAL_GP_FILLED);
  add(&set, 0, "bf16 onednn", 3, "onednn", CAL_GP_FILLED);
  cal_chart_style(&set);
  assert_int_equal(set.s[0].pt, 7);  /* filled circle */
  assert_int_equal(set.s[1].pt, 5);  /* filled square */
  assert_int_equal(set.s[2].pt, 4);  /* open square */
  assert_int_equal(set.s[3].pt, 9);  /* the second machine: a triangle */
  assert_int_equal(set.s[5].pt, 5);  /* another colour: its own square */
  assert_int_not_equal(set.s[4].pt, 9);
  assert_int_equal(set.s[0].dt, cal_chart_profile_dt(0));
  assert_int_equal(set.s[3].dt, cal_chart_profile_dt(1));
  assert_int_not_equal(cal_chart_profile_dt(0), cal_chart_profile_dt(1));
  assert_told_apart("allocator", &set);
  cal_gp_set_free(&set);
}

/* ---- names on the x axis ---- */

static void add_named(cal_gp_set_t *set, size_t profile, const char *key,
                      const char *text) {
  cal_gp_row_t r = {.x = 0};
  snprintf(r.text, sizeof r.text, "%s", text);
  assert_int_equal(cal_gp_set_add(set, profile, key, &r), 0);
}

static void places_shared_over_profiles(void **state) {
  (void)state;
  cal_gp_set_t set = {0};
  add_named(&set, 0, "1 thread", "fp32 fma");
  add_named(&set, 0, "1 thread", "bf16 dp");
  add_named(&set, 1, "1 thread", "int8 dp");
  add_named(&set, 1, "1 thread", "fp32 fma");
  assert_int_equal(cal_chart_slots(&set, 0.8, 5), 3);
  /* one name, one place: the second machine's fma beside the first's */
  assert_double_equal(set.s[0].rows[0].x, 0.8, 1e-12);
  assert_double_equal(set.s[1].rows[1].x, 1.2, 1e-12);
  assert_double_equal(set.s[0].rows[1].x, 1.8, 1e-12);
  assert_double_equal(set.s[1].rows[0].x, 3.2, 1e-12);
  assert_double_equal(set.s[0].rows[0].v[5], 0.36, 1e-12);
  cal_gp_set_free(&set);
}

/* ---- what cannot be drawn ---- */

static void undrawable_left_out(void **state) {
  profiles_t *p = *state;
  json_t *root = json_deep_copy(p->root[0]);
  json_t *modes = json_object_get(json_object_get(root, "batch_sweep"),
                                  "modes");
  json_t *pts = json_object_get(json_object_get(modes, "prefill"), "points");
  json_object_set_new(json_array_get(pts, 0), "examples_per_s",
                      json_real(0));
  json_object_set_new(json_array_get(pts, 1), "examples_per_s",
                      json_real(1e308));
  json_object_set_new(json_object_get(json_object_get(root, "roofline"),
                                      "bandwidth_gbps"),
                      "L3", json_real(5e-324));
  cal_profile_view_t *v = NULL;
  assert_int_equal(cal_profile_view_build(root, &v), 0);
  const cal_profile_view_t *views[1] = {v};
  const char *labels[1] = {"x"};
  cal_chart_in_t in = {.views = views, .labels = labels, .n = 1};
  for (size_t c = 0; c < cal_ncharts; c++) {
    cal_gp_set_t set = {0};
    size_t left = 0;
    assert_int_equal(cal_chart_collect(&cal_charts[c], &in, &set, &left), 0);
    if (cal_charts[c].left_out)
      left += cal_charts[c].left_out(&in);
    if (strcmp(cal_charts[c].name, "batch_sweep") == 0)
      assert_int_equal(left, 2);
    else if (strcmp(cal_charts[c].name, "roofline") == 0)
      assert_int_equal(left, 1);
    else
      assert_int_equal(left, 0);
    cal_gp_set_free(&set);
  }
  cal_profile_view_free(v);
  json_decref(root);
}

CAL_TEST_MAIN(
    cmocka_unit_test(markers_per_mark_and_profile),
    cmocka_unit_test(places_shared_over_profiles),
    cmocka_unit_test_setup_teardown(every_chart_told_apart, setup, teardown),
    cmocka_unit_test_setup_teardown(undrawable_left_out, setup, teardown))
