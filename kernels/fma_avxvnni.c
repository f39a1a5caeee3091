/* AVX-VNNI int8 dot-product loop: the VEX (ymm) vpdpbusd of CPUs that may
 * lack AVX-512 (compiled with -mavx2 -mavxvnni).  See fma_peak.h. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define DECL_Y(i) __m256i x##i = _mm256_set1_epi32(i);
#define STEP_Y(i) x##i = _mm256_dpbusd_avx_epi32(x##i, va, vb);
#define STORE_Y(i) _mm256_storeu_si256((void *)(out + (i) * 8), x##i);

void cal_dp_int8_avxvnni(int64_t iters, uint32_t a, uint32_t b, int32_t *out) {
  const __m256i va = _mm256_set1_epi32((int)a), vb = _mm256_set1_epi32((int)b);
  CAL_REP12(DECL_Y)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP12(STEP_Y) CAL_REP12(STEP_Y) CAL_REP12(STEP_Y) CAL_REP12(STEP_Y)
  }
  for (; i < iters; i++) {
    CAL_REP12(STEP_Y)
  }
  CAL_REP12(STORE_Y)
}
