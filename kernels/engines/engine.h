/* The engines: one row per library that runs matrix products, read by the
 * GEMM section (its arrays are sized by CAL_ENGINE_COUNT) and by the
 * model workloads (layer, train, LM head) for the one bf16 capability
 * check.  A new engine is a value of cal_engine_t (core/kind.h), its name
 * and one row here. */
#ifndef CAL_ENGINE_H
#define CAL_ENGINE_H

#include <stdint.h>

#include "gemm_data.h"
#include "kind.h"

typedef struct cal_engine_row {
  cal_engine_t id;
  /* 0 where the library itself runs bf16 products natively (past the
   * CPU check of cal_bf16_supported), else CAL_EUNSUPP with *why set to a
   * static string; NULL: the engine has no bf16 products */
  int (*bf16)(const char **why);
  /* One product C[m×n] = A[m×k]·B[k×n], row-major, over the caller's
   * buffers (dt CAL_GEMM_F32 or CAL_GEMM_BF16: bf16 inputs, fp32 C), set
   * up once and run as often as the caller likes: the model workloads'
   * products.  create: 0, CAL_EINVAL, CAL_EUNSUPP, CAL_ENOMEM; impl: the
   * library's name of what runs (owned by the product); free accepts NULL.
   * NULL for an engine without products (builtin). */
  int (*mm_create)(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                   void *a, void *b, void *c, void **mm);
  int (*mm_run)(void *mm);
  const char *(*mm_impl)(const void *mm);
  void (*mm_free)(void *mm);
} cal_engine_row_t;

/* OpenBLAS's products (openblas_mm.c), the row's mm_* of OpenBLAS. */
int cal_openblas_mm_create(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                           void *a, void *b, void *c, void **mm);
int cal_openblas_mm_run(void *mm);
const char *cal_openblas_mm_impl(const void *mm);
void cal_openblas_mm_free(void *mm);

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
