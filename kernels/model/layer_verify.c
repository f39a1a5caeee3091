/* The layer's verification (see layer.h): sequences 0 and batch - 1 of
 * the last run recomputed step by step in double precision. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "attention.h"
#include "cal_bf16.h"
#include "cal_mem.h"
#include "layer_internal.h"

/* y[m×n] = a[m×k]·W_i in double (W_i: weight matrix i, k×n, converted
 * into bd from the form the layer holds: fp32, packed fp32, bf16 or
 * packed bf16).  A bf16 layer rounds a to bf16 first, as the run rounds
 * its products' inputs. */
static void dgemm_w(const cal_layer_t *L, int i, double *a, double *y,
                    int64_t m, int64_t n, int64_t k, double *bd) {
  const float *const w[CAL_LAYER_NMM] = {L->wqkv, L->wo, L->wgu, L->wd};
  const uint16_t *const w16[CAL_LAYER_NMM] = {L->wqkv16, L->wo16, L->wgu16,
                                              L->wd16};
  for (int64_t r = 0; r < k; r++)
    for (int64_t j = 0; j < n; j++)
      bd[r * n + j] = w[i]     ? (double)w[i][r * n + j]
                      : L->wpf[i] ? (double)cal_gemv_packed_f32_at(L->wpf[i], k, r, j)
                      : w16[i] ? (double)cal_bf16_to_f32(w16[i][r * n + j])
                               : (double)cal_bf16_to_f32(
                                     cal_gemv_packed_at(L->wp[i], k, r, j));
  for (int64_t e = 0; L->s.bf16 && e < m * k; e++)
    a[e] = cal_bf16_round((float)a[e]);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m,
              (blasint)n, (blasint)k, 1.0, a, (blasint)k, bd, (blasint)n, 0.0,
              y, (blasint)n);
}

/* Sequence sb's KV cache as the run left it, in fp32 (a bf16 cache
 * widened, exactly). */
static void cache_rows(const cal_layer_t *L, int64_t sb, float *kc,
                       float *vc) {
  const size_t n = (size_t)(L->s.kv_heads * L->l.lk * L->l.hd);
  const size_t at = (size_t)sb * n;
  if (!L->cache16) {
    memcpy(kc, L->kc + at, 4 * n);
    memcpy(vc, L->vc + at, 4 * n);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    kc[i] = cal_bf16_to_f32(L->kc16[at + i]);
    vc[i] = cal_bf16_to_f32(L->vc16[at + i]);
  }
}

static void rmsnorm_d(const double *x, const float *g, double *y, int64_t rows,
                      int64_t d) {
  for (int64_t r = 0; r < rows; r++) {
    double ss = 0;
    for (int64_t i = 0; i < d; i++)
      ss += x[r * d + i] * x[r * d + i];
    double inv = 1.0 / sqrt(ss / (double)d + CAL_LAYER_RMS_EPS);
    for (int64_t i = 0; i < d; i++)
      y[r * d + i] = x[r * d + i] * inv * g[i];
  }
}

/* Recompute sequence sb step by step in double precision (dgemm for the
 * products, the reference attention) and compare with the run's output.
 * Tolerance: 1e-3 of the row's RMS plus 1e-4; fp32 rounding through the
 * layer stays near 1e-5 of it, and a wrong head mapping, mask, norm or
 * activation moves outputs by a good fraction of it.
 *
 * A bf16 layer is recomputed from the same bf16 weights with the
 * products' inputs rounded to bf16 at the same places.  Where the run's
 * fp32 value and the reference's double fall on two sides of a bf16
 * rounding boundary, that input differs by one bf16 step (up to 2^-7 of
 * it): rare, but a step in a norm's output or in attention's reaches the
 * whole row (seen: 0.2% of the row's RMS as the RMS of the errors, 0.5%
 * at one element).  So a bf16 row passes when the RMS of its errors is
 * within 1e-2 of the row's RMS and every element within 5e-2 of it plus
 * 5e-3; a wrong head mapping, mask, norm or activation moves the row by
 * far more. */
static int verify_sequence(const cal_layer_t *L, int64_t sb) {
  const cal_layer_shape_t *s = &L->s;
  const cal_layer_layout_t *l = &L->l;
  const int64_t d = s->hidden, f = s->ffn, hd = l->hd, H = s->heads;
  const int64_t G = s->kv_heads, lq = l->lq, lk = l->lk, hq = H * hd;
  const int64_t nqkv = l->nqkv;
  int rc = CAL_ENOMEM;
  double *x1 = cal_alloc(8 * (size_t)(lq * d)), *h = cal_alloc(8 * (size_t)(lq * d));
  double *qkv = cal_alloc(8 * (size_t)(lq * nqkv)), *ao = cal_alloc(8 * (size_t)(lq * hq));
  double *gu = cal_alloc(8 * (size_t)(lq * 2 * f)), *a = cal_alloc(8 * (size_t)(lq * f));
  double *out = cal_alloc(8 * (size_t)(lq * d));
  int64_t wmax = d * 2 * f > f * d ? d * 2 * f : f * d;
  if (d * nqkv > wmax) wmax = d * nqkv;
  if (hq * d > wmax) wmax = hq * d;
  double *wd = cal_alloc(8 * (size_t)wmax);
  float *q = cal_alloc(4 * (size_t)(H * lq * hd)), *o = cal_alloc(4 * (size_t)(H * lq * hd));
  float *kc = cal_alloc(4 * (size_t)(G * lk * hd)), *vc = cal_alloc(4 * (size_t)(G * lk * hd));
  if (!x1 || !h || !qkv || !ao || !gu || !a || !out || !wd || !q || !o || !kc || !vc)
    goto out;
  const float *xs = L->x + sb * lq * d, *outs = L->out + sb * lq * d;
  /* x of the sequence as double, RMSNorm, QKV */
  for (int64_t i = 0; i < lq * d; i++)
    x1[i] = xs[i];
  rmsnorm_d(x1, L->g1, h, lq, d);
  dgemm_w(L, CAL_LAYER_QKV, h, qkv, lq, nqkv, d, wd);
  /* the sequence's cache: past entries from the run's cache (the run
   * only overwrites the new token's slot), new ones from qkv */
  cache_rows(L, sb, kc, vc);
  for (int64_t i = 0; i < lq; i++) {
    int64_t pos = s->decode ? L->pos : i;
    for (int64_t hh = 0; hh < H; hh++)
      for (int64_t e = 0; e < hd; e++)
        q[(hh * lq + i) * hd + e] = (float)qkv[i * nqkv + hh * hd + e];
    for (int64_t g = 0; g < G; g++)
      for (int64_t e = 0; e < hd; e++) {
        kc[(g * lk + pos) * hd + e] = (float)qkv[i * nqkv + (H + g) * hd + e];
        vc[(g * lk + pos) * hd + e] = (float)qkv[i * nqkv + (H + G + g) * hd + e];
      }
  }
  /* a growing cache: its slots up to the new token's, each kv head's
   * rows moved together (the reference reads them contiguous) */
  const int64_t nk = s->decode ? L->pos + 1 : lk;
  for (int64_t g = 1; nk < lk && g < G; g++) {
    memmove(kc + g * nk * hd, kc + g * lk * hd, 4 * (size_t)(nk * hd));
    memmove(vc + g * nk * hd, vc + g * lk * hd, 4 * (size_t)(nk * hd));
  }
  cal_attn_shape_t as = {1, H, G, lq, nk, hd, 1};
  for (int64_t i = 0; L->attn16 >= 0 && i < G * lk * hd; i++) {
    kc[i] = cal_bf16_round(kc[i]); /* the bf16 attention's inputs */
    vc[i] = cal_bf16_round(vc[i]);
  }
  for (int64_t i = 0; L->attn16 >= 0 && i < H * lq * hd; i++)
    q[i] = cal_bf16_round(q[i]);
  if ((rc = cal_attn_ref(&as, q, kc, vc, o, 1, NULL, 1)) < 0)
    goto out;
  rc = CAL_ENOMEM;
  for (int64_t i = 0; i < lq; i++)
    for (int64_t hh = 0; hh < H; hh++)
      for (int64_t e = 0; e < hd; e++)
        ao[i * hq + hh * hd + e] = o[(hh * lq + i) * hd + e];
  dgemm_w(L, CAL_LAYER_O, ao, out, lq, d, hq, wd);
  for (int64_t i = 0; i < lq * d; i++)
    x1[i] = (double)xs[i] + out[i]; /* residual */
  rmsnorm_d(x1, L->g2, h, lq, d);
  dgemm_w(L, CAL_LAYER_GU, h, gu, lq, 2 * f, d, wd);
  for (int64_t i = 0; i < lq; i++)
    for (int64_t j = 0; j < f; j++) {
      double g = gu[i * 2 * f + j], u = gu[i * 2 * f + f + j];
      a[i * f + j] = g / (1.0 + exp(-g)) * u;
    }
  dgemm_w(L, CAL_LAYER_DOWN, a, out, lq, d, f, wd);
  rc = 0;
  for (int64_t i = 0; i < lq && rc == 0; i++) {
    double ss = 0, es = 0;
    for (int64_t e = 0; e < d; e++) {
      out[i * d + e] += x1[i * d + e];
      ss += out[i * d + e] * out[i * d + e];
    }
    double rms = sqrt(ss / (double)d);
    double tol = s->bf16 ? 5e-2 * rms + 5e-3 : 1e-3 * rms + 1e-4;
    for (int64_t e = 0; e < d && rc == 0; e++) {
      double err = fabs((double)outs[i * d + e] - out[i * d + e]);
      es += err * err;
      if (!(err <= tol))
        rc = CAL_EVERIFY;
    }
    if (s->bf16 && !(sqrt(es / (double)d) <= 1e-2 * rms + 1e-3))
      rc = CAL_EVERIFY;
  }
out:
  cal_free(x1); cal_free(h); cal_free(qkv); cal_free(ao); cal_free(gu);
  cal_free(a); cal_free(out); cal_free(wd); cal_free(q); cal_free(o);
  cal_free(kc); cal_free(vc);
  return rc;
}

int cal_layer_verify(void *state) {
  const cal_layer_t *L = state;
  int rc = verify_sequence(L, 0);
  if (rc == 0 && L->s.batch > 1)
    rc = verify_sequence(L, L->s.batch - 1);
  return rc;
}
