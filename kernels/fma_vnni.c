/* AVX512_VNNI int8 dot-product loop: vpdpbusd, u8 × s8 into int32
 * (compiled with -mavx512f -mavx512vnni).  See fma_peak.h. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define DECL(i) __m512i x##i = _mm512_set1_epi32(i);
#define STEP(i) x##i = _mm512_dpbusd_epi32(x##i, va, vb);
#define STORE(i) _mm512_storeu_si512((void *)(out + (i) * 16), x##i);

void cal_dp_int8_avx512(int64_t iters, uint32_t a, uint32_t b, int32_t *out) {
  const __m512i va = _mm512_set1_epi32((int)a), vb = _mm512_set1_epi32((int)b);
  CAL_REP16(DECL)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP16(STEP) CAL_REP16(STEP) CAL_REP16(STEP) CAL_REP16(STEP)
  }
  for (; i < iters; i++) {
    CAL_REP16(STEP)
  }
  CAL_REP16(STORE)
}
