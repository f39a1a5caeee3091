/* The AVX-512 vector vocabulary of the attention loops: vec_ps.h at 512
 * bits plus the masks, reductions and rounding of that width (compiled
 * with -mavx512f -mavx512dq -mavx512bw -mavx512vl).  Not a public header. */
#ifndef CAL_VEC_PS512_H
#define CAL_VEC_PS512_H

#define VBITS 512
/* p·2^n by vscalefps: one operation for V_POW2I's three and the multiply
 * (any integer n: 2^-160 times p < 2 rounds to 0) */
#define V_LDEXP(p, n) _mm512_scalef_ps((p), (n))
#define V_LDEXP_ZERO (-160.0f)
#include "vec_ps.h"

typedef __mmask16 vmask_t;
#define V_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define V_LOADM(p, m) _mm512_maskz_loadu_ps((m), (p))
#define V_STOREM(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define V_ABS(v) _mm512_abs_ps(v)
/* lanes of b where x < 0, of a elsewhere */
#define V_SEL_NEG(x, a, b)                                                   \
  _mm512_mask_mov_ps((a), _mm512_cmp_ps_mask((x), _mm512_setzero_ps(), _CMP_LT_OQ), (b))
#define V_HMAX(v) _mm512_reduce_max_ps(v)
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_ROUND(v)                                                           \
  _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_ZERO_LT(y, x, t)                                                   \
  _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((x), (t), _CMP_GE_OQ), (y))

#endif
