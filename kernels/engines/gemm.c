/* GEMM kernels over OpenBLAS: C = A·B, row-major, beta = 0.  Inputs and
 * verification are shared with the other engines (gemm_data.c). */
#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "cal_isa.h"
#include "cal_mem.h"
#include "engine.h"
#include "gemm_data.h"
#include "gemm_openblas.h"
#include "kernel.h"

typedef struct {
  cal_gemm_data_t d; /* first: cal_gemm_test_corrupt reads it */
  cal_sbgemm_fn sbgemm;
} gemm_state_t;

static double sgemm_bytes(const cal_params_t *p) { return cal_gemm_bytes(p, CAL_GEMM_F32); }
static double dgemm_bytes(const cal_params_t *p) { return cal_gemm_bytes(p, CAL_GEMM_F64); }
static double sbgemm_bytes(const cal_params_t *p) { return cal_gemm_bytes(p, CAL_GEMM_BF16); }

cal_sbgemm_fn cal_openblas_sbgemm(void) {
  return (cal_sbgemm_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "cblas_sbgemm");
}

static int sbgemm_supported(const cal_params_t *p, const char **why) {
  return cal_bf16_supported(CAL_ENGINE_OPENBLAS, why);
}

static int gemm_setup_dt(const cal_params_t *p, void **state, cal_gemm_dt_t dt) {
  cal_sbgemm_fn sbgemm = dt == CAL_GEMM_BF16 ? cal_openblas_sbgemm() : NULL;
  void *v = NULL;
  int rc = cal_gemm_state_new(p, dt, sizeof(gemm_state_t), &v);
  if (rc == 0 && dt == CAL_GEMM_BF16 && !sbgemm) {
    cal_gemm_state_free(v);
    rc = CAL_EUNSUPP;
  } else if (rc == 0) {
    ((gemm_state_t *)v)->sbgemm = sbgemm;
    *state = v;
  }
  return rc;
}

static int sgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, CAL_GEMM_F32); }
static int dgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, CAL_GEMM_F64); }
static int sbgemm_setup(const cal_params_t *p, void **st) { return gemm_setup_dt(p, st, CAL_GEMM_BF16); }

static int gemm_run(void *state) {
  gemm_state_t *s = state;
  const cal_gemm_data_t *d = &s->d;
  blasint m = (blasint)d->m, n = (blasint)d->n, k = (blasint)d->k;
  switch (d->dt) {
  case CAL_GEMM_F32:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                d->a, k, d->b, n, 0.0f, d->c, n);
    break;
  case CAL_GEMM_F64:
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                d->a, k, d->b, n, 0.0, d->c, n);
    break;
  case CAL_GEMM_BF16:
    s->sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, d->a,
              k, d->b, n, 0.0f, d->c, n);
    break;
  default:
    return CAL_EINVAL;
  }
  return 0;
}

static int gemm_verify(void *state) {
  return cal_gemm_data_verify(&((const gemm_state_t *)state)->d);
}

const cal_kernel_t cal_kernel_sgemm = {
    .name = "sgemm", .family = CAL_FAMILY_GEMM, .dtype = CAL_DTYPE_FP32, .engine = CAL_ENGINE_OPENBLAS,
    .flops = cal_gemm_flops, .bytes = sgemm_bytes, .mem_bytes = sgemm_bytes,
    .setup = sgemm_setup, .run = gemm_run, .verify = gemm_verify,
    .teardown = cal_gemm_state_free,
};

const cal_kernel_t cal_kernel_dgemm = {
    .name = "dgemm", .family = CAL_FAMILY_GEMM, .dtype = CAL_DTYPE_FP64, .engine = CAL_ENGINE_OPENBLAS,
    .flops = cal_gemm_flops, .bytes = dgemm_bytes, .mem_bytes = dgemm_bytes,
    .setup = dgemm_setup, .run = gemm_run, .verify = gemm_verify,
    .teardown = cal_gemm_state_free,
};

const cal_kernel_t cal_kernel_sbgemm = {
    .name = "sbgemm", .family = CAL_FAMILY_GEMM, .dtype = CAL_DTYPE_BF16, .engine = CAL_ENGINE_OPENBLAS,
    .flops = cal_gemm_flops, .bytes = sbgemm_bytes, .mem_bytes = sbgemm_bytes,
    .supported = sbgemm_supported, .setup = sbgemm_setup, .run = gemm_run,
    .verify = gemm_verify, .teardown = cal_gemm_state_free,
};
