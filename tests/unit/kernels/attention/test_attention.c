/* Attention kernels: fused (every SIMD variant this CPU runs, scalar
 * always) against the fp64 reference on a grid of small shapes, numerical
 * edge cases, verification that can fail, and shape validation. */
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
#include "attention_fused_internal.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "kernel.h"
#include "test_util.h"
#include "attention_test_data.h"

/* The fp64 oracle of a whole output: every row from cal_attn_ref_row(),
 * with the kernels' verify() tolerance per row.  Owned by the caller. */
typedef struct {
  double *ref; /* like O */
  double *tol; /* one per row */
} oracle_t;

static void oracle_free(oracle_t *or) {
  free(or->ref);
  free(or->tol);
  or->ref = or->tol = NULL;
}

static void oracle_build(const bufs_t *b, oracle_t *or) {
  const cal_attn_shape_t *s = &b->s;
  const int64_t D = s->head_dim, rows = s->batch * s->heads * s->nq;
  double *p = malloc(sizeof(double) * (size_t)s->nk);
  double scale[CAL_ATTN_MAX_HEAD_DIM];
  or->ref = malloc(sizeof(double) * b->nqo);
  or->tol = malloc(sizeof(double) * (size_t)rows);
  assert_non_null(p);
  assert_non_null(or->ref);
  assert_non_null(or->tol);
  for (int64_t r = 0; r < rows; r++) {
    int64_t i = r % s->nq, bh = r / s->nq;
    double a, smax = 0.0;
    cal_attn_ref_row(s, b->q, b->k, b->v, bh / s->heads, bh % s->heads, i,
                     or->ref + r * D, scale, &a, p);
    for (int64_t d = 0; d < D; d++)
      smax = fmax(smax, scale[d]);
    or->tol[r] = (2e-5 + 8.0 * sqrt((double)D) * 0x1.0p-24 * a) * smax;
  }
  free(p);
}

/* Every element of o against the oracle; fails naming the first bad one. */
static void check_oracle(const bufs_t *b, const oracle_t *or, const float *o,
                         const char *what) {
  const cal_attn_shape_t *s = &b->s;
  const int64_t D = s->head_dim;
  for (size_t x = 0; x < b->nqo; x++) {
    double tol = or->tol[x / (size_t)D];
    if (!(fabs(o[x] - or->ref[x]) <= tol))
      fail_msg("%s: B%lld H%lld/%lld Nq%lld Nk%lld D%lld causal %d: "
               "o[%zu] (row %zu, d %zu) = %.9g, fp64 %.9g, tol %.3g",
               what, (long long)s->batch, (long long)s->heads,
               (long long)s->kv_heads, (long long)s->nq, (long long)s->nk,
               (long long)D, s->causal, x, x / (size_t)D, x % (size_t)D, o[x],
               or->ref[x], tol);
  }
}

static void check_all_rows(const bufs_t *b, const float *o, const char *what) {
  oracle_t or;
  oracle_build(b, &or);
  check_oracle(b, &or, o, what);
  oracle_free(&or);
}


static void run_grid(int variant) {
  char what[64];
  snprintf(what, sizeof what, "fused %s", cal_variant_name(variant));
  for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++) {
    bufs_t b;
    oracle_t or;
    int ran = -5;
    bufs_init(&b, &grid[g], 1000 + g, 2.0f);
    oracle_build(&b, &or);
    assert_int_equal(cal_attn_fused(&b.s, b.q, b.k, b.v, b.o, variant, NULL,
                                    &ran),
                     0);
    assert_int_equal(ran, variant);
    check_oracle(&b, &or, b.o, what);
    if (variant == CAL_VARIANT_SCALAR) { /* the references on the same data */
      memset(b.o, 0xff, b.nqo * sizeof(float));
      assert_int_equal(cal_attn_ref(&b.s, b.q, b.k, b.v, b.o, 0, NULL, 0), 0);
      check_oracle(&b, &or, b.o, "reference fp32");
      memset(b.o, 0xff, b.nqo * sizeof(float));
      assert_int_equal(cal_attn_ref(&b.s, b.q, b.k, b.v, b.o, 1, NULL, 0), 0);
      check_oracle(&b, &or, b.o, "reference fp64");
    }
    oracle_free(&or);
    bufs_free(&b);
  }
}

static void skip_unless(int variant, const char *name) {
  if (!cal_variant_supported(variant))
    cal_test_skip("the CPU has no %s", name);
}

/* scalar fused and both references */
static void fused_scalar_grid(void **state) {
  (void)state;
  run_grid(CAL_VARIANT_SCALAR);
}

static void fused_avx2_grid(void **state) {
  (void)state;
  skip_unless(CAL_VARIANT_AVX2, "AVX2 with FMA");
  run_grid(CAL_VARIANT_AVX2);
}

static void fused_avx512_grid(void **state) {
  (void)state;
  skip_unless(CAL_VARIANT_AVX512, "AVX-512 (F, BW, VL, DQ)");
  run_grid(CAL_VARIANT_AVX512);
}

typedef float (*exp_fn)(float);

static void check_exp(exp_fn f) {
  double worst = 0.0;
  for (int t = 0; t <= 20000; t++) {
    float x = -87.0f + 95.0f * (float)t / 20000.0f; /* [-87, 8] */
    double want = exp((double)x), got = f(x);
    worst = fmax(worst, fabs(got - want) / want);
  }
  if (!(worst <= 1e-6))
    fail_msg("vector exp relative error %.3g > 1e-6", worst);
  assert_true(f(0.0f) == 1.0f);
  assert_true(f(-88.0f) == 0.0f);
  assert_true(f(-1e4f) == 0.0f);
  assert_true(f(-INFINITY) == 0.0f);
  assert_true(isfinite(f(88.0f)));
  assert_true(isfinite(f(1e4f))); /* clamped, never inf */
}

static void vector_exp_accuracy(void **state) {
  (void)state;
  check_exp(cal_attn_exp_one_scalar);
#ifdef __x86_64__
  if (cal_variant_supported(CAL_VARIANT_AVX2))
    check_exp(cal_attn_exp_one_avx2);
  if (cal_variant_supported(CAL_VARIANT_AVX512))
    check_exp(cal_attn_exp_one_avx512);
#endif
}

static void for_each_variant(const bufs_t *b, const char *what) {
  oracle_t or;
  oracle_build(b, &or);
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    if (!cal_variant_supported(v))
      continue;
    memset(b->o, 0xff, b->nqo * sizeof(float));
    assert_int_equal(
        cal_attn_fused(&b->s, b->q, b->k, b->v, b->o, v, NULL, NULL), 0);
    for (size_t x = 0; x < b->nqo; x++)
      assert_true(isfinite(b->o[x]));
    check_oracle(b, &or, b->o, what);
  }
  oracle_free(&or);
}

/* Logits in the hundreds (softmax almost one-hot): no overflow, no NaN. */
static void huge_logits(void **state) {
  (void)state;
  const cal_attn_shape_t shapes[] = {{1, 2, 1, 40, 40, 64, 1},
                                     {1, 2, 2, 1, 90, 64, 0}};
  for (size_t t = 0; t < 2; t++) {
    bufs_t b;
    bufs_init(&b, &shapes[t], 31 + t, 30.0f); /* |logit| up to ~1000 */
    for_each_variant(&b, "huge logits");
    bufs_free(&b);
  }
}

/* Every logit very negative (about -1000): only the differences matter,
 * so the output is an ordinary weighted mean, not 0/0. */
static void very_negative_logits(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 2, 2, 24, 24, 32, 1};
  bufs_t b;
  bufs_init(&b, &s, 77, 1.0f);
  cal_rng_t r;
  cal_rng_seed(&r, 5);
  for (size_t x = 0; x < b.nqo; x++)
    b.q[x] = 6.0f;
  for (size_t x = 0; x < b.nkv; x++)
    b.k[x] = -30.0f + (float)cal_rng_uniform(&r); /* q·k/√D ≈ -980 ± 17 */
  for_each_variant(&b, "very negative logits");
  bufs_free(&b);
}

/* No row can be fully masked: causal needs nq <= nk and query i attends
 * keys 0 .. nk - nq + i, so always key 0.  The extreme is the first query
 * of causal prefill, which sees key 0 alone: its output is V row 0. */
static void single_key_row(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 2, 1, 19, 19, 40, 1};
  bufs_t b;
  bufs_init(&b, &s, 9, 2.0f);
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    if (!cal_variant_supported(v))
      continue;
    assert_int_equal(cal_attn_fused(&s, b.q, b.k, b.v, b.o, v, NULL, NULL), 0);
    for (int64_t h = 0; h < 2; h++)
      for (int64_t d = 0; d < 40; d++)
        assert_double_equal(b.o[h * 19 * 40 + d], b.v[d], 1e-6);
  }
  cal_params_t p = {.batch = 1, .heads = 1, .kv_heads = 1, .nq = 5,
                    .nk = 4, .head_dim = 8, .causal = 1};
  assert_int_equal(cal_attn_check_shape(&p, 0, NULL, 0), CAL_EINVAL);
  bufs_free(&b);
}

/* Results do not depend on the thread count (each query block is computed
 * by one thread), including B·H = 1 where the work is split over query
 * blocks. */
static void thread_count_invariant(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 1, 1, 100, 100, 64, 1};
  bufs_t b;
  bufs_init(&b, &s, 12, 2.0f);
  float *o1 = cal_alloc(b.nqo * sizeof(float));
  assert_non_null(o1);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  assert_int_equal(cal_attn_fused(&s, b.q, b.k, b.v, o1, CAL_VARIANT_AUTO,
                                  NULL, NULL),
                   0);
  omp_set_num_threads(3);
  assert_int_equal(cal_attn_fused(&s, b.q, b.k, b.v, b.o, CAL_VARIANT_AUTO,
                                  NULL, NULL),
                   0);
  omp_set_num_threads(saved);
  assert_memory_equal(o1, b.o, b.nqo * sizeof(float));
  check_all_rows(&b, b.o, "3 threads");
  cal_free(o1);
  bufs_free(&b);
}

static void isa_env_and_bad_variant(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 1, 1, 8, 8, 16, 0};
  bufs_t b;
  int ran = -5;
  bufs_init(&b, &s, 3, 2.0f);
  setenv("CALIBRATE_ISA", "scalar", 1);
  assert_int_equal(
      cal_attn_fused(&s, b.q, b.k, b.v, b.o, CAL_VARIANT_AUTO, NULL, &ran), 0);
  unsetenv("CALIBRATE_ISA");
  assert_int_equal(ran, CAL_VARIANT_SCALAR);
  assert_int_equal(cal_attn_fused(&s, b.q, b.k, b.v, b.o, 42, NULL, NULL),
                   CAL_EINVAL);
  for (int v = 0; v < CAL_VARIANT_COUNT; v++)
    if (!cal_variant_supported(v))
      assert_int_equal(cal_attn_fused(&s, b.q, b.k, b.v, b.o, v, NULL, NULL),
                       CAL_EUNSUPP);
  bufs_free(&b);
}

static void kernel_entries(void **state) {
  (void)state;
  static const char *const names[] = {"attn_ref", "attn_fused"};
  cal_params_t p = {.batch = 2, .heads = 4, .kv_heads = 2, .nq = 21,
                    .nk = 21, .head_dim = 24, .causal = 1, .seed = 99,
                    .threads = 1, .variant = CAL_VARIANT_AUTO};
  /* causal 21×21: 21·22/2 = 231 pairs */
  for (size_t n = 0; n < 2; n++) {
    const cal_kernel_t *k = cal_kernel_find(names[n]);
    void *st = NULL;
    assert_non_null(k);
    assert_string_equal(cal_family_name(k->family), "attention");
    assert_double_equal(k->flops(&p), 4.0 * 2 * 4 * 24 * 231, 0);
    assert_double_equal(k->bytes(&p), 4.0 * 24 * (2 * 2 * 4 * 21 +
                                                  2 * 2 * 2 * 21), 0);
    assert_true(k->mem_bytes(&p) >= k->bytes(&p));
    assert_int_equal(k->setup(&p, &st), 0);
    assert_non_null(k->variant_name(st));
    /* O starts poisoned: verifying before any run must fail */
    assert_int_equal(k->verify(st), CAL_EVERIFY);
    assert_int_equal(k->run(st), 0);
    assert_int_equal(k->verify(st), 0);
    k->teardown(st);
  }
  cal_kernel_find("attn_fused")->teardown(NULL);
  p.nq = 22; /* causal with nq > nk */
  void *st = NULL;
  assert_int_equal(cal_kernel_find("attn_fused")->setup(&p, &st), CAL_EINVAL);
  assert_null(st);
  /* Nq < Nk causal: queries attend 3..6 keys of 6 → 3+4+5+6 = 18 pairs */
  cal_attn_shape_t s = {1, 1, 1, 4, 6, 1, 1};
  assert_double_equal(cal_attn_flops(&s), 4.0 * 18, 0);
  s.causal = 0;
  assert_double_equal(cal_attn_flops(&s), 4.0 * 24, 0);
}

/* The shape out of a kernel's params and back: the sizes as they are,
 * causal as 0 or 1, the params' other fields left alone. */
static void shape_params_round_trip(void **state) {
  (void)state;
  cal_params_t p = {.batch = 2, .heads = 8, .kv_heads = 2, .nq = 5, .nk = 9,
                    .head_dim = 64, .causal = 7};
  cal_attn_shape_t s;
  cal_attn_shape_from_params(&p, &s);
  assert_true(s.batch == 2 && s.heads == 8 && s.kv_heads == 2);
  assert_true(s.nq == 5 && s.nk == 9 && s.head_dim == 64 && s.causal == 1);
  cal_params_t q = {.threads = 3, .seed = 11};
  cal_attn_shape_to_params(&s, &q);
  assert_true(q.batch == 2 && q.heads == 8 && q.kv_heads == 2);
  assert_true(q.nq == 5 && q.nk == 9 && q.head_dim == 64 && q.causal == 1);
  assert_true(q.threads == 3 && q.seed == 11);
}

/* A corrupted output fails verification: one element shifted by a tenth of
 * the output scale, in a corner row and in a row only the random sample or
 * the exhaustive check can see. */
static void verify_catches_corruption(void **state) {
  (void)state;
  const cal_attn_shape_t s = {1, 2, 2, 30, 30, 48, 1};
  bufs_t b;
  bufs_init(&b, &s, 4, 2.0f);
  assert_int_equal(
      cal_attn_fused(&s, b.q, b.k, b.v, b.o, CAL_VARIANT_AUTO, NULL, NULL), 0);
  assert_int_equal(cal_attn_verify_output(&s, b.q, b.k, b.v, b.o, 1, 8), 0);
  b.o[5] += 0.05f;
  assert_int_equal(cal_attn_verify_output(&s, b.q, b.k, b.v, b.o, 1, 8),
                   CAL_EVERIFY);
  b.o[5] -= 0.05f;
  b.o[b.nqo - 1] = NAN;
  assert_int_equal(cal_attn_verify_output(&s, b.q, b.k, b.v, b.o, 1, 8),
                   CAL_EVERIFY);
  /* a whole wrong row in the middle: checking every row finds it */
  assert_int_equal(
      cal_attn_fused(&s, b.q, b.k, b.v, b.o, CAL_VARIANT_AUTO, NULL, NULL), 0);
  memset(b.o + (30 + 13) * 48, 0, 48 * sizeof(float));
  assert_int_equal(cal_attn_verify_output(&s, b.q, b.k, b.v, b.o, 1, 2000),
                   CAL_EVERIFY);
  bufs_free(&b);
}

static void bad_shapes(void **state) {
  (void)state;
  const cal_params_t good = {.batch = 1, .heads = 8, .kv_heads = 2,
                             .nq = 16, .nk = 16, .head_dim = 64,
                             .causal = 1};
  char why[160];
  assert_int_equal(cal_attn_check_shape(&good, 1e9, why, sizeof why), 0);
  struct {
    cal_params_t p;
    int want;
  } cases[6];
  for (int c = 0; c < 6; c++)
    cases[c].p = good, cases[c].want = CAL_EINVAL;
  cases[0].p.batch = 0;
  cases[1].p.head_dim = -3;
  cases[2].p.kv_heads = 3; /* 8 heads not a multiple of 3 */
  cases[3].p.head_dim = CAL_ATTN_MAX_HEAD_DIM + 1;
  cases[4].p.nq = 17;      /* causal with nq > nk */
  cases[5].p.nk = cases[5].p.nq = 1 << 20;
  cases[5].want = CAL_ETOOBIG; /* 4 TiB of buffers */
  for (int c = 0; c < 6; c++) {
    why[0] = '\0';
    assert_int_equal(cal_attn_check_shape(&cases[c].p, 1e9, why, sizeof why),
                     cases[c].want);
    assert_true(strlen(why) > 10);
    assert_null(strchr(why, '\n'));
  }
  /* address-space overflow even with no memory limit */
  cal_params_t huge = good;
  huge.batch = huge.heads = huge.nq = huge.nk = INT64_C(1) << 20;
  huge.kv_heads = 1;
  assert_int_equal(cal_attn_check_shape(&huge, 0, why, sizeof why),
                   CAL_ETOOBIG);
  /* a non-causal nq > nk is fine */
  cal_params_t nc = good;
  nc.causal = 0;
  nc.nq = 40;
  assert_int_equal(cal_attn_check_shape(&nc, 0, NULL, 0), 0);
}

CAL_TEST_MAIN(
    cmocka_unit_test(fused_scalar_grid), cmocka_unit_test(fused_avx2_grid),
    cmocka_unit_test(fused_avx512_grid), cmocka_unit_test(vector_exp_accuracy),
    cmocka_unit_test(huge_logits), cmocka_unit_test(very_negative_logits),
    cmocka_unit_test(single_key_row), cmocka_unit_test(thread_count_invariant),
    cmocka_unit_test(isa_env_and_bad_variant),
    cmocka_unit_test(kernel_entries),
    cmocka_unit_test(shape_params_round_trip),
    cmocka_unit_test(verify_catches_corruption), cmocka_unit_test(bad_shapes))
