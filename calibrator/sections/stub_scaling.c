/* TEMPORARY stub of the scaling section while it is converted to typed
 * results; removed when sections/scaling.c lands. */
#include "run.h"

int cal_scaling_measure(cal_run_t *r) { return 0; }
void cal_scaling_drop(void *result) {}
json_t *cal_scaling_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_scaling_print(const cal_run_t *r, const void *result, FILE *out) {}
