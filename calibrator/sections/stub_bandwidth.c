/* TEMPORARY stub of the bandwidth section while it is converted to typed
 * results; removed when sections/bandwidth.c lands. */
#include "run.h"

int cal_bandwidth_measure(cal_run_t *r) { return 0; }
void cal_bandwidth_drop(void *result) {}
json_t *cal_bandwidth_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_bandwidth_print(const cal_run_t *r, const void *result, FILE *out) {}
