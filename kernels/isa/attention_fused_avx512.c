/* Fused attention, AVX-512F variant (compiled with -mavx512f -mavx512dq
 * -mavx512bw -mavx512vl -mfma; run only when the CPU has them). */
#define VBITS 512
#include "vec_ps.h"

typedef __mmask16 vmask_t;
#define V_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define V_LOADM(p, m) _mm512_maskz_loadu_ps((m), (p))
#define V_HMAX(v) _mm512_reduce_max_ps(v)
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_ROUND(v)                                                           \
  _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_ZERO_LT(y, x, t)                                                   \
  _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((x), (t), _CMP_GE_OQ), (y))
#define QB 8
#define NVS 2
#define KT 64
#define SFX _avx512

#include "attention_fused_impl.h"
