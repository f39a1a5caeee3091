/* LoRA adapters on the layer's training step (lora.h): setup, their
 * forward and backward beside each base product, their AdamW update, the
 * verification and the figures. */
#include "lora.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_mem.h"
#include "layer_internal.h"
#include "layer_train_internal.h"
#include "train_vec.h"

/* the projections' input and output widths (k, n), as the step's
 * products (cal_train_prod_dims), from the shape alone */
static void dims(const cal_layer_shape_t *s, int i, double *k, double *n) {
  cal_layer_layout_t l;
  cal_layer_shape_t q = *s;
  q.decode = 0;
  q.grow = 0;
  cal_layer_layout(&q, &l);
  const double d = (double)s->hidden, f = (double)s->ffn;
  const double hq = (double)s->heads * (double)l.hd;
  const double ks[4] = {d, hq, d, f}, ns[4] = {(double)l.nqkv, d, 2 * f, d};
  *k = ks[i];
  *n = ns[i];
}

double cal_lora_layer_params(const cal_layer_shape_t *s) {
  double sum = 0, k, n;
  for (int i = 0; i < 4; i++) {
    dims(s, i, &k, &n);
    sum += (double)s->lora_rank * (k + n);
  }
  return sum;
}

double cal_lora_buffer_floats(const cal_layer_shape_t *s) {
  double t = (double)s->batch * (double)s->seq;
  return 7.0 * cal_lora_layer_params(s) + 5.0 * t * (double)s->lora_rank;
}

double cal_lora_train_flops(const cal_layer_shape_t *s) {
  cal_layer_shape_t q = *s;
  q.decode = 0;
  q.grow = 0;
  double t = (double)q.batch * (double)q.seq, mm = 0, k, n;
  for (int i = 0; i < 4; i++) {
    dims(&q, i, &k, &n);
    mm += 2.0 * t * k * n;
  }
  double attn = cal_layer_flops(&q) - mm;
  return 2.0 * mm + 3.0 * attn + 3.0 * 2.0 * t * cal_lora_layer_params(&q);
}

void cal_lora_free(cal_lora_t *A) {
  if (!A)
    return;
  cal_adamw_sets_free(A->p, A->m, A->v);
  for (int i = 0; i < 4; i++)
    cal_free(A->u[i]);
  cal_free(A->g);
  cal_free(A->z);
  cal_free(A);
}

static float *falloc(size_t n) { return cal_alloc(4 * (n ? n : 1)); }

/* A_i with variance 1/k; B_i non-zero (lora.h) with s·A·B at half the
 * base weights' spread: s²·c²/k = 1/(4k) for B's variance c²/rank */
static void draw(cal_lora_t *A, const cal_train_t *T, uint64_t seed) {
  cal_rng_t r;
  cal_rng_seed(&r, seed ^ 0x10aa5eedULL);
  const float c = 0.5f / A->scale;
  for (int i = 0; i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    float a = sqrtf(3.0f / (float)k), b = c * sqrtf(3.0f / (float)A->rank);
    cal_fill_f32(A->p[0] + A->off[2 * i], (size_t)(k * A->rank), -a, a, &r);
    cal_fill_f32(A->p[0] + A->off[2 * i + 1], (size_t)(A->rank * n), -b, b, &r);
  }
}

int cal_lora_create(cal_train_t *T, uint64_t seed) {
  const int64_t R = T->s.lora_rank;
  if (R < 1 || R > 4096)
    return CAL_EINVAL;
  cal_lora_t *A = cal_zalloc(sizeof *A);
  if (!A)
    return CAL_ENOMEM;
  T->lora = A; /* cal_train_free frees it */
  A->rank = R;
  A->scale = (float)(CAL_LORA_ALPHA / (double)R);
  for (int i = 0; i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    A->off[2 * i + 1] = A->off[2 * i] + (size_t)(k * R);
    A->off[2 * i + 2] = A->off[2 * i + 1] + (size_t)(R * n);
  }
  A->np = A->off[8];
  const size_t tr = (size_t)(T->t * R);
  if (cal_adamw_sets_alloc(A->p, A->m, A->v, A->np) != 0)
    return CAL_ENOMEM;
  for (int i = 0; i < 4; i++)
    if (!(A->u[i] = falloc(tr)))
      return CAL_ENOMEM;
  if (!(A->g = falloc(A->np)) || !(A->z = falloc(tr)))
    return CAL_ENOMEM;
  draw(A, T, seed);
  memset(A->m[0], 0, 4 * A->np);
  memset(A->v[0], 0, 4 * A->np);
  memset(A->g, 0xff, 4 * A->np); /* NaN until a step writes it */
  size_t len = strlen(T->impl);
  snprintf(T->impl + len, sizeof T->impl - len, "; LoRA r%lld sgemm",
           (long long)R);
  return 0;
}

static void mm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k,
              alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

/* Product i's widths, buffers and current adapters. */
typedef struct prod {
  int64_t k, n, t, r;
  float *in, *out, *dout, *din;
  const float *a, *b;
} prod_t;

static prod_t prod_of(cal_train_t *T, int i) {
  const cal_lora_t *A = T->lora;
  prod_t P;
  cal_train_prod_dims(T, i, &P.k, &P.n);
  cal_train_prod_bufs(T, i, &P.in, &P.out, &P.dout, &P.din);
  P.t = T->t;
  P.r = A->rank;
  P.a = A->p[A->cur] + A->off[2 * i];
  P.b = A->p[A->cur] + A->off[2 * i + 1];
  return P;
}

void cal_lora_forward(cal_train_t *T, int i) {
  cal_lora_t *A = T->lora;
  const prod_t P = prod_of(T, i);
  mm(CblasNoTrans, CblasNoTrans, P.t, P.r, P.k, 1.0f, P.in, P.k, P.a, P.r,
     0.0f, A->u[i], P.r);
  mm(CblasNoTrans, CblasNoTrans, P.t, P.n, P.r, A->scale, A->u[i], P.r, P.b,
     P.n, 1.0f, P.out, P.n);
}

void cal_lora_backward(cal_train_t *T, int i) {
  cal_lora_t *A = T->lora;
  const prod_t P = prod_of(T, i);
  const int64_t k = P.k, n = P.n, t = P.t, R = P.r;
  float *ga = A->g + A->off[2 * i], *gb = A->g + A->off[2 * i + 1];
  const float s = A->scale;
  mm(CblasNoTrans, CblasTrans, t, R, n, 1.0f, P.dout, n, P.b, n, 0.0f, A->z, R);
  mm(CblasNoTrans, CblasTrans, t, k, R, s, A->z, R, P.a, R, 1.0f, P.din, k);
  mm(CblasTrans, CblasNoTrans, R, n, t, s, A->u[i], R, P.dout, n, 0.0f, gb, n);
  mm(CblasTrans, CblasNoTrans, k, R, t, s, P.in, k, A->z, R, 0.0f, ga, R);
}

void cal_lora_update(cal_train_t *T) {
  cal_lora_t *A = T->lora;
  const int nx = 1 - A->cur;
  T->step++;
  cal_train_adamw(&T->opt, T->step, A->p[A->cur], A->m[A->cur], A->v[A->cur],
                  A->g, A->p[nx], A->m[nx], A->v[nx], A->np);
  A->cur = nx;
}

/* doubles of n floats; NULL when out of memory */
static double *widen(const float *x, size_t n) {
  double *d = malloc(8 * (n ? n : 1));
  for (size_t i = 0; d && i < n; i++)
    d[i] = x[i];
  return d;
}

/* the adapters' gradients from G = ∂loss/∂W' of product i (k × n):
 * dA = s·G·Bᵀ, dB = s·Aᵀ·G, against the step's */
static int check_grads(const cal_train_t *T, int i, const double *G,
                       const double *ad, double tol) {
  const cal_lora_t *A = T->lora;
  int64_t k, n, R = A->rank;
  cal_train_prod_dims(T, i, &k, &n);
  double *da = malloc(8 * (size_t)(k * R)), *db = malloc(8 * (size_t)(R * n));
  int rc = CAL_ENOMEM;
  if (da && db) {
    const double *a = ad + A->off[2 * i], *b = ad + A->off[2 * i + 1];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)k,
                (blasint)R, (blasint)n, A->scale, G, (blasint)n, b,
                (blasint)n, 0.0, da, (blasint)R);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)R,
                (blasint)n, (blasint)k, A->scale, a, (blasint)R, G,
                (blasint)n, 0.0, db, (blasint)n);
    rc = cal_train_rel_err(A->g + A->off[2 * i], da, (size_t)(k * R)) <= tol &&
                 cal_train_rel_err(A->g + A->off[2 * i + 1], db,
                                   (size_t)(R * n)) <= tol
             ? 0
             : CAL_EVERIFY;
  }
  free(da);
  free(db);
  return rc;
}

int cal_lora_verify(const cal_train_t *T) {
  const cal_lora_t *A = T->lora;
  if (T->step < 1)
    return CAL_EVERIFY; /* nothing run yet */
  const int prev = 1 - A->cur;
  double *P = widen(cal_train_params_after(T), T->np); /* frozen */
  double *ad = widen(A->p[prev], A->np);
  cal_train_ref_t R;
  int rc = CAL_ENOMEM;
  memset(&R, 0, sizeof R);
  if (!P || !ad || cal_train_ref_alloc(T, &R) < 0)
    goto out;
  /* the adapted weights W + s·A·B of each product */
  for (int i = 0; i < 4; i++) {
    int64_t k, n;
    cal_train_prod_dims(T, i, &k, &n);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)k,
                (blasint)n, (blasint)A->rank, A->scale, ad + A->off[2 * i],
                (blasint)A->rank, ad + A->off[2 * i + 1], (blasint)n, 1.0,
                P + T->off[i], (blasint)n);
  }
  if ((rc = cal_train_check(T, P, &R, 0)) < 0)
    goto out;
  for (int i = 0; i < 4 && rc == 0; i++)
    rc = check_grads(T, i, R.grad + T->off[i], ad, cal_train_tolerance(T));
  if (rc == 0)
    rc = cal_train_verify_adamw(&T->opt, T->step, A->p[prev], A->m[prev],
                                A->v[prev], A->g, A->p[A->cur], A->m[A->cur],
                                A->v[A->cur], A->np);
out:
  free(P);
  free(ad);
  cal_train_ref_free(&R);
  return rc;
}
