#include "engine.h"

#include "cal_err.h"
#include "cal_isa.h"
#include "gemm_onednn.h"
#include "gemm_openblas.h"

static int openblas_bf16(const char **why) {
  if (cal_openblas_sbgemm())
    return 0;
  *why = "BLAS library was built without bfloat16 (no cblas_sbgemm)";
  return CAL_EUNSUPP;
}

static int onednn_bf16(const char **why) {
  return cal_onednn_supported(CAL_GEMM_BF16, why);
}

/* oneDNN's matmul (gemm_onednn.h) behind the row's untyped handles */
static int onednn_create(cal_gemm_dt_t dt, int64_t m, int64_t n, int64_t k,
                         void *a, void *b, void *c, void **mm) {
  cal_onednn_mm_t *p = NULL;
  int rc = cal_onednn_mm_create(dt, m, n, k, a, b, c, &p);
  *mm = p;
  return rc;
}
static int onednn_run(void *mm) { return cal_onednn_mm_run(mm); }
static const char *onednn_impl(const void *mm) { return cal_onednn_mm_impl(mm); }
static void onednn_free(void *mm) { cal_onednn_mm_free(mm); }

static const cal_engine_row_t rows[CAL_ENGINE_COUNT] = {
    [CAL_ENGINE_BUILTIN] = {CAL_ENGINE_BUILTIN, NULL, NULL, NULL, NULL, NULL},
    [CAL_ENGINE_OPENBLAS] = {CAL_ENGINE_OPENBLAS, openblas_bf16,
                             cal_openblas_mm_create, cal_openblas_mm_run,
                             cal_openblas_mm_impl, cal_openblas_mm_free},
    [CAL_ENGINE_ONEDNN] = {CAL_ENGINE_ONEDNN, onednn_bf16, onednn_create,
                           onednn_run, onednn_impl, onednn_free},
};

const cal_engine_row_t *cal_engine_row(cal_engine_t e) {
  return (int)e >= 0 && e < CAL_ENGINE_COUNT ? &rows[e] : NULL;
}

cal_engine_t cal_engine_default(int bf16) {
  const char *why = NULL;
  return bf16 && onednn_bf16(&why) == 0 ? CAL_ENGINE_ONEDNN
                                        : CAL_ENGINE_OPENBLAS;
}

int cal_bf16_supported(cal_engine_t asked, const char **why) {
  cal_engine_t e = asked != CAL_ENGINE_BUILTIN ? asked : cal_engine_default(1);
  const cal_engine_row_t *row = cal_engine_row(e);
  if (!(cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16))) {
    *why = "CPU has no native BF16 instructions (AVX512_BF16 or AMX-BF16)";
    return CAL_EUNSUPP;
  }
  if (!row || !row->bf16) {
    *why = "the engine has no bf16 products";
    return CAL_EUNSUPP;
  }
  int rc = row->bf16(why);
  if (rc < 0 && asked == CAL_ENGINE_BUILTIN && e == CAL_ENGINE_OPENBLAS)
    *why = "neither oneDNN nor the BLAS library runs bf16 natively here";
  return rc;
}
