/* The LM head's training step (see lm_head.h) and its kernel-table entries
 * lm_head_train (fp32) and lm_head_train_bf16. */
#include "lm_head.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "engine.h"

double cal_lm_head_flops(int64_t t, int64_t d, int64_t v) {
  return 3.0 * 2.0 * (double)t * (double)v * (double)d;
}

static int64_t chunk_of(int64_t v) {
  return v < CAL_LM_HEAD_CHUNK ? v : CAL_LM_HEAD_CHUNK;
}

/* bytes a kept logit takes: fp16 in a bf16 head whose vector loops have
 * it, else fp32 */
static double kept_bytes(int bf16) {
  return bf16 && cal_train_vec()->fp16 ? 2.0 : 4.0;
}

/* whether a step keeps every chunk's e for the second pass (else it
 * recomputes the logits) */
static int keeps_logits(int64_t t, int64_t v, int bf16) {
  return (double)t * (double)v * kept_bytes(bf16) <= CAL_LM_HEAD_KEEP_BYTES;
}

/* oneDNN's scratchpad of a product: its per-thread copies of
 * operand blocks, at most 0.6 MiB a thread at the presets' shapes (up to
 * 16384 tokens, 2 to 64 threads): counted as 1 MiB a thread, for the
 * threads in force now (those the primitives are created for) */
static double scratch_bytes(void) {
  return (double)omp_get_max_threads() * 1048576.0;
}

double cal_lm_head_mem_bytes(int64_t t, int64_t d, int64_t v, int bf16) {
  double T = (double)t, D = (double)d, C = (double)chunk_of(v);
  double chunks = ceil((double)v / C);
  /* kept: e of every chunk (fp32 in logits, or fp16 beside a chunk of
   * fp32 logits) */
  double kept = keeps_logits(t, v, bf16) ? T * (double)v * kept_bytes(bf16) : 0.0;
  double lg = kept > 0 && kept_bytes(bf16) == 4.0 ? 0.0 : 4.0 * T * C;
  /* masters and moments, one set; h, dh; a chunk's gradient; three
   * per-token figures, the target and the chunks' maxima */
  double b = 4.0 * (3.0 * (double)v * D + 2.0 * T * D + C * D + 4.0 * T +
                    chunks * T) + kept + lg +
             /* verification: a few tokens' logits and dh in double, and
              * the sampled rows' masters and moments as they were */
             8.0 * (64.0 * D + 16.0 * (double)v) + 4.0 * 3.0 * 16.0 * D;
  /* bf16: h, W and a chunk's gradient rounded; oneDNN's products (bf16,
   * or fp32 on oneDNN): six scratchpads */
  if (bf16)
    b += 2.0 * (T * D + (double)v * D + T * C);
  return b + 6.0 * scratch_bytes();
}

/* frees what is bound to the token count (tokens_make) */
static void tokens_free(cal_lm_head_t *H) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      cal_onednn_mm_free(H->mm[i][j]);
      H->mm[i][j] = NULL;
    }
  cal_free_each(H->h, H->dh, H->logits, H->lse, H->cmax, H->e16, H->target,
                H->h16, H->dl16);
  H->h = H->dh = H->logits = H->lse = H->cmax = NULL;
  H->e16 = H->h16 = H->dl16 = NULL;
  H->target = NULL;
}

void cal_lm_head_free(cal_lm_head_t *H) {
  if (!H)
    return;
  tokens_free(H);
  cal_free_each(H->w, H->m, H->v, H->gw, H->w16, H);
}

/* The oneDNN products of a chunk n rows wide into set s, over the head's
 * buffers (the chunk's rows of W and its logits are bound per chunk, and
 * in fp32 its gradient too), and the implementations oneDNN chose, each
 * once in H->impl.
 *
 * The layouts: logits read W's rows as Bᵀ (dnnl_ba), dW the gradient's
 * rows as Aᵀ (dnnl_ba), dh both plain.  oneDNN 2.6 runs the transposed
 * bf16 ones on its brgemm matmul as it does the plain ones ("brg:" and
 * the ISA: avx512_core_amx_bf16 on AMX, avx512_core_bf16 for the tests'
 * small shapes), never on a "ref" implementation (test_train checks), so
 * no product needs a transposed copy of its own.  dW from Aᵀ runs at
 * about 0.6 of the rate of the plain layout alone, hot in cache, but a
 * step with an explicit transposed copy of the gradient and a plain dW
 * was no faster (qwen2-0.5b, batch 1, 2 threads: 430-440 ms a step either
 * way). */
static int onednn_products(cal_lm_head_t *H, int s, int64_t n) {
  const int64_t t = H->t, d = H->d;
  const cal_gemm_dt_t dt = H->bf16 ? CAL_GEMM_BF16 : CAL_GEMM_F32;
  void *h = H->bf16 ? (void *)H->h16 : (void *)H->h;
  void *w = H->bf16 ? (void *)H->w16 : (void *)H->w;
  void *g = H->bf16 ? (void *)H->dl16 : (void *)H->logits;
  int rc;
  if ((rc = cal_onednn_mm_create_ex(dt, t, n, d, CAL_ONEDNN_MM_TRANS_B, h, w,
                                    H->logits, &H->mm[s][0])) < 0 ||
      (rc = cal_onednn_mm_create_ex(dt, t, d, n, CAL_ONEDNN_MM_ACCUMULATE, g,
                                    w, H->dh, &H->mm[s][1])) < 0 ||
      (rc = cal_onednn_mm_create_ex(dt, n, d, t, CAL_ONEDNN_MM_TRANS_A, g, h,
                                    H->gw, &H->mm[s][2])) < 0)
    return rc;
  for (int j = 0; j < 3; j++)
    cal_onednn_mm_impl_append(H->mm[s][j], H->impl, sizeof H->impl);
  return 0;
}

/* h and the targets for H->t tokens from the stream where create left
 * it: the final norm's rows, O(1) entries; targets uniform */
static void draw_inputs(cal_lm_head_t *H) {
  cal_rng_t r = H->rng;
  cal_fill_f32(H->h, (size_t)(H->t * H->d), -1.0f, 1.0f, &r);
  for (int64_t i = 0; i < H->t; i++)
    H->target[i] = (int32_t)(cal_rng_next(&r) % (uint64_t)H->vocab);
}

/* What is bound to the token count, made for t (what an earlier count
 * made freed first): the activations and per-token figures, whether the
 * step keeps e, the inputs, oneDNN's products over them. */
static int tokens_make(cal_lm_head_t *H, int64_t t) {
  const int64_t d = H->d, vocab = H->vocab, C = H->chunk;
  tokens_free(H);
  H->t = t;
  H->keep = keeps_logits(t, vocab, H->bf16);
  int fp16 = H->keep && kept_bytes(H->bf16) == 2.0;
  int ok = (H->h = cal_alloc(4 * (size_t)(t * d))) &&
           (H->dh = cal_alloc(4 * (size_t)(t * d))) &&
           (H->logits = cal_alloc(4 * (size_t)(t * (H->keep && !fp16 ? vocab : C)))) &&
           (!fp16 || (H->e16 = cal_alloc(2 * (size_t)t * (size_t)vocab))) &&
           (H->cmax = cal_alloc(4 * (size_t)t * (size_t)((vocab + C - 1) / C))) &&
           (H->lse = cal_alloc(4 * 3 * (size_t)t)) &&
           (H->target = cal_alloc(4 * (size_t)t));
  ok = ok && (!H->bf16 || ((H->h16 = cal_alloc(2 * (size_t)(t * d))) &&
                           (H->dl16 = cal_alloc(2 * (size_t)(t * C)))));
  if (!ok)
    return CAL_ENOMEM;
  draw_inputs(H);
  memset(H->dh, 0xff, 4 * (size_t)(t * d)); /* NaN until a step */
  snprintf(H->impl, sizeof H->impl, "%s%s", cal_engine_name(H->engine),
           H->engine == CAL_ENGINE_OPENBLAS ? " sgemm" : "");
  int rc = 0;
  if (H->engine == CAL_ENGINE_ONEDNN) {
    int64_t last = vocab - (vocab - 1) / C * C;
    if ((rc = onednn_products(H, 0, C)) == 0 && last != C)
      rc = onednn_products(H, 1, last);
  }
  return rc;
}

static int create_as(int64_t t, int64_t d, int64_t vocab, uint64_t seed,
                     int bf16, cal_engine_t engine, cal_lm_head_t **out) {
  *out = NULL;
  if (t < 1 || d < 1 || vocab < 2 || vocab > (1 << 30) || d > (1 << 20))
    return CAL_EINVAL;
  const char *why = NULL;
  if (bf16 && cal_bf16_supported(CAL_ENGINE_ONEDNN, &why) < 0)
    return CAL_EUNSUPP;
  cal_lm_head_t *H = cal_alloc(sizeof *H);
  if (!H)
    return CAL_ENOMEM;
  memset(H, 0, sizeof *H);
  H->d = d, H->vocab = vocab, H->chunk = chunk_of(vocab);
  H->bf16 = bf16;
  H->engine = bf16 ? CAL_ENGINE_ONEDNN
              : engine == CAL_ENGINE_BUILTIN ? cal_engine_default(0)
                                             : engine;
  H->vec = cal_train_vec();
  H->opt = cal_train_adamw_default;
  int rc = CAL_EINVAL;
  if (H->engine != CAL_ENGINE_ONEDNN && H->engine != CAL_ENGINE_OPENBLAS)
    goto fail;
  size_t nw = (size_t)(vocab * d);
  rc = CAL_ENOMEM;
  if (!(H->w = cal_alloc(4 * nw)) || !(H->m = cal_alloc(4 * nw)) ||
      !(H->v = cal_alloc(4 * nw)) ||
      !(H->gw = cal_alloc(4 * (size_t)(H->chunk * d))) ||
      (bf16 && !(H->w16 = cal_alloc(2 * nw))))
    goto fail;
  cal_rng_seed(&H->rng, seed ^ 0x1ead);
  float a = (float)sqrt(3.0 / (double)d);
  cal_fill_f32(H->w, nw, -a, a, &H->rng);
  cal_memset_team(H->m, 0, 4 * nw);
  cal_memset_team(H->v, 0, 4 * nw);
  if (bf16)
    cal_f32_to_bf16_n(H->w, H->w16, (int64_t)nw);
  if ((rc = tokens_make(H, t)) < 0)
    goto fail;
  *out = H;
  return 0;
fail:
  cal_lm_head_free(H);
  return rc;
}

int cal_lm_head_reshape(cal_lm_head_t *H, int64_t t) {
  if (t < 1)
    return CAL_EINVAL;
  if (t != H->t)
    return tokens_make(H, t);
  draw_inputs(H); /* the buffers and products fit already */
  return 0;
}

int cal_lm_head_create(int64_t t, int64_t d, int64_t vocab, uint64_t seed,
                       cal_lm_head_t **out) {
  return create_as(t, d, vocab, seed, 0, CAL_ENGINE_OPENBLAS, out);
}

int cal_lm_head_create_on(int64_t t, int64_t d, int64_t vocab, uint64_t seed,
                          cal_engine_t engine, cal_lm_head_t **out) {
  return create_as(t, d, vocab, seed, 0, engine, out);
}

int cal_lm_head_create_bf16(int64_t t, int64_t d, int64_t vocab, uint64_t seed,
                            cal_lm_head_t **out) {
  return create_as(t, d, vocab, seed, 1, CAL_ENGINE_ONEDNN, out);
}

static void sg(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f,
              a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

/* The logits of the chunk of n rows from r0 into lg [t][n]. */
static int chunk_logits(cal_lm_head_t *H, const float *W, int64_t r0,
                        int64_t n, float *lg) {
  const int64_t t = H->t, d = H->d;
  if (H->engine == CAL_ENGINE_OPENBLAS) {
    sg(CblasNoTrans, CblasTrans, t, n, d, H->h, d, W + r0 * d, d, 0.0f, lg, n);
    return 0;
  }
  cal_onednn_mm_t *mm = H->mm[n != H->chunk][0];
  void *w = H->bf16 ? (void *)(H->w16 + r0 * d) : (void *)(W + r0 * d);
  int rc = cal_onednn_mm_bind(mm, NULL, w, lg);
  return rc < 0 ? rc : cal_onednn_mm_run(mm);
}

/* The chunk's products of its logits' gradient g [t][n] (bf16: rounded in
 * dl16): dh += g·W_chunk, gw = gᵀ·h. */
static int chunk_grads(cal_lm_head_t *H, const float *W, int64_t r0,
                       int64_t n, const float *g) {
  const int64_t t = H->t, d = H->d;
  if (H->engine == CAL_ENGINE_OPENBLAS) {
    sg(CblasNoTrans, CblasNoTrans, t, d, n, g, n, W + r0 * d, d, 1.0f, H->dh,
       d);
    sg(CblasTrans, CblasNoTrans, n, d, t, g, n, H->h, d, 0.0f, H->gw, d);
    return 0;
  }
  cal_onednn_mm_t *const *mm = H->mm[n != H->chunk];
  /* bf16: the gradient rounded in dl16, bound at creation */
  void *a = H->bf16 ? NULL : (void *)g;
  void *w = H->bf16 ? (void *)(H->w16 + r0 * d) : (void *)(W + r0 * d);
  int rc = cal_onednn_mm_bind(mm[1], a, w, NULL);
  if (rc == 0)
    rc = cal_onednn_mm_bind(mm[2], a, NULL, NULL);
  if (rc == 0)
    rc = cal_onednn_mm_run(mm[1]);
  return rc < 0 ? rc : cal_onednn_mm_run(mm[2]);
}

/* where chunk r0's logits go: the whole array when the step keeps fp32 e
 * (chunk at r0·t), else the one chunk's */
static float *chunk_buf(const cal_lm_head_t *H, int64_t r0) {
  return H->logits + (H->keep && !H->e16 ? r0 * H->t : 0);
}

/* Pass 1 over chunk c (n rows of W from r0): its logits, each row's
 * maximum over them, e = exp(logit - that maximum) and their sum merged
 * into the row's running maximum and sum, the target's logit; e kept
 * (fp32 over the logits, or fp16) when the step keeps them. */
static int pass1_chunk(cal_lm_head_t *H, const float *W, int64_t c,
                       int64_t r0, int64_t n) {
  const int64_t t = H->t;
  float *mx = H->lse, *sum = H->lse + t, *tl = H->lse + 2 * t;
  float *lg = chunk_buf(H, r0);
  const cal_train_vec_t *vec = H->vec;
  int rc = chunk_logits(H, W, r0, n, lg);
  if (rc < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t; i++) {
    float *l = lg + i * n;
    int64_t tg = H->target[i];
    if (tg >= r0 && tg < r0 + n)
      tl[i] = l[tg - r0];
    float cm = vec->row_max(l, n);
    float s = vec->row_exp(l, n, cm, H->keep && !H->e16 ? l : NULL,
                           H->keep && H->e16 ? H->e16 + r0 * t + i * n : NULL);
    float m = cm > mx[i] ? cm : mx[i];
    sum[i] = sum[i] * expf(mx[i] - m) + s * expf(cm - m);
    mx[i] = m;
    H->cmax[c * t + i] = cm;
  }
  return 0;
}

/* Pass 2 over chunk c: the softmax gradient (e kept times exp(chunk
 * maximum - log-sum-exp), or the logits again), rounded to bf16 in a bf16
 * head; dh, the chunk's rows' gradient and their AdamW in place (the
 * products above are the last to read the chunk's rows this step). */
static int pass2_chunk(cal_lm_head_t *H, const float *W, int64_t c,
                       int64_t r0, int64_t n) {
  const int64_t t = H->t, d = H->d;
  const float *lse = H->lse, *tl = H->lse + 2 * t;
  const float inv_t = 1.0f / (float)t;
  const cal_train_vec_t *vec = H->vec;
  float *lg = chunk_buf(H, r0);
  int rc;
  if (!H->keep && (rc = chunk_logits(H, W, r0, n, lg)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t; i++) {
    float *l = lg + i * n, scale = inv_t;
    const uint16_t *e16 = H->keep && H->e16 ? H->e16 + r0 * t + i * n : NULL;
    uint16_t *g16 = H->bf16 ? H->dl16 + i * n : NULL;
    if (H->keep)
      scale = expf(H->cmax[c * t + i] - lse[i]) * inv_t;
    else
      vec->row_exp(l, n, lse[i], l, NULL);
    vec->row_scale(e16 ? NULL : l, e16, n, scale, l, g16);
    int64_t tg = H->target[i];
    if (tg >= r0 && tg < r0 + n) {
      float g = (expf(tl[i] - lse[i]) - 1.0f) * inv_t;
      if (g16)
        g16[tg - r0] = cal_f32_to_bf16(g);
      else
        l[tg - r0] = g;
    }
  }
  if ((rc = chunk_grads(H, W, r0, n, lg)) < 0)
    return rc;
  size_t o = (size_t)(r0 * d);
  /* bf16: the chunk's rows are done with this step's copy; AdamW writes
   * the next step's in the same pass */
  cal_adamw_k_t k = cal_adamw_consts(H->opt.lr, H->opt.beta1, H->opt.beta2,
                                     H->opt.eps, H->opt.weight_decay, H->step);
  cal_adamw_pass(vec, &k, H->w + o, H->m + o, H->v + o, H->gw, H->w + o,
                 H->m + o, H->v + o, H->bf16 ? H->w16 + o : NULL,
                 (size_t)(n * d));
  return 0;
}

int cal_lm_head_step(cal_lm_head_t *H) {
  const int64_t t = H->t, d = H->d, V = H->vocab, C = H->chunk;
  const float *W = H->w;
  float *mx = H->lse, *sum = H->lse + t, *tl = H->lse + 2 * t;
  int rc;
  if (H->bf16)
    cal_f32_to_bf16_n(H->h, H->h16, t * d);
  for (int64_t i = 0; i < t; i++) {
    mx[i] = -INFINITY;
    sum[i] = 0.0f;
  }
  /* pass 1: each token's log-sum-exp over the chunks, online */
  for (int64_t r0 = 0; r0 < V; r0 += C)
    if ((rc = pass1_chunk(H, W, r0 / C, r0, V - r0 < C ? V - r0 : C)) < 0)
      return rc;
  double loss = 0.0;
  for (int64_t i = 0; i < t; i++) {
    mx[i] += logf(sum[i]); /* mx now holds the log-sum-exp */
    loss += (double)mx[i] - tl[i];
  }
  H->loss = loss / (double)t;
  /* pass 2: per chunk, its gradient, dh, the chunk's rows' gradient and
   * AdamW */
  memset(H->dh, 0, 4 * (size_t)(t * d));
  H->step++;
  for (int64_t r0 = 0; r0 < V; r0 += C)
    if ((rc = pass2_chunk(H, W, r0 / C, r0, V - r0 < C ? V - r0 : C)) < 0)
      return rc;
  return 0;
}

/* ---- the kernel-table entry */

static int64_t tokens_of(const cal_params_t *p) { return p->batch * p->seq; }
static double head_flops(const cal_params_t *p) {
  return cal_lm_head_flops(tokens_of(p), p->hidden, p->n);
}
/* the masters and moments read and written once; bf16: its copy written
 * once and read twice (logits, dh) */
static double bytes_as(const cal_params_t *p, int bf16) {
  return (4.0 * 6.0 + (bf16 ? 2.0 * 3.0 : 0.0)) * (double)p->n *
         (double)p->hidden;
}
static double head_bytes(const cal_params_t *p) { return bytes_as(p, 0); }
static double head_bytes16(const cal_params_t *p) { return bytes_as(p, 1); }
static double head_mem(const cal_params_t *p) {
  return cal_lm_head_mem_bytes(tokens_of(p), p->hidden, p->n, 0);
}
static double head_mem16(const cal_params_t *p) {
  return cal_lm_head_mem_bytes(tokens_of(p), p->hidden, p->n, 1);
}
static int head_setup(const cal_params_t *p, void **st) {
  return cal_lm_head_create_on(tokens_of(p), p->hidden, p->n, p->seed,
                               p->engine, (cal_lm_head_t **)st);
}
static int head_setup16(const cal_params_t *p, void **st) {
  return cal_lm_head_create_bf16(tokens_of(p), p->hidden, p->n, p->seed,
                                 (cal_lm_head_t **)st);
}
static int head_reshape(void *st, const cal_params_t *p) {
  return cal_lm_head_reshape(st, tokens_of(p));
}
static int head_run(void *st) { return cal_lm_head_step(st); }
static int head_verify(void *st) { return cal_lm_head_verify(st); }
static void head_teardown(void *st) { cal_lm_head_free(st); }
static const char *head_impl(const void *st) {
  return ((const cal_lm_head_t *)st)->impl;
}
static cal_engine_t head_engine(const void *st) {
  return ((const cal_lm_head_t *)st)->engine;
}
static int bf16_supported(const cal_params_t *p, const char **why) {
  (void)p;
  return cal_bf16_supported(CAL_ENGINE_ONEDNN, why);
}

const cal_kernel_t cal_kernel_lm_head_train = {
    .name = "lm_head_train", .family = CAL_FAMILY_LM_HEAD, .dtype = CAL_DTYPE_FP32,
    .flops = head_flops, .bytes = head_bytes, .mem_bytes = head_mem,
    .setup = head_setup, .run = head_run, .verify = head_verify,
    .teardown = head_teardown, .reshape = head_reshape,
    .impl_name = head_impl, .engine_used = head_engine,
};

const cal_kernel_t cal_kernel_lm_head_train_bf16 = {
    .name = "lm_head_train_bf16", .family = CAL_FAMILY_LM_HEAD, .dtype = CAL_DTYPE_BF16,
    .engine = CAL_ENGINE_ONEDNN, .flops = head_flops, .bytes = head_bytes16,
    .mem_bytes = head_mem16, .supported = bf16_supported,
    .setup = head_setup16, .run = head_run, .verify = head_verify,
    .teardown = head_teardown, .reshape = head_reshape,
    .impl_name = head_impl,
};
