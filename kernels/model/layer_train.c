/* The training step of the decoder layer (see layer_train.h): its
 * figures, buffers and engine set up, the stack of layers, and the
 * kernel-table entries layer_train (fp32) and layer_train_bf16.  The step
 * itself (forward, backward, AdamW) is in layer_train_step.c. */
#include "layer_train.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "engine.h"
#include "forward_kernels.h"
#include "layer_train_internal.h"
#include "lora.h"
#include "train_vec.h"

const cal_adamw_t cal_train_adamw_default = {1e-3, 0.9, 0.999, 1e-8, 0.01};


static void layout(cal_train_t *T) {
  const cal_layer_shape_t *s = &T->s;
  const int64_t d = s->hidden, f = s->ffn;
  T->hd = d / s->heads;
  T->nqkv = (s->heads + 2 * s->kv_heads) * T->hd;
  T->hq = s->heads * T->hd;
  T->t = s->batch * s->seq;
  size_t sz[CAL_TRAIN_NPARAM] = {(size_t)(d * T->nqkv), (size_t)(T->hq * d),
                                 (size_t)(d * 2 * f), (size_t)(f * d),
                                 (size_t)d, (size_t)d};
  T->off[0] = 0;
  for (int i = 0; i < CAL_TRAIN_NPARAM; i++)
    T->off[i + 1] = T->off[i] + sz[i];
  T->np = T->off[CAL_TRAIN_NPARAM];
  size_t t = (size_t)T->t;
  size_t dn[CAL_TRAIN_NDACT] = {t * d, t * T->nqkv, t * T->hq, t * d,
                                t * d, t * d, t * 2 * f, t * f};
  memcpy(T->dact_n, dn, sizeof dn);
}

double cal_train_flops(const cal_layer_shape_t *s) {
  cal_layer_shape_t q = *s;
  q.decode = 0;
  q.grow = 0;
  return q.lora_rank > 0 ? cal_lora_train_flops(&q) : 3.0 * cal_layer_flops(&q);
}

/* floats of the parameters' state: masters and moments twice and the
 * gradients; with LoRA the frozen base's masters and gradient buffer
 * (its gains' gradients) and the adapters' buffers */
static double state_f(const cal_layer_shape_t *s, double np) {
  return s->lora_rank > 0 ? 2.0 * np + cal_lora_buffer_floats(s) : 7.0 * np;
}

/* floats of the activations saved for backward */
static double saved_f(const cal_layer_shape_t *s) {
  double d = (double)s->hidden, f = (double)s->ffn, hd = d / (double)s->heads;
  double nqkv = (double)(s->heads + 2 * s->kv_heads) * hd, hq = (double)s->heads * hd;
  double t = (double)s->batch * (double)s->seq;
  /* x, h1, r1, qkv, lse, ao, x1, h2, r2, gu, a */
  return t * (d + d + 1 + nqkv + (double)s->heads + hq + d + d + 1 + 2 * f + f);
}

double cal_train_saved_bytes(const cal_layer_shape_t *s) {
  return 4.0 * saved_f(s);
}

/* verification: the reference's doubles (parameters, gradients, y,
 * every activation and its gradient, twice for the scratch) */
static double ref_bytes(const cal_layer_shape_t *s, const cal_train_t *T) {
  double dact = 0;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    dact += (double)T->dact_n[i];
  return 8.0 * (2.0 * (double)T->np + (double)T->t * (double)s->hidden +
                2.0 * (saved_f(s) + dact));
}

double cal_train_mem_bytes(const cal_layer_shape_t *s);

double cal_train_stack_mem_bytes(const cal_layer_shape_t *s, int layers) {
  cal_train_t T;
  memset(&T, 0, sizeof T);
  T.s = *s;
  layout(&T);
  double one = cal_train_mem_bytes(s), ref = ref_bytes(s, &T);
  /* a bf16 stack's layers share the attention's per-thread scratch */
  const int nthr = omp_get_max_threads();
  double shared = cal_train_attn16_bytes(&T, nthr) - cal_train_attn16_bytes(&T, 0);
  int n = layers > 1 ? layers : 1;
  return (double)n * (one - ref) + ref - (double)(n - 1) * shared;
}

double cal_train_mem_bytes(const cal_layer_shape_t *s) {
  cal_train_t T;
  memset(&T, 0, sizeof T);
  T.s = *s;
  layout(&T);
  double np = (double)T.np, t = (double)T.t, d = (double)s->hidden;
  double dact = 0;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    dact += (double)T.dact_n[i];
  /* masters and moments twice, gradients; dy, y; saved; activation grads */
  double run = 4.0 * (state_f(s, np) + 2.0 * t * d + saved_f(s) + dact);
  if (s->bf16) {
    /* weights; inputs, transposes and output grads */
    double io = 0;
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      cal_train_prod_dims(&T, i, &k, &n);
      io += 2.0 * t * (double)k + t * (double)n;
    }
    run += 2.0 * ((np - 2 * d) + io) +
           cal_train_attn16_bytes(&T, omp_get_max_threads());
  }
  return run + ref_bytes(s, &T);
}

double cal_train_buffer_bytes(const cal_train_t *T) {
  double t = (double)T->t, d = (double)T->s.hidden, f = (double)T->s.ffn;
  double n = state_f(&T->s, (double)T->np);
  /* x, dy, h1, r1, qkv, lse, ao, x1, h2, r2, gu, a, y */
  n += t * (d + d + d + 1 + (double)T->nqkv + (double)T->s.heads +
            (double)T->hq + d + d + 1 + 2 * f + f + d);
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    n += (double)T->dact_n[i];
  n += (double)T->nthr * 2.0 * CAL_TRAIN_QB * (double)T->s.seq;
  double b16 = 0;
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, nn;
    cal_train_prod_dims(T, i, &k, &nn);
    b16 += (double)(k * nn) + 2.0 * t * (double)k + t * (double)nn;
  }
  return 4.0 * n + 2.0 * b16 + cal_train_attn16_bytes(T, T->nthr);
}

void cal_train_free(cal_train_t *T) {
  if (!T)
    return;
  cal_lora_free(T->lora);
  cal_train_attn16_free(T->attn16, T->nthr);
  for (int i = 0; i < 12; i++)
    cal_onednn_mm_free(T->mm[i]);
  cal_adamw_sets_free(T->p, T->m, T->v);
  if (!T->alias_x)
    cal_free(T->x);
  if (!T->alias_dy)
    cal_free(T->dy);
  float *f[] = {T->scratch, T->g, T->h1, T->r1, T->qkv, T->lse, T->ao,
                T->x1, T->h2, T->r2, T->gu, T->a, T->y};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    cal_free(f[i]);
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    cal_free(T->dact[i]);
  for (int i = 0; i < 4; i++) {
    cal_free(T->w16[i]);
    cal_free(T->in16[i]);
    cal_free(T->in16t[i]);
    cal_free(T->dout16[i]);
  }
  cal_free(T);
}

static float *falloc(size_t n) { return cal_alloc(4 * (n ? n : 1)); }
static uint16_t *halloc(size_t n) { return cal_alloc(2 * (n ? n : 1)); }


static int onednn_setup(cal_train_t *T) {
  const int64_t t = T->t;
  snprintf(T->impl, sizeof T->impl, "%s", cal_engine_name(CAL_ENGINE_ONEDNN));
  for (int i = 0; i < 4; i++) {
    int64_t k, n;
    float *in, *out, *dout, *din;
    cal_train_prod_dims(T, i, &k, &n);
    cal_train_prod_bufs(T, i, &in, &out, &dout, &din);
    float *gw = T->g + T->off[i];
    int rc;
    if ((rc = cal_onednn_mm_create(CAL_GEMM_BF16, t, n, k, T->in16[i],
                                   T->w16[i], out, &T->mm[3 * i])) < 0 ||
        (rc = cal_onednn_mm_create_ex(CAL_GEMM_BF16, t, k, n,
                                      CAL_ONEDNN_MM_TRANS_B, T->dout16[i],
                                      T->w16[i], din, &T->mm[3 * i + 1])) < 0 ||
        (rc = cal_onednn_mm_create(CAL_GEMM_BF16, k, n, t, T->in16t[i],
                                   T->dout16[i], gw, &T->mm[3 * i + 2])) < 0)
      return rc;
    for (int j = 0; j < 3; j++)
      cal_onednn_mm_impl_append(T->mm[3 * i + j], T->impl, sizeof T->impl);
  }
  return 0;
}

static int engine_setup(cal_train_t *T, cal_engine_t engine) {
  if (!T->s.bf16) {
    /* fp32: OpenBLAS's sgemm takes the transposes as flags */
    if (engine != CAL_ENGINE_BUILTIN && engine != CAL_ENGINE_OPENBLAS &&
        engine != CAL_ENGINE_ONEDNN)
      return CAL_EINVAL;
    T->engine = CAL_ENGINE_OPENBLAS;
    snprintf(T->impl, sizeof T->impl, "%s sgemm", cal_engine_name(T->engine));
    return 0;
  }
  if (engine == CAL_ENGINE_BUILTIN)
    engine = cal_engine_default(1);
  if (engine == CAL_ENGINE_OPENBLAS) {
    T->engine = engine;
    if (!(T->sbgemm = cal_openblas_sbgemm()))
      return CAL_EUNSUPP;
    snprintf(T->impl, sizeof T->impl, "%s sbgemm", cal_engine_name(T->engine));
    return 0;
  }
  if (engine != CAL_ENGINE_ONEDNN)
    return CAL_EINVAL;
  T->engine = engine;
  return onednn_setup(T);
}

/* a step; a bf16 step's attention scratch shared with share's (NULL:
 * its own) */
static int create_layer(const cal_layer_shape_t *s, uint64_t seed,
                        cal_engine_t engine, const cal_train_t *share,
                        cal_train_t **out) {
  *out = NULL;
  cal_layer_shape_t q = *s;
  q.decode = 0;
  int rc = cal_layer_check_shape(&q, NULL, 0);
  if (rc < 0)
    return rc;
  cal_train_t *T = cal_zalloc(sizeof *T);
  if (!T)
    return CAL_ENOMEM;
  T->s = q;
  T->opt = cal_train_adamw_default;
  layout(T);
  const size_t np = T->np, t = (size_t)T->t, d = (size_t)q.hidden;
  const size_t f = (size_t)q.ffn, lq = (size_t)q.seq;
  rc = CAL_ENOMEM;
  /* LoRA: the base frozen, one set of masters and no moments */
  if (q.lora_rank > 0 ? !(T->p[0] = falloc(np))
                      : cal_adamw_sets_alloc(T->p, T->m, T->v, np) != 0)
    goto fail;
  if (!(T->g = falloc(np)) || !(T->x = falloc(t * d)) ||
      !(T->dy = falloc(t * d)) || !(T->h1 = falloc(t * d)) ||
      !(T->r1 = falloc(t)) || !(T->qkv = falloc(t * (size_t)T->nqkv)) ||
      !(T->lse = falloc(t * (size_t)q.heads)) ||
      !(T->ao = falloc(t * (size_t)T->hq)) || !(T->x1 = falloc(t * d)) ||
      !(T->h2 = falloc(t * d)) || !(T->r2 = falloc(t)) ||
      !(T->gu = falloc(t * 2 * f)) || !(T->a = falloc(t * f)) ||
      !(T->y = falloc(t * d)))
    goto fail;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    if (!(T->dact[i] = falloc(T->dact_n[i])))
      goto fail;
  /* attention's two blocks of scores, one pair per thread of its team
   * (the team is held to this size) */
  T->nthr = omp_get_max_threads();
  if (!(T->scratch = falloc((size_t)T->nthr * 2 * CAL_TRAIN_QB * lq)))
    goto fail;
  if (q.bf16)
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      cal_train_prod_dims(T, i, &k, &n);
      if (!(T->w16[i] = halloc((size_t)(k * n))) ||
          !(T->in16[i] = halloc(t * (size_t)k)) ||
          !(T->in16t[i] = halloc(t * (size_t)k)) ||
          !(T->dout16[i] = halloc(t * (size_t)n)))
        goto fail;
    }
  /* weights uniform with variance 1/fan_in (as the forward layer), gains
   * in [0.5, 1.5]; each sequence's input and upstream gradient from its
   * own stream, so sequence 0 is the same at every batch size */
  cal_rng_t r;
  cal_rng_seed(&r, seed);
  const int64_t fan[4] = {q.hidden, T->hq, q.hidden, q.ffn};
  for (int i = 0; i < 4; i++) {
    float a = (float)sqrt(3.0 / (double)fan[i]);
    cal_fill_f32(T->p[0] + T->off[i], T->off[i + 1] - T->off[i], -a, a, &r);
  }
  cal_fill_f32(T->p[0] + T->off[CAL_TRAIN_G1], 2 * d, 0.5f, 1.5f, &r);
  if (!q.lora_rank) {
    cal_memset_team(T->m[0], 0, 4 * np);
    cal_memset_team(T->v[0], 0, 4 * np);
  }
  for (int64_t b = 0; b < q.batch; b++) {
    cal_rng_t rb;
    cal_rng_seed(&rb, seed ^ (0x7a11ULL + 0x1000193ULL * (uint64_t)b));
    cal_fill_f32(T->x + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
    cal_fill_f32(T->dy + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
  }
  cal_memset_team(T->y, 0xff, 4 * t * d); /* NaN until a step writes it */
  cal_memset_team(T->g, 0xff, 4 * np);
  if ((rc = engine_setup(T, engine)) < 0 ||
      (q.bf16 && (rc = cal_train_attn16_create(T, share)) < 0) ||
      (q.lora_rank > 0 && (rc = cal_lora_create(T, seed)) < 0))
    goto fail;
  if (q.bf16)
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      cal_train_prod_dims(T, i, &k, &n);
      cal_train_round_weights(T->p[0] + T->off[i], T->w16[i], NULL, k, n);
    }
  *out = T;
  return 0;
fail:
  cal_train_free(T);
  return rc;
}

int cal_train_create(const cal_layer_shape_t *s, uint64_t seed,
                     cal_engine_t engine, cal_train_t **out) {
  return create_layer(s, seed, engine, NULL, out);
}

const float *cal_train_params_before(const cal_train_t *T) {
  return T->p[1 - T->cur] ? T->p[1 - T->cur] : T->p[T->cur]; /* LoRA: one */
}
const float *cal_train_params_after(const cal_train_t *T) {
  return T->p[T->cur];
}

/* ---- a stack */

void cal_train_stack_free(cal_train_stack_t *S) {
  if (!S)
    return;
  for (int l = 0; S->T && l < S->n; l++)
    cal_train_free(S->T[l]);
  cal_free(S->T);
  cal_free(S);
}

int cal_train_stack_create(const cal_layer_shape_t *s, int layers,
                           uint64_t seed, cal_engine_t engine,
                           cal_train_stack_t **out) {
  *out = NULL;
  if (layers < 1 || layers > 4096)
    return CAL_EINVAL;
  cal_train_stack_t *S = cal_alloc(sizeof *S);
  if (!S)
    return CAL_ENOMEM;
  memset(S, 0, sizeof *S);
  if (!(S->T = cal_alloc(sizeof *S->T * (size_t)layers))) {
    cal_free(S);
    return CAL_ENOMEM;
  }
  memset(S->T, 0, sizeof *S->T * (size_t)layers);
  int rc = 0;
  for (int l = 0; l < layers && rc == 0; l++) {
    /* each layer its own weights (layer l > 0 reads layer l - 1's output
     * instead of its own input rows) */
    rc = create_layer(s, seed + 0x9e37ULL * (uint64_t)l, engine,
                      l > 0 ? S->T[0] : NULL, &S->T[l]);
    S->n = l + (rc == 0);
  }
  if (rc < 0) {
    cal_train_stack_free(S);
    return rc;
  }
  for (int l = 1; l < layers; l++) {
    cal_free(S->T[l]->x);
    S->T[l]->x = S->T[l - 1]->y;
    S->T[l]->alias_x = 1;
    cal_free(S->T[l - 1]->dy);
    S->T[l - 1]->dy = S->T[l]->dact[CAL_TRAIN_DX];
    S->T[l - 1]->alias_dy = 1;
  }
  *out = S;
  return 0;
}

int cal_train_stack_step(cal_train_stack_t *S) {
  int rc = 0;
  for (int l = 0; l < S->n && rc == 0; l++)
    rc = cal_train_forward(S->T[l]);
  for (int l = S->n - 1; l >= 0 && rc == 0; l--)
    rc = cal_train_backward(S->T[l]);
  for (int l = 0; l < S->n && rc == 0; l++)
    cal_train_update(S->T[l]);
  return rc;
}

int cal_train_stack_verify(const cal_train_stack_t *S) {
  int rc = cal_train_verify(S->T[0]);
  return rc == 0 && S->n > 1 ? cal_train_verify(S->T[S->n - 1]) : rc;
}

/* ---- the kernel-table entries */

static void shape_of(const cal_params_t *p, int bf16, cal_layer_shape_t *s) {
  cal_layer_shape_from_params(p, s);
  s->decode = 0;
  s->bf16 = bf16;
}

static int layers_of(const cal_params_t *p) {
  return p->layers > 1 ? (int)p->layers : 1;
}

static double train_flops(const cal_params_t *p) {
  cal_layer_shape_t s;
  shape_of(p, 0, &s);
  return (double)layers_of(p) * cal_train_flops(&s);
}

/* the weights, masters and moments read and written once, the saved
 * activations written and read once */
static double bytes_of(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return (double)layers_of(p) *
         (cal_layer_weight_bytes(&s) * (bf16 ? 2.0 : 1.0) * 8.0 +
          2.0 * cal_train_saved_bytes(&s));
}

static double train_bytes_as(const cal_params_t *p, int bf16) {
  return bytes_of(p, bf16);
}

static double train_mem_as(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return cal_train_stack_mem_bytes(&s, layers_of(p));
}

/* decode does not apply: a training step runs the prefill shape */
static int train_setup_as(const cal_params_t *p, void **st, int decode,
                          int bf16) {
  (void)decode;
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  if (p->layers < 0 || p->layers > 4096)
    return CAL_EINVAL;
  return cal_train_stack_create(&s, layers_of(p), p->seed, p->engine,
                                (cal_train_stack_t **)st);
}
static int train_run(void *st) { return cal_train_stack_step(st); }
static int train_verify(void *st) { return cal_train_stack_verify(st); }
static void train_teardown(void *st) { cal_train_stack_free(st); }
static const char *train_impl(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->impl;
}
/* no SIMD variant of its own: the products are the engine's */
static const char *train_variant(const void *st) {
  (void)st;
  return "";
}

static cal_engine_t train_engine(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->engine;
}

#define train_reshape NULL /* TODO */
CAL_LAYER_KERNEL(train, layer_train, CAL_DTYPE_FP32, NULL, 0, 0);
CAL_LAYER_KERNEL(train, layer_train_bf16, CAL_DTYPE_BF16,
                 cal_forward_bf16_supported, 0, 1);
