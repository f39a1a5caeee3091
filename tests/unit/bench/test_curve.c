/* The batch curve (bench/curve.c): its peak, knee and shape, batch lists,
 * and the curve CSV reader (analysis/curve_csv.c). */
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
#include "test_util.h"
#include "curve.h"
#include "curve_csv.h"

#ifndef CAL_TEST_DATA_DIR
#error "CAL_TEST_DATA_DIR must name tests/data"
#endif

/* A curve of single-sample points from two parallel arrays. */
#define MAXPTS 16
typedef struct curve_buf {
  cal_curve_point_t pts[MAXPTS];
  double vals[MAXPTS];
  size_t n;
} curve_buf_t;

static void curve_simple(curve_buf_t *c, const int64_t *b, const double *v,
                         size_t n) {
  assert_true(n <= MAXPTS);
  memset(c, 0, sizeof *c);
  c->n = n;
  for (size_t i = 0; i < n; i++) {
    c->vals[i] = v[i];
    c->pts[i].batch_size = b[i];
    c->pts[i].status = CAL_POINT_OK;
    c->pts[i].samples = &c->vals[i];
    c->pts[i].n = 1;
  }
}

static cal_curve_result_t *analyze(const cal_curve_point_t *p, size_t n,
                                  const cal_curve_opts_t *o) {
  cal_curve_result_t *r = NULL;
  assert_int_equal(cal_curve_analyze(p, n, o, &r), 0);
  assert_non_null(r);
  return r;
}

static const cal_curve_t *find_curve(const cal_curve_set_t *s,
                                     const char *machine) {
  for (size_t i = 0; i < s->n; i++)
    if (s->curves[i].machine && strcmp(s->curves[i].machine, machine) == 0)
      return &s->curves[i];
  fail_msg("no curve for %s", machine);
  return NULL;
}

/* ---- the published seed curves ---------------------------------------- */

static void seed_curves_peaks(void **state) {
  (void)state;
  char err[256];
  cal_curve_set_t *s = NULL;
  assert_int_equal(cal_curves_load(CAL_TEST_DATA_DIR "/seed_curves.csv", &s,
                                   err, sizeof err),
                   0);
  assert_int_equal(s->n, 2);
  assert_string_equal(s->curves[0].machine, "machine_a");

  const cal_curve_t *a = find_curve(s, "machine_a");
  cal_curve_result_t *r = analyze(a->points, a->n, NULL);
  assert_int_equal(r->peak_batch_size, 32);
  assert_int_equal(r->optimal_batch_size, 32);
  assert_int_equal(r->knee_batch_size, 32); /* 750 at 64 is past the peak */
  assert_string_equal(cal_curve_shape_name(r->shape), "peaked");
  assert_double_equal(r->peak_median, 776.0, 0);
  assert_double_equal(r->degradation_pct, (776.0 - 750.0) / 776.0 * 100, 1e-9);
  assert_double_equal(r->worst_drop_pct, r->degradation_pct, 0);
  assert_int_equal(r->worst_batch_size, 64);
  assert_int_equal(r->n_tied, 1);
  assert_int_equal(r->tied_batch_sizes[0], 32);
  assert_int_equal(cal_sweep_should_extend(a->points, a->n, NULL), 0);
  cal_curve_result_free(r);

  const cal_curve_t *b = find_curve(s, "machine_b");
  r = analyze(b->points, b->n, NULL);
  assert_int_equal(r->peak_batch_size, 4);
  assert_int_equal(r->optimal_batch_size, 4);
  assert_int_equal(r->shape, CAL_SHAPE_PEAKED);
  assert_double_equal(r->degradation_pct, (278.0 - 210.0) / 278.0 * 100, 1e-9);
  assert_double_equal(r->points[1].pct_of_peak, 100.0, 1e-12);
  assert_true(r->points[1].is_peak);

  /* target effective batch 32 with optimal 4 -> 4 x 8 */
  cal_curve_rec_t rec;
  assert_int_equal(cal_curve_recommend(r, 32, &rec), 0);
  assert_int_equal(rec.batch_size, 4);
  assert_int_equal(rec.accumulation_steps, 8);
  assert_int_equal(rec.effective_batch, 32);
  assert_true(rec.exact);
  cal_curve_result_free(r);
  cal_curve_set_free(s);
}

/* ---- synthetic shapes --------------------------------------------------- */

static void monotone_rising(void **state) {
  (void)state;
  const int64_t b[] = {8, 1, 2, 4}; /* any order */
  const double v[] = {600, 100, 190, 350};
  curve_buf_t c;
  curve_simple(&c, b, v, 4);
  cal_curve_result_t *r = analyze(c.pts, c.n, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_RISING);
  assert_int_equal(r->peak_batch_size, 8);
  assert_int_equal(r->points[0].batch_size, 1); /* sorted */
  assert_int_equal(r->points[3].batch_size, 8);
  assert_double_equal(r->rise_pct, (600.0 - 350.0) / 350.0 * 100, 1e-9);
  assert_true(isnan(r->degradation_pct));
  assert_int_equal(cal_sweep_should_extend(c.pts, c.n, NULL), 1);
  cal_curve_result_free(r);

  /* a last step of 2% is not a meaningful rise at 3% tolerance ... */
  const double flat_end[] = {204, 100, 190, 200};
  curve_simple(&c, b, flat_end, 4);
  r = analyze(c.pts, c.n, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_PLATEAU);
  assert_int_equal(r->peak_batch_size, 8);
  assert_int_equal(cal_sweep_should_extend(c.pts, c.n, NULL), 0);
  cal_curve_result_free(r);
  /* ... but it is at 1% */
  cal_curve_opts_t o;
  cal_curve_opts_default(&o);
  o.tolerance = 0.01;
  assert_int_equal(cal_sweep_should_extend(c.pts, c.n, &o), 1);
}

static void plateau_knee_below_peak(void **state) {
  (void)state;
  const int64_t b[] = {1, 2, 4, 8, 16, 32};
  const double v[] = {100, 180, 300, 310, 312, 311};
  curve_buf_t c;
  curve_simple(&c, b, v, 6);
  cal_curve_result_t *r = analyze(c.pts, c.n, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_PLATEAU);
  assert_int_equal(r->peak_batch_size, 16);
  assert_int_equal(r->knee_batch_size, 8); /* 310 >= 0.97 * 312; 300 is not */
  assert_int_equal(r->optimal_batch_size, 16);
  assert_true(r->points[3].is_knee);
  assert_double_equal(r->degradation_pct, 1.0 / 312.0 * 100, 1e-9);
  cal_curve_result_free(r);

  cal_curve_opts_t o;
  cal_curve_opts_default(&o);
  o.policy = CAL_OPTIMIZE_KNEE;
  r = analyze(c.pts, c.n, &o);
  assert_int_equal(r->optimal_batch_size, 8);
  assert_true(r->points[3].is_optimal);
  assert_false(r->points[4].is_optimal);
  /* target 32: the knee batch 8 divides it */
  cal_curve_rec_t rec;
  assert_int_equal(cal_curve_recommend(r, 32, &rec), 0);
  assert_int_equal(rec.batch_size, 8);
  assert_int_equal(rec.accumulation_steps, 4);
  cal_curve_result_free(r);

  /* a wider tolerance moves the knee down */
  o.tolerance = 0.05;
  r = analyze(c.pts, c.n, &o);
  assert_int_equal(r->knee_batch_size, 4);
  cal_curve_result_free(r);
}

static void noisy_tie(void **state) {
  (void)state;
  /* batch 8 and 16 overlap; 4 is clearly lower; 32 clearly drops */
  static const double s4[] = {400, 405, 398, 402, 401, 399, 403, 400, 404, 397};
  static const double s8[] = {495, 500, 505, 510, 490, 500, 498, 502, 506, 494};
  static const double s16[] = {500, 508, 492, 515, 499, 503, 497, 511, 490, 501};
  static const double s32[] = {440, 445, 438, 442, 441, 439, 443, 440, 444, 437};
  const cal_curve_point_t p[] = {
      {4, CAL_POINT_OK, s4, 10},
      {8, CAL_POINT_OK, s8, 10},
      {16, CAL_POINT_OK, s16, 10},
      {32, CAL_POINT_OK, s32, 10},
  };
  cal_curve_result_t *r = analyze(p, 4, NULL);
  assert_int_equal(r->peak_batch_size, 16); /* median 500.5 vs 500 */
  assert_true(r->points[2].is_peak);
  assert_int_equal(r->n_tied, 2);
  assert_int_equal(r->tied_batch_sizes[0], 8);
  assert_int_equal(r->tied_batch_sizes[1], 16);
  assert_true(r->points[1].tied);
  assert_true(r->points[2].tied);
  assert_false(r->points[0].tied);
  assert_false(r->points[3].tied);
  assert_true(r->points[2].stats.ci_level >= 0.95);
  assert_int_equal(r->shape, CAL_SHAPE_PEAKED);
  cal_curve_result_free(r);

  /* a drop past the peak that stays inside the noise is not "peaked" */
  static const double wide[] = {380, 520, 400, 510, 460, 505, 420, 515, 430,
                                500};
  const cal_curve_point_t q[] = {
      {8, CAL_POINT_OK, s8, 10},
      {16, CAL_POINT_OK, wide, 10}, /* median 480: 4% below, CI overlaps */
  };
  r = analyze(q, 2, NULL);
  assert_int_equal(r->peak_batch_size, 8);
  assert_true(r->worst_drop_pct > 3.0);
  assert_int_equal(r->shape, CAL_SHAPE_PLATEAU);
  cal_curve_result_free(r);

  /* and a rise inside the noise is not "rising"; the sweep still tries one
   * more batch, because the medians rose by more than the tolerance */
  const cal_curve_point_t rise[] = {
      {8, CAL_POINT_OK, wide, 10},
      {16, CAL_POINT_OK, s8, 10},
  };
  r = analyze(rise, 2, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_PLATEAU);
  cal_curve_result_free(r);
  assert_int_equal(cal_sweep_should_extend(rise, 2, NULL), 1);
  /* not when the last point is below the peak */
  const cal_curve_point_t fall[] = {
      {8, CAL_POINT_OK, s8, 10},
      {16, CAL_POINT_OK, wide, 10},
  };
  assert_int_equal(cal_sweep_should_extend(fall, 2, NULL), 0);
}

static void single_point_and_skipped(void **state) {
  (void)state;
  static const double s[] = {123, 125, 121};
  cal_curve_point_t p[] = {
      {8, CAL_POINT_OK, s, 3},
      {16, CAL_POINT_SKIPPED, NULL, 0},
  };
  cal_curve_result_t *r = analyze(p, 1, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_SINGLE);
  assert_string_equal(cal_curve_shape_name(r->shape), "single");
  assert_int_equal(r->peak_batch_size, 8);
  assert_int_equal(r->knee_batch_size, 8);
  assert_int_equal(r->optimal_batch_size, 8);
  assert_double_equal(r->peak_median, 123, 0);
  assert_true(isnan(r->degradation_pct));
  assert_true(isnan(r->worst_drop_pct));
  assert_true(isnan(r->rise_pct));
  assert_int_equal(r->n_tied, 1);
  cal_curve_result_free(r);
  assert_int_equal(cal_sweep_should_extend(p, 1, NULL), 1);

  /* a skipped point takes no part: still a single point */
  r = analyze(p, 2, NULL);
  assert_int_equal(r->n, 2);
  assert_int_equal(r->n_ok, 1);
  assert_int_equal(r->shape, CAL_SHAPE_SINGLE);
  assert_true(isnan(r->points[1].pct_of_peak));
  cal_curve_result_free(r);

  /* nothing measured */
  r = analyze(&p[1], 1, NULL);
  assert_int_equal(r->shape, CAL_SHAPE_EMPTY);
  assert_int_equal(r->peak_batch_size, 0);
  cal_curve_rec_t rec;
  assert_int_equal(cal_curve_recommend(r, 8, &rec), 0);
  assert_int_equal(rec.batch_size, 0);
  cal_curve_result_free(r);
  assert_int_equal(cal_sweep_should_extend(&p[1], 1, NULL), 0);
}

static void bad_analysis_input(void **state) {
  (void)state;
  static const double ok[] = {1.0};
  static const double neg[] = {-1.0};
  static const double nan_[] = {NAN};
  cal_curve_result_t *r = (cal_curve_result_t *)&r; /* must be reset */
  cal_curve_point_t dup[] = {{4, CAL_POINT_OK, ok, 1}, {4, CAL_POINT_OK, ok, 1}};
  assert_int_equal(cal_curve_analyze(dup, 2, NULL, &r), CAL_EINVAL);
  assert_null(r);
  cal_curve_point_t zero[] = {{0, CAL_POINT_OK, ok, 1}};
  assert_int_equal(cal_curve_analyze(zero, 1, NULL, &r), CAL_EINVAL);
  cal_curve_point_t n0[] = {{2, CAL_POINT_OK, ok, 0}};
  assert_int_equal(cal_curve_analyze(n0, 1, NULL, &r), CAL_EINVAL);
  cal_curve_point_t ng[] = {{1, CAL_POINT_OK, ok, 1}, {2, CAL_POINT_OK, neg, 1}};
  assert_int_equal(cal_curve_analyze(ng, 2, NULL, &r), CAL_EINVAL);
  cal_curve_point_t nn[] = {{2, CAL_POINT_OK, nan_, 1}};
  assert_int_equal(cal_curve_analyze(nn, 1, NULL, &r), CAL_EINVAL);
  assert_int_equal(cal_curve_analyze(dup, 0, NULL, &r), CAL_EINVAL);
  cal_curve_opts_t o;
  cal_curve_opts_default(&o);
  o.tolerance = 1.0;
  assert_int_equal(cal_curve_analyze(zero + 0, 1, &o, &r), CAL_EINVAL);
  assert_int_equal(cal_sweep_should_extend(dup, 2, NULL), CAL_EINVAL);
  cal_curve_result_free(NULL);
  cal_curve_set_free(NULL);

  cal_curve_policy_t pol;
  assert_int_equal(cal_curve_policy_parse("KNEE", &pol), 0);
  assert_int_equal(pol, CAL_OPTIMIZE_KNEE);
  assert_int_equal(cal_curve_policy_parse("fast", &pol), CAL_EINVAL);
}

static void recommendations(void **state) {
  (void)state;
  const int64_t b[] = {1, 8, 16, 32, 64};
  const double v[] = {200, 450, 620, 776, 750};
  curve_buf_t c;
  curve_simple(&c, b, v, 5);
  cal_curve_result_t *r = analyze(c.pts, c.n, NULL);
  cal_curve_rec_t rec;
  /* optimal 32 divides 64 */
  assert_int_equal(cal_curve_recommend(r, 64, &rec), 0);
  assert_int_equal(rec.batch_size, 32);
  assert_int_equal(rec.accumulation_steps, 2);
  /* optimal 32 > 24: fastest measured divisor of 24 is 8 */
  assert_int_equal(cal_curve_recommend(r, 24, &rec), 0);
  assert_int_equal(rec.batch_size, 8);
  assert_int_equal(rec.accumulation_steps, 3);
  assert_true(rec.exact);
  assert_non_null(strstr(rec.note, "exceeds"));
  /* 48: 32 does not divide it, 16 does */
  assert_int_equal(cal_curve_recommend(r, 48, &rec), 0);
  assert_int_equal(rec.batch_size, 16);
  assert_int_equal(rec.accumulation_steps, 3);
  assert_non_null(strstr(rec.note, "does not divide"));
  assert_int_equal(cal_curve_recommend(r, 0, &rec), CAL_EINVAL);
  cal_curve_result_free(r);

  /* no measured divisor: best batch <= T, steps rounded up */
  const int64_t b2[] = {2, 4, 8};
  const double v2[] = {100, 150, 160};
  curve_simple(&c, b2, v2, 3);
  r = analyze(c.pts, c.n, NULL);
  assert_int_equal(cal_curve_recommend(r, 7, &rec), 0);
  assert_int_equal(rec.batch_size, 4);
  assert_int_equal(rec.accumulation_steps, 2);
  assert_int_equal(rec.effective_batch, 8);
  assert_false(rec.exact);
  /* nothing <= T */
  assert_int_equal(cal_curve_recommend(r, 1, &rec), 0);
  assert_int_equal(rec.batch_size, 0);
  assert_int_equal(rec.accumulation_steps, 0);
  assert_non_null(strstr(rec.note, "smallest measured: 2"));
  cal_curve_result_free(r);
}

/* ---- batch lists -------------------------------------------------------- */

static void expect_list(const char *spec, const int64_t *want, size_t n) {
  int64_t *v = NULL;
  size_t got = 0;
  char err[200] = "";
  int rc = cal_batches_parse(spec, &v, &got, err, sizeof err);
  if (rc != 0)
    fail_msg("\"%s\": %s", spec, err);
  assert_int_equal(got, n);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(v[i], want[i]);
  free(v);
}

static void expect_list_error(const char *spec, const char *what) {
  int64_t *v = (int64_t *)&v;
  size_t n = 99;
  char err[200] = "";
  assert_int_equal(cal_batches_parse(spec, &v, &n, err, sizeof err),
                   CAL_EPARSE);
  assert_null(v);
  assert_int_equal(n, 0);
  assert_null(strchr(err, '\n'));
  if (!strstr(err, what))
    fail_msg("\"%s\": message \"%s\" lacks \"%s\"", spec, err, what);
}

static void batch_lists(void **state) {
  (void)state;
  expect_list("1,2,4,8", (const int64_t[]){1, 2, 4, 8}, 4);
  expect_list("1-256*2", (const int64_t[]){1, 2, 4, 8, 16, 32, 64, 128, 256},
              9);
  expect_list("1-16+4", (const int64_t[]){1, 5, 9, 13}, 4);
  expect_list("1,3,8-64*2", (const int64_t[]){1, 3, 8, 16, 32, 64}, 6);
  expect_list(" 8 , 2,2, 4-8 * 2 ", (const int64_t[]){2, 4, 8}, 3);
  expect_list("3-100*2", (const int64_t[]){3, 6, 12, 24, 48, 96}, 6);
  expect_list("1-4", (const int64_t[]){1, 2, 3, 4}, 4);
  expect_list("7", (const int64_t[]){7}, 1);
}

static void batch_lists_big(void **state) {
  (void)state;
  int64_t *v = NULL;
  size_t n = 0;
  char err[200];
  assert_int_equal(cal_batches_parse("1-1073741824*2", &v, &n, err, sizeof err),
                   0);
  assert_int_equal(n, 31);
  assert_int_equal(v[30], CAL_BATCH_MAX);
  free(v);
  assert_int_equal(cal_batches_default(100, &v, &n), 0);
  assert_int_equal(n, 7);
  assert_int_equal(v[0], 1);
  assert_int_equal(v[6], 64);
  free(v);
  assert_int_equal(cal_batches_default(1, &v, &n), 0);
  assert_int_equal(n, 1);
  free(v);
  assert_int_equal(cal_batches_default(0, &v, &n), CAL_EINVAL);
  assert_null(v);
}

static void batch_list_errors(void **state) {
  (void)state;
  expect_list_error("", "empty batch list");
  expect_list_error("  ", "empty batch list");
  expect_list_error("1,,2", "empty item");
  expect_list_error("1,", "empty item");
  expect_list_error("0", "positive");
  expect_list_error("2,0-8*2", "positive");
  expect_list_error("-4", "positive");
  expect_list_error("abc", "not a number");
  expect_list_error("8x", "not a number");
  expect_list_error("1.5", "not a whole number");
  expect_list_error("64-8*2", "descending range");
  expect_list_error("1-8*1", "factor must be at least 2");
  expect_list_error("1-8+0", "step must be at least 1");
  expect_list_error("1-", "missing number");
  expect_list_error("1-8/2", "unexpected text");
  expect_list_error("1 2", "unexpected text");
  expect_list_error("1-100000", "more than 4096");
  expect_list_error("99999999999", "too large");
}

/* ---- CSV ---------------------------------------------------------------- */

static int read_csv(const char *text, cal_curve_set_t **out, char *err,
                    size_t errlen) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  if (!f) /* fmemopen refuses size 0 in old glibc; use an empty tmpfile */
    f = tmpfile();
  assert_non_null(f);
  int rc = cal_curves_read(f, "t.csv", out, err, errlen);
  fclose(f);
  return rc;
}

/* The curves of a good CSV text: ncurves of them (free the set). */
static cal_curve_set_t *csv_of(const char *text, size_t ncurves) {
  cal_curve_set_t *s = NULL;
  char err[256] = "";
  if (read_csv(text, &s, err, sizeof err) != 0)
    fail_msg("read: %s", err);
  assert_int_equal(s->n, ncurves);
  return s;
}

static void expect_csv_error(const char *text, const char *where,
                             const char *what) {
  cal_curve_set_t *s = (cal_curve_set_t *)&s;
  char err[300] = "";
  assert_int_equal(read_csv(text, &s, err, sizeof err), CAL_EPARSE);
  assert_null(s);
  assert_null(strchr(err, '\n'));
  if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, what))
    fail_msg("message \"%s\": want prefix \"%s\" and \"%s\"", err, where, what);
}

static void csv_good(void **state) {
  (void)state;
  /* aliases case-insensitive, extra column, comments, blank lines, CRLF,
   * repeated rows are samples */
  const char *text = "\xEF\xBB\xBF# measured by hand\r\n"
                     "\r\n"
                     "Batch_Size , note, Examples_Per_S\r\n"
                     "4,x,300\r\n"
                     "  # indented comment\n"
                     "1,y,100\n"
                     "4,\"a, quoted \"\"note\"\"\",310\n"
                     "4,z,290\n"
                     "2,,180\n";
  cal_curve_set_t *s = csv_of(text, 1);
  const cal_curve_t *c = &s->curves[0];
  assert_null(c->machine);
  assert_int_equal(c->n, 3);
  assert_int_equal(c->points[0].batch_size, 1);
  assert_int_equal(c->points[1].batch_size, 2);
  assert_int_equal(c->points[2].batch_size, 4);
  assert_int_equal(c->points[2].n, 3);
  assert_double_equal(c->points[2].samples[0], 300, 0); /* file order */
  assert_double_equal(c->points[2].samples[1], 310, 0);
  assert_double_equal(c->points[2].samples[2], 290, 0);
  cal_curve_result_t *r = analyze(c->points, c->n, NULL);
  assert_double_equal(r->points[2].stats.median, 300, 0);
  cal_curve_result_free(r);
  cal_curve_set_free(s);

  /* machines in order of first appearance; status column */
  text = "device,batch,throughput_ex_per_s,status\n"
         "m2,1,10,ok\n"
         "m1,1,20,ok\n"
         "m2,2,15,ok\n"
         "m2,4,,skipped\n"
         "m2,2,16,FAILED\n";
  s = csv_of(text, 2);
  assert_string_equal(s->curves[0].machine, "m2");
  assert_string_equal(s->curves[1].machine, "m1");
  c = &s->curves[0];
  assert_int_equal(c->n, 3);
  assert_int_equal(c->points[1].n, 1); /* the failed row is no sample */
  assert_int_equal(c->points[2].status, CAL_POINT_SKIPPED);
  assert_int_equal(c->points[2].batch_size, 4);
  cal_curve_set_free(s);
}

static void csv_errors(void **state) {
  (void)state;
  expect_csv_error("", "t.csv:1:", "empty file");
  expect_csv_error("# only\n\n# comments\n", "t.csv:3:", "no header row");
  expect_csv_error("# c\nbatch_size,throughput\n\n", "t.csv:2:",
                   "no data rows");
  expect_csv_error("batch_size,speed\n1,2\n", "t.csv:1:",
                   "missing column throughput");
  expect_csv_error("1,200\n2,300\n", "t.csv:1:", "missing column batch_size");
  expect_csv_error("batch,throughput,examples_per_s\n1,2,3\n", "t.csv:1:",
                   "both give the throughput");
  expect_csv_error("batch_size,throughput\n1,200\n2,fast\n", "t.csv:3:",
                   "throughput \"fast\" is not a number");
  expect_csv_error("batch_size,throughput\n#\n1,-200\n", "t.csv:3:",
                   "is negative");
  expect_csv_error("batch_size,throughput\n1,inf\n", "t.csv:2:",
                   "not a number");
  expect_csv_error("batch_size,throughput\n1,1e999\n", "t.csv:2:",
                   "not finite");
  expect_csv_error("batch_size,throughput\n2.5,100\n", "t.csv:2:",
                   "not a positive integer");
  expect_csv_error("batch_size,throughput\n0,100\n", "t.csv:2:",
                   "not a positive integer");
  expect_csv_error("batch_size,throughput\n-4,100\n", "t.csv:2:",
                   "not a positive integer");
  expect_csv_error("batch_size,throughput\n0x10,100\n", "t.csv:2:",
                   "not a number");
  expect_csv_error("batch_size,throughput\n1,100\n2\n", "t.csv:3:",
                   "expected 2 fields, found 1");
  expect_csv_error("batch_size,throughput\n1,100,7\n", "t.csv:2:",
                   "expected 2 fields, found 3");
  expect_csv_error("machine,batch_size,throughput\n,1,100\n", "t.csv:2:",
                   "empty machine name");
  expect_csv_error("batch_size,throughput,status\n1,100,maybe\n", "t.csv:2:",
                   "status \"maybe\"");
  expect_csv_error("batch_size,throughput\n\"1,100\n", "t.csv:2:",
                   "unterminated quoted field");

  char err[300];
  cal_curve_set_t *s = NULL;
  assert_int_equal(cal_curves_load(CAL_TEST_DATA_DIR "/no-such-file.csv", &s,
                                   err, sizeof err),
                   CAL_EIO);
  assert_non_null(strstr(err, "cannot open"));
}

CAL_TEST_MAIN(
    cmocka_unit_test(seed_curves_peaks), cmocka_unit_test(monotone_rising),
    cmocka_unit_test(plateau_knee_below_peak), cmocka_unit_test(noisy_tie),
    cmocka_unit_test(single_point_and_skipped),
    cmocka_unit_test(bad_analysis_input), cmocka_unit_test(recommendations),
    cmocka_unit_test(batch_lists), cmocka_unit_test(batch_lists_big),
    cmocka_unit_test(batch_list_errors), cmocka_unit_test(csv_good),
    cmocka_unit_test(csv_errors))
