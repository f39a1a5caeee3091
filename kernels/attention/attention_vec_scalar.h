/* The scalar vocabulary of the attention loops (attention_fused_impl.h,
 * attention_softmax_impl.h, attention_bf16_impl.h): plain floats, one
 * lane.  Included by the portable variants before the loop headers.  Not a
 * public header. */
#ifndef CAL_ATTENTION_VEC_SCALAR_H
#define CAL_ATTENTION_VEC_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float scalar_pow2i(float n) {
  uint32_t u = (uint32_t)((int32_t)n + 127) << 23;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

typedef float vec_t;
typedef int vmask_t;
#define VW 1
#define V_ZERO() 0.0f
#define V_SET1(x) (x)
#define V_LOAD(p) (*(p))
#define V_STORE(p, v) (*(p) = (v))
#define V_MASK(n) (n)
#define V_LOADM(p, m) ((void)(m), *(p))
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_HMAX(v) (v)
#define V_HSUM(v) (v)
#define V_ROUND(v) nearbyintf(v)
#define V_POW2I(n) scalar_pow2i(n)
#define V_LDEXP(p, n) ((p) * scalar_pow2i(n))
#define V_LDEXP_ZERO (-127.0f)
#define V_ZERO_LT(y, x, t) ((x) >= (t) ? (y) : 0.0f)

#endif
