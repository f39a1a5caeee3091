/* Kernel-table entries attn_ref (the straightforward fp32 reference, the
 * baseline), attn_fused (tiled online-softmax kernel, best SIMD variant)
 * and attn_fused_bf16 (the same in bf16, best bf16 variant).  All verify
 * against the fp64 reference on a sample of rows (the bf16 kernel's from
 * the same bf16-rounded inputs). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "attention.h"
#include "cal_bf16.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"

enum { ATTN_REF, ATTN_FUSED, ATTN_BF16 };

/* Rows verify() checks: the four corners of (b,h) × i plus random ones. */
#define ATTN_CHECKS 32

typedef struct {
  cal_attn_shape_t s;
  float *q, *k, *v, *o; /* bf16: q, k, v the inputs widened (exact) */
  uint16_t *q16, *k16, *v16; /* bf16 only */
  void *ws;      /* fused: packed K (bf16: K and V); ref: score rows */
  int ws_threads;
  int mode;      /* ATTN_REF, ATTN_FUSED, ATTN_BF16 */
  int variant;   /* resolved (fused: cal_isa_variant_t, bf16: its own) */
  uint64_t seed;
} attn_state_t;

static double qo_elems(const cal_attn_shape_t *s) {
  return (double)s->batch * (double)s->heads * (double)s->nq * s->head_dim;
}

static double kv_elems(const cal_attn_shape_t *s) {
  return (double)s->batch * (double)s->kv_heads * (double)s->nk * s->head_dim;
}

static double attn_flops(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  return cal_attn_flops(&s);
}

static double attn_bytes(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  /* Q, K, V read once and O written once */
  return 4.0 * (2.0 * qo_elems(&s) + 2.0 * kv_elems(&s));
}

/* bf16: Q, K, V read in bf16, O written in fp32 */
static double bf16_bytes(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  return 2.0 * (qo_elems(&s) + 2.0 * kv_elems(&s)) + 4.0 * qo_elems(&s);
}

static int ref_threads(const cal_params_t *p) {
  int t = omp_get_max_threads();
  return p->threads > t ? p->threads : t;
}

static double ref_mem(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  return attn_bytes(p) + 4.0 * ref_threads(p) * (double)s.nk;
}

static double fused_mem(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  return attn_bytes(p) + (double)cal_attn_fused_workspace_bytes(&s);
}

/* the fp32 buffers (the inputs widened), the bf16 ones and the packing */
static double bf16_mem(const cal_params_t *p) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  return attn_bytes(p) + 2.0 * (qo_elems(&s) + 2.0 * kv_elems(&s)) +
         (double)cal_attn_fused_bf16_workspace_bytes(&s);
}

static int bf16_supported(const cal_params_t *p, const char **why) {
  int v;
  int rc = cal_attn_bf16_resolve(p->variant, &v, why);
  return rc < 0 ? CAL_EUNSUPP : 0;
}

static int fused_supported(const cal_params_t *p, const char **why) {
  int v;
  int rc = cal_variant_resolve(p->variant, &v);
  if (rc == CAL_EINVAL) {
    *why = "unknown SIMD variant requested (CALIBRATE_ISA or --isa)";
    return CAL_EUNSUPP;
  }
  if (rc < 0) {
    *why = "the requested SIMD variant is not supported by this CPU";
    return CAL_EUNSUPP;
  }
  return 0;
}

static void attn_teardown(void *state) {
  attn_state_t *st = state;
  if (st)
    cal_free_each(st->q, st->k, st->v, st->o, st->q16, st->k16, st->v16,
                  st->ws, st);
}

/* bf16: round the inputs to bf16, and keep them widened for verify(). */
static int to_bf16(attn_state_t *st, size_t nqo, size_t nkv) {
  float *f32[3] = {st->q, st->k, st->v};
  uint16_t **h[3] = {&st->q16, &st->k16, &st->v16};
  for (int i = 0; i < 3; i++) {
    size_t n = i ? nkv : nqo;
    if (!(*h[i] = cal_alloc(n * sizeof(uint16_t))))
      return CAL_ENOMEM;
    cal_f32_to_bf16_n(f32[i], *h[i], (int64_t)n);
    for (size_t x = 0; x < n; x++)
      f32[i][x] = cal_bf16_to_f32((*h[i])[x]);
  }
  return 0;
}

static int attn_setup(const cal_params_t *p, void **state, int mode) {
  attn_state_t *st = NULL;
  int rc = cal_attn_check_shape(p, 0, NULL, 0);
  if (rc < 0)
    return rc;
  if (!(st = cal_zalloc(sizeof *st)))
    return CAL_ENOMEM;
  cal_attn_shape_from_params(p, &st->s);
  st->mode = mode;
  st->seed = p->seed;
  st->variant = CAL_VARIANT_SCALAR;
  const char *why;
  if ((mode == ATTN_FUSED &&
       (rc = cal_variant_resolve(p->variant, &st->variant)) < 0) ||
      (mode == ATTN_BF16 &&
       (rc = cal_attn_bf16_resolve(p->variant, &st->variant, &why)) < 0))
    goto fail;
  size_t nqo = (size_t)qo_elems(&st->s), nkv = (size_t)kv_elems(&st->s);
  size_t wsb;
  if (mode == ATTN_FUSED) {
    wsb = cal_attn_fused_workspace_bytes(&st->s);
  } else if (mode == ATTN_BF16) {
    wsb = cal_attn_fused_bf16_workspace_bytes(&st->s);
  } else {
    st->ws_threads = ref_threads(p);
    wsb = cal_attn_ref_scratch_bytes(&st->s, st->ws_threads, 0);
  }
  rc = CAL_ENOMEM;
  st->q = cal_alloc(nqo * sizeof(float));
  st->o = cal_alloc(nqo * sizeof(float));
  st->k = cal_alloc(nkv * sizeof(float));
  st->v = cal_alloc(nkv * sizeof(float));
  st->ws = wsb ? cal_alloc(wsb) : NULL;
  if (!st->q || !st->o || !st->k || !st->v || (wsb && !st->ws))
    goto fail;
  cal_rng_t r;
  cal_rng_seed(&r, p->seed);
  /* uniform in [-2, 2]: logits q·k/√D have standard deviation 4/3 and
   * reach about ±6, like trained models' */
  cal_fill_f32(st->q, nqo, -2.0f, 2.0f, &r);
  cal_fill_f32(st->k, nkv, -2.0f, 2.0f, &r);
  cal_fill_f32(st->v, nkv, -1.0f, 1.0f, &r);
  if (mode == ATTN_BF16 && (rc = to_bf16(st, nqo, nkv)) < 0)
    goto fail;
  /* poison O (NaN) so a run that writes nothing cannot pass */
  memset(st->o, 0xff, nqo * sizeof(float));
  *state = st;
  return 0;
fail:
  attn_teardown(st);
  return rc;
}

static int ref_setup(const cal_params_t *p, void **st) {
  return attn_setup(p, st, ATTN_REF);
}

static int fused_setup(const cal_params_t *p, void **st) {
  return attn_setup(p, st, ATTN_FUSED);
}

static int bf16_setup(const cal_params_t *p, void **st) {
  return attn_setup(p, st, ATTN_BF16);
}

static int attn_run(void *state) {
  attn_state_t *st = state;
  if (st->mode == ATTN_BF16)
    return cal_attn_fused_bf16(&st->s, st->q16, st->k16, st->v16, st->o,
                               st->variant, st->ws, NULL);
  if (st->mode == ATTN_FUSED)
    return cal_attn_fused(&st->s, st->q, st->k, st->v, st->o, st->variant,
                          st->ws, NULL);
  return cal_attn_ref(&st->s, st->q, st->k, st->v, st->o, 0, st->ws,
                      st->ws_threads);
}

/* Tolerance: each output element is a convex combination of V entries, so
 * its rounding error scales with scale_d = Σ p_j·|v_jd| / Σ p_j; logit
 * errors (fp32 dot products of length D, about √D·u·A for a row whose
 * largest Σ|q·k|/√D is A) become relative errors of the weights.  Allow
 * |got - ref| <= (2e-5 + 8·√D·u·A) · max_d scale_d, u = 2^-24.  With the
 * setup's data that is about 5e-5 of the output magnitude; a wrong row
 * (missing key, wrong mask, wrong head) is off by orders of magnitude more. */
static int verify_rows(const cal_attn_shape_t *s, const float *q,
                       const float *k, const float *v, const float *o,
                       uint64_t seed, int checks, int bf16) {
  double *p = cal_alloc(sizeof(double) * (size_t)s->nk);
  double ref[CAL_ATTN_MAX_HEAD_DIM], scale[CAL_ATTN_MAX_HEAD_DIM];
  int rc = 0;
  if (!p)
    return CAL_ENOMEM;
  cal_rng_t r;
  cal_rng_seed(&r, seed ^ 0xa77e57ULL);
  const int64_t D = s->head_dim;
  for (int t = 0; t < checks + 4 && rc == 0; t++) {
    int64_t b, h, i;
    if (t < 4) {
      b = (t & 1) ? s->batch - 1 : 0;
      h = (t & 1) ? s->heads - 1 : 0;
      i = (t & 2) ? s->nq - 1 : 0;
    } else {
      b = (int64_t)(cal_rng_uniform(&r) * (double)s->batch);
      h = (int64_t)(cal_rng_uniform(&r) * (double)s->heads);
      i = (int64_t)(cal_rng_uniform(&r) * (double)s->nq);
    }
    double a = 0.0, smax = 0.0;
    cal_attn_ref_row(s, q, k, v, b, h, i, ref, scale, &a, p);
    for (int64_t d = 0; d < D; d++)
      smax = fmax(smax, scale[d]);
    double tol = (bf16 ? 0x1.0p-8 + 2e-5 + 0x1.0p-24 * (2.0 * (double)D * a +
                                                       2.0 * (double)s->nk)
                       : 2e-5 + 8.0 * sqrt((double)D) * 0x1.0p-24 * a) *
                     smax +
                 1e-30;
    const float *got = o + ((b * s->heads + h) * s->nq + i) * D;
    for (int64_t d = 0; d < D; d++)
      if (!(fabs((double)got[d] - ref[d]) <= tol)) {
        rc = CAL_EVERIFY;
        break;
      }
  }
  cal_free(p);
  return rc;
}

int cal_attn_verify_output(const cal_attn_shape_t *s, const float *q,
                           const float *k, const float *v, const float *o,
                           uint64_t seed, int checks) {
  return verify_rows(s, q, k, v, o, seed, checks, 0);
}

/* The bf16 kernel's bound (attention.h): its probabilities are rounded to
 * bf16 for P·V, each off by at most 2^-8 of itself, so a row by at most
 * 2^-8 of Σ p_j·|v_jd| / Σ p_j; the logits' fp32 sums of D exact products
 * add 2·D·u·A (worst case, u = 2^-24) and the sums over keys nk·u, twice.
 * About 0.4% of the output's magnitude: a wrong mask, head, step or
 * packing is off by far more on the checked rows (the first row of a
 * causal head sees one key). */
int cal_attn_verify_output_bf16(const cal_attn_shape_t *s, const float *q,
                                const float *k, const float *v,
                                const float *o, uint64_t seed, int checks) {
  return verify_rows(s, q, k, v, o, seed, checks, 1);
}

static int attn_verify(void *state) {
  const attn_state_t *st = state;
  return verify_rows(&st->s, st->q, st->k, st->v, st->o, st->seed,
                     ATTN_CHECKS, st->mode == ATTN_BF16);
}

static const char *attn_variant_name(const void *state) {
  const attn_state_t *st = state;
  return st->mode == ATTN_BF16    ? cal_attn_bf16_variant_name(st->variant)
         : st->mode == ATTN_FUSED ? cal_variant_name(st->variant)
                                  : "reference";
}

/* The entries differ in their dtype, traffic, memory, support check and
 * setup. */
#define ATTN_KERNEL(kname, dt, bytes_fn, mem, supported_fn, setup_fn)        \
  {.name = kname, .family = CAL_FAMILY_ATTENTION, .dtype = dt,               \
   .flops = attn_flops, .bytes = bytes_fn, .mem_bytes = mem,                 \
   .supported = supported_fn, .setup = setup_fn, .run = attn_run,            \
   .verify = attn_verify, .teardown = attn_teardown,                         \
   .variant_name = attn_variant_name}

const cal_kernel_t cal_kernel_attn_ref =
    ATTN_KERNEL("attn_ref", CAL_DTYPE_FP32, attn_bytes, ref_mem, NULL,
                ref_setup);
const cal_kernel_t cal_kernel_attn_fused =
    ATTN_KERNEL("attn_fused", CAL_DTYPE_FP32, attn_bytes, fused_mem,
                fused_supported, fused_setup);
const cal_kernel_t cal_kernel_attn_fused_bf16 =
    ATTN_KERNEL("attn_fused_bf16", CAL_DTYPE_BF16, bf16_bytes, bf16_mem,
                bf16_supported, bf16_setup);
