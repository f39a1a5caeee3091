/* A model's forward step (model.h) and its kernel-table entries
 * model_prefill, model_decode, model_prefill_bf16, model_decode_bf16. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "forward_kernels.h"
#include "layer_internal.h"
#include "lm_logits.h"

double cal_model_flops(const cal_layer_shape_t *s, int64_t depth,
                       int64_t vocab) {
  return (double)depth * cal_layer_flops(s) +
         cal_lm_logits_flops(s->batch, s->hidden, vocab);
}

double cal_model_read_bytes(const cal_layer_shape_t *s, int64_t depth,
                            int64_t vocab) {
  return (double)depth * cal_layer_read_bytes(s) +
         cal_lm_logits_weight_bytes(s->hidden, vocab, s->bf16);
}

double cal_model_mem_bytes(const cal_layer_shape_t *s, int64_t layers,
                           int64_t vocab) {
  cal_layer_layout_t l;
  cal_layer_layout(s, &l);
  double own = cal_layer_weight_bytes(s) + l.kv_b * l.kv_f;
  return cal_layer_mem_bytes(s) + (double)(layers - 1) * own +
         cal_lm_logits_mem_bytes(s->batch, s->hidden, vocab, s->bf16) +
         4.0 * (double)l.tokens * (double)s->hidden;
}

int64_t cal_model_distinct_layers(const cal_layer_shape_t *s, int64_t depth,
                                  int64_t vocab, double llc, double budget) {
  if (depth < 1)
    return 1;
  if (cal_model_mem_bytes(s, depth, vocab) <= budget)
    return depth;
  int64_t n = depth;
  if (llc > 0) {
    double n4 = floor(4.0 * llc / cal_layer_weight_bytes(s)) + 1.0;
    if (n4 < (double)depth)
      n = (int64_t)n4;
  }
  while (n > 1 && cal_model_mem_bytes(s, n, vocab) > budget)
    n--;
  return n;
}

void cal_model_free(cal_model_t *M) {
  if (!M)
    return;
  /* the borrowing layers first: L[0] owns what they use */
  for (int64_t i = M->n - 1; M->L && i >= 0; i--)
    cal_layer_free(M->L[i]);
  cal_free(M->L);
  cal_lm_logits_free(M->head);
  cal_free(M->x0);
  cal_free(M);
}

void cal_model_set_pos(cal_model_t *M, int64_t pos) {
  for (int64_t l = 0; l < M->n; l++)
    cal_layer_set_pos(M->L[l], pos);
}

static size_t stream_bytes(const cal_model_t *M) {
  return 4 * (size_t)M->L[0]->l.tokens * (size_t)M->s.hidden;
}

/* Layer l made for p (reshape 0) or its batch part re-made (1), set l
 * drawn from the seed plus l (set 0 is the layer kernel's at the same
 * seed); after layer 0, the model's input copied from its rows as it drew
 * them, before the layers after it draw theirs over the shared rows. */
static int model_layer(cal_model_t *M, const cal_params_t *p, int64_t l,
                       int reshape) {
  cal_params_t q = *p;
  q.seed = p->seed + 0x9e3779b9ULL * (uint64_t)l;
  const cal_layer_t *share = l ? M->L[0] : NULL;
  int rc = reshape ? cal_layer_reshape(M->L[l], &q, share)
                   : cal_layer_create(&q, M->s.bf16, share, &M->L[l]);
  if (rc < 0 || l)
    return rc;
  cal_free(M->x0);
  if (!(M->x0 = cal_alloc(stream_bytes(M))))
    return CAL_ENOMEM;
  memcpy(M->x0, M->L[0]->x, stream_bytes(M));
  return 0;
}

static void name_impl(cal_model_t *M) {
  snprintf(M->impl, sizeof M->impl, "%s; head %s", M->L[0]->impl,
           M->head->impl);
}

/* The distinct layers, the input rows, the head. */
static int model_build(cal_model_t *M, const cal_params_t *p) {
  int rc;
  for (int64_t l = 0; l < M->n; l++)
    if ((rc = model_layer(M, p, l, 0)) < 0)
      return rc;
  const cal_layer_t *L0 = M->L[0];
  if ((rc = cal_lm_logits_create(M->s.batch, M->s.hidden, M->vocab,
                                 M->s.bf16, L0->team, L0->variant, p->engine,
                                 p->seed, &M->head)) < 0)
    return rc;
  name_impl(M);
  return 0;
}

int cal_model_reshape(void *st, const cal_params_t *p) {
  cal_model_t *M = st;
  cal_params_t q = *p;
  q.decode = M->s.decode; /* the kernel's mode, as cal_model_create sets it */
  int rc;
  /* every layer asked before any changes: the state stays whole on a no */
  for (int64_t l = 0; l < M->n; l++)
    if ((rc = cal_layer_reshape_check(M->L[l], &q)) < 0)
      return rc;
  M->s.batch = q.batch;
  for (int64_t l = 0; l < M->n; l++)
    if ((rc = model_layer(M, &q, l, 1)) < 0)
      return rc;
  if ((rc = cal_lm_logits_reshape(M->head, M->s.batch, q.engine)) < 0)
    return rc;
  name_impl(M);
  return 0;
}

int cal_model_create(const cal_params_t *p, int decode, int bf16,
                     cal_model_t **out) {
  cal_params_t q = *p;
  q.decode = decode;
  int64_t n = p->layers > 0 ? p->layers : 1;
  int64_t depth = p->depth > 0 ? p->depth : n;
  if (n > depth || depth > 4096 || p->n < 1)
    return CAL_EINVAL;
  cal_model_t *M = cal_alloc(sizeof *M);
  if (!M)
    return CAL_ENOMEM;
  memset(M, 0, sizeof *M);
  cal_layer_shape_from_params(&q, &M->s);
  M->s.bf16 = bf16;
  M->depth = depth;
  M->vocab = p->n;
  int rc = CAL_ENOMEM;
  if ((M->L = cal_alloc((size_t)n * sizeof *M->L))) {
    memset(M->L, 0, (size_t)n * sizeof *M->L);
    M->n = n;
    rc = model_build(M, &q);
  }
  if (rc < 0) {
    cal_model_free(M);
    return rc;
  }
  *out = M;
  return 0;
}

static int model_setup_as(const cal_params_t *p, void **st, int decode,
                          int bf16) {
  return cal_model_create(p, decode, bf16, (cal_model_t **)st);
}

/* The head's rows: the last position of each sequence of the stream. */
static int head_run(cal_model_t *M, int verify) {
  const cal_layer_t *L = M->L[0];
  int64_t d = M->s.hidden, lq = L->l.lq;
  const float *x = L->out + (lq - 1) * d;
  return verify ? cal_lm_logits_verify(M->head, x, lq * d)
                : cal_lm_logits_run(M->head, x, lq * d);
}

int cal_model_run(void *st) {
  cal_model_t *M = st;
  int rc;
  for (int64_t p = 0; p < M->depth; p++) {
    cal_layer_t *L = M->L[p % M->n];
    /* the shared rows: the model's input, then the last pass's output */
    memcpy(L->x, p ? L->out : M->x0, stream_bytes(M));
    if ((rc = cal_layer_run(L)) < 0)
      return rc;
  }
  return head_run(M, 0);
}

/* The head from the stack's output, the last pass's layer from its input
 * (both still in the shared rows), then the first layer run again from
 * the model's input and checked. */
int cal_model_verify(void *st) {
  cal_model_t *M = st;
  int rc;
  if ((rc = head_run(M, 1)) < 0 ||
      (rc = cal_layer_verify(M->L[(M->depth - 1) % M->n])) < 0)
    return rc;
  if (M->depth == 1)
    return 0;
  memcpy(M->L[0]->x, M->x0, stream_bytes(M));
  if ((rc = cal_layer_run(M->L[0])) < 0)
    return rc;
  return cal_layer_verify(M->L[0]);
}

static void model_teardown(void *st) { cal_model_free(st); }

static void shape_of(const cal_params_t *p, int bf16, cal_layer_shape_t *s) {
  cal_layer_shape_from_params(p, s);
  s->bf16 = bf16;
}

static int64_t depth_of(const cal_params_t *p) {
  return p->depth > 0 ? p->depth : p->layers > 0 ? p->layers : 1;
}

static double model_flops(const cal_params_t *p) {
  cal_layer_shape_t s;
  shape_of(p, 0, &s);
  return cal_model_flops(&s, depth_of(p), p->n);
}

static double model_bytes_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return cal_model_read_bytes(&s, depth_of(p), p->n);
}

static double model_mem_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return cal_model_mem_bytes(&s, p->layers > 0 ? p->layers : 1, p->n);
}

static const char *model_variant(const void *st) {
  return cal_variant_name(((const cal_model_t *)st)->L[0]->variant);
}

static const char *model_impl(const void *st) {
  return ((const cal_model_t *)st)->impl;
}

static cal_engine_t model_engine(const void *st) {
  const cal_layer_t *L = ((const cal_model_t *)st)->L[0];
  return L->team ? CAL_ENGINE_BUILTIN : L->engine;
}

#define model_run cal_model_run
#define model_verify cal_model_verify
#define model_reshape cal_model_reshape
CAL_FORWARD_KERNELS(model, model);
