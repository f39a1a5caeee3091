/* Between the bf16 fused-attention dispatcher (attention_bf16.c) and its
 * variants; not a public header (tests use it to reach one variant and the
 * emulated tile product directly).
 *
 * Packed layout (workspace, per (batch, kv head), steps of CAL_ATTN_BF16_KS
 * keys, head dimension padded with zeros to Dp = a multiple of 32, keys
 * past nk zero; a "pair" is two bf16 in one uint32, the first in the low
 * half, as the bf16 dot-product instructions read them):
 *   AVX512_BF16 (vdpbf16ps)   K: [step][Dp/2][32 keys] pairs along d
 *                             V: [step][16][Dp] pairs of two keys' rows
 *   AMX (TDPBF16PS tiles)     K: [step][2 halves][Dp/32][16][16]: per half
 *                             of 16 keys and 32 columns of d, the B tile
 *                             of Q·Kᵀ (row kk: the 16 keys' pairs at
 *                             d = 2kk, 2kk + 1)
 *                             V: [step][Dp/16][16][16]: per 16 columns of
 *                             d, the B tile of P·V (row kk: keys 2kk and
 *                             2kk + 1 of the step, paired per column)
 * Both take 128·Dp bytes a step, so one workspace size fits every variant. */
#ifndef CAL_ATTENTION_BF16_INTERNAL_H
#define CAL_ATTENTION_BF16_INTERNAL_H

#include <stdint.h>

#include "attention.h"

/* Keys per step of the prefill loops and their packed layout. */
#define CAL_ATTN_BF16_KS 32
/* Query rows of the tile loop's block (the tile height). */
#define CAL_ATTN_BF16_TQ 16

/* The head dimension padded for the packed layouts. */
static inline int64_t cal_attn_bf16_dp(int64_t d) { return (d + 31) / 32 * 32; }

/* The tile products, the only operations the AMX variant runs on tiles
 * (every tile 16 rows x 64 bytes; tiles are read and written in memory):
 *   qk: S[16][32] (row stride 32 floats) = Σ_c Q_c · K_c over nch chunks
 *       of 32 columns of d, Q_c = qp + 512c (16 rows of 32 bf16), K_c the
 *       B tiles k0 + 256c (keys 0..15) and k1 + 256c (keys 16..31);
 *   pv: out[16][16e + n] (row stride ldo floats) = P · V_e for the ne
 *       (even) 16-column chunks of d, P = p16 (16 rows of 32 bf16), V_e the
 *       B tile vp + 256e.
 * The emulation does in C what TDPBF16PS does on the same memory: per
 * output element, for each pair kk in order, acc += a[2kk]·b.lo then
 * acc += a[2kk+1]·b.hi, in fp32. */
void cal_attn_tile_qk_emu(const uint16_t *qp, const uint32_t *k0,
                          const uint32_t *k1, int nch, float *S);
void cal_attn_tile_pv_emu(const uint16_t *p16, const uint32_t *vp, int ne,
                          float *out, int64_t ldo);

/* The variants: the whole computation of a valid shape with nq >
 * CAL_ATTN_DIRECT_MAX_NQ (ws: cal_attn_fused_bf16_workspace_bytes(s));
 * always 0.  tiles_*: the tile algorithm (scalar and avx512bf16: the tile
 * product emulated; amx: on tiles).  direct_*: nq <= CAL_ATTN_DIRECT_MAX_NQ
 * shared by the calling OpenMP team (see cal_attn_fused_team). */
int cal_attn_bf16_run_avx512bf16(const cal_attn_shape_t *s, const uint16_t *q,
                                 const uint16_t *k, const uint16_t *v,
                                 float *o, void *ws);
#define CAL_ATTN_BF16_DECL_(sfx)                                             \
  int cal_attn_bf16_tiles##sfx(const cal_attn_shape_t *s, const uint16_t *q, \
                               const uint16_t *k, const uint16_t *v,         \
                               float *o, void *ws);                           \
  void cal_attn_bf16_direct##sfx(const cal_attn_shape_t *s,                  \
                                 const uint16_t *q, const uint16_t *k,       \
                                 const uint16_t *v, float *o);
CAL_ATTN_BF16_DECL_(_scalar)
CAL_ATTN_BF16_DECL_(_avx512bf16)
CAL_ATTN_BF16_DECL_(_amx)
#undef CAL_ATTN_BF16_DECL_

#endif
