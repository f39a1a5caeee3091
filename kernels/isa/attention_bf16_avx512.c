/* Fused attention in bf16, AVX512_BF16 variant (compiled with -mavx512f
 * -mavx512dq -mavx512bw -mavx512vl -mavx512bf16 -mfma; run only when the
 * CPU has them).  Both products on vdpbf16ps, register-blocked like a GEMM
 * micro-kernel:
 * blocks of 16 query rows, each step of 32 keys run as two register
 * blocks of 8 rows that share the step's packed K and V while it is in L1:
 *   Q·Kᵀ  8 query rows x 32 keys (16 accumulators), per pair of d: two
 *         loads of packed K (16 keys' pairs each) shared by the 8 rows, a
 *         broadcast of each row's pair of q;
 *   P·V   8 rows x 32 columns of d, per pair of keys: two loads of packed
 *         V (the two keys' rows interleaved) shared by the 8 rows, a
 *         broadcast of each row's pair of bf16 probabilities.
 * Between them the online softmax of the step's 16 x 64 scores
 * (dp_softmax): the scale applied in the subtraction of each row's
 * maximum, the rows' sums kept as vectors, and the probabilities written
 * straight to the bf16 pairs P·V reads.
 * K and V are packed once per (batch, kv head) and re-used by every block
 * of queries (attention_bf16_internal.h has the layout).  Decode (the
 * direct path) reads K in place and packs each step's V the same way for
 * the same P·V, the query heads of a kv head its rows.  Also the tile
 * algorithm with the tile product emulated (tests: the AMX variant's code
 * with this vector softmax). */
#include "attention_bf16_avx512.h"

#define BF_TILES 1
#define TILE_BEGIN() ((void)0)
#define TILE_END() ((void)0)
#define TILE_QK cal_attn_tile_qk_emu
#define TILE_PV cal_attn_tile_pv_emu
#define SFX _avx512bf16

/* decode's P·V on vdpbf16ps too (below) */
static void dp_pv_step(float *acc, int64_t ld, const float *S, int rows,
                       const float *alpha, int jn, const uint16_t *vh,
                       int64_t nv, int64_t D);
#define BF_PV_STEP dp_pv_step

#include "attention_bf16_impl.h"

#define QB8 8   /* query rows of the register block */
#define QBLK 16 /* query rows of a block: two register blocks share each
                   step of K and V while it is in L1 */
#define KS2 (2 * BF_KS) /* keys a block takes at once: two packed steps */
#define PMAX (BF_DP_MAX / 2)

/* V of step st packed [16][Dp]: pairs of keys 2jj, 2jj + 1 (zero past nk
 * or D), two rows interleaved 32 columns at a time. */
static void dp_pack_v(const uint16_t *vh, int64_t nk, int64_t D, int64_t st,
                      uint32_t *vp) {
  static const uint16_t order[32] = {
      0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i lo = _mm512_loadu_si512(order);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  const int64_t Dp = cal_attn_bf16_dp(D), j0 = st * BF_KS;
  for (int64_t jj = 0; jj < BF_KS / 2; jj++) {
    const int64_t k0 = j0 + 2 * jj, k1 = k0 + 1;
    for (int64_t d = 0; d < Dp; d += 32) {
      const int64_t n = D - d < 32 ? D - d : 32;
      const __mmask32 m = (__mmask32)(n == 32 ? 0xffffffffu : (1u << n) - 1u);
      const __m512i r0 = k0 < nk ? _mm512_maskz_loadu_epi16(m, vh + k0 * D + d)
                                 : _mm512_setzero_si512();
      const __m512i r1 = k1 < nk ? _mm512_maskz_loadu_epi16(m, vh + k1 * D + d)
                                 : _mm512_setzero_si512();
      _mm512_storeu_si512(vp + jj * Dp + d, _mm512_permutex2var_epi16(r0, lo, r1));
      _mm512_storeu_si512(vp + jj * Dp + d + 16,
                          _mm512_permutex2var_epi16(r0, hi, r1));
    }
  }
}

/* One step's packing: K [Dp/2][32 keys] pairs along d, V as dp_pack_v. */
static void dp_pack(const uint16_t *kh, const uint16_t *vh, int64_t nk,
                    int64_t D, int64_t st, uint32_t *kp, uint32_t *vp) {
  const int64_t Dp = cal_attn_bf16_dp(D), j0 = st * BF_KS;
  for (int64_t p = 0; p < Dp / 2; p++)
    for (int64_t n = 0; n < BF_KS; n++)
      kp[p * BF_KS + n] =
          bf_pair_avx512bf16(kh, nk, D, j0 + n, 2 * p, j0 + n, 2 * p + 1);
  dp_pack_v(vh, nk, D, st, vp);
}

/* S[8][32] (rows KS2 apart) = Q[8] · Kᵀ over np pairs of d, unscaled
 * (dp_softmax scales them). */
static inline void dp_qk(const uint32_t *q32, const uint32_t *kp, int64_t np,
                         float *S) {
  __m512 acc[QB8][2];
#pragma GCC unroll 8
  for (int r = 0; r < QB8; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < np; p++) {
    __m512bh k0 = (__m512bh)_mm512_loadu_si512(kp + p * BF_KS);
    __m512bh k1 = (__m512bh)_mm512_loadu_si512(kp + p * BF_KS + 16);
#pragma GCC unroll 8
    for (int r = 0; r < QB8; r++) {
      __m512bh qb = (__m512bh)_mm512_set1_epi32((int)q32[r * PMAX + p]);
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], qb, k0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], qb, k1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < QB8; r++) {
    _mm512_storeu_ps(S + r * KS2, acc[r][0]);
    _mm512_storeu_ps(S + r * KS2 + 16, acc[r][1]);
  }
}

/* The online softmax of one step of KS2 keys for nr (8 or 16) rows, in
 * base 2, straight into the bf16 probabilities P·V reads (p32, each
 * row's KS2 / 2 pairs): S the raw scores (masked ones -inf), scale
 * log2 e / √D applied here in the subtraction of the row's maximum (one
 * FMA); m the rows' running maxima (scaled), lv their running sums kept
 * as vectors (summed across lanes once, at the block's end), alpha the
 * factors the accumulators are scaled by.  First every row's maximum,
 * then the rows' factors in one vector, then the exponentials, so that
 * the rows' chains run side by side. */
_Static_assert(KS2 == 64, "dp_softmax takes a row's step as four vectors");
static inline void dp_softmax(const float *S, int nr, float scale, float *m,
                              __m512 *lv, float *alpha, uint32_t *p32) {
  _Alignas(64) float d[QBLK], base[QBLK];
  for (int r = 0; r < nr; r++) {
    const float *sr = S + r * KS2;
    __m512 mv = _mm512_max_ps(
        _mm512_max_ps(_mm512_loadu_ps(sr), _mm512_loadu_ps(sr + 16)),
        _mm512_max_ps(_mm512_loadu_ps(sr + 32), _mm512_loadu_ps(sr + 48)));
    float mt = _mm512_reduce_max_ps(mv) * scale;
    float mnew = m[r] > mt ? m[r] : mt;
    /* nothing unmasked yet: subtract 0, not -inf (no -inf - -inf) */
    base[r] = mnew == -INFINITY ? 0.0f : mnew;
    d[r] = m[r] - base[r];
    m[r] = mnew;
  }
  for (int r = nr; r < QBLK; r++)
    d[r] = 0.0f;
  _mm512_storeu_ps(alpha, vexp_avx512bf16(_mm512_load_ps(d)));
  const __m512 sc = _mm512_set1_ps(scale);
  for (int r = 0; r < nr; r++) {
    const float *sr = S + r * KS2;
    const __m512 nb = _mm512_set1_ps(-base[r]);
    __m512 p[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++)
      p[c] = vexp_avx512bf16(
          _mm512_fmadd_ps(_mm512_loadu_ps(sr + 16 * c), sc, nb));
    lv[r] = _mm512_fmadd_ps(lv[r], _mm512_set1_ps(alpha[r]),
                            _mm512_add_ps(_mm512_add_ps(p[0], p[1]),
                                          _mm512_add_ps(p[2], p[3])));
    _mm512_storeu_si512(p32 + r * KS2 / 2,
                        (__m512i)_mm512_cvtne2ps_pbh(p[1], p[0]));
    _mm512_storeu_si512(p32 + r * KS2 / 2 + 16,
                        (__m512i)_mm512_cvtne2ps_pbh(p[3], p[2]));
  }
}

/* acc[8·nrb][Dp] = alpha·acc + P[8·nrb][2·npr keys] · V (p32: each row's
 * KS2 / 2 pairs of bf16 probabilities, npr of them used; V's steps
 * consecutive; acc rows ld floats apart), 32 columns of d at a time, the
 * register blocks inside so that they read each column chunk of V while
 * it is in L1 (a step's packed K and V fill it). */
static inline void dp_pv(float *acc, int64_t ld, const uint32_t *p32,
                         const uint32_t *vp, int64_t Dp, const float *alpha,
                         int npr, int nrb) {
  for (int64_t dv = 0; dv < Dp; dv += 32)
    for (int rb = 0; rb < nrb; rb++) {
      float *ac = acc + rb * QB8 * ld + dv;
      const uint32_t *pr = p32 + rb * QB8 * KS2 / 2;
      __m512 a[QB8][2];
#pragma GCC unroll 8
      for (int r = 0; r < QB8; r++) {
        __m512 al = _mm512_set1_ps(alpha[rb * QB8 + r]);
        a[r][0] = _mm512_mul_ps(_mm512_loadu_ps(ac + r * ld), al);
        a[r][1] = _mm512_mul_ps(_mm512_loadu_ps(ac + r * ld + 16), al);
      }
      for (int jj = 0; jj < npr; jj++) {
        __m512bh v0 = (__m512bh)_mm512_loadu_si512(vp + jj * Dp + dv);
        __m512bh v1 = (__m512bh)_mm512_loadu_si512(vp + jj * Dp + dv + 16);
#pragma GCC unroll 8
        for (int r = 0; r < QB8; r++) {
          __m512bh pb = (__m512bh)_mm512_set1_epi32((int)pr[r * KS2 / 2 + jj]);
          a[r][0] = _mm512_dpbf16_ps(a[r][0], pb, v0);
          a[r][1] = _mm512_dpbf16_ps(a[r][1], pb, v1);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < QB8; r++) {
        _mm512_storeu_ps(ac + r * ld, a[r][0]);
        _mm512_storeu_ps(ac + r * ld + 16, a[r][1]);
      }
    }
}

/* Decode's P·V of one step (BF_PV_STEP): the step's V packed as a
 * prefill step's, then the prefill's register-blocked product on the
 * probabilities rounded to bf16 (as prefill rounds them), eight rows at
 * a time, rows past `rows` with zero probabilities. */
static void dp_pv_step(float *acc, int64_t ld, const float *S, int rows,
                       const float *alpha, int jn, const uint16_t *vh,
                       int64_t nv, int64_t D) {
  _Alignas(64) uint32_t vp[BF_KS / 2 * BF_DP_MAX];
  _Alignas(64) uint32_t p32[QBLK * KS2 / 2];
  float al[QBLK];
  const int nr = (rows + QB8 - 1) / QB8 * QB8;
  dp_pack_v(vh, nv, D, 0, vp);
  for (int r = 0; r < nr; r++) {
    if (r < rows)
      avx512_bf_cvt32((uint16_t *)(p32 + r * KS2 / 2), S + r * BF_KS);
    else
      memset(p32 + r * KS2 / 2, 0, sizeof(uint16_t) * BF_KS);
    al[r] = r < rows ? alpha[r] : 1.0f;
  }
  dp_pv(acc, ld, p32, vp, ld, al, (jn + 1) / 2, nr / QB8);
}

/* One block of up to 16 query rows from i0 of head (b, h). */
static void dp_block(const cal_attn_shape_t *s, const uint16_t *q, float *o,
                     const uint32_t *kp, const uint32_t *vp, int64_t b,
                     int64_t h, int64_t i0, int rows) {
  _Alignas(64) uint32_t q32[QBLK * PMAX];
  _Alignas(64) float acc[QBLK * BF_DP_MAX];
  _Alignas(64) float S[QBLK * KS2];
  _Alignas(64) uint32_t p32[QBLK * KS2 / 2];
  float m[QBLK], l[QBLK], alpha[QBLK];
  __m512 lv[QBLK];
  int64_t end[QBLK];
  const int64_t D = s->head_dim, Dp = cal_attn_bf16_dp(D);
  const uint16_t *qh = q + ((b * s->heads + h) * s->nq + i0) * D;
  const float scale = bf_scale_avx512bf16(D);

  memset(q32, 0, sizeof q32);
  for (int r = 0; r < rows; r++)
    memcpy(q32 + r * PMAX, qh + r * D, sizeof(uint16_t) * (size_t)D);
  memset(acc, 0, sizeof(float) * (size_t)(QBLK * Dp));
  const int64_t kend = bf_rows_init_avx512bf16(s, i0, rows, QBLK, m, l, end);
  for (int r = 0; r < QBLK; r++)
    lv[r] = _mm512_setzero_ps();
  /* the second register block only where it has real rows */
  const int nrb = rows > QB8 ? 2 : 1, nr = nrb * QB8;
  /* two packed steps at a time (the second, where it exists past the
   * block's last key, masked) */
  for (int64_t t0 = 0; t0 < kend; t0 += KS2) {
    const int64_t off = (t0 / BF_KS) * 16 * Dp;
    const int halves = t0 + BF_KS < kend ? 2 : 1;
    for (int hf = 0; hf < halves; hf++)
      for (int rb = 0; rb < nrb; rb++)
        dp_qk(q32 + rb * QB8 * PMAX, kp + off + hf * 16 * Dp, Dp / 2,
              S + rb * QB8 * KS2 + hf * BF_KS);
    if (t0 + KS2 > end[0])
      bf_mask_avx512bf16(S, nr, KS2, t0, end);
    dp_softmax(S, nr, scale, m, lv, alpha, p32);
    dp_pv(acc, Dp, p32, vp + off, Dp, alpha, halves * BF_KS / 2, nrb);
  }
  for (int r = 0; r < rows; r++)
    bf_out_row_avx512bf16(o + ((b * s->heads + h) * s->nq + i0 + r) * D,
                          acc + r * Dp, D, _mm512_reduce_add_ps(lv[r]));
}

int cal_attn_bf16_run_avx512bf16(const cal_attn_shape_t *s, const uint16_t *q,
                                 const uint16_t *k, const uint16_t *v,
                                 float *o, void *ws) {
  return bf_run_avx512bf16(s, q, k, v, o, ws, QBLK, dp_pack, dp_block);
}
