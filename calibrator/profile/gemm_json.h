/* The GEMM section's keys outside its own object (gemm_json.c). */
#ifndef CAL_GEMM_JSON_H
#define CAL_GEMM_JSON_H

#include <jansson.h>

#include "results.h"

/* The top-level "gemm_best" map: for every dtype the GEMM section
 * considered, its headline figures (the best verified engine's at one
 * pinned thread and all usable threads) and who made them, or why it was
 * not measured.  New reference; NULL when out of memory. */
json_t *cal_gemm_best_json(const cal_gemm_result_t *g);

#endif
