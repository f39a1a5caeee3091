/* The layer's small-batch GEMV (layer_gemv.h): the portable variant, plain
 * C the compiler may vectorise for the baseline ISA, for fp32 and bf16
 * weights, and the choice of variant.  Same chunks and eight-row passes as
 * the SIMD variants (layer_gemv_impl.h), batch rows outermost so the
 * column loop is a plain vectorisable sweep.  The weight type is a macro
 * parameter: GEMV_SCALAR below is instantiated once per type. */
#include "layer_gemv.h"

#include <stddef.h>

#include "cal_isa.h"

#define GEMV_KB 8
#define GEMV_Y_TILE 8192

/* y[0..n) += Σ_kk x[kk]·w[kk·ldw + 0..n) over kn rows, weights of type
 * W_T widened by W_F. */
#define ROW_PASS(NAME, W_T, W_F)                                               \
  static void NAME(const float *restrict x, const W_T *restrict w,            \
                   int64_t ldw, int64_t n, float *restrict y, int kn) {       \
    if (kn == GEMV_KB) {                                                       \
      const float x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4],       \
                  x5 = x[5], x6 = x[6], x7 = x[7];                             \
      const W_T *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw, \
                *w4 = w + 4 * ldw, *w5 = w + 5 * ldw, *w6 = w + 6 * ldw,      \
                *w7 = w + 7 * ldw;                                             \
      for (int64_t j = 0; j < n; j++)                                          \
        y[j] += x0 * W_F(w0[j]) + x1 * W_F(w1[j]) + x2 * W_F(w2[j]) +          \
                x3 * W_F(w3[j]) + x4 * W_F(w4[j]) + x5 * W_F(w5[j]) +          \
                x6 * W_F(w6[j]) + x7 * W_F(w7[j]);                             \
      return;                                                                  \
    }                                                                          \
    for (int kk = 0; kk < kn; kk++)                                            \
      for (int64_t j = 0; j < n; j++)                                          \
        y[j] += x[kk] * W_F(w[kk * ldw + j]);                                  \
  }

#define GEMV_SCALAR(NAME, PASS, W_T)                                           \
  void NAME(const float *x, int64_t ldx, int64_t batch, int64_t K,             \
            const W_T *w, int64_t ldw, int64_t n, const float *add,            \
            int64_t ladd, float *y, int64_t ldy) {                             \
    if (batch < 1 || n < 1)                                                    \
      return;                                                                  \
    int64_t cw = GEMV_Y_TILE / batch;                                          \
    if (cw < 64)                                                               \
      cw = 64;                                                                 \
    for (int64_t c0 = 0; c0 < n; c0 += cw) {                                   \
      const int64_t cn = n - c0 < cw ? n - c0 : cw;                            \
      for (int64_t b = 0; b < batch; b++)                                      \
        for (int64_t j = 0; j < cn; j++)                                       \
          y[b * ldy + c0 + j] = add ? add[b * ladd + c0 + j] : 0.0f;           \
      for (int64_t k0 = 0; k0 < K; k0 += GEMV_KB) {                            \
        int kn = (int)(K - k0 < GEMV_KB ? K - k0 : GEMV_KB);                   \
        for (int64_t b = 0; b < batch; b++)                                    \
          PASS(x + b * ldx + k0, w + k0 * ldw + c0, ldw, cn,                   \
               y + b * ldy + c0, kn);                                          \
      }                                                                        \
    }                                                                          \
  }

#define F32_W(w) (w)
ROW_PASS(row_pass, float, F32_W)
ROW_PASS(row_pass_bf16, uint16_t, cal_bf16_to_f32)
GEMV_SCALAR(cal_gemv_scalar, row_pass, float)
GEMV_SCALAR(cal_gemv_bf16_scalar, row_pass_bf16, uint16_t)

cal_gemv_fn cal_gemv_for(int variant) {
  switch (variant) {
  case CAL_VARIANT_SCALAR: return cal_gemv_scalar;
#ifdef CAL_HAVE_X86_SIMD
  case CAL_VARIANT_AVX2: return cal_gemv_avx2;
  case CAL_VARIANT_AVX512: return cal_gemv_avx512;
#endif
  default: return NULL;
  }
}

cal_gemv_bf16_fn cal_gemv_bf16_for(int variant) {
  switch (variant) {
  case CAL_VARIANT_SCALAR: return cal_gemv_bf16_scalar;
#ifdef CAL_HAVE_X86_SIMD
  case CAL_VARIANT_AVX2: return cal_gemv_bf16_avx2;
  case CAL_VARIANT_AVX512: return cal_gemv_bf16_avx512;
#endif
  default: return NULL;
  }
}

cal_gemv_packed_fn cal_gemv_packed_for(int variant) {
  switch (variant) {
#ifdef CAL_HAVE_X86_SIMD
  case CAL_VARIANT_AVX2: return cal_gemv_packed_avx2;
  case CAL_VARIANT_AVX512: return cal_gemv_packed_avx512;
#endif
  default: return NULL;
  }
}

size_t cal_gemv_packed_f32_floats(int64_t K, int64_t n) {
  return (size_t)((n + 15) / 16) * (size_t)K * 16;
}

/* block by block, on the team from a fill block's size: each thread
 * writes whole runs of its blocks */
void cal_gemv_pack_f32_rows(const float *w, int64_t ldw, int64_t K, int64_t n,
                            int64_t k0, int64_t kn, float *wp) {
  const int64_t nb = (n + 15) / 16;
#pragma omp parallel for schedule(static) if (kn * n >= (int64_t)CAL_FILL_BLOCK)
  for (int64_t jb = 0; jb < nb; jb++) {
    const int64_t cols = n - 16 * jb < 16 ? n - 16 * jb : 16;
    float *dst = wp + cal_gemv_packed_f32_off(K, k0, 16 * jb);
    for (int64_t k = 0; k < kn; k++, dst += 16)
      for (int64_t l = 0; l < 16; l++)
        dst[l] = l < cols ? w[k * ldw + 16 * jb + l] : 0.0f;
  }
}

void cal_gemv_pack_f32(const float *w, int64_t ldw, int64_t K, int64_t n,
                       float *wp) {
  cal_gemv_pack_f32_rows(w, ldw, K, n, 0, K, wp);
}

size_t cal_gemv_fill_stage_floats(int64_t K, int64_t n) {
  const size_t part = CAL_FILL_TEAM_MIN / sizeof(float), all = (size_t)(K * n);
  size_t m = all < part ? all : part;
  return m > (size_t)n ? m : (size_t)n;
}

void cal_gemv_fill_packed_f32(float *wp, int64_t K, int64_t n, float a,
                              cal_rng_t *r, float *stage) {
  const size_t all = (size_t)(K * n);
  /* below the team fill's size, the whole matrix is one chunk of the
   * stream's values in order; above it, each chunk is its part of the
   * team fill seeded from one draw */
  const int whole = all < CAL_FILL_TEAM_MIN / sizeof(float);
  const int64_t rows = whole ? K : (int64_t)(cal_gemv_fill_stage_floats(K, n) /
                                             (size_t)n);
  const uint64_t base = whole ? 0 : cal_rng_next(r);
  for (int64_t k0 = 0; k0 < K; k0 += rows) {
    const int64_t kn = K - k0 < rows ? K - k0 : rows;
    if (whole)
      cal_fill_f32(stage, all, -a, a, r);
    else
      cal_fill_f32_part(stage, (size_t)(k0 * n), (size_t)(kn * n), -a, a,
                        base);
    cal_gemv_pack_f32_rows(stage, n, K, n, k0, kn, wp);
  }
}

int cal_gemv_packed_ok(int variant) {
#ifdef CAL_HAVE_X86_SIMD
  return variant == CAL_VARIANT_AVX512 &&
         cal_variant_supported(CAL_VARIANT_AVX512) &&
         (cal_isa_features() & CAL_ISA_AVX512BF16);
#else
  (void)variant;
  return 0;
#endif
}

size_t cal_gemv_packed_words(int64_t K, int64_t n) {
  return (size_t)((n + 31) / 32) * (size_t)((K + 1) / 2) * 32;
}

void cal_gemv_pack_pair(const float *r0, const float *r1, int64_t K,
                        int64_t n, int64_t k, uint32_t *wp) {
  const int64_t Kp = (K + 1) / 2, nblk = (n + 31) / 32;
  for (int64_t jb = 0; jb < nblk; jb++) {
    uint32_t *o = wp + (jb * Kp + k / 2) * 32;
    for (int64_t l = 0; l < 32; l++) {
      const int64_t j = 32 * jb + l;
      uint32_t lo = j < n ? cal_f32_to_bf16(r0[j]) : 0;
      uint32_t hi = j < n && r1 ? cal_f32_to_bf16(r1[j]) : 0;
      o[l] = lo | hi << 16;
    }
  }
}

void cal_gemv_pack_bf16(const float *w, int64_t ldw, int64_t K, int64_t n,
                        uint32_t *wp) {
  for (int64_t k = 0; k < K; k += 2)
    cal_gemv_pack_pair(w + k * ldw, k + 1 < K ? w + (k + 1) * ldw : NULL, K,
                       n, k, wp);
}

