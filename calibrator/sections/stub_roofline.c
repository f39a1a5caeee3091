/* TEMPORARY stub of the roofline section while it is converted to typed
 * results; removed when sections/roofline.c lands. */
#include "run.h"

int cal_roofline_measure(cal_run_t *r) { return 0; }
void cal_roofline_drop(void *result) {}
json_t *cal_roofline_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_roofline_print(const cal_run_t *r, const void *result, FILE *out) {}
