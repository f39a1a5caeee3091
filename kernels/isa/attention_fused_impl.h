/* The fused attention algorithm, written once over a small vector
 * vocabulary and instantiated per SIMD variant: attention_fused.c (scalar),
 * attention_fused_avx2.c and attention_fused_avx512.c each define the
 * macros below and include this file, so every variant computes exactly
 * the same tiling with its own instructions.  Not a public header.
 *
 * The including file defines (the AVX variants take the first lines from
 * vec_ps.h):
 *   VW            lanes per vector            vec_t, vmask_t
 *   V_ZERO() V_SET1(x) V_LOAD(p) V_STORE(p,v)
 *   V_MASK(n)     mask of the first n lanes (1 <= n <= VW)
 *   V_LOADM(p,m)  masked load, zeros elsewhere (never touches masked lanes)
 *   V_ADD V_SUB V_MUL V_MIN V_MAX, V_FMA(a,b,c) = a·b + c
 *   V_HMAX(v) V_HSUM(v)             horizontal max / sum to float
 *   V_ROUND(v)    round to nearest integer (as float)
 *   V_POW2I(n)    2^n for integer-valued n in [-126, 127]
 *   V_LDEXP(p, n) p·2^n for integer-valued n; V_LDEXP_ZERO an n at or
 *                 below which it is 0
 *   V_ZERO_LT(y, x, t)  y where x >= t, else 0
 *   QB   query rows per register block      NVS  vectors per score block
 *   KT   keys per tile (a multiple of NVS·VW, dividing CAL_ATTN_KT_MAX)
 *   SFX  function name suffix
 *
 * Algorithm (per query block, FlashAttention-style online softmax):
 *   m = -inf, l = 0, acc = 0
 *   for each key tile up to the last key any row of the block attends:
 *     S = Qs·Kᵀ (Q pre-scaled by 1/√D, K packed transposed per tile)
 *     mask; m' = max(m, rowmax S); α = e^(m - m'); P = e^(S - m')
 *     l = α·l + rowsum P; acc = α·acc + P·V; m = m'
 *   O = acc / l
 * Decode-like shapes (few queries) skip packing and stream K and V rows
 * once for all query heads of a kv head. */

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "attention_fused_internal.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

#define DP_MAX CAL_ATTN_MAX_HEAD_DIM /* a multiple of every VW */
#define DIRECT_ROWS 16               /* rows per group in the direct path */

/* The working set of a block of R query rows, on the stack: the scaled
 * queries, the output accumulators, one tile of scores, and per row the
 * running max, sum and rescale factor of the online softmax and the end of
 * the keys it attends. */
#define ROWS_SCRATCH(R)                                                      \
  _Alignas(64) float qs[(R) * DP_MAX];                                       \
  _Alignas(64) float acc[(R) * DP_MAX];                                      \
  _Alignas(64) float S[(R) * KT];                                            \
  float m[R], l[R], alpha[R];                                                \
  int64_t end[R]

#if KT % (NVS * VW) != 0 || CAL_ATTN_KT_MAX % KT != 0
#error "KT must be a multiple of NVS*VW and divide CAL_ATTN_KT_MAX"
#endif

#include "attention_softmax_impl.h"

float FN(cal_attn_exp_one)(float x) { return FN(exp1)(x); }

/* S[QB][KT] (columns c0 .. c0 + NVS·VW) = Qs[QB][D] · Kp, Kp a tile packed
 * [D][KT]. */
static inline void FN(qk_block)(const float *restrict qs, int64_t D,
                                const float *restrict kp,
                                float *restrict S) {
  vec_t acc[QB][NVS];
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++)
#pragma GCC unroll 8
    for (int u = 0; u < NVS; u++)
      acc[r][u] = V_ZERO();
  for (int64_t d = 0; d < D; d++) {
    vec_t kv[NVS];
#pragma GCC unroll 8
    for (int u = 0; u < NVS; u++)
      kv[u] = V_LOAD(kp + d * KT + u * VW);
#pragma GCC unroll 16
    for (int r = 0; r < QB; r++) {
      vec_t qb = V_SET1(qs[r * DP_MAX + d]);
#pragma GCC unroll 8
      for (int u = 0; u < NVS; u++)
        acc[r][u] = V_FMA(qb, kv[u], acc[r][u]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++)
#pragma GCC unroll 8
    for (int u = 0; u < NVS; u++)
      V_STORE(S + r * KT + u * VW, acc[r][u]);
}

/* acc[QB][two vectors at oacc] = α·acc + P[QB][0..jn) · V[0..jn)[two
 * vectors], V rows D apart. */
static inline void FN(pv_block2)(float *restrict oacc,
                                 const float *restrict P,
                                 const float *restrict vt, int64_t D, int jn,
                                 const float *restrict alpha) {
  vec_t a[QB][2];
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++) {
    vec_t al = V_SET1(alpha[r]);
    a[r][0] = V_MUL(V_LOAD(oacc + r * DP_MAX), al);
    a[r][1] = V_MUL(V_LOAD(oacc + r * DP_MAX + VW), al);
  }
  for (int j = 0; j < jn; j++) {
    vec_t v0 = V_LOAD(vt + j * D), v1 = V_LOAD(vt + j * D + VW);
#pragma GCC unroll 16
    for (int r = 0; r < QB; r++) {
      vec_t pb = V_SET1(P[r * KT + j]);
      a[r][0] = V_FMA(pb, v0, a[r][0]);
      a[r][1] = V_FMA(pb, v1, a[r][1]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++) {
    V_STORE(oacc + r * DP_MAX, a[r][0]);
    V_STORE(oacc + r * DP_MAX + VW, a[r][1]);
  }
}

/* The same for one vector of which the first `n` lanes are real. */
static inline void FN(pv_block1)(float *restrict oacc,
                                 const float *restrict P,
                                 const float *restrict vt, int64_t D, int jn,
                                 const float *restrict alpha, int n) {
  vec_t a[QB];
  vmask_t mk = V_MASK(n);
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++)
    a[r] = V_MUL(V_LOAD(oacc + r * DP_MAX), V_SET1(alpha[r]));
  for (int j = 0; j < jn; j++) {
    vec_t v0 = V_LOADM(vt + j * D, mk);
#pragma GCC unroll 16
    for (int r = 0; r < QB; r++)
      a[r] = V_FMA(V_SET1(P[r * KT + j]), v0, a[r]);
  }
#pragma GCC unroll 16
  for (int r = 0; r < QB; r++)
    V_STORE(oacc + r * DP_MAX, a[r]);
}

/* keys query i may attend: 0 .. end - 1 */
static inline int64_t FN(keys_end)(const cal_attn_shape_t *s, int64_t i) {
  return s->causal ? s->nk - s->nq + i + 1 : s->nk;
}

/* Load `rows` query rows (stride D) scaled by 1/√D into qs[QB][DP_MAX],
 * zero-padding the rest of each row and rows rows .. nrows_pad. */
static inline void FN(load_q)(float *qs, const float *q, int64_t D, int rows,
                              int nrows_pad, float scale) {
  memset(qs, 0, sizeof(float) * (size_t)nrows_pad * DP_MAX);
  for (int r = 0; r < rows; r++)
    for (int64_t d = 0; d < D; d++)
      qs[r * DP_MAX + d] = q[r * D + d] * scale;
}

/* Pack K of one (batch, kv head) tile by tile, transposed: kp[t][d][KT],
 * keys past nk zero. */
static void FN(pack_k_tile)(const float *k, int64_t nk, int64_t D,
                            int64_t t, float *kp) {
  float *dst = kp + t * D * KT;
  int64_t j0 = t * KT;
  int jn = (int)(nk - j0 < KT ? nk - j0 : KT);
  if (jn < KT)
    for (int64_t d = 0; d < D; d++)
      memset(dst + d * KT + jn, 0, sizeof(float) * (size_t)(KT - jn));
  for (int jj = 0; jj < jn; jj++) {
    const float *src = k + (j0 + jj) * D;
    for (int64_t d = 0; d < D; d++)
      dst[d * KT + jj] = src[d];
  }
}

/* One block of up to QB query rows i0 .. i0 + rows - 1 of head (b, h). */
static void FN(prefill_block)(const cal_attn_shape_t *s, const float *q,
                              const float *v, float *o, const float *kp,
                              int64_t b, int64_t h, int64_t i0, int rows) {
  ROWS_SCRATCH(QB);
  const int64_t D = s->head_dim, hk = h / (s->heads / s->kv_heads);
  const int64_t nvd = (D + VW - 1) / VW;
  const float *vh = v + (b * s->kv_heads + hk) * s->nk * D;
  const float *qh = q + ((b * s->heads + h) * s->nq + i0) * D;
  float *oh = o + ((b * s->heads + h) * s->nq + i0) * D;

  FN(load_q)(qs, qh, D, rows, QB, 1.0f / sqrtf((float)D));
  memset(acc, 0, sizeof acc);
  for (int r = 0; r < QB; r++) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    /* padding rows behave like the last real row; their output is dropped */
    end[r] = FN(keys_end)(s, i0 + (r < rows ? r : rows - 1));
  }
  const int64_t kend = end[QB - 1]; /* the largest */
  for (int64_t t0 = 0; t0 < kend; t0 += KT) {
    const float *kt = kp + (t0 / KT) * D * KT;
    for (int c = 0; c < KT; c += NVS * VW)
      FN(qk_block)(qs, D, kt + c, S + c);
    if (t0 + KT > end[0]) /* the tile crosses the diagonal or the end */
      for (int r = 0; r < QB; r++)
        for (int64_t c = end[r] - t0 < 0 ? 0 : end[r] - t0; c < KT; c++)
          S[r * KT + c] = -INFINITY;
    FN(softmax_tile)(S, QB, KT, m, l, alpha);
    const int jn = (int)(kend - t0 < KT ? kend - t0 : KT);
    const float *vt = vh + t0 * D;
    int64_t dv = 0;
    for (; dv + 2 <= nvd && (dv + 2) * VW <= D; dv += 2)
      FN(pv_block2)(acc + dv * VW, S, vt + dv * VW, D, jn, alpha);
    for (; dv < nvd; dv++) {
      int64_t n = D - dv * VW;
      FN(pv_block1)(acc + dv * VW, S, vt + dv * VW, D, jn, alpha,
                    (int)(n < VW ? n : VW));
    }
  }
  for (int r = 0; r < rows; r++) {
    float inv = 1.0f / l[r];
    for (int64_t d = 0; d < D; d++)
      oh[r * D + d] = acc[r * DP_MAX + d] * inv;
  }
}

static inline float FN(dot)(const float *qs, const float *kr, int64_t D) {
  vec_t a0 = V_ZERO(), a1 = V_ZERO();
  int64_t d = 0;
  for (; d + 2 * VW <= D; d += 2 * VW) {
    a0 = V_FMA(V_LOAD(qs + d), V_LOAD(kr + d), a0);
    a1 = V_FMA(V_LOAD(qs + d + VW), V_LOAD(kr + d + VW), a1);
  }
  for (; d < D; d += VW) {
    int64_t n = D - d;
    a0 = V_FMA(V_LOAD(qs + d), V_LOADM(kr + d, V_MASK((int)(n < VW ? n : VW))),
               a0);
  }
  return V_HSUM(V_ADD(a0, a1));
}

/* Few queries (decode): the rows r0 .. r0 + rows - 1 of the G·nq rows
 * (query head g of the group, query i) that share kv head (b, hk), against
 * K and V read in place, each key row once. */
static void FN(direct_group)(const cal_attn_shape_t *s, const float *q,
                             const float *k, const float *v, float *o,
                             int64_t b, int64_t hk, int64_t r0, int rows) {
  ROWS_SCRATCH(DIRECT_ROWS);
  const int64_t D = s->head_dim, G = s->heads / s->kv_heads;
  const int64_t nvd = (D + VW - 1) / VW;
  const float *kh = k + (b * s->kv_heads + hk) * s->nk * D;
  const float *vh = v + (b * s->kv_heads + hk) * s->nk * D;
  const float scale = 1.0f / sqrtf((float)D);
  int64_t kend = 0;

  memset(qs, 0, sizeof qs);
  memset(acc, 0, sizeof acc);
  for (int r = 0; r < rows; r++) {
    int64_t g = (r0 + r) / s->nq, i = (r0 + r) % s->nq;
    const float *qr = q + ((b * s->heads + hk * G + g) * s->nq + i) * D;
    for (int64_t d = 0; d < D; d++)
      qs[r * DP_MAX + d] = qr[d] * scale;
    m[r] = -INFINITY;
    l[r] = 0.0f;
    end[r] = FN(keys_end)(s, i);
    if (end[r] > kend)
      kend = end[r];
  }
  for (int64_t t0 = 0; t0 < kend; t0 += KT) {
    const int jn = (int)(kend - t0 < KT ? kend - t0 : KT);
    for (int j = 0; j < jn; j++) {
      const float *kr = kh + (t0 + j) * D;
      for (int r = 0; r < rows; r++)
        S[r * KT + j] = t0 + j < end[r] ? FN(dot)(qs + r * DP_MAX, kr, D)
                                        : -INFINITY;
    }
    for (int r = 0; r < rows; r++)
      for (int j = jn; j < KT; j++)
        S[r * KT + j] = -INFINITY;
    FN(softmax_tile)(S, rows, KT, m, l, alpha);
    for (int r = 0; r < rows; r++) {
      vec_t al = V_SET1(alpha[r]);
      for (int64_t dv = 0; dv < nvd; dv++)
        V_STORE(acc + r * DP_MAX + dv * VW,
                V_MUL(V_LOAD(acc + r * DP_MAX + dv * VW), al));
    }
    for (int j = 0; j < jn; j++) {
      const float *vr = vh + (t0 + j) * D;
      for (int r = 0; r < rows; r++) {
        vec_t pb = V_SET1(S[r * KT + j]);
        float *ar = acc + r * DP_MAX;
        int64_t dv = 0;
        for (; (dv + 1) * VW <= D; dv++)
          V_STORE(ar + dv * VW,
                  V_FMA(pb, V_LOAD(vr + dv * VW), V_LOAD(ar + dv * VW)));
        if (dv < nvd)
          V_STORE(ar + dv * VW,
                  V_FMA(pb, V_LOADM(vr + dv * VW, V_MASK((int)(D - dv * VW))),
                        V_LOAD(ar + dv * VW)));
      }
    }
  }
  for (int r = 0; r < rows; r++) {
    int64_t g = (r0 + r) / s->nq, i = (r0 + r) % s->nq;
    float *orow = o + ((b * s->heads + hk * G + g) * s->nq + i) * D;
    float inv = 1.0f / l[r];
    for (int64_t d = 0; d < D; d++)
      orow[d] = acc[r * DP_MAX + d] * inv;
  }
}

/* The direct (decode) path shared by the team that calls it: an orphaned
 * worksharing loop, so every thread of the enclosing parallel region takes
 * its share (outside one, the calling thread does it all); the loop's
 * implicit barrier ends it. */
void FN(cal_attn_fused_direct)(const cal_attn_shape_t *s, const float *q,
                               const float *k, const float *v, float *o) {
  const int64_t HK = s->kv_heads, G = s->heads / HK;
  const int64_t grp = (G * s->nq + DIRECT_ROWS - 1) / DIRECT_ROWS;
  const int64_t items = s->batch * HK * grp;
#pragma omp for schedule(dynamic, 1)
  for (int64_t it = 0; it < items; it++) {
    int64_t bk = it / grp, r0 = (it % grp) * DIRECT_ROWS;
    int64_t left = G * s->nq - r0;
    FN(direct_group)(s, q, k, v, o, bk / HK, bk % HK, r0,
                     (int)(left < DIRECT_ROWS ? left : DIRECT_ROWS));
  }
}

int FN(cal_attn_fused_run)(const cal_attn_shape_t *s, const float *q,
                           const float *k, const float *v, float *o,
                           float *kpack) {
  const int64_t B = s->batch, H = s->heads, HK = s->kv_heads, D = s->head_dim;
  const int64_t G = H / HK;
  if (s->nq <= CAL_ATTN_DIRECT_MAX_NQ) {
#pragma omp parallel
    FN(cal_attn_fused_direct)(s, q, k, v, o);
    return 0;
  }
  const int64_t ntiles = (s->nk + KT - 1) / KT;
  const int64_t nqb = (s->nq + QB - 1) / QB;
  const int64_t items = B * H * nqb;
  const size_t head_pack = (size_t)(ntiles * KT * D);
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t it = 0; it < B * HK * ntiles; it++) {
      int64_t bk = it / ntiles, t = it % ntiles;
      FN(pack_k_tile)(k + bk * s->nk * D, s->nk, D, t,
                      kpack + (size_t)bk * head_pack);
    }
    /* heaviest query blocks (the causal ones with the most keys) first */
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < items; it++) {
      int64_t bh = it / nqb, qb = nqb - 1 - it % nqb;
      int64_t b = bh / H, h = bh % H, i0 = qb * QB;
      int64_t left = s->nq - i0;
      FN(prefill_block)(s, q, v, o,
                        kpack + (size_t)(b * HK + h / G) * head_pack, b, h,
                        i0, (int)(left < QB ? left : QB));
    }
  }
  return 0;
}
