/* The part of the per-ISA loops' vector vocabulary (attention_fused_impl.h)
 * that is the same intrinsic at every x86 width.  The including file
 * defines VBITS (256 or 512) and gets vec_t, VW and V_ZERO V_SET1 V_LOAD
 * V_STORE V_ADD V_SUB V_MUL V_MIN V_MAX V_FMA V_POW2I V_LDEXP over the
 * _mm<VBITS>_* intrinsics (and V_DIV V_SQRT V_FMS V_STREAM); it defines the rest (masks, masked
 * loads and stores, horizontal reductions, rounding, V_ABS, V_SEL_NEG)
 * itself.  Not a public header. */
#ifndef CAL_VEC_PS_H
#define CAL_VEC_PS_H

#include <immintrin.h>

#define VPS_CAT_(w, op) _mm##w##_##op
#define VPS_CAT(w, op) VPS_CAT_(w, op)
#define VPS_TYPE_(w) __m##w
#define VPS_TYPE(w) VPS_TYPE_(w)
#define VPS_CASTSI_(w) _mm##w##_castsi##w##_ps
#define VPS_CASTSI(w) VPS_CASTSI_(w)
#define V_OP(op) VPS_CAT(VBITS, op)

typedef VPS_TYPE(VBITS) vec_t;
#define VW (VBITS / 32)
#define V_ZERO() V_OP(setzero_ps)()
#define V_SET1(x) V_OP(set1_ps)(x)
#define V_LOAD(p) V_OP(loadu_ps)(p)
#define V_STORE(p, v) V_OP(storeu_ps)((p), (v))
#define V_ADD(a, b) V_OP(add_ps)((a), (b))
#define V_SUB(a, b) V_OP(sub_ps)((a), (b))
#define V_MUL(a, b) V_OP(mul_ps)((a), (b))
#define V_MIN(a, b) V_OP(min_ps)((a), (b))
#define V_MAX(a, b) V_OP(max_ps)((a), (b))
#define V_DIV(a, b) V_OP(div_ps)((a), (b))
#define V_SQRT(a) V_OP(sqrt_ps)(a)
#define V_STREAM(p, v) V_OP(stream_ps)((p), (v))
#define V_FMA(a, b, c) V_OP(fmadd_ps)((a), (b), (c))
#define V_FMS(a, b, c) V_OP(fmsub_ps)((a), (b), (c))
/* 2^n for integer-valued n: n + 127 shifted into the exponent field */
#define V_POW2I(n)                                                           \
  VPS_CASTSI(VBITS)(V_OP(slli_epi32)(                                        \
      V_OP(add_epi32)(V_OP(cvtps_epi32)(n), V_OP(set1_epi32)(127)), 23))
/* p·2^n for integer-valued n, and an n at or below which it is exactly 0
 * (vec_ps512.h has one instruction for it) */
#ifndef V_LDEXP
#define V_LDEXP(p, n) V_MUL((p), V_POW2I(n))
#define V_LDEXP_ZERO (-127.0f)
#endif

#endif
