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

typedef struct cal_html_opts {
  const char *templates; /* gnuplot templates; NULL: the default lookup */
  double threshold;      /* compare: change that matters; 0: 5% */
  double alpha;          /* compare: false-discovery level; 0: 0.01 */
} cal_html_opts_t;

/* Render the page of n >= 1 profile trees (paths[i] names tree i) into a
 * malloc'd buffer *html of *len bytes.  Charts are drawn in a private
 * temporary directory that is removed afterwards.  Returns 0, or
 * CAL_ENOTFOUND (gnuplot missing; err has the install hint), CAL_ESYS,
 * CAL_EIO, CAL_EINVAL, CAL_ENOMEM with one line in err. */
int cal_html_render(const json_t *const *roots, const char *const *paths,
                    size_t n, const cal_html_opts_t *opts, char **html,
                    size_t *len, char *err, size_t errlen);

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

#endif
