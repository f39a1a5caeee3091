/* TEMPORARY stub of the attention section while it is converted to typed
 * results; removed when sections/attention.c lands. */
#include "run.h"

int cal_attention_measure(cal_run_t *r) { return 0; }
void cal_attention_drop(void *result) {}
json_t *cal_attention_write(const cal_run_t *r, const void *result) { return json_object(); }
void cal_attention_print(const cal_run_t *r, const void *result, FILE *out) {}
