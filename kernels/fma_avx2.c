/* AVX2 + FMA3 register-resident FMA loops (compiled with -mavx2 -mfma).
 * See fma_peak.h for the arithmetic each loop performs. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define DECL_PD(i) __m256d x##i = _mm256_set1_pd((double)(i));
#define STEP_PD(i) x##i = _mm256_fmadd_pd(x##i, vo, vc);
#define STORE_PD(i) _mm256_storeu_pd(out + (i) * 4, x##i);

void cal_fma_f64_avx2(int64_t iters, double one, double c, double *out) {
  const __m256d vo = _mm256_set1_pd(one), vc = _mm256_set1_pd(c);
  CAL_REP12(DECL_PD)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP12(STEP_PD) CAL_REP12(STEP_PD) CAL_REP12(STEP_PD)
    CAL_REP12(STEP_PD)
  }
  for (; i < iters; i++) {
    CAL_REP12(STEP_PD)
  }
  CAL_REP12(STORE_PD)
}

#define DECL_PS(i) __m256 x##i = _mm256_set1_ps((float)(i));
#define STEP_PS(i) x##i = _mm256_fmadd_ps(x##i, vo, vc);
#define STORE_PS(i) _mm256_storeu_ps(out + (i) * 8, x##i);

void cal_fma_f32_avx2(int64_t iters, float one, float c, float *out) {
  const __m256 vo = _mm256_set1_ps(one), vc = _mm256_set1_ps(c);
  CAL_REP12(DECL_PS)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP12(STEP_PS) CAL_REP12(STEP_PS) CAL_REP12(STEP_PS)
    CAL_REP12(STEP_PS)
  }
  for (; i < iters; i++) {
    CAL_REP12(STEP_PS)
  }
  CAL_REP12(STORE_PS)
}

#if defined(__x86_64__)
#define PAIR(k) "add %[inc], %[x]\n\tvfmadd231pd %[b], %[a], %[z" #k "]\n\t"
#define PAIR8 PAIR(0) PAIR(1) PAIR(2) PAIR(3) PAIR(4) PAIR(5) PAIR(6) PAIR(7)

uint64_t cal_clock_chain_avx2(int64_t iters, uint64_t x) {
  __m256d z0 = _mm256_setzero_pd(), z1 = z0, z2 = z0, z3 = z0, z4 = z0,
          z5 = z0, z6 = z0, z7 = z0;
  const __m256d a = _mm256_set1_pd(1.0), b = _mm256_set1_pd(0.0);
  const uint64_t inc = 1;
  for (int64_t i = 0; i < iters; i++) {
    __asm__ volatile(PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8
                     : [x] "+r"(x), [z0] "+x"(z0), [z1] "+x"(z1),
                       [z2] "+x"(z2), [z3] "+x"(z3), [z4] "+x"(z4),
                       [z5] "+x"(z5), [z6] "+x"(z6), [z7] "+x"(z7)
                     : [inc] "r"(inc), [a] "x"(a), [b] "x"(b)
                     : "cc");
  }
  __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(z0, z1),
                                          _mm256_add_pd(z2, z3)),
                            _mm256_add_pd(_mm256_add_pd(z4, z5),
                                          _mm256_add_pd(z6, z7)));
  double lanes[4];
  _mm256_storeu_pd(lanes, s);
  return x + (uint64_t)(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}
#else
uint64_t cal_clock_chain_avx2(int64_t iters, uint64_t x) {
  return cal_clock_chain_scalar(iters, x);
}
#endif
