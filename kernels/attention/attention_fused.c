/* Fused attention: the portable scalar variant (the shared algorithm in
 * attention_fused_impl.h over plain floats) and the run-time dispatch to
 * the AVX2 and AVX-512 variants. */
#include <stdint.h>

#include "attention.h"
#include "attention_fused_internal.h"
#include "cal_isa.h"
#include "cal_mem.h"

#include "attention_vec_scalar.h"

#define QB 4
#define NVS 4
#define KT 16
#define SFX _scalar

#include "attention_fused_impl.h"

size_t cal_attn_fused_workspace_bytes(const cal_attn_shape_t *s) {
  if (s->nq <= CAL_ATTN_DIRECT_MAX_NQ)
    return 0;
  int64_t tiles = (s->nk + CAL_ATTN_KT_MAX - 1) / CAL_ATTN_KT_MAX;
  return sizeof(float) * (size_t)(s->batch * s->kv_heads) *
         (size_t)(tiles * CAL_ATTN_KT_MAX * s->head_dim);
}

typedef int (*fused_fn)(const cal_attn_shape_t *, const float *,
                        const float *, const float *, float *, float *);

static fused_fn variant_fn(int variant) {
  switch (variant) {
  case CAL_VARIANT_SCALAR: return cal_attn_fused_run_scalar;
#ifdef CAL_ATTN_X86
  case CAL_VARIANT_AVX2: return cal_attn_fused_run_avx2;
  case CAL_VARIANT_AVX512: return cal_attn_fused_run_avx512;
#endif
  default: return NULL;
  }
}

int cal_attn_fused(const cal_attn_shape_t *s, const float *q, const float *k,
                   const float *v, float *o, int variant, void *ws,
                   int *ran) {
  void *own = NULL;
  int v_ran, rc;
  cal_params_t p = {.batch = s->batch, .heads = s->heads,
                    .kv_heads = s->kv_heads, .nq = s->nq, .nk = s->nk,
                    .head_dim = s->head_dim, .causal = s->causal};
  if (cal_attn_check_shape(&p, 0, NULL, 0) < 0)
    return CAL_EINVAL;
  rc = cal_variant_resolve(variant, &v_ran);
  if (rc < 0)
    return rc;
  fused_fn fn = variant_fn(v_ran);
  if (!fn)
    return CAL_EUNSUPP;
  size_t need = cal_attn_fused_workspace_bytes(s);
  if (!ws && need > 0) {
    own = cal_alloc(need);
    if (!own)
      return CAL_ENOMEM;
    ws = own;
  }
  rc = fn(s, q, k, v, o, ws);
  cal_free(own);
  if (rc == 0 && ran)
    *ran = v_ran;
  return rc;
}

typedef void (*direct_fn)(const cal_attn_shape_t *, const float *,
                          const float *, const float *, float *);

static direct_fn direct_variant_fn(int variant) {
  switch (variant) {
  case CAL_VARIANT_SCALAR: return cal_attn_fused_direct_scalar;
#ifdef CAL_ATTN_X86
  case CAL_VARIANT_AVX2: return cal_attn_fused_direct_avx2;
  case CAL_VARIANT_AVX512: return cal_attn_fused_direct_avx512;
#endif
  default: return NULL;
  }
}

int cal_attn_fused_team(const cal_attn_shape_t *s, const float *q,
                        const float *k, const float *v, float *o,
                        int variant) {
  int v_ran, rc;
  cal_params_t p = {.batch = s->batch, .heads = s->heads,
                    .kv_heads = s->kv_heads, .nq = s->nq, .nk = s->nk,
                    .head_dim = s->head_dim, .causal = s->causal};
  if (s->nq > CAL_ATTN_DIRECT_MAX_NQ || cal_attn_check_shape(&p, 0, NULL, 0) < 0)
    return CAL_EINVAL;
  if ((rc = cal_variant_resolve(variant, &v_ran)) < 0)
    return rc;
  direct_fn fn = direct_variant_fn(v_ran);
  if (!fn)
    return CAL_EUNSUPP;
  fn(s, q, k, v, o);
  return 0;
}
