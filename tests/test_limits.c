/* Machine-limits kernels and arithmetic: FMA/dot-product chains and stream
 * arrays checked against their closed forms in every variant this CPU has
 * (and refused in the ones it lacks), corrupted results caught, ceilings,
 * ridge points, working sets and the profile sections.  No timed asserts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "clock.h"
#include "compute_peak.h"
#include "harness.h"
#include "kernel.h"
#include "limits_json.h"
#include "profile.h"
#include "roofline.h"
#include "stream.h"
#include "test_util.h"
#include "worksets.h"

/* The Sapphire Rapids row (two FMA-512 pipes, AMX). */
static const cal_uarch_t *spr_row(void) {
  return cal_uarch_lookup("GenuineIntel", 6, 0x8F,
                          "Intel(R) Xeon(R) Platinum 8480+", NULL);
}

static const char *const fma_kernels[] = {"fma_f64", "fma_f32", "dp_bf16",
                                          "dp_int8"};
static const char *const stream_kernels[] = {"stream_read", "stream_copy",
                                             "stream_triad"};

/* Whether `name` runs natively in `variant` on this CPU (independently of
 * the kernel's own answer). */
static int expect_native(const char *name, int variant) {
  uint32_t f = cal_isa_features();
  if (!cal_variant_supported(variant))
    return 0;
  if (strcmp(name, "dp_bf16") == 0)
    return variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512BF16);
  if (strcmp(name, "dp_int8") == 0)
    return (variant == CAL_VARIANT_AVX512 && (f & CAL_ISA_AVX512VNNI)) ||
           (variant == CAL_VARIANT_AVX2 && (f & CAL_ISA_AVXVNNI));
  return 1;
}

static void fma_every_variant(void **state) {
  (void)state;
  unsetenv("CALIBRATE_ISA");
  for (size_t i = 0; i < 4; i++) {
    const cal_kernel_t *k = cal_kernel_find(fma_kernels[i]);
    assert_non_null(k);
    assert_string_equal(cal_family_name(k->family), "fma");
    for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
      cal_params_t p;
      memset(&p, 0, sizeof p);
      p.variant = v;
      p.n = 1003; /* not a multiple of the unroll: the tail loop runs too */
      const char *why = NULL;
      if (!expect_native(k->name, v)) {
        assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
        assert_non_null(why);
        void *st = NULL;
        assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
        assert_null(st);
        assert_true(k->flops(&p) == 0.0);
        continue;
      }
      assert_int_equal(k->supported(&p, &why), 0);
      for (int t = 1; t <= 3; t++) {
        p.threads = t;
        cal_test_kernel_life(k, &p, NULL, cal_fma_test_corrupt);
      }
      void *st = NULL;
      assert_int_equal(k->setup(&p, &st), 0);
      const char *vn = k->variant_name(st);
      if (strcmp(k->name, "dp_int8") == 0 && v == CAL_VARIANT_AVX2)
        assert_string_equal(vn, "avx-vnni");
      else
        assert_string_equal(vn, cal_variant_name(v));
      k->teardown(st);
    }
  }
}

static void fma_flops_analytic(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.n = 1000;
  p.threads = 2;
  p.variant = CAL_VARIANT_SCALAR;
  /* 12 chains × 1 lane × 2 flops × 1000 steps × 2 threads */
  assert_double_equal(cal_kernel_find("fma_f64")->flops(&p), 48000.0, 0);
  if (cal_variant_supported(CAL_VARIANT_AVX512)) {
    p.variant = CAL_VARIANT_AVX512;
    /* 16 chains × 8 lanes × 2 × 1000 × 2 */
    assert_double_equal(cal_kernel_find("fma_f64")->flops(&p), 512000.0, 0);
    assert_double_equal(cal_kernel_find("fma_f32")->flops(&p), 1024000.0, 0);
    if (cal_isa_features() & CAL_ISA_AVX512BF16) /* 2 pairs, 2 flops each */
      assert_double_equal(cal_kernel_find("dp_bf16")->flops(&p), 2048000.0, 0);
    if (cal_isa_features() & CAL_ISA_AVX512VNNI) /* 4 pairs, 2 ops each */
      assert_double_equal(cal_kernel_find("dp_int8")->flops(&p), 4096000.0, 0);
  }
  /* the default step count is sized for ~1 ms and is positive */
  p.n = 0;
  p.variant = CAL_VARIANT_AUTO;
  assert_true(cal_kernel_find("fma_f32")->flops(&p) > 1e6);
  assert_null(cal_kernel_find("fma_f32")->bytes);
}

static void fma_rejects_inexact_counts(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.variant = CAL_VARIANT_SCALAR;
  p.n = INT64_C(1) << 30; /* fp32 cannot count that far exactly */
  void *st = NULL;
  assert_int_equal(cal_kernel_find("fma_f32")->setup(&p, &st), CAL_EINVAL);
  p.n = 100;
  p.threads = -1;
  assert_int_equal(cal_kernel_find("fma_f64")->setup(&p, &st), CAL_EINVAL);
  assert_null(st);
}

static void forced_isa_caps_auto(void **state) {
  (void)state;
  const cal_kernel_t *f64 = cal_kernel_find("fma_f64");
  const cal_kernel_t *bf16 = cal_kernel_find("dp_bf16");
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.variant = CAL_VARIANT_AUTO;
  p.n = 64;
  setenv("CALIBRATE_ISA", "scalar", 1);
  void *st = NULL;
  assert_int_equal(f64->setup(&p, &st), 0);
  assert_string_equal(f64->variant_name(st), "scalar");
  f64->teardown(st);
  st = NULL;
  const char *why = NULL;
  assert_int_equal(bf16->supported(&p, &why), CAL_EUNSUPP);
  assert_int_equal(bf16->setup(&p, &st), CAL_EUNSUPP);
  setenv("CALIBRATE_ISA", "nonsense", 1);
  assert_int_equal(f64->setup(&p, &st), CAL_EINVAL);
  unsetenv("CALIBRATE_ISA");
  assert_int_equal(f64->setup(&p, &st), 0);
  int best;
  assert_int_equal(cal_variant_best(&best), 0);
  assert_string_equal(f64->variant_name(st), cal_variant_name(best));
  f64->teardown(st);
  f64->teardown(NULL);
}

static void stream_every_variant(void **state) {
  (void)state;
  unsetenv("CALIBRATE_ISA");
  /* odd sizes: blocks of unequal length, tails past the unrolled loops */
  const int64_t sizes[] = {3 * 8 * 64, 100000, 3 * 8 * 1000 + 777};
  for (size_t i = 0; i < 3; i++) {
    const cal_kernel_t *k = cal_kernel_find(stream_kernels[i]);
    assert_non_null(k);
    for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
      cal_params_t p;
      memset(&p, 0, sizeof p);
      p.variant = v;
      p.bytes = sizes[0];
      p.n = 3; /* passes per run (the default makes 64 MiB of traffic) */
      if (!cal_variant_supported(v)) {
        const char *why = NULL;
        void *st = NULL;
        assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
        assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
        continue;
      }
      for (size_t s = 0; s < 3; s++)
        for (int t = 1; t <= 3; t++) {
          p.bytes = sizes[s];
          p.threads = t;
          cal_test_kernel_life(k, &p, NULL, cal_stream_test_corrupt);
        }
    }
  }
}

static void stream_traffic_counts(void **state) {
  (void)state;
  cal_params_t p;
  memset(&p, 0, sizeof p);
  p.bytes = 24000 + 100; /* triad: 1004 doubles per array -> 1000 */
  double counted, actual;
  /* by default a run passes over small arrays until 64 MiB are counted */
  assert_int_equal(cal_stream_passes("stream_triad", &p), 2797);
  assert_int_equal(cal_stream_traffic("stream_triad", &p, &counted, &actual), 0);
  assert_double_equal(counted, 24000.0 * 2797, 0);
  p.bytes = INT64_C(3) << 30; /* large working sets: one pass */
  assert_int_equal(cal_stream_passes("stream_triad", &p), 1);
  assert_int_equal(cal_stream_passes("sgemm", &p), 0);
  p.bytes = 24000 + 100;
  p.n = 1; /* one pass, as asked */
  assert_int_equal(cal_stream_elems("stream_triad", &p), 1000);
  assert_int_equal(cal_stream_traffic("stream_triad", &p, &counted, &actual), 0);
  assert_double_equal(counted, 24000.0, 0);
  assert_double_equal(actual, 32000.0, 0);
  assert_double_equal(cal_kernel_find("stream_triad")->bytes(&p), 24000.0, 0);
  assert_double_equal(cal_kernel_find("stream_triad")->flops(&p), 2000.0, 0);
  /* copy: 1506 doubles per array -> 1504 */
  assert_int_equal(cal_stream_traffic("stream_copy", &p, &counted, &actual), 0);
  assert_double_equal(counted, 16.0 * 1504, 0);
  assert_double_equal(actual, 24.0 * 1504, 0);
  assert_int_equal(cal_stream_traffic("stream_read", &p, &counted, &actual), 0);
  assert_double_equal(counted, 8.0 * 3008, 0);
  assert_double_equal(actual, counted, 0);
  assert_int_equal(cal_stream_traffic("sgemm", &p, &counted, &actual), CAL_EINVAL);
  /* too small for one line per array */
  p.bytes = 100;
  void *st = NULL;
  assert_int_equal(cal_kernel_find("stream_triad")->setup(&p, &st), CAL_EINVAL);
  assert_null(st);
}

static void clock_arithmetic(void **state) {
  (void)state;
  /* 3e9 one-cycle adds in 1 s: 3 GHz; 1e9 four-cycle ops in 2 s: 2 GHz */
  assert_double_equal(cal_clock_ghz_from_chain(3e9, 1, 1.0), 3.0, 1e-12);
  assert_double_equal(cal_clock_ghz_from_chain(1e9, 4, 2.0), 2.0, 1e-12);
  assert_double_equal(cal_clock_ghz_from_chain(1e9, 1, 0.0), 0.0, 0);
  assert_double_equal(cal_clock_ghz_from_chain(-1, 1, 1.0), 0.0, 0);
  /* a real measurement runs in every variant the CPU has; only sanity */
  for (int v = 0; v < CAL_VARIANT_COUNT; v++) {
    cal_clock_t c;
    int rc = cal_clock_measure(v, 1e-4, &c);
    if (!cal_variant_supported(v)) {
      assert_int_equal(rc, CAL_EUNSUPP);
      continue;
    }
    assert_int_equal(rc, 0);
    assert_true(c.ghz > 0 && isfinite(c.ghz));
    assert_int_equal(c.n, CAL_CLOCK_SAMPLES);
    assert_int_equal(c.variant, v);
    assert_non_null(c.method);
  }
  /* the chains compute what they say: 64 adds of 1 per iteration */
  assert_int_equal(cal_clock_chain_scalar(10, 5), 5 + 10 * CAL_CLOCK_CHAIN_LEN);
  if (cal_variant_supported(CAL_VARIANT_AVX512))
    assert_int_equal(cal_clock_chain_avx512(3, 0), 3 * CAL_CLOCK_CHAIN_LEN);
  if (cal_variant_supported(CAL_VARIANT_AVX2))
    assert_int_equal(cal_clock_chain_avx2(3, 0), 3 * CAL_CLOCK_CHAIN_LEN);
}

static void peak_model_arithmetic(void **state) {
  (void)state;
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP64, 512), 16, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 512), 32, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_BF16, 512), 64, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_INT8, 512), 128, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 256), 16, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP32, 0), 2, 0);
  assert_double_equal(cal_ops_per_instr(CAL_DT_INT8, 0), 0, 0);
  assert_double_equal(cal_ops_per_instr(7, 512), 0, 0);

  cal_theory_t m;
  uint32_t all = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI;
  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_AVX512, all, 2.5, 2), 0);
  /* 8 lanes × 2 flops × 2 FMAs × 2.5 GHz = 80 per core, 160 for 2 */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 80.0, 1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP64), 160.0, 1e-9);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP32), 160.0, 1e-9);
  /* vdpbf16ps: 64 flops per instruction, one per 2 cycles */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_BF16), 80.0, 1e-9);
  /* vpdpbusd: 128 ops, 2 per cycle */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_INT8), 640.0, 1e-9);
  assert_non_null(strstr(m.assumption, "2 FMA pipes of 512 bits"));
  assert_non_null(strstr(m.assumption, "intel-sapphire-rapids"));
  /* the row is never changed by a measurement: a loop at one FMA a cycle
   * (41 of 80) says the row is wrong, one at 150 of 160 agrees, one at
   * twice the row's rate says so too */
  char note[320];
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP64, 41.0, note, sizeof note),
                   CAL_THEORY_SLOWER);
  assert_non_null(strstr(note, "fp64 loop on 512-bit vectors ran 1.02"));
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 80.0, 1e-9);
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 150.0, note, sizeof note),
                   CAL_THEORY_AGREES);
  assert_string_equal(note, "");
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP32, 320.0, note, sizeof note),
                   CAL_THEORY_FASTER);
  assert_int_equal(cal_theory_check(&m, CAL_DT_FP16, 1.0, note, sizeof note),
                   CAL_THEORY_AGREES); /* no fp16 rate without the bit */
  assert_int_equal(cal_theory_check(&m, 99, 1.0, NULL, 0), CAL_THEORY_AGREES);

  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_AVX2, 0, 3.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP64), 48.0, 1e-9);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_BF16), 0.0, 0);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_INT8), 0.0, 0);
  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_SCALAR, 0, 2.0, 4), 0);
  assert_double_equal(cal_theory_gflops(&m, CAL_DT_FP32), 2.0 * 2 * 2.0 * 4, 1e-9);
  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_AVX2, 0, 0.0, 1),
                   CAL_EINVAL);
  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_AVX2, 0, 1.0, 0),
                   CAL_EINVAL);
  assert_int_equal(cal_theory_init(&m, spr_row(), 9, 0, 1.0, 1), CAL_EINVAL);
}

static void roofline_arithmetic(void **state) {
  (void)state;
  /* 100 GFLOPS over 20 GB/s: ridge at 5 FLOP/byte */
  assert_double_equal(cal_ridge_point(100, 20), 5.0, 1e-12);
  assert_double_equal(cal_ridge_point(0, 20), 0.0, 0);
  assert_double_equal(cal_attainable_gflops(100, 20, 2), 40.0, 1e-12);
  assert_double_equal(cal_attainable_gflops(100, 20, 5), 100.0, 1e-12);
  assert_double_equal(cal_attainable_gflops(100, 20, 50), 100.0, 1e-12);
  cal_bound_t b;
  double eff;
  assert_int_equal(cal_roofline_classify(100, 20, 2, 30, &b, &eff), 0);
  assert_int_equal(b, CAL_BOUND_MEMORY);
  assert_double_equal(eff, 0.75, 1e-12);
  assert_int_equal(cal_roofline_classify(100, 20, 10, 90, &b, &eff), 0);
  assert_int_equal(b, CAL_BOUND_COMPUTE);
  assert_double_equal(eff, 0.9, 1e-12);
  assert_string_equal(cal_bound_name(b), "compute");
  assert_int_equal(cal_roofline_classify(100, 0, 10, 90, &b, &eff), CAL_EINVAL);
  assert_int_equal(cal_roofline_classify(100, 20, 10, -1, &b, &eff), CAL_EINVAL);

  cal_roofline_t r;
  memset(&r, 0, sizeof r);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "L1", 200, "stream_read"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 10, "stream_triad"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 12, "stream_read"), 0);
  assert_int_equal(cal_roofline_add_bandwidth(&r, "memory", 11, "stream_copy"), 0);
  assert_int_equal(r.nlevels, 2);
  assert_double_equal(cal_roofline_gbps(&r, "memory"), 12.0, 0);
  assert_string_equal(r.bandwidth_kernel[1], "stream_read");
  assert_double_equal(cal_roofline_gbps(&r, "L2"), 0.0, 0);
  assert_int_equal(cal_roofline_add_compute(&r, CAL_DT_FP64, 80, "fma_f64"), 0);
  assert_int_equal(cal_roofline_add_compute(&r, 9, 80, "x"), CAL_EINVAL);
  assert_int_equal(cal_roofline_add_compute(&r, CAL_DT_FP64, NAN, "x"), CAL_EINVAL);
  int dt;
  assert_int_equal(cal_ceiling_dtype_parse("bf16", &dt), 0);
  assert_int_equal(dt, CAL_DT_BF16);
  assert_int_equal(cal_ceiling_dtype_parse("fp8", &dt), CAL_EINVAL);
}

static void worksets_from_caches(void **state) {
  (void)state;
  /* 48 KiB L1d and 2 MiB L2 per core, 260 MiB L3 shared by 2 cores */
  cal_cache_sizes_t c = {48 << 10, 2 << 20, INT64_C(260) << 20, 1, 1, 2};
  cal_workset_t ws[CAL_WS_MAX_LEVELS];
  size_t n;
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, 0, ws, &n), 0);
  assert_int_equal(n, 4);
  assert_string_equal(ws[0].level, "L1");
  assert_int_equal(ws[0].bytes, 24 << 10);
  assert_string_equal(ws[1].level, "L2");
  assert_int_equal(ws[1].bytes, 1 << 20);
  assert_string_equal(ws[2].level, "L3");
  assert_int_equal(ws[2].bytes, INT64_C(8) << 20); /* 4 × the 2 MiB L2 */
  assert_string_equal(ws[3].level, "memory");
  assert_int_equal(ws[3].bytes, INT64_C(1040) << 20);
  assert_false(ws[3].capped);
  /* a time budget caps memory, but never below twice the capacity the L3
   * point stands for (2 × its 8 MiB working set) */
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(600) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(600) << 20);
  assert_true(ws[3].capped);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(100) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(100) << 20);
  assert_true(ws[3].capped);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 4.0, INT64_C(20) << 20, ws, &n), 0);
  assert_int_equal(ws[3].bytes, INT64_C(32) << 20);
  assert_true(ws[3].capped);
  assert_false(ws[2].capped);
  /* two threads: private levels double; memory follows the whole L3 */
  assert_int_equal(cal_bandwidth_worksets(&c, 2, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[0].bytes, 48 << 10);
  assert_int_equal(ws[1].bytes, 2 << 20);
  assert_int_equal(ws[2].bytes, INT64_C(16) << 20);
  assert_int_equal(ws[3].bytes, INT64_C(1040) << 20);
  /* three threads span two L3 instances: memory follows both */
  assert_int_equal(cal_bandwidth_worksets(&c, 3, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[2].bytes, INT64_C(24) << 20);
  assert_int_equal(ws[3].bytes, INT64_C(2080) << 20);
  /* a small shared L3 (8 MiB over 4 cores of 512 KiB L2): half of it */
  cal_cache_sizes_t desk = {32 << 10, 512 << 10, 8 << 20, 1, 1, 4};
  assert_int_equal(cal_bandwidth_worksets(&desk, 4, 4.0, 0, ws, &n), 0);
  assert_int_equal(ws[2].bytes, 4 << 20);
  /* no L3: memory from L2, at least 64 MiB */
  cal_cache_sizes_t small = {32 << 10, 1 << 20, 0, 0, 0, 0};
  assert_int_equal(cal_bandwidth_worksets(&small, 1, 4.0, 0, ws, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(ws[2].level, "memory");
  assert_int_equal(ws[2].bytes, INT64_C(64) << 20);
  cal_cache_sizes_t none = {0, 0, 0, 0, 0, 0};
  assert_int_equal(cal_bandwidth_worksets(&none, 1, 4.0, 0, ws, &n), CAL_EINVAL);
  assert_int_equal(cal_bandwidth_worksets(&c, 0, 4.0, 0, ws, &n), CAL_EINVAL);
  assert_int_equal(cal_bandwidth_worksets(&c, 1, 0.5, 0, ws, &n), CAL_EINVAL);
}

static void staircase_sizes(void **state) {
  (void)state;
  int64_t s[64];
  /* 4 KiB .. 1 MiB, 2 per octave: 8 octaves, 17 sizes */
  int n = cal_staircase(4096, 1 << 20, 2, s, 64);
  assert_int_equal(n, 17);
  assert_int_equal(s[0], 4096);
  assert_int_equal(s[1], 6144); /* 4096·√2 = 5793 -> 6 KiB */
  assert_int_equal(s[2], 8192);
  assert_int_equal(s[n - 1], 1 << 20);
  for (int i = 1; i < n; i++) {
    assert_true(s[i] > s[i - 1]);
    assert_int_equal(s[i] % CAL_WS_GRAIN, 0);
  }
  /* counting only, and a top that is not on the grid */
  assert_int_equal(cal_staircase(4096, 1 << 20, 2, NULL, 0), 17);
  n = cal_staircase(4096, 10000, 1, s, 64);
  assert_int_equal(n, 3);
  assert_int_equal(s[2], 10240);
  /* cap smaller than the count: the count is still returned */
  assert_int_equal(cal_staircase(4096, 1 << 20, 2, s, 4), 17);
  assert_int_equal(cal_staircase(0, 10, 1, s, 64), CAL_EINVAL);
  assert_int_equal(cal_staircase(100, 10, 1, s, 64), CAL_EINVAL);
  assert_int_equal(cal_staircase(10, 100, 0, s, 64), CAL_EINVAL);
}

/* a fake ok point with samples: rate r·(1, 1.01, 0.99) */
static void fake_point(cal_point_t *pt, const char *kernel, int threads,
                       double flops, double bytes, double secs) {
  memset(pt, 0, sizeof *pt);
  pt->kernel = cal_kernel_find(kernel);
  assert_non_null(pt->kernel);
  pt->params.threads = threads;
  pt->params.bytes = (int64_t)bytes;
  pt->status = CAL_POINT_OK;
  snprintf(pt->variant, sizeof pt->variant, "avx512");
  pt->flops = flops;
  pt->bytes = bytes;
  pt->m.n = 3;
  pt->m.iters = 10;
  pt->m.samples_s = malloc(3 * sizeof(double));
  assert_non_null(pt->m.samples_s);
  pt->m.samples_s[0] = secs;
  pt->m.samples_s[1] = secs / 1.01;
  pt->m.samples_s[2] = secs / 0.99;
  assert_int_equal(cal_summarize(pt->m.samples_s, 3, 0.95, &pt->m.time), 0);
  double **outs[2] = {&pt->gflops, &pt->gbps};
  cal_summary_t *sums[2] = {&pt->gflops_sum, &pt->gbps_sum};
  double work[2] = {flops, bytes};
  for (int w = 0; w < 2; w++) {
    if (work[w] <= 0)
      continue;
    *outs[w] = malloc(3 * sizeof(double));
    assert_non_null(*outs[w]);
    for (int i = 0; i < 3; i++)
      (*outs[w])[i] = work[w] / pt->m.samples_s[i] * 1e-9;
    assert_int_equal(cal_summarize(*outs[w], 3, 0.95, sums[w]), 0);
  }
}

static int count_point(const char *section, json_t *pt, void *arg) {
  (void)section;
  (void)pt;
  (*(int *)arg)++;
  return 0;
}

static void limits_sections_json(void **state) {
  (void)state;
  cal_point_t peak[3], bw[3], gemm[1];
  /* fma_f64: 80 GFLOPS on 1 thread; int8 1000 GOPS; one skipped */
  fake_point(&peak[0], "fma_f64", 1, 80e9, 0, 1.0);
  fake_point(&peak[1], "dp_int8", 1, 1000e9, 0, 1.0);
  memset(&peak[2], 0, sizeof peak[2]);
  peak[2].kernel = cal_kernel_find("dp_bf16");
  peak[2].status = CAL_POINT_SKIPPED;
  snprintf(peak[2].reason, sizeof peak[2].reason, "CPU has no AVX512_BF16");
  snprintf(peak[2].variant, sizeof peak[2].variant, "default");
  /* bandwidth: L1 200 GB/s, memory 10 and 12 GB/s */
  fake_point(&bw[0], "stream_read", 1, 0, 200e9, 1.0);
  fake_point(&bw[1], "stream_triad", 1, 0, 24e9, 2.4);
  fake_point(&bw[2], "stream_read", 1, 0, 12e9, 1.0);
  const char *levels[3] = {"L1", "memory", "memory"};
  /* a dgemm point: 2 flops per byte at 20 GFLOPS -> memory bound */
  fake_point(&gemm[0], "dgemm", 1, 40e9, 20e9, 2.0);

  cal_clock_t clk;
  memset(&clk, 0, sizeof clk);
  clk.n = 3;
  clk.samples_ghz[0] = 2.5, clk.samples_ghz[1] = 2.4, clk.samples_ghz[2] = 2.6;
  clk.ghz = 2.5;
  clk.variant = CAL_VARIANT_AVX512;
  clk.method = "test";
  cal_theory_t m;
  assert_int_equal(cal_theory_init(&m, spr_row(), CAL_VARIANT_AVX512,
                                       CAL_ISA_AVX512VNNI, 2.5, 2), 0);

  json_t *root = json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:n, s:n, "
                           "s:s, s:{}, s:{}, s:{}, s:{}}",
                           "schema", CAL_PROFILE_SCHEMA, "device_name", "t",
                           "device", "cpu", "gflops", "gflops_per_core",
                           "optimal_batch_size", "throughput", "memory_gb",
                           "latency_ms", "created", "2024-01-01T00:00:00Z",
                           "tool", "machine", "settings", "quality");
  assert_non_null(root);
  json_t *ps = cal_compute_peak_json(peak, 3, &clk, &m);
  json_t *bs = cal_bandwidth_section_json(bw, levels, 3);
  cal_roofline_t r;
  assert_int_equal(cal_roofline_from_points(peak, 3, bw, levels, 3, 1, &r), 0);
  assert_double_equal(r.compute_gflops[CAL_DT_FP64], 80.0, 1e-9);
  assert_double_equal(cal_roofline_gbps(&r, "memory"), 12.0, 1e-9);
  json_t *rs = cal_roofline_section_json(&r, &m, gemm, 1, "memory");
  assert_non_null(ps);
  assert_non_null(bs);
  assert_non_null(rs);
  assert_int_equal(json_object_set_new(root, "peak", ps), 0);
  assert_int_equal(json_object_set_new(root, "bandwidth", bs), 0);
  assert_int_equal(json_object_set_new(root, "roofline", rs), 0);
  char err[256];
  assert_int_equal(cal_profile_validate(root, err, sizeof err), 0);
  int points = 0;
  assert_int_equal(cal_profile_each_point(root, count_point, &points), 0);
  assert_int_equal(points, 6);

  json_t *p0 = json_array_get(json_object_get(ps, "points"), 0);
  assert_string_equal(json_string_value(json_object_get(p0, "id")),
                      "peak/fma_f64/avx512/t1");
  assert_string_equal(json_string_value(json_object_get(p0, "metric")), "gflops");
  assert_double_equal(json_number_value(json_object_get(p0, "gflops")), 80.0, 1e-9);
  assert_int_equal(json_array_size(json_object_get(p0, "samples_gflops")), 3);
  /* theoretical fp64 per core at 2.5 GHz: 80 -> efficiency 1 */
  assert_double_equal(json_number_value(json_object_get(p0, "efficiency")), 1.0, 1e-9);
  json_t *p1 = json_array_get(json_object_get(ps, "points"), 1);
  assert_string_equal(json_string_value(json_object_get(p1, "metric")), "gops");
  json_t *p2 = json_array_get(json_object_get(ps, "points"), 2);
  assert_string_equal(json_string_value(json_object_get(p2, "status")), "skipped");
  assert_non_null(json_object_get(p2, "reason"));
  assert_null(json_object_get(p2, "samples_gflops"));
  assert_double_equal(
      json_number_value(json_object_get(json_object_get(json_object_get(ps, "theoretical"), "fp64"), "gflops")),
      160.0, 1e-9);

  json_t *b1 = json_array_get(json_object_get(bs, "points"), 1);
  assert_string_equal(json_string_value(json_object_get(b1, "id")),
                      "bandwidth/stream_triad/memory/t1");
  assert_double_equal(json_number_value(json_object_get(b1, "gbps")), 10.0, 1e-9);
  /* triad with write-allocate moves 4/3 of the counted bytes */
  assert_double_equal(json_number_value(json_object_get(b1, "gbps_actual")),
                      10.0 * 4.0 / 3.0, 1e-6);

  json_t *ridge = json_object_get(json_object_get(rs, "ridge_flop_per_byte"), "fp64");
  assert_double_equal(json_number_value(json_object_get(ridge, "memory")), 80.0 / 12.0, 1e-9);
  assert_double_equal(json_number_value(json_object_get(ridge, "L1")), 0.4, 1e-9);
  json_t *k0 = json_array_get(json_object_get(rs, "kernels"), 0);
  assert_non_null(k0);
  assert_string_equal(json_string_value(json_object_get(k0, "bound")), "memory");
  /* 2 FLOP/byte × 12 GB/s = 24 attainable, 20 achieved */
  assert_double_equal(json_number_value(json_object_get(k0, "attainable_gflops")), 24.0, 1e-9);
  assert_double_equal(json_number_value(json_object_get(k0, "efficiency")), 20.0 / 24.0, 1e-9);
  json_decref(root);
  for (int i = 0; i < 3; i++) {
    cal_point_free(&peak[i]);
    cal_point_free(&bw[i]);
  }
  cal_point_free(&gemm[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fma_every_variant),
      cmocka_unit_test(fma_flops_analytic),
      cmocka_unit_test(fma_rejects_inexact_counts),
      cmocka_unit_test(forced_isa_caps_auto),
      cmocka_unit_test(stream_every_variant),
      cmocka_unit_test(stream_traffic_counts),
      cmocka_unit_test(clock_arithmetic),
      cmocka_unit_test(peak_model_arithmetic),
      cmocka_unit_test(roofline_arithmetic),
      cmocka_unit_test(worksets_from_caches),
      cmocka_unit_test(staircase_sizes),
      cmocka_unit_test(limits_sections_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
