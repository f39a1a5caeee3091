/* TEMPORARY stub of the compute_peak section while it is converted to typed
 * results; removed when sections/compute_peak.c lands. */
#include "run.h"

int cal_compute_peak_measure(cal_run_t *r) { return 0; }
void cal_compute_peak_drop(void *result) {}
json_t *cal_compute_peak_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_compute_peak_print(const cal_run_t *r, const void *result, FILE *out) {}
