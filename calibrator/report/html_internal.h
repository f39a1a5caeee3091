/* What the parts of the report page share: the cell writers and the
 * chart inliner of html.c, and the comparison section of html_compare.c. */
#ifndef CAL_HTML_INTERNAL_H
#define CAL_HTML_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"

/* o[k] as a string, "" when absent */
const char *cal_html_str(const json_t *o, const char *k);
/* a number cell: "%.4g", or an em dash when absent */
void cal_html_num_cell(FILE *f, double v, const char *unit);
/* a text cell, escaped */
void cal_html_text_cell(FILE *f, const char *s);
/* dir/NAME.svg inlined as a figure with its caption; nothing when the
 * chart was not drawn */
void cal_html_inline_svg(FILE *f, const char *dir, const char *name,
                         const char *caption);

/* One comparison: summary, ratio chart (drawn into dir, its name
 * suffixed _idx) and the table of points. */
int cal_html_compare_section(FILE *f, const cal_comparison_t *rep,
                             const char *dir, const char *templates,
                             size_t idx, char *err, size_t errlen);

#endif
