/* The batch sweep's keys outside its own object (batch_json.c). */
#ifndef CAL_BATCH_JSON_H
#define CAL_BATCH_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "results.h"
#include "run_result.h"

/* What one example of mode mi (0 prefill, 1 decode, 2 train) is: the
 * model's layers (distinct or cycled, measured or scaled) and its LM head,
 * in words, into buf. */
void cal_batch_workload(const cal_batch_result_t *res, int mi, char *buf,
                        size_t len);
/* The top level's "batch_source": the headline mode's model (preset,
 * shape, layers measured and scaled, vocabulary and head), mode, dtype,
 * engine, workload and why that mode.  b->top_mode >= 0.  New reference;
 * NULL when out of memory. */
json_t *cal_batch_source_json(const cal_run_result_t *r,
                              const cal_batch_result_t *b);

#endif
