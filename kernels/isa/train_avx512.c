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

static inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u);
}

/* ---- AdamW */

typedef struct adamw_v {
  __m512 b1, b2, ob1, ob2, c1, c2, lr, eps, decay;
} adamw_v_t;

static inline __m512 adamw16(const adamw_v_t *c, __m512 p, __m512 m, __m512 v,
                             __m512 g, __m512 *m2, __m512 *v2) {
  *m2 = _mm512_fmadd_ps(c->b1, m, _mm512_mul_ps(c->ob1, g));
  *v2 = _mm512_fmadd_ps(c->b2, v, _mm512_mul_ps(_mm512_mul_ps(c->ob2, g), g));
  const __m512 den = _mm512_add_ps(_mm512_sqrt_ps(_mm512_mul_ps(*v2, c->c2)), c->eps);
  const __m512 step = _mm512_div_ps(_mm512_mul_ps(c->lr, _mm512_mul_ps(*m2, c->c1)), den);
  return _mm512_fmsub_ps(p, c->decay, step);
}

/* whole vectors from i (outputs aligned when nt: streamed) */
static size_t adamw_body(const adamw_v_t *c, const float *p, const float *m,
                         const float *v, const float *g, float *p2, float *m2,
                         float *v2, uint16_t *p16, size_t i, size_t n, int nt) {
  for (; i + 16 <= n; i += 16) {
    __m512 mo, vo;
    const __m512 po = adamw16(c, _mm512_loadu_ps(p + i), _mm512_loadu_ps(m + i),
                              _mm512_loadu_ps(v + i), _mm512_loadu_ps(g + i),
                              &mo, &vo);
    if (nt) {
      _mm512_stream_ps(p2 + i, po);
      _mm512_stream_ps(m2 + i, mo);
      _mm512_stream_ps(v2 + i, vo);
      if (p16)
        _mm256_stream_si256((__m256i *)(p16 + i), to_bf16(po));
    } else {
      _mm512_storeu_ps(p2 + i, po);
      _mm512_storeu_ps(m2 + i, mo);
      _mm512_storeu_ps(v2 + i, vo);
      if (p16)
        _mm256_storeu_si256((__m256i *)(p16 + i), to_bf16(po));
    }
  }
  return i;
}

static int aligned(const void *a, size_t to) {
  return ((uintptr_t)a & (to - 1)) == 0;
}

void cal_adamw_avx512(const cal_adamw_k_t *k, const float *p, const float *m,
                      const float *v, const float *g, float *p2, float *m2,
                      float *v2, uint16_t *p16, size_t n) {
  const adamw_v_t c = {_mm512_set1_ps(k->b1),  _mm512_set1_ps(k->b2),
                       _mm512_set1_ps(k->ob1), _mm512_set1_ps(k->ob2),
                       _mm512_set1_ps(k->c1),  _mm512_set1_ps(k->c2),
                       _mm512_set1_ps(k->lr),  _mm512_set1_ps(k->eps),
                       _mm512_set1_ps(k->decay)};
  /* the elements before p2's first cache line, portably */
  size_t i = (size_t)((64 - ((uintptr_t)p2 & 63)) & 63) / 4;
  if (((uintptr_t)p2 & 3) != 0 || i > n)
    i = n;
  cal_adamw_scalar(k, p, m, v, g, p2, m2, v2, p16, i);
  const int nt = aligned(p2 + i, 64) && aligned(m2 + i, 64) &&
                 aligned(v2 + i, 64) && (!p16 || aligned(p16 + i, 32));
  i = adamw_body(&c, p, m, v, g, p2, m2, v2, p16, i, n, nt);
  if (nt)
    _mm_sfence();
  cal_adamw_scalar(k, p + i, m + i, v + i, g + i, p2 + i, m2 + i, v2 + i,
                   p16 ? p16 + i : NULL, n - i);
}

/* ---- the LM head's rows */

float cal_row_max_avx512(const float *l, int64_t n) {
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < n; j += 16)
    mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY),
                                                tail_mask(n - j), l + j));
  return _mm512_reduce_max_ps(mx);
}

float cal_row_exp_avx512(const float *l, int64_t n, float shift, float *e32,
                         uint16_t *e16) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512 s = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mk = tail_mask(n - j);
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
    const __mmask16 mk = tail_mask(n - j);
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

/* sigmoid(g) from e = exp(-|g|): 1/(1+e) for g >= 0, e/(1+e) below */
static inline __m512 sigmoid(__m512 g) {
  const __m512 e = exp_neg(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(g)));
  const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f)));
  const __mmask16 neg = _mm512_cmp_ps_mask(g, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_mul_ps(inv, neg, inv, e);
}

void cal_swiglu_avx512(const float *gu, int64_t f, float *a) {
  for (int64_t j = 0; j < f; j += 16) {
    const __mmask16 mk = tail_mask(f - j);
    const __m512 g = _mm512_maskz_loadu_ps(mk, gu + j);
    const __m512 u = _mm512_maskz_loadu_ps(mk, gu + f + j);
    _mm512_mask_storeu_ps(a + j, mk, _mm512_mul_ps(_mm512_mul_ps(g, sigmoid(g)), u));
  }
}

void cal_swiglu_bwd_avx512(const float *gu, const float *da, int64_t f,
                           float *dgu) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t j = 0; j < f; j += 16) {
    const __mmask16 mk = tail_mask(f - j);
    const __m512 g = _mm512_maskz_loadu_ps(mk, gu + j);
    const __m512 u = _mm512_maskz_loadu_ps(mk, gu + f + j);
    const __m512 d = _mm512_maskz_loadu_ps(mk, da + j);
    const __m512 s = sigmoid(g);
    /* d·u·s·(1 + g·(1 - s)) and d·g·s */
    const __m512 ds = _mm512_mul_ps(d, s);
    const __m512 t = _mm512_fmadd_ps(g, _mm512_sub_ps(one, s), one);
    _mm512_mask_storeu_ps(dgu + j, mk, _mm512_mul_ps(_mm512_mul_ps(ds, u), t));
    _mm512_mask_storeu_ps(dgu + f + j, mk, _mm512_mul_ps(ds, g));
  }
}

/* ---- bulk rounding (cal_bf16.h) */

void cal_f32_to_bf16_avx512(const float *in, uint16_t *out, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    _mm256_storeu_si256((__m256i *)(out + j), to_bf16(_mm512_loadu_ps(in + j)));
  for (; j < n; j++)
    out[j] = cal_f32_to_bf16(in[j]);
}
