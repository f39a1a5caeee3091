/* One self-contained HTML page of one or more profiles (`calibrate
 * report`, `calibrate compare --format html`): the machine, the headline
 * figures, the tables, every chart as inline SVG drawn by gnuplot's svg
 * terminal, the quality notes, and with two or more profiles the
 * comparison of each against the first (analysis/compare.c).  Nothing on
 * the page refers to anything outside it: no scripts, fonts, images,
 * stylesheets or links.  Every string taken from a profile is escaped.
 * Trees are borrowed and never modified. */
#ifndef CAL_HTML_H
#define CAL_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"
#include "profile.h"
#include "reporter.h"

typedef struct cal_html_opts {
  const char *templates; /* gnuplot templates; NULL: the default lookup */
  double threshold;      /* compare: change that matters; 0: compare's
                            default (cal_compare_defaults) */
  double alpha;          /* compare: false-discovery level; 0: the
                            default */
} cal_html_opts_t;

/* Render the page of n >= 1 loaded profiles into a malloc'd buffer *html
 * of *len bytes.  Charts are drawn in a private
 * temporary directory that is removed afterwards.  Returns 0, or
 * CAL_ENOTFOUND (gnuplot missing; err has the install hint), CAL_ESYS,
 * CAL_EIO, CAL_EINVAL, CAL_ENOMEM with one line in err. */
int cal_html_render(const cal_profile_t *const *profiles, size_t n,
                    const cal_html_opts_t *opts, char **html, size_t *len,
                    char *err, size_t errlen);

/* A comparison (analysis/compare.h) as a page: summary, the table of
 * points and the ratio chart.  Same returns. */
int cal_html_render_compare(const cal_comparison_t *c,
                            const cal_html_opts_t *opts, char **html,
                            size_t *len, char *err, size_t errlen);

/* The same as a cal_render_fn (report/reporter.h) of `compare --format
 * html`: in is a cal_comparison_t, the page written to f. */
int cal_compare_render_html(const void *in, int variant, FILE *f, char *err,
                            size_t errlen);

/* s as HTML text or attribute value: & < > " ' escaped, control
 * characters as spaces, bytes that are not UTF-8 as U+FFFD. */
void cal_html_escape(FILE *f, const char *s);

/* The report page as a reporter (reporter.h), "html": its data is a
 * cal_html_in_t, the page is written to the stream it is given, and it
 * returns as cal_html_render. */
typedef struct cal_html_in {
  const cal_profile_t *const *profiles; /* n >= 1 loaded profiles */
  size_t n;
  const cal_html_opts_t *opts; /* NULL: the defaults */
} cal_html_in_t;

extern const cal_reporter_t cal_html_reporters[];
extern const size_t cal_html_nreporters;

#endif
