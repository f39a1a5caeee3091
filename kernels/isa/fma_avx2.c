/* AVX2 + FMA3 register-resident loops (compiled with -mavx2 -mfma): 12
 * chains of ymm.  The loops themselves are in fma_body.h. */
#include <immintrin.h>

#include "fma_body.h"

CAL_FMA_LOOP(cal_fma_f64_avx2, CAL_REP12, double, double, __m256d, __m256d, 4,
             _mm256_set1_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd)
CAL_FMA_LOOP(cal_fma_f32_avx2, CAL_REP12, float, float, __m256, __m256, 8,
             _mm256_set1_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps)

static inline double hsum_pd(__m256d s) {
  double lanes[4];
  _mm256_storeu_pd(lanes, s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

CAL_CLOCK_CHAIN(cal_clock_chain_avx2, __m256d, "x", _mm256_setzero_pd,
                _mm256_set1_pd, _mm256_add_pd, hsum_pd)
