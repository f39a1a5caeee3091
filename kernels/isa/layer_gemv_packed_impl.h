/* The layer's small-batch GEMV over packed fp32 weights (layer_gemv.h),
 * written once over the vector vocabulary of layer_gemv_impl.h and
 * instantiated per SIMD variant.  Not a public header.
 *
 * The including file defines, besides that vocabulary (VW, vec_t, V_SET1,
 * V_LOAD, V_STORE, V_FMA):
 *   PK_TB  batch rows of a register tile (its sums fill the registers)
 *   PK_NBK(nb)  blocks a tile of nb rows takes at once (1, 2 or 4)
 *   PK_FN  the function's name, e.g. cal_gemv_packed_avx2
 *
 * A block is 16 columns (a cache line a row): one stream of K rows.  A
 * register tile of up to PK_TB batch rows keeps its sums over a chunk of
 * PK_KCH rows of one to four blocks: per row one load of each block's
 * line and per batch row one broadcast of x and a product a vector; y is
 * read and written once a chunk.  (The row-major GEMV reads and writes y
 * every eight rows: at batch 8 its arithmetic no longer hid under the
 * weights' stream.)  A few batch rows take several blocks at once: more
 * streams for the memory, more independent sums.  More rows than a tile
 * holds split into even groups, which take the chunk in turn, the later
 * ones from L1.  Tiles of three rows or more prefetch each stream into
 * L2 one chunk ahead, spread over the groups (group g of G at g + 1
 * G-ths of a chunk past PK_PF), so that the memory is asked for lines
 * while the later groups compute too; tiles of one or two rows, bound by
 * the memory alone, leave the streams to the hardware's prefetch, which
 * ran them 10-15% faster.  Over qwen2-0.5b's decode weights on two
 * threads (same-process tests, Zen 3), 8 batch rows ran 1.4-1.5 times as
 * fast as row-major, one row 8-22% faster.  Partial blocks at either end
 * of the columns sum into edge rows, copied out. */
#include <stdint.h>

#include "layer_gemv.h"

#define PK_KCH 128   /* rows a chunk: 8 KiB of a block's stream */
#define PK_XB 64     /* batch rows a pass (the edge rows) */
#define PK_PF 1024   /* bytes past a chunk's spread the L2 prefetch runs */
#define PK_PF_ROWS 3 /* tiles of fewer rows leave the stream to the hardware */
#define PK_VPB (16 / VW) /* vectors a block row */

typedef struct pk_tile {
  const float *x;        /* the group's first row at the chunk's first k */
  int64_t ldx;
  const float *w;        /* the first block's row at the chunk's first k */
  int64_t bstride;       /* floats from one block's stream to the next */
  int nk;                /* rows in the chunk */
  int first;             /* the chunk is the first: sums start at zero */
  int64_t pf2;           /* bytes ahead a stream is prefetched into L2 */
  float *io;             /* the sums, natural order */
  int64_t ldio;
} pk_tile_t;

static inline __attribute__((always_inline)) void
pk_tile_run(const int nb, const int nbk, const pk_tile_t *t) {
  vec_t a[PK_TB][4 * PK_VPB];
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
    for (int q = 0; q < nbk * PK_VPB; q++)
      a[b][q] = t->first ? V_SET1(0.0f) : V_LOAD(t->io + b * t->ldio + VW * q);
  for (int k = 0; k < t->nk; k++) {
    vec_t w[4 * PK_VPB];
#pragma GCC unroll 4
    for (int kb = 0; kb < nbk; kb++) {
      const float *wk = t->w + kb * t->bstride + 16 * k;
      if (nb >= PK_PF_ROWS)
        __builtin_prefetch((const char *)wk + t->pf2, 0, 2);
#pragma GCC unroll 2
      for (int v = 0; v < PK_VPB; v++)
        w[kb * PK_VPB + v] = V_LOAD(wk + VW * v);
    }
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
      const vec_t xv = V_SET1(t->x[b * t->ldx + k]);
#pragma GCC unroll 8
      for (int q = 0; q < nbk * PK_VPB; q++)
        a[b][q] = V_FMA(xv, w[q], a[b][q]);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 8
    for (int q = 0; q < nbk * PK_VPB; q++)
      V_STORE(t->io + b * t->ldio + VW * q, a[b][q]);
}

/* The tile for nb rows over nbk blocks, nbk <= PK_NBK(nb). */
static void pk_tile(int nb, int nbk, const pk_tile_t *t) {
#define PK_CASE(B, K)                                                          \
  case (K) * 16 + (B):                                                         \
    if ((K) <= PK_NBK(B)) {                                                    \
      pk_tile_run((B), (K), t);                                                \
      return;                                                                  \
    }                                                                          \
    break;
#define PK_CASES(B) PK_CASE(B, 1) PK_CASE(B, 2) PK_CASE(B, 4)
  switch (nbk * 16 + nb) {
    PK_CASES(1) PK_CASES(2) PK_CASES(3) PK_CASES(4)
#if PK_TB > 4
    PK_CASES(5) PK_CASES(6)
#endif
#if PK_TB > 6
    PK_CASES(7) PK_CASES(8)
#endif
  default: break;
  }
#undef PK_CASES
#undef PK_CASE
  /* not reached for the tiles pk_blocks asks for; still right for any */
  for (int b = 0; b < nb; b++) {
    pk_tile_t one = *t;
    one.x = t->x + b * t->ldx;
    one.io = t->io + b * t->ldio;
    for (int kb = 0; kb < nbk; kb++, one.w += t->bstride, one.io += 16)
      pk_tile_run(1, 1, &one);
  }
}

/* Block jb's columns in [c0, c0 + n): lanes [*lo, *hi); 1 when all 16. */
static inline int pk_lanes(int64_t jb, int64_t c0, int64_t n, int *lo,
                           int *hi) {
  const int64_t s = c0 - 16 * jb, e = c0 + n - 16 * jb;
  *lo = (int)(s > 0 ? s : 0);
  *hi = (int)(e < 16 ? e : 16);
  return *lo == 0 && *hi == 16;
}

/* Groups of a pass's nbx rows: as few as the tile allows, of sizes
 * within one of each other (8 rows on six-row tiles: 4 and 4, not 6 and 2,
 * whose short tile would wait on its few sums' latency). */
static inline int64_t pk_groups(int64_t nbx) {
  return (nbx + PK_TB - 1) / PK_TB;
}

/* Blocks jb .. jb + nr - 1 (whole, or one partial block into the edge
 * rows e) for the pass's nbx rows, chunk by chunk down the blocks'
 * streams, every group of rows in turn over a chunk (which the first
 * left in L1), each group's tiles as wide as its rows allow. */
static void pk_blocks(pk_tile_t *t, int64_t nbx, const float *x0,
                      const float *w0, int64_t kn, int64_t nr, float *y0,
                      int64_t ldy) {
  for (int64_t kc = 0; kc < kn; kc += PK_KCH) {
    t->first = kc == 0;
    t->nk = (int)(kn - kc < PK_KCH ? kn - kc : PK_KCH);
    for (int64_t gi = 0, ng = pk_groups(nbx); gi < ng; gi++) {
      const int64_t g = gi * nbx / ng;
      const int nb = (int)((gi + 1) * nbx / ng - g);
      t->x = x0 + g * t->ldx + kc;
      t->pf2 = PK_PF + 64 * PK_KCH * (gi + 1) / ng;
      t->ldio = ldy;
      for (int64_t r = 0; r < nr;) {
        int nbk = PK_NBK(nb);
        while (nbk > nr - r)
          nbk /= 2;
        t->w = w0 + r * t->bstride + 16 * kc;
        t->io = y0 + g * ldy + 16 * r;
        pk_tile(nb, nbk, t);
        r += nbk;
      }
    }
  }
}

void PK_FN(const float *x, int64_t ldx, int64_t batch, const float *wp,
           int64_t K, int64_t k0, int64_t kn, int64_t c0, int64_t n,
           float *y, int64_t ldy) {
  if (batch < 1 || n < 1)
    return;
  if (kn < 1) {
    for (int64_t b = 0; b < batch; b++)
      for (int64_t j = 0; j < n; j++)
        y[b * ldy + j] = 0.0f;
    return;
  }
  _Alignas(64) float edge[PK_XB * 16]; /* a partial block's sums */
  const int64_t jb0 = c0 / 16, jb1 = (c0 + n + 15) / 16;
  const float *wk = wp + k0 * 16;
  pk_tile_t t = {.ldx = ldx, .bstride = K * 16};
  for (int64_t b0 = 0; b0 < batch; b0 += PK_XB) {
    const int64_t nbx = batch - b0 < PK_XB ? batch - b0 : PK_XB;
    const int64_t ng = pk_groups(nbx);
    const int wide = PK_NBK((int)((nbx + ng - 1) / ng));
    const float *xb = x + b0 * ldx;
    float *yb = y + b0 * ldy;
    int lo, hi;
    for (int64_t jb = jb0; jb < jb1;) {
      if (!pk_lanes(jb, c0, n, &lo, &hi)) {
        pk_blocks(&t, nbx, xb, wk + jb * t.bstride, kn, 1, edge, 16);
        for (int64_t b = 0; b < nbx; b++)
          for (int l = lo; l < hi; l++)
            yb[b * ldy + 16 * jb + l - c0] = edge[b * 16 + l];
        jb++;
        continue;
      }
      int64_t run = 1;
      while (run < wide && jb + run < jb1 && pk_lanes(jb + run, c0, n, &lo, &hi))
        run++;
      pk_blocks(&t, nbx, xb, wk + jb * t.bstride, kn, run, yb + 16 * jb - c0,
                ldy);
      jb += run;
    }
  }
}

#undef PK_KCH
#undef PK_XB
#undef PK_PF
#undef PK_PF_ROWS
#undef PK_VPB
