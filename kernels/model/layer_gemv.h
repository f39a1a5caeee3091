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
 * a bf16 GEMM); each weight is widened to fp32 for an FMA.  Where the
 * CPU has AVX512_BF16 the layer packs its weights for the dot-product
 * instruction instead, and an fp32 layer with a SIMD variant packs its
 * weights in blocks of 16 columns (both below). */
#ifndef CAL_LAYER_GEMV_H
#define CAL_LAYER_GEMV_H

#include <stddef.h>
#include <stdint.h>

#include "cal_bf16.h"
#include "cal_mem.h"

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

/* One per variant; call only when cal_variant_supported() says so. */
cal_gemv_t cal_gemv_scalar, cal_gemv_avx2, cal_gemv_avx512;
cal_gemv_bf16_t cal_gemv_bf16_scalar, cal_gemv_bf16_avx2, cal_gemv_bf16_avx512;

/* ---- packed bf16 weights (AVX512_BF16)
 *
 * A K x n bf16 matrix packed for the dot-product instruction: per block
 * of 32 columns one stream of (K + 1) / 2 pairs of rows, each pair 32
 * uint32 (column j of rows 2p and 2p + 1, the first in the low half),
 * zero past K and n.  A thread's block of columns is a few long streams
 * and a pair is one load, so a register tile of batch rows keeps its sums
 * over hundreds of rows: the arithmetic of a batch of 8 stays under the
 * weights' stream. */
/* 1 where the variant (resolved) runs the packed form: AVX-512 on a CPU
 * with AVX512_BF16, in a build that has it. */
int cal_gemv_packed_ok(int variant);
size_t cal_gemv_packed_words(int64_t K, int64_t n);
/* Pack K x n fp32 weights (ldw apart), each rounded to bf16, into wp
 * (cal_gemv_packed_words(K, n) uint32). */
void cal_gemv_pack_bf16(const float *w, int64_t ldw, int64_t K, int64_t n,
                        uint32_t *wp);
/* Rows k and k + 1 (k even) of a K x n matrix, r0 and r1 (NULL: zero,
 * for k + 1 == K), rounded to bf16 into their pair of every block of
 * wp. */
void cal_gemv_pack_pair(const float *r0, const float *r1, int64_t K,
                        int64_t n, int64_t k, uint32_t *wp);
/* Element (k, j) of a packed K x n matrix, as bf16 (inline: the
 * references read whole matrices through it, the LM head's 136 M
 * elements for each token they check). */
static inline uint16_t cal_gemv_packed_at(const uint32_t *wp, int64_t K,
                                          int64_t k, int64_t j) {
  const uint32_t v = wp[((j / 32) * ((K + 1) / 2) + k / 2) * 32 + j % 32];
  return (uint16_t)(k % 2 ? v >> 16 : v & 0xffffu);
}
/* y[b·ldy + j] = Σ_{i < kn} x[b·ldx + i] · W[k0 + i][c0 + j] for b <
 * batch, j < n: rows k0 .. k0 + kn - 1 (k0 even) and columns c0 .. c0 +
 * n - 1 of the packed K-row matrix wp; x rounded to bf16 on the way in
 * (to nearest even, denormals to zero: exact for bf16 values, so callers
 * need not round it), sums in fp32 over k in pairs, in order.  Only where cal_gemv_packed_ok();
 * single-threaded, no allocation. */
void cal_gemv_bf16_packed(const float *x, int64_t ldx, int64_t batch,
                          const uint32_t *wp, int64_t K, int64_t k0,
                          int64_t kn, int64_t c0, int64_t n, float *y,
                          int64_t ldy);

/* ---- packed fp32 weights (AVX2, AVX-512)
 *
 * A K x n fp32 matrix packed in blocks of 16 columns (a cache line a
 * row): per block one stream of K rows, zero past n.  A thread's columns
 * are a few long streams, and a register tile of batch rows keeps its
 * sums over all K rows, reading and writing y once. */
/* y[b·ldy + j] = Σ_{i < kn} x[b·ldx + i] · W[k0 + i][c0 + j] for b <
 * batch, j < n (x: the rows from column k0), sums in fp32 over k in
 * order; the form cal_gemv_packed_for() returns.  Single-threaded, no
 * allocation. */
typedef void cal_gemv_packed_t(const float *x, int64_t ldx, int64_t batch,
                               const float *wp, int64_t K, int64_t k0,
                               int64_t kn, int64_t c0, int64_t n, float *y,
                               int64_t ldy);
typedef cal_gemv_packed_t *cal_gemv_packed_fn;
cal_gemv_packed_t cal_gemv_packed_avx2, cal_gemv_packed_avx512;
/* The variant's packed GEMV (resolved, not AUTO); NULL where it has none
 * (the portable variant keeps row-major weights). */
cal_gemv_packed_fn cal_gemv_packed_for(int variant);
size_t cal_gemv_packed_f32_floats(int64_t K, int64_t n);
/* Pack K x n fp32 weights (ldw apart) into wp
 * (cal_gemv_packed_f32_floats(K, n) floats). */
void cal_gemv_pack_f32(const float *w, int64_t ldw, int64_t K, int64_t n,
                       float *wp);
/* Rows k0 .. k0 + kn - 1 of a K x n matrix (w: row k0, rows ldw apart)
 * into their places in every block of wp, zero past n. */
void cal_gemv_pack_f32_rows(const float *w, int64_t ldw, int64_t K, int64_t n,
                            int64_t k0, int64_t kn, float *wp);
/* K x n fp32 weights uniform in [-a, a], the values cal_fill_f32(w, K·n,
 * -a, a, r) would draw row-major, made straight into the packed wp a
 * chunk of rows at a time through stage (cal_gemv_fill_stage_floats(K, n)
 * floats, reused): no row-major copy of the matrix is made. */
void cal_gemv_fill_packed_f32(float *wp, int64_t K, int64_t n, float a,
                              cal_rng_t *r, float *stage);
size_t cal_gemv_fill_stage_floats(int64_t K, int64_t n);
/* Where element (k, j) of a packed fp32 K x n matrix is, in floats from
 * its start. */
static inline size_t cal_gemv_packed_f32_off(int64_t K, int64_t k, int64_t j) {
  return (size_t)(((j / 16) * K + k) * 16 + j % 16);
}
static inline float cal_gemv_packed_f32_at(const float *wp, int64_t K,
                                           int64_t k, int64_t j) {
  return wp[cal_gemv_packed_f32_off(K, k, j)];
}

#endif
