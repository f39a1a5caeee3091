/* The training step's elementwise loops that read the same at every x86
 * width, written once over the vector vocabulary (vec_ps.h with
 * vec_ps256.h or vec_ps512.h): AdamW's body, the row maximum of the LM
 * head's softmax, SwiGLU and its backward.  A row's last elements, fewer
 * than a vector, go through masked loads and stores (the maximum's
 * through a plain loop).  The including file defines FN (a name suffix),
 * exp_neg (e^x for x <= 0) and store_bf16_line (AdamW's bf16 copy of a
 * line), and its cal_*_<isa> functions call these.  Not a public
 * header. */
#include <math.h>
#include <stdint.h>

/* lanes [0, min(left, VW)) */
static inline vmask_t FN(tail)(int64_t left) {
  return V_MASK(left >= VW ? VW : (int)left);
}

static inline float FN(row_max)(const float *l, int64_t n) {
  vec_t mx = V_SET1(-INFINITY);
  int64_t j = 0;
  for (; j + VW <= n; j += VW)
    mx = V_MAX(mx, V_LOAD(l + j));
  float m = V_HMAX(mx);
  for (; j < n; j++)
    m = l[j] > m ? l[j] : m;
  return m;
}

/* sigmoid(g) from e = exp(-|g|): 1/(1+e) for g >= 0, e/(1+e) below */
static inline vec_t FN(sigmoid)(vec_t g) {
  const vec_t e = exp_neg(V_SUB(V_ZERO(), V_ABS(g)));
  const vec_t inv = V_DIV(V_SET1(1.0f), V_ADD(e, V_SET1(1.0f)));
  return V_SEL_NEG(g, inv, V_MUL(inv, e));
}

static inline void FN(swiglu)(const float *gu, int64_t f, float *a) {
  for (int64_t j = 0; j < f; j += VW) {
    const vmask_t mk = FN(tail)(f - j);
    const vec_t g = V_LOADM(gu + j, mk);
    const vec_t u = V_LOADM(gu + f + j, mk);
    V_STOREM(a + j, mk, V_MUL(V_MUL(g, FN(sigmoid)(g)), u));
  }
}

static inline void FN(swiglu_bwd)(const float *gu, const float *da, int64_t f,
                                  float *dgu) {
  const vec_t one = V_SET1(1.0f);
  for (int64_t j = 0; j < f; j += VW) {
    const vmask_t mk = FN(tail)(f - j);
    const vec_t g = V_LOADM(gu + j, mk);
    const vec_t u = V_LOADM(gu + f + j, mk);
    const vec_t d = V_LOADM(da + j, mk);
    const vec_t s = FN(sigmoid)(g);
    /* d·u·s·(1 + g·(1 - s)) and d·g·s */
    const vec_t ds = V_MUL(d, s);
    const vec_t t = V_FMA(g, V_SUB(one, s), one);
    V_STOREM(dgu + j, mk, V_MUL(V_MUL(ds, u), t));
    V_STOREM(dgu + f + j, mk, V_MUL(ds, g));
  }
}

/* AdamW's constants, one per lane */
typedef struct FN(adamw_c) {
  vec_t b1, b2, ob1, ob2, c1, c2, lr, eps, decay;
} FN(adamw_c_t);

/* AdamW of the vector at i into the outputs (streamed when nt): the new
 * masters, for the bf16 copy */
static inline vec_t FN(adamw_vec)(const FN(adamw_c_t) *c, const float *p,
                                  const float *m, const float *v,
                                  const float *g, float *p2, float *m2,
                                  float *v2, size_t i, int nt) {
  const vec_t gi = V_LOAD(g + i);
  const vec_t mo = V_FMA(c->b1, V_LOAD(m + i), V_MUL(c->ob1, gi));
  const vec_t vo = V_FMA(c->b2, V_LOAD(v + i), V_MUL(V_MUL(c->ob2, gi), gi));
  const vec_t den = V_ADD(V_SQRT(V_MUL(vo, c->c2)), c->eps);
  const vec_t step = V_DIV(V_MUL(c->lr, V_MUL(mo, c->c1)), den);
  const vec_t po = V_FMS(V_LOAD(p + i), c->decay, step);
  if (nt) {
    V_STREAM(p2 + i, po);
    V_STREAM(m2 + i, mo);
    V_STREAM(v2 + i, vo);
  } else {
    V_STORE(p2 + i, po);
    V_STORE(m2 + i, mo);
    V_STORE(v2 + i, vo);
  }
  return po;
}

#define ADAMW_LINE 16 /* elements: a cache line of each fp32 output */

/* AdamW over whole cache lines of outputs from i (cal_adamw_body_fn; the
 * including file's store_bf16_line writes a line's masters rounded, from
 * its ADAMW_LINE / VW vectors) */
static size_t FN(adamw_body)(const cal_adamw_k_t *k, const float *p,
                             const float *m, const float *v, const float *g,
                             float *p2, float *m2, float *v2, uint16_t *p16,
                             size_t i, size_t n, int nt) {
  const FN(adamw_c_t) c = {V_SET1(k->b1), V_SET1(k->b2), V_SET1(k->ob1),
                           V_SET1(k->ob2), V_SET1(k->c1), V_SET1(k->c2),
                           V_SET1(k->lr), V_SET1(k->eps), V_SET1(k->decay)};
  for (; i + ADAMW_LINE <= n; i += ADAMW_LINE) {
    vec_t po[ADAMW_LINE / VW];
    for (int q = 0; q < ADAMW_LINE / VW; q++)
      po[q] = FN(adamw_vec)(&c, p, m, v, g, p2, m2, v2, i + (size_t)(q * VW), nt);
    if (p16)
      store_bf16_line(p16 + i, po, nt);
  }
  if (nt)
    _mm_sfence();
  return i;
}
