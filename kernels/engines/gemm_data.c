/* Inputs and verification shared by the GEMM kernels of every engine. */
#include "gemm_data.h"

#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "cal_mem.h"

#define GEMM_CHECKS 64

static size_t in_size(cal_gemm_dt_t dt) {
  switch (dt) {
  case CAL_GEMM_F64: return 8;
  case CAL_GEMM_F32: return 4;
  case CAL_GEMM_BF16: return 2;
  default: return 1;
  }
}

static size_t out_size(cal_gemm_dt_t dt) { return dt == CAL_GEMM_F64 ? 8 : 4; }

double cal_gemm_flops(const cal_params_t *p) {
  return 2.0 * (double)p->m * (double)p->n * (double)p->k;
}

double cal_gemm_bytes(const cal_params_t *p, cal_gemm_dt_t dt) {
  return (double)in_size(dt) * ((double)p->m * p->k + (double)p->k * p->n) +
         (double)out_size(dt) * p->m * p->n;
}

static double bf16_to_f64(uint16_t h) { return cal_bf16_to_f32(h); }

/* Fill n inputs of dtype dt; `second` selects B's range for int8. */
static void fill(void *x, size_t n, cal_gemm_dt_t dt, int second, cal_rng_t *r) {
  switch (dt) {
  case CAL_GEMM_F32:
    cal_fill_f32(x, n, -1.0f, 1.0f, r);
    break;
  case CAL_GEMM_F64:
    cal_fill_f64(x, n, -1.0, 1.0, r);
    break;
  case CAL_GEMM_BF16:
    for (size_t i = 0; i < n; i++)
      ((uint16_t *)x)[i] = cal_f32_to_bf16((float)(2.0 * cal_rng_uniform(r) - 1.0));
    break;
  case CAL_GEMM_U8S8:
    for (size_t i = 0; i < n; i++) {
      uint64_t v = cal_rng_next(r) >> 56; /* 0..255 */
      if (second)
        ((int8_t *)x)[i] = (int8_t)((int)v - 128);
      else
        ((uint8_t *)x)[i] = (uint8_t)(v >> 1);
    }
    break;
  }
}

void cal_gemm_data_free(cal_gemm_data_t *d) {
  if (!d)
    return;
  cal_free_each(d->a, d->b, d->c);
  d->a = d->b = d->c = NULL;
}

int cal_gemm_data_init(cal_gemm_data_t *d, const cal_params_t *p,
                       cal_gemm_dt_t dt) {
  memset(d, 0, sizeof *d);
  if (p->m <= 0 || p->n <= 0 || p->k <= 0)
    return CAL_EINVAL;
  d->dt = dt;
  d->m = p->m;
  d->n = p->n;
  d->k = p->k;
  d->seed = p->seed;
  size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n);
  size_t nc = (size_t)(p->m * p->n);
  d->a = cal_alloc(in_size(dt) * na);
  d->b = cal_alloc(in_size(dt) * nb);
  d->c = cal_alloc(out_size(dt) * nc);
  if (!d->a || !d->b || !d->c) {
    cal_gemm_data_free(d);
    return CAL_ENOMEM;
  }
  cal_rng_t r;
  cal_rng_seed(&r, p->seed);
  fill(d->a, na, dt, 0, &r);
  fill(d->b, nb, dt, 1, &r);
  memset(d->c, 0xff, out_size(dt) * nc);
  return 0;
}

int cal_gemm_state_new(const cal_params_t *p, cal_gemm_dt_t dt, size_t size,
                       void **out) {
  if (p->m <= 0 || p->n <= 0 || p->k <= 0)
    return CAL_EINVAL;
  cal_gemm_data_t *d = cal_zalloc(size);
  if (!d)
    return CAL_ENOMEM;
  int rc = cal_gemm_data_init(d, p, dt);
  if (rc < 0)
    cal_gemm_state_free(d);
  else
    *out = d;
  return rc;
}

void cal_gemm_state_free(void *state) {
  cal_gemm_data_free(state);
  cal_free(state);
}

static double in_at(const cal_gemm_data_t *d, const void *x, size_t idx,
                    int second) {
  switch (d->dt) {
  case CAL_GEMM_F32: return ((const float *)x)[idx];
  case CAL_GEMM_F64: return ((const double *)x)[idx];
  case CAL_GEMM_BF16: return bf16_to_f64(((const uint16_t *)x)[idx]);
  default:
    return second ? ((const int8_t *)x)[idx] : ((const uint8_t *)x)[idx];
  }
}

static double out_at(const cal_gemm_data_t *d, size_t idx) {
  switch (d->dt) {
  case CAL_GEMM_F64: return ((const double *)d->c)[idx];
  case CAL_GEMM_U8S8: return ((const int32_t *)d->c)[idx];
  default: return ((const float *)d->c)[idx];
  }
}

/* Whether entry (i, j) of C agrees with the reference. */
static int entry_ok(const cal_gemm_data_t *d, int64_t i, int64_t j) {
  double ref = 0.0, mag = 0.0;
  for (int64_t l = 0; l < d->k; l++) {
    double x = in_at(d, d->a, (size_t)(i * d->k + l), 0);
    double y = in_at(d, d->b, (size_t)(l * d->n + j), 1);
    ref += x * y; /* exact for int8: every partial sum is below 2^53 */
    mag += fabs(x * y);
  }
  double got = out_at(d, (size_t)(i * d->n + j));
  if (d->dt == CAL_GEMM_U8S8)
    return got == ref;
  /* unit roundoff of the accumulation: fp32 for fp32 and bf16 (whose
   * inputs are exact bf16 values, products exact in fp32).  A
   * probabilistic bound, generous by a factor of ~4 over the typical
   * sqrt(k) growth of a blocked sum, far below the error of a wrong
   * product (order sqrt(k) times the entries). */
  double u = d->dt == CAL_GEMM_F64 ? 0x1.0p-53 : 0x1.0p-24;
  double tol = (4.0 * sqrt((double)d->k) + 8.0) * u * mag + 1e-30;
  return fabs(got - ref) <= tol; /* false for NaN */
}

int cal_gemm_data_verify(const cal_gemm_data_t *d) {
  cal_rng_t r;
  cal_rng_seed(&r, d->seed ^ 0x5eedc0ffeeULL);
  for (int t = 0; t < GEMM_CHECKS + 4; t++) {
    int64_t i, j;
    if (t < 4) { /* the corners, then random entries */
      i = (t & 1) ? d->m - 1 : 0;
      j = (t & 2) ? d->n - 1 : 0;
    } else {
      i = (int64_t)(cal_rng_uniform(&r) * (double)d->m);
      j = (int64_t)(cal_rng_uniform(&r) * (double)d->n);
    }
    if (!entry_ok(d, i, j))
      return CAL_EVERIFY;
  }
  return 0;
}

void cal_gemm_test_corrupt(void *state) {
  cal_gemm_data_t *d = state;
  switch (d->dt) {
  case CAL_GEMM_F64: ((double *)d->c)[0] += 1.0 + fabs(((double *)d->c)[0]); break;
  case CAL_GEMM_U8S8: ((int32_t *)d->c)[0] += 1; break;
  default: ((float *)d->c)[0] += 1.0f + fabsf(((float *)d->c)[0]); break;
  }
}
