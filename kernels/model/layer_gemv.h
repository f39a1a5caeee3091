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
 * The bf16 form takes bf16 weights (the layer in bf16), widens each to
 * fp32 as it is loaded and sums in fp32 as above: half the bytes to read,
 * the same arithmetic.  x stays fp32; the layer rounds it to bf16 values
 * first, so that both paths compute the same products as a bf16 GEMM. */
#ifndef CAL_LAYER_GEMV_H
#define CAL_LAYER_GEMV_H

#include <stdint.h>

#include "cal_bf16.h"

typedef void (*cal_gemv_fn)(const float *x, int64_t ldx, int64_t batch,
                            int64_t K, const float *w, int64_t ldw, int64_t n,
                            const float *add, int64_t ladd, float *y,
                            int64_t ldy);

typedef void (*cal_gemv_bf16_fn)(const float *x, int64_t ldx, int64_t batch,
                                 int64_t K, const uint16_t *w, int64_t ldw,
                                 int64_t n, const float *add, int64_t ladd,
                                 float *y, int64_t ldy);

/* The variant's function (cal_isa_variant_t, resolved, not AUTO); NULL when
 * this build has none for it. */
cal_gemv_fn cal_gemv_for(int variant);
cal_gemv_bf16_fn cal_gemv_bf16_for(int variant);

/* One per variant; call only when cal_variant_supported() says so. */
void cal_gemv_scalar(const float *x, int64_t ldx, int64_t batch, int64_t K,
                     const float *w, int64_t ldw, int64_t n, const float *add,
                     int64_t ladd, float *y, int64_t ldy);
void cal_gemv_avx2(const float *x, int64_t ldx, int64_t batch, int64_t K,
                   const float *w, int64_t ldw, int64_t n, const float *add,
                   int64_t ladd, float *y, int64_t ldy);
void cal_gemv_avx512(const float *x, int64_t ldx, int64_t batch, int64_t K,
                     const float *w, int64_t ldw, int64_t n, const float *add,
                     int64_t ladd, float *y, int64_t ldy);

void cal_gemv_bf16_scalar(const float *x, int64_t ldx, int64_t batch,
                          int64_t K, const uint16_t *w, int64_t ldw, int64_t n,
                          const float *add, int64_t ladd, float *y,
                          int64_t ldy);
void cal_gemv_bf16_avx2(const float *x, int64_t ldx, int64_t batch, int64_t K,
                        const uint16_t *w, int64_t ldw, int64_t n,
                        const float *add, int64_t ladd, float *y, int64_t ldy);
void cal_gemv_bf16_avx512(const float *x, int64_t ldx, int64_t batch,
                          int64_t K, const uint16_t *w, int64_t ldw, int64_t n,
                          const float *add, int64_t ladd, float *y,
                          int64_t ldy);

#endif
