/* The profile loader: a written profile reads back equal, and truncated,
 * mistyped or incomplete ones are refused with a message naming the fault.
 * covers: calibrator/profile/point_json.c calibrator/report/table.c
 * covers: calibrator/results/sections.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_err.h"
#include "profile.h"
#include "results.h"
#include "run.h"
#include "test_util.h"

static const char *minimal_profile =
    "{\"schema\":\"calibrate-profile/1\",\"device_name\":\"x\",\"device\":"
    "\"cpu\",\"gflops\":100.5,\"gflops_per_core\":50,\"optimal_batch_size\":"
    "null,\"throughput\":null,\"memory_gb\":24,\"latency_ms\":null,"
    "\"created\":\"2026-01-01T00:00:00Z\",\"tool\":{},\"machine\":{},"
    "\"settings\":{},\"quality\":{},\"gemm\":{\"points\":[{\"id\":\"a\","
    "\"status\":\"ok\",\"metric\":\"gflops\",\"gflops\":2,\"samples_gflops\":"
    "[1,2,3],\"higher_is_better\":true,\"stats\":{}},{\"id\":\"b\","
    "\"status\":\"skipped\",\"reason\":"
    "\"r\"}]}}";

static int count_points(const char *section, json_t *pt, void *arg) {
  (*(int *)arg)++;
  return 0;
}

static void profile_round_trip_and_rejects(void **state) {
  (void)state;
  char err[512];
  json_error_t jerr;
  json_t *root = json_loads(minimal_profile, 0, &jerr);
  assert_non_null(root);
  assert_int_equal(cal_profile_validate(root, err, sizeof err), 0);
  char path[] = "/tmp/cal_profile_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cal_json_write_atomic(root, path, err, sizeof err), 0);
  cal_profile_t *p = NULL;
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), 0);
  assert_true(json_equal(p->root, root));
  int n = 0;
  cal_profile_each_point(p->root, count_points, &n);
  assert_int_equal(n, 2);
  cal_profile_free(p);

  /* truncated */
  FILE *f = fopen(path, "w");
  fwrite(minimal_profile, 1, 80, f);
  fclose(f);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_EPARSE);
  assert_non_null(strstr(err, "not valid JSON"));

  /* wrong schema, wrong types, missing keys, bad points */
  static const struct {
    const char *from, *to, *msg;
  } edits[] = {
      {"calibrate-profile/1", "calibrate-profile/9", "schema is"},
      {"\"gflops\":100.5", "\"gflops\":\"fast\"", "\"gflops\" must be"},
      {"\"device\":\"cpu\",", "", "missing top-level key \"device\""},
      {"\"samples_gflops\":[1,2,3]", "\"samples_gflops\":[1,\"x\",3]",
       "samples_gflops[1]"},
      {"\"status\":\"ok\"", "\"status\":\"great\"", "status"},
      {"\"samples_gflops\":[1,2,3]", "\"samples_gflops\":[]", "non-empty"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char buf[2048];
    const char *at = strstr(minimal_profile, edits[i].from);
    assert_non_null(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - minimal_profile),
             minimal_profile, edits[i].to, at + strlen(edits[i].from));
    f = fopen(path, "w");
    fputs(buf, f);
    fclose(f);
    assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_ESCHEMA);
    if (!strstr(err, edits[i].msg))
      fail_msg("edit %zu: message '%s' lacks '%s'", i, err, edits[i].msg);
  }
  f = fopen(path, "w");
  fputs("[1,2]", f);
  fclose(f);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_ESCHEMA);
  unlink(path);
  assert_int_equal(cal_profile_load(path, &p, err, sizeof err), CAL_EIO);

  /* a failed atomic write leaves nothing behind */
  assert_int_equal(cal_json_write_atomic(root, "/nonexistent-dir/p.json", err,
                                         sizeof err),
                   CAL_EIO);
  json_decref(root);
}

/* A section that keeps a plain point list: its profile object and table
 * part come from the shared writer and printer. */
static void point_list_section(void **state) {
  (void)state;
  cal_points_result_t *p = cal_points_new("Example points", 2);
  assert_non_null(p);
  snprintf(p->ids[0], sizeof p->ids[0], "example/a");
  snprintf(p->ids[1], sizeof p->ids[1], "example/b");
  p->points[0].kernel = cal_kernel_find("sgemm");
  p->points[0].status = CAL_POINT_SKIPPED;
  snprintf(p->points[0].reason, sizeof p->points[0].reason, "too big");
  p->points[1].kernel = cal_kernel_find("stream_read");
  p->points[1].status = CAL_POINT_FAILED;
  snprintf(p->points[1].reason, sizeof p->points[1].reason, "wrong sum");
  json_t *o = cal_points_write(NULL, p);
  assert_non_null(o);
  json_t *pts = json_object_get(o, "points");
  assert_int_equal(json_array_size(pts), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(pts, 0), "id")),
                      "example/a");
  assert_string_equal(json_string_value(json_object_get(json_array_get(pts, 1), "status")),
                      "failed");
  json_decref(o);
  char buf[512] = "";
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  assert_non_null(f);
  cal_points_print(NULL, p, f);
  fclose(f);
  cal_assert_contains(buf, "Example points", "skipped: too big",
                      "failed: wrong sum");
  cal_points_drop(p);
}

CAL_TEST_MAIN(
    cmocka_unit_test(profile_round_trip_and_rejects),
    cmocka_unit_test(point_list_section))
