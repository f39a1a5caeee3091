/* The layer's small-batch GEMV (layer_gemv.h) for bf16 weights on the
 * bf16 dot-product instruction (AVX512_BF16 vdpbf16ps: two products a
 * lane, summed into fp32), compiled with -mavx512f -mavx512bw
 * -mavx512bf16; run only when the CPU has them.  Half the instructions
 * of widening each weight to fp32 for an FMA, which keeps batches of a
 * few rows bound by reading the weights rather than by arithmetic.
 *
 * x is rounded to bf16 (the layer hands rows already rounded, so this is
 * exact for them); sums in fp32 over k in pairs, in order.  Per column
 * chunk whose rows of y stay in the first-level cache, eight weight rows
 * at a time: each block of 32 columns of the eight rows is loaded once
 * and interleaved into k pairs, then applied to every batch row (y kept
 * in the interleave's column order while a chunk is summed, pair_order).
 * Rows past K read as zero, columns past n are masked. */
#include <immintrin.h>
#include <stdint.h>

#include "cal_bf16.h"
#include "layer_gemv.h"

#define KB 8             /* weight rows per pass (four pairs) */
#define Y_TILE 8192      /* floats of y per column chunk (32 KiB) */
#define XB 64            /* batch rows whose x pairs are held at once */

/* The bf16 pair (x[k], x[k+1]) of a row as one 32-bit lane value (the
 * low half the first); k + 1 past K reads as zero. */
static inline uint32_t x_pair(const float *x, int64_t k, int64_t K) {
  uint32_t lo = cal_f32_to_bf16(x[k]);
  uint32_t hi = k + 1 < K ? cal_f32_to_bf16(x[k + 1]) : 0;
  return lo | hi << 16;
}

/* y[b][0..32) of nb rows += the four pairs' weights wp (kn rows) times
 * x's pairs, lanes masked by m0, m1 */
static inline void apply(const uint32_t (*xp)[KB / 2], int64_t nb,
                         __m512bh (*wp)[2], int kn, float *y, int64_t ldy,
                         __mmask16 m0, __mmask16 m1) {
  for (int64_t b = 0; b < nb; b++) {
    float *yb = y + b * ldy;
    __m512 a0 = _mm512_maskz_loadu_ps(m0, yb);
    __m512 a1 = _mm512_maskz_loadu_ps(m1, yb + 16);
    for (int p = 0; p < (kn + 1) / 2; p++) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32((int)xp[b][p]);
      a0 = _mm512_dpbf16_ps(a0, wp[p][0], xv);
      a1 = _mm512_dpbf16_ps(a1, wp[p][1], xv);
    }
    _mm512_mask_storeu_ps(yb, m0, a0);
    _mm512_mask_storeu_ps(yb + 16, m1, a1);
  }
}

/* Whole blocks of 32 columns keep y in the order the cheap interleave
 * (vpunpck{l,h}wd, within 128-bit lanes) leaves the pairs in: the first
 * 16 floats columns 0-3, 8-11, 16-19, 24-27, the next 16 the others.
 * Rows of y [0, whole) into that order (back: to natural order). */
static void pair_order(float *y, int64_t ldy, int64_t nb, int64_t whole,
                       int back) {
  static const int32_t fwd[2][16] = {
      {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},
      {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31}};
  static const int32_t inv[2][16] = {
      {0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23},
      {8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31}};
  const int32_t(*ix)[16] = back ? inv : fwd;
  const __m512i i0 = _mm512_loadu_si512(ix[0]), i1 = _mm512_loadu_si512(ix[1]);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t j = 0; j < whole; j += 32) {
      float *yb = y + b * ldy + j;
      const __m512 y0 = _mm512_loadu_ps(yb), y1 = _mm512_loadu_ps(yb + 16);
      _mm512_storeu_ps(yb, _mm512_permutex2var_ps(y0, i0, y1));
      _mm512_storeu_ps(yb + 16, _mm512_permutex2var_ps(y0, i1, y1));
    }
}

/* y[b][0..n) += rows k0 .. k0+kn-1 of w (kn <= 8), for nb batch rows
 * whose x pairs are xp[b][0..4); whole blocks of 32 columns in pair
 * order (pair_order), the last partial block in natural order. */
static void pass(const uint32_t (*xp)[KB / 2], int64_t nb,
                 const uint16_t *w, int64_t ldw, int64_t n, int kn, float *y,
                 int64_t ldy) {
  const int64_t whole = n / 32 * 32;
  __m512bh wp[KB / 2][2];
  for (int64_t j = 0; j < whole; j += 32) {
    for (int p = 0; p < KB / 2; p++) {
      const __m512i r0 = 2 * p < kn ? _mm512_loadu_si512(w + 2 * p * ldw + j)
                                    : _mm512_setzero_si512();
      const __m512i r1 = 2 * p + 1 < kn
                             ? _mm512_loadu_si512(w + (2 * p + 1) * ldw + j)
                             : _mm512_setzero_si512();
      wp[p][0] = (__m512bh)_mm512_unpacklo_epi16(r0, r1);
      wp[p][1] = (__m512bh)_mm512_unpackhi_epi16(r0, r1);
    }
    apply(xp, nb, wp, kn, y + j, ldy, 0xffff, 0xffff);
  }
  if (whole == n)
    return;
  /* the partial block: lane 2i of the low result column i of the first
   * row, lane 2i + 1 column i of the second (32 + i); the high result
   * likewise for columns 16..31 */
  static const uint16_t order[32] = {
      0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i lo = _mm512_loadu_si512(order);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  const __mmask32 mw = (__mmask32)((1u << (n - whole)) - 1u);
  for (int p = 0; p < KB / 2; p++) {
    const __m512i r0 = 2 * p < kn
                           ? _mm512_maskz_loadu_epi16(mw, w + 2 * p * ldw + whole)
                           : _mm512_setzero_si512();
    const __m512i r1 = 2 * p + 1 < kn
                           ? _mm512_maskz_loadu_epi16(mw, w + (2 * p + 1) * ldw + whole)
                           : _mm512_setzero_si512();
    wp[p][0] = (__m512bh)_mm512_permutex2var_epi16(r0, lo, r1);
    wp[p][1] = (__m512bh)_mm512_permutex2var_epi16(r0, hi, r1);
  }
  apply(xp, nb, wp, kn, y + whole, ldy, (__mmask16)mw, (__mmask16)(mw >> 16));
}

void cal_gemv_bf16_dp(const float *x, int64_t ldx, int64_t batch, int64_t K,
                      const uint16_t *w, int64_t ldw, int64_t n,
                      const float *add, int64_t ladd, float *y, int64_t ldy) {
  if (batch < 1 || n < 1)
    return;
  int64_t cw = Y_TILE / (batch < XB ? batch : XB) / 32 * 32;
  if (cw < 64)
    cw = 64;
  uint32_t xp[XB][KB / 2];
  for (int64_t b0 = 0; b0 < batch; b0 += XB) {
    const int64_t nb = batch - b0 < XB ? batch - b0 : XB;
    for (int64_t c0 = 0; c0 < n; c0 += cw) {
      const int64_t cn = n - c0 < cw ? n - c0 : cw;
      for (int64_t b = b0; b < b0 + nb; b++)
        for (int64_t j = 0; j < cn; j++)
          y[b * ldy + c0 + j] = add ? add[b * ladd + c0 + j] : 0.0f;
      pair_order(y + b0 * ldy + c0, ldy, nb, cn / 32 * 32, 0);
      for (int64_t k0 = 0; k0 < K; k0 += KB) {
        const int kn = (int)(K - k0 < KB ? K - k0 : KB);
        for (int64_t b = 0; b < nb; b++)
          for (int p = 0; 2 * p < kn; p++)
            xp[b][p] = x_pair(x + (b0 + b) * ldx, k0 + 2 * p, K);
        pass((const uint32_t(*)[KB / 2])xp, nb, w + k0 * ldw + c0, ldw, cn,
             kn, y + b0 * ldy + c0, ldy);
      }
      pair_order(y + b0 * ldy + c0, ldy, nb, cn / 32 * 32, 1);
    }
  }
}
