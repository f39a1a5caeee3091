/* The training step's elementwise loops (train_vec.h), AVX-512 F
 * (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq; run only when
 * the CPU has them).  The last elements of a row, fewer than a vector,
 * go through masked loads and stores. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cal_bf16.h"
#include "train_vec.h"
#include "vec_ps512.h"

#define FN(name) name##_train
#include "attention_softmax_impl.h"

/* fp32 lanes to bf16, as cal_f32_to_bf16: round to nearest even, NaN
 * stays NaN (quiet bit set) */
static inline __m256i to_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16),
                                       _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  r = _mm512_srli_epi32(r, 16);
  const __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

/* exp(x) for x <= 0: the attention loops' vector e^x (0 below -87) */
static inline __m512 exp_neg(__m512 x) { return vexp_train(x); }

/* ---- AdamW */

/* a line's 16 new masters rounded to bf16 into p16 (streamed when nt) */
static inline void store_bf16_line(uint16_t *p16, const __m512 *po, int nt) {
  if (nt)
    _mm256_stream_si256((__m256i *)p16, to_bf16(po[0]));
  else
    _mm256_storeu_si256((__m256i *)p16, to_bf16(po[0]));
}

#include "train_vec_impl.h"

void cal_adamw_avx512(const cal_adamw_k_t *k, const float *p, const float *m,
                      const float *v, const float *g, float *p2, float *m2,
                      float *v2, uint16_t *p16, size_t n) {
  cal_adamw_by_lines(adamw_body_train, k, p, m, v, g, p2, m2, v2, p16, n);
}

/* ---- the LM head's rows */

float cal_row_max_avx512(const float *l, int64_t n) { return row_max_train(l, n); }

float cal_row_exp_avx512(const float *l, int64_t n, float shift, float *e32,
                         uint16_t *e16) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512 s = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mk = tail_train(n - j);
    __m512 e = exp_neg(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, l + j), sh));
    e = _mm512_maskz_mov_ps(mk, e);
    s = _mm512_add_ps(s, e);
    if (e32)
      _mm512_mask_storeu_ps(e32 + j, mk, e);
    if (e16)
      _mm256_mask_storeu_epi16(e16 + j, mk,
                               _mm512_cvtps_ph(e, _MM_FROUND_TO_NEAREST_INT |
                                                      _MM_FROUND_NO_EXC));
  }
  return _mm512_reduce_add_ps(s);
}

void cal_row_scale_avx512(const float *e32, const uint16_t *e16, int64_t n,
                          float scale, float *g32, uint16_t *g16) {
  const __m512 sc = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mk = tail_train(n - j);
    const __m512 e = e32 ? _mm512_maskz_loadu_ps(mk, e32 + j)
                         : _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mk, e16 + j));
    const __m512 g = _mm512_mul_ps(e, sc);
    if (g16)
      _mm256_mask_storeu_epi16(g16 + j, mk, to_bf16(g));
    else
      _mm512_mask_storeu_ps(g32 + j, mk, g);
  }
}

/* ---- SwiGLU */

void cal_swiglu_avx512(const float *gu, int64_t f, float *a) { swiglu_train(gu, f, a); }

void cal_swiglu_bwd_avx512(const float *gu, const float *da, int64_t f,
                           float *dgu) {
  swiglu_bwd_train(gu, da, f, dgu);
}

/* ---- bulk rounding (cal_bf16.h) */

void cal_f32_to_bf16_avx512(const float *in, uint16_t *out, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm256_storeu_si256((__m256i *)(out + j), to_bf16(_mm512_loadu_ps(in + j)));
  for (; j < n; j++)
    out[j] = cal_f32_to_bf16(in[j]);
}
