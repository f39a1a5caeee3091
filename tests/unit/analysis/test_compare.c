/* Unit tests of compare's statistics (Mann-Whitney U, ratio interval), its
 * verdict rules, and the report/export trees built from in-memory profiles.
 * Reference p-values come from hand computation, brute-force enumeration
 * and the standard table of Mann-Whitney critical values.
 * covers: calibrator/analysis/export.c calibrator/analysis/compare_machine.c */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cli.h"
#include "compare.h"
#include "compare_json.h"
#include "compare_render.h"
#include "mwu.h"
#include "profile.h"
#include "test_util.h"
#include "verdict.h"

/* ------------------------------------------------------- Mann-Whitney U */

static void mwu_exact_separated_7_7(void **state) {
  (void)state;
  const double lo[] = {1, 2, 3, 4, 5, 6, 7};
  const double hi[] = {14, 8, 9, 13, 10, 11, 12};
  cal_mwu_t t;
  assert_int_equal(cal_mwu_test(lo, 7, hi, 7, &t), 0);
  assert_int_equal(t.method, CAL_MWU_EXACT);
  assert_int_equal(t.ties, 0);
  assert_double_equal(t.u, 0.0, 0);
  /* one ordering of C(14, 7) = 3432 at each extreme: p = 2 / 3432 */
  assert_double_equal(t.p, 2.0 / 3432.0, 1e-15);
  assert_double_equal(t.p_min, 2.0 / 3432.0, 1e-12);
  assert_true(t.z < 0);
  assert_int_equal(cal_mwu_test(hi, 7, lo, 7, &t), 0);
  assert_double_equal(t.u, 49.0, 0);
  assert_double_equal(t.p, 2.0 / 3432.0, 1e-15);
  assert_true(t.z > 0);
  assert_string_equal(cal_mwu_method_name(t.method), "exact");
}

/* The counts must equal a brute-force enumeration of which 4 of the 9
 * pooled ranks belong to x (U = rank sum - 4*5/2). */
static void mwu_exact_counts_match_enumeration(void **state) {
  (void)state;
  uint64_t brute[21] = {0};
  for (unsigned mask = 0; mask < (1u << 9); mask++) {
    if (__builtin_popcount(mask) != 4)
      continue;
    int rank_sum = 0;
    for (int r = 0; r < 9; r++)
      if (mask & (1u << r))
        rank_sum += r + 1;
    brute[rank_sum - 10]++;
  }
  uint64_t *c = NULL, *c2 = NULL;
  assert_int_equal(cal_mwu_exact_counts(4, 5, &c), 0);
  assert_int_equal(cal_mwu_exact_counts(5, 4, &c2), 0);
  uint64_t total = 0;
  for (int u = 0; u <= 20; u++) {
    assert_int_equal(c[u], brute[u]);
    assert_int_equal(c2[u], brute[u]);
    total += c[u];
  }
  assert_int_equal(total, 126); /* C(9, 4) */
  /* 1 1 2 3 5 6 8 9 11 11 12 ... symmetric */
  assert_int_equal(c[4], 5);
  assert_int_equal(c[10], 12);
  free(c);
  free(c2);
  assert_int_equal(cal_mwu_exact_counts(31, 30, &c), CAL_EINVAL);
}

/* Two-sided exact p of an integral U from the counts. */
static double exact_p(size_t m, size_t n, size_t u) {
  uint64_t *c = NULL;
  assert_int_equal(cal_mwu_exact_counts(m, n, &c), 0);
  double below = 0, total = 0;
  for (size_t k = 0; k <= m * n; k++) {
    total += (double)c[k];
    if (k <= u)
      below += (double)c[k];
  }
  free(c);
  return 2 * below / total;
}

/* Standard table of critical U, two-sided alpha = 0.05, n1 = n2:
 * 8 -> 13, 10 -> 23, 20 -> 127: p(U) <= 0.05 < p(U + 1). */
static void mwu_exact_critical_values(void **state) {
  (void)state;
  static const struct {
    size_t n, u;
  } table[] = {{5, 2}, {8, 13}, {10, 23}, {20, 127}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    assert_true(exact_p(table[i].n, table[i].n, table[i].u) <= 0.05);
    assert_true(exact_p(table[i].n, table[i].n, table[i].u + 1) > 0.05);
  }
  /* values by the counting recursion, computed independently */
  assert_double_equal(exact_p(10, 10, 23), 0.04325705254497824, 1e-12);
  assert_double_equal(exact_p(20, 20, 127), 0.04909032518937244, 1e-12);
}

static void mwu_exact_hand_case(void **state) {
  (void)state;
  /* m = n = 5, only x = 7 beats two y values: U = 2; P(U <= 2) =
   * (1 + 1 + 2) / 252, two-sided 8 / 252 */
  const double x[] = {1, 2, 3, 4, 7};
  const double y[] = {5, 6, 8, 9, 10};
  cal_mwu_t t;
  assert_int_equal(cal_mwu_test(x, 5, y, 5, &t), 0);
  assert_double_equal(t.u, 2.0, 0);
  assert_double_equal(t.p, 8.0 / 252.0, 1e-15);
  assert_double_equal(t.p_min, 2.0 / 252.0, 1e-12);
}

static void mwu_normal_with_ties_hand(void **state) {
  (void)state;
  /* x = 1 2 2 3 4, y = 2 3 4 4 5 6.  U of x: 0 + 0.5 + 0.5 + 1.5 + 3 = 5.5.
   * Ties in the pool: 2 (t=3), 3 (t=2), 4 (t=3): sum t^3 - t = 54.
   * var = 30/12 * (12 - 54/110) = 28.7727..; z = (5.5 - 15 + 0.5)/sd =
   * -1.67785; p = erfc(|z|/sqrt 2) = 0.093377 */
  const double x[] = {1, 2, 2, 3, 4};
  const double y[] = {2, 3, 4, 4, 5, 6};
  cal_mwu_t t;
  assert_int_equal(cal_mwu_test(x, 5, y, 6, &t), 0);
  assert_int_equal(t.method, CAL_MWU_NORMAL);
  assert_int_equal(t.ties, 1);
  assert_double_equal(t.u, 5.5, 0);
  assert_double_equal(t.z, -1.6778456057627147, 1e-12);
  assert_double_equal(t.p, 0.09337724360511555, 1e-12);
  assert_string_equal(cal_mwu_method_name(t.method), "normal");
}

static void mwu_all_tied_and_large(void **state) {
  (void)state;
  const double same[] = {3, 3, 3, 3};
  cal_mwu_t t;
  assert_int_equal(cal_mwu_test(same, 4, same, 3, &t), 0);
  assert_double_equal(t.u, 6.0, 0);
  assert_double_equal(t.z, 0.0, 0);
  assert_double_equal(t.p, 1.0, 0);

  /* 40 + 40 > CAL_MWU_EXACT_MAX_N: normal without ties.  Separated:
   * U = 0, var = 1600 * 81 / 12 = 10800, z = (-800 + 0.5) / sqrt(10800) */
  double x[40], y[40];
  for (int i = 0; i < 40; i++) {
    x[i] = i;
    y[i] = 100 + i;
  }
  assert_int_equal(cal_mwu_test(x, 40, y, 40, &t), 0);
  assert_int_equal(t.method, CAL_MWU_NORMAL);
  double z = -799.5 / sqrt(10800.0);
  assert_double_equal(t.z, z, 1e-12);
  assert_double_equal(t.p, erfc(-z / sqrt(2.0)), 1e-20);
}

static void mwu_bad_input(void **state) {
  (void)state;
  const double x[] = {1, NAN};
  cal_mwu_t t;
  assert_int_equal(cal_mwu_test(x, 0, x, 1, &t), CAL_EINVAL);
  assert_int_equal(cal_mwu_test(x, 1, x, 2, &t), CAL_EINVAL);
  cal_ratio_ci_t r;
  assert_int_equal(cal_ratio_ci(x, 1, x, 1, 1.5, &r), CAL_EINVAL);
  assert_int_equal(cal_ratio_ci(x, 2, x, 1, 0.95, &r), CAL_EINVAL);
}

/* -------------------------------------------------------- ratio interval */

static void ratio_ci_hand(void **state) {
  (void)state;
  /* y = 2x.  Pairwise ratios are 2 x_j / x_i.  For m = n = 5 the counts
   * start 1 1 2 3 ...: #(U <= 2) = 4 <= 0.025 * 252 < 7 = #(U <= 3), so
   * k = 3, coverage 1 - 8/252.  Third smallest x_j / x_i is 1/3, third
   * largest 3: interval [2/3, 6].  The median pairwise ratio is 2. */
  const double x[] = {3, 1, 5, 2, 4};
  const double y[] = {2, 4, 6, 8, 10};
  cal_ratio_ci_t r;
  assert_int_equal(cal_ratio_ci(x, 5, y, 5, 0.95, &r), 0);
  assert_double_equal(r.ratio, 2.0, 1e-15);
  assert_double_equal(r.hl, 2.0, 1e-15);
  assert_double_equal(r.lo, 2.0 / 3.0, 1e-15);
  assert_double_equal(r.hi, 6.0, 1e-15);
  assert_double_equal(r.level, 1.0 - 8.0 / 252.0, 1e-12);
}

static void ratio_ci_small_and_zero(void **state) {
  (void)state;
  /* n = 2 + 2: even the widest interval covers only 1 - 2/6 */
  const double x[] = {1, 2}, y[] = {3, 4};
  cal_ratio_ci_t r;
  assert_int_equal(cal_ratio_ci(x, 2, y, 2, 0.95, &r), 0);
  assert_double_equal(r.lo, 1.5, 1e-15);
  assert_double_equal(r.hi, 4.0, 1e-15);
  assert_double_equal(r.level, 2.0 / 3.0, 1e-12);
  /* a zero sample: no interval, the ratio still known */
  const double z[] = {0, 2, 2};
  assert_int_equal(cal_ratio_ci(x, 2, z, 3, 0.95, &r), 0);
  assert_double_equal(r.ratio, 2.0 / 1.5, 1e-15);
  assert_true(isnan(r.lo) && isnan(r.hi));
  /* a zero base median: no ratio */
  const double zz[] = {0, 0, 1};
  assert_int_equal(cal_ratio_ci(zz, 3, y, 2, 0.95, &r), 0);
  assert_true(isnan(r.ratio));
}

static void ratio_ci_large_normal(void **state) {
  (void)state;
  /* 50 + 50 uses the normal quantile; a deterministic pure scale change
   * of 1.1 must be covered and the interval stay narrow */
  double x[50], y[50];
  for (int i = 0; i < 50; i++) {
    x[i] = 100.0 + (double)((i * 37) % 50) / 10.0;
    y[i] = 1.1 * (100.0 + (double)((i * 13) % 50) / 10.0);
  }
  cal_ratio_ci_t r;
  assert_int_equal(cal_ratio_ci(x, 50, y, 50, 0.95, &r), 0);
  assert_true(r.lo < 1.1 && 1.1 < r.hi);
  assert_true(r.hi - r.lo < 0.02);
  assert_true(r.level > 0.94 && r.level < 0.96);
  assert_double_equal(r.ratio, 1.1, 1e-12);
}

/* --------------------------------------------------------------- verdict */

static void verdict_rules(void **state) {
  (void)state;
  static const struct {
    int hib;
    double ratio, lo, hi, p, p_min;
    cal_verdict_t want;
  } cases[] = {
      /* significant and past the threshold */
      {1, 0.80, 0.78, 0.82, 1e-5, 1e-8, CAL_VERDICT_REGRESSED},
      {1, 1.20, 1.18, 1.22, 1e-5, 1e-8, CAL_VERDICT_IMPROVED},
      /* lower is better: the mirror image */
      {0, 1.20, 1.18, 1.22, 1e-5, 1e-8, CAL_VERDICT_REGRESSED},
      {0, 0.80, 0.78, 0.82, 1e-5, 1e-8, CAL_VERDICT_IMPROVED},
      /* just inside the threshold */
      {1, 0.951, 0.94, 0.96, 1e-5, 1e-8, CAL_VERDICT_UNCHANGED},
      /* significant but small */
      {1, 0.98, 0.975, 0.985, 1e-5, 1e-8, CAL_VERDICT_UNCHANGED},
      /* past the threshold but not significant: never a regression */
      {1, 0.80, 0.60, 1.01, 0.02, 1e-8, CAL_VERDICT_INCONCLUSIVE},
      /* not significant, interval inside the band: equivalence */
      {1, 1.00, 0.97, 1.03, 0.5, 1e-8, CAL_VERDICT_UNCHANGED},
      /* not significant, interval past both bounds: too noisy */
      {1, 1.00, 0.90, 1.10, 0.5, 1e-8, CAL_VERDICT_INCONCLUSIVE},
      /* not significant, a regression not ruled out */
      {1, 0.99, 0.93, 1.01, 0.3, 1e-8, CAL_VERDICT_INCONCLUSIVE},
      {0, 1.01, 0.99, 1.07, 0.3, 1e-8, CAL_VERDICT_INCONCLUSIVE},
      /* 3 + 3 samples: p_min = 0.1 > alpha, whatever the data */
      {1, 0.50, 0.45, 0.55, 0.1, 0.1, CAL_VERDICT_INCONCLUSIVE},
      /* unknown ratio */
      {1, NAN, NAN, NAN, 1e-5, 1e-8, CAL_VERDICT_INCONCLUSIVE},
      /* significant with no interval still decides */
      {1, 0.70, NAN, NAN, 1e-5, 1e-8, CAL_VERDICT_REGRESSED},
      /* a figure that fell to nothing (55 -> 0 examples/s) */
      {1, 0.0, NAN, NAN, 1e-5, 1e-8, CAL_VERDICT_REGRESSED},
      /* a time that grew from nothing */
      {0, INFINITY, NAN, NAN, 1e-5, 1e-8, CAL_VERDICT_REGRESSED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cal_verdict_in_t in = {cases[i].hib, cases[i].ratio, cases[i].lo,
                           cases[i].hi,  cases[i].p,     cases[i].p_min,
                           0.05,         0.01};
    const char *why = NULL;
    cal_verdict_t v = cal_verdict_decide(&in, &why);
    if (v != cases[i].want)
      fail_msg("case %zu: %s, expected %s (%s)", i, cal_verdict_name(v),
               cal_verdict_name(cases[i].want), why);
    assert_non_null(why);
  }
  const char *why = NULL;
  cal_verdict_in_t few = {1, 0.5, 0.45, 0.55, 0.1, 0.1, 0.05, 0.01};
  cal_verdict_decide(&few, &why);
  assert_non_null(strstr(why, "too few samples"));
  assert_string_equal(cal_verdict_name(CAL_VERDICT_REGRESSED), "regressed");
}

static void geomean_and_orientation(void **state) {
  (void)state;
  const double r[] = {2.0, 0.5, 4.0, NAN, 0.0};
  size_t used = 0;
  assert_double_equal(cal_geomean(r, 5, &used), pow(4.0, 1.0 / 3.0), 1e-12);
  assert_int_equal(used, 3);
  assert_true(isnan(cal_geomean(r + 3, 2, &used)));
  assert_int_equal(used, 0);
  assert_double_equal(cal_ratio_oriented(0.8, 1), 0.8, 0);
  assert_double_equal(cal_ratio_oriented(0.8, 0), 1.25, 1e-15);
}

/* ------------------------------------------------- reports from profiles */

/* A minimal valid profile with points a (higher is better) and b (lower is
 * better) of 10 samples each, scaled by sa and sb, and one CPU brand. */
static json_t *profile(double sa, double sb, const char *brand, int dup) {
  json_t *xa = json_array(), *xb = json_array();
  for (int i = 0; i < 10; i++) {
    json_array_append_new(xa, json_real(sa * (100.0 + 0.1 * ((i * 7) % 10))));
    json_array_append_new(xb, json_real(sb * (2.0 + 0.002 * ((i * 3) % 10))));
  }
  json_t *pts = json_pack(
      "[{s:s, s:s, s:s, s:f, s:o, s:b, s:{s:f, s:f, s:f}},"
      " {s:s, s:s, s:s, s:f, s:o, s:b, s:{s:f, s:f, s:f}},"
      " {s:s, s:s, s:s}]",
      "id", "gemm/a", "status", "ok", "metric", "gflops", "gflops", sa * 100.45,
      "samples_gflops", xa, "higher_is_better", 1, "stats", "ci_low",
      sa * 100.2, "ci_high", sa * 100.7, "ci_level", 0.98, "id",
      dup ? "gemm/a" : "gemm/b", "status", "ok", "metric", "ms", "ms",
      sb * 2.009, "samples_ms", xb, "higher_is_better", 0, "stats", "ci_low",
      sb * 2.004, "ci_high", sb * 2.014, "ci_level", 0.98, "id", "gemm/c",
      "status", "skipped", "reason", "too big");
  json_t *p = json_pack(
      "{s:s, s:s, s:s, s:f, s:n, s:i, s:n, s:f, s:f, s:s, s:{}, s:{s:{s:s},"
      " s:i}, s:{}, s:{}, s:{s:o}}",
      "schema", "calibrate-profile/1", "device_name", "t", "device", "cpu",
      "gflops", 100.0 * sa, "gflops_per_core", "optimal_batch_size", 8,
      "throughput", "memory_gb", 24.0, "latency_ms", 2.0 * sb, "created",
      "2024-01-01T00:00:00Z", "tool", "machine", "cpu", "brand", brand,
      "usable_cores", 2, "settings", "quality", "gemm", "points", pts);
  assert_non_null(p);
  char err[256];
  if (!dup && cal_profile_validate(p, err, sizeof err) < 0)
    fail_msg("test profile invalid: %s", err);
  return p;
}

/* a 15% run-to-run allowance (a quiet machine): the tests below use 20%
 * changes to show single-run calls on either side of it */
static const cal_compare_opts_t opts = {0.05, 0.01, 0.95, 0.15, "base", "new",
                                        NULL};

static const json_t *find_point(const json_t *rep, const char *id) {
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(rep, "points"), i, e) {
    if (strcmp(json_string_value(json_object_get(e, "id")), id) == 0)
      return e;
  }
  fail_msg("point %s not in the report", id);
  return NULL;
}

static const char *verdict_of(const json_t *rep, const char *id) {
  return json_string_value(json_object_get(find_point(rep, id), "verdict"));
}

/* Compare two profiles: the typed result in *c (freed by the caller) and
 * its JSON tree, which the checks below read; rc as cal_compare_profiles. */
static int compare2(const json_t *b, const json_t *n, cal_comparison_t *c,
                    json_t **rep, char *err, size_t errlen) {
  int rc = cal_compare_profiles(b, n, &opts, c, err, errlen);
  *rep = rc == 0 ? cal_compare_json(c) : NULL;
  if (rc == 0 && !*rep)
    fail_msg("no JSON tree");
  return rc;
}

/* Issue 49: the software compared is listed (each side's tool.git, in
 * the JSON, the table and markdown), never judged as a difference. */
static void compare_lists_git(void **state) {
  (void)state;
  json_t *b = profile(1.0, 1.0, "X", 0), *n = profile(1.0, 1.0, "X", 0);
  json_object_set_new(json_object_get(b, "tool"), "git", json_string("abc123"));
  json_object_set_new(json_object_get(n, "tool"), "git", json_string("def456"));
  json_t *rep = NULL;
  cal_comparison_t c;
  char err[256];
  assert_int_equal(compare2(b, n, &c, &rep, err, sizeof err), 0);
  assert_string_equal(c.base_git, "abc123");
  assert_string_equal(c.new_git, "def456");
  const json_t *g = json_object_get(rep, "tool_git");
  assert_string_equal(json_string_value(json_object_get(g, "base")), "abc123");
  assert_string_equal(json_string_value(json_object_get(g, "new")), "def456");
  assert_int_equal(json_array_size(json_object_get(rep, "environment_differences")),
                   0);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_int_equal(cal_compare_render_text(&c, 0, f, err, sizeof err), 0);
  fclose(f);
  assert_non_null(strstr(text, "software: tool.git abc123 -> def456"));
  free(text);
  json_decref(rep);
  cal_compare_free(&c);
  json_decref(b);
  json_decref(n);
}

static void compare_report(void **state) {
  (void)state;
  json_t *b = profile(1.0, 1.0, "X", 0);
  json_t *same = profile(1.0, 1.0, "X", 0);
  json_t *worse = profile(0.8, 1.25, "X", 0);
  json_t *rep = NULL;
  cal_comparison_t c;
  char err[256];

  assert_int_equal(compare2(b, same, &c, &rep, err, sizeof err), 0);
  assert_string_equal(json_string_value(json_object_get(rep, "schema")),
                      "calibrate-compare/1");
  /* one run a side: the samples agree, but between-run variance is
   * unknown, so no verdict inside the run-to-run allowance */
  assert_string_equal(verdict_of(rep, "gemm/a"), "inconclusive");
  assert_string_equal(verdict_of(rep, "gemm/b"), "inconclusive");
  assert_true(json_integer_value(json_object_get(find_point(rep, "gemm/a"),
                                                 "runs_needed")) >= 2);
  const json_t *s = json_object_get(rep, "summary");
  assert_int_equal(json_integer_value(json_object_get(s, "within_run_allowance")), 2);
  assert_int_equal(json_integer_value(json_object_get(s, "compared")), 2);
  assert_true(json_is_false(json_object_get(s, "regression")));
  assert_double_equal(json_number_value(json_object_get(s, "geomean")), 1.0, 1e-12);
  assert_int_equal(json_array_size(json_object_get(rep, "not_compared")), 1);
  /* gflops and latency_ms; the null figures are left out */
  assert_int_equal(json_array_size(json_object_get(rep, "top_level")), 2);
  json_decref(rep);
  cal_compare_free(&c);

  assert_int_equal(compare2(b, worse, &c, &rep, err, sizeof err), 0);
  assert_string_equal(verdict_of(rep, "gemm/a"), "regressed");
  assert_string_equal(verdict_of(rep, "gemm/b"), "regressed");
  const json_t *a = find_point(rep, "gemm/a");
  assert_double_equal(json_number_value(json_object_get(a, "ratio")), 0.8, 1e-12);
  assert_string_equal(json_string_value(json_object_get(a, "method")), "exact");
  /* 10 vs 10 fully separated */
  assert_double_equal(json_number_value(json_object_get(a, "p")),
                      2.0 / 184756.0, 1e-15);
  s = json_object_get(rep, "summary");
  assert_true(json_is_true(json_object_get(s, "regression")));
  assert_double_equal(json_number_value(json_object_get(s, "geomean")), 0.8, 1e-12);
  /* latency is lower-is-better among the top-level figures */
  const json_t *top = json_array_get(json_object_get(rep, "top_level"), 1);
  assert_string_equal(json_string_value(json_object_get(top, "key")), "latency_ms");
  assert_true(json_is_false(json_object_get(top, "higher_is_better")));
  assert_double_equal(json_number_value(json_object_get(top, "ratio")), 1.25, 1e-12);
  /* renders without error, regression listed */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(cal_compare_render_text(&c, CAL_REPORT_TABLE, f, err,
                                           sizeof err), 0);
  assert_int_equal(cal_compare_render_text(&c, CAL_REPORT_MD, f, err,
                                           sizeof err), 0);
  fclose(f);
  assert_non_null(strstr(buf, "REGRESSED"));
  assert_non_null(strstr(buf, "| **regressed** | `gemm/a`"));
  free(buf);
  json_decref(rep);
  cal_compare_free(&c);

  /* a profile repeating a point id is refused */
  json_t *dup = profile(1.0, 1.0, "X", 1);
  assert_int_equal(compare2(b, dup, &c, &rep, err, sizeof err),
                   CAL_EINVAL);
  assert_non_null(strstr(err, "gemm/a"));
  cal_compare_free(&c);
  json_decref(dup);
  json_decref(b);
  json_decref(same);
  json_decref(worse);
}

static void compare_machine_diff(void **state) {
  (void)state;
  json_t *a = profile(1.0, 1.0, "CPU one", 0), *b = profile(1.0, 1.0, "CPU two", 0);
  cal_compare_diff_t *d = NULL;
  size_t n = 9;
  assert_int_equal(cal_compare_machine_diff(a, b, &d, &n), 0);
  assert_int_equal(n, 1);
  assert_string_equal(d[0].key, "machine.cpu.brand");
  assert_string_equal(json_string_value(d[0].base), "CPU one");
  free(d);
  assert_int_equal(cal_compare_machine_diff(a, a, &d, &n), 0);
  assert_int_equal(n, 0);
  free(d);
  json_decref(a);
  json_decref(b);
}

static void export_formats(void **state) {
  (void)state;
  json_t *p = profile(1.0, 1.0, "X", 0);
  json_t *bmf = cal_export_bmf(p);
  assert_non_null(bmf);
  const json_t *m = json_object_get(json_object_get(bmf, "gemm/a"), "gflops");
  assert_double_equal(json_number_value(json_object_get(m, "value")), 100.45, 1e-12);
  assert_double_equal(json_number_value(json_object_get(m, "lower_value")), 100.2, 1e-12);
  assert_double_equal(json_number_value(json_object_get(m, "upper_value")), 100.7, 1e-12);
  assert_non_null(json_object_get(json_object_get(bmf, "gemm/b"), "ms"));
  assert_null(json_object_get(bmf, "gemm/c")); /* skipped */
  assert_non_null(json_object_get(json_object_get(bmf, "profile"), "gflops"));
  json_decref(bmf);

  json_t *big = cal_export_gab(p, 1), *small = cal_export_gab(p, 0);
  /* bigger: gemm/a + profile/gflops; smaller: gemm/b + profile/latency_ms */
  assert_int_equal(json_array_size(big), 2);
  assert_int_equal(json_array_size(small), 2);
  const json_t *e = json_array_get(big, 0);
  assert_string_equal(json_string_value(json_object_get(e, "name")), "gemm/a");
  assert_string_equal(json_string_value(json_object_get(e, "unit")), "GFLOPS");
  assert_non_null(json_string_value(json_object_get(e, "range")));
  e = json_array_get(small, 0);
  assert_string_equal(json_string_value(json_object_get(e, "name")), "gemm/b");
  assert_string_equal(json_string_value(json_object_get(e, "unit")), "ms");
  json_decref(big);
  json_decref(small);
  json_decref(p);
}

/* ---------------------------------------------------- run-level statistics */

static void t_distribution(void **state) {
  (void)state;
  /* table values: t(10) 0.975 = 2.228, t(4) 0.975 = 2.776, t(1) = 12.706 */
  assert_double_equal(cal_t_p_two_sided(2.228138852, 10), 0.05, 1e-8);
  assert_double_equal(cal_t_quantile(0.975, 4), 2.776445105, 1e-8);
  assert_double_equal(cal_t_quantile(0.975, 1), 12.70620474, 1e-6);
  assert_double_equal(cal_t_quantile(0.025, 4), -2.776445105, 1e-8);
  /* t(1) is Cauchy: P(|T| > 1) = 1/2 */
  assert_double_equal(cal_t_p_two_sided(1.0, 1), 0.5, 1e-12);
  assert_double_equal(cal_t_p_two_sided(0.0, 7), 1.0, 1e-15);
  assert_true(cal_t_p_two_sided(40.0, 8) < 1e-9);
}

static void bh_adjustment(void **state) {
  (void)state;
  /* sorted .005 .01 .03 .04, m = 4: 4*.04/4, 4*.03/3, 4*.01/2, 4*.005/1,
   * then the running minimum from the top */
  const double p[] = {0.01, 0.04, 0.03, 0.005, NAN};
  double q[5];
  assert_int_equal(cal_bh_adjust(p, 5, q), 0);
  assert_double_equal(q[0], 0.02, 1e-15);
  assert_double_equal(q[1], 0.04, 1e-15);
  assert_double_equal(q[2], 0.04, 1e-15);
  assert_double_equal(q[3], 0.02, 1e-15);
  assert_true(isnan(q[4]));
  const double big[] = {0.9, 0.8};
  assert_int_equal(cal_bh_adjust(big, 2, q), 0);
  assert_double_equal(q[0], 0.9, 1e-15);
  assert_double_equal(q[1], 0.9, 1e-15);
}

/* Per-run values with a known run-to-run spread: sd of the logs ~3%. */
static const double run_factor[5] = {1.00, 0.97, 1.03, 0.99, 1.02};
static const double run_factor2[5] = {0.98, 1.03, 0.97, 1.01, 1.00};

static void runs_test_known_variance(void **state) {
  (void)state;
  double b[5], same[5], shifted[5], slow[5];
  for (int i = 0; i < 5; i++) {
    b[i] = 100.0 * run_factor[i];
    same[i] = 100.0 * run_factor2[i];
    shifted[i] = 100.0 * run_factor2[i] * 0.97; /* shift = the spread */
    slow[i] = 100.0 * run_factor2[i] * 0.8;
  }
  cal_runs_test_t t;
  assert_int_equal(cal_runs_test(b, 5, same, 5, 0.95, &t), 0);
  assert_true(t.log_scale);
  assert_true(t.sd_base > 0.02 && t.sd_base < 0.03);
  assert_true(t.p > 0.5);
  assert_true(t.lo < 1.0 && t.hi > 1.0);
  /* a shift the size of the run-to-run spread: not significant */
  assert_int_equal(cal_runs_test(b, 5, shifted, 5, 0.95, &t), 0);
  assert_true(t.p > 0.01);
  assert_true(t.lo < 0.97 && t.hi > 0.97);
  /* 20% with 5 runs a side: certain, and the interval is around 0.8 */
  assert_int_equal(cal_runs_test(b, 5, slow, 5, 0.95, &t), 0);
  assert_true(t.p < 1e-6);
  assert_true(t.lo < 0.8 && t.hi > 0.8 && t.hi < 0.85);
  /* one new run against five stored ones: judged by the base's spread */
  assert_int_equal(cal_runs_test(b, 5, slow, 1, 0.95, &t), 0);
  assert_double_equal(t.df, 4.0, 0);
  assert_true(t.p < 0.01);
  assert_true(isnan(t.sd_new));
  /* a figure that fell to zero: raw scale, ratio 0, certain */
  const double zero[3] = {0, 0, 0}, base55[3] = {55, 54, 56};
  assert_int_equal(cal_runs_test(base55, 3, zero, 3, 0.95, &t), 0);
  assert_false(t.log_scale);
  assert_double_equal(t.ratio, 0.0, 0);
  assert_true(t.p < 1e-3);
  /* not enough runs for any test */
  assert_int_equal(cal_runs_test(b, 1, same, 1, 0.95, &t), CAL_EINVAL);
}

static void runs_needed_single(void **state) {
  (void)state;
  /* a 10% change with an allowance of 15%: a few runs per side */
  size_t n10 = cal_runs_needed(0.90, 0.15, 0.05, 0.01, 0.95);
  assert_true(n10 >= 2 && n10 <= 10);
  /* a bigger change needs no more runs than a smaller one */
  assert_true(cal_runs_needed(0.80, 0.15, 0.05, 0.01, 0.95) <= n10);
  /* showing "unchanged" within 5% near 1.0 */
  size_t n1 = cal_runs_needed(1.0, 0.15, 0.05, 0.01, 0.95);
  assert_true(n1 >= 2 && n1 <= 50);
  /* just inside the threshold: nothing shows it inside in 50 runs */
  assert_int_equal(cal_runs_needed(1.049, 0.15, 0.05, 0.01, 0.95), 0);
}

/* A side of n runs: profile(run factor) each. */
static void side_of(json_t **runs, const double *f, size_t n, double shift) {
  for (size_t i = 0; i < n; i++)
    runs[i] = profile(f[i] * shift, 1.0 / (f[i] * shift), "X", 0);
}

static void side_free(json_t **runs, size_t n) {
  for (size_t i = 0; i < n; i++)
    json_decref(runs[i]);
}

static json_t *compare_n(json_t **b, size_t nb, json_t **n, size_t nn) {
  cal_compare_side_t sb = {(const json_t *const *)b, NULL, nb, "base", NULL};
  cal_compare_side_t sn = {(const json_t *const *)n, NULL, nn, "new", NULL};
  cal_comparison_t c;
  char err[256];
  if (cal_compare_sides(&sb, &sn, &opts, &c, err, sizeof err) < 0)
    fail_msg("compare: %s", err);
  json_t *rep = cal_compare_json(&c);
  cal_compare_free(&c);
  return rep;
}

/* Compares nb base runs with nn new ones: gemm/a's verdict, and gemm/b's
 * unless vb is NULL. */
static void expect_verdicts(json_t **b, size_t nb, json_t **n, size_t nn,
                            const char *va, const char *vb) {
  json_t *rep = compare_n(b, nb, n, nn);
  assert_string_equal(verdict_of(rep, "gemm/a"), va);
  if (vb)
    assert_string_equal(verdict_of(rep, "gemm/b"), vb);
  json_decref(rep);
}

/* The verdict on `id` inconclusive, its reason saying `why`. */
static void expect_inconclusive(json_t **b, size_t nb, json_t **n, size_t nn,
                                const char *id, const char *why) {
  json_t *rep = compare_n(b, nb, n, nn);
  assert_string_equal(verdict_of(rep, id), "inconclusive");
  cal_assert_contains(
      json_string_value(json_object_get(find_point(rep, id), "reason")), why);
  json_decref(rep);
}

static void compare_runs(void **state) {
  (void)state;
  json_t *b[5], *n[5];
  side_of(b, run_factor, 5, 1.0);
  /* A/A with a shift equal to the between-run spread (3%): within-run the
   * samples are certain (0.3% spread), across runs it is noise */
  side_of(n, run_factor2, 5, 0.97);
  json_t *rep = compare_n(b, 5, n, 5);
  const json_t *s = json_object_get(rep, "summary");
  assert_true(json_is_false(json_object_get(s, "regression")));
  assert_int_equal(json_integer_value(json_object_get(s, "runs_base")), 5);
  assert_true(json_number_value(json_object_get(s, "base_run_spread")) > 0.02);
  assert_string_equal(json_string_value(json_object_get(find_point(rep, "gemm/a"),
                                                        "method")),
                      "welch-log-runs");
  json_decref(rep);
  /* the same two sides one run each: the samples' test is certain, yet no
   * regression is called inside the allowance */
  rep = compare_n(b + 1, 1, n + 2, 1);
  assert_true(json_number_value(json_object_get(find_point(rep, "gemm/a"), "p")) < 1e-4);
  assert_string_equal(verdict_of(rep, "gemm/a"), "inconclusive");
  json_decref(rep);
  side_free(n, 5);
  /* 20% slower with 5 runs a side: regressed (both directions of metric) */
  side_of(n, run_factor2, 5, 0.8);
  expect_verdicts(b, 5, n, 5, "regressed", "regressed");
  /* and with one run a side: past the 15% allowance, regressed */
  expect_verdicts(b, 1, n, 1, "regressed", NULL);
  /* ...unless a run marked the point unstable (the machine was busy) */
  json_t *pa = json_array_get(json_object_get(json_object_get(n[0], "gemm"), "points"), 0);
  json_object_set_new(json_object_get(pa, "stats"), "unstable", json_true());
  expect_verdicts(b, 1, n, 1, "inconclusive", "regressed");
  /* with runs, an unstable run is evidence like any other */
  expect_verdicts(b, 5, n, 5, "regressed", NULL);
  /* a point whose threads did not run side by side in a run: the same */
  json_t *pb = json_array_get(json_object_get(json_object_get(n[0], "gemm"), "points"), 1);
  json_object_set_new(pb, "threads_not_parallel", json_string("shared a core"));
  expect_inconclusive(b, 1, n, 1, "gemm/b", "side by side");
  side_free(n, 5);
  /* 10% with one run a side: inside the allowance, inconclusive */
  side_of(n, run_factor, 1, 0.9);
  expect_inconclusive(b, 1, n, 1, "gemm/a", "allowance");
  side_free(n, 1);
  side_free(b, 5);
}

static void compare_many_samples(void **state) {
  (void)state;
  /* 20,000 samples a side: the ratio's interval without n1*n2 ratios */
  enum { N = 20000 };
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  assert_non_null(x);
  assert_non_null(y);
  for (int i = 0; i < N; i++) {
    x[i] = 100.0 + (double)((i * 7919) % N) / N;
    y[i] = 0.9 * (100.0 + (double)((i * 104729) % N) / N);
  }
  cal_ratio_ci_t r;
  cal_mwu_t t;
  assert_int_equal(cal_ratio_ci(x, N, y, N, 0.95, &r), 0);
  assert_int_equal(cal_mwu_test(x, N, y, N, &t), 0);
  assert_true(r.lo <= 0.9 && r.hi >= 0.9 && r.hi - r.lo < 0.001);
  assert_double_equal(r.hl, 0.9, 1e-3);
  assert_true(t.p < 1e-10);
  /* order statistics match a sorted list of all ratios on a small case */
  double a[] = {3, 1, 2, 5}, b[] = {2, 7, 4};
  double all[12];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      all[i * 3 + j] = b[j] / a[i];
  for (int i = 1; i < 12; i++) /* insertion sort */
    for (int j = i; j > 0 && all[j - 1] > all[j]; j--) {
      double tmp = all[j];
      all[j] = all[j - 1];
      all[j - 1] = tmp;
    }
  assert_int_equal(cal_ratio_ci(a, 4, b, 3, 0.5, &r), 0);
  assert_double_equal(r.hl, 0.5 * (all[5] + all[6]), 0);
  free(x);
  free(y);
}

CAL_TEST_MAIN(
    cmocka_unit_test(mwu_exact_separated_7_7),
    cmocka_unit_test(mwu_exact_counts_match_enumeration),
    cmocka_unit_test(mwu_exact_critical_values),
    cmocka_unit_test(mwu_exact_hand_case),
    cmocka_unit_test(mwu_normal_with_ties_hand),
    cmocka_unit_test(mwu_all_tied_and_large), cmocka_unit_test(mwu_bad_input),
    cmocka_unit_test(ratio_ci_hand), cmocka_unit_test(ratio_ci_small_and_zero),
    cmocka_unit_test(ratio_ci_large_normal), cmocka_unit_test(verdict_rules),
    cmocka_unit_test(geomean_and_orientation),
    cmocka_unit_test(compare_report), cmocka_unit_test(compare_machine_diff),
    cmocka_unit_test(t_distribution), cmocka_unit_test(bh_adjustment),
    cmocka_unit_test(runs_test_known_variance),
    cmocka_unit_test(runs_needed_single), cmocka_unit_test(compare_runs),
    cmocka_unit_test(compare_many_samples), cmocka_unit_test(export_formats),
    cmocka_unit_test(compare_lists_git))
