/* The LM head's verification (lm_head.h): the reference in double taken
 * from the state before one more step, and that step checked against it.
 * The step updates W and its moments in place, so the reference is taken
 * first: the sampled tokens' logits and dh need all of W as the step will
 * read it, and it is still there; the sampled rows' gradient needs only
 * those rows, saved with their moments for the AdamW check. */
#include "lm_head.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"

#define VERIFY_TOKENS 8
/* the sampled tokens' targets and eight rows spread over the vocabulary */
#define VERIFY_ROWS (VERIFY_TOKENS + 8)

struct cal_lm_head_ref {
  int ntok, nrows;
  double lse[VERIFY_TOKENS], tl[VERIFY_TOKENS]; /* log-sum-exp, target's */
  double *dh;                                   /* [ntok][d] */
  int64_t row[VERIFY_ROWS];
  float *p, *m, *v; /* the rows' masters and moments before the step */
};

/* the tokens checked in full: the first, the last and six between */
static int64_t token_at(const cal_lm_head_t *H, int i) {
  return H->t <= 8 ? i : (int64_t)i * (H->t - 1) / 7;
}

/* The inputs as the step's products read them: h and W, in bf16 rounded
 * as the step rounds h and as the copy holds W's masters. */
static double h_at(const cal_lm_head_t *H, size_t j) {
  return H->bf16 ? (double)cal_bf16_round(H->h[j]) : (double)H->h[j];
}
static double w_at(const cal_lm_head_t *H, float w) {
  return H->bf16 ? (double)cal_bf16_round(w) : (double)w;
}

void cal_lm_head_ref_free(cal_lm_head_ref_t *R) {
  if (!R)
    return;
  free(R->dh);
  free(R->p);
  free(R->m);
  free(R->v);
  free(R);
}

/* The sampled tokens' rows of h (hs [ntok][d]) and their logits over the
 * whole vocabulary (p [ntok][vocab]), one pass over W. */
static void ref_logits(const cal_lm_head_t *H, int ntok, double *hs,
                       double *p) {
  const int64_t d = H->d, V = H->vocab;
  for (int k = 0; k < ntok; k++)
    for (int64_t e = 0; e < d; e++)
      hs[k * d + e] = h_at(H, (size_t)(token_at(H, k) * d + e));
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < V; v++) {
    double acc[VERIFY_TOKENS] = {0};
    for (int64_t e = 0; e < d; e++) {
      double w = w_at(H, H->w[v * d + e]);
      for (int k = 0; k < ntok; k++)
        acc[k] += hs[k * d + e] * w;
    }
    for (int k = 0; k < ntok; k++)
      p[k * V + v] = acc[k];
  }
}

/* From the logits p: each sampled token's log-sum-exp and target's logit,
 * and its dh (one more pass over W). */
static void ref_dh(const cal_lm_head_t *H, const double *p,
                   cal_lm_head_ref_t *R) {
  const int64_t t = H->t, d = H->d, V = H->vocab;
  const int ntok = R->ntok;
  for (int k = 0; k < ntok; k++) {
    const double *l = p + k * V;
    double mx = -INFINITY, s = 0;
    for (int64_t v = 0; v < V; v++)
      mx = fmax(mx, l[v]);
    for (int64_t v = 0; v < V; v++)
      s += exp(l[v] - mx);
    R->lse[k] = mx + log(s);
    R->tl[k] = l[H->target[token_at(H, k)]];
  }
  for (int64_t v = 0; v < V; v++) {
    double gl[VERIFY_TOKENS];
    for (int k = 0; k < ntok; k++)
      gl[k] = (exp(p[k * V + v] - R->lse[k]) -
               (v == H->target[token_at(H, k)])) / (double)t;
    for (int64_t e = 0; e < d; e++) {
      double w = w_at(H, H->w[v * d + e]);
      for (int k = 0; k < ntok; k++)
        R->dh[k * d + e] += gl[k] * w;
    }
  }
}

int cal_lm_head_ref_make(const cal_lm_head_t *H, cal_lm_head_ref_t **out) {
  const int64_t t = H->t, d = H->d, V = H->vocab;
  const int ntok = t < VERIFY_TOKENS ? (int)t : VERIFY_TOKENS;
  const size_t rows = 4 * VERIFY_ROWS * (size_t)d;
  *out = NULL;
  cal_lm_head_ref_t *R = calloc(1, sizeof *R);
  double *hs = malloc(8 * (size_t)(ntok * d));
  double *p = malloc(8 * (size_t)(ntok * V));
  int rc = CAL_ENOMEM;
  if (!R || !hs || !p ||
      !(R->dh = calloc((size_t)(ntok * d), sizeof *R->dh)) ||
      !(R->p = malloc(rows)) || !(R->m = malloc(rows)) ||
      !(R->v = malloc(rows)))
    goto out;
  R->ntok = ntok, R->nrows = ntok + 8;
  ref_logits(H, ntok, hs, p);
  ref_dh(H, p, R);
  for (int k = 0; k < R->nrows; k++) {
    int64_t v = k < ntok ? H->target[token_at(H, k)]
                         : (int64_t)(k - ntok) * (V - 1) / 7;
    size_t o = (size_t)(v * d), to = (size_t)k * (size_t)d;
    R->row[k] = v;
    memcpy(R->p + to, H->w + o, 4 * (size_t)d);
    memcpy(R->m + to, H->m + o, 4 * (size_t)d);
    memcpy(R->v + to, H->v + o, 4 * (size_t)d);
  }
  rc = 0;
out:
  free(hs);
  free(p);
  if (rc < 0)
    cal_lm_head_ref_free(R);
  else
    *out = R;
  return rc;
}

/* Row k of the reference (row v of W as it was, p0): its gradient in
 * double (g: d of scratch) from every token's softmax at the step's
 * log-sum-exp (checked for the sampled tokens) against the one the step
 * used, read back from its first moment into gr; AdamW from the row's
 * masters and moments as they were by that gradient; bf16: the row of
 * the copy the next step reads against the new masters rounded.  1 when
 * all agree. */
static int row_ok(const cal_lm_head_t *H, const cal_lm_head_ref_t *R, int k,
                  double tol, double *g, float *gr) {
  const int64_t t = H->t, d = H->d, v = R->row[k];
  const float *p0 = R->p + k * d, *m0 = R->m + k * d, *v0 = R->v + k * d;
  const size_t o = (size_t)(v * d);
  const cal_adamw_t *opt = &H->opt;
  for (int64_t e = 0; e < d; e++)
    g[e] = 0;
  for (int64_t i = 0; i < t; i++) {
    double l = 0;
    for (int64_t e = 0; e < d; e++)
      l += h_at(H, (size_t)(i * d + e)) * w_at(H, p0[e]);
    double gl = (exp(l - (double)H->lse[i]) - (v == H->target[i])) / (double)t;
    for (int64_t e = 0; e < d; e++)
      g[e] += gl * h_at(H, (size_t)(i * d + e));
  }
  double e2 = 0, r2 = 0;
  for (int64_t e = 0; e < d; e++) {
    double ge = ((double)H->m[o + e] - opt->beta1 * m0[e]) / (1.0 - opt->beta1);
    gr[e] = (float)ge;
    e2 += (ge - g[e]) * (ge - g[e]);
    r2 += g[e] * g[e];
    if (H->bf16 && H->w16[o + e] != cal_f32_to_bf16(H->w[o + e]))
      return 0;
  }
  return sqrt(e2) <= tol * sqrt(r2) + 1e-9 &&
         cal_train_verify_adamw(opt, H->step, p0, m0, v0, gr, H->w + o,
                                H->m + o, H->v + o, (size_t)d) == 0;
}

/* The step's log-sum-exp, target's logit and dh of the sampled tokens
 * against the reference's, and its sampled rows (row_ok).
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
 * is 2.5 × the single-term bound; dh or a row a few percent off fails it.
 * The AdamW update is checked from the gradient the step used, so its
 * tolerance is fp32's (cal_train_verify_adamw). */
int cal_lm_head_ref_check(const cal_lm_head_t *H, const cal_lm_head_ref_t *R) {
  const int64_t t = H->t, d = H->d;
  const double tol = H->bf16 ? 1e-2 : 1e-3;
  for (int k = 0; k < R->ntok; k++) {
    int64_t i = token_at(H, k);
    double e2 = 0, r2 = 0;
    if (!(fabs(R->lse[k] - H->lse[i]) <= 1e-4 * (fabs(R->lse[k]) + 1.0)) ||
        !(fabs(R->tl[k] - H->lse[2 * t + i]) <= 1e-4 * (fabs(R->tl[k]) + 1.0)))
      return CAL_EVERIFY;
    for (int64_t e = 0; e < d; e++) {
      double df = H->dh[i * d + e] - R->dh[k * d + e];
      e2 += df * df;
      r2 += R->dh[k * d + e] * R->dh[k * d + e];
    }
    if (!(sqrt(e2) <= tol * sqrt(r2) + 1e-12))
      return CAL_EVERIFY;
  }
  double *g = malloc(8 * (size_t)d);
  float *gr = malloc(4 * (size_t)d);
  int rc = g && gr ? 0 : CAL_ENOMEM;
  for (int k = 0; rc == 0 && k < R->nrows; k++)
    if (!row_ok(H, R, k, tol, g, gr))
      rc = CAL_EVERIFY;
  free(g);
  free(gr);
  return rc;
}

/* Nothing ran before the first step: as every kernel's, the verification
 * then fails (the harness verifies what its runs left). */
int cal_lm_head_verify(cal_lm_head_t *H) {
  if (H->step < 1)
    return CAL_EVERIFY;
  cal_lm_head_ref_t *R = NULL;
  int rc = cal_lm_head_ref_make(H, &R);
  if (rc == 0)
    rc = cal_lm_head_step(H);
  if (rc == 0)
    rc = cal_lm_head_ref_check(H, R);
  cal_lm_head_ref_free(R);
  return rc;
}
