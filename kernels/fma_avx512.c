/* AVX-512 register-resident FMA loops (compiled with -mavx512f).
 * See fma_peak.h for the arithmetic each loop performs. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define DECL_PD(i) __m512d x##i = _mm512_set1_pd((double)(i));
#define STEP_PD(i) x##i = _mm512_fmadd_pd(x##i, vo, vc);
#define STORE_PD(i) _mm512_storeu_pd(out + (i) * 8, x##i);

void cal_fma_f64_avx512(int64_t iters, double one, double c, double *out) {
  const __m512d vo = _mm512_set1_pd(one), vc = _mm512_set1_pd(c);
  CAL_REP16(DECL_PD)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP16(STEP_PD) CAL_REP16(STEP_PD) CAL_REP16(STEP_PD)
    CAL_REP16(STEP_PD)
  }
  for (; i < iters; i++) {
    CAL_REP16(STEP_PD)
  }
  CAL_REP16(STORE_PD)
}

#define DECL_PS(i) __m512 x##i = _mm512_set1_ps((float)(i));
#define STEP_PS(i) x##i = _mm512_fmadd_ps(x##i, vo, vc);
#define STORE_PS(i) _mm512_storeu_ps(out + (i) * 16, x##i);

void cal_fma_f32_avx512(int64_t iters, float one, float c, float *out) {
  const __m512 vo = _mm512_set1_ps(one), vc = _mm512_set1_ps(c);
  CAL_REP16(DECL_PS)
  int64_t i = 0;
  for (; i + CAL_FMA_UNROLL <= iters; i += CAL_FMA_UNROLL) {
    CAL_REP16(STEP_PS) CAL_REP16(STEP_PS) CAL_REP16(STEP_PS)
    CAL_REP16(STEP_PS)
  }
  for (; i < iters; i++) {
    CAL_REP16(STEP_PS)
  }
  CAL_REP16(STORE_PS)
}

#if defined(__x86_64__)
/* One add of the dependent chain, then one independent FMA on accumulator
 * k mod 8: 64 adds (64 cycles) against 64 FMAs (32 cycles of 2 ports). */
#define PAIR(k) "add %[inc], %[x]\n\tvfmadd231pd %[b], %[a], %[z" #k "]\n\t"
#define PAIR8 PAIR(0) PAIR(1) PAIR(2) PAIR(3) PAIR(4) PAIR(5) PAIR(6) PAIR(7)

uint64_t cal_clock_chain_avx512(int64_t iters, uint64_t x) {
  __m512d z0 = _mm512_setzero_pd(), z1 = z0, z2 = z0, z3 = z0, z4 = z0,
          z5 = z0, z6 = z0, z7 = z0;
  const __m512d a = _mm512_set1_pd(1.0), b = _mm512_set1_pd(0.0);
  const uint64_t inc = 1;
  for (int64_t i = 0; i < iters; i++) {
    __asm__ volatile(PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8 PAIR8
                     : [x] "+r"(x), [z0] "+v"(z0), [z1] "+v"(z1),
                       [z2] "+v"(z2), [z3] "+v"(z3), [z4] "+v"(z4),
                       [z5] "+v"(z5), [z6] "+v"(z6), [z7] "+v"(z7)
                     : [inc] "r"(inc), [a] "v"(a), [b] "v"(b)
                     : "cc");
  }
  /* fold the accumulators in so the FMAs are live (they stay 0) */
  __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(z0, z1),
                                          _mm512_add_pd(z2, z3)),
                            _mm512_add_pd(_mm512_add_pd(z4, z5),
                                          _mm512_add_pd(z6, z7)));
  return x + (uint64_t)_mm512_reduce_add_pd(s);
}
#else
uint64_t cal_clock_chain_avx512(int64_t iters, uint64_t x) {
  return cal_clock_chain_scalar(iters, x);
}
#endif
