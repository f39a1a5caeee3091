/* The AVX2 vector vocabulary of the per-ISA loops: vec_ps.h at 256 bits
 * plus the masks, reductions and rounding of that width (compiled with
 * -mavx2 -mfma).  AVX2 has no mask registers: a mask is a vector whose
 * lanes are all ones or all zeros.  Not a public header. */
#ifndef CAL_VEC_PS256_H
#define CAL_VEC_PS256_H

#define VBITS 256
#include "vec_ps.h"

typedef __m256i vmask_t;

static inline __m256i avx2_mask(int n) {
  /* lanes 0 .. n-1 all ones: compare lane index against n */
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline float avx2_hmax(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
  return _mm_cvtss_f32(x);
}

static inline float avx2_hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
  return _mm_cvtss_f32(x);
}

#define V_MASK(n) avx2_mask(n)
#define V_LOADM(p, m) _mm256_maskload_ps((p), (m))
#define V_STOREM(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define V_ABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (v))
/* lanes of b where x < 0, of a elsewhere */
#define V_SEL_NEG(x, a, b)                                                   \
  _mm256_blendv_ps((a), (b), _mm256_cmp_ps((x), _mm256_setzero_ps(), _CMP_LT_OQ))
#define V_HMAX(v) avx2_hmax(v)
#define V_HSUM(v) avx2_hsum(v)
#define V_ROUND(v)                                                           \
  _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_ZERO_LT(y, x, t)                                                   \
  _mm256_and_ps((y), _mm256_cmp_ps((x), (t), _CMP_GE_OQ))

#endif
