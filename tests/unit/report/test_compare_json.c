/* Unit tests of what lays a comparison out and of the rules it is judged
 * by: the JSON tree of a hand-made typed result (keys, their order, nulls
 * and absent keys), its table and markdown, the per-point verdict of
 * verdict.c with its single-run rules, and the machine identity diff
 * (profile/identity.c), a side's points (compare_points.c), and the
 * comparison's part of the report page (html_compare.c).
 * covers: calibrator/analysis/compare_points.c
 * covers: calibrator/analysis/compare_machine.c
 * covers: calibrator/report/html_compare.c */
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
#include "compare.h"
#include "compare_internal.h"
#include "compare_json.h"
#include "compare_render.h"
#include "html.h"
#include "identity.h"
#include "reporter.h"
#include "test_util.h"
#include "verdict.h"
#include "view.h"

/* Two points: one by runs (regressed, with geometric means), one on
 * samples whose ratio could not be stated (inconclusive). */
typedef struct fixture {
  cal_comparison_t c;
  cal_compare_point_t pts[2];
  cal_compare_top_t top;
  cal_compare_skip_t skip;
  cal_compare_diff_t diff, env;
  json_t *bv, *nv; /* the machine difference's values (and the env's) */
} fixture_t;

static void unmake(fixture_t *fx) {
  json_decref(fx->bv);
  json_decref(fx->nv);
}

static cal_comparison_t *make(fixture_t *fx) {
  static const char *only_b[] = {"gemm/gone"}, *runs[] = {"a.json", "b.json"};
  cal_comparison_t *c = &fx->c;
  cal_compare_point_t *pts = fx->pts;
  cal_compare_top_t *top = &fx->top;
  cal_compare_skip_t *skip = &fx->skip;
  cal_compare_diff_t *diff = &fx->diff;
  json_t *bv = fx->bv = json_string("X"), *nv = fx->nv = json_string("Y");
  memset(c, 0, sizeof *c);
  c->opts = cal_compare_defaults();
  c->base_label = "base/ ...";
  c->new_label = "new/ ...";
  c->base_runs = runs;
  c->new_runs = runs;
  pts[0] = (cal_compare_point_t){
      .id = "gemm/a", .section = "gemm", .metric = "gflops",
      .higher_is_better = 1, .by_runs = 1, .n_base = 2, .n_new = 2,
      .runs_base = 2, .runs_new = 2, .base_median = 100, .new_median = 75,
      .has_geomean = 1, .base_geomean = 99, .new_geomean = 74, .ratio = 0.75,
      .ratio_judged = 0.75, .ci_low = 0.7, .ci_high = 0.8, .ci_level = 0.95,
      .hl_ratio = NAN, .oriented_ratio = 0.75, .u = NAN, .z = NAN, .df = 2,
      .p = 0.001, .p_adjusted = 0.002, .p_min = 0, .method = "welch-log-runs",
      .base_run_spread = 0.01, .new_run_spread = 0.02,
      .verdict = CAL_VERDICT_REGRESSED, .reason = "worse"};
  pts[1] = (cal_compare_point_t){
      .id = "attention/b", .section = "attention", .metric = "ms",
      .n_base = 5, .n_new = 5, .runs_base = 1, .runs_new = 1,
      .base_median = 0, .new_median = 2, .base_geomean = NAN,
      .new_geomean = NAN, .ratio = NAN, .ratio_judged = 1e308, .ci_low = NAN,
      .ci_high = NAN, .ci_level = 0.95, .hl_ratio = NAN,
      .oriented_ratio = 0, .u = 0, .z = NAN, .df = NAN, .p = 0.5,
      .p_adjusted = 0.5, .p_min = 0.008, .method = "exact",
      .base_run_spread = NAN, .new_run_spread = NAN,
      .verdict = CAL_VERDICT_INCONCLUSIVE, .reason = "no ratio",
      .runs_needed = 7};
  c->points = pts;
  c->npoints = 2;
  *top = (cal_compare_top_t){"latency_ms", 2, 3, 1.5, 0};
  c->tops = top;
  c->ntops = 1;
  *skip = (cal_compare_skip_t){"peak/x", "status failed in base, ok in new"};
  c->skipped = skip;
  c->nskipped = 1;
  c->only_base = only_b;
  c->nonly_base = 1;
  *diff = (cal_compare_diff_t){"machine.cpu.brand", bv, nv, "b.json"};
  c->diffs = diff;
  c->ndiffs = 1;
  fx->env = (cal_compare_diff_t){"tool.version", bv, nv, NULL};
  c->env_diffs = &fx->env;
  c->nenv_diffs = 1;
  c->summary = (cal_compare_summary_t){
      .compared = 2, .counts = {1, 0, 1, 0, 0}, .runs_base = 2,
      .runs_new = 2, .base_run_spread = 0.01, .new_run_spread = 0.02,
      .geomean = 0.75, .geomean_points = 1, .machine_speed_ratio = NAN,
      .regression = 1};
  return c;
}

/* The keys of o in order, joined by ','. */
static void keys_of(const json_t *o, char *buf, size_t len) {
  const char *k;
  json_t *v;
  buf[0] = '\0';
  json_object_foreach((json_t *)o, k, v) {
    strncat(buf, k, len - strlen(buf) - 1);
    strncat(buf, ",", len - strlen(buf) - 1);
  }
}

/* o's keys, in order, are those of want ("a,b,c,"). */
static void assert_keys(const json_t *o, const char *want) {
  char keys[1024];
  keys_of(o, keys, sizeof keys);
  assert_string_equal(keys, want);
}

/* What renderer fn writes of c as `variant`, in memory (free it). */
static char *rendered(cal_render_fn fn, const cal_comparison_t *c,
                      int variant) {
  char err[128];
  cal_test_text_t t;
  FILE *f = cal_test_text_open(&t);
  assert_int_equal(fn(c, variant, f, err, sizeof err), 0);
  return cal_test_text_close(f, &t);
}

static void json_tree(void **state) {
  (void)state;
  fixture_t fx;
  cal_comparison_t *cp = make(&fx), c = *cp;
  json_t *rep = cal_compare_json(&c);
  assert_non_null(rep);
  assert_keys(rep,
                      "schema,base,new,threshold,alpha,ci_level,run_allowance,"
                      "multiple_testing,filter,machine_differences,"
                      "environment_differences,allow_different_machines,points,top_level,only_in_base,"
                      "only_in_new,not_compared,summary,base_runs,new_runs,"
                      "only_changed,tool_git,");
  assert_true(json_is_null(json_object_get(rep, "filter"))); /* no filter */
  const json_t *p0 = json_array_get(json_object_get(rep, "points"), 0);
  assert_keys(p0,
                      "id,section,metric,higher_is_better,n_base,n_new,"
                      "runs_base,runs_new,base_median,new_median,ratio,ci_low,"
                      "ci_high,ci_level,hl_ratio,oriented_ratio,u,z,p,p_min,"
                      "method,df,base_run_spread,new_run_spread,base_geomean,"
                      "new_geomean,p_adjusted,verdict,reason,undecidable,"
                      "runs_needed,");
  assert_true(json_is_null(json_object_get(p0, "runs_needed")));
  assert_string_equal(json_string_value(json_object_get(p0, "verdict")),
                      "regressed");
  const json_t *p1 = json_array_get(json_object_get(rep, "points"), 1);
  assert_keys(p1,
                      "id,section,metric,higher_is_better,n_base,n_new,"
                      "runs_base,runs_new,base_median,new_median,ratio,ci_low,"
                      "ci_high,ci_level,hl_ratio,oriented_ratio,u,z,p,p_min,"
                      "method,base_run_spread,new_run_spread,p_adjusted,"
                      "verdict,reason,undecidable,runs_needed,");
  assert_true(json_is_null(json_object_get(p1, "ratio")));
  assert_true(json_is_real(json_object_get(p1, "oriented_ratio")));
  assert_int_equal(json_integer_value(json_object_get(p1, "runs_needed")), 7);
  /* the summary: runs_needed_* absent when no point needs runs */
  const json_t *s = json_object_get(rep, "summary");
  assert_null(json_object_get(s, "runs_needed_median"));
  assert_true(json_is_null(json_object_get(s, "machine_speed_ratio")));
  assert_true(json_is_true(json_object_get(s, "regression")));
  const json_t *d = json_array_get(json_object_get(rep, "machine_differences"), 0);
  assert_string_equal(json_string_value(json_object_get(d, "new")), "Y");
  assert_string_equal(json_string_value(json_object_get(d, "profile")), "b.json");
  d = json_array_get(json_object_get(rep, "environment_differences"), 0);
  assert_string_equal(json_string_value(json_object_get(d, "key")), "tool.version");
  json_decref(rep);
  /* the renderer: the tree and a newline */
  char *buf = rendered(cal_compare_render_json, &c, 0);
  size_t len = strlen(buf);
  assert_true(len > 2 && buf[len - 1] == '\n' && buf[len - 2] == '}');
  free(buf);
  unmake(&fx);
}

/* The comparison's part of the report page: the summary with the labels
 * escaped, the machines' difference, the chart, and every point's row
 * with its verdict (skipped where gnuplot, which draws the page's charts,
 * is absent). */
static void html_section(void **state) {
  (void)state;
  fixture_t fx;
  cal_comparison_t *c = make(&fx);
  c->new_label = "<new & improved>";
  char *html = NULL, err[256] = "";
  size_t len = 0;
  if (cal_html_render_compare(c, NULL, &html, &len, err, sizeof err) != 0) {
    unmake(&fx);
    if (strstr(err, "gnuplot not found"))
      cal_test_skip("%s", err);
    fail_msg("render: %s", err);
  }
  assert_int_equal(strlen(html), len);
  cal_assert_contains(
      html, "&lt;new &amp; improved&gt; against base/ ...",
      ": 2 points compared, <span class=\"regressed\">1 regressed</span>",
      "1 inconclusive, 0 unchanged",
      "The machines differ: machine.cpu.brand &quot;X&quot; &rarr; "
      "&quot;Y&quot;</p>",
      "The environment changed (the points are judged): tool.version",
      "<tr class=\"regressed\"><td>gemm/a</td>",
      "<tr class=\"other\"><td>attention/b</td>", ">inconclusive</td>",
      "<svg");
  assert_null(strstr(html, "<new &"));
  free(html);
  unmake(&fx);
}

static void text_and_markdown(void **state) {
  (void)state;
  fixture_t fx;
  cal_comparison_t *cp = make(&fx), c = *cp;
  char *buf = rendered(cal_compare_render_text, &c, CAL_REPORT_TABLE);
  assert_non_null(strstr(buf, "verdict: REGRESSION\n"));
  assert_non_null(strstr(buf, "different machine: machine.cpu.brand \"X\" vs \"Y\""));
  assert_non_null(strstr(buf, "environment changed: tool.version \"X\" -> \"Y\""));
  /* over runs the row shows the geometric means its ratio is of */
  cal_assert_contains(buf, "REGRESSED     gemm/a", "99", "[0.700, 0.800]",
                      "only in base (1): gemm/gone\n",
                      "not compared (1): peak/x (status failed",
                      "  latency_ms                2 ->          3  ratio 1.500");
  free(buf);
  c.only_changed = 1;
  buf = rendered(cal_compare_render_text, &c, CAL_REPORT_MD);
  assert_non_null(strstr(buf, ":x: 1 regression\n"));
  assert_non_null(strstr(buf, "> Environment changed: `tool.version`"));
  assert_non_null(strstr(buf, "| **regressed** | `gemm/a` |"));
  assert_null(strstr(buf, "<details>")); /* --only-changed: no full list */
  free(buf);
  unmake(&fx);
}

/* One point at the defaults: threshold 5%, alpha 0.01, allowance 50%. */
static cal_point_judge_t judge(int single, double ratio, double p,
                               int unstable, int moved) {
  cal_compare_opts_t o = cal_compare_defaults();
  cal_point_judge_in_t in = {1, single, unstable, moved, ratio,
                             ratio * 0.98, ratio * 1.02, p, 0.0,
                             o.threshold, o.alpha, o.run_allowance,
                             o.ci_level};
  cal_point_judge_t j;
  cal_verdict_point(&in, &j);
  return j;
}

static void point_rules(void **state) {
  (void)state;
  /* several runs: the threshold decides */
  cal_point_judge_t j = judge(0, 0.8, 1e-4, 0, 0);
  assert_int_equal(j.verdict, CAL_VERDICT_REGRESSED);
  assert_string_equal(j.reason, "significant change worse than the threshold");
  /* one run a side: 20% is inside the 50% allowance */
  j = judge(1, 0.8, 1e-4, 0, 0);
  assert_int_equal(j.verdict, CAL_VERDICT_INCONCLUSIVE);
  assert_true(j.within_allowance);
  assert_string_equal(j.reason, "one run per side: within the run-to-run allowance");
  /* past the allowance: regressed, said so */
  j = judge(1, 0.4, 1e-4, 0, 0);
  assert_int_equal(j.verdict, CAL_VERDICT_REGRESSED);
  assert_string_equal(j.reason, "significant and worse than the run-to-run allowance");
  /* ...unless a run was unstable, or the machine's speed moved */
  j = judge(1, 0.4, 1e-4, 1, 0);
  assert_int_equal(j.verdict, CAL_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(j.reason, "unstable"));
  j = judge(1, 0.4, 1e-4, 1, 1);
  assert_non_null(strstr(j.reason, "machine's own speed"));
  assert_false(j.within_allowance);
  /* with runs, an unstable run is evidence like any other */
  assert_int_equal(judge(0, 0.4, 1e-4, 1, 1).verdict, CAL_VERDICT_REGRESSED);
  /* an unknown p counts as 1 */
  j = judge(0, 0.8, NAN, 0, 0);
  assert_double_equal(j.p, 1.0, 0);
  assert_int_equal(j.verdict, CAL_VERDICT_INCONCLUSIVE);
  /* p_min above alpha: undecidable, whatever the run count */
  cal_point_judge_in_t in = {1, 1, 0, 1, 0.5, 0.4, 0.6, 0.1, 0.1,
                             0.05, 0.01, 0.5, 0.95};
  cal_verdict_point(&in, &j);
  assert_true(j.undecidable);
  assert_string_equal(j.reason, "too few samples: p can never fall below alpha");
}

static void machine_moved(void **state) {
  (void)state;
  assert_false(cal_machine_moved(NAN, 0.05));
  assert_false(cal_machine_moved(1.04, 0.05));
  assert_true(cal_machine_moved(1.06, 0.05));
  assert_true(cal_machine_moved(0.9, 0.05));
  assert_false(cal_machine_moved(0, 0.05));
}

static void machine_diff(void **state) {
  (void)state;
  json_t *a = json_pack("{s:{s:{s:s, s:[s, s]}}, s:{s:s}}", "machine", "cpu",
                        "brand", "A", "isa", "avx2", "fma", "tool", "version",
                        "1");
  json_t *b = json_pack("{s:{s:{s:s, s:[s]}}, s:{s:s}}", "machine", "cpu",
                        "brand", "A", "isa", "avx2", "tool", "version", "1");
  /* profile/identity.c: a key's value by its dotted path */
  assert_string_equal(cal_identity_keys[5], "machine.cpu.isa");
  assert_int_equal(json_array_size(cal_profile_identity(a, 5)), 2);
  assert_string_equal(json_string_value(cal_profile_identity(a, 1)), "A");
  assert_null(cal_profile_identity(a, 0)); /* no vendor */
  assert_null(cal_profile_identity(a, CAL_NIDENTITY_KEYS));
  cal_compare_diff_t *d = NULL;
  size_t n = 0;
  assert_int_equal(cal_compare_machine_diff(a, b, &d, &n), 0);
  assert_int_equal(n, 1);
  assert_string_equal(d[0].key, "machine.cpu.isa");
  assert_int_equal(json_array_size(d[0].base), 2);
  assert_null(d[0].profile);
  free(d);
  /* the tool's version is the environment: listed apart, not the machine */
  json_object_set_new(json_object_get(b, "tool"), "version", json_string("2"));
  assert_int_equal(cal_compare_environment_diff(a, b, &d, &n), 0);
  assert_int_equal(n, 1);
  assert_string_equal(d[0].key, "tool.version");
  free(d);
  assert_int_equal(cal_compare_machine_diff(a, b, &d, &n), 0);
  assert_int_equal(n, 1);
  free(d);
  /* memory totals within an eighth of each other are one machine */
  json_t *m1 = json_integer(16000000000), *m2 = json_integer(15500000000);
  json_t *m3 = json_integer(8000000000);
  assert_string_equal(cal_identity_keys[8], "machine.memory.total_bytes");
  assert_true(cal_identity_same(8, m1, m2));
  assert_false(cal_identity_same(8, m1, m3));
  assert_false(cal_identity_same(7, m1, m2)); /* exact elsewhere */
  assert_true(cal_identity_is_environment(9) && !cal_identity_is_environment(8));
  /* the threads' round trip: one placement within a factor of 2.5 (one
   * L3 read 50-65 ns, two dies 300 ns and more), listed as environment */
  json_t *r1 = json_real(54.0), *r2 = json_real(63.5), *r3 = json_real(330.0);
  assert_string_equal(cal_identity_keys[19], "quality.team_rtt_ns.min");
  assert_true(cal_identity_is_environment(19));
  assert_true(cal_identity_same(19, r1, r2));
  assert_false(cal_identity_same(19, r1, r3));
  json_decref(r1);
  json_decref(r2);
  json_decref(r3);
  json_decref(m1);
  json_decref(m2);
  json_decref(m3);
  json_decref(a);
  json_decref(b);
}

/* A profile tree holding gemm points with these ids (NULL-terminated). */
static json_t *with_ids(const char *const *ids) {
  json_t *pts = json_array();
  for (size_t i = 0; ids[i]; i++)
    json_array_append_new(pts, json_pack("{s:s, s:s, s:s, s:f}", "id", ids[i],
                                         "status", "ok", "metric", "gflops",
                                         "gflops", 1.0));
  return json_pack("{s:{s:o}}", "gemm", "points", pts);
}

static void side_points(void **state) {
  (void)state;
  static const char *const r0[] = {"gemm/b", "gemm/a", NULL};
  static const char *const r1[] = {"gemm/c", "gemm/a", "peak/x", NULL};
  static const char *const r2[] = {"gemm/a", "gemm/a", NULL};
  json_t *runs[3] = {with_ids(r0), with_ids(r1), with_ids(r2)};
  const char *names[3] = {"r0", "r1", "r2"};
  cal_compare_side_t side = {(const json_t *const *)runs, names, 2, "side",
                             NULL};
  cal_side_points_t s = {0};
  char err[128];
  assert_int_equal(cal_side_points_load(&side, "gemm/*", &s, err, sizeof err),
                   0);
  /* the order first seen over the runs; peak/x filtered out */
  assert_int_equal(s.nids, 3);
  assert_string_equal(s.ids[0], "gemm/b");
  assert_string_equal(s.ids[2], "gemm/c");
  assert_int_equal(cal_side_points_find(&s, "gemm/a"), 1);
  assert_int_equal(cal_side_points_find(&s, "peak/x"), -1);
  assert_null(s.at[0 * 2 + 1]); /* gemm/b is not in run 1 */
  assert_string_equal(s.at[1 * 2 + 1]->id, "gemm/a");
  cal_side_points_clear(&s);
  /* a run repeating an id is refused, named */
  side.runs = (const json_t *const *)runs + 1;
  side.names = names + 1;
  assert_int_equal(cal_side_points_load(&side, NULL, &s, err, sizeof err),
                   CAL_EINVAL);
  assert_string_equal(err, "r2: point id \"gemm/a\" appears twice");
  cal_side_points_clear(&s);
  for (size_t i = 0; i < 3; i++)
    json_decref(runs[i]);
}

CAL_TEST_MAIN(
    cmocka_unit_test(json_tree), cmocka_unit_test(text_and_markdown),
    cmocka_unit_test(point_rules), cmocka_unit_test(machine_moved),
    cmocka_unit_test(machine_diff), cmocka_unit_test(side_points),
    cmocka_unit_test(html_section))
