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
  /* masters and moments twice; h, dh; a chunk's gradient; three
   * per-token figures, the target and the chunks' maxima */
  double b = 4.0 * (6.0 * (double)v * D + 2.0 * T * D + C * D + 4.0 * T +
                    chunks * T) + kept + lg +
             /* verification: a few rows and tokens in double */
             8.0 * (64.0 * D + 16.0 * (double)v);
  /* bf16: h, W and a chunk's gradient rounded; oneDNN's products (bf16,
   * or fp32 on oneDNN): six scratchpads */
  if (bf16)
    b += 2.0 * (T * D + (double)v * D + T * C);
  return b + 6.0 * scratch_bytes();
}

void cal_lm_head_free(cal_lm_head_t *H) {
  if (!H)
    return;
  cal_adamw_sets_free(H->w, H->m, H->v);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      cal_onednn_mm_free(H->mm[i][j]);
  cal_free(H->h);
  cal_free(H->dh);
  cal_free(H->logits);
  cal_free(H->gw);
  cal_free(H->lse);
  cal_free(H->cmax);
  cal_free(H->e16);
  cal_free(H->target);
  cal_free(H->h16);
  cal_free(H->w16);
  cal_free(H->dl16);
  cal_free(H);
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
  void *w = H->bf16 ? (void *)H->w16 : (void *)H->w[0];
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
  H->t = t, H->d = d, H->vocab = vocab, H->chunk = chunk_of(vocab);
  H->keep = keeps_logits(t, vocab, bf16);
  H->bf16 = bf16;
  H->engine = bf16 ? CAL_ENGINE_ONEDNN
              : engine == CAL_ENGINE_BUILTIN ? cal_engine_default(0)
                                             : engine;
  H->vec = cal_train_vec();
  int fp16 = H->keep && kept_bytes(bf16) == 2.0;
  H->opt = cal_train_adamw_default;
  int rc = CAL_EINVAL;
  if (H->engine != CAL_ENGINE_ONEDNN && H->engine != CAL_ENGINE_OPENBLAS)
    goto fail;
  snprintf(H->impl, sizeof H->impl, "%s%s", cal_engine_name(H->engine),
           H->engine == CAL_ENGINE_OPENBLAS ? " sgemm" : "");
  size_t nw = (size_t)(vocab * d);
  rc = CAL_ENOMEM;
  int ok = cal_adamw_sets_alloc(H->w, H->m, H->v, nw) == 0;
  ok = ok && (H->h = cal_alloc(4 * (size_t)(t * d))) &&
       (H->dh = cal_alloc(4 * (size_t)(t * d))) &&
       (H->logits = cal_alloc(4 * (size_t)(t * (H->keep && !fp16 ? vocab : H->chunk)))) &&
       (!fp16 || (H->e16 = cal_alloc(2 * (size_t)t * (size_t)vocab))) &&
       (H->cmax = cal_alloc(4 * (size_t)t * (size_t)((vocab + H->chunk - 1) / H->chunk))) &&
       (H->gw = cal_alloc(4 * (size_t)(H->chunk * d))) &&
       (H->lse = cal_alloc(4 * 3 * (size_t)t)) &&
       (H->target = cal_alloc(4 * (size_t)t));
  ok = ok && (!bf16 || ((H->h16 = cal_alloc(2 * (size_t)(t * d))) &&
                        (H->w16 = cal_alloc(2 * nw)) &&
                        (H->dl16 = cal_alloc(2 * (size_t)(t * H->chunk)))));
  if (!ok)
    goto fail;
  cal_rng_t r;
  cal_rng_seed(&r, seed ^ 0x1ead);
  float a = (float)sqrt(3.0 / (double)d);
  cal_fill_f32(H->w[0], nw, -a, a, &r);
  cal_memset_team(H->m[0], 0, 4 * nw);
  cal_memset_team(H->v[0], 0, 4 * nw);
  /* the final norm's rows: O(1) entries; targets uniform */
  cal_fill_f32(H->h, (size_t)(t * d), -1.0f, 1.0f, &r);
  for (int64_t i = 0; i < t; i++)
    H->target[i] = (int32_t)(cal_rng_next(&r) % (uint64_t)vocab);
  memset(H->dh, 0xff, 4 * (size_t)(t * d)); /* NaN until a step */
  if (bf16)
    cal_f32_to_bf16_n(H->w[0], H->w16, (int64_t)nw);
  if (H->engine == CAL_ENGINE_ONEDNN) {
    int64_t last = vocab - (vocab - 1) / H->chunk * H->chunk;
    if ((rc = onednn_products(H, 0, H->chunk)) < 0 ||
        (last != H->chunk && (rc = onednn_products(H, 1, last)) < 0))
      goto fail;
  }
  *out = H;
  return 0;
fail:
  cal_lm_head_free(H);
  return rc;
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
 * head; dh, the chunk's rows' gradient and their AdamW into set nx. */
static int pass2_chunk(cal_lm_head_t *H, const float *W, int64_t c,
                       int64_t r0, int64_t n, int nx) {
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
  cal_adamw_pass(vec, &k, W + o, H->m[H->cur] + o, H->v[H->cur] + o, H->gw,
                 H->w[nx] + o, H->m[nx] + o, H->v[nx] + o,
                 H->bf16 ? H->w16 + o : NULL, (size_t)(n * d));
  return 0;
}

int cal_lm_head_step(cal_lm_head_t *H) {
  const int64_t t = H->t, d = H->d, V = H->vocab, C = H->chunk;
  const float *W = H->w[H->cur];
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
  int nx = 1 - H->cur;
  H->step++;
  for (int64_t r0 = 0; r0 < V; r0 += C)
    if ((rc = pass2_chunk(H, W, r0 / C, r0, V - r0 < C ? V - r0 : C, nx)) < 0)
      return rc;
  H->cur = nx;
  return 0;
}

/* ---- verification */

/* the tokens checked in full: the first, the last and six between */
static int64_t token_at(const cal_lm_head_t *H, int i) {
  return H->t <= 8 ? i : (int64_t)i * (H->t - 1) / 7;
}

/* The inputs as the step's products read them: h, W (bf16: h16, and W's
 * masters rounded as the copy held them while the step ran). */
static double h_at(const cal_lm_head_t *H, size_t j) {
  return H->bf16 ? (double)cal_bf16_to_f32(H->h16[j]) : (double)H->h[j];
}
static double w_at(const cal_lm_head_t *H, const float *W, size_t j) {
  return H->bf16 ? (double)cal_bf16_round(W[j]) : (double)W[j];
}

#define VERIFY_TOKENS 8

/* The gradient rows of the sampled tokens' targets and of eight more
 * spread over the vocabulary against the one the step's first moment
 * holds (g: d doubles of scratch); bf16: those rows of the copy the next
 * step reads against the new masters rounded.  1 when all agree. */
static int rows_ok(const cal_lm_head_t *H, const float *W, int ntok,
                   double tol, double *g) {
  const int64_t t = H->t, d = H->d, V = H->vocab;
  const int prev = 1 - H->cur;
  for (int k = 0; k < ntok + 8; k++) {
    int64_t v = k < ntok ? H->target[token_at(H, k)]
                         : (int64_t)(k - ntok) * (V - 1) / 7;
    double e2 = 0, r2 = 0;
    for (int64_t e = 0; e < d; e++)
      g[e] = 0;
    for (int64_t i = 0; i < t; i++) {
      double l = 0;
      for (int64_t e = 0; e < d; e++)
        l += h_at(H, (size_t)(i * d + e)) * w_at(H, W, (size_t)(v * d + e));
      double gl = (exp(l - (double)H->lse[i]) - (v == H->target[i])) / (double)t;
      for (int64_t e = 0; e < d; e++)
        g[e] += gl * h_at(H, (size_t)(i * d + e));
    }
    const cal_adamw_t *o = &H->opt;
    for (int64_t e = 0; e < d; e++) {
      size_t j = (size_t)(v * d + e);
      /* the gradient the step used, read back from its first moment */
      double gr = ((double)H->m[H->cur][j] - o->beta1 * H->m[prev][j]) /
                  (1.0 - o->beta1);
      e2 += (gr - g[e]) * (gr - g[e]);
      r2 += g[e] * g[e];
      if (H->bf16 && H->w16[j] != cal_f32_to_bf16(H->w[H->cur][j]))
        return 0;
    }
    if (!(sqrt(e2) <= tol * sqrt(r2) + 1e-9))
      return 0;
  }
  return 1;
}

/* The sampled tokens' log-sum-exp, loss terms and dh in double over the
 * whole vocabulary from the step's inputs (one pass over W for the logits
 * of all of them, one for dh); sampled rows' gradient (each token's
 * softmax from the step's log-sum-exp, checked above for the sampled
 * tokens) against the one the first moment holds; bf16: those rows of the
 * copy the next step reads against the new masters rounded.
 *
 * The log-sum-exp and the target's logit within 1e-4: the reference reads
 * the rounded inputs the step read, so only the products' fp32 sums
 * differ.  dh and the gradient rows relative to the RMS of the tensor
 * checked: fp32 1e-3 (fp32 sums over the vocabulary and the tokens; a
 * wrong softmax, target, scale or transposition moves it by far more).
 * bf16 1e-2: the step's products read the softmax gradient rounded to
 * bf16, each element within 2^-8 (0.39%) of its value, which the
 * reference does not round.  dh and a gradient row are sums of those
 * elements times rows of W16 or h16, so their error is the elements'
 * relative errors weighted by the terms: at most 2^-8 of the RMS for a
 * single term (a row's gradient from one token), about 2^-8/√3 where
 * many terms average (dh, where a token's target term -(1 - p)/tokens
 * dominates the p/tokens of the rest).  Measured: dh within 0.09%, rows
 * within 0.2% at 16 and 128 tokens, rows up to 0.38% at 2 tokens.  1e-2
 * is 2.5 × the single-term bound; dh or a row a few percent off fails it. */
int cal_lm_head_verify(const cal_lm_head_t *H) {
  if (H->step < 1)
    return CAL_EVERIFY;
  const int64_t t = H->t, d = H->d, V = H->vocab;
  const int prev = 1 - H->cur;
  const float *W = H->w[prev];
  const double tol = H->bf16 ? 1e-2 : 1e-3;
  const int ntok = t < VERIFY_TOKENS ? (int)t : VERIFY_TOKENS;
  double *dh = calloc((size_t)(ntok * d), sizeof *dh);
  double *hs = malloc(8 * (size_t)(ntok * d)), *p = malloc(8 * (size_t)(ntok * V));
  double *g = malloc(8 * (size_t)d), *lse = malloc(8 * (size_t)ntok);
  int rc = CAL_ENOMEM;
  if (!dh || !hs || !p || !g || !lse)
    goto out;
  rc = CAL_EVERIFY;
  for (int k = 0; k < ntok; k++)
    for (int64_t e = 0; e < d; e++)
      hs[k * d + e] = h_at(H, (size_t)(token_at(H, k) * d + e));
  /* the sampled tokens' logits, p[k][v] */
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < V; v++) {
    double acc[VERIFY_TOKENS] = {0};
    for (int64_t e = 0; e < d; e++) {
      double w = w_at(H, W, (size_t)(v * d + e));
      for (int k = 0; k < ntok; k++)
        acc[k] += hs[k * d + e] * w;
    }
    for (int k = 0; k < ntok; k++)
      p[k * V + v] = acc[k];
  }
  for (int k = 0; k < ntok; k++) {
    int64_t i = token_at(H, k);
    const double *l = p + k * V;
    double mx = -INFINITY, s = 0;
    for (int64_t v = 0; v < V; v++)
      mx = fmax(mx, l[v]);
    for (int64_t v = 0; v < V; v++)
      s += exp(l[v] - mx);
    lse[k] = mx + log(s);
    double tl = l[H->target[i]];
    if (!(fabs(lse[k] - H->lse[i]) <= 1e-4 * (fabs(lse[k]) + 1.0)) ||
        !(fabs(tl - H->lse[2 * t + i]) <= 1e-4 * (fabs(tl) + 1.0)))
      goto out;
  }
  /* their dh, dh[k][e] */
  for (int64_t v = 0; v < V; v++) {
    double gl[VERIFY_TOKENS];
    for (int k = 0; k < ntok; k++)
      gl[k] = (exp(p[k * V + v] - lse[k]) - (v == H->target[token_at(H, k)])) /
              (double)t;
    for (int64_t e = 0; e < d; e++) {
      double w = w_at(H, W, (size_t)(v * d + e));
      for (int k = 0; k < ntok; k++)
        dh[k * d + e] += gl[k] * w;
    }
  }
  for (int k = 0; k < ntok; k++) {
    int64_t i = token_at(H, k);
    double e2 = 0, r2 = 0;
    for (int64_t e = 0; e < d; e++) {
      double df = H->dh[i * d + e] - dh[k * d + e];
      e2 += df * df;
      r2 += dh[k * d + e] * dh[k * d + e];
    }
    if (!(sqrt(e2) <= tol * sqrt(r2) + 1e-12))
      goto out;
  }
  if (rows_ok(H, W, ntok, tol, g))
    rc = 0;
out:
  free(dh);
  free(hs);
  free(p);
  free(g);
  free(lse);
  return rc;
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
    .teardown = head_teardown, .impl_name = head_impl,
    .engine_used = head_engine,
};

const cal_kernel_t cal_kernel_lm_head_train_bf16 = {
    .name = "lm_head_train_bf16", .family = CAL_FAMILY_LM_HEAD, .dtype = CAL_DTYPE_BF16,
    .engine = CAL_ENGINE_ONEDNN, .flops = head_flops, .bytes = head_bytes16,
    .mem_bytes = head_mem16, .supported = bf16_supported,
    .setup = head_setup16, .run = head_run, .verify = head_verify,
    .teardown = head_teardown, .impl_name = head_impl,
};
