/* Attention at the short and block-edge lengths, every variant: the fp32
 * fused variants (scalar, AVX2, AVX-512) and the bf16 ones (scalar tiles
 * emulated, AVX512_BF16, its tile algorithm with the tiles emulated,
 * AMX), each its own test, over sequence lengths 1, 15, 16, 17, 32, 63,
 * 64, 65, 127, 128 and head sizes 32, 64, 128, in prefill (causal,
 * nq = nk) and decode (nq = 1 and nq = 4 against nk keys), every output
 * element against the fp64 reference within the kernels' documented
 * bounds (attention.h).  A variant this CPU or build cannot run is
 * skipped with the reason, and only after the dispatcher has refused it
 * (CAL_EUNSUPP): a skip never stands in for a wrong answer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"
#include "attention_bf16_internal.h"
#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"
#include "test_util.h"
#include "attention_test_data.h"

static const int64_t lens[] = {1, 15, 16, 17, 32, 63, 64, 65, 127, 128};
static const int64_t dims[] = {32, 64, 128};
enum {
  NLEN = sizeof lens / sizeof lens[0],
  NDIM = sizeof dims / sizeof dims[0]
};

/* The shapes of one length and head size: prefill (GQA 2, causal), decode
 * of one query and of four (the direct path's widest) against L keys. */
static int shapes_of(int64_t L, int64_t D, cal_attn_shape_t out[3]) {
  int n = 0;
  out[n++] = (cal_attn_shape_t){1, 4, 2, L, L, D, 1};
  out[n++] = (cal_attn_shape_t){2, 4, 2, 1, L, D, 1};
  if (L >= 4)
    out[n++] = (cal_attn_shape_t){1, 4, 1, 4, L, D, 1};
  return n;
}

/* Every element of o against the fp64 rows: fp32, the fused kernels'
 * bound (2e-5 + 8·√D·2^-24·A)·max scale; bf16 (inputs given in bf16),
 * (2^-8 + 2e-5 + 2^-24·(2·D·A + 2·nk))·max scale. */
static void check_rows(const bufs_t *b, const float *o, int bf16,
                       const char *what) {
  const cal_attn_shape_t *s = &b->s;
  const int64_t D = s->head_dim, rows = s->batch * s->heads * s->nq;
  double *p = malloc(sizeof(double) * (size_t)s->nk);
  double ref[CAL_ATTN_MAX_HEAD_DIM], scale[CAL_ATTN_MAX_HEAD_DIM];
  assert_non_null(p);
  for (int64_t r = 0; r < rows; r++) {
    int64_t i = r % s->nq, bh = r / s->nq;
    double a, smax = 0.0;
    cal_attn_ref_row(s, b->q, b->k, b->v, bh / s->heads, bh % s->heads, i,
                     ref, scale, &a, p);
    for (int64_t d = 0; d < D; d++)
      smax = fmax(smax, scale[d]);
    double tol =
        bf16 ? (0x1.0p-8 + 2e-5 +
                0x1.0p-24 * (2.0 * (double)D * a + 2.0 * (double)s->nk)) *
                   smax
             : (2e-5 + 8.0 * sqrt((double)D) * 0x1.0p-24 * a) * smax;
    for (int64_t d = 0; d < D; d++)
      if (!(fabs(o[r * D + d] - ref[d]) <= tol))
        fail_msg("%s: H%lld/%lld Nq%lld Nk%lld D%lld: row %lld d %lld = "
                 "%.9g, fp64 %.9g, tol %.3g",
                 what, (long long)s->heads, (long long)s->kv_heads,
                 (long long)s->nq, (long long)s->nk, (long long)D,
                 (long long)r, (long long)d, o[r * D + d], ref[d], tol);
  }
  free(p);
}

/* bufs_init's draws rounded to bf16 (the fp32 buffers hold them widened,
 * exactly), into q16, k16, v16 (freed by the caller). */
static void to_bf16(bufs_t *b, uint16_t **q16, uint16_t **k16,
                    uint16_t **v16) {
  float *const x[3] = {b->q, b->k, b->v};
  uint16_t **h[3] = {q16, k16, v16};
  const size_t n[3] = {b->nqo, b->nkv, b->nkv};
  for (int t = 0; t < 3; t++) {
    assert_non_null(*h[t] = cal_alloc(n[t] * sizeof(uint16_t)));
    for (size_t i = 0; i < n[t]; i++) {
      (*h[t])[i] = cal_f32_to_bf16(x[t][i]);
      x[t][i] = cal_bf16_to_f32((*h[t])[i]);
    }
  }
}

/* ---- fp32 fused */

static void fp32_lengths(int variant) {
  char what[96];
  for (int l = 0; l < NLEN; l++)
    for (int d = 0; d < NDIM; d++) {
      cal_attn_shape_t sh[3];
      int n = shapes_of(lens[l], dims[d], sh);
      for (int k = 0; k < n; k++) {
        bufs_t b;
        int ran = -5;
        bufs_init(&b, &sh[k], 500 + 31 * (uint64_t)l + 7 * (uint64_t)d + k,
                  2.0f);
        assert_int_equal(cal_attn_fused(&b.s, b.q, b.k, b.v, b.o, variant,
                                        NULL, &ran),
                         0);
        assert_int_equal(ran, variant);
        snprintf(what, sizeof what, "fused %s %s",
                 cal_variant_name(variant), k ? "decode" : "prefill");
        check_rows(&b, b.o, 0, what);
        bufs_free(&b);
      }
    }
}

/* Skip (with the reason) only a variant the dispatcher itself refuses. */
static void fp32_variant(int variant, const char *needs) {
  if (!cal_variant_supported(variant)) {
    const cal_attn_shape_t s = {1, 1, 1, 8, 8, 16, 1};
    bufs_t b;
    bufs_init(&b, &s, 1, 1.0f);
    int rc = cal_attn_fused(&s, b.q, b.k, b.v, b.o, variant, NULL, NULL);
    bufs_free(&b);
    assert_int_equal(rc, CAL_EUNSUPP);
    cal_test_skip("fused %s not run: the CPU has no %s",
                  cal_variant_name(variant), needs);
  }
  fp32_lengths(variant);
}

static void fused_scalar(void **state) {
  (void)state;
  fp32_variant(CAL_VARIANT_SCALAR, "");
}

static void fused_avx2(void **state) {
  (void)state;
  fp32_variant(CAL_VARIANT_AVX2, "AVX2 with FMA");
}

static void fused_avx512(void **state) {
  (void)state;
  fp32_variant(CAL_VARIANT_AVX512, "AVX-512 (F, BW, VL, DQ)");
}

/* ---- bf16 fused */

typedef int (*tiles_fn)(const cal_attn_shape_t *, const uint16_t *,
                        const uint16_t *, const uint16_t *, float *, void *);

/* One bf16 variant over the lengths: through the dispatcher, or (fn) the
 * prefill function directly, its decode shapes then the dispatcher's. */
static void bf16_lengths(int variant, tiles_fn fn, const char *name) {
  char what[96];
  for (int l = 0; l < NLEN; l++)
    for (int d = 0; d < NDIM; d++) {
      cal_attn_shape_t sh[3];
      int n = shapes_of(lens[l], dims[d], sh);
      for (int k = 0; k < n; k++) {
        bufs_t b;
        uint16_t *q16 = NULL, *k16 = NULL, *v16 = NULL;
        int ran = -5;
        bufs_init(&b, &sh[k], 900 + 31 * (uint64_t)l + 7 * (uint64_t)d + k,
                  2.0f);
        to_bf16(&b, &q16, &k16, &v16);
        if (fn && b.s.nq > 4) {
          void *ws = cal_alloc(cal_attn_fused_bf16_workspace_bytes(&b.s));
          assert_non_null(ws);
          assert_int_equal(fn(&b.s, q16, k16, v16, b.o, ws), 0);
          cal_free(ws);
        } else if (!fn) {
          assert_int_equal(cal_attn_fused_bf16(&b.s, q16, k16, v16, b.o,
                                               variant, NULL, &ran),
                           0);
          assert_int_equal(ran, variant);
        }
        snprintf(what, sizeof what, "bf16 %s %s", name,
                 k ? "decode" : "prefill");
        if (!fn || b.s.nq > 4)
          check_rows(&b, b.o, 1, what);
        cal_free_each(q16, k16, v16);
        bufs_free(&b);
      }
    }
}

/* Whether the dispatcher runs bf16 variant v here; where it does not, it
 * must say so (CAL_EUNSUPP), and the test is skipped with why. */
static void bf16_skip_unless_runs(int v, const char *why) {
  const cal_attn_shape_t s = {1, 1, 1, 8, 8, 16, 1};
  bufs_t b;
  uint16_t *q16 = NULL, *k16 = NULL, *v16 = NULL;
  bufs_init(&b, &s, 2, 1.0f);
  to_bf16(&b, &q16, &k16, &v16);
  int rc = cal_attn_fused_bf16(&s, q16, k16, v16, b.o, v, NULL, NULL);
  cal_free_each(q16, k16, v16);
  bufs_free(&b);
  if (rc == CAL_EUNSUPP)
    cal_test_skip("bf16 %s not run: %s", cal_attn_bf16_variant_name(v), why);
  assert_int_equal(rc, 0);
}

static void bf16_scalar(void **state) {
  (void)state;
  bf16_lengths(CAL_ATTN_BF16_SCALAR, NULL, "scalar (tiles emulated)");
}

static void bf16_avx512(void **state) {
  (void)state;
  bf16_skip_unless_runs(CAL_ATTN_BF16_AVX512,
                        "the CPU has no AVX512_BF16 (vdpbf16ps)");
  bf16_lengths(CAL_ATTN_BF16_AVX512, NULL, "avx512_bf16");
}

/* the AMX variant's tile algorithm with its AVX-512 softmax, the tile
 * products emulated (runs wherever AVX512_BF16 does) */
static void bf16_avx512_tiles(void **state) {
  (void)state;
  bf16_skip_unless_runs(CAL_ATTN_BF16_AVX512,
                        "the CPU has no AVX512_BF16 (vdpbf16ps)");
#ifdef __x86_64__
  bf16_lengths(0, cal_attn_bf16_tiles_avx512bf16, "tiles emulated, avx512");
#endif
}

static void bf16_amx(void **state) {
  (void)state;
  bf16_skip_unless_runs(CAL_ATTN_BF16_AMX,
                        "no AMX-BF16 here (or the kernel refused the tile "
                        "state)");
  bf16_lengths(CAL_ATTN_BF16_AMX, NULL, "amx");
}

CAL_TEST_MAIN(cmocka_unit_test(fused_scalar), cmocka_unit_test(fused_avx2),
              cmocka_unit_test(fused_avx512), cmocka_unit_test(bf16_scalar),
              cmocka_unit_test(bf16_avx512),
              cmocka_unit_test(bf16_avx512_tiles), cmocka_unit_test(bf16_amx))
