/* The GEMM section's plan and choice (gemm_pick.c): which engine offers
 * which dtype, which of them this run measures, and each dtype's headline,
 * the best verified engine's figure. */
#ifndef CAL_GEMM_PICK_H
#define CAL_GEMM_PICK_H

#include "results.h"

/* Fill g->dtypes from the kernel table's "gemm" kernels, grouped by dtype
 * in table order; `choice` is "auto" (every engine) or the one engine to
 * measure.  Each engine is marked selected and supported (or why not). */
void cal_gemm_plan(cal_gemm_result_t *g, const char *choice);
/* The dtype's headline at each thread count: the highest figure among
 * engines none of whose points failed verification. */
void cal_gemm_pick(cal_gemm_dtype_t *d);
/* The fp32 headline into g->sgemm_best / sgemm_best_n. */
void cal_gemm_pick_fp32(cal_gemm_result_t *g);

#endif
