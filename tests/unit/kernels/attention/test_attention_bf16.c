/* The bf16 fused attention: the emulated tile product against plain
 * products on the documented tile layout, every variant (the scalar tile
 * algorithm with emulated tiles, the same with the AVX-512 softmax, the
 * AVX512_BF16 loops, AMX where the CPU has it) against the fp64 reference
 * from the same bf16 inputs within the documented bound, the team's decode
 * path, the kernel entry, its verification and the variant choice. */
#include <math.h>
#include <omp.h>
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

/* The fp32 buffers hold the bf16 inputs widened (exact). */
typedef struct {
  bufs_t f;
  uint16_t *q16, *k16, *v16;
} bf_t;

static void bf_free(bf_t *b) {
  bufs_free(&b->f);
  cal_free_each(b->q16, b->k16, b->v16);
}

static void round_into(float *x, uint16_t **h, size_t n) {
  *h = cal_alloc(n * sizeof(uint16_t));
  assert_non_null(*h);
  for (size_t i = 0; i < n; i++) {
    (*h)[i] = cal_f32_to_bf16(x[i]);
    x[i] = cal_bf16_to_f32((*h)[i]);
  }
}

/* bufs_init's draws rounded to bf16. */
static void bf_init(bf_t *b, const cal_attn_shape_t *s, uint64_t seed,
                    float qk) {
  bufs_init(&b->f, s, seed, qk);
  round_into(b->f.q, &b->q16, b->f.nqo);
  round_into(b->f.k, &b->k16, b->f.nkv);
  round_into(b->f.v, &b->v16, b->f.nkv);
}

/* Every row of o against the fp64 reference with the bf16 bound of
 * cal_attn_verify_output_bf16 (attention.h). */
static void check_all_rows(const bf_t *b, const float *o, const char *what) {
  const cal_attn_shape_t *s = &b->f.s;
  const int64_t D = s->head_dim, rows = s->batch * s->heads * s->nq;
  double *p = malloc(sizeof(double) * (size_t)s->nk);
  double ref[CAL_ATTN_MAX_HEAD_DIM], scale[CAL_ATTN_MAX_HEAD_DIM];
  assert_non_null(p);
  for (int64_t r = 0; r < rows; r++) {
    int64_t i = r % s->nq, bh = r / s->nq;
    double a, smax = 0.0;
    cal_attn_ref_row(s, b->f.q, b->f.k, b->f.v, bh / s->heads, bh % s->heads, i,
                     ref, scale, &a, p);
    for (int64_t d = 0; d < D; d++)
      smax = fmax(smax, scale[d]);
    double tol = (0x1.0p-8 + 2e-5 +
                  0x1.0p-24 * (2.0 * (double)D * a + 2.0 * (double)s->nk)) *
                 smax;
    for (int64_t d = 0; d < D; d++)
      if (!(fabs(o[r * D + d] - ref[d]) <= tol))
        fail_msg("%s: B%lld H%lld/%lld Nq%lld Nk%lld D%lld causal %d: row "
                 "%lld d %lld = %.9g, fp64 %.9g, tol %.3g",
                 what, (long long)s->batch, (long long)s->heads,
                 (long long)s->kv_heads, (long long)s->nq, (long long)s->nk,
                 (long long)D, s->causal, (long long)r, (long long)d,
                 o[r * D + d], ref[d], tol);
  }
  free(p);
}


typedef int (*run_fn)(const cal_attn_shape_t *, const uint16_t *,
                      const uint16_t *, const uint16_t *, float *, void *);

/* One variant on the grid: through the dispatcher (fn NULL) or one
 * prefill function directly (decode shapes then through the dispatcher's
 * scalar direct path are skipped). */
static void run_grid(int variant, run_fn fn, const char *what) {
  for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++) {
    bf_t b;
    int ran = -5;
    bf_init(&b, &grid[g], 2000 + g, 2.0f);
    if (fn) {
      if (b.f.s.nq <= 4) {
        bf_free(&b);
        continue;
      }
      void *ws = cal_alloc(cal_attn_fused_bf16_workspace_bytes(&b.f.s));
      assert_non_null(ws);
      assert_int_equal(fn(&b.f.s, b.q16, b.k16, b.v16, b.f.o, ws), 0);
      cal_free(ws);
    } else {
      assert_int_equal(cal_attn_fused_bf16(&b.f.s, b.q16, b.k16, b.v16, b.f.o,
                                           variant, NULL, &ran),
                       0);
      assert_int_equal(ran, variant);
    }
    check_all_rows(&b, b.f.o, what);
    bf_free(&b);
  }
}

static int have_bf16(void) {
  int v;
  const char *why;
  return cal_attn_bf16_resolve(CAL_VARIANT_AVX512, &v, &why) == 0;
}

/* the tile algorithm with the tile product emulated, scalar softmax */
static void bf16_scalar_grid(void **state) {
  (void)state;
  run_grid(CAL_ATTN_BF16_SCALAR, NULL, "bf16 scalar (tiles emulated)");
}

static void bf16_avx512_grid(void **state) {
  (void)state;
  if (!have_bf16())
    cal_test_skip("the CPU has no AVX512_BF16");
#ifdef __x86_64__
  run_grid(CAL_ATTN_BF16_AVX512, NULL, "bf16 avx512_bf16");
  /* the AMX variant's algorithm with its AVX-512 softmax, tiles emulated */
  run_grid(0, cal_attn_bf16_tiles_avx512bf16, "bf16 tiles emulated, avx512");
#endif
}

static void bf16_amx_grid(void **state) {
  (void)state;
  int v;
  const char *why;
  if (cal_attn_bf16_resolve(CAL_VARIANT_AUTO, &v, &why) < 0 ||
      v != CAL_ATTN_BF16_AMX)
    cal_test_skip("no AMX-BF16 here (or the kernel refused the tile state)");
  run_grid(CAL_ATTN_BF16_AMX, NULL, "bf16 amx");
}

/* got[16][cols] against the plain products Σ_x a[m·ars + x·acs]·b[x·brs +
 * n·bcs] over `inner` terms, in double. */
static void check_product(const float *got, const uint16_t *a, int ars,
                          int acs, const uint16_t *b, int bcs, int brs,
                          int cols, int inner) {
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < cols; n++) {
      double want = 0, mag = 0;
      for (int x = 0; x < inner; x++) {
        double t = (double)cal_bf16_to_f32(a[m * ars + x * acs]) *
                   cal_bf16_to_f32(b[x * brs + n * bcs]);
        want += t;
        mag += fabs(t);
      }
      assert_double_equal(got[m * cols + n], want, 1e-6 * mag + 1e-30);
    }
}

/* The emulated tile product against plain products of the logical
 * matrices, packed here from the layout's description: Q·Kᵀ for 16 rows,
 * 32 keys and 64 columns of d; P·V for 16 rows, 32 keys and 32 columns. */
static void tile_emulation(void **state) {
  (void)state;
  enum { R = 16, NK = 32, DQ = 64, DV = 32 };
  uint16_t q[R][DQ], k[NK][DQ], p[R][NK], v[NK][DV];
  _Alignas(64) uint16_t qp[2 * 512];
  _Alignas(64) uint32_t kp[2][2 * 256], vp[2 * 256];
  float S[R * NK], out[R * DV];
  cal_rng_t r;
  cal_rng_seed(&r, 42);
#define FILL(a, lo, hi)                                                      \
  for (size_t i_ = 0; i_ < sizeof a / sizeof(uint16_t); i_++)                \
    ((uint16_t *)a)[i_] =                                                    \
        cal_f32_to_bf16((float)(lo + (hi - lo) * cal_rng_uniform(&r)))
  FILL(q, -2, 2);
  FILL(k, -2, 2);
  FILL(p, 0, 1);
  FILL(v, -1, 1);
#undef FILL
  for (int c = 0; c < 2; c++) /* A tile: row m = q[m][32c .. 32c + 31] */
    for (int m = 0; m < R; m++)
      for (int x = 0; x < 32; x++)
        qp[c * 512 + m * 32 + x] = q[m][32 * c + x];
  for (int half = 0; half < 2; half++) /* B: row kk, column n: key n's pair */
    for (int c = 0; c < 2; c++)
      for (int kk = 0; kk < 16; kk++)
        for (int n = 0; n < 16; n++)
          kp[half][c * 256 + kk * 16 + n] =
              (uint32_t)k[16 * half + n][32 * c + 2 * kk] |
              (uint32_t)k[16 * half + n][32 * c + 2 * kk + 1] << 16;
  for (int e = 0; e < 2; e++) /* B: row kk, column n: keys 2kk, 2kk + 1 */
    for (int kk = 0; kk < 16; kk++)
      for (int n = 0; n < 16; n++)
        vp[e * 256 + kk * 16 + n] = (uint32_t)v[2 * kk][16 * e + n] |
                                    (uint32_t)v[2 * kk + 1][16 * e + n] << 16;
  cal_attn_tile_qk_emu(qp, kp[0], kp[1], 2, S);
  cal_attn_tile_pv_emu(&p[0][0], vp, 2, out, DV);
  check_product(S, q[0], DQ, 1, k[0], DQ, 1, NK, DQ);
  check_product(out, p[0], NK, 1, v[0], 1, DV, DV, NK);
}

/* The first query of a causal head sees key 0 alone: its output is V's
 * row 0 exactly (one weight of 1, exact in bf16). */
static void single_key_row(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 2, 1, 19, 19, 40, 1};
  bf_t b;
  bf_init(&b, &s, 9, 2.0f);
  for (int v = 0; v < CAL_ATTN_BF16_COUNT; v++) {
    if (cal_attn_fused_bf16(&s, b.q16, b.k16, b.v16, b.f.o, v, NULL, NULL) ==
        CAL_EUNSUPP)
      continue;
    for (int64_t h = 0; h < 2; h++)
      for (int64_t d = 0; d < 40; d++)
        assert_true(b.f.o[h * 19 * 40 + d] == b.f.v[d]);
  }
  bf_free(&b);
}

/* The team's decode path gives what the whole call gives, and neither
 * depends on the thread count; nor does prefill. */
static void team_and_threads(void **state) {
  (void)state;
  const cal_attn_shape_t dec = {2, 8, 2, 1, 300, 64, 1};
  const cal_attn_shape_t pre = {1, 1, 1, 100, 100, 64, 1};
  int saved = omp_get_max_threads();
  for (int v = 0; v < CAL_ATTN_BF16_COUNT; v++)
    for (int t = 0; t < 2; t++) {
      const cal_attn_shape_t *s = t ? &pre : &dec;
      bf_t b;
      bf_init(&b, s, 12 + t, 2.0f);
      float *o1 = cal_alloc(b.f.nqo * sizeof(float));
      assert_non_null(o1);
      omp_set_num_threads(1);
      int rc = cal_attn_fused_bf16(s, b.q16, b.k16, b.v16, o1, v, NULL, NULL);
      omp_set_num_threads(3);
      if (rc == 0) {
        assert_int_equal(cal_attn_fused_bf16(s, b.q16, b.k16, b.v16, b.f.o, v,
                                             NULL, NULL),
                         0);
        assert_memory_equal(o1, b.f.o, b.f.nqo * sizeof(float));
        if (!t) {
          int trc = 0;
          memset(b.f.o, 0xff, b.f.nqo * sizeof(float));
#pragma omp parallel num_threads(3) reduction(| : trc)
          trc |= cal_attn_fused_bf16_team(s, b.q16, b.k16, b.v16, b.f.o, v);
          assert_int_equal(trc, 0);
          assert_memory_equal(o1, b.f.o, b.f.nqo * sizeof(float));
        }
        check_all_rows(&b, b.f.o, "threads");
      } else {
        assert_int_equal(rc, CAL_EUNSUPP);
      }
      omp_set_num_threads(saved);
      cal_free(o1);
      bf_free(&b);
    }
  bf_t b;
  bf_init(&b, &pre, 1, 2.0f);
  assert_int_equal(cal_attn_fused_bf16_team(&pre, b.q16, b.k16, b.v16, b.f.o,
                                            CAL_ATTN_BF16_SCALAR),
                   CAL_EINVAL); /* nq > 4 */
  bf_free(&b);
}

static void variant_choice(void **state) {
  (void)state;
  int v = -5;
  const char *why = NULL;
  assert_int_equal(cal_attn_bf16_resolve(CAL_VARIANT_SCALAR, &v, &why), 0);
  assert_int_equal(v, CAL_ATTN_BF16_SCALAR);
  assert_int_equal(cal_attn_bf16_resolve(CAL_VARIANT_AVX2, &v, &why),
                   CAL_EUNSUPP);
  assert_true(strstr(why, "AVX512_BF16") != NULL);
  assert_int_equal(cal_attn_bf16_resolve(42, &v, &why), CAL_EINVAL);
  int rc = cal_attn_bf16_resolve(CAL_VARIANT_AUTO, &v, &why);
  if (have_bf16()) {
    assert_int_equal(rc, 0);
    assert_true(v == CAL_ATTN_BF16_AVX512 || v == CAL_ATTN_BF16_AMX);
  } else {
    assert_int_equal(rc, CAL_EUNSUPP);
  }
  setenv("CALIBRATE_ISA", "scalar", 1);
  assert_int_equal(cal_attn_bf16_resolve(CAL_VARIANT_AUTO, &v, &why), 0);
  unsetenv("CALIBRATE_ISA");
  assert_int_equal(v, CAL_ATTN_BF16_SCALAR);
  assert_string_equal(cal_attn_bf16_variant_name(CAL_ATTN_BF16_AVX512),
                      "avx512_bf16");
  assert_string_equal(cal_attn_bf16_variant_name(CAL_ATTN_BF16_AMX), "amx");
  assert_string_equal(cal_attn_bf16_variant_name(9), "auto");
  const cal_attn_shape_t s = {1, 1, 1, 8, 8, 16, 0};
  bf_t b;
  bf_init(&b, &s, 3, 2.0f);
  assert_int_equal(cal_attn_fused_bf16(&s, b.q16, b.k16, b.v16, b.f.o, 7, NULL,
                                       NULL),
                   CAL_EINVAL);
  bf_free(&b);
}

/* The kernel entry: its figures, a run that verifies, and verification
 * that fails on a poisoned or corrupted output. */
static void kernel_entry(void **state) {
  (void)state;
  const cal_kernel_t *k = cal_kernel_find("attn_fused_bf16");
  cal_params_t p = {.batch = 2, .heads = 4, .kv_heads = 2, .nq = 21,
                    .nk = 21, .head_dim = 24, .causal = 1, .seed = 99,
                    .threads = 1, .variant = CAL_VARIANT_AUTO};
  const char *why = NULL;
  void *st = NULL;
  assert_non_null(k);
  assert_int_equal(k->dtype, CAL_DTYPE_BF16);
  assert_double_equal(k->flops(&p), 4.0 * 2 * 4 * 24 * 231, 0);
  /* Q, K, V in bf16 read, O in fp32 written */
  assert_double_equal(k->bytes(&p), 24.0 * (2 * (2 * 4 * 21 + 2 * 2 * 2 * 21) +
                                            4 * 2 * 4 * 21), 0);
  if (!have_bf16()) {
    assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
    assert_true(strlen(why) > 10);
    p.variant = CAL_VARIANT_SCALAR; /* the portable variant runs anywhere */
  }
  assert_int_equal(k->supported(&p, &why), 0);
  assert_true(k->mem_bytes(&p) >= k->bytes(&p));
  assert_int_equal(k->setup(&p, &st), 0);
  assert_int_equal(k->verify(st), CAL_EVERIFY); /* O starts poisoned */
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  k->teardown(st);
  p.nq = p.nk = 40;
  p.variant = CAL_VARIANT_AVX2;
  assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
  assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
  k->teardown(NULL);
}

/* The widened inputs and the output, as the verification takes them. */
#define F(b) (b).f.q, (b).f.k, (b).f.v, (b).f.o

/* The bound catches a shifted element, a NaN and a wrong row. */
static void verify_catches_corruption(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 2, 2, 30, 30, 48, 1};
  bf_t b;
  bf_init(&b, &s, 4, 2.0f);
  assert_int_equal(cal_attn_fused_bf16(&s, b.q16, b.k16, b.v16, b.f.o,
                                       CAL_ATTN_BF16_SCALAR, NULL, NULL),
                   0);
  assert_int_equal(cal_attn_verify_output_bf16(&s, F(b), 1, 8),
                   0);
  b.f.o[5] += 0.05f;
  assert_int_equal(cal_attn_verify_output_bf16(&s, F(b), 1, 8),
                   CAL_EVERIFY);
  b.f.o[5] -= 0.05f;
  b.f.o[b.f.nqo - 1] = NAN;
  assert_int_equal(cal_attn_verify_output_bf16(&s, F(b), 1, 8),
                   CAL_EVERIFY);
  assert_int_equal(cal_attn_fused_bf16(&s, b.q16, b.k16, b.v16, b.f.o,
                                       CAL_ATTN_BF16_SCALAR, NULL, NULL),
                   0);
  memset(b.f.o + (30 + 13) * 48, 0, 48 * sizeof(float));
  assert_int_equal(
      cal_attn_verify_output_bf16(&s, F(b), 1, 2000),
      CAL_EVERIFY);
  bf_free(&b);
}

CAL_TEST_MAIN(cmocka_unit_test(tile_emulation),
              cmocka_unit_test(bf16_scalar_grid),
              cmocka_unit_test(bf16_avx512_grid),
              cmocka_unit_test(bf16_amx_grid),
              cmocka_unit_test(single_key_row),
              cmocka_unit_test(team_and_threads),
              cmocka_unit_test(variant_choice),
              cmocka_unit_test(kernel_entry),
              cmocka_unit_test(verify_catches_corruption))
