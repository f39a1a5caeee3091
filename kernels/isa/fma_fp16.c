/* AVX512_FP16 register-resident loop: vfmadd231ph on 32 fp16 lanes
 * (compiled with -mavx512f -mavx512fp16).  Called only when the CPU has
 * AVX512_FP16 (compute_peak.c).
 *
 * fp16 holds integers exactly only up to 2048, so the 16 chains count in
 * rounds: each round restarts chain i at i and runs at most CAL_FP16_ROUND
 * steps of x = x * one + c (one = c = 1: +1 a step, so the lanes stay
 * below 15 + 1024), then adds its lanes, widened to fp32 (vcvtph2ps), to
 * chain i's totals in out.  A round is 16 x 1024 FMAs against 64 widening
 * adds, so the bookkeeping is under 0.5% of the instructions.  Lane l of
 * chain i ends as out[i * 32 + l] = ceil(iters / CAL_FP16_ROUND) * i +
 * iters, exact in fp32 while below 2^24. */
#include <immintrin.h>

#include "compute_peak.h"
#include "fma_rep.h"

#define LANES 32

#define DECL(i, _) __m512h x##i = _mm512_set1_ph((_Float16)(i));
#define STEP(i, _) x##i = _mm512_fmadd_ph(x##i, va, vb);
#define ACC(i, _) add_round(out + (i) * LANES, x##i);

/* out[0..31] += the 32 fp16 lanes of x, in fp32. */
static inline void add_round(float *out, __m512h x) {
  __m512i bits = _mm512_castph_si512(x);
  __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(bits));
  __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(bits, 1));
  _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(out), lo));
  _mm512_storeu_ps(out + 16, _mm512_add_ps(_mm512_loadu_ps(out + 16), hi));
}

void cal_fma_f16_avx512(int64_t iters, float one, float c, float *out) {
  const __m512h va = _mm512_set1_ph((_Float16)one);
  const __m512h vb = _mm512_set1_ph((_Float16)c);
  for (int k = 0; k < CAL_FMA_CHAINS_512 * LANES; k++)
    out[k] = 0.0f;
  for (int64_t done = 0; done < iters;) {
    int64_t n = iters - done < CAL_FP16_ROUND ? iters - done : CAL_FP16_ROUND;
    CAL_REP16(DECL, _)
    int64_t i = 0;
    for (; i + CAL_FMA_UNROLL <= n; i += CAL_FMA_UNROLL) {
      CAL_REP16(STEP, _) CAL_REP16(STEP, _) CAL_REP16(STEP, _)
      CAL_REP16(STEP, _)
    }
    for (; i < n; i++) {
      CAL_REP16(STEP, _)
    }
    CAL_REP16(ACC, _)
    done += n;
  }
}
