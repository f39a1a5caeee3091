/* The training step's vector loops (train_vec.h): AdamW of each table
 * against the formula in double and each other (the bf16 copy exactly
 * cal_f32_to_bf16 of the new masters, NaN included), the threaded pass
 * against one thread, the LM head's row loops against exp in double, and
 * the LM head stepped on the portable table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "gemm_onednn.h"
#include "kernel.h"
#include "lm_head.h"
#include "test_util.h"
#include "train_vec.h"

#define N 1037 /* not a multiple of a vector; offsets below unalign it */

static float frand(uint64_t *s, float lo, float hi) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (float)((*s >> 40) & 0xffffff) / 16777216.0f;
}

/* AdamW's seven arrays and the copy, offset o elements into aligned
 * buffers */
typedef struct bufs {
  float *a[7];
  uint16_t *p16;
} bufs_t;

static void fill(bufs_t *b, size_t o) {
  uint64_t s = 7;
  for (int i = 0; i < 7; i++) {
    b->a[i] = (float *)aligned_alloc(64, (4 * (N + 64) + 63) / 64 * 64) + o;
    for (size_t j = 0; j < N; j++)
      b->a[i][j] = i == 2 ? frand(&s, 0.0f, 1e-2f) : frand(&s, -1.0f, 1.0f);
  }
  b->p16 = (uint16_t *)aligned_alloc(64, (2 * (N + 64) + 63) / 64 * 64) + o;
  b->a[3][5] = NAN; /* a NaN gradient: its master NaN, its copy NaN */
}

static void drop(bufs_t *b, size_t o) {
  for (int i = 0; i < 7; i++)
    free(b->a[i] - o);
  free(b->p16 - o);
}

static void run_adamw(const cal_train_vec_t *v, const cal_adamw_k_t *k,
                      bufs_t *b, int threaded) {
  float **a = b->a;
  if (threaded)
    cal_adamw_pass(v, k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], b->p16, N);
  else
    v->adamw(k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], b->p16, N);
}

/* p2, m2, v2 against the formula in double; p16 exactly p2 rounded */
static void check_adamw(const cal_adamw_k_t *k, const bufs_t *b) {
  float *const *a = b->a;
  for (size_t j = 0; j < N; j++) {
    assert_int_equal(b->p16[j], cal_f32_to_bf16(a[4][j]));
    if (j == 5) {
      assert_true(isnan(a[4][j]));
      continue;
    }
    double m = (double)k->b1 * a[1][j] + (double)k->ob1 * a[3][j];
    double v = (double)k->b2 * a[2][j] + (double)k->ob2 * a[3][j] * a[3][j];
    double p = (double)a[0][j] * k->decay -
               (double)k->lr * m * k->c1 / (sqrt(v * k->c2) + k->eps);
    /* a few roundings of fp32 terms of size up to 1 */
    assert_true(fabs(a[5][j] - m) <= 1e-6 * fabs(m) + 1e-7);
    assert_true(fabs(a[6][j] - v) <= 1e-6 * fabs(v) + 1e-10);
    assert_true(fabs(a[4][j] - p) <= 1e-6 * fabs(p) + 1e-7);
  }
}

static void adamw_tables(void **state) {
  (void)state;
  cal_adamw_k_t k = cal_adamw_consts(1e-3, 0.9, 0.999, 1e-8, 0.01, 3);
  for (int variant = 0; variant < CAL_VARIANT_COUNT; variant++) {
    const cal_train_vec_t *v = cal_train_vec_for(variant);
    if (!v)
      continue;
    /* aligned (streamed) and not */
    for (size_t o = 0; o < 8; o += 3)
      for (int threaded = 0; threaded < 2; threaded++) {
        bufs_t b;
        fill(&b, o);
        run_adamw(v, &k, &b, threaded);
        check_adamw(&k, &b);
        drop(&b, o);
      }
  }
  assert_non_null(cal_train_vec());
  assert_true(cal_adamw_bytes(1) == 30.0 && cal_adamw_bytes(0) == 28.0);
}

/* fp16 bits to float (normal, subnormal, zero; no inf or NaN here) */
static double half(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double x = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -x : x;
}

static void rows(void **state) {
  (void)state;
  const int64_t n = 4096 + 13;
  float *l = malloc(4 * n), *e = malloc(4 * n), *g = malloc(4 * n);
  uint16_t *e16 = malloc(2 * n), *g16 = malloc(2 * n);
  uint64_t s = 3;
  for (int64_t j = 0; j < n; j++)
    l[j] = frand(&s, -20.0f, 5.0f);
  l[n - 1] = 7.5f; /* the maximum in the last, partial vector */
  for (int variant = 0; variant < CAL_VARIANT_COUNT; variant++) {
    const cal_train_vec_t *v = cal_train_vec_for(variant);
    if (!v)
      continue;
    assert_true(v->row_max(l, n) == 7.5f);
    float sum = v->row_exp(l, n, 7.5f, e, v->fp16 ? e16 : NULL);
    double ref = 0;
    for (int64_t j = 0; j < n; j++) {
      double x = exp((double)(l[j] - 7.5f)); /* the argument as fp32 */
      ref += x;
      assert_true(fabs(e[j] - x) <= 3e-7 * x);
      if (v->fp16)
        assert_true(fabs(half(e16[j]) - x) <= x / 2000.0 + 1.0 / (1 << 25));
    }
    assert_true(fabs(sum - ref) <= 1e-5 * ref);
    v->row_scale(e, NULL, n, 0.25f, g, NULL);
    v->row_scale(e, NULL, n, 0.25f, NULL, g16);
    for (int64_t j = 0; j < n; j++) {
      assert_true(g[j] == e[j] * 0.25f);
      assert_int_equal(g16[j], cal_f32_to_bf16(e[j] * 0.25f));
    }
    if (v->fp16) {
      v->row_scale(NULL, e16, n, 0.25f, NULL, g16);
      for (int64_t j = 0; j < n; j++)
        assert_int_equal(g16[j], cal_f32_to_bf16((float)half(e16[j]) * 0.25f));
    }
  }
  free(l), free(e), free(g), free(e16), free(g16);
}

/* SwiGLU and its backward of each table against the formula in double,
 * within a few fp32 roundings of the terms' sizes */
static void swiglu(void **state) {
  (void)state;
  enum { F = 16 * 6 + 5 };
  const int64_t f = F;
  float gu[2 * F], da[F], a[F], dgu[2 * F];
  uint64_t s = 11;
  for (int64_t j = 0; j < 2 * f; j++)
    gu[j] = frand(&s, -12.0f, 12.0f);
  for (int64_t j = 0; j < f; j++)
    da[j] = frand(&s, -1.0f, 1.0f);
  gu[0] = 0.0f, gu[1] = -90.0f, gu[2] = 90.0f;
  for (int variant = 0; variant < CAL_VARIANT_COUNT; variant++) {
    const cal_train_vec_t *v = cal_train_vec_for(variant);
    if (!v)
      continue;
    v->swiglu(gu, f, a);
    v->swiglu_bwd(gu, da, f, dgu);
    for (int64_t j = 0; j < f; j++) {
      double g = gu[j], u = gu[f + j], d = da[j], sg = 1.0 / (1.0 + exp(-g));
      double big = fabs(g * sg * u) + 1e-30;
      assert_true(fabs(a[j] - g * sg * u) <= 2e-6 * big);
      double dg = d * u * sg * (1.0 + g * (1.0 - sg));
      assert_true(fabs(dgu[j] - dg) <= 2e-6 * fabs(d * u * sg) * (1.0 + fabs(g)) + 1e-30);
      assert_true(fabs(dgu[f + j] - d * g * sg) <= 2e-6 * fabs(d * g * sg) + 1e-30);
    }
  }
}

/* The LM head's step on the portable table: fp32 with its logits kept,
 * bf16 recomputing them; verification passes and the loss matches the
 * default table's. */
static void lm_head_portable(void **state) {
  (void)state;
  const cal_train_vec_t *sc = cal_train_vec_for(CAL_VARIANT_SCALAR);
  for (int bf16 = 0; bf16 < 2; bf16++) {
    const char *why = NULL;
    if (bf16 && !((cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16)) &&
                  cal_onednn_supported(CAL_GEMM_BF16, &why) == 0))
      continue;
    cal_lm_head_t *H = NULL, *D = NULL;
    int64_t t = 16, d = 32, V = CAL_LM_HEAD_CHUNK + 77;
    assert_int_equal((bf16 ? cal_lm_head_create_bf16 : cal_lm_head_create)(t, d, V, 5, &H), 0);
    assert_int_equal((bf16 ? cal_lm_head_create_bf16 : cal_lm_head_create)(t, d, V, 5, &D), 0);
    H->vec = sc;
    H->keep = !bf16; /* the portable table keeps no fp16 */
    for (int st = 0; st < 2; st++) {
      assert_int_equal(cal_lm_head_step(H), 0);
      assert_int_equal(cal_lm_head_step(D), 0);
      assert_int_equal(cal_lm_head_verify(H), 0);
      assert_int_equal(cal_lm_head_verify(D), 0);
      assert_true(fabs(H->loss - D->loss) < 1e-4);
    }
    cal_lm_head_free(H);
    cal_lm_head_free(D);
  }
}

/* The AdamW kernels: verified after a run, a wrong moment or a stale
 * bf16 copy caught; bytes 28 (30) an element. */
static void bump_moment(void *st) {
  /* the state's first fields: n, bf16, cur, step, then the sets */
  struct { size_t n; int bf16, cur; int64_t step; float *p[2], *m[2]; } *s = st;
  s->m[s->cur][0] += 1e-3f;
}

static void adamw_kernels(void **state) {
  (void)state;
  cal_params_t p = {0};
  p.n = 4096 + 7, p.seed = 3, p.threads = 2, p.variant = CAL_VARIANT_AUTO;
  const cal_kernel_t *k = cal_kernel_find("adamw");
  const cal_kernel_t *k16 = cal_kernel_find("adamw_bf16");
  assert_non_null(k);
  assert_non_null(k16);
  cal_test_kernel_life(k, &p, NULL, bump_moment);
  cal_test_kernel_life(k16, &p, NULL, bump_moment);
  assert_true(k->bytes(&p) == 28.0 * (double)p.n);
  assert_true(k16->bytes(&p) == 30.0 * (double)p.n);
  void *st = NULL;
  p.n = 8;
  assert_int_equal(k->setup(&p, &st), CAL_EINVAL);
}

CAL_TEST_MAIN(cmocka_unit_test(adamw_kernels), cmocka_unit_test(adamw_tables), cmocka_unit_test(rows),
              cmocka_unit_test(swiglu), cmocka_unit_test(lm_head_portable))
