/* The bf16 fused attention's shared loops, written once over the vector
 * vocabulary of attention_fused_impl.h (VW vec_t V_*) and instantiated per
 * variant: attention_bf16.c (scalar, the tile product emulated),
 * isa/attention_bf16_avx512.c (AVX512_BF16) and isa/attention_bf16_amx.c
 * (AMX tiles).  Not a public header.
 *
 * Q, K, V are bf16; scores, the online softmax and the accumulators fp32
 * (the algorithm of attention_fused_impl.h); the probabilities P of a step
 * are rounded to bf16 for the P·V product.  Scores are scaled by
 * log2(e)/√D in fp32 after the product, so Q is used exactly as given, and
 * the softmax runs in base 2 (2^x is cheaper than e^x; the probabilities
 * are the same).
 *
 * The including file defines, besides the vocabulary and SFX:
 *   BF_DOT(q, k, D)       Σ_d q[d]·k[d] in fp32 (q: a row padded with zeros
 *                         to a multiple of 32, 64-byte aligned; k: D values
 *                         read in place)
 *   BF_AXPY(acc, p, v, D) acc[d] += p·v[d] for d < D (acc padded to a
 *                         multiple of 32 floats, v read in place)
 *   BF_CVT32(dst, src)    32 floats of src rounded to bf16 into dst
 * optionally, for the direct path's step (else: the rescale and BF_AXPY
 * per key and row),
 *   BF_PV_STEP(acc, ld, S, rows, alpha, jn, v, nv, D)
 *                         acc[r] = alpha[r]·acc[r] + Σ_{j < jn} S[r][j]·v[j]
 *                         for r < rows (acc: BF_ROWS rows ld floats apart,
 *                         zero past rows; S rows BF_KS apart, zero past jn;
 *                         v rows D apart, nv of them readable)
 * and, for the tile loop (BF_TILES defined), TILE_BEGIN() TILE_END() around
 * a thread's tile work and TILE_QK TILE_PV with the arguments of
 * cal_attn_tile_qk_emu / cal_attn_tile_pv_emu (attention_bf16_internal.h).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "attention_bf16_internal.h"
#include "attention_fused_internal.h"
#include "cal_bf16.h"

#define BF_CAT_(a, b) a##b
#define BF_CAT(a, b) BF_CAT_(a, b)
#define FN(name) BF_CAT(name, SFX)

#define BF_DP_MAX CAL_ATTN_MAX_HEAD_DIM /* a multiple of 32 */
#define BF_ROWS 16                      /* rows of a direct group, a tile */
#define BF_KS CAL_ATTN_BF16_KS

/* the softmax in base 2: the scores are scaled by log2(e)/√D (bf_scale) */
#define CAL_SOFTMAX_BASE2 1
#include "attention_softmax_impl.h"
#undef CAL_SOFTMAX_BASE2

/* What the scores are multiplied by after the product: 1/√D, and log2 e
 * for the base-2 softmax (the probabilities are the same). */
static inline float FN(bf_scale)(int64_t D) {
  return 1.4426950408889634f / sqrtf((float)D);
}

/* keys query i may attend: 0 .. end - 1 */
static inline int64_t FN(bf_keys_end)(const cal_attn_shape_t *s, int64_t i) {
  return s->causal ? s->nk - s->nq + i + 1 : s->nk;
}

/* Scores of `kt` keys from t0 (rows kt apart): -inf past each row's end. */
static inline void FN(bf_mask)(float *S, int rows, int kt, int64_t t0,
                               const int64_t *end) {
  for (int r = 0; r < rows; r++)
    for (int64_t c = end[r] - t0 < 0 ? 0 : end[r] - t0; c < kt; c++)
      S[r * kt + c] = -INFINITY;
}

/* acc[r][0..n) = alpha[r]·acc[r] (+ add[r], when add is not NULL), rows
 * ld floats apart, n a multiple of VW. */
static inline void FN(bf_rescale)(float *acc, const float *add, int rows,
                                  int64_t ld, int64_t n, const float *alpha) {
  for (int r = 0; r < rows; r++) {
    vec_t al = V_SET1(alpha[r]);
    float *a = acc + r * ld;
    for (int64_t x = 0; x < n; x += VW) {
      vec_t y = V_MUL(V_LOAD(a + x), al);
      V_STORE(a + x, add ? V_ADD(y, V_LOAD(add + r * ld + x)) : y);
    }
  }
}

/* One output row: acc / l. */
static inline void FN(bf_out_row)(float *o, const float *acc, int64_t D,
                                  float l) {
  float inv = 1.0f / l;
  for (int64_t d = 0; d < D; d++)
    o[d] = acc[d] * inv;
}

/* ---- direct path (decode): K and V read in place, each key row once */

/* Rows r0 .. r0 + rows - 1 of the G·nq rows (query head g of the group,
 * query i) that share kv head (b, hk). */
static void FN(bf_direct_group)(const cal_attn_shape_t *s, const uint16_t *q,
                                const uint16_t *k, const uint16_t *v,
                                float *o, int64_t b, int64_t hk, int64_t r0,
                                int rows) {
  _Alignas(64) uint16_t qs[BF_ROWS * BF_DP_MAX];
  _Alignas(64) float acc[BF_ROWS * BF_DP_MAX];
  _Alignas(64) float S[BF_ROWS * BF_KS];
  float m[BF_ROWS], l[BF_ROWS], alpha[BF_ROWS];
  int64_t end[BF_ROWS], kend = 0;
  const int64_t D = s->head_dim, G = s->heads / s->kv_heads;
  const int64_t Dp = cal_attn_bf16_dp(D);
  const uint16_t *kh = k + (b * s->kv_heads + hk) * s->nk * D;
  const uint16_t *vh = v + (b * s->kv_heads + hk) * s->nk * D;
  const float scale = FN(bf_scale)(D);

  memset(qs, 0, sizeof(uint16_t) * (size_t)rows * BF_DP_MAX);
  memset(acc, 0, sizeof(float) * (size_t)(BF_ROWS * Dp)); /* rows Dp apart */
  for (int r = 0; r < rows; r++) {
    int64_t g = (r0 + r) / s->nq, i = (r0 + r) % s->nq;
    memcpy(qs + r * BF_DP_MAX,
           q + ((b * s->heads + hk * G + g) * s->nq + i) * D,
           sizeof(uint16_t) * (size_t)D);
    m[r] = -INFINITY;
    l[r] = 0.0f;
    end[r] = FN(bf_keys_end)(s, i);
    kend = end[r] > kend ? end[r] : kend;
  }
  for (int64_t t0 = 0; t0 < kend; t0 += BF_KS) {
    const int jn = (int)(kend - t0 < BF_KS ? kend - t0 : BF_KS);
    for (int j = 0; j < jn; j++)
      for (int r = 0; r < rows; r++)
        S[r * BF_KS + j] =
            BF_DOT(qs + r * BF_DP_MAX, kh + (t0 + j) * D, D) * scale;
    FN(bf_mask)(S, rows, BF_KS, t0, end);
    FN(softmax_tile)(S, rows, BF_KS, m, l, alpha);
#ifdef BF_PV_STEP
    BF_PV_STEP(acc, Dp, S, rows, alpha, jn, vh + t0 * D, s->nk - t0, D);
#else
    FN(bf_rescale)(acc, NULL, rows, Dp, Dp, alpha);
    for (int j = 0; j < jn; j++)
      for (int r = 0; r < rows; r++)
        BF_AXPY(acc + r * Dp, S[r * BF_KS + j], vh + (t0 + j) * D, D);
#endif
  }
  for (int r = 0; r < rows; r++) {
    int64_t g = (r0 + r) / s->nq, i = (r0 + r) % s->nq;
    FN(bf_out_row)(o + ((b * s->heads + hk * G + g) * s->nq + i) * D,
                   acc + r * Dp, D, l[r]);
  }
}

/* The direct path shared by the calling team: an orphaned worksharing
 * loop whose implicit barrier ends it. */
void FN(cal_attn_bf16_direct)(const cal_attn_shape_t *s, const uint16_t *q,
                              const uint16_t *k, const uint16_t *v,
                              float *o) {
  const int64_t HK = s->kv_heads, G = s->heads / HK;
  const int64_t grp = (G * s->nq + BF_ROWS - 1) / BF_ROWS;
  const int64_t items = s->batch * HK * grp;
#pragma omp for schedule(dynamic, 1)
  for (int64_t it = 0; it < items; it++) {
    int64_t bk = it / grp, r0 = (it % grp) * BF_ROWS, left = G * s->nq - r0;
    FN(bf_direct_group)(s, q, k, v, o, bk / HK, bk % HK, r0,
                        (int)(left < BF_ROWS ? left : BF_ROWS));
  }
}

/* ---- prefill: packed K and V, blocks of query rows, on the team */

/* Packs step st of (batch, kv head) bk: kh, vh that head's rows. */
typedef void (*FN(bf_pack_fn))(const uint16_t *kh, const uint16_t *vh,
                               int64_t nk, int64_t D, int64_t st,
                               uint32_t *kp, uint32_t *vp);
/* One block of `rows` query rows from i0 of head (b, h) against the
 * packed head kp, vp. */
typedef void (*FN(bf_block_fn))(const cal_attn_shape_t *s, const uint16_t *q,
                                float *o, const uint32_t *kp,
                                const uint32_t *vp, int64_t b, int64_t h,
                                int64_t i0, int rows);

/* pair(x[i0][d], x[i1][d]) of rows D apart, zero past nk or D. */
static inline uint32_t FN(bf_pair)(const uint16_t *x, int64_t nk, int64_t D,
                                   int64_t i0, int64_t d0, int64_t i1,
                                   int64_t d1) {
  uint32_t lo = i0 < nk && d0 < D ? x[i0 * D + d0] : 0;
  uint32_t hi = i1 < nk && d1 < D ? x[i1 * D + d1] : 0;
  return lo | hi << 16;
}

/* Pack every (batch, kv head), then every block of `qb` query rows
 * (heaviest causal blocks first), on one team. */
static int FN(bf_run)(const cal_attn_shape_t *s, const uint16_t *q,
                      const uint16_t *k, const uint16_t *v, float *o,
                      void *ws, int qb, FN(bf_pack_fn) pack,
                      FN(bf_block_fn) block) {
  const int64_t H = s->heads, HK = s->kv_heads, D = s->head_dim, G = H / HK;
  const int64_t Dp = cal_attn_bf16_dp(D);
  const int64_t steps = (s->nk + BF_KS - 1) / BF_KS;
  const int64_t step_words = 16 * Dp; /* uint32 per step, K or V */
  const int64_t head_words = 2 * steps * step_words;
  const int64_t nqb = (s->nq + qb - 1) / qb, items = s->batch * H * nqb;
  uint32_t *pk = ws;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t it = 0; it < s->batch * HK * steps; it++) {
      int64_t bk = it / steps, st = it % steps;
      uint32_t *hp = pk + bk * head_words;
      pack(k + bk * s->nk * D, v + bk * s->nk * D, s->nk, D, st,
           hp + st * step_words, hp + (steps + st) * step_words);
    }
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; it++) {
      int64_t bh = it / nqb, i0 = (nqb - 1 - it % nqb) * qb;
      int64_t b = bh / H, h = bh % H, left = s->nq - i0;
      const uint32_t *hp = pk + (b * HK + h / G) * head_words;
      block(s, q, o, hp, hp + steps * step_words, b, h, i0,
            (int)(left < qb ? left : qb));
    }
  }
  return 0;
}

/* Per row of a block of `rows` (padded to nrows: padding rows act as the
 * last real row, their output is dropped): running max, sum, key end. */
static inline int64_t FN(bf_rows_init)(const cal_attn_shape_t *s, int64_t i0,
                                       int rows, int nrows, float *m,
                                       float *l, int64_t *end) {
  for (int r = 0; r < nrows; r++) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    end[r] = FN(bf_keys_end)(s, i0 + (r < rows ? r : rows - 1));
  }
  return end[nrows - 1]; /* the largest */
}

#ifdef BF_TILES
/* The tile loop's packing of one step (attention_bf16_internal.h). */
static void FN(bf_tile_pack)(const uint16_t *kh, const uint16_t *vh,
                             int64_t nk, int64_t D, int64_t st, uint32_t *kp,
                             uint32_t *vp) {
  const int64_t Dp = cal_attn_bf16_dp(D), nch = Dp / 32, ne = Dp / 16;
  const int64_t j0 = st * BF_KS;
  for (int64_t hc = 0; hc < 2 * nch; hc++) /* half, chunk */
    for (int64_t kk = 0; kk < 16; kk++)
      for (int64_t n = 0; n < 16; n++) {
        int64_t key = j0 + 16 * (hc / nch) + n, d = 32 * (hc % nch) + 2 * kk;
        kp[(hc * 16 + kk) * 16 + n] = FN(bf_pair)(kh, nk, D, key, d, key,
                                                  d + 1);
      }
  for (int64_t e = 0; e < ne; e++)
    for (int64_t kk = 0; kk < 16; kk++)
      for (int64_t n = 0; n < 16; n++)
        vp[(e * 16 + kk) * 16 + n] = FN(bf_pair)(
            vh, nk, D, j0 + 2 * kk, 16 * e + n, j0 + 2 * kk + 1, 16 * e + n);
}

/* One block of up to 16 query rows on tiles: per step, S = Q·Kᵀ for 32
 * keys (two score tiles), the online softmax in fp32, P to bf16, and the
 * step's P·V added to the rescaled accumulators. */
static void FN(bf_tile_block)(const cal_attn_shape_t *s, const uint16_t *q,
                              float *o, const uint32_t *kp,
                              const uint32_t *vp, int64_t b, int64_t h,
                              int64_t i0, int rows) {
  _Alignas(64) uint16_t qp[BF_DP_MAX / 32 * 16 * 32];
  _Alignas(64) float S[BF_ROWS * BF_KS];
  _Alignas(64) uint16_t p16[BF_ROWS * BF_KS];
  _Alignas(64) float pv[BF_ROWS * BF_DP_MAX];
  _Alignas(64) float acc[BF_ROWS * BF_DP_MAX];
  float m[BF_ROWS], l[BF_ROWS], alpha[BF_ROWS];
  int64_t end[BF_ROWS];
  const int64_t D = s->head_dim, Dp = cal_attn_bf16_dp(D);
  const int nch = (int)(Dp / 32), ne = (int)(Dp / 16);
  const uint16_t *qh = q + ((b * s->heads + h) * s->nq + i0) * D;
  const float scale = FN(bf_scale)(D);

  memset(qp, 0, sizeof(uint16_t) * (size_t)(nch * 16 * 32));
  for (int r = 0; r < rows; r++)
    for (int64_t d = 0; d < D; d++)
      qp[((d / 32) * 16 + r) * 32 + d % 32] = qh[r * D + d];
  memset(acc, 0, sizeof(float) * (size_t)(BF_ROWS * Dp));
  const int64_t kend = FN(bf_rows_init)(s, i0, rows, BF_ROWS, m, l, end);
  TILE_BEGIN();
  for (int64_t t0 = 0; t0 < kend; t0 += BF_KS) {
    const uint32_t *kst = kp + (t0 / BF_KS) * 16 * Dp;
    TILE_QK(qp, kst, kst + 8 * Dp, nch, S);
    for (int x = 0; x < BF_ROWS * BF_KS; x += VW)
      V_STORE(S + x, V_MUL(V_LOAD(S + x), V_SET1(scale)));
    if (t0 + BF_KS > end[0])
      FN(bf_mask)(S, BF_ROWS, BF_KS, t0, end);
    FN(softmax_tile)(S, BF_ROWS, BF_KS, m, l, alpha);
    for (int r = 0; r < BF_ROWS; r++)
      BF_CVT32(p16 + r * BF_KS, S + r * BF_KS);
    TILE_PV(p16, vp + (t0 / BF_KS) * 16 * Dp, ne, pv, Dp);
    FN(bf_rescale)(acc, pv, BF_ROWS, Dp, Dp, alpha);
  }
  TILE_END();
  for (int r = 0; r < rows; r++)
    FN(bf_out_row)(o + ((b * s->heads + h) * s->nq + i0 + r) * D,
                   acc + r * Dp, D, l[r]);
}

int FN(cal_attn_bf16_tiles)(const cal_attn_shape_t *s, const uint16_t *q,
                            const uint16_t *k, const uint16_t *v, float *o,
                            void *ws) {
  return FN(bf_run)(s, q, k, v, o, ws, CAL_ATTN_BF16_TQ, FN(bf_tile_pack),
                    FN(bf_tile_block));
}
#endif
