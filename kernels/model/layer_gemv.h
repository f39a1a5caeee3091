/* The layer's small-batch matrix product: a few activation rows times a
 * weight matrix that is read from memory once (decode is bound by reading
 * the weights).  Not a public header: kernels/model/layer_decode.c and tests use
 * it.
 *
 *   y[b·ldy + j] = add[b·ladd + j] + Σ_k x[b·ldx + k] · w[k·ldw + j]
 *
 * for b < batch, j < n, k < K (add == NULL: no addend).  w is a row-major
 * block of a weight matrix (K rows of at least n floats, ldw apart); the
 * caller hands each thread its own columns, so every weight is read once
 * per call whatever the batch.  y must not overlap x, w or add.  Sums run
 * over k in order, in fp32, eight weight rows per pass.  Single-threaded,
 * no allocation, no I/O.
 *
 * The bf16 form takes bf16 weights (the layer in bf16) and sums in fp32
 * as above: half the bytes to read.  x must hold bf16 values (the layer
 * rounds its rows first, so that both paths compute the same products as
 * a bf16 GEMM): the AVX-512 variant on a CPU with AVX512_BF16 multiplies
 * bf16 pairs on the dot-product instruction (x rounded to bf16, exact for
 * such rows), the others widen each weight to fp32 for an FMA. */
#ifndef CAL_LAYER_GEMV_H
#define CAL_LAYER_GEMV_H

#include <stdint.h>

#include "cal_bf16.h"

/* The fp32 and bf16 forms' signature. */
typedef void cal_gemv_t(const float *x, int64_t ldx, int64_t batch, int64_t K,
                        const float *w, int64_t ldw, int64_t n,
                        const float *add, int64_t ladd, float *y, int64_t ldy);
typedef void cal_gemv_bf16_t(const float *x, int64_t ldx, int64_t batch,
                             int64_t K, const uint16_t *w, int64_t ldw,
                             int64_t n, const float *add, int64_t ladd,
                             float *y, int64_t ldy);
typedef cal_gemv_t *cal_gemv_fn;
typedef cal_gemv_bf16_t *cal_gemv_bf16_fn;

/* The variant's function (cal_isa_variant_t, resolved, not AUTO); NULL when
 * this build has none for it. */
cal_gemv_fn cal_gemv_for(int variant);
cal_gemv_bf16_fn cal_gemv_bf16_for(int variant);

/* One per variant; call only when cal_variant_supported() says so.
 * cal_gemv_bf16_dp: AVX512_BF16 (vdpbf16ps), cal_gemv_bf16_for
 * (CAL_VARIANT_AVX512) where the CPU has it. */
cal_gemv_t cal_gemv_scalar, cal_gemv_avx2, cal_gemv_avx512;
cal_gemv_bf16_t cal_gemv_bf16_scalar, cal_gemv_bf16_avx2, cal_gemv_bf16_avx512,
    cal_gemv_bf16_dp;

#endif
