/* AVX512_BF16 dot-product loop: vdpbf16ps, bf16 pairs into fp32
 * (compiled with -mavx512f -mavx512bf16).  See fma_peak.h. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define DECL(i) __m512 x##i = _mm512_set1_ps((float)(i));
#define STEP(i) x##i = _mm512_dpbf16_ps(x##i, va, vb);
#define STORE(i) _mm512_storeu_ps(out + (i) * 16, x##i);

void cal_dp_bf16_avx512(int64_t iters, uint32_t a, uint32_t b, float *out) {
  const __m512bh va = (__m512bh)_mm512_set1_epi32((int)a);
  const __m512bh vb = (__m512bh)_mm512_set1_epi32((int)b);
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
