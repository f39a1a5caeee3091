/* The inference workload's step (kernels model_infer and model_infer_bf16,
 * family "layer"): a prompt of seq tokens a sequence through the model's
 * prefill (model.h), then gen decode steps, one new token a sequence
 * through every layer and the LM head, in one timed run.
 *
 * The two steps are set up as the model_prefill and model_decode kernels
 * are, from the same parameters (decode: its own distinct layers).  The
 * decode step's KV caches grow token by token as in a generate loop: they
 * hold seq + gen slots, and decode step t (0 .. gen - 1) writes its token
 * at slot seq + t and attends over the seq + t + 1 slots up to it
 * (layer.h, cal_layer_shape_t.grow); the prompt's slots are the decode
 * step's own cache rows.  Parameters: those of model_prefill, and
 * cal_params_t.gen (the generated tokens, at least 1).  FLOPs and bytes:
 * the prefill's and each decode step's at its own cache length.
 * Verification: both steps' (cal_model_verify; decode at the last step's
 * position). */
#include "model.h"

#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "forward_kernels.h"
#include "layer_internal.h"

typedef struct infer {
  cal_model_t *pre, *dec; /* first, in this order (the tests reach them) */
  int64_t gen;
  char impl[400];
} infer_t;

static void infer_teardown(void *st) {
  infer_t *I = st;
  if (!I)
    return;
  cal_model_free(I->pre);
  cal_model_free(I->dec);
  cal_free(I);
}

static int infer_setup_as(const cal_params_t *p, void **st, int decode,
                          int bf16) {
  (void)decode;
  if (p->gen < 1 || p->gen > 1 << 20)
    return CAL_EINVAL;
  infer_t *I = cal_alloc(sizeof *I);
  if (!I)
    return CAL_ENOMEM;
  memset(I, 0, sizeof *I);
  I->gen = p->gen;
  int rc = cal_model_create(p, 0, bf16, &I->pre);
  if (rc == 0)
    rc = cal_model_create(p, 1, bf16, &I->dec);
  if (rc < 0) {
    infer_teardown(I);
    return rc;
  }
  snprintf(I->impl, sizeof I->impl, "prefill %.180s; decode %.180s",
           I->pre->impl, I->dec->impl);
  *st = I;
  return 0;
}

static int infer_run(void *st) {
  infer_t *I = st;
  int rc = cal_model_run(I->pre);
  for (int64_t g = 0; rc == 0 && g < I->gen; g++) {
    cal_model_set_pos(I->dec, I->dec->s.seq + g);
    rc = cal_model_run(I->dec);
  }
  return rc;
}

static int infer_verify(void *st) {
  infer_t *I = st;
  int rc = cal_model_verify(I->pre);
  return rc < 0 ? rc : cal_model_verify(I->dec);
}

/* the prefill's parameters and the decode step's (the same with decode:
 * its cache grown to seq + gen) */
static void shapes(const cal_params_t *p, int bf16, cal_layer_shape_t *pre,
                   cal_layer_shape_t *dec) {
  cal_params_t q = *p;
  cal_layer_shape_from_params(&q, pre);
  q.decode = 1;
  cal_layer_shape_from_params(&q, dec);
  pre->bf16 = dec->bf16 = bf16;
}

static int64_t depth_of(const cal_params_t *p) {
  return p->depth > 0 ? p->depth : p->layers > 0 ? p->layers : 1;
}

/* FLOPs (bytes: 0) or bytes (bytes: 1) of the prefill and of each decode
 * step t, whose new token attends over seq + t + 1 keys: the bare decode
 * shape with seq + t past tokens */
static double infer_sum(const cal_params_t *p, int bf16, int bytes) {
  cal_layer_shape_t a, b;
  shapes(p, bf16, &a, &b);
  const int64_t depth = depth_of(p), seq = b.seq;
  double sum = bytes ? cal_model_read_bytes(&a, depth, p->n)
                     : cal_model_flops(&a, depth, p->n);
  b.grow = 0;
  for (int64_t t = 0; t < p->gen; t++) {
    b.seq = seq + t;
    sum += bytes ? cal_model_read_bytes(&b, depth, p->n)
                 : cal_model_flops(&b, depth, p->n);
  }
  return sum;
}

static double infer_flops(const cal_params_t *p) {
  return infer_sum(p, 0, 0);
}

static double infer_bytes_as(const cal_params_t *p, int bf16) {
  return infer_sum(p, bf16, 1);
}

double cal_model_infer_mem_bytes(const cal_params_t *p, int bf16) {
  cal_layer_shape_t a, b;
  shapes(p, bf16, &a, &b);
  int64_t n = p->layers > 0 ? p->layers : 1;
  return cal_model_mem_bytes(&a, n, p->n) + cal_model_mem_bytes(&b, n, p->n);
}

static double infer_mem_as(const cal_params_t *p, int bf16) {
  return cal_model_infer_mem_bytes(p, bf16);
}

static const char *infer_variant(const void *st) {
  return cal_variant_name(((const infer_t *)st)->pre->L[0]->variant);
}

static const char *infer_impl(const void *st) {
  return ((const infer_t *)st)->impl;
}

static cal_engine_t infer_engine(const void *st) {
  const cal_layer_t *L = ((const infer_t *)st)->pre->L[0];
  return L->team ? CAL_ENGINE_BUILTIN : L->engine;
}

#define infer_reshape NULL
CAL_LAYER_KERNEL(infer, model_infer, CAL_DTYPE_FP32, NULL, 0, 0);
CAL_LAYER_KERNEL(infer, model_infer_bf16, CAL_DTYPE_BF16,
                 cal_forward_bf16_supported, 0, 1);
