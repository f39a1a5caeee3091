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

/* A fine-tuning learning rate.  The step's objective is linear in its
 * output (sum(y ⊙ dy), dy fixed), so AdamW moves every weight by about lr
 * a step, always the same way: at 1e-3 a model kept over a sweep's tens to
 * hundreds of steps drifted by its own scale, its attention grew peaked
 * and bf16's checks failed (--samples 60 on the tiny preset); at 1e-5 a
 * thousand steps move a weight by a tenth of its scale.  The step's cost
 * does not depend on it. */
const cal_adamw_t cal_train_adamw_default = {1e-5, 0.9, 0.999, 1e-8, 0.01};


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

/* floats of the parameters' state: masters, moments and gradients; with
 * LoRA the frozen base's masters and gradient buffer (its gains'
 * gradients) and the adapters' buffers */
static double state_f(const cal_layer_shape_t *s, double np) {
  return s->lora_rank > 0 ? 2.0 * np + cal_lora_buffer_floats(s) : 4.0 * np;
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
static double ref_bytes(const cal_layer_shape_t *s, const cal_train_t *T,
                        int checked) {
  double dact = 0;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    dact += (double)T->dact_n[i];
  /* and the checked layers' saved masters and moments (the verification's
   * step, cal_train_save_inputs) */
  double saved = s->lora_rank > 0 ? 0.0 : 4.0 * 3.0 * (double)T->np * checked;
  return saved + 8.0 * (2.0 * (double)T->np + (double)T->t * (double)s->hidden +
                        2.0 * (saved_f(s) + dact));
}

double cal_train_mem_bytes(const cal_layer_shape_t *s);

double cal_train_stack_mem_bytes(const cal_layer_shape_t *s, int layers) {
  cal_train_t T;
  memset(&T, 0, sizeof T);
  T.s = *s;
  layout(&T);
  int n = layers > 1 ? layers : 1;
  double one = cal_train_mem_bytes(s), ref = ref_bytes(s, &T, n > 1 ? 2 : 1);
  /* a bf16 stack's layers share the attention's per-thread scratch; all
   * share the activation gradients but dx and the output gradients'
   * bf16 copies (shared_grads) */
  const int nthr = omp_get_max_threads();
  double shared = s->bf16 ? cal_train_attn16_bytes(&T, nthr) -
                                cal_train_attn16_bytes(&T, 0)
                          : 0.0;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    shared += i == CAL_TRAIN_DX ? 0.0 : 4.0 * (double)T.dact_n[i];
  for (int i = 0; s->bf16 && i < 4; i++) {
    int64_t k, nn;
    cal_train_prod_dims(&T, i, &k, &nn);
    shared += 2.0 * (double)T.t * (double)nn;
  }
  return (double)n * (one - ref_bytes(s, &T, 1)) + ref - (double)(n - 1) * shared;
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
  /* masters, moments, gradients; dy, y; saved; activation grads */
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
  return run + ref_bytes(s, &T, 1);
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

/* What depends on the batch: the activations, their gradients, the bf16
 * copies of the products' inputs and output gradients, the products bound
 * to them and the attention's bf16 buffers.  The stack's aliases (x, dy)
 * are not the layer's to free. */
static void free_batch(cal_train_t *T) {
  cal_train_attn16_free(T->attn16, T->nthr);
  T->attn16 = NULL;
  for (int i = 0; i < 12; i++) {
    cal_onednn_mm_free(T->mm[i]);
    T->mm[i] = NULL;
  }
  if (!T->alias_x)
    cal_free(T->x);
  if (!T->alias_dy)
    cal_free(T->dy);
  T->x = T->dy = NULL;
  T->alias_x = T->alias_dy = 0;
  float **f[] = {&T->h1, &T->r1, &T->qkv, &T->lse, &T->ao, &T->x1, &T->h2,
                 &T->r2, &T->gu, &T->a, &T->y};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
    cal_free(*f[i]);
    *f[i] = NULL;
  }
  for (int i = 0; i < CAL_TRAIN_NDACT; i++) {
    if (!T->shared_grads || i == CAL_TRAIN_DX)
      cal_free(T->dact[i]);
    T->dact[i] = NULL;
  }
  for (int i = 0; i < 4; i++) {
    uint16_t **h[] = {&T->in16[i], &T->in16t[i], &T->dout16[i]};
    for (int j = 0; j < 3; j++) {
      if (!(T->shared_grads && j == 2))
        cal_free(*h[j]);
      *h[j] = NULL;
    }
  }
  T->shared_grads = 0;
}

void cal_train_free(cal_train_t *T) {
  if (!T)
    return;
  free_batch(T);
  cal_lora_free(T->lora);
  cal_free_each(T->p, T->m, T->v, T->p0, T->m0, T->v0, T->scratch, T->g);
  for (int i = 0; i < 4; i++)
    cal_free(T->w16[i]);
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
  T->engine = engine; /* its products bound with the batch (bind_batch) */
  return 0;
}

/* The batch's buffers: the activations saved for backward, their
 * gradients, y, the input rows and the upstream gradient (a stack
 * re-points the last two at its neighbours'), and in bf16 the products'
 * inputs, their transposes and output gradients; the gradients but dx and
 * the output gradients' copies share's where given (shared_grads).  0 or
 * CAL_ENOMEM. */
static int alloc_batch(cal_train_t *T, const cal_train_t *share) {
  const size_t t = (size_t)T->t, d = (size_t)T->s.hidden;
  const size_t f = (size_t)T->s.ffn;
  if (!(T->x = falloc(t * d)) || !(T->dy = falloc(t * d)) ||
      !(T->h1 = falloc(t * d)) || !(T->r1 = falloc(t)) ||
      !(T->qkv = falloc(t * (size_t)T->nqkv)) ||
      !(T->lse = falloc(t * (size_t)T->s.heads)) ||
      !(T->ao = falloc(t * (size_t)T->hq)) || !(T->x1 = falloc(t * d)) ||
      !(T->h2 = falloc(t * d)) || !(T->r2 = falloc(t)) ||
      !(T->gu = falloc(t * 2 * f)) || !(T->a = falloc(t * f)) ||
      !(T->y = falloc(t * d)))
    return CAL_ENOMEM;
  T->shared_grads = share != NULL;
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    if (!(T->dact[i] = share && i != CAL_TRAIN_DX ? share->dact[i]
                                                  : falloc(T->dact_n[i])))
      return CAL_ENOMEM;
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    if (!(T->in16[i] = halloc(t * (size_t)k)) ||
        !(T->in16t[i] = halloc(t * (size_t)k)) ||
        !(T->dout16[i] = share ? share->dout16[i] : halloc(t * (size_t)n)))
      return CAL_ENOMEM;
  }
  return 0;
}

/* Each sequence's input and upstream gradient from its own stream, so
 * sequence b is the same at every batch size; y NaN until a step writes
 * it. */
static void fill_batch(cal_train_t *T) {
  const size_t lq = (size_t)T->s.seq, d = (size_t)T->s.hidden;
  for (int64_t b = 0; b < T->s.batch; b++) {
    cal_rng_t rb;
    cal_rng_seed(&rb, T->seed ^ (0x7a11ULL + 0x1000193ULL * (uint64_t)b));
    cal_fill_f32(T->x + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
    cal_fill_f32(T->dy + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
  }
  cal_memset_team(T->y, 0xff, 4 * (size_t)T->t * d);
}

/* The batch's products on the engine (bf16 on oneDNN: matmuls bound to
 * the batch's buffers) and a bf16 step's attention, its threads' scratch
 * share's where given. */
static int bind_batch(cal_train_t *T, const cal_train_t *share) {
  int rc = 0;
  if (T->s.bf16 && T->engine == CAL_ENGINE_ONEDNN)
    rc = onednn_setup(T);
  if (rc == 0 && T->s.bf16)
    rc = cal_train_attn16_create(T, share);
  return rc;
}

/* The parameters' state: masters (weights uniform with variance 1/fan_in,
 * as the forward layer's; gains in [0.5, 1.5]), zero moments, gradients
 * NaN until a step writes them, a bf16 step's rounded copies; the
 * attention's score blocks, one pair per thread of its team (the team is
 * held to this size).  0 or CAL_ENOMEM. */
static int make_state(cal_train_t *T) {
  const size_t np = T->np, d = (size_t)T->s.hidden;
  /* LoRA: the base frozen, masters and no moments */
  if (!(T->p = falloc(np)) ||
      (!T->s.lora_rank && (!(T->m = falloc(np)) || !(T->v = falloc(np)))))
    return CAL_ENOMEM;
  T->nthr = omp_get_max_threads();
  if (!(T->g = falloc(np)) ||
      !(T->scratch = falloc((size_t)T->nthr * 2 * CAL_TRAIN_QB *
                            (size_t)T->s.seq)))
    return CAL_ENOMEM;
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    if (!(T->w16[i] = halloc((size_t)(k * n))))
      return CAL_ENOMEM;
  }
  cal_rng_t r;
  cal_rng_seed(&r, T->seed);
  const int64_t fan[4] = {T->s.hidden, T->hq, T->s.hidden, T->s.ffn};
  for (int i = 0; i < 4; i++) {
    float a = (float)sqrt(3.0 / (double)fan[i]);
    cal_fill_f32(T->p + T->off[i], T->off[i + 1] - T->off[i], -a, a, &r);
  }
  cal_fill_f32(T->p + T->off[CAL_TRAIN_G1], 2 * d, 0.5f, 1.5f, &r);
  if (!T->s.lora_rank) {
    cal_memset_team(T->m, 0, 4 * np);
    cal_memset_team(T->v, 0, 4 * np);
  }
  cal_memset_team(T->g, 0xff, 4 * np);
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    cal_train_round_weights(T->p + T->off[i], T->w16[i], NULL, k, n);
  }
  return 0;
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
  T->seed = seed;
  T->opt = cal_train_adamw_default;
  layout(T);
  if ((rc = make_state(T)) < 0 || (rc = alloc_batch(T, share)) < 0 ||
      (rc = engine_setup(T, engine)) < 0 || (rc = bind_batch(T, share)) < 0 ||
      (q.lora_rank > 0 && (rc = cal_lora_create(T, seed)) < 0))
    goto fail;
  fill_batch(T);
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

int cal_train_save_inputs(cal_train_t *T, int on) {
  cal_free_each(T->p0, T->m0, T->v0);
  T->p0 = T->m0 = T->v0 = NULL;
  if (!on || T->lora) /* LoRA: the adapters keep their own (lora.h) */
    return 0;
  if ((T->p0 = falloc(T->np)) && (T->m0 = falloc(T->np)) &&
      (T->v0 = falloc(T->np)))
    return 0;
  cal_train_save_inputs(T, 0);
  return CAL_ENOMEM;
}

const float *cal_train_params_before(const cal_train_t *T) {
  return T->p0 ? T->p0 : T->p;
}
const float *cal_train_params_after(const cal_train_t *T) { return T->p; }

/* ---- a stack */

void cal_train_stack_free(cal_train_stack_t *S) {
  if (!S)
    return;
  for (int l = 0; S->T && l < S->n; l++)
    cal_train_free(S->T[l]);
  cal_free(S->T);
  cal_free(S);
}

/* Layer l > 0 reads layer l - 1's output instead of its own input rows,
 * and sends its input's gradient down as layer l - 1's upstream one. */
static void link(cal_train_stack_t *S) {
  for (int l = 1; l < S->n; l++) {
    cal_free(S->T[l]->x);
    S->T[l]->x = S->T[l - 1]->y;
    S->T[l]->alias_x = 1;
    cal_free(S->T[l - 1]->dy);
    S->T[l - 1]->dy = S->T[l]->dact[CAL_TRAIN_DX];
    S->T[l - 1]->alias_dy = 1;
  }
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
  link(S);
  *out = S;
  return 0;
}

/* A layer's batch, freed already, made for another batch: its state
 * kept, its buffers allocated, bound and drawn as create does. */
static int reshape_layer(cal_train_t *T, int64_t batch,
                         const cal_train_t *share) {
  T->s.batch = batch;
  layout(T);
  int rc;
  if ((rc = alloc_batch(T, share)) < 0 || (rc = bind_batch(T, share)) < 0)
    return rc;
  fill_batch(T);
  return 0;
}

int cal_train_stack_reshape(cal_train_stack_t *S, int64_t batch) {
  if (batch < 1)
    return CAL_EINVAL;
  if (S->T[0]->lora) /* the adapters' rows too: set up anew */
    return CAL_EUNSUPP;
  /* every layer's old batch freed before any new one is made: the
   * stack never holds both */
  for (int l = S->n - 1; l >= 0; l--)
    free_batch(S->T[l]);
  for (int l = 0; l < S->n; l++) {
    int rc = reshape_layer(S->T[l], batch, l > 0 ? S->T[0] : NULL);
    if (rc < 0)
      return rc;
  }
  link(S);
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

int cal_train_stack_check(const cal_train_stack_t *S) {
  int rc = cal_train_verify(S->T[0]);
  return rc == 0 && S->n > 1 ? cal_train_verify(S->T[S->n - 1]) : rc;
}

int cal_train_stack_verify(cal_train_stack_t *S) {
  if (S->T[0]->step < 1)
    return CAL_EVERIFY; /* nothing run yet */
  /* the bottom layer's step again, checked before the top's runs on its
   * output: each from the inputs the stack's last step left it (the top
   * reads the bottom's new output where they are neighbours) */
  int rc = 0;
  for (int j = 0; j < (S->n > 1 ? 2 : 1) && rc == 0; j++) {
    cal_train_t *T = S->T[j ? S->n - 1 : 0];
    const int had = T->p0 != NULL; /* a layer saving its inputs goes on */
    rc = cal_train_save_inputs(T, 1);
    if (rc == 0)
      rc = cal_train_step(T);
    if (rc == 0)
      rc = cal_train_verify(T);
    if (!had)
      cal_train_save_inputs(T, 0);
  }
  return rc;
}
