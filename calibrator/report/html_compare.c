/* The comparison part of the report page: a compare report's summary,
 * its ratio chart and the table of its points. */
#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "gnuplot.h"
#include "html.h"
#include "html_internal.h"
#include "profile.h"

#define ESC(f, s) cal_html_escape(f, s)

/* ---- comparison ---- */

static int verdict_series(const char *v) {
  return !strcmp(v, "regressed") ? 0 : !strcmp(v, "improved") ? 1 : 2;
}

/* The ratio chart of a compare report, drawn into dir as compare.svg. */
static int compare_chart(const json_t *rep, const char *dir,
                         const char *templates, const char *suffix,
                         char *name_out, size_t name_len, char *err,
                         size_t errlen) {
  cal_gp_set_t set = {0};
  static const char *const keys[] = {"regressed", "improved",
                                     "unchanged or inconclusive"};
  const json_t *pts = json_object_get(rep, "points");
  size_t i, y = 0;
  const json_t *pt;
  int rc = 0;
  snprintf(name_out, name_len, "compare%s", suffix);
  /* the three series always exist, in this order: colours by verdict */
  json_array_foreach(pts, i, pt) {
    double r = cal_json_num(pt, "ratio", NAN);
    if (!(r > 0))
      continue;
    cal_gp_row_t row = {0};
    row.x = (double)++y;
    row.v[0] = r;
    row.v[1] = cal_json_num(pt, "ci_low", r);
    row.v[2] = cal_json_num(pt, "ci_high", r);
    snprintf(row.text, sizeof row.text, "%s", cal_html_str(pt, "id"));
    int s = verdict_series(cal_html_str(pt, "verdict"));
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
  const char *b = cal_html_str(rep, "base"), *nw = cal_html_str(rep, "new");
  const char *bs = strrchr(b, '/'), *ns = strrchr(nw, '/');
  b = bs && bs[1] ? bs + 1 : b; /* the file names: the title must fit */
  nw = ns && ns[1] ? ns + 1 : nw;
  snprintf(title, sizeof title, "Ratio new / base per point: %.36s%s vs %.36s%s",
           nw, strlen(nw) > 36 ? "..." : "", b, strlen(b) > 36 ? "..." : "");
  const char *labels[1] = {""}, *paths[1] = {""};
  static const char *const cols[] = {"row", "ratio", "ci_low", "ci_high",
                                     "id"};
  double thr = cal_json_num(rep, "threshold", 0.05);
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

static void compare_summary(FILE *f, const json_t *rep) {
  const json_t *sm = json_object_get(rep, "summary");
  fputs("<p>", f);
  ESC(f, cal_html_str(rep, "new"));
  fputs(" against ", f);
  ESC(f, cal_html_str(rep, "base"));
  fprintf(f, ": %.0f points compared, <span class=\"regressed\">%.0f "
             "regressed</span>, <span class=\"improved\">%.0f improved"
             "</span>, %.0f inconclusive, %.0f unchanged; threshold %.3g%%, "
             "alpha %.3g; geometric mean (higher is better) %.4g.</p>\n",
          cal_json_num(sm, "compared", NAN), cal_json_num(sm, "regressed", NAN),
          cal_json_num(sm, "improved", NAN),
          cal_json_num(sm, "inconclusive", NAN),
          cal_json_num(sm, "unchanged", NAN),
          100 * cal_json_num(rep, "threshold", NAN),
          cal_json_num(rep, "alpha", NAN), cal_json_num(sm, "geomean", NAN));
  const json_t *md = json_object_get(rep, "machine_differences");
  if (json_array_size(md)) {
    fputs("<p class=\"warn\">The machines differ:", f);
    size_t i;
    const json_t *d;
    json_array_foreach(md, i, d) {
      fputs(i ? ", " : " ", f);
      ESC(f, cal_html_str(d, "key"));
    }
    fputs("</p>\n", f);
  }
}

static void compare_points(FILE *f, const json_t *rep) {
  fputs("<details><summary>Every point compared (regressions first)"
        "</summary>\n<table>\n<tr><th>point"
        "</th><th>base</th><th>new</th><th>ratio</th><th>interval</th>"
        "<th>verdict</th><th>why</th></tr>\n", f);
  size_t i;
  const json_t *pt;
  json_array_foreach(json_object_get(rep, "points"), i, pt) {
    const char *v = cal_html_str(pt, "verdict");
    fprintf(f, "<tr class=\"%s\">",
            !strcmp(v, "regressed") ? "regressed"
            : !strcmp(v, "improved") ? "improved" : "other");
    cal_html_text_cell(f, cal_html_str(pt, "id"));
    cal_html_num_cell(f, cal_json_num(pt, "base_median", NAN), "");
    cal_html_num_cell(f, cal_json_num(pt, "new_median", NAN), "");
    cal_html_num_cell(f, cal_json_num(pt, "ratio", NAN), "");
    fprintf(f, "<td class=\"n\">%.4g &ndash; %.4g</td>",
            cal_json_num(pt, "ci_low", NAN), cal_json_num(pt, "ci_high", NAN));
    fputs("<td class=\"v\">", f);
    ESC(f, v);
    fputs("</td>", f);
    cal_html_text_cell(f, cal_html_str(pt, "reason"));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</details>\n", f);
}

/* One compare report: tables and chart. */
int cal_html_compare_section(FILE *f, const json_t *rep, const char *dir,
                             const char *templates, size_t idx, char *err,
                             size_t errlen) {
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
