/* The training step's verification (see layer_train.h): the whole step
 * recomputed in double precision from the masters it read, every output
 * and gradient compared, then the AdamW update recomputed from the step's
 * own gradients. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_mem.h"
#include "layer_train.h"
#include "lora.h"

#define RMS_EPS 1e-6

/* One product operand as the step sees it: rounded to bf16 in a bf16
 * step (a fresh copy, freed by the caller). */
static double *operand(const double *a, size_t n, int bf16) {
  double *c = malloc(8 * (n ? n : 1));
  for (size_t i = 0; c && i < n; i++)
    c[i] = bf16 ? (double)cal_bf16_round((float)a[i]) : a[i];
  return c;
}

/* A product's operands as the step sees them, in scratch made once for
 * the whole reference (fresh copies per product cost more in page faults
 * than the products themselves): in bf16 each rounded into its scratch,
 * in fp32 read where they are. */
typedef struct {
  int bf16;
  double *sa, *sb; /* NULL in fp32 */
} dmm_ctx_t;

static const double *rounded(const dmm_ctx_t *x, const double *a, double *s,
                             size_t n) {
  if (!x->bf16)
    return a;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++)
    s[i] = (double)cal_bf16_round((float)a[i]);
  return s;
}

/* Elements of the largest operand of the reference's products: rows (the
 * tokens, or a weight's inputs) by the widest row. */
static size_t operand_max(const cal_train_t *T) {
  const int64_t d = T->s.hidden, f = T->s.ffn;
  int64_t rows = T->t > d ? T->t : d, wide = 2 * f > T->nqkv ? 2 * f : T->nqkv;
  rows = rows > f ? rows : f;
  rows = rows > T->hq ? rows : T->hq;
  wide = wide > d ? wide : d;
  wide = wide > T->hq ? wide : T->hq;
  return (size_t)(rows * wide);
}

/* c[m×n] = op(a)·op(b) with both operands rounded as the step rounds
 * them. */
static void dmm(const dmm_ctx_t *x, int ta, int tb, int64_t m, int64_t n,
                int64_t k, const double *a, const double *b, double *c) {
  const double *ar = rounded(x, a, x->sa, (size_t)(m * k));
  const double *br = rounded(x, b, x->sb, (size_t)(k * n));
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, 1.0, ar, (blasint)(ta ? m : k), br,
              (blasint)(tb ? k : n), 0.0, c, (blasint)n);
}

static void rms_fwd(const double *x, const double *g, double *y, double *r,
                    int64_t rows, int64_t d) {
  for (int64_t i = 0; i < rows; i++) {
    double ss = 0;
    for (int64_t e = 0; e < d; e++)
      ss += x[i * d + e] * x[i * d + e];
    r[i] = 1.0 / sqrt(ss / (double)d + RMS_EPS);
    for (int64_t e = 0; e < d; e++)
      y[i * d + e] = x[i * d + e] * r[i] * g[e];
  }
}

/* dx += ∂(x·r·g)/∂x ᵀ dy, dg = Σ dy·x·r: the chain rule written out */
static void rms_bwd(const double *x, const double *g, const double *r,
                    const double *dy, double *dx, double *dg, int64_t rows,
                    int64_t d) {
  for (int64_t e = 0; e < d; e++)
    dg[e] = 0;
  for (int64_t i = 0; i < rows; i++) {
    double dot = 0;
    for (int64_t e = 0; e < d; e++) {
      dot += g[e] * dy[i * d + e] * x[i * d + e];
      dg[e] += dy[i * d + e] * x[i * d + e] * r[i];
    }
    for (int64_t e = 0; e < d; e++)
      dx[i * d + e] += r[i] * g[e] * dy[i * d + e] -
                       x[i * d + e] * dot * r[i] * r[i] * r[i] / (double)d;
  }
}

int cal_train_ref_alloc(const cal_train_t *T, cal_train_ref_t *R) {
  memset(R, 0, sizeof *R);
  size_t td = (size_t)(T->t * T->s.hidden);
  int ok = (R->y = malloc(8 * td)) && (R->grad = malloc(8 * T->np));
  for (int i = 0; ok && i < CAL_TRAIN_NDACT; i++)
    ok = (R->dact[i] = malloc(8 * T->dact_n[i])) != NULL;
  if (!ok) {
    cal_train_ref_free(R);
    return CAL_ENOMEM;
  }
  return 0;
}

void cal_train_ref_free(cal_train_ref_t *R) {
  free(R->y);
  free(R->grad);
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    free(R->dact[i]);
  memset(R, 0, sizeof *R);
}

/* x as a bf16 product operand where bf16 is set */
static double rb(int bf16, double x) {
  return bf16 ? (double)cal_bf16_round((float)x) : x;
}

/* Causal attention in double; with dao, its backward (straight from the
 * probabilities, no saved statistics) into dqkv.  qkv and dao as the
 * products take them (bf16: rounded); a bf16 step's probabilities and
 * score gradients rounded for their products too. */
static void attn_d(const cal_train_t *T, const double *qkv, double *ao,
                   const double *dao, double *dqkv, double *p) {
  const int bf = T->s.bf16;
  const int64_t B = T->s.batch, H = T->s.heads, G = T->s.kv_heads;
  const int64_t lq = T->s.seq, hd = T->hd, nqkv = T->nqkv, hq = T->hq;
  const double scale = 1.0 / sqrt((double)hd);
  if (dqkv)
    memset(dqkv, 0, 8 * (size_t)(T->t * nqkv));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      int64_t g = h / (H / G);
      const double *base = qkv + b * lq * nqkv;
      for (int64_t i = 0; i < lq; i++) {
        const double *q = base + i * nqkv + h * hd;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; j++) {
          const double *k = base + j * nqkv + (H + g) * hd;
          double s = 0;
          for (int64_t e = 0; e < hd; e++)
            s += q[e] * k[e];
          p[j] = s * scale;
          mx = fmax(mx, p[j]);
        }
        for (int64_t j = 0; j <= i; j++)
          sum += (p[j] = exp(p[j] - mx));
        for (int64_t j = 0; j <= i; j++)
          p[j] /= sum;
        double *o = ao + (b * lq + i) * hq + h * hd;
        if (!dao) {
          for (int64_t e = 0; e < hd; e++) {
            o[e] = 0;
            for (int64_t j = 0; j <= i; j++)
              o[e] += rb(bf, p[j]) * base[j * nqkv + (H + G + g) * hd + e];
          }
          continue;
        }
        /* dP_j = dO·v_j; dS_j = P_j (dP_j - Σ_l P_l dP_l) */
        const double *dO = dao + (b * lq + i) * hq + h * hd;
        double *db = dqkv + b * lq * nqkv, D = 0;
        for (int64_t j = 0; j <= i; j++) {
          double dp = 0;
          for (int64_t e = 0; e < hd; e++)
            dp += dO[e] * base[j * nqkv + (H + G + g) * hd + e];
          D += p[j] * dp;
          p[lq + j] = dp;
        }
        for (int64_t j = 0; j <= i; j++) {
          double ds = rb(bf, p[j] * (p[lq + j] - D) * scale), pj = rb(bf, p[j]);
          for (int64_t e = 0; e < hd; e++) {
            db[i * nqkv + h * hd + e] += ds * base[j * nqkv + (H + g) * hd + e];
            db[j * nqkv + (H + g) * hd + e] += ds * q[e];
            db[j * nqkv + (H + G + g) * hd + e] += pj * dO[e];
          }
        }
      }
    }
}

int cal_train_reference(const cal_train_t *T, const double *P,
                        cal_train_ref_t *R, int no_backward) {
  const int64_t d = T->s.hidden, f = T->s.ffn, t = T->t, hq = T->hq;
  const int64_t nqkv = T->nqkv, lq = T->s.seq;
  const int bf = T->s.bf16;
  const size_t td = (size_t)(t * d);
  const double *Wqkv = P + T->off[CAL_TRAIN_WQKV], *Wo = P + T->off[CAL_TRAIN_WO];
  const double *Wgu = P + T->off[CAL_TRAIN_WGU], *Wd = P + T->off[CAL_TRAIN_WD];
  const double *g1 = P + T->off[CAL_TRAIN_G1], *g2 = P + T->off[CAL_TRAIN_G2];
  int rc = CAL_ENOMEM;
  double *x = malloc(8 * td), *dy = malloc(8 * td), *h1 = malloc(8 * td);
  double *r1 = malloc(8 * (size_t)t), *r2 = malloc(8 * (size_t)t);
  double *qkv = malloc(8 * (size_t)(t * nqkv)), *ao = malloc(8 * (size_t)(t * hq));
  double *x1 = malloc(8 * td), *h2 = malloc(8 * td);
  double *gu = malloc(8 * (size_t)(t * 2 * f)), *a = malloc(8 * (size_t)(t * f));
  double *p = malloc(8 * 2 * (size_t)lq), *qkv_r = NULL, *dao_r = NULL;
  dmm_ctx_t mc = {bf, NULL, NULL};
  if (bf && (!(mc.sa = malloc(8 * operand_max(T))) ||
             !(mc.sb = malloc(8 * operand_max(T)))))
    goto out;
  if (!x || !dy || !h1 || !r1 || !r2 || !qkv || !ao || !x1 || !h2 || !gu ||
      !a || !p)
    goto out;
  for (size_t i = 0; i < td; i++) {
    x[i] = T->x[i];
    dy[i] = T->dy[i];
  }
  /* forward */
  rms_fwd(x, g1, h1, r1, t, d);
  dmm(&mc, 0, 0, t, nqkv, d, h1, Wqkv, qkv);
  if (!(qkv_r = operand(qkv, (size_t)(t * nqkv), bf)))
    goto out;
  attn_d(T, qkv_r, ao, NULL, NULL, p);
  dmm(&mc, 0, 0, t, d, hq, ao, Wo, x1);
  for (size_t i = 0; i < td; i++)
    x1[i] += x[i];
  rms_fwd(x1, g2, h2, r2, t, d);
  dmm(&mc, 0, 0, t, 2 * f, d, h2, Wgu, gu);
  for (int64_t r = 0; r < t; r++)
    for (int64_t j = 0; j < f; j++) {
      double gv = gu[r * 2 * f + j];
      a[r * f + j] = gv / (1.0 + exp(-gv)) * gu[r * 2 * f + f + j];
    }
  dmm(&mc, 0, 0, t, d, f, a, Wd, R->y);
  R->loss = 0;
  for (size_t i = 0; i < td; i++) {
    R->y[i] += x1[i];
    R->loss += R->y[i] * dy[i];
  }
  if (no_backward) {
    rc = 0;
    goto out;
  }
  /* backward */
  double *G = R->grad, **D = R->dact;
  dmm(&mc, 0, 1, t, f, d, dy, Wd, D[CAL_TRAIN_DA]);
  dmm(&mc, 1, 0, f, d, t, a, dy, G + T->off[CAL_TRAIN_WD]);
  for (int64_t r = 0; r < t; r++)
    for (int64_t j = 0; j < f; j++) {
      double gv = gu[r * 2 * f + j], u = gu[r * 2 * f + f + j];
      double s = 1.0 / (1.0 + exp(-gv)), da = D[CAL_TRAIN_DA][r * f + j];
      D[CAL_TRAIN_DGU][r * 2 * f + j] = da * u * (s + gv * s * (1.0 - s));
      D[CAL_TRAIN_DGU][r * 2 * f + f + j] = da * gv * s;
    }
  dmm(&mc, 0, 1, t, d, 2 * f, D[CAL_TRAIN_DGU], Wgu, D[CAL_TRAIN_DH2]);
  dmm(&mc, 1, 0, d, 2 * f, t, h2, D[CAL_TRAIN_DGU], G + T->off[CAL_TRAIN_WGU]);
  memcpy(D[CAL_TRAIN_DX1], dy, 8 * td);
  rms_bwd(x1, g2, r2, D[CAL_TRAIN_DH2], D[CAL_TRAIN_DX1], G + T->off[CAL_TRAIN_G2], t, d);
  dmm(&mc, 0, 1, t, hq, d, D[CAL_TRAIN_DX1], Wo, D[CAL_TRAIN_DAO]);
  dmm(&mc, 1, 0, hq, d, t, ao, D[CAL_TRAIN_DX1], G + T->off[CAL_TRAIN_WO]);
  if (!(dao_r = operand(D[CAL_TRAIN_DAO], (size_t)(t * hq), bf)))
    goto out;
  attn_d(T, qkv_r, ao, dao_r, D[CAL_TRAIN_DQKV], p);
  dmm(&mc, 0, 1, t, d, nqkv, D[CAL_TRAIN_DQKV], Wqkv, D[CAL_TRAIN_DH1]);
  dmm(&mc, 1, 0, d, nqkv, t, h1, D[CAL_TRAIN_DQKV], G + T->off[CAL_TRAIN_WQKV]);
  memcpy(D[CAL_TRAIN_DX], D[CAL_TRAIN_DX1], 8 * td);
  rms_bwd(x, g1, r1, D[CAL_TRAIN_DH1], D[CAL_TRAIN_DX], G + T->off[CAL_TRAIN_G1], t, d);
  rc = 0;
out:
  free(x); free(dy); free(h1); free(r1); free(r2); free(qkv); free(ao);
  free(x1); free(h2); free(gu); free(a); free(p); free(qkv_r); free(dao_r);
  free(mc.sa); free(mc.sb);
  return rc;
}

double cal_train_rel_err(const float *a, const double *r, size_t n) {
  double e = 0, s = 0;
  for (size_t i = 0; i < n; i++) {
    double df = (double)a[i] - r[i];
    e += df * df;
    s += r[i] * r[i];
  }
  return sqrt(e) / (sqrt(s) + 1e-300);
}

/* The AdamW update of a step, recomputed in double from its inputs and
 * its own gradients: each new master within 1e-6 of itself plus 1e-3 of
 * the learning rate (fp32 rounding of p·(1 - lr·wd) and of the
 * normalised moment stays below both), each moment within 1e-5 of its
 * terms' magnitudes (the first moment's two terms may cancel). */
int cal_train_verify_adamw(const cal_adamw_t *h, int64_t step,
                           const float *p0, const float *m0, const float *v0,
                           const float *grad, const float *p1,
                           const float *m1, const float *v1, size_t n) {
  const double c1 = 1.0 - pow(h->beta1, (double)step);
  const double c2 = 1.0 - pow(h->beta2, (double)step);
  for (size_t i = 0; i < n; i++) {
    double g = grad[i], p = p0[i];
    double m = h->beta1 * m0[i] + (1 - h->beta1) * g;
    double mscale = h->beta1 * fabs(m0[i]) + (1 - h->beta1) * fabs(g);
    double v = h->beta2 * v0[i] + (1 - h->beta2) * g * g;
    double pn = p * (1 - h->lr * h->weight_decay) -
                h->lr * (m / c1) / (sqrt(v / c2) + h->eps);
    if (!(fabs(p1[i] - pn) <= 1e-6 * fabs(pn) + 1e-3 * h->lr) ||
        !(fabs(m1[i] - m) <= 1e-5 * mscale + 1e-30) ||
        !(fabs(v1[i] - v) <= 1e-5 * fabs(v) + 1e-30))
      return CAL_EVERIFY;
  }
  return 0;
}

/* Tolerances, on the RMS of the errors over the RMS of the reference, per
 * tensor: fp32 1e-3 (fp32 rounding through the step stays near 1e-5; a
 * wrong term of a gradient, a mask, a head mapping or a scale moves a
 * tensor by several per cent).  bf16 3e-2: the reference rounds the same
 * operands to bf16, but where the run's fp32 value and the double fall on
 * two sides of a rounding boundary an operand differs by one bf16 step
 * (2^-8 of it), and the gradients pass such steps on.  The bound holds
 * the attention too: its Q, K, V, dO, probabilities and score gradients
 * are rounded here as the step rounds them (its backward's row sums
 * differ: dO·O in the step, Σ P·dP here, equal but for those roundings);
 * at two blocks and a ragged part its tensors land near 2e-3. */
double cal_train_tolerance(const cal_train_t *T) {
  return T->s.bf16 ? 3e-2 : 1e-3;
}

int cal_train_check(const cal_train_t *T, const double *P, cal_train_ref_t *R,
                    int weights) {
  const double tol = cal_train_tolerance(T);
  int rc = cal_train_reference(T, P, R, 0);
  if (rc < 0)
    return rc;
  if (!(cal_train_rel_err(T->y, R->y, (size_t)(T->t * T->s.hidden)) <= tol))
    return CAL_EVERIFY;
  for (int i = 0; weights && i < CAL_TRAIN_NPARAM; i++)
    if (!(cal_train_rel_err(T->g + T->off[i], R->grad + T->off[i],
                            T->off[i + 1] - T->off[i]) <= tol))
      return CAL_EVERIFY;
  /* a stack's upper layer shares its gradients but dx with the bottom
   * layer, whose backward ran after it: its own are dx and, through them,
   * the weights' gradients above */
  for (int i = 0; i < CAL_TRAIN_NDACT; i++)
    if ((!T->shared_grads || i == CAL_TRAIN_DX) &&
        !(cal_train_rel_err(T->dact[i], R->dact[i], T->dact_n[i]) <= tol))
      return CAL_EVERIFY;
  return 0;
}

int cal_train_verify(const cal_train_t *T) {
  if (T->lora)
    return cal_lora_verify(T);
  if (T->step < 1)
    return CAL_EVERIFY; /* nothing run yet */
  if (!T->p0)
    return CAL_EINVAL; /* the step's inputs were not saved */
  double *P = malloc(8 * T->np);
  cal_train_ref_t R;
  int rc = CAL_ENOMEM;
  if (!P || cal_train_ref_alloc(T, &R) < 0) {
    free(P);
    return CAL_ENOMEM;
  }
  const float *before = cal_train_params_before(T);
  for (size_t i = 0; i < T->np; i++)
    P[i] = before[i];
  if ((rc = cal_train_check(T, P, &R, 1)) == 0)
    rc = cal_train_verify_adamw(&T->opt, T->step, T->p0, T->m0, T->v0, T->g,
                                T->p, T->m, T->v, T->np);
  free(P);
  cal_train_ref_free(&R);
  return rc;
}
