#include "cli.h"
#include "compare.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_err.h"
#include "commands.h"
#include "mwu.h"
#include "stats.h"
#include "profile.h"
#include "verdict.h"

/* ---------------------------------------------------------------- helpers */

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double get_num(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Value at a dotted path ("machine.cpu.brand"), NULL when absent. */
static const json_t *get_path(const json_t *root, const char *path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", path);
  const json_t *node = root;
  char *save = NULL;
  for (char *part = strtok_r(buf, ".", &save); part && node;
       part = strtok_r(NULL, ".", &save))
    node = json_object_get(node, part);
  return node;
}

/* Identity of the machine and BLAS a profile was measured with. */
static const char *const machine_keys[] = {
    "machine.cpu.brand",
    "machine.usable_cores",
    "blas.library",
    "blas.version",
};

json_t *cal_compare_machine_diff(const json_t *base, const json_t *newp) {
  json_t *diffs = json_array();
  if (!diffs)
    return NULL;
  for (size_t i = 0; i < sizeof machine_keys / sizeof machine_keys[0]; i++) {
    const json_t *a = get_path(base, machine_keys[i]);
    const json_t *b = get_path(newp, machine_keys[i]);
    if (!a || !b || json_equal((json_t *)a, (json_t *)b))
      continue;
    if (json_array_append_new(diffs,
                              json_pack("{s:s, s:O, s:O}", "key",
                                        machine_keys[i], "base", a, "new", b))) {
      json_decref(diffs);
      return NULL;
    }
  }
  return diffs;
}

/* ------------------------------------------------------- point collection */

typedef struct point_set {
  json_t *order; /* array of {section, point} in document order */
  json_t *by_id; /* id -> the same entry */
  const char *dup; /* first repeated id, if any (borrowed from the tree) */
} point_set_t;

static int collect(const char *section, json_t *point, void *arg) {
  point_set_t *s = arg;
  const char *id = json_string_value(json_object_get(point, "id"));
  if (!id)
    return 0;
  if (json_object_get(s->by_id, id)) {
    s->dup = id;
    return 1;
  }
  json_t *e = json_pack("{s:s, s:O}", "section", section, "point", point);
  if (!e || json_array_append(s->order, e) || json_object_set(s->by_id, id, e)) {
    json_decref(e);
    return CAL_ENOMEM;
  }
  json_decref(e);
  return 0;
}

static void point_set_clear(point_set_t *s) {
  json_decref(s->order);
  json_decref(s->by_id);
}

static int point_set_load(const json_t *root, point_set_t *s, const char *name,
                          char *err, size_t errlen) {
  s->order = json_array();
  s->by_id = json_object();
  s->dup = NULL;
  if (!s->order || !s->by_id)
    return CAL_ENOMEM;
  int rc = cal_profile_each_point(root, collect, s);
  if (rc < 0)
    return rc;
  if (s->dup) {
    snprintf(err, errlen, "%s: point id \"%s\" appears twice", name, s->dup);
    return CAL_EINVAL;
  }
  return 0;
}

/* Samples of `metric` as a malloc'ed array; NULL with *n = 0 on failure. */
static double *samples_of(const json_t *pt, const char *metric, size_t *n) {
  char key[128];
  snprintf(key, sizeof key, "samples_%s", metric);
  const json_t *arr = json_object_get(pt, key);
  size_t len = json_array_size(arr);
  *n = 0;
  double *x = len ? malloc(len * sizeof *x) : NULL;
  if (!x)
    return NULL;
  for (size_t i = 0; i < len; i++)
    x[i] = json_number_value(json_array_get(arr, i));
  *n = len;
  return x;
}

/* Direction of a point: its own "higher_is_better", else a guess from the
 * metric's name (times are lower-is-better). */
static int higher_is_better(const json_t *pt, const char *metric) {
  const json_t *h = json_object_get(pt, "higher_is_better");
  if (json_is_boolean(h))
    return json_is_true(h);
  size_t len = strlen(metric);
  return !(strcmp(metric, "ms") == 0 ||
           (len > 3 && strcmp(metric + len - 3, "_ms") == 0));
}

/* --------------------------------------------------------------- compare */

/* Judge one point present and ok in both profiles; a new report entry. */
static json_t *judge(const char *id, const char *section, const json_t *bp,
                     const json_t *np, const char *metric,
                     const cal_compare_opts_t *o, int *rc) {
  size_t nb = 0, nn = 0;
  double *xb = samples_of(bp, metric, &nb);
  double *xn = samples_of(np, metric, &nn);
  json_t *e = NULL;
  cal_mwu_t t;
  cal_ratio_ci_t ci;
  *rc = CAL_ENOMEM;
  if (!xb || !xn)
    goto out;
  if ((*rc = cal_mwu_test(xb, nb, xn, nn, &t)) < 0 ||
      (*rc = cal_ratio_ci(xb, nb, xn, nn, o->ci_level, &ci)) < 0)
    goto out;
  int hib = higher_is_better(bp, metric);
  cal_verdict_in_t in = {hib, ci.ratio, ci.lo, ci.hi, t.p, t.p_min,
                         o->threshold, o->alpha};
  const char *reason = NULL;
  cal_verdict_t v = cal_verdict_decide(&in, &reason);
  e = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o,"
                " s:o, s:o, s:f, s:o, s:f, s:f, s:s, s:s, s:s, s:i}",
                "id", id, "section", section, "metric", metric,
                "higher_is_better", hib, "n_base", (json_int_t)nb, "n_new",
                (json_int_t)nn, "base_median", num(cal_median(xb, nb)),
                "new_median", num(cal_median(xn, nn)), "ratio", num(ci.ratio),
                "ci_low", num(ci.lo), "ci_high", num(ci.hi), "ci_level",
                num(ci.level), "hl_ratio", num(ci.hl), "oriented_ratio",
                num(cal_ratio_oriented(ci.ratio, hib)), "u", t.u, "z",
                num(t.z), "p", t.p, "p_min", t.p_min, "method",
                cal_mwu_method_name(t.method), "verdict", cal_verdict_name(v),
                "reason", reason, "_rank", (int)v);
  *rc = e ? 0 : CAL_ENOMEM;
out:
  free(xb);
  free(xn);
  return e;
}

static int by_rank(const void *a, const void *b) {
  const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
  json_int_t rx = json_integer_value(json_object_get(x, "_rank"));
  json_int_t ry = json_integer_value(json_object_get(y, "_rank"));
  json_int_t ox = json_integer_value(json_object_get(x, "_order"));
  json_int_t oy = json_integer_value(json_object_get(y, "_order"));
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return (ox > oy) - (ox < oy);
}

/* Sort the entries by verdict (stable by document order), drop the helper
 * keys; a new array. */
static json_t *sorted_points(json_t *entries) {
  size_t n = json_array_size(entries);
  json_t **v = malloc((n ? n : 1) * sizeof *v);
  json_t *out = json_array();
  if (!v || !out)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    v[i] = json_array_get(entries, i);
    if (json_object_set_new(v[i], "_order", json_integer((json_int_t)i)))
      goto fail;
  }
  qsort(v, n, sizeof *v, by_rank);
  for (size_t i = 0; i < n; i++) {
    json_object_del(v[i], "_rank");
    json_object_del(v[i], "_order");
    if (json_array_append(out, v[i]))
      goto fail;
  }
  free(v);
  return out;
fail:
  free(v);
  json_decref(out);
  return NULL;
}


/* Record a point found in both profiles but not compared: "<what> A in
 * base, B in new". */
static int add_not_compared(json_t *arr, const char *id, const char *what,
                            const char *a, const char *b) {
  char why[160];
  snprintf(why, sizeof why, "%s %s in base, %s in new", what, a, b);
  return json_array_append_new(arr, json_pack("{s:s, s:s}", "id", id,
                                              "reason", why));
}

int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *o, json_t **report,
                         char *err, size_t errlen) {
  point_set_t sb = {0}, sn = {0};
  json_t *rep = NULL, *entries = json_array(), *only_b = json_array(),
         *only_n = json_array(), *skipped = json_array(), *tops = json_array();
  double *oriented = NULL;
  size_t counts[CAL_VERDICT_INFO + 1] = {0};
  int rc = CAL_ENOMEM;
  if (!entries || !only_b || !only_n || !skipped || !tops)
    goto out;
  if ((rc = point_set_load(base, &sb, o->base_name ? o->base_name : "base",
                           err, errlen)) < 0 ||
      (rc = point_set_load(newp, &sn, o->new_name ? o->new_name : "new", err,
                           errlen)) < 0)
    goto out;
  rc = CAL_ENOMEM;
  oriented = malloc((json_array_size(sn.order) + 1) * sizeof *oriented);
  if (!oriented)
    goto out;

  size_t i, n_or = 0;
  json_t *e;
  json_array_foreach(sb.order, i, e) {
    json_t *pt = json_object_get(e, "point");
    const char *id = json_string_value(json_object_get(pt, "id"));
    if (!json_object_get(sn.by_id, id) && json_array_append_new(only_b, json_string(id)))
      goto out;
  }
  json_array_foreach(sn.order, i, e) {
    json_t *np = json_object_get(e, "point");
    const char *id = json_string_value(json_object_get(np, "id"));
    const char *section = json_string_value(json_object_get(e, "section"));
    json_t *be = json_object_get(sb.by_id, id);
    if (!be) {
      if (json_array_append_new(only_n, json_string(id)))
        goto out;
      continue;
    }
    json_t *bp = json_object_get(be, "point");
    const char *bs = json_string_value(json_object_get(bp, "status"));
    const char *ns = json_string_value(json_object_get(np, "status"));
    if (strcmp(bs, "ok") || strcmp(ns, "ok")) {
      if (add_not_compared(skipped, id, "status", bs, ns))
        goto out;
      continue;
    }
    const char *bm = json_string_value(json_object_get(bp, "metric"));
    const char *nm = json_string_value(json_object_get(np, "metric"));
    if (strcmp(bm, nm)) {
      if (add_not_compared(skipped, id, "metric", bm, nm))
        goto out;
      continue;
    }
    json_t *entry = judge(id, section, bp, np, bm, o, &rc);
    if (!entry)
      goto out;
    rc = CAL_ENOMEM;
    cal_verdict_t v = (cal_verdict_t)json_integer_value(json_object_get(entry, "_rank"));
    counts[v]++;
    oriented[n_or++] = get_num(entry, "oriented_ratio");
    if (json_array_append_new(entries, entry))
      goto out;
  }

  for (i = 0; i < CAL_NTOP_FIGURES; i++) {
    double a = get_num(base, cal_top_figures[i].key), b = get_num(newp, cal_top_figures[i].key);
    if (!isfinite(a) || !isfinite(b))
      continue;
    if (json_array_append_new(
            tops, json_pack("{s:s, s:f, s:f, s:o, s:b, s:s}", "key",
                            cal_top_figures[i].key, "base", a, "new", b, "ratio",
                            num(a != 0 ? b / a : NAN), "higher_is_better",
                            cal_top_figures[i].higher_is_better, "verdict",
                            cal_verdict_name(CAL_VERDICT_INFO))))
      goto out;
  }

  size_t used = 0;
  double gm = cal_geomean(oriented, n_or, &used);
  json_t *points = sorted_points(entries);
  if (!points)
    goto out;
  json_t *diffs = cal_compare_machine_diff(base, newp);
  rep = json_pack(
      "{s:s, s:s?, s:s?, s:f, s:f, s:f, s:o*, s:b, s:o, s:O, s:O, s:O, s:O,"
      " s:{s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b}}",
      "schema", CAL_COMPARE_SCHEMA, "base", o->base_name, "new", o->new_name,
      "threshold", o->threshold, "alpha", o->alpha, "ci_level", o->ci_level,
      "machine_differences", diffs, "allow_different_machines", 0, "points",
      points, "top_level", tops, "only_in_base", only_b, "only_in_new", only_n,
      "not_compared", skipped, "summary", "compared", (json_int_t)n_or,
      "regressed", (json_int_t)counts[CAL_VERDICT_REGRESSED], "improved",
      (json_int_t)counts[CAL_VERDICT_IMPROVED], "inconclusive",
      (json_int_t)counts[CAL_VERDICT_INCONCLUSIVE], "unchanged",
      (json_int_t)counts[CAL_VERDICT_UNCHANGED], "geomean", num(gm),
      "geomean_points", (json_int_t)used, "regression",
      counts[CAL_VERDICT_REGRESSED] > 0);
  rc = rep ? 0 : CAL_ENOMEM;
out:
  if (rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory comparing profiles");
  free(oriented);
  point_set_clear(&sb);
  point_set_clear(&sn);
  json_decref(entries);
  json_decref(only_b);
  json_decref(only_n);
  json_decref(skipped);
  json_decref(tops);
  if (rc == 0)
    *report = rep;
  return rc;
}

/* ------------------------------------------------------------- rendering */

static const char *str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

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

static const char *fmt_ci(char *buf, size_t len, const json_t *e) {
  double lo = get_num(e, "ci_low"), hi = get_num(e, "ci_high");
  if (isfinite(lo) && isfinite(hi))
    snprintf(buf, len, "[%.3f, %.3f]", lo, hi);
  else
    snprintf(buf, len, "-");
  return buf;
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
           fmt_num(gm, sizeof gm, 4, 1, get_num(s, "geomean")),
           integer(s, "geomean_points"));
}

static void list_ids(FILE *f, const json_t *arr, const char *title, int md) {
  size_t n = json_array_size(arr), i;
  json_t *v;
  if (!n)
    return;
  fprintf(f, md ? "\n**%s (%zu):** " : "%s (%zu): ", title, n);
  json_array_foreach(arr, i, v) {
    const char *id = json_is_string(v) ? json_string_value(v) : str(v, "id");
    fprintf(f, md ? "%s`%s`" : "%s%s", i ? ", " : "", id);
    if (!json_is_string(v))
      fprintf(f, " (%s)", str(v, "reason"));
  }
  fputc('\n', f);
}

/* Markdown table cells must not hold a bare '|'. */
static void md_cell(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|')
      fputc('\\', f);
    fputc(*s, f);
  }
}

static void render_table(const json_t *rep, FILE *f) {
  const json_t *points = json_object_get(rep, "points");
  char a[32], b[32], c[32], d[48], p[32], line[512];
  int w = 4;
  size_t i;
  json_t *e;
  json_array_foreach(points, i, e) {
    int l = (int)strlen(str(e, "id"));
    if (l > w)
      w = l;
  }
  fprintf(f, "calibrate compare: %s -> %s (threshold %g%%, alpha %g, %.0f%% CI)\n",
          str(rep, "base"), str(rep, "new"), 100 * get_num(rep, "threshold"),
          get_num(rep, "alpha"), 100 * get_num(rep, "ci_level"));
  const json_t *md = json_object_get(rep, "machine_differences");
  json_array_foreach(md, i, e) {
    char *x = json_dumps(json_object_get(e, "base"), JSON_ENCODE_ANY);
    char *y = json_dumps(json_object_get(e, "new"), JSON_ENCODE_ANY);
    fprintf(f, "different machine: %s %s vs %s\n", str(e, "key"), x ? x : "?",
            y ? y : "?");
    free(x);
    free(y);
  }
  if (json_array_size(points)) {
    fprintf(f, "\n%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
            "verdict", w, "id", "metric", "base", "new", "ratio", "CI", "p",
            "note");
    json_array_foreach(points, i, e) {
      const char *v = str(e, "verdict");
      fprintf(f, "%-12s  %-*s  %-14s  %10s  %10s  %6s  %-16s  %8s  %s\n",
              strcmp(v, "regressed") ? v : "REGRESSED", w, str(e, "id"),
              str(e, "metric"),
              fmt_num(a, sizeof a, 4, 0, get_num(e, "base_median")),
              fmt_num(b, sizeof b, 4, 0, get_num(e, "new_median")),
              fmt_num(c, sizeof c, 3, 1, get_num(e, "ratio")),
              fmt_ci(d, sizeof d, e), fmt_num(p, sizeof p, 2, 0, get_num(e, "p")),
              strcmp(v, "unchanged") ? str(e, "reason") : "");
    }
  }
  const json_t *tops = json_object_get(rep, "top_level");
  if (json_array_size(tops)) {
    fprintf(f, "\ntop-level figures (no samples; ratio only):\n");
    json_array_foreach(tops, i, e) {
      fprintf(f, "  %-16s %10s -> %10s  ratio %s\n", str(e, "key"),
              fmt_num(a, sizeof a, 4, 0, get_num(e, "base")),
              fmt_num(b, sizeof b, 4, 0, get_num(e, "new")),
              fmt_num(c, sizeof c, 3, 1, get_num(e, "ratio")));
    }
  }
  fputc('\n', f);
  list_ids(f, json_object_get(rep, "only_in_base"), "only in base", 0);
  list_ids(f, json_object_get(rep, "only_in_new"), "only in new", 0);
  list_ids(f, json_object_get(rep, "not_compared"), "not compared", 0);
  summary_line(rep, line, sizeof line);
  fprintf(f, "summary: %s\n", line);
  json_int_t reg = integer(json_object_get(rep, "summary"), "regressed");
  fprintf(f, "verdict: %s\n", reg ? "REGRESSION" : "no regression");
}

static void render_md(const json_t *rep, FILE *f) {
  const json_t *points = json_object_get(rep, "points");
  const json_t *s = json_object_get(rep, "summary");
  char a[32], b[32], c[32], d[48], p[32], line[512];
  size_t i;
  json_t *e;
  json_int_t reg = integer(s, "regressed");
  fprintf(f, "## calibrate compare\n\n");
  if (reg)
    fprintf(f, "**:x: %" JSON_INTEGER_FORMAT " regression%s**", reg,
            reg == 1 ? "" : "s");
  else
    fprintf(f, "**:white_check_mark: no regression**");
  fprintf(f, " (threshold %g%%, alpha %g)\n\n", 100 * get_num(rep, "threshold"),
          get_num(rep, "alpha"));
  summary_line(rep, line, sizeof line);
  fprintf(f, "%s.\n", line);
  fprintf(f, "\nBase `%s`, new `%s`.\n", str(rep, "base"), str(rep, "new"));
  const json_t *md = json_object_get(rep, "machine_differences");
  json_array_foreach(md, i, e) {
    char *x = json_dumps(json_object_get(e, "base"), JSON_ENCODE_ANY);
    char *y = json_dumps(json_object_get(e, "new"), JSON_ENCODE_ANY);
    fprintf(f, "\n> Different machine: `%s` %s vs %s", str(e, "key"),
            x ? x : "?", y ? y : "?");
    free(x);
    free(y);
  }
  if (json_array_size(md))
    fputc('\n', f);
  if (json_array_size(points)) {
    fprintf(f, "\n| Verdict | Point | Metric | Base | New | Ratio | %.0f%% CI | p | Note |\n",
            100 * get_num(rep, "ci_level"));
    fprintf(f, "|---|---|---|---:|---:|---:|---|---:|---|\n");
    json_array_foreach(points, i, e) {
      const char *v = str(e, "verdict");
      fprintf(f, strcmp(v, "regressed") ? "| %s | `" : "| **%s** | `", v);
      md_cell(f, str(e, "id"));
      fprintf(f, "` | %s | %s | %s | %s | %s | %s | ", str(e, "metric"),
              fmt_num(a, sizeof a, 4, 0, get_num(e, "base_median")),
              fmt_num(b, sizeof b, 4, 0, get_num(e, "new_median")),
              fmt_num(c, sizeof c, 3, 1, get_num(e, "ratio")),
              fmt_ci(d, sizeof d, e), fmt_num(p, sizeof p, 2, 0, get_num(e, "p")));
      md_cell(f, strcmp(v, "unchanged") ? str(e, "reason") : "");
      fprintf(f, " |\n");
    }
  }
  const json_t *tops = json_object_get(rep, "top_level");
  if (json_array_size(tops)) {
    fprintf(f, "\n| Top-level figure | Base | New | Ratio |\n|---|---:|---:|---:|\n");
    json_array_foreach(tops, i, e) {
      fprintf(f, "| %s | %s | %s | %s |\n", str(e, "key"),
              fmt_num(a, sizeof a, 4, 0, get_num(e, "base")),
              fmt_num(b, sizeof b, 4, 0, get_num(e, "new")),
              fmt_num(c, sizeof c, 3, 1, get_num(e, "ratio")));
    }
  }
  list_ids(f, json_object_get(rep, "only_in_base"), "Only in base", 1);
  list_ids(f, json_object_get(rep, "only_in_new"), "Only in new", 1);
  list_ids(f, json_object_get(rep, "not_compared"), "Not compared", 1);
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

/* ---------------------------------------------------------------- command */

static void compare_usage(FILE *f) {
  fprintf(f,
          "usage: calibrate compare [options] BASE.json NEW.json\n"
          "Compare two profiles point by point (Mann-Whitney U test on the\n"
          "samples, ratio of medians with a %s confidence interval).\n"
          "  --threshold T   change that matters, \"5%%\" or \"0.05\" (default 5%%)\n"
          "  --alpha A       significance level (default 0.01)\n"
          "  --format F      table (default), md or json\n"
          "  -o FILE         write the report to FILE atomically (default stdout)\n"
          "  --warn-only     report regressions but exit 0\n"
          "  --allow-different-machines  compare profiles of different machines\n"
          "  -h, --help      this help\n"
          "Exit: 0 no regression, 1 a regression, 2 usage or input error.\n",
          "95%");
}

int cal_cmd_compare(int argc, char **argv) {
  static const struct option longopts[] = {
      {"threshold", required_argument, NULL, 't'},
      {"alpha", required_argument, NULL, 'a'},
      {"format", required_argument, NULL, 'f'},
      {"output", required_argument, NULL, 'o'},
      {"warn-only", no_argument, NULL, 'w'},
      {"allow-different-machines", no_argument, NULL, 'M'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  cal_compare_opts_t o = {0.05, 0.01, 0.95, NULL, NULL};
  cal_report_format_t fmt = CAL_REPORT_TABLE;
  const char *out_path = "-";
  int warn_only = 0, allow_diff = 0, c, code = CAL_EXIT_USAGE;
  cal_profile_t *base = NULL, *newp = NULL;
  json_t *rep = NULL;
  char *buf = NULL;
  size_t len = 0;
  char err[512];

  optind = 0; /* glibc: full re-initialisation, also for repeated calls */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
    switch (c) {
    case 't':
      if (cal_parse_fraction(optarg, &o.threshold) < 0) {
        fprintf(stderr, "calibrate compare: --threshold %s: give a fraction "
                        "like 5%% or 0.05\n", optarg);
        return CAL_EXIT_USAGE;
      }
      break;
    case 'a':
      if (cal_parse_fraction(optarg, &o.alpha) < 0) {
        fprintf(stderr, "calibrate compare: --alpha %s: give a level in (0, 1) "
                        "like 0.01\n", optarg);
        return CAL_EXIT_USAGE;
      }
      break;
    case 'f':
      if (strcmp(optarg, "table") == 0)
        fmt = CAL_REPORT_TABLE;
      else if (strcmp(optarg, "md") == 0)
        fmt = CAL_REPORT_MD;
      else if (strcmp(optarg, "json") == 0)
        fmt = CAL_REPORT_JSON;
      else {
        fprintf(stderr, "calibrate compare: --format %s: use table, md or json\n",
                optarg);
        return CAL_EXIT_USAGE;
      }
      break;
    case 'o': out_path = optarg; break;
    case 'w': warn_only = 1; break;
    case 'M': allow_diff = 1; break;
    case 'h': compare_usage(stdout); return CAL_EXIT_OK;
    case ':':
      fprintf(stderr, "calibrate compare: %s needs a value\n", argv[optind - 1]);
      return CAL_EXIT_USAGE;
    default:
      fprintf(stderr, "calibrate compare: unknown option %s (see --help)\n",
              argv[optind - 1]);
      return CAL_EXIT_USAGE;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr, "calibrate compare: need two profiles, BASE.json NEW.json "
                    "(see --help)\n");
    return CAL_EXIT_USAGE;
  }
  o.base_name = argv[optind];
  o.new_name = argv[optind + 1];
  if (cal_profile_load(o.base_name, &base, err, sizeof err) < 0 ||
      cal_profile_load(o.new_name, &newp, err, sizeof err) < 0) {
    fprintf(stderr, "calibrate compare: %s\n", err);
    goto out;
  }
  if (cal_compare_profiles(base->root, newp->root, &o, &rep, err, sizeof err) < 0) {
    fprintf(stderr, "calibrate compare: %s\n", err);
    goto out;
  }
  code = CAL_EXIT_USAGE;
  json_t *diffs = json_object_get(rep, "machine_differences");
  if (json_array_size(diffs) && !allow_diff) {
    fprintf(stderr, "calibrate compare: the profiles come from different "
                    "machines (--allow-different-machines to compare anyway):\n");
    size_t i;
    json_t *d;
    json_array_foreach(diffs, i, d) {
      char *x = json_dumps(json_object_get(d, "base"), JSON_ENCODE_ANY);
      char *y = json_dumps(json_object_get(d, "new"), JSON_ENCODE_ANY);
      fprintf(stderr, "  %s: %s in base, %s in new\n", str(d, "key"),
              x ? x : "?", y ? y : "?");
      free(x);
      free(y);
    }
    goto out;
  }
  json_object_set_new(rep, "allow_different_machines", json_boolean(allow_diff));
  code = CAL_EXIT_INTERNAL;
  if (fmt == CAL_REPORT_JSON) {
    if (cal_json_write_atomic(rep, out_path, err, sizeof err) < 0) {
      fprintf(stderr, "calibrate compare: %s\n", err);
      code = CAL_EXIT_USAGE; /* an -o path that cannot be written */
      goto out;
    }
  } else {
    FILE *mf = open_memstream(&buf, &len);
    if (!mf) {
      fprintf(stderr, "calibrate compare: out of memory\n");
      goto out;
    }
    int rc = cal_compare_render(rep, fmt, mf);
    if (fclose(mf) || rc < 0) {
      fprintf(stderr, "calibrate compare: out of memory rendering the report\n");
      goto out;
    }
    if (cal_write_atomic(out_path, buf, len, err, sizeof err) < 0) {
      fprintf(stderr, "calibrate compare: %s\n", err);
      code = CAL_EXIT_USAGE;
      goto out;
    }
  }
  int regressed = json_is_true(
      json_object_get(json_object_get(rep, "summary"), "regression"));
  if (regressed && warn_only)
    fprintf(stderr, "calibrate compare: regressions found; --warn-only, "
                    "exit status 0\n");
  code = regressed && !warn_only ? CAL_EXIT_REGRESSION : CAL_EXIT_OK;
out:
  free(buf);
  json_decref(rep);
  cal_profile_free(base);
  cal_profile_free(newp);
  return code;
}
