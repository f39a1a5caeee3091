/* OpenBLAS's bfloat16 GEMM, which not every build exports (it needs
 * BUILD_BFLOAT16): found at run time, shared by the sbgemm kernel
 * (gemm.c), the engine table's products (openblas_mm.c) and the training
 * step. */
#ifndef CAL_GEMM_OPENBLAS_H
#define CAL_GEMM_OPENBLAS_H

#include <cblas.h>
#include <stdint.h>

/* cblas_sbgemm: C = alpha·A·B + beta·C, A and B bf16, C fp32. */
typedef void (*cal_sbgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
                              enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                              float, const uint16_t *, blasint,
                              const uint16_t *, blasint, float, float *,
                              blasint);

/* The loaded BLAS's cblas_sbgemm, or NULL. */
cal_sbgemm_fn cal_openblas_sbgemm(void);

#endif
