/* AMX tile-resident loops: TDPBF16PS (bf16 pairs into fp32) and TDPBSSD
 * (s8 quads into int32), compiled with -mamx-tile -mamx-bf16 -mamx-int8.
 * Called only after cal_amx_usable() (the CPU has the bits and the kernel
 * granted the tile state); the tile layout is in amx.h.
 *
 * Shapes (palette 1, every tile 16 rows x 64 bytes, set by
 * cal_amx_config):
 *   TDPBF16PS tmm_c, tmm_a, tmm_b: C is M x N fp32 (rows M = 16, colsb
 *   4N = 64), A is M x K bf16 (rows 16, colsb 2K = 64: K = 32), B is the
 *   pair-interleaved K/2 x N (rows K/2 = 16, colsb 4N = 64).  The
 *   instruction checks C.rows == A.rows, C.colsb == B.colsb and
 *   A.colsb == 4 * B.rows (all true here), else #UD.
 *   TDPBSSD: the same with K = 64 int8 (A colsb 64 = K bytes, B rows
 *   K/4 = 16).
 * One instruction is 16 x 16 x 32 = 8192 bf16 multiply-adds (16384 flops)
 * or 16 x 16 x 64 = 16384 int8 ones (32768 ops).
 *
 * GCC's intrinsics are asm statements naming their tiles (so the tile
 * numbers are literals) and, except _tile_stored, without a memory
 * clobber: the inputs are written by setup() in another function, before
 * this one is called, and the compiler barrier below keeps it so even if
 * the functions were ever inlined together. */
#include <immintrin.h>

#include "amx.h"

#define STRIDE ((long)CAL_AMX_ROW_BYTES)

/* Configure, then load the two A tiles, the two B tiles and the four
 * initial accumulators. */
#define LOAD_TILES(t)                                                        \
  do {                                                                       \
    __asm__ volatile("" ::: "memory");                                       \
    _tile_loadconfig((t)->cfg);                                              \
    _tile_loadd(4, (t)->a[0], STRIDE);                                       \
    _tile_loadd(5, (t)->a[1], STRIDE);                                       \
    _tile_loadd(6, (t)->b[0], STRIDE);                                       \
    _tile_loadd(7, (t)->b[1], STRIDE);                                       \
    _tile_loadd(0, (t)->c0[0], STRIDE);                                      \
    _tile_loadd(1, (t)->c0[1], STRIDE);                                      \
    _tile_loadd(2, (t)->c0[2], STRIDE);                                      \
    _tile_loadd(3, (t)->c0[3], STRIDE);                                      \
  } while (0)

/* Store the accumulators and return the tiles to their initial state (so
 * the thread's context switches stop saving 8 KiB of tile data). */
#define STORE_TILES(out)                                                     \
  do {                                                                       \
    char *o_ = (char *)(out);                                                \
    _tile_stored(0, o_ + 0 * CAL_AMX_TILE_BYTES, STRIDE);                    \
    _tile_stored(1, o_ + 1 * CAL_AMX_TILE_BYTES, STRIDE);                    \
    _tile_stored(2, o_ + 2 * CAL_AMX_TILE_BYTES, STRIDE);                    \
    _tile_stored(3, o_ + 3 * CAL_AMX_TILE_BYTES, STRIDE);                    \
    _tile_release();                                                         \
  } while (0)

void cal_tile_dp_bf16_amx(const cal_amx_tiles_t *t, int64_t iters,
                          void *out) {
  LOAD_TILES(t);
  for (int64_t i = 0; i < iters; i++) {
    _tile_dpbf16ps(0, 4, 6); /* C00 += A0 . B0 */
    _tile_dpbf16ps(1, 4, 7); /* C01 += A0 . B1 */
    _tile_dpbf16ps(2, 5, 6); /* C10 += A1 . B0 */
    _tile_dpbf16ps(3, 5, 7); /* C11 += A1 . B1 */
  }
  STORE_TILES(out);
}

void cal_tile_dp_int8_amx(const cal_amx_tiles_t *t, int64_t iters,
                          void *out) {
  LOAD_TILES(t);
  for (int64_t i = 0; i < iters; i++) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  STORE_TILES(out);
}
