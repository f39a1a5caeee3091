/* Reference attention: one row of scores at a time, materialised in full,
 * then softmax, then the weighted sum of V rows.  Straightforward on
 * purpose: it is the correctness oracle (fp64) and the baseline (fp32). */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "cal_mem.h"

/* The sizes cal_attn_shape_t and cal_params_t both hold, under one name. */
#define ATTN_SIZES(X) X(batch) X(heads) X(kv_heads) X(nq) X(nk) X(head_dim)
#define FROM_PARAMS(f) s->f = p->f;
#define TO_PARAMS(f) p->f = s->f;

void cal_attn_shape_from_params(const cal_params_t *p, cal_attn_shape_t *s) {
  ATTN_SIZES(FROM_PARAMS)
  s->causal = p->causal != 0;
}

void cal_attn_shape_to_params(const cal_attn_shape_t *s, cal_params_t *p) {
  ATTN_SIZES(TO_PARAMS)
  p->causal = s->causal;
}

static int shape_valid(const cal_attn_shape_t *s) {
  return s->batch > 0 && s->heads > 0 && s->kv_heads > 0 && s->nq > 0 &&
         s->nk > 0 && s->head_dim > 0 && s->heads % s->kv_heads == 0 &&
         s->head_dim <= CAL_ATTN_MAX_HEAD_DIM && !(s->causal && s->nq > s->nk);
}

static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t whylen, const char *fmt, ...) {
  if (!why || whylen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
}

int cal_attn_check_shape(const cal_params_t *p, double mem_avail_bytes,
                         char *why, size_t whylen) {
  cal_attn_shape_t s;
  cal_attn_shape_from_params(p, &s);
  static const struct {
    const char *name;
    size_t off;
  } dims[] = {
      {"batch", offsetof(cal_attn_shape_t, batch)},
      {"heads", offsetof(cal_attn_shape_t, heads)},
      {"kv-heads", offsetof(cal_attn_shape_t, kv_heads)},
      {"nq", offsetof(cal_attn_shape_t, nq)},
      {"nk", offsetof(cal_attn_shape_t, nk)},
      {"head-dim", offsetof(cal_attn_shape_t, head_dim)},
  };
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    int64_t x;
    memcpy(&x, (const char *)&s + dims[i].off, sizeof x);
    if (x <= 0) {
      say(why, whylen, "attention %s must be positive (got %lld)",
          dims[i].name, (long long)x);
      return CAL_EINVAL;
    }
  }
  if (s.heads % s.kv_heads != 0) {
    say(why, whylen,
        "attention heads (%lld) must be a multiple of kv-heads (%lld)",
        (long long)s.heads, (long long)s.kv_heads);
    return CAL_EINVAL;
  }
  if (s.head_dim > CAL_ATTN_MAX_HEAD_DIM) {
    say(why, whylen, "attention head-dim %lld exceeds the maximum %d",
        (long long)s.head_dim, CAL_ATTN_MAX_HEAD_DIM);
    return CAL_EINVAL;
  }
  if (s.causal && s.nq > s.nk) {
    say(why, whylen,
        "causal attention needs nq <= nk (got nq %lld, nk %lld)",
        (long long)s.nq, (long long)s.nk);
    return CAL_EINVAL;
  }
  /* sizes in double first: the products may overflow int64 */
  double qo = (double)s.batch * (double)s.heads * (double)s.nq * s.head_dim;
  double kv = (double)s.batch * (double)s.kv_heads * (double)s.nk * s.head_dim;
  double need = 4.0 * (2.0 * qo + 2.0 * kv) +
                4.0 * (double)s.batch * (double)s.kv_heads *
                    (double)(s.nk + 63) * s.head_dim;
  if (need > 0.25 * (double)SIZE_MAX || qo > 0x1p52 || kv > 0x1p52) {
    say(why, whylen, "attention buffers (%.3g bytes) exceed the address space",
        need);
    return CAL_ETOOBIG;
  }
  if (mem_avail_bytes > 0 && need > mem_avail_bytes) {
    say(why, whylen,
        "attention buffers need %.1f MiB, only %.1f MiB available",
        need / 1048576.0, mem_avail_bytes / 1048576.0);
    return CAL_ETOOBIG;
  }
  return 0;
}

double cal_attn_flops(const cal_attn_shape_t *s) {
  double nq = (double)s->nq, nk = (double)s->nk;
  /* query i attends nk - nq + i + 1 keys when causal */
  double pairs = s->causal ? nq * (nk - nq) + nq * (nq + 1.0) / 2.0 : nq * nk;
  return 4.0 * (double)s->batch * (double)s->heads * (double)s->head_dim *
         pairs;
}

size_t cal_attn_ref_scratch_bytes(const cal_attn_shape_t *s, int threads,
                                  int fp64) {
  if (threads < 1)
    threads = 1;
  return (size_t)threads * (size_t)s->nk * (fp64 ? sizeof(double)
                                                 : sizeof(float));
}

/* keys query i may attend: 0 .. keys_end(i) - 1 */
static int64_t keys_end(const cal_attn_shape_t *s, int64_t i) {
  return s->causal ? s->nk - s->nq + i + 1 : s->nk;
}

static void ref_row_f32(const cal_attn_shape_t *s, const float *q,
                        const float *k, const float *v, float *o, int64_t b,
                        int64_t h, int64_t i, float *p) {
  int64_t D = s->head_dim, g = s->heads / s->kv_heads, hk = h / g;
  const float *qr = q + ((b * s->heads + h) * s->nq + i) * D;
  const float *kh = k + (b * s->kv_heads + hk) * s->nk * D;
  const float *vh = v + (b * s->kv_heads + hk) * s->nk * D;
  float *orow = o + ((b * s->heads + h) * s->nq + i) * D;
  int64_t n = keys_end(s, i);
  float scale = 1.0f / sqrtf((float)D), mx = -INFINITY, sum = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    float d = 0.0f;
    for (int64_t t = 0; t < D; t++)
      d += qr[t] * kh[j * D + t];
    p[j] = d * scale;
    mx = fmaxf(mx, p[j]);
  }
  for (int64_t j = 0; j < n; j++) {
    p[j] = expf(p[j] - mx);
    sum += p[j];
  }
  for (int64_t t = 0; t < D; t++)
    orow[t] = 0.0f;
  for (int64_t j = 0; j < n; j++)
    for (int64_t t = 0; t < D; t++)
      orow[t] += p[j] * vh[j * D + t];
  float inv = 1.0f / sum;
  for (int64_t t = 0; t < D; t++)
    orow[t] *= inv;
}

void cal_attn_ref_row(const cal_attn_shape_t *s, const float *q,
                      const float *k, const float *v, int64_t b, int64_t h,
                      int64_t i, double *out, double *scale,
                      double *logit_abs, double *p) {
  int64_t D = s->head_dim, g = s->heads / s->kv_heads, hk = h / g;
  const float *qr = q + ((b * s->heads + h) * s->nq + i) * D;
  const float *kh = k + (b * s->kv_heads + hk) * s->nk * D;
  const float *vh = v + (b * s->kv_heads + hk) * s->nk * D;
  int64_t n = keys_end(s, i);
  double rs = 1.0 / sqrt((double)D), mx = -INFINITY, sum = 0.0, amax = 0.0;
  for (int64_t j = 0; j < n; j++) {
    double d = 0.0, a = 0.0;
    for (int64_t t = 0; t < D; t++) {
      double x = (double)qr[t] * kh[j * D + t];
      d += x;
      a += fabs(x);
    }
    p[j] = d * rs;
    mx = fmax(mx, p[j]);
    amax = fmax(amax, a * rs);
  }
  for (int64_t j = 0; j < n; j++) {
    p[j] = exp(p[j] - mx);
    sum += p[j];
  }
  for (int64_t t = 0; t < D; t++) {
    out[t] = 0.0;
    if (scale)
      scale[t] = 0.0;
  }
  for (int64_t j = 0; j < n; j++)
    for (int64_t t = 0; t < D; t++) {
      out[t] += p[j] * vh[j * D + t];
      if (scale)
        scale[t] += p[j] * fabs((double)vh[j * D + t]);
    }
  for (int64_t t = 0; t < D; t++) {
    out[t] /= sum;
    if (scale)
      scale[t] /= sum;
  }
  if (logit_abs)
    *logit_abs = amax;
}

int cal_attn_ref(const cal_attn_shape_t *s, const float *q, const float *k,
                 const float *v, float *o, int fp64, void *scratch,
                 int scratch_threads) {
  void *own = NULL;
  if (!shape_valid(s))
    return CAL_EINVAL;
  int nthr = omp_get_max_threads();
  if (scratch) {
    if (scratch_threads < nthr)
      nthr = scratch_threads < 1 ? 1 : scratch_threads;
  } else {
    own = cal_alloc(cal_attn_ref_scratch_bytes(s, nthr, fp64));
    if (!own)
      return CAL_ENOMEM;
    scratch = own;
  }
  int64_t rows = s->batch * s->heads * s->nq, D = s->head_dim;
#pragma omp parallel num_threads(nthr)
  {
    int t = omp_get_thread_num();
    if (fp64) {
      double *p = (double *)scratch + (size_t)t * (size_t)s->nk;
      double row[CAL_ATTN_MAX_HEAD_DIM];
#pragma omp for schedule(dynamic, 16)
      for (int64_t r = 0; r < rows; r++) {
        int64_t i = r % s->nq, bh = r / s->nq;
        cal_attn_ref_row(s, q, k, v, bh / s->heads, bh % s->heads, i, row,
                         NULL, NULL, p);
        for (int64_t x = 0; x < D; x++)
          o[r * D + x] = (float)row[x];
      }
    } else {
      float *p = (float *)scratch + (size_t)t * (size_t)s->nk;
#pragma omp for schedule(dynamic, 16)
      for (int64_t r = 0; r < rows; r++) {
        int64_t i = r % s->nq, bh = r / s->nq;
        ref_row_f32(s, q, k, v, o, bh / s->heads, bh % s->heads, i, p);
      }
    }
  }
  cal_free(own);
  return 0;
}
