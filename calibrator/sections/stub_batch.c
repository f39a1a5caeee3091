/* TEMPORARY stub of the batch section while it is converted to typed
 * results; removed when sections/batch.c lands. */
#include "run.h"

int cal_batch_measure(cal_run_t *r) { return 0; }
void cal_batch_drop(void *result) {}
json_t *cal_batch_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_batch_print(const cal_run_t *r, const void *result, FILE *out) {}
