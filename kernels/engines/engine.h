/* The engines: one row per library that runs matrix products, read by the
 * GEMM section (its arrays are sized by CAL_ENGINE_COUNT) and by the
 * model workloads (layer, train, LM head) for the one bf16 capability
 * check.  A new engine is a value of cal_engine_t (core/kind.h), its name
 * and one row here. */
#ifndef CAL_ENGINE_H
#define CAL_ENGINE_H

#include "kind.h"

typedef struct cal_engine_row {
  cal_engine_t id;
  /* 0 where the library itself runs bf16 products natively (past the
   * CPU check of cal_bf16_supported), else CAL_EUNSUPP with *why set to a
   * static string; NULL: the engine has no bf16 products */
  int (*bf16)(const char **why);
} cal_engine_row_t;

/* The row of an engine; NULL out of range. */
const cal_engine_row_t *cal_engine_row(cal_engine_t e);

/* The engine of a model workload's products when none is asked: oneDNN
 * for bf16 where it runs bf16 natively (the BLAS this project installs has
 * no sbgemm), else OpenBLAS. */
cal_engine_t cal_engine_default(int bf16);

/* The one bf16 capability check: 0 when `asked` (CAL_ENGINE_BUILTIN: the
 * default engine) runs bf16 products natively on this CPU, else
 * CAL_EUNSUPP with *why set to a static reason. */
int cal_bf16_supported(cal_engine_t asked, const char **why);

#endif
