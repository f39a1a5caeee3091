/* The LM head's training step (see lm_head.h) and its kernel-table entry
 * lm_head_train. */
#include "lm_head.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_mem.h"

double cal_lm_head_flops(int64_t t, int64_t d, int64_t v) {
  return 3.0 * 2.0 * (double)t * (double)v * (double)d;
}

static int64_t chunk_of(int64_t v) {
  return v < CAL_LM_HEAD_CHUNK ? v : CAL_LM_HEAD_CHUNK;
}

/* whether a step keeps every chunk's logits for the second pass (else it
 * recomputes them) */
static int keeps_logits(int64_t t, int64_t v) {
  return (double)t * (double)v * 4.0 <= CAL_LM_HEAD_KEEP_BYTES;
}

double cal_lm_head_mem_bytes(int64_t t, int64_t d, int64_t v) {
  double c = keeps_logits(t, v) ? (double)v : (double)chunk_of(v);
  double T = (double)t, D = (double)d;
  /* masters and moments twice; h, dh; a chunk's logits and gradient;
   * three per-token figures and the target */
  return 4.0 * (6.0 * (double)v * D + 2.0 * T * D + T * c + c * D + 4.0 * T) +
         /* verification: a few rows and tokens in double */
         8.0 * (64.0 * D + 16.0 * (double)v);
}

void cal_lm_head_free(cal_lm_head_t *H) {
  if (!H)
    return;
  for (int i = 0; i < 2; i++) {
    cal_free(H->w[i]);
    cal_free(H->m[i]);
    cal_free(H->v[i]);
  }
  cal_free(H->h);
  cal_free(H->dh);
  cal_free(H->logits);
  cal_free(H->gw);
  cal_free(H->lse);
  cal_free(H->target);
  cal_free(H);
}

int cal_lm_head_create(int64_t t, int64_t d, int64_t vocab, uint64_t seed,
                       cal_lm_head_t **out) {
  *out = NULL;
  if (t < 1 || d < 1 || vocab < 2 || vocab > (1 << 30) || d > (1 << 20))
    return CAL_EINVAL;
  cal_lm_head_t *H = cal_alloc(sizeof *H);
  if (!H)
    return CAL_ENOMEM;
  memset(H, 0, sizeof *H);
  H->t = t, H->d = d, H->vocab = vocab, H->chunk = chunk_of(vocab);
  H->keep = keeps_logits(t, vocab);
  H->opt = cal_train_adamw_default;
  size_t nw = (size_t)(vocab * d);
  int ok = 1;
  for (int i = 0; i < 2 && ok; i++)
    ok = (H->w[i] = cal_alloc(4 * nw)) && (H->m[i] = cal_alloc(4 * nw)) &&
         (H->v[i] = cal_alloc(4 * nw));
  ok = ok && (H->h = cal_alloc(4 * (size_t)(t * d))) &&
       (H->dh = cal_alloc(4 * (size_t)(t * d))) &&
       (H->logits = cal_alloc(4 * (size_t)(t * (H->keep ? vocab : H->chunk)))) &&
       (H->gw = cal_alloc(4 * (size_t)(H->chunk * d))) &&
       (H->lse = cal_alloc(4 * 3 * (size_t)t)) &&
       (H->target = cal_alloc(4 * (size_t)t));
  if (!ok) {
    cal_lm_head_free(H);
    return CAL_ENOMEM;
  }
  cal_rng_t r;
  cal_rng_seed(&r, seed ^ 0x1ead);
  float a = (float)sqrt(3.0 / (double)d);
  cal_fill_f32(H->w[0], nw, -a, a, &r);
  memset(H->m[0], 0, 4 * nw);
  memset(H->v[0], 0, 4 * nw);
  /* the final norm's rows: O(1) entries; targets uniform */
  cal_fill_f32(H->h, (size_t)(t * d), -1.0f, 1.0f, &r);
  for (int64_t i = 0; i < t; i++)
    H->target[i] = (int32_t)(cal_rng_next(&r) % (uint64_t)vocab);
  memset(H->dh, 0xff, 4 * (size_t)(t * d)); /* NaN until a step */
  *out = H;
  return 0;
}

static void sg(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f,
              a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

int cal_lm_head_step(cal_lm_head_t *H) {
  const int64_t t = H->t, d = H->d, V = H->vocab, C = H->chunk;
  const float *W = H->w[H->cur];
  float *mx = H->lse, *sum = H->lse + t, *tl = H->lse + 2 * t;
  for (int64_t i = 0; i < t; i++) {
    mx[i] = -INFINITY;
    sum[i] = 0.0f;
  }
  /* pass 1: each token's log-sum-exp over the chunks, online */
  for (int64_t r0 = 0; r0 < V; r0 += C) {
    int64_t n = V - r0 < C ? V - r0 : C;
    float *lg = H->logits + (H->keep ? r0 * t : 0);
    sg(CblasNoTrans, CblasTrans, t, n, d, H->h, d, W + r0 * d, d, 0.0f, lg, n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < t; i++) {
      const float *l = lg + i * n;
      float m = mx[i];
      for (int64_t j = 0; j < n; j++)
        m = l[j] > m ? l[j] : m;
      float s = sum[i] * expf(mx[i] - m);
      for (int64_t j = 0; j < n; j++)
        s += expf(l[j] - m);
      mx[i] = m;
      sum[i] = s;
      int64_t tg = H->target[i];
      if (tg >= r0 && tg < r0 + n)
        tl[i] = l[tg - r0];
    }
  }
  double loss = 0.0;
  for (int64_t i = 0; i < t; i++) {
    mx[i] += logf(sum[i]); /* mx now holds the log-sum-exp */
    loss += (double)mx[i] - tl[i];
  }
  H->loss = loss / (double)t;
  /* pass 2: per chunk, the logits again, their gradient, dh, the chunk's
   * rows' gradient and AdamW */
  memset(H->dh, 0, 4 * (size_t)(t * d));
  int nx = 1 - H->cur;
  H->step++;
  const float inv_t = 1.0f / (float)t;
  for (int64_t r0 = 0; r0 < V; r0 += C) {
    int64_t n = V - r0 < C ? V - r0 : C;
    float *lg = H->logits + (H->keep ? r0 * t : 0);
    if (!H->keep)
      sg(CblasNoTrans, CblasTrans, t, n, d, H->h, d, W + r0 * d, d, 0.0f, lg,
         n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < t; i++) {
      float *l = lg + i * n;
      for (int64_t j = 0; j < n; j++)
        l[j] = expf(l[j] - mx[i]) * inv_t;
      int64_t tg = H->target[i];
      if (tg >= r0 && tg < r0 + n)
        l[tg - r0] -= inv_t;
    }
    sg(CblasNoTrans, CblasNoTrans, t, d, n, lg, n, W + r0 * d, d, 1.0f, H->dh,
       d);
    sg(CblasTrans, CblasNoTrans, n, d, t, lg, n, H->h, d, 0.0f, H->gw, d);
    size_t o = (size_t)(r0 * d);
    cal_train_adamw(&H->opt, H->step, W + o, H->m[H->cur] + o,
                    H->v[H->cur] + o, H->gw, H->w[nx] + o, H->m[nx] + o,
                    H->v[nx] + o, (size_t)(n * d));
  }
  H->cur = nx;
  return 0;
}

/* ---- verification */

/* the tokens checked in full: the first, the last and six between */
static int64_t token_at(const cal_lm_head_t *H, int i) {
  return H->t <= 8 ? i : (int64_t)i * (H->t - 1) / 7;
}

/* The sampled tokens' log-sum-exp, loss terms and dh in double over the
 * whole vocabulary from the step's input masters; sampled rows' gradient
 * (each token's softmax from the step's log-sum-exp, checked above for the
 * sampled tokens) against the one the first moment holds, and their AdamW
 * update.  Tolerances relative to the RMS of the tensor checked: 1e-3
 * (fp32 sums over the vocabulary and the tokens; a wrong softmax, target,
 * scale or transposition moves it by far more). */
int cal_lm_head_verify(const cal_lm_head_t *H) {
  if (H->step < 1)
    return CAL_EVERIFY;
  const int64_t t = H->t, d = H->d, V = H->vocab;
  const int prev = 1 - H->cur;
  const float *W = H->w[prev];
  const int ntok = t < 8 ? (int)t : 8;
  double *dh = calloc((size_t)d, sizeof *dh), *p = malloc(8 * (size_t)V);
  double *g = malloc(8 * (size_t)d);
  int rc = CAL_ENOMEM;
  if (!dh || !p || !g)
    goto out;
  rc = CAL_EVERIFY;
  for (int k = 0; k < ntok; k++) {
    int64_t i = token_at(H, k);
    const float *h = H->h + i * d;
    double mx = -INFINITY, s = 0, e2 = 0, r2 = 0;
    for (int64_t v = 0; v < V; v++) {
      double l = 0;
      for (int64_t e = 0; e < d; e++)
        l += (double)h[e] * W[v * d + e];
      p[v] = l;
      mx = fmax(mx, l);
    }
    for (int64_t v = 0; v < V; v++)
      s += exp(p[v] - mx);
    double lse = mx + log(s);
    double tl = p[H->target[i]];
    if (!(fabs(lse - H->lse[i]) <= 1e-4 * (fabs(lse) + 1.0)) ||
        !(fabs(tl - H->lse[2 * t + i]) <= 1e-4 * (fabs(tl) + 1.0)))
      goto out;
    for (int64_t e = 0; e < d; e++)
      dh[e] = 0;
    for (int64_t v = 0; v < V; v++) {
      double gl = (exp(p[v] - lse) - (v == H->target[i])) / (double)t;
      for (int64_t e = 0; e < d; e++)
        dh[e] += gl * W[v * d + e];
    }
    for (int64_t e = 0; e < d; e++) {
      double df = H->dh[i * d + e] - dh[e];
      e2 += df * df;
      r2 += dh[e] * dh[e];
    }
    if (!(sqrt(e2) <= 1e-3 * sqrt(r2) + 1e-12))
      goto out;
  }
  /* rows: the sampled tokens' targets and eight spread over the vocab */
  for (int k = 0; k < ntok + 8; k++) {
    int64_t v = k < ntok ? H->target[token_at(H, k)]
                         : (int64_t)(k - ntok) * (V - 1) / 7;
    double e2 = 0, r2 = 0;
    for (int64_t e = 0; e < d; e++)
      g[e] = 0;
    for (int64_t i = 0; i < t; i++) {
      const float *h = H->h + i * d;
      double l = 0;
      for (int64_t e = 0; e < d; e++)
        l += (double)h[e] * W[v * d + e];
      double gl = (exp(l - (double)H->lse[i]) - (v == H->target[i])) / (double)t;
      for (int64_t e = 0; e < d; e++)
        g[e] += gl * h[e];
    }
    const cal_adamw_t *o = &H->opt;
    for (int64_t e = 0; e < d; e++) {
      size_t j = (size_t)(v * d + e);
      /* the gradient the step used, read back from its first moment */
      double gr = ((double)H->m[H->cur][j] - o->beta1 * H->m[prev][j]) /
                  (1.0 - o->beta1);
      e2 += (gr - g[e]) * (gr - g[e]);
      r2 += g[e] * g[e];
    }
    if (!(sqrt(e2) <= 1e-3 * sqrt(r2) + 1e-9))
      goto out;
  }
  rc = 0;
out:
  free(dh);
  free(p);
  free(g);
  return rc;
}

/* ---- the kernel-table entry */

static int64_t tokens_of(const cal_params_t *p) { return p->batch * p->seq; }
static double head_flops(const cal_params_t *p) {
  return cal_lm_head_flops(tokens_of(p), p->hidden, p->n);
}
/* the masters and moments read and written once */
static double head_bytes(const cal_params_t *p) {
  return 4.0 * 6.0 * (double)p->n * (double)p->hidden;
}
static double head_mem(const cal_params_t *p) {
  return cal_lm_head_mem_bytes(tokens_of(p), p->hidden, p->n);
}
static int head_setup(const cal_params_t *p, void **st) {
  return cal_lm_head_create(tokens_of(p), p->hidden, p->n, p->seed,
                            (cal_lm_head_t **)st);
}
static int head_run(void *st) { return cal_lm_head_step(st); }
static int head_verify(void *st) { return cal_lm_head_verify(st); }
static void head_teardown(void *st) { cal_lm_head_free(st); }
static const char *head_impl(const void *st) {
  (void)st;
  return "openblas sgemm";
}

const cal_kernel_t cal_kernel_lm_head_train = {
    .name = "lm_head_train", .family = "lm_head", .dtype = "fp32",
    .flops = head_flops, .bytes = head_bytes, .mem_bytes = head_mem,
    .setup = head_setup, .run = head_run, .verify = head_verify,
    .teardown = head_teardown, .impl_name = head_impl,
};
