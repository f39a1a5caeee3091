/* The AVX512_BF16 vocabulary of the bf16 attention loops
 * (attention_bf16_impl.h: BF_DOT, BF_AXPY, BF_CVT32) over vec_ps512.h,
 * shared by the AVX512_BF16 and AMX variants (both compiled with
 * -mavx512bf16).  Not a public header. */
#ifndef CAL_ATTENTION_BF16_AVX512_H
#define CAL_ATTENTION_BF16_AVX512_H

#include <stdint.h>

#include "vec_ps512.h"

/* Σ q·k over D (q padded with zeros to a multiple of 32, 64-byte
 * aligned; k read in place, its tail masked). */
static inline float avx512_bf_dot(const uint16_t *q, const uint16_t *k,
                                  int64_t D) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t d = 0; d < D; d += 32) {
    int64_t n = D - d < 32 ? D - d : 32;
    __mmask32 mk = (__mmask32)(n == 32 ? 0xffffffffu : (1u << n) - 1u);
    __m512i kv = _mm512_maskz_loadu_epi16(mk, k + d);
    acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_load_si512(q + d),
                           (__m512bh)kv);
  }
  return _mm512_reduce_add_ps(acc);
}

/* 16 bf16 widened to fp32 (exact: the bits move up). */
static inline __m512 avx512_bf_widen(__m256i x) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
}

static inline void avx512_bf_axpy(float *acc, float p, const uint16_t *v,
                                  int64_t D) {
  __m512 pb = _mm512_set1_ps(p);
  for (int64_t d = 0; d < D; d += 16) {
    int64_t n = D - d < 16 ? D - d : 16;
    __mmask16 mk = (__mmask16)((1u << n) - 1u);
    __m512 vv = avx512_bf_widen(_mm256_maskz_loadu_epi16(mk, v + d));
    _mm512_storeu_ps(acc + d,
                     _mm512_fmadd_ps(pb, vv, _mm512_loadu_ps(acc + d)));
  }
}

/* 32 floats to bf16, round to nearest even. */
static inline void avx512_bf_cvt32(uint16_t *dst, const float *src) {
  __m512bh b = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + 16),
                                   _mm512_loadu_ps(src));
  _mm512_storeu_si512(dst, (__m512i)b);
}

#define BF_DOT avx512_bf_dot
#define BF_AXPY avx512_bf_axpy
#define BF_CVT32 avx512_bf_cvt32
#endif
