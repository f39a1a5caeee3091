/* The report page: sections of the profiles as HTML tables, the charts
 * drawn as SVG in a temporary directory and inlined, the comparison. */
#include "html.h"
#include "html_internal.h"
#include "html_profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_file.h"
#include "cal_out.h"
#include "charts.h"
#include "compare.h"
#include "gnuplot.h"
#include "machine_names.h"
#include "plot.h"
#include "profile.h"

/* ---- text ---- */

/* Length of the UTF-8 sequence at s (1-4), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s) {
  if (s[0] < 0x80)
    return 1;
  size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3
             : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

void cal_html_escape(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = utf8_len(p);
    if (n == 0) {
      fputs("&#xfffd;", f);
      p++;
      continue;
    }
    if (n > 1) {
      fwrite(p, 1, n, f);
      p += n;
      continue;
    }
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, f);
    }
    p++;
  }
}

#define ESC(f, s) cal_html_escape(f, s)
#define str cal_html_str
#define num_cell cal_html_num_cell
#define text_cell cal_html_text_cell
#define inline_svg cal_html_inline_svg

const char *cal_html_str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* a number cell: "%.4g", or an em dash when absent */
void cal_html_num_cell(FILE *f, double v, const char *unit) {
  if (isfinite(v))
    fprintf(f, "<td class=\"n\">%.4g%s%s</td>", v, unit[0] ? " " : "", unit);
  else
    fputs("<td class=\"n\">&mdash;</td>", f);
}

void cal_html_text_cell(FILE *f, const char *s) {
  fputs("<td>", f);
  ESC(f, s);
  fputs("</td>", f);
}

/* ---- the page frame ---- */

static const char page_css[] =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;"
    "color:#111;line-height:1.35;padding:0 1em}"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #0072B2;"
    "padding-bottom:.1em;margin-top:1.6em}h3{margin-bottom:.3em}"
    "h1,h2,h3,td,th,p,li,figcaption{overflow-wrap:anywhere}"
    "table{border-collapse:collapse;margin:.4em 0 1em;font-size:.92em}"
    "th,td{border:1px solid #bbb;padding:.2em .5em;text-align:left;"
    "vertical-align:top}th{background:#eef3f8}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".regressed{color:#b00000;font-weight:bold}.improved{color:#0060a0;"
    "font-weight:bold}td.v{white-space:nowrap}.note{color:#555}.warn{color:#8a4b00}"
    "figure{margin:1em 0;page-break-inside:avoid;break-inside:avoid}"
    "figure svg{width:100%;height:auto;border:1px solid #ddd}"
    ".head td.n{font-size:1.15em;font-weight:bold}"
    ".head .what{font-size:.75em;font-weight:normal;color:#555}"
    "ul.pts{columns:2 26em;font-size:.88em}"
    "@media print{body{max-width:none;margin:0;font-size:10pt}"
    "h2{page-break-after:avoid;break-after:avoid}"
    "table,figure{page-break-inside:avoid;break-inside:avoid}"
    "figure svg{border:none}}";

static void page_start(FILE *f, const char *title) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n<title>",
        f);
  ESC(f, title);
  fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", page_css);
}

static void page_end(FILE *f) {
  fputs("<p class=\"note\">Written by calibrate report. Every figure is a "
        "median of measured samples; intervals are the median's confidence "
        "intervals.</p>\n</body>\n</html>\n", f);
}

/* ---- charts ---- */

/* The temporary chart directory under $TMPDIR or /tmp, removed with its
 * files by cal_out_tmpdir_remove or by a signal that ends the process
 * (cal_out.h). */
static char *chart_dir(int *slot, char *err, size_t errlen) {
  const char *t = getenv("TMPDIR");
  char *d = NULL;
  if (!t || !*t)
    t = "/tmp";
  int rc = cal_out_tmpdir(t, "calibrate-report", &d, slot);
  if (rc < 0)
    snprintf(err, errlen, rc == CAL_ENOMEM ? "out of memory"
                          : "cannot create a temporary directory in %s", t);
  return d;
}

/* dir/NAME.svg inlined: from its <svg element on, with the namespace
 * declarations (URLs, not needed inside HTML) and comments dropped.
 * Nothing when the chart was not drawn. */
void cal_html_inline_svg(FILE *f, const char *dir, const char *name,
                         const char *caption) {
  char path[4096], why[128], *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/%s.svg", dir, name);
  if (access(path, F_OK) != 0 ||
      cal_file_read(path, 16 << 20, &text, &len, why, sizeof why) < 0)
    return;
  char *s = strstr(text, "<svg");
  if (s) {
    fprintf(f, "<figure id=\"chart-%s\">\n", name);
    static const char *const drop[] = {
        " xmlns=\"http://www.w3.org/2000/svg\"",
        " xmlns:xlink=\"http://www.w3.org/1999/xlink\"",
        "\n xmlns=\"http://www.w3.org/2000/svg\"",
        "\n xmlns:xlink=\"http://www.w3.org/1999/xlink\"",
    };
    while (*s) {
      size_t skip = 0;
      for (size_t k = 0; k < sizeof drop / sizeof drop[0] && !skip; k++)
        if (strncmp(s, drop[k], strlen(drop[k])) == 0)
          skip = strlen(drop[k]);
      if (!skip && strncmp(s, "<!--", 4) == 0) {
        char *e = strstr(s, "-->");
        skip = e ? (size_t)(e + 3 - s) : strlen(s);
      }
      if (skip) {
        s += skip;
        continue;
      }
      fputc(*s++, f);
    }
    fputs("<figcaption>", f);
    ESC(f, caption);
    fputs("</figcaption>\n</figure>\n", f);
  }
  free(text);
}

/* ---- the page ---- */

/* The profiles of the page: their views and where they were read. */
typedef struct page_in {
  const cal_profile_view_t *const *views;
  const char *const *paths;
  size_t n;
} page_in_t;

static int render(const page_in_t *in, const cal_comparison_t *reports,
                  size_t nrep, const cal_html_opts_t *o, FILE *f, char *err,
                  size_t errlen) {
  const char *const *paths = in->paths;
  size_t n = in->n;
  int rc = 0, slot;
  char *dir = chart_dir(&slot, err, errlen);
  if (!dir)
    return CAL_EIO;
  /* machines by device_name, by file where two share it (plan's rule) */
  char **names = NULL;
  const char **own = calloc(n ? n : 1, sizeof *own);
  for (size_t i = 0; own && i < n; i++)
    own[i] = in->views[i]->device_name;
  rc = own ? cal_machine_names(own, paths, n, &names) : CAL_ENOMEM;
  free(own);
  if (rc < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (n) {
    cal_plot_opts_t po = {.dir = dir, .format = "svg",
                          .templates = o->templates};
    if ((rc = cal_plot_views(in->views, paths, n, &po, err, errlen)) < 0)
      goto out;
  }
  char title[200];
  if (n)
    snprintf(title, sizeof title, "calibrate report: %.80s%s", names[0],
             n > 1 ? " and others" : "");
  else
    snprintf(title, sizeof title, "calibrate compare");
  page_start(f, title);
  fputs("<h1>", f);
  ESC(f, title);
  fputs("</h1>\n", f);
  if (n) {
    fputs("<p class=\"note\">Profiles:", f);
    for (size_t i = 0; i < n; i++) {
      fputs(i ? ", " : " ", f);
      ESC(f, paths[i]);
    }
    fputs("</p>\n", f);
    cal_html_machine_table(f, in->views, (const char *const *)names, n);
    cal_html_headline_table(f, in->views, (const char *const *)names, n);
  }
  for (size_t r = 0; r < nrep; r++) {
    if (r == 0)
      fputs("<h2>Comparison</h2>\n", f);
    if ((rc = cal_html_compare_section(f, &reports[r], dir, o->templates,
                                        r + 1, err, errlen)) < 0)
      goto out;
  }
  if (n) {
    fputs("<h2>Charts</h2>\n", f);
    const cal_chart_t *ch;
    for (size_t c = 0; (ch = cal_chart_on_page(c)) != NULL; c++)
      inline_svg(f, dir, ch->name, ch->caption);
  }
  for (size_t i = 0; i < n; i++) {
    fputs("<h2>Tables: ", f);
    ESC(f, names[i]);
    fputs("</h2>\n", f);
    cal_html_profile_tables(f, in->views[i]);
  }
  page_end(f);
out:
  /* the charts' directory is gone: the hint must not point into it */
  if (rc == CAL_ENOTFOUND)
    snprintf(err, errlen, "gnuplot not found: install it with `apt-get "
                          "install gnuplot-nox` (the report's charts are "
                          "drawn by it)");
  cal_out_tmpdir_remove(dir, slot);
  cal_machine_names_free(names, n);
  return rc;
}

/* What a page shows: profiles and compare reports. */
typedef struct page_args {
  const page_in_t *in;
  const cal_comparison_t *reports;
  size_t nrep;
  const cal_html_opts_t *o;
} page_args_t;

static int render_page(const void *data, int variant, FILE *f, char *err,
                       size_t errlen) {
  const page_args_t *a = data;
  (void)variant;
  return render(a->in, a->reports, a->nrep, a->o, f, err, errlen);
}

/* Render into a memory buffer. */
static int render_mem(const page_in_t *in, const cal_comparison_t *reports,
                      size_t nrep, const cal_html_opts_t *o, char **html,
                      size_t *len, char *err, size_t errlen) {
  static const cal_reporter_t page = {"html", "the page", render_page, 0};
  page_args_t a = {in, reports, nrep, o};
  return cal_reporter_render_mem(&page, &a, html, len, err, errlen);
}

/* The report page of n profiles, each later one compared with the
 * first, into f. */
static int report_page(const cal_profile_t *const *profiles, size_t n,
                       const cal_html_opts_t *opts, FILE *f, char *err,
                       size_t errlen) {
  cal_html_opts_t o = opts ? *opts : (cal_html_opts_t){0};
  if (n == 0) {
    snprintf(err, errlen, "report: no profile given");
    return CAL_EINVAL;
  }
  cal_comparison_t *reps = calloc(n, sizeof *reps);
  const cal_profile_view_t **views = calloc(n, sizeof *views);
  const char **paths = calloc(n, sizeof *paths);
  int rc = reps && views && paths ? 0 : CAL_ENOMEM;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    paths[i] = profiles[i]->path;
    if (!(views[i] = cal_profile_view(profiles[i])))
      rc = CAL_ENOMEM;
  }
  if (rc < 0) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  /* each later profile against the first */
  for (size_t i = 1; i < n; i++) {
    cal_compare_opts_t co = cal_compare_defaults();
    co.threshold = o.threshold > 0 ? o.threshold : co.threshold;
    co.alpha = o.alpha > 0 ? o.alpha : co.alpha;
    co.base_name = paths[0];
    co.new_name = paths[i];
    if ((rc = cal_compare_loaded(profiles[0], profiles[i], &co, &reps[i - 1],
                                 err, errlen)) < 0)
      goto out;
  }
  page_in_t in = {views, paths, n};
  rc = render(&in, reps, n - 1, &o, f, err, errlen);
out:
  for (size_t i = 0; reps && i < n; i++)
    cal_compare_free(&reps[i]);
  free(reps);
  free(views);
  free(paths);
  return rc;
}

/* The report reporter: the page of a cal_html_in_t. */
static int render_report(const void *data, int variant, FILE *out, char *err,
                         size_t errlen) {
  const cal_html_in_t *in = data;
  (void)variant;
  return report_page(in->profiles, in->n, in->opts, out, err, errlen);
}

const cal_reporter_t cal_html_reporters[] = {
    {"html", "one self-contained HTML page", render_report, 0},
};
const size_t cal_html_nreporters =
    sizeof cal_html_reporters / sizeof cal_html_reporters[0];

int cal_html_render(const cal_profile_t *const *profiles, size_t n,
                    const cal_html_opts_t *opts, char **html, size_t *len,
                    char *err, size_t errlen) {
  cal_html_in_t in = {profiles, n, opts};
  return cal_reporter_render_mem(&cal_html_reporters[0], &in, html, len, err,
                                 errlen);
}

int cal_html_render_compare(const cal_comparison_t *c,
                            const cal_html_opts_t *opts, char **html,
                            size_t *len, char *err, size_t errlen) {
  cal_html_opts_t o = opts ? *opts : (cal_html_opts_t){0};
  page_in_t none = {NULL, NULL, 0};
  return render_mem(&none, c, 1, &o, html, len, err, errlen);
}
