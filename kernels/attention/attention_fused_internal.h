/* Between the fused-attention dispatcher and its SIMD variants; not a
 * public header (tests may use it to reach one variant directly). */
#ifndef CAL_ATTENTION_FUSED_INTERNAL_H
#define CAL_ATTENTION_FUSED_INTERNAL_H

#include "attention.h"

/* Keys per packed K tile, largest over the variants (each variant's tile
 * divides it, so a workspace sized with it fits every variant). */
#define CAL_ATTN_KT_MAX 64
/* Up to this many queries, the kernel reads K and V in place (decode). */
#define CAL_ATTN_DIRECT_MAX_NQ 4

/* Each variant: the whole computation (valid shape, kpack holding
 * cal_attn_fused_workspace_bytes(s)); always 0.  Its direct path for
 * nq <= CAL_ATTN_DIRECT_MAX_NQ, shared by the calling OpenMP team (see
 * cal_attn_fused_team).  And its vector e^x on one value, for tests. */
#define CAL_ATTN_VARIANT_DECL_(sfx)                                          \
  int cal_attn_fused_run##sfx(const cal_attn_shape_t *s, const float *q,     \
                              const float *k, const float *v, float *o,      \
                              float *kpack);                                  \
  void cal_attn_fused_direct##sfx(const cal_attn_shape_t *s, const float *q, \
                                  const float *k, const float *v, float *o); \
  float cal_attn_exp_one##sfx(float x);
CAL_ATTN_VARIANT_DECL_(_scalar)
CAL_ATTN_VARIANT_DECL_(_avx2)
CAL_ATTN_VARIANT_DECL_(_avx512)
#undef CAL_ATTN_VARIANT_DECL_

#endif
