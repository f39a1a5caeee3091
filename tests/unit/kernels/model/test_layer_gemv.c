/* The layer's small-batch GEMV (layer_gemv.h): the row-major form of
 * every variant the CPU runs, and the packed forms (fp32 per SIMD
 * variant, bf16 on vdpbf16ps), against a double-precision product with
 * the fp32 summation bound, the columns past the block untouched. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cal_bf16.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "layer_gemv.h"
#include "test_util.h"

#define GUARD 12345.0f

/* One GEMV case: strided x, w, add and y; columns past n must keep their
 * guard value; each element within the fp32 summation bound of the double
 * product. */
static void gemv_case(cal_gemv_fn fn, cal_gemv_bf16_fn fn16, int64_t B,
                      int64_t K, int64_t n, int with_add, cal_rng_t *r) {
  const int64_t ldx = K + 3, ldw = n + 5, ldy = n + 7, la = n + 2;
  float *x = malloc(sizeof(float) * (size_t)(B * ldx));
  float *w = malloc(sizeof(float) * (size_t)(K * ldw));
  float *add = malloc(sizeof(float) * (size_t)(B * la));
  float *y = malloc(sizeof(float) * (size_t)(B * ldy));
  assert_true(x && w && add && y);
  cal_fill_f32(x, (size_t)(B * ldx), -0.5f, 0.5f, r);
  cal_fill_f32(w, (size_t)(K * ldw), -0.5f, 0.5f, r);
  cal_fill_f32(add, (size_t)(B * la), -0.5f, 0.5f, r);
  for (int64_t i = 0; i < B * ldy; i++)
    y[i] = GUARD;
  uint16_t *w16 = NULL;
  if (fn16) { /* bf16 weights: the reference uses the same, rounded; x
                 holds bf16 values, as the layer's rows do */
    w16 = malloc(sizeof *w16 * (size_t)(K * ldw));
    assert_non_null(w16);
    for (int64_t i = 0; i < B * ldx; i++)
      x[i] = cal_bf16_round(x[i]);
    for (int64_t i = 0; i < K * ldw; i++) {
      w16[i] = cal_f32_to_bf16(w[i]);
      w[i] = cal_bf16_to_f32(w16[i]);
    }
    fn16(x, ldx, B, K, w16, ldw, n, with_add ? add : NULL, la, y, ldy);
  } else {
    fn(x, ldx, B, K, w, ldw, n, with_add ? add : NULL, la, y, ldy);
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < ldy; j++) {
      double got = y[b * ldy + j];
      if (j >= n) {
        if (got != GUARD)
          fail_msg("B %lld K %lld n %lld: column %lld written",
                   (long long)B, (long long)K, (long long)n, (long long)j);
        continue;
      }
      double want = with_add ? add[b * la + j] : 0.0, mag = fabs(want);
      for (int64_t k = 0; k < K; k++) {
        want += (double)x[b * ldx + k] * w[k * ldw + j];
        mag += fabs((double)x[b * ldx + k] * w[k * ldw + j]);
      }
      /* the bound of fp32 summation: (K + 1) rounding steps of the sum of
       * magnitudes (each 2^-24), doubled for the products' own rounding */
      if (!(fabs(got - want) <= (double)(K + 2) * 0x1p-23 * mag))
        fail_msg("B %lld K %lld n %lld [%lld][%lld]: %.9g, expected %.9g",
                 (long long)B, (long long)K, (long long)n, (long long)b,
                 (long long)j, got, want);
    }
  free(x);
  free(w);
  free(w16);
  free(add);
  free(y);
}

/* Every variant the feature bits allow, on sizes around its vector width
 * and eight-row passes; the others have no business running here. */
static void gemv_every_variant(void **state) {
  (void)state;
  static const int64_t Bs[] = {1, 2, 3, 5, 9, 17, 40};
  static const int64_t Ks[] = {1, 7, 8, 9, 17, 100};
  static const int64_t ns[] = {1, 5, 8, 15, 16, 17, 33, 300};
  int ran = 0;
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    if (!cal_variant_supported(v))
      continue;
    cal_gemv_fn fn = cal_gemv_for(v);
    cal_gemv_bf16_fn fn16 = cal_gemv_bf16_for(v);
    assert_non_null(fn);
    assert_non_null(fn16);
    cal_rng_t r;
    cal_rng_seed(&r, 7 + (uint64_t)v);
    for (size_t bi = 0; bi < sizeof Bs / sizeof *Bs; bi++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
          for (int w16 = 0; w16 < 2; w16++)
            gemv_case(fn, w16 ? fn16 : NULL, Bs[bi], Ks[ki], ns[ni],
                      (int)((bi + ni) & 1), &r);
    ran |= 1 << v;
  }
  assert_true(ran & (1 << CAL_VARIANT_SCALAR));
  assert_null(cal_gemv_for(CAL_VARIANT_COUNT));
  assert_null(cal_gemv_bf16_for(CAL_VARIANT_COUNT));
}

/* W packed, checked through the element accessor, and the product: the
 * packed bf16 form (fp NULL), or fp32's on the variant's function fp. */
static void packed_run(cal_gemv_packed_fn fp, const float *w, const float *x,
                       int64_t ldx, int64_t B, int64_t K, int64_t N,
                       const int64_t c[4], float *y, int64_t ldy) {
  if (fp) {
    float *wpf = malloc(4 * cal_gemv_packed_f32_floats(K, N));
    assert_non_null(wpf);
    cal_gemv_pack_f32(w, N, K, N, wpf);
    for (int64_t k = 0; k < K; k += 7)
      for (int64_t j = 0; j < N; j += 5)
        assert_true(cal_gemv_packed_f32_at(wpf, K, k, j) == w[k * N + j]);
    fp(x, ldx, B, wpf, K, c[0], c[1], c[2], c[3], y, ldy);
    free(wpf);
    return;
  }
  uint32_t *wp = malloc(4 * cal_gemv_packed_words(K, N));
  assert_non_null(wp);
  cal_gemv_pack_bf16(w, N, K, N, wp);
  for (int64_t k = 0; k < K; k += 7)
    for (int64_t j = 0; j < N; j += 5)
      assert_int_equal(cal_gemv_packed_at(wp, K, k, j), cal_f32_to_bf16(w[k * N + j]));
  cal_gemv_bf16_packed(x, ldx, B, wp, K, c[0], c[1], c[2], c[3], y, ldy);
  free(wp);
}

/* A packed form against a double product over the same weights (bf16
 * ones for the bf16 form, fp NULL): rows k0 .. k0 + kn and columns c0 ..
 * c0 + n of a K x N matrix (ragged blocks at both ends, odd K, chunks of
 * many rows, batches past a tile and past a pass), columns past n
 * untouched, and the element accessor. */
static void packed_case(cal_gemv_packed_fn fp, int64_t B, int64_t K,
                        int64_t N, int64_t k0, int64_t kn, int64_t c0,
                        int64_t n, cal_rng_t *r) {
  const int64_t ldx = kn + 3, ldy = n + 5;
  float *w = malloc(sizeof(float) * (size_t)(K * N));
  float *x = malloc(sizeof(float) * (size_t)(B * ldx));
  float *y = malloc(sizeof(float) * (size_t)(B * ldy));
  assert_true(w && x && y);
  cal_fill_f32(w, (size_t)(K * N), -0.5f, 0.5f, r);
  cal_fill_f32(x, (size_t)(B * ldx), -0.5f, 0.5f, r);
  for (int64_t i = 0; !fp && i < K * N; i++)
    w[i] = cal_bf16_round(w[i]);
  for (int64_t i = 0; !fp && i < B * ldx; i++)
    x[i] = cal_bf16_round(x[i]);
  for (int64_t i = 0; i < B * ldy; i++)
    y[i] = GUARD;
  const int64_t cols[4] = {k0, kn, c0, n};
  packed_run(fp, w, x, ldx, B, K, N, cols, y, ldy);
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < ldy; j++) {
      double got = y[b * ldy + j], want = 0.0, mag = 0.0;
      if (j >= n) {
        if (got != GUARD)
          fail_msg("packed B %lld K %lld: column %lld written", (long long)B,
                   (long long)K, (long long)j);
        continue;
      }
      for (int64_t i = 0; i < kn; i++) {
        double t = (double)x[b * ldx + i] * w[(k0 + i) * N + c0 + j];
        want += t;
        mag += fabs(t);
      }
      if (!(fabs(got - want) <= (double)(kn + 2) * 0x1p-23 * mag))
        fail_msg("packed B %lld K %lld k0 %lld kn %lld c0 %lld n %lld "
                 "[%lld][%lld]: %.9g, expected %.9g", (long long)B,
                 (long long)K, (long long)k0, (long long)kn, (long long)c0,
                 (long long)n, (long long)b, (long long)j, got, want);
    }
  free(w), free(x), free(y);
}

/* {K, N, k0, kn, c0, n}: k0 even, as the bf16 form's pairs need */
static const int64_t packed_shapes[][6] = {
    {37, 60, 0, 37, 0, 60},    {37, 60, 16, 21, 0, 60},
    {64, 200, 0, 64, 16, 144}, {64, 200, 32, 32, 7, 30},
    {1100, 96, 0, 1100, 0, 96}, {1100, 96, 16, 1077, 32, 64},
    {9, 33, 0, 9, 1, 31},      {4, 300, 2, 2, 40, 250},
    {11001, 40, 0, 11001, 0, 40}, {11001, 72, 16, 10977, 3, 66}};

static void packed_all(cal_gemv_packed_fn fp, const int64_t *Bs, size_t nB,
                       uint64_t seed) {
  cal_rng_t r;
  cal_rng_seed(&r, seed);
  for (size_t bi = 0; bi < nB; bi++)
    for (size_t ci = 0; ci < sizeof packed_shapes / sizeof *packed_shapes; ci++) {
      const int64_t *c = packed_shapes[ci];
      packed_case(fp, Bs[bi], c[0], c[1], c[2], c[3], c[4], c[5], &r);
    }
}

static void gemv_packed(void **state) {
  (void)state;
  if (!cal_gemv_packed_ok(CAL_VARIANT_AVX512))
    cal_test_skip("packed bf16 GEMV not run: the CPU lacks AVX512_BF16");
  static const int64_t Bs[] = {1, 2, 3, 5, 8, 9, 16};
  packed_all(NULL, Bs, sizeof Bs / sizeof *Bs, 19);
}

/* The packed fp32 form of every SIMD variant the CPU runs (batches that
 * split into even groups of a tile, 70 past a pass of 64; odd k0 too);
 * the portable variant has none. */
static void gemv_packed_f32(void **state) {
  (void)state;
  static const int64_t Bs[] = {1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 70};
  assert_null(cal_gemv_packed_for(CAL_VARIANT_SCALAR));
  int ran = 0;
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    cal_gemv_packed_fn fp = cal_gemv_packed_for(v);
    if (!fp || !cal_variant_supported(v))
      continue;
    packed_all(fp, Bs, sizeof Bs / sizeof *Bs, 23 + (uint64_t)v);
    cal_rng_t r;
    cal_rng_seed(&r, 29);
    packed_case(fp, 9, 37, 60, 5, 30, 3, 50, &r);
    ran++;
  }
  if (!ran)
    cal_test_skip("packed fp32 GEMV not run: the CPU lacks AVX2 and FMA");
}

CAL_TEST_MAIN(cmocka_unit_test(gemv_every_variant),
              cmocka_unit_test(gemv_packed),
              cmocka_unit_test(gemv_packed_f32))
