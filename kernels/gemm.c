/* GEMM kernels over the BLAS library: C = A·B, row-major, beta = 0.
 * Verification spot-checks entries of C against a double-precision dot
 * product of the same (rounded) inputs. */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"

#define GEMM_CHECKS 64

typedef enum { GEMM_F32, GEMM_F64, GEMM_BF16 } gemm_dtype_t;

typedef void (*sbgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
                          enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                          float, const uint16_t *, blasint, const uint16_t *,
                          blasint, float, float *, blasint);

typedef struct {
  gemm_dtype_t dt;
  int64_t m, n, k;
  void *a, *b, *c; /* inputs in the kernel's dtype, c in fp32/fp64 */
  uint64_t seed;
  sbgemm_fn sbgemm;
} gemm_state_t;

static double gemm_flops(const cal_params_t *p) {
  return 2.0 * (double)p->m * (double)p->n * (double)p->k;
}

static size_t elem_size(gemm_dtype_t dt) {
  return dt == GEMM_F64 ? 8 : dt == GEMM_F32 ? 4 : 2;
}

static double gemm_bytes_dt(const cal_params_t *p, gemm_dtype_t dt) {
  /* compulsory traffic: read A and B once, write C once */
  size_t out = dt == GEMM_F64 ? 8 : 4;
  return (double)elem_size(dt) * ((double)p->m * p->k + (double)p->k * p->n) +
         (double)out * p->m * p->n;
}

static double sgemm_bytes(const cal_params_t *p) { return gemm_bytes_dt(p, GEMM_F32); }
static double dgemm_bytes(const cal_params_t *p) { return gemm_bytes_dt(p, GEMM_F64); }
static double sbgemm_bytes(const cal_params_t *p) { return gemm_bytes_dt(p, GEMM_BF16); }

/* setup allocates exactly the three matrices */
static double sgemm_mem(const cal_params_t *p) { return sgemm_bytes(p); }
static double dgemm_mem(const cal_params_t *p) { return dgemm_bytes(p); }
static double sbgemm_mem(const cal_params_t *p) { return sbgemm_bytes(p); }

static uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
    return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

static double bf16_to_f64(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static sbgemm_fn find_sbgemm(void) {
  /* Not every OpenBLAS build exports it (it needs BUILD_BFLOAT16). */
  return (sbgemm_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "cblas_sbgemm");
}

static int sbgemm_supported(const cal_params_t *p, const char **why) {
  if (!(cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16))) {
    *why = "CPU has no native BF16 instructions (AVX512_BF16 or AMX-BF16)";
    return CAL_EUNSUPP;
  }
  if (!find_sbgemm()) {
    *why = "BLAS library was built without bfloat16 (no cblas_sbgemm)";
    return CAL_EUNSUPP;
  }
  return 0;
}

static void gemm_teardown(void *state) {
  gemm_state_t *s = state;
  if (!s)
    return;
  cal_free(s->a);
  cal_free(s->b);
  cal_free(s->c);
  cal_free(s);
}

static void fill_bf16(uint16_t *dst, size_t n, cal_rng_t *r) {
  for (size_t i = 0; i < n; i++)
    dst[i] = f32_to_bf16((float)(2.0 * cal_rng_uniform(r) - 1.0));
}

static int gemm_setup_dt(const cal_params_t *p, void **state, gemm_dtype_t dt) {
  gemm_state_t *s = NULL;
  if (p->m <= 0 || p->n <= 0 || p->k <= 0)
    return CAL_EINVAL;
  s = cal_alloc(sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  memset(s, 0, sizeof *s);
  s->dt = dt;
  s->m = p->m;
  s->n = p->n;
  s->k = p->k;
  s->seed = p->seed;
  size_t es = elem_size(dt), cs = dt == GEMM_F64 ? 8 : 4;
  s->a = cal_alloc(es * (size_t)(p->m * p->k));
  s->b = cal_alloc(es * (size_t)(p->k * p->n));
  s->c = cal_alloc(cs * (size_t)(p->m * p->n));
  if (!s->a || !s->b || !s->c)
    goto nomem;
  if (dt == GEMM_BF16) {
    s->sbgemm = find_sbgemm();
    if (!s->sbgemm) {
      gemm_teardown(s);
      return CAL_EUNSUPP;
    }
  }
  cal_rng_t r;
  cal_rng_seed(&r, p->seed);
  size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n);
  switch (dt) {
  case GEMM_F32:
    cal_fill_f32(s->a, na, -1.0f, 1.0f, &r);
    cal_fill_f32(s->b, nb, -1.0f, 1.0f, &r);
    break;
  case GEMM_F64:
    cal_fill_f64(s->a, na, -1.0, 1.0, &r);
    cal_fill_f64(s->b, nb, -1.0, 1.0, &r);
    break;
  case GEMM_BF16:
    fill_bf16(s->a, na, &r);
    fill_bf16(s->b, nb, &r);
    break;
  }
  /* poison C so a kernel that writes nothing cannot pass verification */
  memset(s->c, 0xff, cs * (size_t)(p->m * p->n));
  *state = s;
  return 0;
nomem:
  gemm_teardown(s);
  return CAL_ENOMEM;
}

static int sgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, GEMM_F32); }
static int dgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, GEMM_F64); }
static int sbgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, GEMM_BF16); }

static int gemm_run(void *state) {
  gemm_state_t *s = state;
  blasint m = (blasint)s->m, n = (blasint)s->n, k = (blasint)s->k;
  switch (s->dt) {
  case GEMM_F32:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                s->a, k, s->b, n, 0.0f, s->c, n);
    break;
  case GEMM_F64:
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                s->a, k, s->b, n, 0.0, s->c, n);
    break;
  case GEMM_BF16:
    s->sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, s->a,
              k, s->b, n, 0.0f, s->c, n);
    break;
  }
  return 0;
}

static double in_at(const gemm_state_t *s, const void *x, size_t idx) {
  switch (s->dt) {
  case GEMM_F32: return ((const float *)x)[idx];
  case GEMM_F64: return ((const double *)x)[idx];
  default: return bf16_to_f64(((const uint16_t *)x)[idx]);
  }
}

static int gemm_verify(void *state) {
  const gemm_state_t *s = state;
  /* unit roundoff of the accumulation: fp32 for sgemm and sbgemm (whose
   * inputs are exact bf16 values, products exact in fp32) */
  double u = s->dt == GEMM_F64 ? 0x1.0p-53 : 0x1.0p-24;
  cal_rng_t r;
  cal_rng_seed(&r, s->seed ^ 0x5eedc0ffeeULL);
  for (int t = 0; t < GEMM_CHECKS + 4; t++) {
    int64_t i, j;
    if (t < 4) { /* the corners, then random entries */
      i = (t & 1) ? s->m - 1 : 0;
      j = (t & 2) ? s->n - 1 : 0;
    } else {
      i = (int64_t)(cal_rng_uniform(&r) * (double)s->m);
      j = (int64_t)(cal_rng_uniform(&r) * (double)s->n);
    }
    double ref = 0.0, mag = 0.0;
    for (int64_t l = 0; l < s->k; l++) {
      double x = in_at(s, s->a, (size_t)(i * s->k + l));
      double y = in_at(s, s->b, (size_t)(l * s->n + j));
      ref += x * y;
      mag += fabs(x * y);
    }
    double got = s->dt == GEMM_F64 ? ((const double *)s->c)[i * s->n + j]
                                   : ((const float *)s->c)[i * s->n + j];
    /* a probabilistic bound, generous by a factor of ~4 over the typical
     * sqrt(k) growth of a blocked sum, far below the error of a wrong
     * product (order sqrt(k) times the entries) */
    double tol = (4.0 * sqrt((double)s->k) + 8.0) * u * mag + 1e-30;
    if (!(fabs(got - ref) <= tol))
      return CAL_EVERIFY;
  }
  return 0;
}

const cal_kernel_t cal_kernel_sgemm = {
    .name = "sgemm", .family = "gemm", .dtype = "fp32",
    .flops = gemm_flops, .bytes = sgemm_bytes, .mem_bytes = sgemm_mem,
    .setup = sgemm_setup, .run = gemm_run, .verify = gemm_verify,
    .teardown = gemm_teardown,
};

const cal_kernel_t cal_kernel_dgemm = {
    .name = "dgemm", .family = "gemm", .dtype = "fp64",
    .flops = gemm_flops, .bytes = dgemm_bytes, .mem_bytes = dgemm_mem,
    .setup = dgemm_setup, .run = gemm_run, .verify = gemm_verify,
    .teardown = gemm_teardown,
};

const cal_kernel_t cal_kernel_sbgemm = {
    .name = "sbgemm", .family = "gemm", .dtype = "bf16",
    .flops = gemm_flops, .bytes = sbgemm_bytes, .mem_bytes = sbgemm_mem,
    .supported = sbgemm_supported, .setup = sbgemm_setup, .run = gemm_run,
    .verify = gemm_verify, .teardown = gemm_teardown,
};
