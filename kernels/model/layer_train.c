/* One training step of the decoder layer (see layer_train.h) and its
 * kernel-table entries layer_train (fp32) and layer_train_bf16. */
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

#define RMS_EPS 1e-6f

const cal_adamw_t cal_train_adamw_default = {1e-3, 0.9, 0.999, 1e-8, 0.01};

/* the products: [i] = {rows of the input (t), k, n} with input [t][k] and
 * weights [k][n] */
static void prod_dims(const cal_train_t *T, int i, int64_t *k, int64_t *n) {
  const int64_t d = T->s.hidden, f = T->s.ffn;
  const int64_t ks[4] = {d, T->hq, d, f}, ns[4] = {T->nqkv, d, 2 * f, d};
  *k = ks[i];
  *n = ns[i];
}

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
  return 3.0 * cal_layer_flops(&q);
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
  return (double)(layers > 1 ? layers : 1) * (one - ref) + ref;
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
  double run = 4.0 * (7.0 * np + 2.0 * t * d + saved_f(s) + dact);
  if (s->bf16) {
    /* weights and transposes; inputs, transposes and output grads */
    double io = 0;
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      prod_dims(&T, i, &k, &n);
      io += 2.0 * t * (double)k + t * (double)n;
    }
    run += 2.0 * (2.0 * (np - 2 * d) + io);
  }
  return run + ref_bytes(s, &T);
}

double cal_train_buffer_bytes(const cal_train_t *T) {
  double t = (double)T->t, d = (double)T->s.hidden, f = (double)T->s.ffn;
  double n = 7.0 * (double)T->np; /* masters, moments twice; gradients */
  /* x, dy, h1, r1, qkv, lse, ao, x1, h2, r2, gu, a, y */
  n += t * (d + d + d + 1 + (double)T->nqkv + (double)T->s.heads +
            (double)T->hq + d + d + 1 + 2 * f + f + d);
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    n += (double)T->dact_n[i];
  n += (double)T->nthr * 2.0 * CAL_TRAIN_QB * (double)T->s.seq;
  double b16 = 0;
  for (int i = 0; T->s.bf16 && i < 4; i++) {
    int64_t k, nn;
    prod_dims(T, i, &k, &nn);
    b16 += 2.0 * (double)(k * nn) + 2.0 * t * (double)k + t * (double)nn;
  }
  return 4.0 * n + 2.0 * b16;
}

void cal_train_free(cal_train_t *T) {
  if (!T)
    return;
  for (int i = 0; i < 12; i++)
    cal_onednn_mm_free(T->mm[i]);
  for (int i = 0; i < 2; i++) {
    cal_free(T->p[i]);
    cal_free(T->m[i]);
    cal_free(T->v[i]);
  }
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
    cal_free(T->w16t[i]);
    cal_free(T->in16[i]);
    cal_free(T->in16t[i]);
    cal_free(T->dout16[i]);
  }
  cal_free(T);
}

static float *falloc(size_t n) { return cal_alloc(4 * (n ? n : 1)); }
static uint16_t *halloc(size_t n) { return cal_alloc(2 * (n ? n : 1)); }

/* a (rows×cols) transposed into at (cols×rows), in 32×32 tiles so that
 * both sides are read and written a cache line at a time */
static void transpose16(const uint16_t *a, uint16_t *at, int64_t rows,
                        int64_t cols) {
  enum { TB = 32 };
#pragma omp parallel for schedule(static) collapse(2)
  for (int64_t r0 = 0; r0 < rows; r0 += TB)
    for (int64_t c0 = 0; c0 < cols; c0 += TB) {
      int64_t r1 = r0 + TB < rows ? r0 + TB : rows;
      int64_t c1 = c0 + TB < cols ? c0 + TB : cols;
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++)
          at[c * rows + r] = a[r * cols + c];
    }
}

/* w (k×n) rounded to bf16 into w16 and, transposed, w16t (n×k) */
static void round_weights(const float *w, uint16_t *w16, uint16_t *w16t,
                          int64_t k, int64_t n) {
  cal_f32_to_bf16_n(w, w16, k * n);
  if (w16t)
    transpose16(w16, w16t, k, n);
}

/* the product i's pointers: input rows (fp32), output (forward), the
 * output's gradient, the input's gradient */
static void prod_bufs(cal_train_t *T, int i, float **in, float **out,
                      float **dout, float **din) {
  float *const ins[4] = {T->h1, T->ao, T->h2, T->a};
  float *const outs[4] = {T->qkv, T->x1, T->gu, T->y};
  float *const douts[4] = {T->dact[CAL_TRAIN_DQKV], T->dact[CAL_TRAIN_DX1],
                           T->dact[CAL_TRAIN_DGU], T->dy};
  float *const dins[4] = {T->dact[CAL_TRAIN_DH1], T->dact[CAL_TRAIN_DAO],
                          T->dact[CAL_TRAIN_DH2], T->dact[CAL_TRAIN_DA]};
  *in = ins[i];
  *out = outs[i];
  *dout = douts[i];
  *din = dins[i];
}

static int onednn_setup(cal_train_t *T) {
  const int64_t t = T->t;
  snprintf(T->impl, sizeof T->impl, "onednn");
  for (int i = 0; i < 4; i++) {
    int64_t k, n;
    float *in, *out, *dout, *din;
    prod_dims(T, i, &k, &n);
    prod_bufs(T, i, &in, &out, &dout, &din);
    float *gw = T->g + T->off[i];
    int rc;
    if ((rc = cal_onednn_mm_create(CAL_GEMM_BF16, t, n, k, T->in16[i],
                                   T->w16[i], out, &T->mm[3 * i])) < 0 ||
        (rc = cal_onednn_mm_create(CAL_GEMM_BF16, t, k, n, T->dout16[i],
                                   T->w16t[i], din, &T->mm[3 * i + 1])) < 0 ||
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
    snprintf(T->impl, sizeof T->impl, "openblas sgemm");
    return 0;
  }
  if (engine == CAL_ENGINE_BUILTIN)
    engine = cal_engine_default(1);
  if (engine == CAL_ENGINE_OPENBLAS) {
    T->engine = engine;
    if (!(T->sbgemm = cal_openblas_sbgemm()))
      return CAL_EUNSUPP;
    snprintf(T->impl, sizeof T->impl, "openblas sbgemm");
    return 0;
  }
  if (engine != CAL_ENGINE_ONEDNN)
    return CAL_EINVAL;
  T->engine = engine;
  return onednn_setup(T);
}

int cal_train_create(const cal_layer_shape_t *s, uint64_t seed,
                     cal_engine_t engine, cal_train_t **out) {
  *out = NULL;
  cal_layer_shape_t q = *s;
  q.decode = 0;
  int rc = cal_layer_check_shape(&q, NULL, 0);
  if (rc < 0)
    return rc;
  cal_train_t *T = cal_alloc(sizeof *T);
  if (!T)
    return CAL_ENOMEM;
  memset(T, 0, sizeof *T);
  T->s = q;
  T->opt = cal_train_adamw_default;
  layout(T);
  const size_t np = T->np, t = (size_t)T->t, d = (size_t)q.hidden;
  const size_t f = (size_t)q.ffn, lq = (size_t)q.seq;
  rc = CAL_ENOMEM;
  for (int i = 0; i < 2; i++)
    if (!(T->p[i] = falloc(np)) || !(T->m[i] = falloc(np)) ||
        !(T->v[i] = falloc(np)))
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
      prod_dims(T, i, &k, &n);
      if (!(T->w16[i] = halloc((size_t)(k * n))) ||
          !(T->w16t[i] = halloc((size_t)(k * n))) ||
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
  memset(T->m[0], 0, 4 * np);
  memset(T->v[0], 0, 4 * np);
  for (int64_t b = 0; b < q.batch; b++) {
    cal_rng_t rb;
    cal_rng_seed(&rb, seed ^ (0x7a11ULL + 0x1000193ULL * (uint64_t)b));
    cal_fill_f32(T->x + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
    cal_fill_f32(T->dy + (size_t)b * lq * d, lq * d, -1.0f, 1.0f, &rb);
  }
  memset(T->y, 0xff, 4 * t * d); /* NaN until a step writes it */
  memset(T->g, 0xff, 4 * np);
  if ((rc = engine_setup(T, engine)) < 0)
    goto fail;
  if (q.bf16)
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      prod_dims(T, i, &k, &n);
      round_weights(T->p[0] + T->off[i], T->w16[i], T->mm[0] ? T->w16t[i] : NULL,
                    k, n);
    }
  *out = T;
  return 0;
fail:
  cal_train_free(T);
  return rc;
}

const float *cal_train_params_before(const cal_train_t *T) {
  return T->p[1 - T->cur];
}
const float *cal_train_params_after(const cal_train_t *T) {
  return T->p[T->cur];
}

/* ---- the step */

static void rmsnorm_fwd(const float *x, const float *g, float *y, float *rinv,
                        int64_t rows, int64_t d) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    float *yr = y + r * d, ss = 0.0f;
    for (int64_t i = 0; i < d; i++)
      ss += xr[i] * xr[i];
    float inv = 1.0f / sqrtf(ss / (float)d + RMS_EPS);
    rinv[r] = inv;
    for (int64_t i = 0; i < d; i++)
      yr[i] = xr[i] * inv * g[i];
  }
}

/* y = x·r·g: dx (+)= r·g·dy - x·r³/d·Σ(g·dy·x); dg = Σ_rows dy·x·r */
static void rmsnorm_bwd(const float *x, const float *g, const float *rinv,
                        const float *dy, float *dx, int accumulate,
                        float *dg, int64_t rows, int64_t d) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d, *dyr = dy + r * d;
    float *dxr = dx + r * d, dot = 0.0f, inv = rinv[r];
    for (int64_t i = 0; i < d; i++)
      dot += g[i] * dyr[i] * xr[i];
    float c = dot * inv * inv * inv / (float)d;
    for (int64_t i = 0; i < d; i++) {
      float v = inv * g[i] * dyr[i] - xr[i] * c;
      dxr[i] = accumulate ? dxr[i] + v : v;
    }
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < d; i++) {
    float s = 0.0f;
    for (int64_t r = 0; r < rows; r++)
      s += dy[r * d + i] * x[r * d + i] * rinv[r];
    dg[i] = s;
  }
}

/* Attention works on blocks of CAL_TRAIN_QB query rows: a block's scores
 * against the keys up to its last row (the causal part) are one matrix,
 * so the products are sgemm calls (one thread each: OpenBLAS runs a call
 * made inside a parallel region on the calling thread) and only the
 * softmax is elementwise.  A thread's scratch holds two such blocks. */
static void attn_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                       int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b,
                       int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k,
              alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

static float *attn_scratch(const cal_train_t *T) {
  return T->scratch +
         (size_t)omp_get_thread_num() * 2 * CAL_TRAIN_QB * (size_t)T->s.seq;
}

/* Causal attention of every (sequence, head) over qkv's token rows into
 * ao; each query row's log-sum-exp into lse [b][h][i]. */
static void attention_fwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv, hq = T->hq;
  const float scale = 1.0f / sqrtf((float)hd);
#pragma omp parallel num_threads(T->nthr)
  {
    float *p = attn_scratch(T);
#pragma omp for schedule(dynamic, 1) collapse(3)
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t i0 = 0; i0 < lq; i0 += CAL_TRAIN_QB) {
          const int64_t g = h / (H / G);
          const int64_t n = lq - i0 < CAL_TRAIN_QB ? lq - i0 : CAL_TRAIN_QB;
          const int64_t kn = i0 + n; /* keys 0..kn-1 */
          const float *base = T->qkv + b * lq * nqkv;
          const float *q = base + i0 * nqkv + h * hd;
          const float *k = base + (H + g) * hd, *v = base + (H + G + g) * hd;
          attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, scale, q, nqkv, k,
                     nqkv, 0.0f, p, kn);
          for (int64_t r = 0; r < n; r++) {
            const int64_t i = i0 + r;
            float *pr = p + r * kn, mx = -INFINITY, sum = 0.0f;
            for (int64_t j = 0; j <= i; j++)
              mx = pr[j] > mx ? pr[j] : mx;
            for (int64_t j = 0; j <= i; j++)
              sum += (pr[j] = expf(pr[j] - mx));
            const float inv = 1.0f / sum;
            for (int64_t j = 0; j <= i; j++)
              pr[j] *= inv;
            for (int64_t j = i + 1; j < kn; j++)
              pr[j] = 0.0f;
            T->lse[(b * H + h) * lq + i] = mx + logf(sum);
          }
          attn_sgemm(CblasNoTrans, CblasNoTrans, n, hd, kn, 1.0f, p, kn, v,
                     nqkv, 0.0f, T->ao + (b * lq + i0) * hq + h * hd, hq);
        }
  }
}

/* Attention backward from dao into dqkv, the probabilities recomputed
 * from the saved log-sum-exp: per (sequence, kv group), its heads one
 * after the other (they share the group's dK and dV), a block of query
 * rows at a time:
 *   P = exp(scale·Q·Kᵀ - lse), dV += Pᵀ·dO, dP = dO·Vᵀ,
 *   dS = P ⊙ (dP - rowsum(dO ⊙ O))·scale, dQ = dS·K, dK += dSᵀ·Q */
static void attention_bwd(cal_train_t *T) {
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv, hq = T->hq;
  const float scale = 1.0f / sqrtf((float)hd);
  const float *dao = T->dact[CAL_TRAIN_DAO];
  float *dqkv = T->dact[CAL_TRAIN_DQKV];
#pragma omp parallel num_threads(T->nthr)
  {
    float *p = attn_scratch(T), *dp = p + CAL_TRAIN_QB * lq;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int64_t b = 0; b < B; b++)
      for (int64_t g = 0; g < G; g++) {
        const float *base = T->qkv + b * lq * nqkv;
        const float *k = base + (H + g) * hd, *v = base + (H + G + g) * hd;
        float *dbase = dqkv + b * lq * nqkv;
        float *dk = dbase + (H + g) * hd, *dv = dbase + (H + G + g) * hd;
        for (int64_t j = 0; j < lq; j++) {
          memset(dk + j * nqkv, 0, 4 * (size_t)hd);
          memset(dv + j * nqkv, 0, 4 * (size_t)hd);
        }
        for (int64_t h = g * (H / G); h < (g + 1) * (H / G); h++)
          for (int64_t i0 = 0; i0 < lq; i0 += CAL_TRAIN_QB) {
            const int64_t n = lq - i0 < CAL_TRAIN_QB ? lq - i0 : CAL_TRAIN_QB;
            const int64_t kn = i0 + n;
            const float *q = base + i0 * nqkv + h * hd;
            const float *o = T->ao + (b * lq + i0) * hq + h * hd;
            const float *dout = dao + (b * lq + i0) * hq + h * hd;
            const float *lse = T->lse + (b * H + h) * lq + i0;
            attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, scale, q, nqkv, k,
                       nqkv, 0.0f, p, kn);
            attn_sgemm(CblasNoTrans, CblasTrans, n, kn, hd, 1.0f, dout, hq, v,
                       nqkv, 0.0f, dp, kn);
            for (int64_t r = 0; r < n; r++) {
              const int64_t i = i0 + r;
              float *pr = p + r * kn, *dpr = dp + r * kn, D = 0.0f;
              for (int64_t e = 0; e < hd; e++)
                D += dout[r * hq + e] * o[r * hq + e];
              for (int64_t j = 0; j <= i; j++) {
                pr[j] = expf(pr[j] - lse[r]);
                dpr[j] = pr[j] * (dpr[j] - D) * scale;
              }
              for (int64_t j = i + 1; j < kn; j++)
                pr[j] = dpr[j] = 0.0f;
            }
            attn_sgemm(CblasTrans, CblasNoTrans, kn, hd, n, 1.0f, p, kn, dout,
                       hq, 1.0f, dv, nqkv);
            attn_sgemm(CblasNoTrans, CblasNoTrans, n, hd, kn, 1.0f, dp, kn, k,
                       nqkv, 0.0f, dbase + i0 * nqkv + h * hd, nqkv);
            attn_sgemm(CblasTrans, CblasNoTrans, kn, hd, n, 1.0f, dp, kn, q,
                       nqkv, 1.0f, dk, nqkv);
          }
      }
  }
}

/* in [rows][k] rounded to bf16 into out and, transposed, outt [k][rows] */
static void to_bf16_both(const float *in, uint16_t *out, uint16_t *outt,
                         int64_t rows, int64_t k) {
  cal_f32_to_bf16_n(in, out, rows * k);
  transpose16(out, outt, rows, k);
}

static void sg(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f,
              a, (blasint)lda, b, (blasint)ldb, 0.0f, c, (blasint)ldc);
}

static void sbg(const cal_train_t *T, enum CBLAS_TRANSPOSE ta,
                enum CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                const uint16_t *a, int64_t lda, const uint16_t *b,
                int64_t ldb, float *c, int64_t ldc) {
  T->sbgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f,
            a, (blasint)lda, b, (blasint)ldb, 0.0f, c, (blasint)ldc);
}

/* Forward product i: out = in·W */
static int fwd(cal_train_t *T, int i) {
  int64_t k, n, t = T->t;
  float *in, *out, *dout, *din;
  prod_dims(T, i, &k, &n);
  prod_bufs(T, i, &in, &out, &dout, &din);
  if (!T->s.bf16) {
    sg(CblasNoTrans, CblasNoTrans, t, n, k, in, k, T->p[T->cur] + T->off[i],
       n, out, n);
    return 0;
  }
  if (T->mm[0]) {
    /* the weight gradient needs the input transposed: rounded once */
    to_bf16_both(in, T->in16[i], T->in16t[i], t, k);
    return cal_onednn_mm_run(T->mm[3 * i]);
  }
  cal_f32_to_bf16_n(in, T->in16[i], t * k);
  sbg(T, CblasNoTrans, CblasNoTrans, t, n, k, T->in16[i], k, T->w16[i], n,
      out, n);
  return 0;
}

/* Backward product i: din = dout·Wᵀ, dW = inᵀ·dout */
static int bwd(cal_train_t *T, int i) {
  int64_t k, n, t = T->t;
  float *in, *out, *dout, *din;
  prod_dims(T, i, &k, &n);
  prod_bufs(T, i, &in, &out, &dout, &din);
  float *gw = T->g + T->off[i];
  if (!T->s.bf16) {
    const float *w = T->p[T->cur] + T->off[i];
    sg(CblasNoTrans, CblasTrans, t, k, n, dout, n, w, n, din, k);
    sg(CblasTrans, CblasNoTrans, k, n, t, in, k, dout, n, gw, n);
    return 0;
  }
  cal_f32_to_bf16_n(dout, T->dout16[i], t * n);
  if (T->mm[0]) {
    int rc = cal_onednn_mm_run(T->mm[3 * i + 1]);
    return rc < 0 ? rc : cal_onednn_mm_run(T->mm[3 * i + 2]);
  }
  sbg(T, CblasNoTrans, CblasTrans, t, k, n, T->dout16[i], n, T->w16[i], n,
      din, k);
  sbg(T, CblasTrans, CblasNoTrans, k, n, t, T->in16[i], k, T->dout16[i], n,
      gw, n);
  return 0;
}

/* AdamW's constants at a step */
typedef struct adamw_k {
  float b1, b2, ob1, ob2, c1, c2, lr, eps, decay;
} adamw_k_t;

static adamw_k_t adamw_k(const cal_adamw_t *h, int64_t step) {
  adamw_k_t k;
  k.b1 = (float)h->beta1, k.b2 = (float)h->beta2;
  /* 1 - beta in double: 1.0f - 0.999f is 1.3e-5 off */
  k.ob1 = (float)(1.0 - h->beta1), k.ob2 = (float)(1.0 - h->beta2);
  k.c1 = (float)(1.0 / (1.0 - pow(h->beta1, (double)step)));
  k.c2 = (float)(1.0 / (1.0 - pow(h->beta2, (double)step)));
  k.lr = (float)h->lr, k.eps = (float)h->eps;
  k.decay = (float)(1.0 - h->lr * h->weight_decay);
  return k;
}

/* element i: the new moments into m2, v2; the new master returned */
static inline float adamw_at(const adamw_k_t *k, const float *p,
                             const float *m, const float *v, const float *g,
                             float *m2, float *v2, size_t i) {
  float mi = k->b1 * m[i] + k->ob1 * g[i];
  float vi = k->b2 * v[i] + k->ob2 * g[i] * g[i];
  m2[i] = mi;
  v2[i] = vi;
  return p[i] * k->decay - k->lr * (mi * k->c1) / (sqrtf(vi * k->c2) + k->eps);
}

void cal_train_adamw(const cal_adamw_t *h, int64_t step, const float *p,
                     const float *m, const float *v, const float *g, float *p2,
                     float *m2, float *v2, size_t n) {
  const adamw_k_t k = adamw_k(h, step);
#pragma omp parallel for schedule(static) firstprivate(k)
  for (size_t i = 0; i < n; i++)
    p2[i] = adamw_at(&k, p, m, v, g, m2, v2, i);
}

void cal_train_adamw16(const cal_adamw_t *h, int64_t step, const float *p,
                       const float *m, const float *v, const float *g,
                       float *p2, float *m2, float *v2, uint16_t *p16,
                       size_t n) {
  const adamw_k_t k = adamw_k(h, step);
#pragma omp parallel for schedule(static) firstprivate(k)
  for (size_t i = 0; i < n; i++) {
    float pi = adamw_at(&k, p, m, v, g, m2, v2, i);
    p2[i] = pi;
    p16[i] = cal_f32_to_bf16(pi);
  }
}

int cal_train_forward(cal_train_t *T) {
  const int64_t d = T->s.hidden, f = T->s.ffn, t = T->t;
  const float *P = T->p[T->cur];
  const float *g1 = P + T->off[CAL_TRAIN_G1], *g2 = P + T->off[CAL_TRAIN_G2];
  int rc;
  rmsnorm_fwd(T->x, g1, T->h1, T->r1, t, d);
  if ((rc = fwd(T, 0)) < 0)
    return rc;
  attention_fwd(T);
  if ((rc = fwd(T, 1)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t * d; i++)
    T->x1[i] += T->x[i];
  rmsnorm_fwd(T->x1, g2, T->h2, T->r2, t, d);
  if ((rc = fwd(T, 2)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < t; r++) {
    const float *gate = T->gu + r * 2 * f, *up = gate + f;
    for (int64_t j = 0; j < f; j++)
      T->a[r * f + j] = gate[j] / (1.0f + expf(-gate[j])) * up[j];
  }
  if ((rc = fwd(T, 3)) < 0)
    return rc;
  double loss = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : loss)
  for (int64_t i = 0; i < t * d; i++) {
    T->y[i] += T->x1[i];
    loss += (double)T->y[i] * T->dy[i];
  }
  T->loss = loss;
  return 0;
}

int cal_train_backward(cal_train_t *T) {
  const int64_t d = T->s.hidden, f = T->s.ffn, t = T->t;
  const float *P = T->p[T->cur];
  const float *g1 = P + T->off[CAL_TRAIN_G1], *g2 = P + T->off[CAL_TRAIN_G2];
  int rc;
  /* dy reaches x1 directly (residual) and through the MLP */
  if ((rc = bwd(T, 3)) < 0)
    return rc;
  float *da = T->dact[CAL_TRAIN_DA], *dgu = T->dact[CAL_TRAIN_DGU];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < t; r++) {
    const float *gate = T->gu + r * 2 * f, *up = gate + f;
    for (int64_t j = 0; j < f; j++) {
      float gv = gate[j], s = 1.0f / (1.0f + expf(-gv)), dav = da[r * f + j];
      dgu[r * 2 * f + j] = dav * up[j] * s * (1.0f + gv * (1.0f - s));
      dgu[r * 2 * f + f + j] = dav * gv * s;
    }
  }
  if ((rc = bwd(T, 2)) < 0)
    return rc;
  float *dx1 = T->dact[CAL_TRAIN_DX1];
  memcpy(dx1, T->dy, 4 * (size_t)(t * d));
  rmsnorm_bwd(T->x1, g2, T->r2, T->dact[CAL_TRAIN_DH2], dx1, 1,
              T->g + T->off[CAL_TRAIN_G2], t, d);
  if ((rc = bwd(T, 1)) < 0)
    return rc;
  attention_bwd(T);
  if ((rc = bwd(T, 0)) < 0)
    return rc;
  float *dx = T->dact[CAL_TRAIN_DX];
  memcpy(dx, dx1, 4 * (size_t)(t * d));
  rmsnorm_bwd(T->x, g1, T->r1, T->dact[CAL_TRAIN_DH1], dx, 1,
              T->g + T->off[CAL_TRAIN_G1], t, d);
  return 0;
}

void cal_train_update(cal_train_t *T) {
  /* AdamW into the other set; a bf16 step rounds the new masters */
  int nx = 1 - T->cur;
  T->step++;
  cal_train_adamw(&T->opt, T->step, T->p[T->cur], T->m[T->cur], T->v[T->cur],
                  T->g, T->p[nx], T->m[nx], T->v[nx], T->np);
  T->cur = nx;
  if (T->s.bf16)
    for (int i = 0; i < 4; i++) {
      int64_t k, n;
      prod_dims(T, i, &k, &n);
      round_weights(T->p[nx] + T->off[i], T->w16[i],
                    T->mm[0] ? T->w16t[i] : NULL, k, n);
    }
}

int cal_train_step(cal_train_t *T) {
  int rc = cal_train_forward(T);
  if (rc == 0)
    rc = cal_train_backward(T);
  if (rc == 0)
    cal_train_update(T);
  return rc;
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
    rc = cal_train_create(s, seed + 0x9e37ULL * (uint64_t)l, engine, &S->T[l]);
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
  int rc = 0;
  for (int l = 0; l < S->n && rc == 0; l++)
    rc = cal_train_verify(S->T[l]);
  return rc;
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

static double train_bytes(const cal_params_t *p) { return bytes_of(p, 0); }
static double train_bytes16(const cal_params_t *p) { return bytes_of(p, 1); }

static double mem_of(const cal_params_t *p, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  return cal_train_stack_mem_bytes(&s, layers_of(p));
}
static double train_mem(const cal_params_t *p) { return mem_of(p, 0); }
static double train_mem16(const cal_params_t *p) { return mem_of(p, 1); }

static int setup_as(const cal_params_t *p, void **st, int bf16) {
  cal_layer_shape_t s;
  shape_of(p, bf16, &s);
  if (p->layers < 0 || p->layers > 4096)
    return CAL_EINVAL;
  return cal_train_stack_create(&s, layers_of(p), p->seed, p->engine,
                                (cal_train_stack_t **)st);
}
static int train_setup(const cal_params_t *p, void **st) { return setup_as(p, st, 0); }
static int train_setup16(const cal_params_t *p, void **st) { return setup_as(p, st, 1); }
static int train_run(void *st) { return cal_train_stack_step(st); }
static int train_verify(void *st) { return cal_train_stack_verify(st); }
static void train_teardown(void *st) { cal_train_stack_free(st); }
static const char *train_impl(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->impl;
}

static cal_engine_t train_engine(const void *st) {
  return ((const cal_train_stack_t *)st)->T[0]->engine;
}

static int bf16_supported(const cal_params_t *p, const char **why) {
  return cal_bf16_supported(p ? p->engine : CAL_ENGINE_BUILTIN, why);
}

const cal_kernel_t cal_kernel_layer_train = {
    .name = "layer_train", .family = "layer", .dtype = "fp32",
    .flops = train_flops, .bytes = train_bytes, .mem_bytes = train_mem,
    .setup = train_setup, .run = train_run, .verify = train_verify,
    .teardown = train_teardown, .impl_name = train_impl,
    .engine_used = train_engine,
};

const cal_kernel_t cal_kernel_layer_train_bf16 = {
    .name = "layer_train_bf16", .family = "layer", .dtype = "bf16",
    .flops = train_flops, .bytes = train_bytes16, .mem_bytes = train_mem16,
    .supported = bf16_supported, .setup = train_setup16, .run = train_run,
    .verify = train_verify, .teardown = train_teardown,
    .impl_name = train_impl, .engine_used = train_engine,
};
