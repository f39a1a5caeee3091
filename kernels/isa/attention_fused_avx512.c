/* Fused attention, AVX-512F variant (compiled with -mavx512f -mavx512dq
 * -mavx512bw -mavx512vl -mfma; run only when the CPU has them). */
#include <immintrin.h>

typedef __m512 vec_t;
typedef __mmask16 vmask_t;
#define VW 16
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps((p), (v))
#define V_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define V_LOADM(p, m) _mm512_maskz_loadu_ps((m), (p))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_SUB(a, b) _mm512_sub_ps((a), (b))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_MIN(a, b) _mm512_min_ps((a), (b))
#define V_MAX(a, b) _mm512_max_ps((a), (b))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_HMAX(v) _mm512_reduce_max_ps(v)
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_ROUND(v)                                                           \
  _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_POW2I(n)                                                           \
  _mm512_castsi512_ps(_mm512_slli_epi32(                                     \
      _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
#define V_ZERO_LT(y, x, t)                                                   \
  _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((x), (t), _CMP_GE_OQ), (y))
#define QB 8
#define NVS 2
#define KT 64
#define SFX _avx512

#include "attention_fused_impl.h"
