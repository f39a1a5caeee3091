/* The online softmax of the attention loops, written once over the vector
 * vocabulary (attention_fused_impl.h lists it: VW vec_t V_* and FN for the
 * suffix) and included by the fp32 and bf16 loop headers: a vector e^x and
 * the update of a tile of scores.  Included once per suffix (no guard: a
 * file may instantiate it for more than one).  Not a public header. */

#include <math.h>

#ifdef CAL_SOFTMAX_BASE2
/* The scores arrive in base 2 (already times log2 e, folded into the
 * product's 1/√D) and "e^x" below is 2^x, for x <= 0: x = n + f, |f| <=
 * 1/2, 2^f by its degree-5 Taylor polynomial in f·ln 2 (relative error
 * < 2.5e-6, far below the 2^-9 of the bf16 rounding the probabilities
 * meet), times 2^n (V_LDEXP); 0 from V_LDEXP_ZERO down (and for -inf
 * and NaN).  A third fewer operations than the natural-base e^x, whose
 * range reduction it does not need. */
static inline vec_t FN(vexp)(vec_t x) {
  vec_t xc = V_MAX(x, V_SET1(V_LDEXP_ZERO));
  vec_t n = V_ROUND(xc);
  vec_t f = V_SUB(xc, n);
  vec_t p = V_SET1(1.3333558146428443e-3f); /* ln2^5 / 5! */
  p = V_FMA(p, f, V_SET1(9.6181291076284772e-3f));
  p = V_FMA(p, f, V_SET1(5.5504108664821580e-2f));
  p = V_FMA(p, f, V_SET1(2.4022650695910071e-1f));
  p = V_FMA(p, f, V_SET1(6.9314718055994531e-1f));
  p = V_FMA(p, f, V_SET1(1.0f));
  return V_LDEXP(p, n);
}
#else
/* e^x, relative error ~2e-7 for x in [-87, 88]; 0 below -87 (and for -inf
 * and NaN).  x = n·ln2 + r, |r| <= ln2/2, e^r by its degree-6 Taylor
 * polynomial (remainder < 1.2e-7), times 2^n (V_LDEXP). */
static inline vec_t FN(vexp)(vec_t x) {
  const vec_t lo = V_SET1(-87.0f);
  vec_t xc = V_MIN(V_MAX(x, lo), V_SET1(88.0f));
  vec_t n = V_ROUND(V_MUL(xc, V_SET1(1.44269504088896341f)));
  vec_t r = V_FMA(n, V_SET1(-0.693145751953125f), xc); /* ln2, high bits */
  r = V_FMA(n, V_SET1(-1.42860682030941723e-6f), r);   /* ln2, the rest */
  vec_t p = V_SET1(1.0f / 720.0f);
  p = V_FMA(p, r, V_SET1(1.0f / 120.0f));
  p = V_FMA(p, r, V_SET1(1.0f / 24.0f));
  p = V_FMA(p, r, V_SET1(1.0f / 6.0f));
  p = V_FMA(p, r, V_SET1(0.5f));
  p = V_FMA(p, r, V_SET1(1.0f));
  p = V_FMA(p, r, V_SET1(1.0f));
  return V_ZERO_LT(V_LDEXP(p, n), x, lo);
}
#endif

/* e^x of one value through the vector loop. */
static inline float FN(exp1)(float x) {
  float out[VW];
  V_STORE(out, FN(vexp)(V_SET1(x)));
  return out[0];
}

#ifndef CAL_SOFTMAX_MAX_ROWS
#define CAL_SOFTMAX_MAX_ROWS 16 /* rows of a score tile, at most */
#endif

/* Online-softmax update of `rows` (<= CAL_SOFTMAX_MAX_ROWS) rows of a
 * score tile S[rows][kt] (kt a multiple of VW; masked entries are -inf):
 * S becomes P, m and l are updated, alpha gets the factor the running
 * accumulators must be scaled by.  The rows' factors e^(m_old - m_new)
 * are taken together, VW rows to a vector e^x: one e^x per row was a
 * whole vector's work for one value, a fifth of the e^x of a tile of 64
 * keys. */
static inline void FN(softmax_tile)(float *S, int rows, int kt, float *m,
                                    float *l, float *alpha) {
  float d[CAL_SOFTMAX_MAX_ROWS + VW], sums[CAL_SOFTMAX_MAX_ROWS];
  for (int r = 0; r < rows; r++) {
    float *sr = S + r * kt;
    vec_t mv = V_LOAD(sr);
    for (int c = VW; c < kt; c += VW)
      mv = V_MAX(mv, V_LOAD(sr + c));
    float mt = V_HMAX(mv), mnew = m[r] > mt ? m[r] : mt;
    /* a row with nothing unmasked yet keeps m = -inf: subtract 0 instead
     * so that no -inf - -inf = NaN appears */
    float base = mnew == -INFINITY ? 0.0f : mnew;
    vec_t bv = V_SET1(base), sum = V_ZERO();
    for (int c = 0; c < kt; c += VW) {
      vec_t p = FN(vexp)(V_SUB(V_LOAD(sr + c), bv));
      V_STORE(sr + c, p);
      sum = V_ADD(sum, p);
    }
    d[r] = m[r] - base;
    sums[r] = V_HSUM(sum);
    m[r] = mnew;
  }
  for (int r = rows; r < rows + VW; r++)
    d[r] = 0.0f;
  for (int r = 0; r < rows; r += VW) {
    float e[VW];
    V_STORE(e, FN(vexp)(V_LOAD(d + r)));
    for (int i = 0; i < VW && r + i < rows; i++) {
      alpha[r + i] = e[i];
      l[r + i] = l[r + i] * e[i] + sums[r + i];
    }
  }
}
