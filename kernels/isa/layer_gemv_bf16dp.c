/* The layer's small-batch GEMV (layer_gemv.h) over packed bf16 weights
 * on the bf16 dot-product instruction (AVX512_BF16 vdpbf16ps: two
 * products a lane, summed into fp32), compiled with -mavx512f -mavx512bw
 * -mavx512bf16; run only when the CPU has them.
 *
 * x is rounded to bf16 (vcvtne2ps2bf16, denormals to zero; the layer
 * hands rows of bf16 values, for which this is exact, and need not round
 * them itself); sums in fp32 over k in pairs, in order.  Each block of
 * 32 columns of the packed matrix is one stream of pairs of rows, 128
 * bytes a pair already in the dot product's order, so a pair is two loads
 * and no interleave.  A register tile of up to eight batch rows x 32
 * columns keeps its sums in registers over a chunk of PCH pairs (5120
 * rows): per pair two loads, and per batch row one broadcast of x's pair
 * and two dot products; y is read and written once per chunk.  (Summing
 * row-major weights eight rows at a time instead, y's loads and stores
 * for every eight rows and the interleaves made a step at batch 8 cost
 * 1.8 times one at batch 1: the arithmetic no longer hid under the
 * weights' stream.)  A few batch rows tile two or four blocks at once:
 * more streams for the memory, more independent sums.  Each stream is
 * prefetched PFB bytes ahead into L1 and PFB2 into L2.  Partial blocks at either end of the
 * columns sum into edge rows, copied out at the end. */
#include <immintrin.h>
#include <stdint.h>

#include "layer_gemv.h"

#define TB 8        /* batch rows of a register tile */
#define XB 64       /* batch rows a pass over the weights takes */

/* x[0 .. n) of a row rounded to bf16 (round to nearest even) into
 * xp[0 .. (n + 1) / 2) as pairs (x[2p], x[2p+1]) in one 32-bit lane
 * value, the low half the first; past n zero. */
static void x_pairs(const float *x, int64_t n, uint32_t *xp) {
  for (int64_t i = 0; i < n; i += 32) {
    const int64_t m = n - i < 32 ? n - i : 32;
    const __mmask16 k0 = (__mmask16)(m >= 16 ? 0xffffu : (1u << m) - 1u);
    const __mmask16 k1 = (__mmask16)(m <= 16   ? 0u
                                     : m >= 32 ? 0xffffu
                                               : (1u << (m - 16)) - 1u);
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(k1, x + i + 16),
                                           _mm512_maskz_loadu_ps(k0, x + i));
    _mm512_mask_storeu_epi32(xp + i / 2, (__mmask16)((1u << ((m + 1) / 2)) - 1u),
                             (__m512i)b);
  }
}

/* A chunk is a whole column block's stream up to 5120 rows of K (all of
 * qwen2-0.5b's matrices), so that a thread's columns are one run of memory
 * from end to end; longer K restarts every 320 KiB of a stream.  With
 * chunks of 512 rows the streams restarted every 32 KiB, each start a wait
 * on memory the prefetch had not reached: a step of 8 batch rows took 1.5
 * times one row's, 1.0-1.15 times with whole streams and the far prefetch
 * below (a same-process test over the qwen2-0.5b decode's 988 MB of
 * weights, 2 threads).  x's pairs of a chunk, 80 KiB for 8 rows, are on
 * the stack. */
#define PCH 2560    /* pairs of rows per chunk */
#define PFB 1024    /* bytes ahead prefetched into L1 in a block's stream */
#define PFB2 8192   /* and into L2: memory's latency at a tile's pace */

typedef struct ptile {
  const uint32_t *xp;    /* the group's x pairs of the chunk, [row][PCH] */
  const uint32_t *w;     /* the first block's first pair of the chunk */
  int64_t bstride;       /* uint32 from one block's stream to the next */
  int np;                /* pairs in the chunk */
  int first;             /* the chunk is the first: sums start at zero */
  float *io;             /* the sums, natural order */
  int64_t ldio;
} ptile_t;

static inline __attribute__((always_inline)) void
ptile_run(const int nb, const int nbk, const ptile_t *t) {
  __m512 a[TB][8];
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
    for (int q = 0; q < 2 * nbk; q++)
      a[b][q] = t->first ? _mm512_setzero_ps()
                         : _mm512_loadu_ps(t->io + b * t->ldio + 16 * q);
  for (int p = 0; p < t->np; p++) {
    __m512bh w[8];
#pragma GCC unroll 4
    for (int k = 0; k < nbk; k++) {
      const uint32_t *wk = t->w + k * t->bstride + p * 32;
      _mm_prefetch((const char *)wk + PFB, _MM_HINT_T0);
      _mm_prefetch((const char *)wk + PFB + 64, _MM_HINT_T0);
      _mm_prefetch((const char *)wk + PFB2, _MM_HINT_T1);
      _mm_prefetch((const char *)wk + PFB2 + 64, _MM_HINT_T1);
      w[2 * k] = (__m512bh)_mm512_loadu_si512(wk);
      w[2 * k + 1] = (__m512bh)_mm512_loadu_si512(wk + 16);
    }
    const uint32_t *xq = t->xp + p;
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
      const __m512bh xv = (__m512bh)_mm512_set1_epi32((int)xq[b * PCH]);
#pragma GCC unroll 8
      for (int q = 0; q < 2 * nbk; q++)
        a[b][q] = _mm512_dpbf16_ps(a[b][q], w[q], xv);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
    for (int q = 0; q < 2 * nbk; q++)
      _mm512_storeu_ps(t->io + b * t->ldio + 16 * q, a[b][q]);
}

/* The tile for nb rows over nbk blocks (4: nb <= 2, 2: nb <= 4, else
 * 1; partial blocks 1 whatever nb). */
static void ptile(int nb, int nbk, const ptile_t *t) {
  switch (nbk * 16 + nb) {
  case 4 * 16 + 1: ptile_run(1, 4, t); break;
  case 4 * 16 + 2: ptile_run(2, 4, t); break;
  case 2 * 16 + 3: ptile_run(3, 2, t); break;
  case 2 * 16 + 4: ptile_run(4, 2, t); break;
  case 16 + 1: ptile_run(1, 1, t); break;
  case 16 + 2: ptile_run(2, 1, t); break;
  case 16 + 3: ptile_run(3, 1, t); break;
  case 16 + 4: ptile_run(4, 1, t); break;
  case 16 + 5: ptile_run(5, 1, t); break;
  case 16 + 6: ptile_run(6, 1, t); break;
  case 16 + 7: ptile_run(7, 1, t); break;
  default: ptile_run(TB, 1, t); break;
  }
}

/* Block jb's columns in [c0, c0 + n): lanes [*lo, *hi); 1 when all 32. */
static inline int block_lanes(int64_t jb, int64_t c0, int64_t n, int *lo,
                              int *hi) {
  const int64_t s = c0 - 32 * jb, e = c0 + n - 32 * jb;
  *lo = (int)(s > 0 ? s : 0);
  *hi = (int)(e < 32 ? e : 32);
  return *lo == 0 && *hi == 32;
}

/* One chunk for a group of nb rows: every block of [c0, c0 + n). */
static void pchunk(int nb, ptile_t *t, const uint32_t *wc, int64_t Kp,
                   int64_t c0, int64_t n, float *y, int64_t ldy,
                   float *const edge[2], int last) {
  const int64_t jb0 = c0 / 32, jb1 = (c0 + n + 31) / 32;
  const int nbk = nb <= 2 ? 4 : nb <= 4 ? 2 : 1;
  int lo, hi;
  for (int64_t jb = jb0; jb < jb1;) {
    t->w = wc + jb * Kp * 32;
    if (!block_lanes(jb, c0, n, &lo, &hi)) {
      float *e = edge[jb == jb0 ? 0 : 1];
      t->io = e;
      t->ldio = 32;
      ptile(nb, 1, t);
      for (int b = 0; last && b < nb; b++)
        for (int l = lo; l < hi; l++)
          y[b * ldy + 32 * jb + l - c0] = e[b * 32 + l];
      jb++;
      continue;
    }
    int64_t run = 1;
    while (run < nbk && jb + run < jb1 && block_lanes(jb + run, c0, n, &lo, &hi))
      run++;
    t->ldio = ldy;
    if (run == nbk) {
      t->io = y + 32 * jb - c0;
      ptile(nb, nbk, t);
    } else {
      for (int64_t r = 0; r < run; r++) {
        t->w = wc + (jb + r) * Kp * 32;
        t->io = y + 32 * (jb + r) - c0;
        ptile(nb, 1, t);
      }
    }
    jb += run;
  }
}

void cal_gemv_bf16_packed(const float *x, int64_t ldx, int64_t batch,
                          const uint32_t *wp, int64_t K, int64_t k0,
                          int64_t kn, int64_t c0, int64_t n, float *y,
                          int64_t ldy) {
  if (batch < 1 || n < 1)
    return;
  const int64_t Kp = (K + 1) / 2, np = (kn + 1) / 2;
  _Alignas(64) uint32_t xp[TB * PCH];
  _Alignas(64) float edge[2][XB * 32]; /* partial blocks' sums */
  if (kn < 1) {
    for (int64_t b = 0; b < batch; b++)
      for (int64_t j = 0; j < n; j++)
        y[b * ldy + j] = 0.0f;
    return;
  }
  for (int64_t b0 = 0; b0 < batch; b0 += XB) {
    const int64_t nbx = batch - b0 < XB ? batch - b0 : XB;
    for (int64_t p0 = 0; p0 < np; p0 += PCH) {
      ptile_t t = {.xp = xp, .bstride = Kp * 32, .first = p0 == 0,
                   .np = (int)(np - p0 < PCH ? np - p0 : PCH)};
      for (int64_t g = 0; g < nbx; g += TB) {
        const int nb = (int)(nbx - g < TB ? nbx - g : TB);
        const int64_t rows = kn - 2 * p0 < 2 * PCH ? kn - 2 * p0 : 2 * PCH;
        for (int b = 0; b < nb; b++)
          x_pairs(x + (b0 + g + b) * ldx + 2 * p0, rows, xp + b * PCH);
        float *const eg[2] = {edge[0] + g * 32, edge[1] + g * 32};
        pchunk(nb, &t, wp + (k0 / 2 + p0) * 32, Kp, c0, n,
               y + (b0 + g) * ldy, ldy, eg, p0 + PCH >= np);
      }
    }
  }
}
