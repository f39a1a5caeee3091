/* One product over OpenBLAS for the engine table (engine.h): C[m×n] =
 * A[m×k]·B[k×n], row-major, fp32 (sgemm) or bf16 inputs (sbgemm, where
 * the loaded BLAS has it), over the caller's buffers. */
#include <cblas.h>
#include <stdlib.h>

#include "cal_err.h"
#include "engine.h"
#include "gemm_openblas.h"

typedef struct openblas_mm {
  cal_gemm_dt_t dt;
  int64_t m, n, k;
  void *a, *b;
  float *c;
  cal_sbgemm_fn sbgemm;
} openblas_mm_t;

int cal_openblas_mm_create(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                           void *a, void *b, void *c, void **out) {
  *out = NULL;
  if (m < 1 || n < 1 || k < 1 || !a || !b || !c)
    return CAL_EINVAL;
  if (dt != CAL_GEMM_F32 && dt != CAL_GEMM_BF16)
    return CAL_EUNSUPP;
  cal_sbgemm_fn sb = dt == CAL_GEMM_BF16 ? cal_openblas_sbgemm() : NULL;
  if (dt == CAL_GEMM_BF16 && !sb)
    return CAL_EUNSUPP;
  openblas_mm_t *mm = calloc(1, sizeof *mm);
  if (!mm)
    return CAL_ENOMEM;
  *mm = (openblas_mm_t){dt, m, n, k, a, b, c, sb};
  *out = mm;
  return 0;
}

int cal_openblas_mm_run(void *p) {
  const openblas_mm_t *mm = p;
  const blasint m = (blasint)mm->m, n = (blasint)mm->n, k = (blasint)mm->k;
  if (mm->sbgemm)
    mm->sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
               mm->a, k, mm->b, n, 0.0f, mm->c, n);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                mm->a, k, mm->b, n, 0.0f, mm->c, n);
  return 0;
}

const char *cal_openblas_mm_impl(const void *p) {
  return ((const openblas_mm_t *)p)->sbgemm ? "sbgemm" : "sgemm";
}

void cal_openblas_mm_free(void *p) { free(p); }
