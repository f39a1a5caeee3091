/* The training step's elementwise loops (train_vec.h): the portable ones,
 * the choice of table and the threaded AdamW pass. */
#include "train_vec.h"

#include <math.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"

cal_adamw_k_t cal_adamw_consts(double lr, double beta1, double beta2,
                               double eps, double weight_decay, int64_t step) {
  cal_adamw_k_t k;
  k.b1 = (float)beta1, k.b2 = (float)beta2;
  /* 1 - beta in double: 1.0f - 0.999f is 1.3e-5 off */
  k.ob1 = (float)(1.0 - beta1), k.ob2 = (float)(1.0 - beta2);
  k.c1 = (float)(1.0 / (1.0 - pow(beta1, (double)step)));
  k.c2 = (float)(1.0 / (1.0 - pow(beta2, (double)step)));
  k.lr = (float)lr, k.eps = (float)eps;
  k.decay = (float)(1.0 - lr * weight_decay);
  return k;
}

double cal_adamw_bytes(int bf16_copy) {
  return 4.0 * 7.0 + (bf16_copy ? 2.0 : 0.0);
}

int cal_adamw_sets_alloc(float *p[2], float *m[2], float *v[2], size_t n) {
  size_t bytes = 4 * (n ? n : 1);
  for (int i = 0; i < 2; i++)
    if (!(p[i] = cal_alloc(bytes)) || !(m[i] = cal_alloc(bytes)) ||
        !(v[i] = cal_alloc(bytes)))
      return CAL_ENOMEM;
  return 0;
}

void cal_adamw_sets_free(float *p[2], float *m[2], float *v[2]) {
  for (int i = 0; i < 2; i++)
    cal_free_each(p[i], m[i], v[i]);
}

void cal_adamw_scalar(const cal_adamw_k_t *k, const float *p, const float *m,
                      const float *v, const float *g, float *p2, float *m2,
                      float *v2, uint16_t *p16, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float mi = k->b1 * m[i] + k->ob1 * g[i];
    float vi = k->b2 * v[i] + k->ob2 * g[i] * g[i];
    float pi = p[i] * k->decay - k->lr * (mi * k->c1) / (sqrtf(vi * k->c2) + k->eps);
    m2[i] = mi;
    v2[i] = vi;
    p2[i] = pi;
    if (p16)
      p16[i] = cal_f32_to_bf16(pi);
  }
}

static int aligned(const void *a, size_t to) {
  return ((uintptr_t)a & (to - 1)) == 0;
}

void cal_adamw_by_lines(cal_adamw_body_fn body, const cal_adamw_k_t *k,
                        const float *p, const float *m, const float *v,
                        const float *g, float *p2, float *m2, float *v2,
                        uint16_t *p16, size_t n) {
  size_t i = (size_t)((64 - ((uintptr_t)p2 & 63)) & 63) / 4;
  if (((uintptr_t)p2 & 3) != 0 || i > n)
    i = n;
  cal_adamw_scalar(k, p, m, v, g, p2, m2, v2, p16, i);
  const int nt = aligned(p2 + i, 64) && aligned(m2 + i, 64) &&
                 aligned(v2 + i, 64) && (!p16 || aligned(p16 + i, 32));
  i = body(k, p, m, v, g, p2, m2, v2, p16, i, n, nt);
  cal_adamw_scalar(k, p + i, m + i, v + i, g + i, p2 + i, m2 + i, v2 + i,
                   p16 ? p16 + i : NULL, n - i);
}

static float row_max_scalar(const float *l, int64_t n) {
  float m = -INFINITY;
  for (int64_t j = 0; j < n; j++)
    m = l[j] > m ? l[j] : m;
  return m;
}

static float row_exp_scalar(const float *l, int64_t n, float shift, float *e32,
                            uint16_t *e16) {
  (void)e16; /* the portable table has no fp16 */
  float s = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    float e = expf(l[j] - shift);
    s += e;
    if (e32)
      e32[j] = e;
  }
  return s;
}

static void row_scale_scalar(const float *e32, const uint16_t *e16, int64_t n,
                             float scale, float *g32, uint16_t *g16) {
  (void)e16;
  for (int64_t j = 0; j < n; j++) {
    float g = e32[j] * scale;
    if (g16)
      g16[j] = cal_f32_to_bf16(g);
    else
      g32[j] = g;
  }
}

static void swiglu_scalar(const float *gu, int64_t f, float *a) {
  const float *gate = gu, *up = gu + f;
  for (int64_t j = 0; j < f; j++)
    a[j] = gate[j] / (1.0f + expf(-gate[j])) * up[j];
}

static void swiglu_bwd_scalar(const float *gu, const float *da, int64_t f,
                              float *dgu) {
  const float *gate = gu, *up = gu + f;
  for (int64_t j = 0; j < f; j++) {
    float gv = gate[j], s = 1.0f / (1.0f + expf(-gv));
    dgu[j] = da[j] * up[j] * s * (1.0f + gv * (1.0f - s));
    dgu[f + j] = da[j] * gv * s;
  }
}

static const cal_train_vec_t vec_scalar = {
    "scalar", 0, cal_adamw_scalar, row_max_scalar, row_exp_scalar,
    row_scale_scalar, swiglu_scalar, swiglu_bwd_scalar};

#ifdef CAL_HAVE_X86_SIMD
static const cal_train_vec_t vec_avx2 = {
    "avx2", 0, cal_adamw_avx2, cal_row_max_avx2, cal_row_exp_avx2,
    cal_row_scale_avx2, cal_swiglu_avx2, cal_swiglu_bwd_avx2};
static const cal_train_vec_t vec_avx512 = {
    "avx512", 1, cal_adamw_avx512, cal_row_max_avx512, cal_row_exp_avx512,
    cal_row_scale_avx512, cal_swiglu_avx512, cal_swiglu_bwd_avx512};
#endif

const cal_train_vec_t *cal_train_vec_for(int variant) {
  if (!cal_variant_supported(variant))
    return NULL;
  switch (variant) {
  case CAL_VARIANT_SCALAR: return &vec_scalar;
#ifdef CAL_HAVE_X86_SIMD
  case CAL_VARIANT_AVX2: return &vec_avx2;
  case CAL_VARIANT_AVX512: return &vec_avx512;
#endif
  default: return NULL;
  }
}

const cal_train_vec_t *cal_train_vec(void) {
  int best;
  if (cal_variant_best(&best) < 0) /* a bad CALIBRATE_ISA: refused at start */
    best = CAL_VARIANT_SCALAR;
  for (int v = best; v > CAL_VARIANT_SCALAR; v--) {
    const cal_train_vec_t *t = cal_train_vec_for(v);
    if (t)
      return t;
  }
  return &vec_scalar;
}

void cal_adamw_pass(const cal_train_vec_t *vec, const cal_adamw_k_t *k,
                    const float *p, const float *m, const float *v,
                    const float *g, float *p2, float *m2, float *v2,
                    uint16_t *p16, size_t n) {
  if (n == 0)
    return;
#pragma omp parallel
  {
    size_t a, b; /* whole cache lines of fp32 a thread */
    cal_team_share(n, 16, &a, &b);
    if (b > a)
      vec->adamw(k, p + a, m + a, v + a, g + a, p2 + a, m2 + a, v2 + a,
                 p16 ? p16 + a : NULL, b - a);
  }
}
