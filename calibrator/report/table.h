/* The readable table of a run: a header line, each section's part (its
 * print function, in cal_sections[] order), the quality notes.  Reads
 * typed results only. */
#ifndef CAL_TABLE_H
#define CAL_TABLE_H

#include <stdio.h>

#include "run_result.h"

void cal_table_print(const cal_run_result_t *r, FILE *out);

/* " ~" when a point is unstable, "" otherwise (for a row's end). */
const char *cal_table_unstable_mark(const cal_point_t *pt);

#endif
