/* The kernels' kinds and engines (kernels/core/kind.c,
 * kernels/engines/engine.c): every name table entry round-trips, every
 * kernel's family, dtype and engine has a name, the engine table has a row
 * per engine whose products compute, and the one bf16 check agrees with
 * the kernels that use it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "engine.h"
#include "kernel.h"
#include "kind.h"
#include "test_util.h"

static void names_round_trip(void **state) {
  (void)state;
  for (int i = 0; i < CAL_ENGINE_COUNT; i++)
    assert_int_equal(cal_engine_parse(cal_engine_name((cal_engine_t)i)), i);
  for (int i = 0; i < CAL_DTYPE_COUNT; i++)
    assert_int_equal(cal_kdtype_parse(cal_kdtype_name((cal_kdtype_t)i)), i);
  for (int i = 0; i < CAL_FAMILY_COUNT; i++)
    assert_int_equal(cal_family_parse(cal_family_name((cal_family_t)i)), i);
  /* the printed strings are the profile's */
  assert_string_equal(cal_engine_name(CAL_ENGINE_BUILTIN), "builtin");
  assert_string_equal(cal_engine_name(CAL_ENGINE_OPENBLAS), "openblas");
  assert_string_equal(cal_engine_name(CAL_ENGINE_ONEDNN), "onednn");
  assert_string_equal(cal_kdtype_name(CAL_DTYPE_INT8), "int8");
  assert_string_equal(cal_family_name(CAL_FAMILY_LM_HEAD), "lm_head");
  /* out of range and unknown */
  assert_string_equal(cal_engine_name(CAL_ENGINE_COUNT), "?");
  assert_string_equal(cal_kdtype_name((cal_kdtype_t)-1), "?");
  assert_int_equal(cal_engine_parse("auto"), -1);
  assert_int_equal(cal_kdtype_parse(NULL), -1);
  assert_int_equal(cal_family_parse("GEMM"), -1);
}

static void kernels_have_names(void **state) {
  (void)state;
  const cal_kernel_t *k;
  for (size_t i = 0; (k = cal_kernel_at(i)); i++) {
    assert_string_not_equal(cal_family_name(k->family), "?");
    assert_string_not_equal(cal_kdtype_name(k->dtype), "?");
    assert_string_equal(cal_kernel_engine(k), cal_engine_name(k->engine));
    /* at most one GEMM kernel per dtype and engine: the GEMM section's
     * slots are sized by the enums */
    const cal_kernel_t *o;
    for (size_t j = i + 1; k->family == CAL_FAMILY_GEMM && (o = cal_kernel_at(j)); j++)
      assert_false(o->family == CAL_FAMILY_GEMM && o->dtype == k->dtype &&
                   o->engine == k->engine);
  }
}

static void engine_rows(void **state) {
  (void)state;
  for (int i = 0; i < CAL_ENGINE_COUNT; i++) {
    const cal_engine_row_t *row = cal_engine_row((cal_engine_t)i);
    assert_non_null(row);
    assert_int_equal(row->id, i);
  }
  assert_null(cal_engine_row(CAL_ENGINE_COUNT));
  assert_null(cal_engine_row(CAL_ENGINE_BUILTIN)->bf16);
  assert_int_equal(cal_engine_default(0), CAL_ENGINE_OPENBLAS);
}

/* The check refuses on a CPU without bf16 instructions, whatever the
 * engine, and answers as the kernels do: the bf16 GEMM kernels' supported
 * is the check for their engine. */
static void bf16_check(void **state) {
  (void)state;
  const char *why = NULL;
  int native = cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16);
  for (int e = 0; e < CAL_ENGINE_COUNT; e++) {
    why = NULL;
    int rc = cal_bf16_supported((cal_engine_t)e, &why);
    if (!native) {
      assert_int_equal(rc, CAL_EUNSUPP);
      assert_string_equal(why, "CPU has no native BF16 instructions "
                               "(AVX512_BF16 or AMX-BF16)");
    } else if (rc < 0) {
      assert_non_null(why);
    }
  }
  const char *gemm16[] = {"sbgemm", "onednn_bf16gemm"};
  for (size_t i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(gemm16[i]);
    assert_non_null(k);
    cal_params_t p = {.m = 1, .n = 1, .k = 1};
    const char *w1 = NULL, *w2 = NULL;
    assert_int_equal(k->supported(&p, &w1), cal_bf16_supported(k->engine, &w2));
    assert_true(w1 == w2 || (w1 && w2 && strcmp(w1, w2) == 0));
  }
  if (!native)
    cal_test_skip("the rest needs a CPU with bf16 instructions");
  /* the default: oneDNN where it runs bf16, the reason of the default */
  cal_engine_t d = cal_engine_default(1);
  why = NULL;
  int rc = cal_bf16_supported(CAL_ENGINE_BUILTIN, &why);
  assert_int_equal(rc, cal_bf16_supported(d, &why) < 0 ? CAL_EUNSUPP : 0);
}

/* Every engine's product computes C = A·B over the caller's buffers in
 * fp32, and again after the inputs change (bound, not copied). */
static void engine_products(void **state) {
  (void)state;
  enum { M = 5, N = 7, K = 3 };
  float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; i++)
    a[i] = (float)(i % 5) - 2.0f;
  for (int i = 0; i < K * N; i++)
    b[i] = (float)(i % 3) * 0.5f;
  int n = 0;
  for (int e = 0; e < CAL_ENGINE_COUNT; e++) {
    const cal_engine_row_t *row = cal_engine_row((cal_engine_t)e);
    if (!row->mm_create)
      continue;
    void *mm = NULL;
    int rc = row->mm_create(CAL_GEMM_F32, M, N, K, a, b, c, &mm);
    if (rc == CAL_EUNSUPP)
      continue; /* oneDNN without a CPU engine */
    assert_int_equal(rc, 0);
    n++;
    assert_non_null(row->mm_impl(mm));
    for (int pass = 0; pass < 2; pass++) {
      a[0] = (float)pass;
      memset(c, 0xff, sizeof c);
      assert_int_equal(row->mm_run(mm), 0);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double want = 0;
          for (int k = 0; k < K; k++)
            want += (double)a[i * K + k] * b[k * N + j];
          assert_true(fabs(c[i * N + j] - want) < 1e-5);
        }
    }
    row->mm_free(mm);
    mm = NULL;
    assert_int_equal(row->mm_create(CAL_GEMM_F32, 0, N, K, a, b, c, &mm), CAL_EINVAL);
    row->mm_free(mm);
  }
  assert_true(n >= 1); /* OpenBLAS always */
}

CAL_TEST_MAIN(
    cmocka_unit_test(names_round_trip), cmocka_unit_test(kernels_have_names),
    cmocka_unit_test(engine_rows), cmocka_unit_test(bf16_check),
    cmocka_unit_test(engine_products))
