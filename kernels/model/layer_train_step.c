/* The training step of the decoder layer (layer_train.h): forward,
 * backward and the AdamW update, and the products' buffers and weights
 * they share with the setup in layer_train.c. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "layer_train.h"
#include "layer_train_internal.h"
#include "lora.h"
#include "train_vec.h"

#define RMS_EPS 1e-6f

/* the products: [i] = {rows of the input (t), k, n} with input [t][k] and
 * weights [k][n] */
void cal_train_prod_dims(const cal_train_t *T, int i, int64_t *k, int64_t *n) {
  const int64_t d = T->s.hidden, f = T->s.ffn;
  const int64_t ks[4] = {d, T->hq, d, f}, ns[4] = {T->nqkv, d, 2 * f, d};
  *k = ks[i];
  *n = ns[i];
}

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
void cal_train_round_weights(const float *w, uint16_t *w16, uint16_t *w16t,
                             int64_t k, int64_t n) {
  cal_f32_to_bf16_n(w, w16, k * n);
  if (w16t)
    transpose16(w16, w16t, k, n);
}

/* the product i's pointers: input rows (fp32), output (forward), the
 * output's gradient, the input's gradient */
void cal_train_prod_bufs(cal_train_t *T, int i, float **in, float **out,
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
  cal_train_prod_dims(T, i, &k, &n);
  cal_train_prod_bufs(T, i, &in, &out, &dout, &din);
  if (!T->s.bf16) {
    sg(CblasNoTrans, CblasNoTrans, t, n, k, in, k, T->p + T->off[i],
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
  cal_train_prod_dims(T, i, &k, &n);
  cal_train_prod_bufs(T, i, &in, &out, &dout, &din);
  float *gw = T->g + T->off[i];
  if (!T->s.bf16) {
    const float *w = T->p + T->off[i];
    sg(CblasNoTrans, CblasTrans, t, k, n, dout, n, w, n, din, k);
    if (!T->lora) /* LoRA: the base frozen */
      sg(CblasTrans, CblasNoTrans, k, n, t, in, k, dout, n, gw, n);
    return 0;
  }
  cal_f32_to_bf16_n(dout, T->dout16[i], t * n);
  if (T->mm[0]) {
    int rc = cal_onednn_mm_run(T->mm[3 * i + 1]);
    return rc < 0 || T->lora ? rc : cal_onednn_mm_run(T->mm[3 * i + 2]);
  }
  sbg(T, CblasNoTrans, CblasTrans, t, k, n, T->dout16[i], n, T->w16[i], n,
      din, k);
  if (!T->lora)
    sbg(T, CblasTrans, CblasNoTrans, k, n, t, T->in16[i], k, T->dout16[i],
        n, gw, n);
  return 0;
}

static cal_adamw_k_t adamw_k(const cal_adamw_t *h, int64_t step) {
  return cal_adamw_consts(h->lr, h->beta1, h->beta2, h->eps, h->weight_decay,
                          step);
}

void cal_train_adamw(const cal_adamw_t *h, int64_t step, const float *p,
                     const float *m, const float *v, const float *g, float *p2,
                     float *m2, float *v2, size_t n) {
  const cal_adamw_k_t k = adamw_k(h, step);
  cal_adamw_pass(cal_train_vec(), &k, p, m, v, g, p2, m2, v2, NULL, n);
}

void cal_train_adamw16(const cal_adamw_t *h, int64_t step, const float *p,
                       const float *m, const float *v, const float *g,
                       float *p2, float *m2, float *v2, uint16_t *p16,
                       size_t n) {
  const cal_adamw_k_t k = adamw_k(h, step);
  cal_adamw_pass(cal_train_vec(), &k, p, m, v, g, p2, m2, v2, p16, n);
}

/* product i forward and backward with its LoRA adapter where it has one */
static int fwd_i(cal_train_t *T, int i) {
  int rc = fwd(T, i);
  if (rc == 0 && T->lora)
    cal_lora_forward(T, i);
  return rc;
}

static int bwd_i(cal_train_t *T, int i) {
  int rc = bwd(T, i);
  if (rc == 0 && T->lora)
    cal_lora_backward(T, i);
  return rc;
}

int cal_train_forward(cal_train_t *T) {
  const int64_t d = T->s.hidden, f = T->s.ffn, t = T->t;
  const float *P = T->p;
  const float *g1 = P + T->off[CAL_TRAIN_G1], *g2 = P + T->off[CAL_TRAIN_G2];
  int rc;
  rmsnorm_fwd(T->x, g1, T->h1, T->r1, t, d);
  if ((rc = fwd_i(T, 0)) < 0)
    return rc;
  if ((rc = cal_train_attention_fwd(T)) < 0 || (rc = fwd_i(T, 1)) < 0)
    return rc;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < t * d; i++)
    T->x1[i] += T->x[i];
  rmsnorm_fwd(T->x1, g2, T->h2, T->r2, t, d);
  if ((rc = fwd_i(T, 2)) < 0)
    return rc;
  const cal_train_vec_t *vec = cal_train_vec();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < t; r++)
    vec->swiglu(T->gu + r * 2 * f, f, T->a + r * f);
  if ((rc = fwd_i(T, 3)) < 0)
    return rc;
  /* the objective sum(y ⊙ dy) is linear in y, so its gradient keeps its
   * sign from step to step and AdamW would move every weight by about lr
   * a step the same way: a model kept over a sweep's thousands of steps
   * would drift by its own scale (and bf16's checks with it).  Its own
   * upstream gradient changes sign each step, so the moves cancel; a
   * stack's lower layers get theirs from above */
  const float sign = T->alias_dy ? 1.0f : -1.0f;
  double loss = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : loss)
  for (int64_t i = 0; i < t * d; i++) {
    T->y[i] += T->x1[i];
    if (sign < 0)
      T->dy[i] = -T->dy[i];
    loss += (double)T->y[i] * T->dy[i];
  }
  T->loss = loss;
  return 0;
}

int cal_train_backward(cal_train_t *T) {
  const int64_t d = T->s.hidden, f = T->s.ffn, t = T->t;
  const float *P = T->p;
  const float *g1 = P + T->off[CAL_TRAIN_G1], *g2 = P + T->off[CAL_TRAIN_G2];
  int rc;
  /* dy reaches x1 directly (residual) and through the MLP */
  if ((rc = bwd_i(T, 3)) < 0)
    return rc;
  float *da = T->dact[CAL_TRAIN_DA], *dgu = T->dact[CAL_TRAIN_DGU];
  const cal_train_vec_t *vec = cal_train_vec();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < t; r++)
    vec->swiglu_bwd(T->gu + r * 2 * f, da + r * f, f, dgu + r * 2 * f);
  if ((rc = bwd_i(T, 2)) < 0)
    return rc;
  float *dx1 = T->dact[CAL_TRAIN_DX1];
  memcpy(dx1, T->dy, 4 * (size_t)(t * d));
  rmsnorm_bwd(T->x1, g2, T->r2, T->dact[CAL_TRAIN_DH2], dx1, 1,
              T->g + T->off[CAL_TRAIN_G2], t, d);
  if ((rc = bwd_i(T, 1)) < 0)
    return rc;
  if ((rc = cal_train_attention_bwd(T)) < 0 || (rc = bwd_i(T, 0)) < 0)
    return rc;
  float *dx = T->dact[CAL_TRAIN_DX];
  memcpy(dx, dx1, 4 * (size_t)(t * d));
  rmsnorm_bwd(T->x, g1, T->r1, T->dact[CAL_TRAIN_DH1], dx, 1,
              T->g + T->off[CAL_TRAIN_G1], t, d);
  return 0;
}

void cal_train_update(cal_train_t *T) {
  if (T->lora) { /* the adapters only: the base is frozen */
    cal_lora_update(T);
    return;
  }
  /* AdamW in place, the inputs first copied aside where the check asks
   * for them; a bf16 step rounds each matrix's new masters into its copy
   * in the same pass (the products read the copy as it is, transposed
   * where they need it by layout) */
  if (T->p0) {
    memcpy(T->p0, T->p, 4 * T->np);
    memcpy(T->m0, T->m, 4 * T->np);
    memcpy(T->v0, T->v, 4 * T->np);
  }
  T->step++;
  const cal_adamw_k_t k = adamw_k(&T->opt, T->step);
  const cal_train_vec_t *vec = cal_train_vec();
  int parts = T->s.bf16 ? CAL_TRAIN_NPARAM : 1;
  for (int i = 0; i < parts; i++) {
    size_t o = T->off[i], n = (parts == 1 ? T->np : T->off[i + 1]) - o;
    cal_adamw_pass(vec, &k, T->p + o, T->m + o, T->v + o, T->g + o, T->p + o,
                   T->m + o, T->v + o, T->s.bf16 && i < 4 ? T->w16[i] : NULL,
                   n);
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
