/* The terminal table and the markdown of a compare report.  Both read the
 * report tree only; the cells of a row are formatted once (row_cells) and
 * each format lays them out. */
#include "compare_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "profile.h"

static json_int_t integer(const json_t *o, const char *k) {
  return json_integer_value(json_object_get(o, k));
}

/* v with `digits` significant digits (fixed = 0) or decimals (fixed = 1),
 * or "-" for a missing number, into buf. */
static const char *fmt_num(char *buf, size_t len, int digits, int fixed,
                           double v) {
  if (isfinite(v) && fixed)
    snprintf(buf, len, "%.*f", digits, v);
  else if (isfinite(v))
    snprintf(buf, len, "%.*g", digits, v);
  else
    snprintf(buf, len, "-");
  return buf;
}

/* The formatted cells of a point row or a top-level row. */
typedef struct row_cells {
  char base[32], newv[32], ratio[32], ci[48], p[32];
} row_cells_t;

/* Cells of a point (top = 0: medians, CI, p) or of a top-level figure
 * (top = 1: base, new and ratio only). */
static void row_cells(const json_t *e, int top, row_cells_t *c) {
  /* a point over runs shows what its ratio is of: the geometric means */
  int gm = !top && json_is_number(json_object_get(e, "base_geomean"));
  fmt_num(c->base, sizeof c->base, 4, 0,
          cal_json_num(e, top ? "base" : gm ? "base_geomean" : "base_median", NAN));
  fmt_num(c->newv, sizeof c->newv, 4, 0,
          cal_json_num(e, top ? "new" : gm ? "new_geomean" : "new_median", NAN));
  fmt_num(c->ratio, sizeof c->ratio, 3, 1, cal_json_num(e, "ratio", NAN));
  if (top)
    return;
  double lo = cal_json_num(e, "ci_low", NAN), hi = cal_json_num(e, "ci_high", NAN);
  if (isfinite(lo) && isfinite(hi))
    snprintf(c->ci, sizeof c->ci, "[%.3f, %.3f]", lo, hi);
  else
    snprintf(c->ci, sizeof c->ci, "-");
  fmt_num(c->p, sizeof c->p, 2, 0, cal_json_num(e, "p_adjusted", NAN));
}

void cal_compare_each_diff(FILE *f, const json_t *diffs, cal_diff_fn fn) {
  size_t i;
  json_t *e;
  json_array_foreach(diffs, i, e) {
    char *x = json_dumps(json_object_get(e, "base"), JSON_ENCODE_ANY);
    char *y = json_dumps(json_object_get(e, "new"), JSON_ENCODE_ANY);
    fn(f, cal_json_str(e, "key"), x ? x : "?", y ? y : "?");
    free(x);
    free(y);
  }
}

static void summary_line(const json_t *rep, char *buf, size_t len) {
  const json_t *s = json_object_get(rep, "summary");
  char gm[32];
  snprintf(buf, len,
           "%" JSON_INTEGER_FORMAT " regressed, %" JSON_INTEGER_FORMAT
           " improved, %" JSON_INTEGER_FORMAT " inconclusive, %"
           JSON_INTEGER_FORMAT " unchanged of %" JSON_INTEGER_FORMAT
           " compared; geometric mean of ratios %s (> 1 = better, over %"
           JSON_INTEGER_FORMAT ")",
           integer(s, "regressed"), integer(s, "improved"),
           integer(s, "inconclusive"), integer(s, "unchanged"),
           integer(s, "compared"),
           fmt_num(gm, sizeof gm, 4, 1, cal_json_num(s, "geomean", NAN)),
           integer(s, "geomean_points"));
}

/* "5 runs (run-to-run spread 1.2%)" for one side. */
static void side_line(const json_t *s, const char *side, char *buf, size_t len) {
  char k1[32], k2[32];
  snprintf(k1, sizeof k1, "runs_%s", side);
  snprintf(k2, sizeof k2, "%s_run_spread", side);
  json_int_t n = integer(s, k1);
  double sp = cal_json_num(s, k2, NAN);
  if (isfinite(sp))
    snprintf(buf, len, "%" JSON_INTEGER_FORMAT " runs (run-to-run spread %.1f%%)",
             n, 100 * sp);
  else
    snprintf(buf, len, "%" JSON_INTEGER_FORMAT " run%s", n, n == 1 ? "" : "s");
}

/* The lines that count points instead of listing them: never decidable
 * (too few samples) and, with one run a side, inside the allowance. */
static void count_lines(FILE *f, const json_t *rep, int md) {
  const json_t *s = json_object_get(rep, "summary");
  json_int_t und = integer(s, "undecidable"), in = integer(s, "within_run_allowance");
  const char *pre = md ? "\n" : "";
  double speed = cal_json_num(s, "machine_speed_ratio", NAN);
  double t = cal_json_num(rep, "threshold", NAN);
  if (isfinite(speed) && speed > 0 && fabs(log(speed)) > log1p(t))
    fprintf(f, "%sThe machine itself ran at %.2f times its base speed in the new "
            "run (fp32 FMA loop at one thread): single runs of it cannot be "
            "compared; every point is inconclusive. Alternate several runs "
            "per side.\n", pre, speed);
  if (und)
    fprintf(f, "%s%" JSON_INTEGER_FORMAT " point%s can never be decided at alpha "
            "%g (too few samples for the test); not listed.\n", pre, und,
            und == 1 ? "" : "s", cal_json_num(rep, "alpha", NAN));
  if (in) {
    fprintf(f, "%s%" JSON_INTEGER_FORMAT " point%s inconclusive with one run per "
            "side: inside the run-to-run allowance of %g%%", pre, in,
            in == 1 ? "" : "s", 100 * cal_json_num(rep, "run_allowance", NAN));
    double al = cal_json_num(rep, "run_allowance", NAN);
    if (integer(s, "runs_needed_median"))
      fprintf(f, "; about %" JSON_INTEGER_FORMAT " runs per side would decide "
              "half of them, %" JSON_INTEGER_FORMAT " nearly all",
              integer(s, "runs_needed_median"), integer(s, "runs_needed_most"));
    else
      fprintf(f, "; at the run-to-run spread the allowance implies (%.0f%%) "
              "more than 50 runs per side would be needed; several runs "
              "measure the real spread, often far smaller",
              100 * log1p(al) / (2.5758293035489 * sqrt(2.0)));
    fprintf(f, ".\n");
  }
}

static void list_ids(FILE *f, const json_t *arr, const char *title, int md) {
  size_t n = json_array_size(arr), i;
  json_t *v;
  if (!n)
    return;
  fprintf(f, md ? "\n**%s (%zu):** " : "%s (%zu): ", title, n);
  json_array_foreach(arr, i, v) {
    const char *id = json_is_string(v) ? json_string_value(v) : cal_json_str(v, "id");
    fprintf(f, md ? "%s`%s`" : "%s%s", i ? ", " : "", id);
    if (!json_is_string(v))
      fprintf(f, " (%s)", cal_json_str(v, "reason"));
  }
  fputc('\n', f);
}

/* The three id lists closing both formats; titles capitalised in md. */
static void list_all_ids(FILE *f, const json_t *rep, int md) {
  list_ids(f, json_object_get(rep, "only_in_base"),
           md ? "Only in base" : "only in base", md);
  list_ids(f, json_object_get(rep, "only_in_new"),
           md ? "Only in new" : "only in new", md);
  list_ids(f, json_object_get(rep, "not_compared"),
           md ? "Not compared" : "not compared", md);
}

/* Markdown table cells must not hold a bare '|'. */
static void md_cell(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|')
      fputc('\\', f);
    fputc(*s, f);
  }
}

/* The note of a point: its reason unless it is unchanged. */
static const char *note_of(const json_t *e) {
  return strcmp(cal_json_str(e, "verdict"), "unchanged") ? cal_json_str(e, "reason") : "";
}

/* The top-level figures' rows: base, new and ratio. */
static void top_rows(FILE *f, const json_t *tops, int md) {
  row_cells_t c;
  size_t i;
  json_t *e;
  json_array_foreach(tops, i, e) {
    row_cells(e, 1, &c);
    if (md)
      fprintf(f, "| %s | %s | %s | %s |\n", cal_json_str(e, "key"), c.base, c.newv,
              c.ratio);
    else
      fprintf(f, "  %-16s %10s -> %10s  ratio %s\n", cal_json_str(e, "key"), c.base,
              c.newv, c.ratio);
  }
}

/* ------------------------------------------------------------------ table */

static void table_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "different machine: %s %s vs %s\n", key, x, y);
}

/* Whether a point row is shown: undecidable points are only counted;
 * changed = 1 keeps only regressed and improved ones. */
static int shown(const json_t *e, int changed) {
  const char *v = cal_json_str(e, "verdict");
  if (json_is_true(json_object_get(e, "undecidable")))
    return 0;
  return !changed || !strcmp(v, "regressed") || !strcmp(v, "improved");
}

static size_t count_shown(const json_t *points, int changed) {
  size_t n = 0, i;
  json_t *e;
  json_array_foreach(points, i, e) n += (size_t)shown(e, changed);
  return n;
}

static void table_points(FILE *f, const json_t *points, int changed) {
  row_cells_t c;
  int w = 4;
  size_t i;
  json_t *e;
  json_array_foreach(points, i, e) {
    int l = (int)strlen(cal_json_str(e, "id"));
    if (shown(e, changed) && l > w)
      w = l;
  }
  fprintf(f, "%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
          "verdict", w, "id", "metric", "base", "new", "ratio", "CI", "p adj",
          "note");
  json_array_foreach(points, i, e) {
    if (!shown(e, changed))
      continue;
    const char *v = cal_json_str(e, "verdict");
    row_cells(e, 0, &c);
    fprintf(f, "%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
            strcmp(v, "regressed") ? v : "REGRESSED", w, cal_json_str(e, "id"),
            cal_json_str(e, "metric"), c.base, c.newv, c.ratio, c.ci, c.p, note_of(e));
  }
}

static void render_table(const json_t *rep, FILE *f) {
  const json_t *points = json_object_get(rep, "points");
  const json_t *tops = json_object_get(rep, "top_level");
  const json_t *s = json_object_get(rep, "summary");
  char line[512], sb[96], sn[96];
  json_int_t reg = integer(s, "regressed");
  fprintf(f, "verdict: %s\n", reg ? "REGRESSION" : "no regression");
  summary_line(rep, line, sizeof line);
  fprintf(f, "summary: %s\n", line);
  side_line(s, "base", sb, sizeof sb);
  side_line(s, "new", sn, sizeof sn);
  fprintf(f, "calibrate compare: %s (%s) -> %s (%s); threshold %g%%, false "
          "discoveries <= %g across points, %.0f%% CI\n",
          cal_json_str(rep, "base"), sb, cal_json_str(rep, "new"), sn,
          100 * cal_json_num(rep, "threshold", NAN), cal_json_num(rep, "alpha", NAN),
          100 * cal_json_num(rep, "ci_level", NAN));
  cal_compare_each_diff(f, json_object_get(rep, "machine_differences"),
                        table_diff);
  count_lines(f, rep, 0);
  if (count_shown(points, 1)) {
    fprintf(f, "\nchanged points:\n");
    table_points(f, points, 1);
  }
  int only = json_is_true(json_object_get(rep, "only_changed"));
  if (!only && count_shown(points, 0)) {
    fprintf(f, "\nall points:\n");
    table_points(f, points, 0);
  }
  if (json_array_size(tops))
    fprintf(f, "\ntop-level figures (no samples; ratio only):\n");
  top_rows(f, tops, 0);
  fputc('\n', f);
  list_all_ids(f, rep, 0);
}

/* --------------------------------------------------------------- markdown */

static void md_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "\n> Different machine: `%s` %s vs %s", key, x, y);
}

static void md_points(FILE *f, const json_t *points, double ci_level,
                      int changed) {
  row_cells_t c;
  size_t i;
  json_t *e;
  fprintf(f, "\n| Verdict | Point | Metric | Base | New | Ratio | %.0f%% CI | p adj | Note |\n",
          100 * ci_level);
  fprintf(f, "|---|---|---|---:|---:|---:|---|---:|---|\n");
  json_array_foreach(points, i, e) {
    if (!shown(e, changed))
      continue;
    const char *v = cal_json_str(e, "verdict");
    row_cells(e, 0, &c);
    fprintf(f, strcmp(v, "regressed") ? "| %s | `" : "| **%s** | `", v);
    md_cell(f, cal_json_str(e, "id"));
    fprintf(f, "` | %s | %s | %s | %s | %s | %s | ", cal_json_str(e, "metric"), c.base,
            c.newv, c.ratio, c.ci, c.p);
    md_cell(f, note_of(e));
    fprintf(f, " |\n");
  }
}

static void render_md(const json_t *rep, FILE *f) {
  const json_t *points = json_object_get(rep, "points");
  const json_t *tops = json_object_get(rep, "top_level");
  const json_t *md = json_object_get(rep, "machine_differences");
  const json_t *s = json_object_get(rep, "summary");
  char line[512], sb[96], sn[96];
  double lvl = cal_json_num(rep, "ci_level", NAN);
  json_int_t reg = integer(s, "regressed");
  fprintf(f, "## calibrate compare: ");
  if (reg)
    fprintf(f, ":x: %" JSON_INTEGER_FORMAT " regression%s\n\n", reg,
            reg == 1 ? "" : "s");
  else
    fprintf(f, ":white_check_mark: no regression\n\n");
  summary_line(rep, line, sizeof line);
  fprintf(f, "%s.\n", line);
  side_line(s, "base", sb, sizeof sb);
  side_line(s, "new", sn, sizeof sn);
  fprintf(f, "\nBase `%s`: %s; new `%s`: %s. Threshold %g%%, false discoveries "
          "<= %g across points.\n", cal_json_str(rep, "base"), sb,
          cal_json_str(rep, "new"), sn, 100 * cal_json_num(rep, "threshold", NAN),
          cal_json_num(rep, "alpha", NAN));
  cal_compare_each_diff(f, md, md_diff);
  if (json_array_size(md))
    fputc('\n', f);
  count_lines(f, rep, 1);
  if (count_shown(points, 1)) {
    fprintf(f, "\n### Changed points\n");
    md_points(f, points, lvl, 1);
  }
  int only = json_is_true(json_object_get(rep, "only_changed"));
  size_t all = count_shown(points, 0);
  if (!only && all) {
    fprintf(f, "\n<details><summary>All %zu points</summary>\n", all);
    md_points(f, points, lvl, 0);
    fprintf(f, "\n</details>\n");
  }
  if (json_array_size(tops))
    fprintf(f, "\n| Top-level figure | Base | New | Ratio |\n|---|---:|---:|---:|\n");
  top_rows(f, tops, 1);
  list_all_ids(f, rep, 1);
}

int cal_compare_render(const json_t *report, cal_report_format_t fmt, FILE *f) {
  switch (fmt) {
  case CAL_REPORT_TABLE: render_table(report, f); break;
  case CAL_REPORT_MD: render_md(report, f); break;
  case CAL_REPORT_JSON:
    if (json_dumpf(report, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0)
      return CAL_EIO;
    fputc('\n', f);
    break;
  }
  return ferror(f) ? CAL_EIO : 0;
}
