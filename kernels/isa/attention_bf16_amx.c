/* Fused attention in bf16, AMX variant: the tile algorithm of
 * attention_bf16_impl.h (blocks of 16 query rows, steps of 32 keys, the
 * online softmax on AVX-512) with its two tile products on TDPBF16PS.
 * Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl -mavx512bf16
 * -mfma -mamx-tile -mamx-bf16; run only after cal_amx_usable() said yes
 * for CAL_AMX_NEED_BF16 on a CPU with AVX512_BF16.  The tile products are
 * the only code here that the emulation (cal_attn_tile_qk_emu,
 * cal_attn_tile_pv_emu, the same loop over the same memory) does not run;
 * the kernel's verify() checks their answer on the machine.
 *
 * Tiles (cal_amx_config: every tile 16 rows x 64 bytes):
 *   tmm0, tmm1  accumulators (16 x 16 fp32): keys 0-15 and 16-31 of the
 *               scores, or two 16-column chunks of the step's P·V
 *   tmm2        A: 16 query rows x 32 columns of d of Q, or P (16 rows x
 *               32 keys of bf16 probabilities)
 *   tmm3, tmm4  B: the packed K or V tiles (16 pairs x 16 columns)
 * TDPBF16PS checks C.rows == A.rows (16), C.colsb == B.colsb (64) and
 * A.colsb == 4·B.rows (64 == 4·16).
 *
 * GCC's tile loads are asm statements without a memory operand for the
 * tile's bytes: each product starts with a compiler barrier so the packed
 * Q, S and P written just before are in memory when the tiles load them
 * (_tile_stored has its own memory clobber). */
#include "amx.h"
#include "attention_bf16_avx512.h"

/* S[16][32] = Σ_c Q_c · [K0_c K1_c] */
static inline void amx_qk(const uint16_t *qp, const uint32_t *k0,
                          const uint32_t *k1, int nch, float *S) {
  __asm__ volatile("" ::: "memory");
  _tile_zero(0);
  _tile_zero(1);
  for (int c = 0; c < nch; c++) {
    _tile_loadd(2, qp + 512 * c, 64);
    _tile_loadd(3, k0 + 256 * c, 64);
    _tile_loadd(4, k1 + 256 * c, 64);
    _tile_dpbf16ps(0, 2, 3);
    _tile_dpbf16ps(1, 2, 4);
  }
  _tile_stored(0, S, 32 * (long)sizeof(float));
  _tile_stored(1, S + 16, 32 * (long)sizeof(float));
}

/* out[16][16e + n] = P · V_e for the ne (even) chunks */
static inline void amx_pv(const uint16_t *p16, const uint32_t *vp, int ne,
                          float *out, int64_t ldo) {
  __asm__ volatile("" ::: "memory");
  _tile_loadd(2, p16, 64);
  for (int e = 0; e < ne; e += 2) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(3, vp + 256 * e, 64);
    _tile_loadd(4, vp + 256 * (e + 1), 64);
    _tile_dpbf16ps(0, 2, 3);
    _tile_dpbf16ps(1, 2, 4);
    _tile_stored(0, out + 16 * e, ldo * (long)sizeof(float));
    _tile_stored(1, out + 16 * (e + 1), ldo * (long)sizeof(float));
  }
}

/* Configure this thread's tiles (the configuration in memory first) and
 * release them after the block, so its context switches stop saving 8 KiB
 * of tile data. */
#define TILE_BEGIN()                                                         \
  cal_amx_cfg_t amx_cfg_;                                                    \
  cal_amx_config(&amx_cfg_);                                                 \
  __asm__ volatile("" ::: "memory");                                         \
  _tile_loadconfig(&amx_cfg_)
#define TILE_END() _tile_release()
#define TILE_QK amx_qk
#define TILE_PV amx_pv

#define BF_TILES 1
#define SFX _amx

#include "attention_bf16_impl.h"
