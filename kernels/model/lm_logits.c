/* The LM head of a model's forward pass (lm_logits.h). */
#include "lm_logits.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_mem.h"
#include "layer_internal.h"

double cal_lm_logits_flops(int64_t rows, int64_t d, int64_t v) {
  return 2.0 * (double)rows * (double)d * (double)v;
}

double cal_lm_logits_weight_bytes(int64_t d, int64_t v, int bf16) {
  return (bf16 ? 2.0 : 4.0) * (double)d * (double)v + 4.0 * (double)d;
}

/* W, the fp32 staging of a bf16 or packed W (a chunk, or two rows where
 * it is packed in bf16, or the rows of a fill chunk in fp32), h and h16,
 * the logits, the verification's doubles (a row of logits and W's column
 * sums) */
double cal_lm_logits_mem_bytes(int64_t rows, int64_t d, int64_t v, int bf16) {
  double R = (double)rows, D = (double)d, V = (double)v;
  double stage = bf16 ? 4.0 * (65536.0 > 2.0 * V ? 65536.0 : 2.0 * V)
                      : 4.0 * (double)cal_gemv_fill_stage_floats(d, v);
  return cal_lm_logits_weight_bytes(d, v, bf16) + 6.0 * R * D + 4.0 * R * V +
         stage + 8.0 * (V + D);
}

/* What depends on the rows (the batch): the engine's product bound to
 * them, h, h16 and the logits; the pointers left NULL. */
static void rows_free(cal_lm_logits_t *H) {
  if (H->eng)
    H->eng->mm_free(H->mm);
  H->eng = NULL;
  H->mm = NULL;
  cal_free_each(H->h, H->h16, H->logits);
  H->h = H->logits = NULL;
  H->h16 = NULL;
}

void cal_lm_logits_free(cal_lm_logits_t *H) {
  if (!H)
    return;
  rows_free(H);
  cal_free_each(H->g, H->w, H->w16, H->wp, H->wpf, H);
}

/* h, the logits, and in bf16 h16 for the engine's product. */
static int rows_alloc(cal_lm_logits_t *H) {
  size_t rd = (size_t)(H->rows * H->d);
  H->h = cal_alloc(4 * rd);
  H->logits = cal_alloc(4 * (size_t)H->rows * (size_t)H->vocab);
  if (H->bf16)
    H->h16 = cal_alloc(2 * rd);
  return H->h && H->logits && (H->h16 || !H->bf16) ? 0 : CAL_ENOMEM;
}

/* A packed W (wp): the draws two rows at a time, in the same order. */
static int fill_packed(cal_lm_logits_t *H, float a, cal_rng_t *r) {
  const int64_t d = H->d, v = H->vocab;
  float *tmp = cal_alloc(8 * (size_t)v);
  if (!tmp)
    return CAL_ENOMEM;
  for (int64_t k = 0; k < d; k += 2) {
    int two = k + 1 < d;
    cal_fill_f32(tmp, (size_t)((1 + two) * v), -a, a, r);
    cal_gemv_pack_pair(tmp, two ? tmp + v : NULL, d, v, k, H->wp);
  }
  cal_free(tmp);
  return 0;
}

/* A packed fp32 W (wpf): the row-major W's draws, made straight into
 * their blocks a chunk of rows at a time. */
static int fill_packed_f32(cal_lm_logits_t *H, float a, cal_rng_t *r) {
  const int64_t d = H->d, v = H->vocab;
  float *tmp = cal_alloc(4 * cal_gemv_fill_stage_floats(d, v));
  if (!tmp)
    return CAL_ENOMEM;
  cal_gemv_fill_packed_f32(H->wpf, d, v, a, r, tmp);
  cal_free(tmp);
  return 0;
}

/* W uniform with variance 1/hidden (a bf16 W: the same draws rounded,
 * staged a chunk at a time), the gain in [0.5, 1.5). */
static int fill(cal_lm_logits_t *H, uint64_t seed) {
  cal_rng_t r;
  cal_rng_seed(&r, seed ^ 0x10917ULL);
  size_t n = (size_t)H->d * (size_t)H->vocab, chunk = 65536;
  float a = (float)sqrt(3.0 / (double)H->d);
  cal_fill_f32(H->g, (size_t)H->d, 0.5f, 1.5f, &r);
  if (H->wpf)
    return fill_packed_f32(H, a, &r);
  if (!H->bf16) {
    cal_fill_f32(H->w, n, -a, a, &r);
    return 0;
  }
  if (H->wp)
    return fill_packed(H, a, &r);
  float *tmp = cal_alloc(4 * chunk);
  if (!tmp)
    return CAL_ENOMEM;
  for (size_t i = 0; i < n; i += chunk) {
    size_t m = n - i < chunk ? n - i : chunk;
    cal_fill_f32(tmp, m, -a, a, &r);
    cal_f32_to_bf16_n(tmp, H->w16 + i, (int64_t)m);
  }
  cal_free(tmp);
  return 0;
}

/* The product's path: the team's GEMV, or one GEMM on the engine. */
static int path_setup(cal_lm_logits_t *H, cal_engine_t engine) {
  if (H->team) {
    H->nthreads = omp_get_max_threads();
    H->gemv = cal_gemv_for(H->variant);
    H->gemv16 = cal_gemv_bf16_for(H->variant);
    H->gemvp = cal_gemv_packed_for(H->variant);
    snprintf(H->impl, sizeof H->impl, "gemv %s%s", H->bf16 ? "bf16" : "fp32",
             H->wp || H->wpf ? " packed" : "");
    return H->gemv && H->gemv16 ? 0 : CAL_EUNSUPP;
  }
  if (engine == CAL_ENGINE_BUILTIN)
    engine = cal_engine_default(H->bf16);
  const cal_engine_row_t *row = cal_engine_row(engine);
  if (!row || !row->mm_create)
    return CAL_EINVAL;
  int rc = row->mm_create(H->bf16 ? CAL_GEMM_BF16 : CAL_GEMM_F32, H->rows,
                          H->vocab, H->d, H->bf16 ? (void *)H->h16 : H->h,
                          H->bf16 ? (void *)H->w16 : H->w, H->logits, &H->mm);
  if (rc < 0)
    return rc;
  H->eng = row;
  snprintf(H->impl, sizeof H->impl, "%s %s", cal_engine_name(engine),
           row->mm_impl(H->mm));
  return 0;
}

int cal_lm_logits_create(int64_t rows, int64_t d, int64_t vocab, int bf16,
                         int team, int variant, cal_engine_t engine,
                         uint64_t seed, cal_lm_logits_t **out) {
  if (rows < 1 || d < 1 || vocab < 1)
    return CAL_EINVAL;
  cal_lm_logits_t *H = cal_alloc(sizeof *H);
  if (!H)
    return CAL_ENOMEM;
  *H = (cal_lm_logits_t){.rows = rows, .d = d, .vocab = vocab, .bf16 = bf16,
                         .team = team, .variant = variant};
  size_t n = (size_t)d * (size_t)vocab;
  int rc = CAL_ENOMEM;
  H->g = cal_alloc(4 * (size_t)d);
  /* the team on vdpbf16ps: W packed for it (layer_gemv.h) */
  int pack = bf16 && team && cal_gemv_packed_ok(variant);
  if (bf16 && pack)
    H->wp = cal_alloc(4 * cal_gemv_packed_words(d, vocab));
  else if (bf16)
    H->w16 = cal_alloc(2 * n);
  else if (team && cal_gemv_packed_for(variant))
    H->wpf = cal_alloc(4 * cal_gemv_packed_f32_floats(d, vocab));
  else
    H->w = cal_alloc(4 * n);
  if (!H->g || !(H->w || H->w16 || H->wp || H->wpf) ||
      (rc = rows_alloc(H)) < 0 || (rc = fill(H, seed)) < 0 ||
      (rc = path_setup(H, engine)) < 0) {
    cal_lm_logits_free(H);
    return rc;
  }
  *out = H;
  return 0;
}

int cal_lm_logits_reshape(cal_lm_logits_t *H, int64_t rows,
                          cal_engine_t engine) {
  if (rows < 1)
    return CAL_EINVAL;
  rows_free(H);
  H->rows = rows;
  int rc = rows_alloc(H);
  return rc < 0 ? rc : path_setup(H, engine);
}

/* Columns c0 .. c1 of the logits from the packed W. */
static void packed_product(cal_lm_logits_t *H, int64_t c0, int64_t c1) {
#ifdef CAL_HAVE_X86_SIMD
  cal_gemv_bf16_packed(H->h, H->d, H->rows, H->wp, H->d, 0, H->d, c0,
                       c1 - c0, H->logits + c0, H->vocab);
#else
  (void)H, (void)c0, (void)c1; /* never packed without it */
#endif
}

/* The team's product: each thread its block of columns (cache-line
 * multiples) of W, streamed once. */
static void team_product(cal_lm_logits_t *H) {
#pragma omp parallel num_threads(H->nthreads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t per = (H->vocab + nt - 1) / nt;
    per = (per + 15) / 16 * 16;
    int64_t c0 = t * per < H->vocab ? t * per : H->vocab;
    int64_t c1 = c0 + per < H->vocab ? c0 + per : H->vocab;
    if (c1 > c0 && H->wpf)
      H->gemvp(H->h, H->d, H->rows, H->wpf, H->d, 0, H->d, c0, c1 - c0,
               H->logits + c0, H->vocab);
    else if (c1 > c0 && H->wp)
      packed_product(H, c0, c1);
    else if (c1 > c0 && H->bf16)
      H->gemv16(H->h, H->d, H->rows, H->d, H->w16 + c0, H->vocab, c1 - c0,
                NULL, 0, H->logits + c0, H->vocab);
    else if (c1 > c0)
      H->gemv(H->h, H->d, H->rows, H->d, H->w + c0, H->vocab, c1 - c0, NULL,
              0, H->logits + c0, H->vocab);
  }
}

int cal_lm_logits_run(cal_lm_logits_t *H, const float *x, int64_t ldx) {
  const int64_t d = H->d;
  for (int64_t r = 0; r < H->rows; r++) {
    float *h = H->h + r * d;
    cal_layer_rmsnorm_rows(x + r * ldx, H->g, h, 1, d);
    for (int64_t i = 0; H->bf16 && i < d; i++)
      h[i] = cal_bf16_round(h[i]);
  }
  if (H->team) {
    team_product(H);
    return 0;
  }
  if (H->bf16)
    cal_f32_to_bf16_n(H->h, H->h16, H->rows * d);
  return H->eng->mm_run(H->mm);
}

/* Row r against doubles: its norm from x (the run's h within fp32
 * rounding, or one bf16 step), then every logit from the run's own h
 * (what the product read) within 1e-3 of the row's RMS plus 1e-4. */
static int verify_row(const cal_lm_logits_t *H, const float *x, int64_t r,
                      double *acc) {
  const int64_t d = H->d, v = H->vocab;
  const float *h = H->h + r * d, *lg = H->logits + r * v;
  double ss = 0;
  for (int64_t i = 0; i < d; i++)
    ss += (double)x[i] * x[i];
  double inv = 1.0 / sqrt(ss / (double)d + CAL_LAYER_RMS_EPS);
  for (int64_t i = 0; i < d; i++) {
    double ref = (double)x[i] * inv * H->g[i];
    double tol = (H->bf16 ? 1.0 / 128.0 : 1e-5) * fabs(ref) + 1e-6;
    if (!(fabs((double)h[i] - ref) <= tol))
      return CAL_EVERIFY;
  }
  memset(acc, 0, 8 * (size_t)v);
  for (int64_t jb = 0; H->wpf && jb < (v + 15) / 16; jb++) /* in its order */
    for (int64_t k = 0; k < d; k++)
      for (int64_t l = 0; l < 16 && 16 * jb + l < v; l++)
        acc[16 * jb + l] +=
            (double)h[k] * H->wpf[cal_gemv_packed_f32_off(d, k, 16 * jb + l)];
  for (int64_t k = 0; !H->wpf && k < d; k++) {
    double hk = h[k];
    if (H->wp)
      for (int64_t j = 0; j < v; j++)
        acc[j] += hk * cal_bf16_to_f32(cal_gemv_packed_at(H->wp, d, k, j));
    else if (H->bf16)
      for (int64_t j = 0; j < v; j++)
        acc[j] += hk * cal_bf16_to_f32(H->w16[k * v + j]);
    else
      for (int64_t j = 0; j < v; j++)
        acc[j] += hk * H->w[k * v + j];
  }
  double rs = 0;
  for (int64_t j = 0; j < v; j++)
    rs += acc[j] * acc[j];
  double tol = 1e-3 * sqrt(rs / (double)v) + 1e-4;
  for (int64_t j = 0; j < v; j++)
    if (!(fabs((double)lg[j] - acc[j]) <= tol))
      return CAL_EVERIFY;
  return 0;
}

int cal_lm_logits_verify(const cal_lm_logits_t *H, const float *x, int64_t ldx) {
  double *acc = cal_alloc(8 * (size_t)H->vocab);
  if (!acc)
    return CAL_ENOMEM;
  int rc = verify_row(H, x, 0, acc);
  if (rc == 0 && H->rows > 1)
    rc = verify_row(H, x + (H->rows - 1) * ldx, H->rows - 1, acc);
  cal_free(acc);
  return rc;
}
