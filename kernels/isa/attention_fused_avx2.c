/* Fused attention, AVX2 + FMA variant (compiled with -mavx2 -mfma; run
 * only when the CPU has them). */
#include <immintrin.h>

typedef __m256 vec_t;
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

#define VW 8
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps((p), (v))
#define V_MASK(n) avx2_mask(n)
#define V_LOADM(p, m) _mm256_maskload_ps((p), (m))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_SUB(a, b) _mm256_sub_ps((a), (b))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_MIN(a, b) _mm256_min_ps((a), (b))
#define V_MAX(a, b) _mm256_max_ps((a), (b))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_HMAX(v) avx2_hmax(v)
#define V_HSUM(v) avx2_hsum(v)
#define V_ROUND(v)                                                           \
  _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_POW2I(n)                                                           \
  _mm256_castsi256_ps(_mm256_slli_epi32(                                     \
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define V_ZERO_LT(y, x, t)                                                   \
  _mm256_and_ps((y), _mm256_cmp_ps((x), (t), _CMP_GE_OQ))
#define QB 6
#define NVS 2
#define KT 32
#define SFX _avx2

#include "attention_fused_impl.h"
