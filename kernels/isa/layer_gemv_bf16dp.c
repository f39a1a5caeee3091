/* The layer's small-batch GEMV (layer_gemv.h) for bf16 weights on the
 * bf16 dot-product instruction (AVX512_BF16 vdpbf16ps: two products a
 * lane, summed into fp32), compiled with -mavx512f -mavx512bw
 * -mavx512bf16; run only when the CPU has them.
 *
 * x is rounded to bf16 (the layer hands rows already rounded, so this is
 * exact for them); sums in fp32 over k in pairs, in order.  The weights
 * are read once per call, in bands of kc rows (kc row streams); within a
 * band, block by block of 32 columns, each pair of the block's rows is
 * loaded once and interleaved into k pairs (vpunpck{l,h}wd, within
 * 128-bit lanes), then applied to a register tile of up to eight batch
 * rows x 32 columns that stays in registers over the band: per pair of
 * weight rows two loads, two interleaves, and per batch row one broadcast
 * of x's pair and two dot products.  y is read and written once per band
 * and batch row.  A band of 8 rows keeps a few batch rows bound by the
 * memory (eight streams); from 4 batch rows bands of 16 halve y's loads
 * and stores, which with the arithmetic of a larger batch are what grows
 * the step.  The block PF blocks ahead in the weights' order is
 * prefetched before each block is summed, so that the memory keeps
 * streaming while a larger batch's arithmetic runs.  The tile keeps its
 * sums in the interleave's column order (the first 16 floats columns 0-3,
 * 8-11, 16-19, 24-27, the next 16 the others) and puts them back in order
 * on the call's last band.  Columns past n are masked; rows past K read
 * as zero. */
#include <immintrin.h>
#include <stdint.h>

#include "cal_bf16.h"
#include "layer_gemv.h"

#define KC_MAX 16 /* weight rows of a band: 8 below 4 batch rows, else 16 */
#define NP (KC_MAX / 2)
#define TB 8     /* batch rows of a register tile */
#define XB 64    /* batch rows whose x pairs a band holds */
#define PF 8     /* column blocks ahead prefetched */

/* The bf16 pair (x[k], x[k+1]) of a row as one 32-bit lane value (the
 * low half the first); k + 1 past K reads as zero. */
static inline uint32_t x_pair(const float *x, int64_t k, int64_t K) {
  uint32_t lo = cal_f32_to_bf16(x[k]);
  uint32_t hi = k + 1 < K ? cal_f32_to_bf16(x[k + 1]) : 0;
  return lo | hi << 16;
}

/* The interleave's column order: natural -> pair order (fwd) and back. */
static const int32_t fwd_ix[2][16] = {
    {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},
    {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31}};
static const int32_t inv_ix[2][16] = {
    {0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23},
    {8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31}};

/* One register tile's work in a band: rows b of a group, 32 columns. */
typedef struct tile {
  const uint32_t *xp;      /* the group's x pairs, [pair][XB] */
  const uint16_t *w;       /* the block's first weight row */
  int64_t ldw;
  int np, odd;             /* pairs of rows; odd: the last has one row */
  __mmask32 mw;            /* the block's columns */
  float *io;               /* sums between bands, pair order */
  int64_t ldio;
  float *y;                /* the output, natural order */
  int64_t ldy;
  const float *add;        /* first band: the addend (or NULL) */
  int64_t ladd;
  int first, last;         /* the band is the call's first, last */
} tile_t;

static inline __attribute__((always_inline)) void
tile_run(const int nb, const tile_t *t) {
  const __m512i f0 = _mm512_loadu_si512(fwd_ix[0]);
  const __m512i f1 = _mm512_loadu_si512(fwd_ix[1]);
  const __mmask16 m0 = (__mmask16)t->mw, m1 = (__mmask16)(t->mw >> 16);
  __m512 a[TB][2];
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++) {
    if (!t->first) {
      a[b][0] = _mm512_loadu_ps(t->io + b * t->ldio);
      a[b][1] = _mm512_loadu_ps(t->io + b * t->ldio + 16);
    } else if (t->add) {
      const __m512 n0 = _mm512_maskz_loadu_ps(m0, t->add + b * t->ladd);
      const __m512 n1 = _mm512_maskz_loadu_ps(m1, t->add + b * t->ladd + 16);
      a[b][0] = _mm512_permutex2var_ps(n0, f0, n1);
      a[b][1] = _mm512_permutex2var_ps(n0, f1, n1);
    } else {
      a[b][0] = a[b][1] = _mm512_setzero_ps();
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < t->np; p++) {
    const uint16_t *w0 = t->w + 2 * p * t->ldw;
    const __m512i r0 = _mm512_maskz_loadu_epi16(t->mw, w0);
    const __m512i r1 = p + 1 < t->np || !t->odd
                           ? _mm512_maskz_loadu_epi16(t->mw, w0 + t->ldw)
                           : _mm512_setzero_si512();
    const __m512bh lo = (__m512bh)_mm512_unpacklo_epi16(r0, r1);
    const __m512bh hi = (__m512bh)_mm512_unpackhi_epi16(r0, r1);
    const uint32_t *xp = t->xp + p * XB;
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32((int)xp[b]);
      a[b][0] = _mm512_dpbf16_ps(a[b][0], lo, xv);
      a[b][1] = _mm512_dpbf16_ps(a[b][1], hi, xv);
    }
  }
  if (!t->last) {
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
      _mm512_storeu_ps(t->io + b * t->ldio, a[b][0]);
      _mm512_storeu_ps(t->io + b * t->ldio + 16, a[b][1]);
    }
    return;
  }
  const __m512i i0 = _mm512_loadu_si512(inv_ix[0]);
  const __m512i i1 = _mm512_loadu_si512(inv_ix[1]);
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++) {
    float *yb = t->y + b * t->ldy;
    _mm512_mask_storeu_ps(yb, m0, _mm512_permutex2var_ps(a[b][0], i0, a[b][1]));
    _mm512_mask_storeu_ps(yb + 16, m1,
                          _mm512_permutex2var_ps(a[b][0], i1, a[b][1]));
  }
}

/* A group of nb <= TB rows: the tile specialised for its size. */
static void tile_group(int nb, const tile_t *t) {
  switch (nb) {
  case 1: tile_run(1, t); break;
  case 2: tile_run(2, t); break;
  case 3: tile_run(3, t); break;
  case 4: tile_run(4, t); break;
  case 5: tile_run(5, t); break;
  case 6: tile_run(6, t); break;
  case 7: tile_run(7, t); break;
  default: tile_run(TB, t); break;
  }
}

/* Prefetch `rows` rows of a block of 32 columns (one line each). */
static inline void prefetch_block(const uint16_t *w, int64_t ldw, int64_t rows) {
  for (int64_t r = 0; r < rows; r++)
    _mm_prefetch((const char *)(w + r * ldw), _MM_HINT_T0);
}

/* The band of rows k0 .. k0 + kn - 1 for batch rows b0 .. b0 + nbx - 1
 * (x pairs in xp), every block of 32 of the n columns. */
static void band(const uint32_t *xp, int64_t nbx, const uint16_t *w,
                 int64_t ldw, int64_t K, int64_t kc, int64_t k0, int64_t n,
                 float *y, int64_t ldy, const float *add, int64_t ladd,
                 float *part) {
  const int64_t kn = K - k0 < kc ? K - k0 : kc, nblk = (n + 31) / 32;
  tile_t t = {.ldw = ldw, .np = (int)((kn + 1) / 2), .odd = (int)(kn & 1),
              .ladd = ladd, .ldy = ldy, .first = k0 == 0,
              .last = k0 + kc >= K};
  for (int64_t jb = 0; jb < nblk; jb++) {
    const int64_t j = jb * 32, cols = n - j < 32 ? n - j : 32;
    t.mw = (__mmask32)(cols == 32 ? 0xffffffffu : (1u << cols) - 1u);
    t.w = w + k0 * ldw + j;
    /* the block PF ahead: this band's, else the next band's */
    const int64_t ahead = jb + PF, next_k = k0 + kc;
    if (ahead < nblk)
      prefetch_block(w + k0 * ldw + ahead * 32, ldw, kn);
    else if (next_k < K && ahead - nblk < nblk)
      prefetch_block(w + next_k * ldw + (ahead - nblk) * 32, ldw,
                     K - next_k < kc ? K - next_k : kc);
    for (int64_t g = 0; g < nbx; g += TB) {
      const int nb = (int)(nbx - g < TB ? nbx - g : TB);
      t.xp = xp + g;
      t.y = y + g * ldy + j;
      t.add = add ? add + g * ladd + j : NULL;
      /* a whole block keeps its sums between bands in y itself */
      t.io = cols == 32 ? t.y : part + g * 32;
      t.ldio = cols == 32 ? ldy : 32;
      tile_group(nb, &t);
    }
  }
}

void cal_gemv_bf16_dp(const float *x, int64_t ldx, int64_t batch, int64_t K,
                      const uint16_t *w, int64_t ldw, int64_t n,
                      const float *add, int64_t ladd, float *y, int64_t ldy) {
  if (batch < 1 || n < 1)
    return;
  if (K < 1) { /* no products: the addend */
    for (int64_t b = 0; b < batch; b++)
      for (int64_t j = 0; j < n; j++)
        y[b * ldy + j] = add ? add[b * ladd + j] : 0.0f;
    return;
  }
  _Alignas(64) uint32_t xp[NP * XB];
  /* a few rows are bound by the memory: eight row streams; more rows by
   * the arithmetic: y's loads and stores halved */
  const int64_t kc = batch < 4 ? 8 : KC_MAX;
  _Alignas(64) float part[XB * 32]; /* the partial block's sums */
  for (int64_t b0 = 0; b0 < batch; b0 += XB) {
    const int64_t nbx = batch - b0 < XB ? batch - b0 : XB;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
      const int64_t kn = K - k0 < kc ? K - k0 : kc;
      for (int64_t p = 0; 2 * p < kn; p++)
        for (int64_t b = 0; b < nbx; b++)
          xp[p * XB + b] = x_pair(x + (b0 + b) * ldx, k0 + 2 * p, K);
      band(xp, nbx, w, ldw, K, kc, k0, n, y + b0 * ldy, ldy,
           add ? add + b0 * ladd : NULL, ladd, part);
    }
  }
}
