/* The section descriptor table (results/sections.c): every row complete,
 * its charts the ones report/charts.c draws from its profile object, and
 * the results its rows leave freed.
 * covers: calibrator/results/sections.c
 * covers: calibrator/results/section_readers.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "results.h"
#include "run_result.h"
#include "section_view.h"
#include "test_util.h"

static void rows_complete(void **state) {
  (void)state;
  unsigned bits = 0;
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    const cal_section_t *s = &cal_sections[i];
    if (!s->key || !s->measure || !s->drop || !s->write || !s->print ||
        !s->read || !s->charts)
      fail_msg("section row %d (%s) has an empty slot", i,
               s->key ? s->key : "no key");
    /* the loader walks the same readers, in the same order */
    assert_string_equal(cal_section_readers[i].key, s->key);
    assert_ptr_equal(cal_section_readers[i].read, s->read);
    assert_true(s->budget_full_s >= s->budget_quick_s);
    for (int j = 0; j < i; j++)
      assert_string_not_equal(s->key, cal_sections[j].key);
    bits |= 1u << i;
  }
  assert_int_equal(bits, CAL_SEC_ALL);
  assert_int_equal(cal_nsection_readers, CAL_NSECTIONS);
  assert_int_equal(CAL_SEC_BATCH, 1u << CAL_SEC_ID_BATCH);
}

/* Whether `name` is one of the comma-separated names of list. */
static int listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, name, n) == 0)
      return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* A row's charts exist and read its object; a chart of a section's object
 * is named by that section's row. */
static void charts_named_by_their_section(void **state) {
  (void)state;
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    const char *p = cal_sections[i].charts;
    while (*p) {
      size_t len = strcspn(p, ",");
      int found = 0;
      for (int c = 0; c < (int)cal_ncharts; c++)
        if (strlen(cal_charts[c].name) == len &&
            strncmp(cal_charts[c].name, p, len) == 0) {
          assert_string_equal(cal_charts[c].section, cal_sections[i].key);
          found = 1;
        }
      assert_true(found);
      p += len + (p[len] == ',');
    }
  }
  for (int c = 0; c < (int)cal_ncharts; c++)
    for (int i = 0; i < CAL_NSECTIONS; i++)
      if (strcmp(cal_charts[c].section, cal_sections[i].key) == 0)
        assert_true(listed(cal_sections[i].charts, cal_charts[c].name));
}

static void results_freed(void **state) {
  (void)state;
  cal_results_t res;
  memset(&res, 0, sizeof res);
  cal_results_free(&res); /* a zeroed struct */
  cal_points_result_t *p = cal_points_new("title", 3);
  assert_non_null(p);
  assert_int_equal(p->n, 3);
  res.sec[CAL_SEC_ID_PEAK] = p;
  assert_ptr_equal(cal_results_get(&res, CAL_SEC_ID_PEAK), p);
  assert_null(cal_results_get(&res, CAL_NSECTIONS));
  assert_null(cal_results_get(&res, -1));
  res.sec[CAL_SEC_ID_PEAK] = NULL;
  cal_points_drop(p);
  cal_points_drop(NULL);
  /* notes are owned strings, freed with the results */
  res.quality.warnings = calloc(1, sizeof *res.quality.warnings);
  assert_non_null(res.quality.warnings);
  res.quality.warnings[0] = strdup("w");
  res.quality.nwarnings = 1;
  cal_results_free(&res);
  assert_null(res.quality.warnings);
  assert_int_equal(res.quality.nwarnings, 0);
}

/* A view holds a section's part only when its reader is given: the
 * builder reads sections through the rows' readers and nothing else. */
static void readers_fill_their_part(void **state) {
  (void)state;
  json_t *root = json_pack("{s:{s:i, s:[]}, s:{s:s, s:[]}}", "scaling", "n",
                           64, "points", "gemm", "operation", "C=AB",
                           "points");
  assert_non_null(root);
  cal_profile_view_t *v = NULL;
  const cal_section_reader_t *scaling = NULL;
  for (size_t i = 0; i < cal_nsection_readers; i++)
    if (strcmp(cal_section_readers[i].key, "scaling") == 0)
      scaling = &cal_section_readers[i];
  assert_non_null(scaling);
  assert_int_equal(cal_profile_view_build_with(root, scaling, 1, &v), 0);
  assert_true(v->scaling.has);
  assert_int_equal(v->scaling.n.i, 64);
  assert_false(v->gemm.has);
  assert_null(v->gemm.operation);
  cal_profile_view_free(v);
  assert_int_equal(cal_profile_view_build(root, &v), 0);
  assert_true(v->scaling.has && v->gemm.has);
  assert_string_equal(v->gemm.operation, "C=AB");
  cal_profile_view_free(v);
  json_decref(root);
}

CAL_TEST_MAIN(
    cmocka_unit_test(rows_complete),
    cmocka_unit_test(charts_named_by_their_section),
    cmocka_unit_test(results_freed),
    cmocka_unit_test(readers_fill_their_part))
