/* The comparison part of the report page: a comparison's summary, its
 * ratio chart and the table of its points, laid out from the typed
 * result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "gnuplot.h"
#include "html.h"
#include "html_internal.h"
#include "profile.h"

#define ESC(f, s) cal_html_escape(f, s)

/* A side's label, "" when absent. */
static const char *label(const char *s) { return s ? s : ""; }

/* ---- comparison ---- */

static int verdict_series(cal_verdict_t v) {
  return v == CAL_VERDICT_REGRESSED ? 0 : v == CAL_VERDICT_IMPROVED ? 1 : 2;
}

/* The ratio chart of a comparison, drawn into dir as compare.svg. */
static int compare_chart(const cal_comparison_t *rep, const char *dir,
                         const char *templates, const char *suffix,
                         char *name_out, size_t name_len, char *err,
                         size_t errlen) {
  cal_gp_set_t set = {0};
  static const char *const keys[] = {"regressed", "improved",
                                     "unchanged or inconclusive"};
  size_t y = 0;
  int rc = 0;
  snprintf(name_out, name_len, "compare%s", suffix);
  /* the three series always exist, in this order: colours by verdict */
  for (size_t i = 0; i < rep->npoints; i++) {
    const cal_compare_point_t *pt = &rep->points[i];
    double r = pt->ratio;
    if (!(r > 0))
      continue;
    cal_gp_row_t row = {0};
    row.x = (double)++y;
    row.v[0] = r;
    row.v[1] = isfinite(pt->ci_low) ? pt->ci_low : r;
    row.v[2] = isfinite(pt->ci_high) ? pt->ci_high : r;
    snprintf(row.text, sizeof row.text, "%s", pt->id);
    int s = verdict_series(pt->verdict);
    row.lt = s == 0 ? 2 : s == 1 ? 1 : 8;
    row.pt = s == 0 ? 7 : s == 1 ? 5 : 6;
    if ((rc = cal_gp_set_add(&set, 0, keys[s], &row)) < 0) {
      snprintf(err, errlen, "out of memory");
      goto out;
    }
  }
  if (!y) {
    name_out[0] = '\0';
    goto out;
  }
  char title[240];
  const char *b = label(rep->base_label), *nw = label(rep->new_label);
  const char *bs = strrchr(b, '/'), *ns = strrchr(nw, '/');
  b = bs && bs[1] ? bs + 1 : b; /* the file names: the title must fit */
  nw = ns && ns[1] ? ns + 1 : nw;
  snprintf(title, sizeof title, "Ratio new / base per point: %.36s%s vs %.36s%s",
           nw, strlen(nw) > 36 ? "..." : "", b, strlen(b) > 36 ? "..." : "");
  const char *labels[1] = {""}, *paths[1] = {""};
  static const char *const cols[] = {"row", "ratio", "ci_low", "ci_high",
                                     "id"};
  double thr = rep->opts.threshold;
  char hdr[160];
  snprintf(hdr, sizeof hdr, "threshold = %.6g\nnpoints = %zu\n", thr, y);
  cal_gp_chart_t gc = {.dir = dir, .name = name_out, .format = "svg",
                       .templates = cal_gp_template_dir(templates),
                       .title = title, .n = 1, .paths = paths,
                       .labels = labels, .cols = cols, .ncols = 5,
                       .with_text = 1, .extra = hdr,
                       .height = 160 + 16 * (int)y};
  if ((rc = cal_gp_check_template(gc.templates, "compare", err, errlen)) < 0)
    goto out;
  gc.template_name = "compare";
  if ((rc = cal_gp_write_dat(&gc, &set, err, errlen)) < 0 ||
      (rc = cal_gp_write_script(&gc, &set, err, errlen)) < 0 ||
      (rc = cal_gp_run(dir, name_out, "svg", err, errlen)) < 0)
    goto out;
out:
  cal_gp_set_free(&set);
  return rc;
}

/* A paragraph of class cls listing differences: each key, and its base
 * and new values as JSON text. */
static void diff_list(FILE *f, const cal_compare_diff_t *d, size_t n,
                      const char *cls, const char *title) {
  if (!n)
    return;
  fprintf(f, "<p class=\"%s\">", cls);
  ESC(f, title);
  for (size_t i = 0; i < n; i++) {
    char *x = json_dumps(d[i].base, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    char *y = json_dumps(d[i].newv, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    fputs(i ? "; " : " ", f);
    ESC(f, d[i].key);
    fputs(" ", f);
    ESC(f, x ? x : "?");
    fputs(" &rarr; ", f);
    ESC(f, y ? y : "?");
    free(x);
    free(y);
  }
  fputs("</p>\n", f);
}

static void compare_summary(FILE *f, const cal_comparison_t *rep) {
  const cal_compare_summary_t *sm = &rep->summary;
  fputs("<p>", f);
  ESC(f, label(rep->new_label));
  fputs(" against ", f);
  ESC(f, label(rep->base_label));
  fprintf(f, ": %.0f points compared, <span class=\"regressed\">%.0f "
             "regressed</span>, <span class=\"improved\">%.0f improved"
             "</span>, %.0f inconclusive, %.0f unchanged; threshold %.3g%%, "
             "alpha %.3g; geometric mean (higher is better) %.4g.</p>\n",
          (double)sm->compared, (double)sm->counts[CAL_VERDICT_REGRESSED],
          (double)sm->counts[CAL_VERDICT_IMPROVED],
          (double)sm->counts[CAL_VERDICT_INCONCLUSIVE],
          (double)sm->counts[CAL_VERDICT_UNCHANGED],
          100 * rep->opts.threshold, rep->opts.alpha, sm->geomean);
  diff_list(f, rep->diffs, rep->ndiffs, "warn", "The machines differ:");
  diff_list(f, rep->env_diffs, rep->nenv_diffs, "note",
            "The environment changed (the points are judged):");
  if (rep->base_git || rep->new_git) { /* listed, never judged */
    fputs("<p class=\"note\">Software: tool.git ", f);
    ESC(f, label(rep->base_git));
    fputs(" &rarr; ", f);
    ESC(f, label(rep->new_git));
    fputs("</p>\n", f);
  }
}

static void compare_points(FILE *f, const cal_comparison_t *rep) {
  fputs("<details><summary>Every point compared (regressions first)"
        "</summary>\n<table>\n<tr><th>point"
        "</th><th>base</th><th>new</th><th>ratio</th><th>interval</th>"
        "<th>verdict</th><th>why</th></tr>\n", f);
  for (size_t i = 0; i < rep->npoints; i++) {
    const cal_compare_point_t *pt = &rep->points[i];
    fprintf(f, "<tr class=\"%s\">",
            pt->verdict == CAL_VERDICT_REGRESSED  ? "regressed"
            : pt->verdict == CAL_VERDICT_IMPROVED ? "improved"
                                                  : "other");
    cal_html_text_cell(f, pt->id);
    cal_html_num_cell(f, pt->base_median, "");
    cal_html_num_cell(f, pt->new_median, "");
    cal_html_num_cell(f, pt->ratio, "");
    fprintf(f, "<td class=\"n\">%.4g &ndash; %.4g</td>", pt->ci_low,
            pt->ci_high);
    fputs("<td class=\"v\">", f);
    ESC(f, cal_verdict_name(pt->verdict));
    fputs("</td>", f);
    cal_html_text_cell(f, pt->reason);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</details>\n", f);
}

/* One comparison: tables and chart. */
int cal_html_compare_section(FILE *f, const cal_comparison_t *rep,
                             const char *dir, const char *templates,
                             size_t idx, char *err, size_t errlen) {
  char suffix[32], name[64];
  snprintf(suffix, sizeof suffix, "_%zu", idx);
  int rc = compare_chart(rep, dir, templates, suffix, name, sizeof name, err,
                         errlen);
  if (rc < 0)
    return rc;
  compare_summary(f, rep);
  if (name[0])
    cal_html_inline_svg(f, dir, name,
               "Ratio new / base per point with its confidence interval; the "
               "band is the threshold; regressions in red (filled circles), "
               "improvements in blue (squares).");
  compare_points(f, rep);
  return 0;
}

int cal_compare_render_html(const void *in, int variant, FILE *f, char *err,
                            size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  (void)variant;
  int rc = cal_html_render_compare(in, NULL, &buf, &len, err, errlen);
  if (rc == 0 && fwrite(buf, 1, len, f) != len) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
  }
  free(buf);
  return rc;
}
