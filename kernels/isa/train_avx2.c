/* The training step's elementwise loops (train_vec.h), AVX2 + FMA
 * (compiled with -mavx2 -mfma; run only when the CPU has them), for the
 * CPUs without AVX-512, where the portable AdamW ran at a third of the
 * memory's rate.  The last elements of a row, fewer than a vector, go
 * through masked loads and stores; AdamW's through the portable loop
 * (train_vec_impl.h has the loops both widths share).
 * No fp16 here (F16C is a feature bit of its own): the LM head keeps its
 * exponentials in fp32 with this table, as with the portable one. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cal_bf16.h"
#include "train_vec.h"
#include "vec_ps256.h"

#define FN(name) name##_train2
#include "attention_softmax_impl.h"

/* fp32 lanes to bf16, as cal_f32_to_bf16: round to nearest even, NaN
 * stays NaN (quiet bit set) */
static inline __m128i to_bf16(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16),
                                       _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  r = _mm256_srli_epi32(r, 16);
  const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  r = _mm256_blendv_epi8(r, quiet, nan);
  /* every lane is in [0, 0xffff]: the unsigned saturation keeps it */
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

/* exp(x) for x <= 0: the attention loops' vector e^x (0 below -87) */
static inline __m256 exp_neg(__m256 x) { return vexp_train2(x); }

/* ---- AdamW */

/* a line's 16 new masters rounded to bf16 into p16 (streamed when nt) */
static inline void store_bf16_line(uint16_t *p16, const __m256 *po, int nt) {
  const __m256i b = _mm256_set_m128i(to_bf16(po[1]), to_bf16(po[0]));
  if (nt)
    _mm256_stream_si256((__m256i *)p16, b);
  else
    _mm256_storeu_si256((__m256i *)p16, b);
}

#include "train_vec_impl.h"

void cal_adamw_avx2(const cal_adamw_k_t *k, const float *p, const float *m,
                    const float *v, const float *g, float *p2, float *m2,
                    float *v2, uint16_t *p16, size_t n) {
  cal_adamw_by_lines(adamw_body_train2, k, p, m, v, g, p2, m2, v2, p16, n);
}

/* ---- the LM head's rows */

float cal_row_max_avx2(const float *l, int64_t n) { return row_max_train2(l, n); }

float cal_row_exp_avx2(const float *l, int64_t n, float shift, float *e32,
                       uint16_t *e16) {
  (void)e16; /* no fp16 in this table */
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 s = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i mk = tail_train2(n - j);
    __m256 e = exp_neg(_mm256_sub_ps(_mm256_maskload_ps(l + j, mk), sh));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(mk));
    s = _mm256_add_ps(s, e);
    if (e32)
      _mm256_maskstore_ps(e32 + j, mk, e);
  }
  return avx2_hsum(s);
}

void cal_row_scale_avx2(const float *e32, const uint16_t *e16, int64_t n,
                        float scale, float *g32, uint16_t *g16) {
  (void)e16; /* no fp16 in this table: e32 is given */
  const __m256 sc = _mm256_set1_ps(scale);
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i mk = tail_train2(n - j);
    const __m256 g = _mm256_mul_ps(_mm256_maskload_ps(e32 + j, mk), sc);
    if (!g16) {
      _mm256_maskstore_ps(g32 + j, mk, g);
    } else if (n - j >= 8) {
      _mm_storeu_si128((__m128i *)(g16 + j), to_bf16(g));
    } else {
      uint16_t last[8];
      _mm_storeu_si128((__m128i *)last, to_bf16(g));
      memcpy(g16 + j, last, 2 * (size_t)(n - j));
    }
  }
}

/* ---- SwiGLU */

void cal_swiglu_avx2(const float *gu, int64_t f, float *a) { swiglu_train2(gu, f, a); }

void cal_swiglu_bwd_avx2(const float *gu, const float *da, int64_t f,
                         float *dgu) {
  swiglu_bwd_train2(gu, da, f, dgu);
}
