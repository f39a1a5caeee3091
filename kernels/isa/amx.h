/* The matrix engine (Intel AMX): whether this process may run tile
 * instructions, and the tile-resident peak loops behind the amx_bf16 and
 * amx_int8 kernels (matrix_peak.c).
 *
 * Two things must hold before any tile instruction runs, or the kernel
 * kills the process with SIGILL:
 *   1. the CPU has the feature bits (CPUID leaf 7: AMX-TILE and AMX-BF16 or
 *      AMX-INT8; cal_isa_features());
 *   2. the kernel granted this process the tile data state:
 *      arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) (Linux 5.16+).
 *      Linux's Documentation/arch/x86/xstate.rst: "Permission, when
 *      granted, is valid per process", inherited on fork and cleared on
 *      exec, so one request before the first tile instruction covers every
 *      thread of the OpenMP team; the kernel then allocates each thread's
 *      larger XSAVE buffer on its first tile instruction.
 * cal_amx_usable() checks both, in that order, and says which failed. */
#ifndef CAL_AMX_H
#define CAL_AMX_H

#include <stddef.h>
#include <stdint.h>

#include "cal_isa.h"

/* The feature bits each loop needs. */
#define CAL_AMX_NEED_BF16 (CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16)
#define CAL_AMX_NEED_INT8 (CAL_ISA_AMX_TILE | CAL_ISA_AMX_INT8)

/* Ask the kernel once per process for the AMX tile data state; later calls
 * return the first answer.  0 when granted, else the errno of the refusal
 * (ENOSYS where there is no arch_prctl).  Call it only on a CPU with
 * CAL_ISA_AMX_TILE. */
int cal_amx_request_permission(void);

/* Why a loop needing the feature bits `need` cannot run on a CPU with
 * `features` whose kernel answered the permission request with `perm_err`
 * (0: granted; only looked at when the bits are there), written into buf:
 *   "CPU has no AMX (amx_tile, amx_bf16 absent)"
 *   "the kernel refused the AMX tile state (arch_prctl: Operation not
 *    permitted)"
 * or "this build has no AMX code (...)" when compiled without the tile
 * loops.  Returns buf, or NULL when the loop can run.  Pure: no system
 * call, so tests pass any mask. */
const char *cal_amx_why_not(uint32_t features, uint32_t need, int perm_err,
                            char *buf, size_t len);

/* This CPU and kernel: 1 when a loop needing `need` may run (asking the
 * kernel for permission the first time the CPU has the bits), else 0 with
 * *why set to the reason (static storage, one per `need`). */
int cal_amx_usable(uint32_t need, const char **why);

/* Whether this build contains the tile loops (amx_tile.c, compiled with
 * -mamx-tile -mamx-bf16 -mamx-int8 when the compiler has them). */
int cal_amx_compiled(void);

/* The tile configuration (LDTILECFG's 64-byte operand), palette 1:
 * byte 0 palette, byte 1 start_row (0), bytes 2-15 reserved (0), bytes
 * 16-47 bytes per row of tmm0..tmm15, bytes 48-63 rows of tmm0..tmm15.
 * Palette 1 has 8 tiles of at most 16 rows x 64 bytes; every byte of an
 * unused tile (tmm8..15 here) and of the reserved fields must be 0 or
 * LDTILECFG raises #GP. */
typedef struct cal_amx_cfg {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} cal_amx_cfg_t;

/* The tile layout every loop uses (64-byte rows, 16 rows: 1 KiB a tile):
 *   tmm0..tmm3  accumulators C00, C01, C10, C11 (16 x 16 fp32 / int32)
 *   tmm4, tmm5  A0, A1 (16 rows of 32 bf16 = 16 pairs, or 64 int8 = 16
 *               quads)
 *   tmm6, tmm7  B0, B1 (16 rows of 16 pairs / quads: K/2 x 2N bf16,
 *               K/4 x 4N int8, the VNNI layout)
 * and each step issues Cij += Ai . Bj for the four (i, j): four
 * independent accumulators, so a step is bound by the engine's throughput
 * (one multiply-add per 16 cycles), not by any one tile's latency. */
#define CAL_AMX_TILE_BYTES 1024
#define CAL_AMX_ROW_BYTES 64
#define CAL_AMX_ROWS 16
#define CAL_AMX_ACCS 4

/* The inputs of a loop, all 64-byte aligned and CAL_AMX_TILE_BYTES each,
 * written before the loop runs (they are read with TILELOADD only). */
typedef struct cal_amx_tiles {
  const cal_amx_cfg_t *cfg;
  const void *a[2], *b[2];
  const void *c0[CAL_AMX_ACCS]; /* initial accumulators */
} cal_amx_tiles_t;

/* Fill *cfg for the layout above (every tile 16 rows x 64 bytes). */
void cal_amx_config(cal_amx_cfg_t *cfg);

/* The loops (amx_tile.c): load the configuration and the eight tiles,
 * `iters` steps of four TDPBF16PS / TDPBSSD, store the four accumulators
 * to out (CAL_AMX_ACCS x CAL_AMX_TILE_BYTES, accumulator t at
 * out + t * CAL_AMX_TILE_BYTES), release the tiles.  Call only when
 * cal_amx_usable() said yes for CAL_AMX_NEED_BF16 / CAL_AMX_NEED_INT8. */
void cal_tile_dp_bf16_amx(const cal_amx_tiles_t *t, int64_t iters,
                          void *out);
void cal_tile_dp_int8_amx(const cal_amx_tiles_t *t, int64_t iters,
                          void *out);

/* For tests only: change one element of a state's last result so that
 * verify() must fail (state from the amx_* kernels' setup()). */
void cal_amx_test_corrupt(void *state);

#endif
