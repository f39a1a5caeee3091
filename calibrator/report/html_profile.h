/* The parts of the report page that show profiles (html_profile.c). */
#ifndef CAL_HTML_PROFILE_H
#define CAL_HTML_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "view.h"

/* The machines of n profiles side by side, under their names. */
void cal_html_machine_table(FILE *f, const cal_profile_view_t *const *views,
                            const char *const *names, size_t n);
/* The headline figures of n profiles side by side. */
void cal_html_headline_table(FILE *f, const cal_profile_view_t *const *views,
                             const char *const *names, size_t n);
/* One profile's tables (GEMM, compute peak, bandwidth per level,
 * attention, batch sweep) and its quality notes. */
void cal_html_profile_tables(FILE *f, const cal_profile_view_t *v);

#endif
