/* The terminal table and the markdown of a comparison.  Both lay out the
 * typed result only; the cells of a row are formatted once (row_cells)
 * and each format lays them out. */
#include "compare_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "profile.h"

/* A side's label, "" when absent. */
static const char *label(const char *s) { return s ? s : ""; }

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

/* Cells of a point: medians (or over runs the geometric means its ratio
 * is of), ratio, CI, p. */
static void point_cells(const cal_compare_point_t *e, row_cells_t *c) {
  fmt_num(c->base, sizeof c->base, 4, 0,
          e->has_geomean ? e->base_geomean : e->base_median);
  fmt_num(c->newv, sizeof c->newv, 4, 0,
          e->has_geomean ? e->new_geomean : e->new_median);
  fmt_num(c->ratio, sizeof c->ratio, 3, 1, e->ratio);
  if (isfinite(e->ci_low) && isfinite(e->ci_high))
    snprintf(c->ci, sizeof c->ci, "[%.3f, %.3f]", e->ci_low, e->ci_high);
  else
    snprintf(c->ci, sizeof c->ci, "-");
  fmt_num(c->p, sizeof c->p, 2, 0, e->p_adjusted);
}

void cal_compare_each_diff(FILE *f, const cal_comparison_t *cmp,
                           int environment, cal_diff_fn fn) {
  size_t n = environment ? cmp->nenv_diffs : cmp->ndiffs;
  for (size_t i = 0; i < n; i++) {
    const cal_compare_diff_t *e =
        environment ? &cmp->env_diffs[i] : &cmp->diffs[i];
    char *x = json_dumps(e->base, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    char *y = json_dumps(e->newv, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    fn(f, e->key, x ? x : "?", y ? y : "?");
    free(x);
    free(y);
  }
}

static void summary_line(const cal_comparison_t *cmp, char *buf, size_t len) {
  const cal_compare_summary_t *s = &cmp->summary;
  char gm[32];
  snprintf(buf, len,
           "%zu regressed, %zu improved, %zu inconclusive, %zu unchanged of "
           "%zu compared; geometric mean of ratios %s (> 1 = better, over "
           "%zu)",
           s->counts[CAL_VERDICT_REGRESSED], s->counts[CAL_VERDICT_IMPROVED],
           s->counts[CAL_VERDICT_INCONCLUSIVE],
           s->counts[CAL_VERDICT_UNCHANGED], s->compared,
           fmt_num(gm, sizeof gm, 4, 1, s->geomean), s->geomean_points);
}

/* "5 runs (run-to-run spread 1.2%)" for one side. */
static void side_line(size_t n, double sp, char *buf, size_t len) {
  if (isfinite(sp))
    snprintf(buf, len, "%zu runs (run-to-run spread %.1f%%)", n, 100 * sp);
  else
    snprintf(buf, len, "%zu run%s", n, n == 1 ? "" : "s");
}

/* The lines that count points instead of listing them: never decidable
 * (too few samples) and, with one run a side, inside the allowance. */
static void count_lines(FILE *f, const cal_comparison_t *cmp, int md) {
  const cal_compare_summary_t *s = &cmp->summary;
  size_t und = s->undecidable, in = s->within_run_allowance;
  const char *pre = md ? "\n" : "";
  double speed = s->machine_speed_ratio;
  if (cal_machine_moved(speed, cmp->opts.threshold))
    fprintf(f, "%sThe machine itself ran at %.2f times its base speed in the new "
            "run (fp32 FMA loop at one thread): single runs of it cannot be "
            "compared; every point is inconclusive. Alternate several runs "
            "per side.\n", pre, speed);
  if (und)
    fprintf(f, "%s%zu point%s can never be decided at alpha "
            "%g (too few samples for the test); not listed.\n", pre, und,
            und == 1 ? "" : "s", cmp->opts.alpha);
  if (in) {
    fprintf(f, "%s%zu point%s inconclusive with one run per "
            "side: inside the run-to-run allowance of %g%%", pre, in,
            in == 1 ? "" : "s", 100 * cmp->opts.run_allowance);
    double al = cmp->opts.run_allowance;
    if (s->runs_needed_median)
      fprintf(f, "; about %zu runs per side would decide "
              "half of them, %zu nearly all",
              s->runs_needed_median, s->runs_needed_most);
    else
      fprintf(f, "; at the run-to-run spread the allowance implies (%.0f%%) "
              "more than 50 runs per side would be needed; several runs "
              "measure the real spread, often far smaller",
              100 * log1p(al) / (2.5758293035489 * sqrt(2.0)));
    fprintf(f, ".\n");
  }
}

/* One of the id lists closing both formats: ids, each with its reason
 * when skipped is given. */
static void list_ids(FILE *f, const char *const *ids,
                     const cal_compare_skip_t *skipped, size_t n,
                     const char *title, int md) {
  if (!n)
    return;
  fprintf(f, md ? "\n**%s (%zu):** " : "%s (%zu): ", title, n);
  for (size_t i = 0; i < n; i++) {
    const char *id = skipped ? skipped[i].id : ids[i];
    fprintf(f, md ? "%s`%s`" : "%s%s", i ? ", " : "", id);
    if (skipped)
      fprintf(f, " (%s)", skipped[i].reason);
  }
  fputc('\n', f);
}

/* The three id lists closing both formats; titles capitalised in md. */
static void list_all_ids(FILE *f, const cal_comparison_t *c, int md) {
  list_ids(f, c->only_base, NULL, c->nonly_base,
           md ? "Only in base" : "only in base", md);
  list_ids(f, c->only_new, NULL, c->nonly_new,
           md ? "Only in new" : "only in new", md);
  list_ids(f, NULL, c->skipped, c->nskipped,
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
static const char *note_of(const cal_compare_point_t *e) {
  return e->verdict != CAL_VERDICT_UNCHANGED ? e->reason : "";
}

/* The top-level figures' rows: base, new and ratio. */
static void top_rows(FILE *f, const cal_comparison_t *cmp, int md) {
  row_cells_t c;
  for (size_t i = 0; i < cmp->ntops; i++) {
    const cal_compare_top_t *e = &cmp->tops[i];
    fmt_num(c.base, sizeof c.base, 4, 0, e->base);
    fmt_num(c.newv, sizeof c.newv, 4, 0, e->newv);
    fmt_num(c.ratio, sizeof c.ratio, 3, 1, e->ratio);
    if (md)
      fprintf(f, "| %s | %s | %s | %s |\n", e->key, c.base, c.newv, c.ratio);
    else
      fprintf(f, "  %-16s %10s -> %10s  ratio %s\n", e->key, c.base, c.newv,
              c.ratio);
  }
}

/* ------------------------------------------------------------------ table */

static void table_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "different machine: %s %s vs %s\n", key, x, y);
}

static void table_env(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "environment changed: %s %s -> %s\n", key, x, y);
}

/* Whether a point row is shown: undecidable points are only counted;
 * changed = 1 keeps only regressed and improved ones. */
static int shown(const cal_compare_point_t *e, int changed) {
  if (e->undecidable)
    return 0;
  return !changed || e->verdict == CAL_VERDICT_REGRESSED ||
         e->verdict == CAL_VERDICT_IMPROVED;
}

static size_t count_shown(const cal_comparison_t *c, int changed) {
  size_t n = 0;
  for (size_t i = 0; i < c->npoints; i++)
    n += (size_t)shown(&c->points[i], changed);
  return n;
}

static void table_points(FILE *f, const cal_comparison_t *cmp, int changed) {
  row_cells_t c;
  int w = 4;
  for (size_t i = 0; i < cmp->npoints; i++) {
    int l = (int)strlen(cmp->points[i].id);
    if (shown(&cmp->points[i], changed) && l > w)
      w = l;
  }
  fprintf(f, "%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
          "verdict", w, "id", "metric", "base", "new", "ratio", "CI", "p adj",
          "note");
  for (size_t i = 0; i < cmp->npoints; i++) {
    const cal_compare_point_t *e = &cmp->points[i];
    if (!shown(e, changed))
      continue;
    point_cells(e, &c);
    fprintf(f, "%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
            e->verdict == CAL_VERDICT_REGRESSED ? "REGRESSED"
                                                : cal_verdict_name(e->verdict),
            w, e->id, e->metric, c.base, c.newv, c.ratio, c.ci, c.p,
            note_of(e));
  }
}

static void render_table(const cal_comparison_t *c, FILE *f) {
  const cal_compare_summary_t *s = &c->summary;
  char line[512], sb[96], sn[96];
  fprintf(f, "verdict: %s\n",
          s->counts[CAL_VERDICT_REGRESSED] ? "REGRESSION" : "no regression");
  summary_line(c, line, sizeof line);
  fprintf(f, "summary: %s\n", line);
  side_line(s->runs_base, s->base_run_spread, sb, sizeof sb);
  side_line(s->runs_new, s->new_run_spread, sn, sizeof sn);
  fprintf(f, "calibrate compare: %s (%s) -> %s (%s); threshold %g%%, false "
          "discoveries <= %g across points, %.0f%% CI\n",
          label(c->base_label), sb, label(c->new_label), sn,
          100 * c->opts.threshold, c->opts.alpha, 100 * c->opts.ci_level);
  if (c->base_git || c->new_git)
    fprintf(f, "software: tool.git %s -> %s\n", label(c->base_git),
            label(c->new_git));
  cal_compare_each_diff(f, c, 0, table_diff);
  cal_compare_each_diff(f, c, 1, table_env);
  count_lines(f, c, 0);
  if (count_shown(c, 1)) {
    fprintf(f, "\nchanged points:\n");
    table_points(f, c, 1);
  }
  if (!c->only_changed && count_shown(c, 0)) {
    fprintf(f, "\nall points:\n");
    table_points(f, c, 0);
  }
  if (c->ntops)
    fprintf(f, "\ntop-level figures (no samples; ratio only):\n");
  top_rows(f, c, 0);
  fputc('\n', f);
  list_all_ids(f, c, 0);
}

/* --------------------------------------------------------------- markdown */

static void md_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "\n> Different machine: `%s` %s vs %s", key, x, y);
}

static void md_env(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "\n> Environment changed: `%s` %s &rarr; %s", key, x, y);
}

static void md_points(FILE *f, const cal_comparison_t *cmp, int changed) {
  row_cells_t c;
  fprintf(f, "\n| Verdict | Point | Metric | Base | New | Ratio | %.0f%% CI | p adj | Note |\n",
          100 * cmp->opts.ci_level);
  fprintf(f, "|---|---|---|---:|---:|---:|---|---:|---|\n");
  for (size_t i = 0; i < cmp->npoints; i++) {
    const cal_compare_point_t *e = &cmp->points[i];
    if (!shown(e, changed))
      continue;
    point_cells(e, &c);
    fprintf(f, e->verdict != CAL_VERDICT_REGRESSED ? "| %s | `" : "| **%s** | `",
            cal_verdict_name(e->verdict));
    md_cell(f, e->id);
    fprintf(f, "` | %s | %s | %s | %s | %s | %s | ", e->metric, c.base,
            c.newv, c.ratio, c.ci, c.p);
    md_cell(f, note_of(e));
    fprintf(f, " |\n");
  }
}

static void render_md(const cal_comparison_t *c, FILE *f) {
  const cal_compare_summary_t *s = &c->summary;
  char line[512], sb[96], sn[96];
  size_t reg = s->counts[CAL_VERDICT_REGRESSED];
  fprintf(f, "## calibrate compare: ");
  if (reg)
    fprintf(f, ":x: %zu regression%s\n\n", reg, reg == 1 ? "" : "s");
  else
    fprintf(f, ":white_check_mark: no regression\n\n");
  summary_line(c, line, sizeof line);
  fprintf(f, "%s.\n", line);
  side_line(s->runs_base, s->base_run_spread, sb, sizeof sb);
  side_line(s->runs_new, s->new_run_spread, sn, sizeof sn);
  fprintf(f, "\nBase `%s`: %s; new `%s`: %s. Threshold %g%%, false discoveries "
          "<= %g across points.\n", label(c->base_label), sb,
          label(c->new_label), sn, 100 * c->opts.threshold, c->opts.alpha);
  if (c->base_git || c->new_git)
    fprintf(f, "\nSoftware: `tool.git` %s &rarr; %s.\n", label(c->base_git),
            label(c->new_git));
  cal_compare_each_diff(f, c, 0, md_diff);
  cal_compare_each_diff(f, c, 1, md_env);
  if (c->ndiffs || c->nenv_diffs)
    fputc('\n', f);
  count_lines(f, c, 1);
  if (count_shown(c, 1)) {
    fprintf(f, "\n### Changed points\n");
    md_points(f, c, 1);
  }
  size_t all = count_shown(c, 0);
  if (!c->only_changed && all) {
    fprintf(f, "\n<details><summary>All %zu points</summary>\n", all);
    md_points(f, c, 0);
    fprintf(f, "\n</details>\n");
  }
  if (c->ntops)
    fprintf(f, "\n| Top-level figure | Base | New | Ratio |\n|---|---:|---:|---:|\n");
  top_rows(f, c, 1);
  list_all_ids(f, c, 1);
}

/* The reporters' render functions: in is a cal_comparison_t. */
int cal_compare_render_text(const void *in, int variant, FILE *f, char *err,
                            size_t errlen) {
  const cal_comparison_t *c = in;
  if (variant == CAL_REPORT_MD)
    render_md(c, f);
  else
    render_table(c, f);
  if (ferror(f)) { /* the command renders into memory */
    snprintf(err, errlen, "out of memory rendering the report");
    return CAL_ENOMEM;
  }
  return 0;
}
