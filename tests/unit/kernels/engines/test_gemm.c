/* The GEMM kernels of every engine and dtype: every entry of C checked on
 * small and ragged shapes at one and two threads, corrupted results
 * caught, support as the CPU's feature bits and the libraries say; the
 * section's engine plan and headline choice, and its profile keys.  No
 * timed asserts. */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_bf16.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "cal_mem.h"
#include "gemm_data.h"
#include "gemm_json.h"
#include "gemm_onednn.h"
#include "gemm_pick.h"
#include "gemm_sweep.h"
#include "harness.h"
#include "kernel.h"
#include "results.h"
#include "run.h"
#include "test_util.h"

/* m, n, k: degenerate, ragged (primes, not multiples of any register
 * block), thin and square */
static const int64_t shapes[][3] = {
    {1, 1, 1}, {1, 37, 5}, {29, 1, 3}, {67, 45, 129}, {97, 61, 263},
    {3, 130, 17}, {128, 128, 128},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static int is_gemm(const cal_kernel_t *k) { return k->family == CAL_FAMILY_GEMM; }

/* Whether kernel k should run on this machine, decided apart from the
 * kernel's own answer: bf16 needs native BF16 instructions (and for
 * OpenBLAS a library that exports cblas_sbgemm; for oneDNN, when
 * DNNL_MAX_CPU_ISA caps it, an ISA with BF16 under the cap); the rest
 * always runs.  Running this test with DNNL_MAX_CPU_ISA=AVX2 or
 * AVX512_CORE checks oneDNN's older code paths on a newer CPU. */
static int expect_supported(const cal_kernel_t *k) {
  if (k->dtype != CAL_DTYPE_BF16)
    return 1;
  if (!(cal_isa_features() & (CAL_ISA_AVX512BF16 | CAL_ISA_AMX_BF16)))
    return 0;
  if (k->engine == CAL_ENGINE_OPENBLAS)
    return dlsym(RTLD_DEFAULT, "cblas_sbgemm") != NULL;
  const char *cap = getenv("DNNL_MAX_CPU_ISA");
  if (cap && *cap)
    return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core_bf16) ==
           dnnl_cpu_isa_avx512_core_bf16;
  return 1;
}

static double in_at(const cal_gemm_data_t *d, int which, size_t i) {
  const void *x = which ? d->b : d->a;
  switch (d->dt) {
  case CAL_GEMM_F32: return ((const float *)x)[i];
  case CAL_GEMM_F64: return ((const double *)x)[i];
  case CAL_GEMM_BF16: {
    uint32_t u = (uint32_t)((const uint16_t *)x)[i] << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  default:
    return which ? ((const int8_t *)x)[i] : ((const uint8_t *)x)[i];
  }
}

/* Every entry of C against a double-precision product of the same
 * inputs: exactly for int8, else within the kernels' own tolerance. */
static void check_every_entry(const cal_gemm_data_t *d) {
  for (int64_t i = 0; i < d->m; i++)
    for (int64_t j = 0; j < d->n; j++) {
      double ref = 0, mag = 0;
      for (int64_t l = 0; l < d->k; l++) {
        double p = in_at(d, 0, (size_t)(i * d->k + l)) *
                   in_at(d, 1, (size_t)(l * d->n + j));
        ref += p;
        mag += fabs(p);
      }
      size_t at = (size_t)(i * d->n + j);
      double got = d->dt == CAL_GEMM_F64    ? ((const double *)d->c)[at]
                   : d->dt == CAL_GEMM_U8S8 ? ((const int32_t *)d->c)[at]
                                            : ((const float *)d->c)[at];
      double u = d->dt == CAL_GEMM_F64 ? 0x1.0p-53 : 0x1.0p-24;
      double tol = d->dt == CAL_GEMM_U8S8
                       ? 0
                       : (4.0 * sqrt((double)d->k) + 8.0) * u * mag + 1e-30;
      if (!(fabs(got - ref) <= tol))
        fail_msg("C[%lld,%lld] = %.9g, expected %.9g (m=%lld n=%lld k=%lld)",
                 (long long)i, (long long)j, got, ref, (long long)d->m,
                 (long long)d->n, (long long)d->k);
    }
}

/* Every entry right and the engine's name for what ran. */
static const cal_kernel_t *current_kernel;

static void check_result(void *st) {
  check_every_entry(st);
  const cal_kernel_t *k = current_kernel;
  if (k->impl_name) {
    const char *impl = k->impl_name(st);
    assert_non_null(impl);
    assert_true(strlen(impl) > 0);
  }
}

/* The kernel's life (test_util.h) with every entry of C checked. */
static void check_shape(const cal_kernel_t *k, const cal_params_t *p) {
  current_kernel = k;
  cal_test_kernel_life(k, p, check_result, cal_gemm_test_corrupt);
}

static void every_engine_and_dtype(void **state) {
  (void)state;
  int nk = 0;
  const cal_kernel_t *k;
  for (size_t i = 0; (k = cal_kernel_at(i)); i++) {
    assert_non_null(cal_kernel_engine(k));
    if (!is_gemm(k))
      continue;
    nk++;
    assert_int_not_equal(k->engine, CAL_ENGINE_BUILTIN); /* a library kernel names its library */
    cal_params_t p = {.m = 8, .n = 8, .k = 8, .seed = 11};
    const char *why = NULL;
    int ok = !k->supported || k->supported(&p, &why) == 0;
    if (!expect_supported(k)) {
      assert_false(ok);
      assert_non_null(why);
      void *st = NULL;
      assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
      assert_null(st);
      continue;
    }
    assert_true(ok);
    for (int t = 1; t <= 2; t++) {
      omp_set_num_threads(t);
      for (size_t s = 0; s < NSHAPES; s++) {
        p = (cal_params_t){.m = shapes[s][0], .n = shapes[s][1],
                           .k = shapes[s][2], .threads = t, .seed = 5 + s};
        check_shape(k, &p);
      }
    }
  }
  assert_true(nk >= 6); /* OpenBLAS fp32/fp64/bf16, oneDNN fp32/bf16/int8 */
}

/* The engines and dtypes the issue names are in the table. */
static void kernel_table_has_engines(void **state) {
  (void)state;
  static const char *const want[][3] = {
      {"sgemm", "openblas", "fp32"}, {"dgemm", "openblas", "fp64"},
      {"sbgemm", "openblas", "bf16"}, {"onednn_sgemm", "onednn", "fp32"},
      {"onednn_bf16gemm", "onednn", "bf16"},
      {"onednn_u8s8gemm", "onednn", "int8"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const cal_kernel_t *k = cal_kernel_find(want[i][0]);
    assert_non_null(k);
    assert_string_equal(cal_kernel_engine(k), want[i][1]);
    assert_string_equal(cal_kdtype_name(k->dtype), want[i][2]);
    cal_params_t p = {.m = 3, .n = 5, .k = 7};
    assert_double_equal(k->flops(&p), 2.0 * 3 * 5 * 7, 0);
  }
  assert_string_equal(cal_kernel_engine(cal_kernel_find("fma_f32")), "builtin");
  /* int8 bytes: 1-byte inputs, 4-byte output */
  cal_params_t p = {.m = 2, .n = 3, .k = 4};
  assert_double_equal(cal_kernel_find("onednn_u8s8gemm")->bytes(&p),
                      2 * 4 + 4 * 3 + 4.0 * 2 * 3, 0);
  void *st = NULL;
  cal_params_t bad = {.m = 4, .n = 0, .k = 4};
  assert_int_equal(cal_kernel_find("onednn_sgemm")->setup(&bad, &st), CAL_EINVAL);
  assert_null(st);
}

/* The harness copies the engine's implementation name into the point. */
static void harness_records_impl(void **state) {
  (void)state;
  cal_harness_cfg_t cfg;
  cal_test_harness_cfg(&cfg, 3, 0.001, 0);
  cal_params_t p = {.m = 64, .n = 48, .k = 80, .threads = 1, .seed = 1};
  cal_point_t pt;
  omp_set_num_threads(1);
  assert_int_equal(cal_bench_kernel(&cfg, NULL, cal_kernel_find("onednn_u8s8gemm"),
                                    &p, &pt), 0);
  assert_int_equal(pt.status, CAL_POINT_OK);
  assert_true(strlen(pt.impl) > 0);
  cal_point_free(&pt);
  assert_int_equal(cal_bench_kernel(&cfg, NULL, cal_kernel_find("sgemm"), &p, &pt), 0);
  assert_string_equal(pt.impl, "");
  cal_point_free(&pt);
}

/* One oneDNN matmul with every combination of its flags (A, B stored
 * transposed; C += A·B), fp32 and, where it runs natively, bf16, on a
 * ragged shape: every entry exact (small integers: every product and sum
 * exact in fp32); then the same primitive bound to a second set of
 * buffers computes from those.  In bf16 where *state is set. */
static void onednn_mm_flags(void **state) {
  int bf = *state != NULL;
  const int64_t m = 37, n = 29, k = 53;
  const char *why = NULL;
  omp_set_num_threads(2);
  cal_gemm_dt_t dt = bf ? CAL_GEMM_BF16 : CAL_GEMM_F32;
  if (cal_onednn_supported(dt, &why) < 0)
    cal_test_skip("oneDNN %s not checked: %s", bf ? "bf16" : "fp32", why);
  size_t es = bf ? 2 : 4;
  void *a[2], *b[2];
  float *c[2], *c0 = malloc(4 * (size_t)(m * n));
  double *ref = malloc(8 * (size_t)(m * n));
  assert_non_null(c0);
  assert_non_null(ref);
  for (int s = 0; s < 2; s++) {
    a[s] = malloc(es * (size_t)(m * k));
    b[s] = malloc(es * (size_t)(k * n));
    c[s] = malloc(4 * (size_t)(m * n));
    assert_true(a[s] && b[s] && c[s]);
  }
  for (unsigned fl = 0; fl < 8; fl++) {
    int ta = fl & CAL_ONEDNN_MM_TRANS_A, tb = fl & CAL_ONEDNN_MM_TRANS_B;
    int acc = (fl & CAL_ONEDNN_MM_ACCUMULATE) != 0;
    /* set s: a(i,l) = (i + 2l + s) % 7 - 3, b(l,j) = (3l + j + s) % 5 - 2,
     * stored as the flags say */
    for (int s = 0; s < 2; s++) {
      for (int64_t i = 0; i < m; i++)
        for (int64_t l = 0; l < k; l++) {
          float v = (float)((i + 2 * l + s) % 7 - 3);
          size_t at = (size_t)(ta ? l * m + i : i * k + l);
          if (bf)
            ((uint16_t *)a[s])[at] = cal_f32_to_bf16(v);
          else
            ((float *)a[s])[at] = v;
        }
      for (int64_t l = 0; l < k; l++)
        for (int64_t j = 0; j < n; j++) {
          float v = (float)((3 * l + j + s) % 5 - 2);
          size_t at = (size_t)(tb ? j * k + l : l * n + j);
          if (bf)
            ((uint16_t *)b[s])[at] = cal_f32_to_bf16(v);
          else
            ((float *)b[s])[at] = v;
        }
    }
    cal_onednn_mm_t *mm = NULL;
    assert_int_equal(cal_onednn_mm_create_ex(dt, m, n, k, fl, a[0], b[0],
                                             c[0], &mm), 0);
    assert_null(strstr(cal_onednn_mm_impl(mm), "ref"));
    for (int s = 0; s < 2; s++) {
      if (s)
        assert_int_equal(cal_onednn_mm_bind(mm, a[1], b[1], c[1]), 0);
      for (int64_t i = 0; i < m * n; i++)
        c[s][i] = c0[i] = (float)(i % 11) - 5.0f;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double r = acc ? c0[i * n + j] : 0.0;
          for (int64_t l = 0; l < k; l++)
            r += (double)((i + 2 * l + s) % 7 - 3) *
                 (double)((3 * l + j + s) % 5 - 2);
          ref[i * n + j] = r;
        }
      assert_int_equal(cal_onednn_mm_run(mm), 0);
      for (int64_t i = 0; i < m * n; i++)
        if (c[s][i] != ref[i])
          fail_msg("%s flags %u set %d: C[%lld] = %g, expected %g",
                   bf ? "bf16" : "fp32", fl, s, (long long)i, c[s][i], ref[i]);
    }
    cal_onednn_mm_free(mm);
  }
  /* unknown flags and a NULL buffer refused */
  cal_onednn_mm_t *mm = NULL;
  assert_int_equal(cal_onednn_mm_create_ex(dt, m, n, k, 8, a[0], b[0], c[0], &mm),
                   CAL_EINVAL);
  assert_int_equal(cal_onednn_mm_create_ex(dt, m, n, k, 0, a[0], NULL, c[0], &mm),
                   CAL_EINVAL);
  assert_null(mm);
  for (int s = 0; s < 2; s++) {
    free(a[s]);
    free(b[s]);
    free(c[s]);
  }
  free(c0);
  free(ref);
}

static const cal_gemm_dtype_t *dtype_of(const cal_gemm_result_t *g, const char *dt) {
  for (size_t i = 0; i < g->ndtypes; i++)
    if (strcmp(g->dtypes[i].dtype, dt) == 0)
      return &g->dtypes[i];
  return NULL;
}

/* The plan groups the table's GEMM kernels by dtype; a forced engine
 * leaves the others unselected and a dtype it lacks unsupported, with
 * the reason. */
static void plan_by_engine(void **state) {
  (void)state;
  cal_gemm_result_t g;
  memset(&g, 0, sizeof g);
  cal_gemm_plan(&g, "auto");
  assert_int_equal(g.ndtypes, 4);
  const cal_gemm_dtype_t *f32 = dtype_of(&g, "fp32");
  assert_non_null(f32);
  assert_int_equal(f32->nengines, 2);
  assert_true(f32->engines[0].selected && f32->engines[1].selected);
  assert_string_equal(dtype_of(&g, "int8")->metric, "gops");
  assert_string_equal(f32->metric, "gflops");

  memset(&g, 0, sizeof g);
  cal_gemm_plan(&g, "onednn");
  const cal_gemm_dtype_t *f64 = dtype_of(&g, "fp64");
  assert_false(f64->supported);
  assert_non_null(strstr(f64->why, "--gemm-engine"));
  f32 = dtype_of(&g, "fp32");
  assert_true(f32->supported);
  assert_false(f32->engines[0].selected); /* sgemm */
  assert_true(f32->engines[1].selected);

  memset(&g, 0, sizeof g);
  cal_gemm_plan(&g, "openblas");
  assert_false(dtype_of(&g, "int8")->supported);
  assert_true(dtype_of(&g, "fp64")->supported);
}

static void set_best(cal_gemm_engine_t *e, const char *kernel, double g1, double g2) {
  e->kernel = cal_kernel_find(kernel);
  e->selected = e->supported = 1;
  e->best[0] = (cal_gemm_best_t){.kernel = e->kernel, .gflops = g1, .n = 512};
  e->best[1] = (cal_gemm_best_t){.kernel = e->kernel, .gflops = g2, .n = 1024};
  snprintf(e->best[1].impl, sizeof e->best[1].impl, "%s", "impl-x");
}

/* g's dtype i, supported, of `nengines` engines. */
static cal_gemm_dtype_t *dtype_init(cal_gemm_result_t *g, size_t i,
                                    cal_kdtype_t kdtype, const char *name,
                                    const char *metric, int nengines) {
  cal_gemm_dtype_t *d = &g->dtypes[i];
  d->kdtype = kdtype;
  d->dtype = name;
  d->metric = metric;
  d->supported = 1;
  d->nengines = nengines;
  return d;
}

/* The headline is the best verified engine's, per thread count; an
 * engine with a failed point never wins; ties go to the first. */
static void headline_pick(void **state) {
  (void)state;
  cal_gemm_result_t g = {.ndtypes = 1};
  cal_gemm_dtype_t *d =
      dtype_init(&g, 0, CAL_DTYPE_FP32, "fp32", "gflops", 2);
  set_best(&d->engines[0], "sgemm", 100, 300);
  set_best(&d->engines[1], "onednn_sgemm", 120, 250);
  cal_gemm_pick(d);
  cal_gemm_pick_fp32(&g);
  assert_ptr_equal(d->best[0].kernel, cal_kernel_find("onednn_sgemm"));
  assert_ptr_equal(d->best[1].kernel, cal_kernel_find("sgemm"));
  assert_double_equal(g.sgemm_best[0], 120, 0);
  assert_double_equal(g.sgemm_best[1], 300, 0);
  assert_int_equal(g.sgemm_best_n[1], 1024);
  assert_ptr_equal(cal_gemm_best(&g, CAL_DTYPE_FP32, 1), &d->best[1]);
  assert_null(cal_gemm_best(&g, CAL_DTYPE_BF16, 1));

  d->engines[1].failed = 1; /* a wrong answer is never the headline */
  cal_gemm_pick(d);
  assert_ptr_equal(d->best[0].kernel, cal_kernel_find("sgemm"));
  d->engines[0].failed = 1;
  cal_gemm_pick(d);
  assert_null(d->best[0].kernel);
  assert_null(cal_gemm_best(&g, CAL_DTYPE_FP32, 0));

  d->engines[0].failed = d->engines[1].failed = 0;
  set_best(&d->engines[1], "onednn_sgemm", 100, 300);
  cal_gemm_pick(d);
  assert_ptr_equal(d->best[0].kernel, cal_kernel_find("sgemm"));
}

/* gemm_best: headline figures under the seed keys' names, int8 in GOPS,
 * the engine and its implementation named, unsupported with a reason. */
static void best_map_json(void **state) {
  (void)state;
  cal_gemm_result_t g = {.ndtypes = 2};
  cal_gemm_dtype_t *d = dtype_init(&g, 0, CAL_DTYPE_INT8, "int8", "gops", 1);
  set_best(&d->engines[0], "onednn_u8s8gemm", 400, 800);
  cal_gemm_pick(d);
  cal_gemm_dtype_t *b = dtype_init(&g, 1, CAL_DTYPE_BF16, "bf16", "gflops", 0);
  b->supported = 0;
  snprintf(b->why, sizeof b->why, "%s", "no BF16");
  json_t *o = cal_gemm_best_json(&g);
  assert_non_null(o);
  json_t *i8 = json_object_get(o, "int8");
  assert_double_equal(json_number_value(json_object_get(i8, "gops_per_core")), 400, 0);
  assert_double_equal(json_number_value(json_object_get(i8, "gops")), 800, 0);
  assert_null(json_object_get(i8, "gflops"));
  assert_string_equal(json_string_value(json_object_get(i8, "engine")), "onednn");
  assert_string_equal(json_string_value(json_object_get(i8, "impl")), "impl-x");
  assert_int_equal(json_integer_value(json_object_get(
                       json_object_get(i8, "per_core"), "n")), 512);
  json_t *bf = json_object_get(o, "bf16");
  assert_string_equal(json_string_value(json_object_get(bf, "status")), "unsupported");
  assert_string_equal(json_string_value(json_object_get(bf, "reason")), "no BF16");
  json_decref(o);
}

/* The sweep's evidence rule: clearly higher, no meaningful gain (below
 * the best median + 2% with the CI's confidence), or too wide to tell. */
static void trend_rule(void **state) {
  (void)state;
  cal_summary_t best = {.median = 100, .ci_low = 98, .ci_high = 102};
  cal_summary_t x = {.median = 105, .ci_low = 103, .ci_high = 107};
  assert_int_equal(cal_gemm_trend(&best, &x), 1);
  x = (cal_summary_t){.median = 101, .ci_low = 99, .ci_high = 101.9};
  assert_int_equal(cal_gemm_trend(&best, &x), -1);
  x = (cal_summary_t){.median = 96, .ci_low = 94, .ci_high = 97};
  assert_int_equal(cal_gemm_trend(&best, &x), -1);
  /* a 5% gain whose interval still reaches below the best's top: the
   * curve may still rise, so it is no evidence of a plateau */
  x = (cal_summary_t){.median = 105, .ci_low = 101, .ci_high = 109};
  assert_int_equal(cal_gemm_trend(&best, &x), 0);
  x = (cal_summary_t){.median = 100, .ci_low = 90, .ci_high = 110};
  assert_int_equal(cal_gemm_trend(&best, &x), 0);
}

/* Sizes are ranked on the median less a robust spread: one slow sample
 * among seven (a 2-thread point's samples from one run) does not hand the
 * best to a size 6% slower, and a wide spread still ranks below a tight
 * one with the same median. */
static void rank_rule(void **state) {
  (void)state;
  const double n512[7] = {225, 225, 223, 225, 227, 213, 171};
  const double n1024[7] = {214, 211, 214, 215, 210, 211, 211};
  cal_summary_t a, b;
  assert_int_equal(cal_summarize(n512, 7, 0.95, &a), 0);
  assert_int_equal(cal_summarize(n1024, 7, 0.95, &b), 0);
  assert_true(a.ci_low < b.ci_low); /* the old rule picked 1024 */
  assert_true(cal_gemm_rank(&a) > cal_gemm_rank(&b));
  const double wide[7] = {150, 175, 190, 200, 210, 225, 250};
  const double tight[7] = {198, 199, 200, 200, 200, 201, 202};
  assert_int_equal(cal_summarize(wide, 7, 0.95, &a), 0);
  assert_int_equal(cal_summarize(tight, 7, 0.95, &b), 0);
  assert_true(cal_gemm_rank(&a) < cal_gemm_rank(&b));
}

/* On a loaded machine a size's spread can pass its median (a rank below
 * 0): the first size measured still takes the best place, or a sweep of
 * such sizes had no figure at all; later ones must rank higher. */
static void first_size_is_best(void **state) {
  (void)state;
  const double loaded[3] = {4, 60, 150};
  const double later[3] = {5, 61, 160};
  cal_summary_t a, b;
  assert_int_equal(cal_summarize(loaded, 3, 0.95, &a), 0);
  assert_int_equal(cal_summarize(later, 3, 0.95, &b), 0);
  assert_true(cal_gemm_rank(&a) < 0);
  cal_gemm_walk_t w = {0};
  assert_true(cal_gemm_beats(&a, &w));
  w.have_best = 1;
  w.best_low = cal_gemm_rank(&a);
  assert_true(cal_gemm_beats(&b, &w));
  w.best_low = cal_gemm_rank(&b);
  assert_false(cal_gemm_beats(&a, &w));
}

/* The engines' state: refused shapes leave *out as it was; a made state
 * has its data and zeroes after it; C starts poisoned.  And the zeroed
 * allocation and the list free it uses. */
static void state_new_and_free(void **state) {
  (void)state;
  typedef struct {
    cal_gemm_data_t d;
    int tail[16];
  } engine_state_t;
  cal_params_t p = {.m = 3, .n = 5, .k = 7, .seed = 1};
  cal_params_t bad = p;
  bad.k = 0;
  void *out = &bad;
  assert_int_equal(cal_gemm_state_new(&bad, CAL_GEMM_F32,
                                      sizeof(engine_state_t), &out),
                   CAL_EINVAL);
  assert_ptr_equal(out, &bad);
  assert_int_equal(cal_gemm_state_new(&p, CAL_GEMM_BF16,
                                      sizeof(engine_state_t), &out), 0);
  engine_state_t *s = out;
  assert_int_equal(s->d.dt, CAL_GEMM_BF16);
  assert_true(s->d.m == 3 && s->d.n == 5 && s->d.k == 7);
  for (int i = 0; i < 16; i++)
    assert_int_equal(s->tail[i], 0);
  assert_int_equal(cal_gemm_data_verify(&s->d), CAL_EVERIFY);
  cal_gemm_state_free(s);
  cal_gemm_state_free(NULL);
  unsigned char *z = cal_zalloc(1000);
  assert_non_null(z);
  for (int i = 0; i < 1000; i++)
    assert_int_equal(z[i], 0);
  assert_null(cal_zalloc(0));
  cal_free_each(z, NULL);
}

CAL_TEST_MAIN(
    cmocka_unit_test(kernel_table_has_engines),
    cmocka_unit_test(state_new_and_free),
    cmocka_unit_test(every_engine_and_dtype),
    cmocka_unit_test(harness_records_impl), cmocka_unit_test(onednn_mm_flags),
    cal_unit_test_bf16(onednn_mm_flags), cmocka_unit_test(plan_by_engine),
    cmocka_unit_test(headline_pick), cmocka_unit_test(trend_rule),
      cmocka_unit_test(rank_rule), cmocka_unit_test(first_size_is_best),
    cmocka_unit_test(best_map_json))
