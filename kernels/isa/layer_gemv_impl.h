/* The small-batch GEMV (layer_gemv.h) written once over a small vector
 * vocabulary and instantiated per SIMD variant: layer_gemv_avx2.c and
 * layer_gemv_avx512.c define the macros below and include this file.  Not
 * a public header.
 *
 * The including file defines:
 *   VW  lanes per vector, vec_t
 *   V_SET1(x) V_LOAD(p) V_STORE(p, v) V_ADD(a, b) V_MUL(a, b)
 *   V_FMA(a, b, c) = a·b + c
 * and, before each inclusion (one per weight type; this file undefines
 * them at its end):
 *   W_T  the weights' element type (float, or uint16_t for bf16)
 *   V_LOADW(p)  VW weights from p, as fp32
 *   W_F(w)  one weight as float
 *   GEMV  the function's name, e.g. cal_gemv_avx512
 *
 * Algorithm: the columns in chunks whose rows of y (batch × chunk floats)
 * stay in the first-level cache; per chunk, y starts as the addend (or
 * zero) and eight weight rows at a time are added in: each vector of
 * eight weights is loaded once and applied to every batch row, so the
 * weights stream from memory once and in order (eight row streams). */
#include <stdint.h>

#include "layer_gemv.h"

#ifndef CAL_LAYER_GEMV_IMPL_ONCE
#define CAL_LAYER_GEMV_IMPL_ONCE
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define GEMV_KB 8          /* weight rows per pass */
#define GEMV_Y_TILE 8192   /* floats of y per column chunk (32 KiB) */
/* Columns j .. n-1 (those after the last whole vector) of rows 0 .. KN-1
 * of w into y, one at a time; over the locals of the pass functions (x,
 * ldx, batch, w, ldw, n, y, ldy and the column index j). */
#define GEMV_COLS_SCALAR(KN)                                                 \
  for (; j < n; j++)                                                         \
    for (int64_t b = 0; b < batch; b++) {                                    \
      const float *xb = x + b * ldx;                                         \
      float s = y[b * ldy + j];                                              \
      for (int kk = 0; kk < (KN); kk++)                                      \
        s += xb[kk] * W_F(w[kk * ldw + j]);                                  \
      y[b * ldy + j] = s;                                                    \
    }
#endif

#define FN(name) CAT(name, CAT(_, GEMV))

/* Rows k .. k+7 of w into y[b][0..n): x points at column k of row 0. */
static inline void FN(pass8)(const float *restrict x, int64_t ldx,
                             int64_t batch, const W_T *restrict w,
                             int64_t ldw, int64_t n, float *restrict y,
                             int64_t ldy) {
  int64_t j = 0;
  for (; j + VW <= n; j += VW) {
    const vec_t w0 = V_LOADW(w + j), w1 = V_LOADW(w + ldw + j),
                w2 = V_LOADW(w + 2 * ldw + j), w3 = V_LOADW(w + 3 * ldw + j),
                w4 = V_LOADW(w + 4 * ldw + j), w5 = V_LOADW(w + 5 * ldw + j),
                w6 = V_LOADW(w + 6 * ldw + j), w7 = V_LOADW(w + 7 * ldw + j);
    for (int64_t b = 0; b < batch; b++) {
      const float *xb = x + b * ldx;
      float *yb = y + b * ldy + j;
      /* two chains of four, so the additions overlap */
      vec_t a0 = V_FMA(V_SET1(xb[0]), w0, V_LOAD(yb));
      vec_t a1 = V_MUL(V_SET1(xb[1]), w1);
      a0 = V_FMA(V_SET1(xb[2]), w2, a0);
      a1 = V_FMA(V_SET1(xb[3]), w3, a1);
      a0 = V_FMA(V_SET1(xb[4]), w4, a0);
      a1 = V_FMA(V_SET1(xb[5]), w5, a1);
      a0 = V_FMA(V_SET1(xb[6]), w6, a0);
      a1 = V_FMA(V_SET1(xb[7]), w7, a1);
      V_STORE(yb, V_ADD(a0, a1));
    }
  }
  GEMV_COLS_SCALAR(GEMV_KB); /* the last columns, fewer than a vector */
}

/* The last kn < 8 rows. */
static inline void FN(pass_tail)(const float *restrict x, int64_t ldx,
                                 int64_t batch, const W_T *restrict w,
                                 int64_t ldw, int64_t n, float *restrict y,
                                 int64_t ldy, int kn) {
  int64_t j = 0;
  for (; j + VW <= n; j += VW)
    for (int64_t b = 0; b < batch; b++) {
      const float *xb = x + b * ldx;
      vec_t a = V_LOAD(y + b * ldy + j);
      for (int kk = 0; kk < kn; kk++)
        a = V_FMA(V_SET1(xb[kk]), V_LOADW(w + kk * ldw + j), a);
      V_STORE(y + b * ldy + j, a);
    }
  GEMV_COLS_SCALAR(kn);
}

void GEMV(const float *x, int64_t ldx, int64_t batch, int64_t K,
          const W_T *w, int64_t ldw, int64_t n, const float *add,
          int64_t ladd, float *y, int64_t ldy) {
  if (batch < 1 || n < 1)
    return;
  int64_t cw = GEMV_Y_TILE / batch / VW * VW;
  if (cw < 4 * VW)
    cw = 4 * VW;
  for (int64_t c0 = 0; c0 < n; c0 += cw) {
    const int64_t cn = n - c0 < cw ? n - c0 : cw;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t j = 0; j < cn; j++)
        y[b * ldy + c0 + j] = add ? add[b * ladd + c0 + j] : 0.0f;
    int64_t k0 = 0;
    for (; k0 + GEMV_KB <= K; k0 += GEMV_KB)
      FN(pass8)(x + k0, ldx, batch, w + k0 * ldw + c0, ldw, cn, y + c0, ldy);
    if (k0 < K)
      FN(pass_tail)(x + k0, ldx, batch, w + k0 * ldw + c0, ldw, cn, y + c0,
                    ldy, (int)(K - k0));
  }
}

#undef FN
#undef W_T
#undef V_LOADW
#undef W_F
#undef GEMV
