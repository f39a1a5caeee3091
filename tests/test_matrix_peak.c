/* The matrix-engine (AMX) and fp16 peak loops: the reasons a loop cannot
 * run, from any feature mask; the tile configuration; the loops against
 * their closed form where this CPU has the feature (and, for AMX, the
 * kernel grants the tile state), skipped with the reason printed where it
 * does not; the theory's new rows; the peak and roofline profile keys and
 * the bf16 GEMM / matrix-engine peak efficiency.  No timed asserts.
 *
 * With CAL_TEST_PROFILE_OUT=FILE the synthetic profile with AMX rows is
 * also written to FILE (tests/e2e_matrix_peak.sh validates it against the
 * JSON schema). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "amx.h"
#include "cal_err.h"
#include "cal_isa.h"
#include "compute_peak.h"
#include "kernel.h"
#include "limits_json.h"
#include "profile.h"
#include "results.h"
#include "roofline.h"
#include "run.h"
#include "test_util.h"

#define ALL_AMX (CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8)

/* ---- reasons, configuration, build ------------------------------------ */

static void amx_reasons_from_masks(void **state) {
  (void)state;
  char buf[256];
  const char *r = cal_amx_why_not(0, CAL_AMX_NEED_BF16, 0, buf, sizeof buf);
  assert_ptr_equal(r, buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile, amx_bf16 absent)");
  r = cal_amx_why_not(CAL_ISA_AVX512F | CAL_ISA_AVX512BF16, CAL_AMX_NEED_INT8,
                      0, buf, sizeof buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile, amx_int8 absent)");
  /* the permission answer is not looked at while bits are missing */
  r = cal_amx_why_not(CAL_ISA_AMX_BF16, CAL_AMX_NEED_BF16, EPERM, buf,
                      sizeof buf);
  assert_string_equal(r, "CPU has no AMX (amx_tile absent)");
  r = cal_amx_why_not(CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16, CAL_AMX_NEED_INT8,
                      0, buf, sizeof buf);
  assert_string_equal(r, "CPU has AMX but not this dtype (amx_int8 absent)");
  if (!cal_amx_compiled()) {
    r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, 0, buf, sizeof buf);
    assert_non_null(strstr(r, "this build has no AMX code"));
    return;
  }
  r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, EPERM, buf, sizeof buf);
  assert_string_equal(r, "the kernel refused the AMX tile state (arch_prctl: "
                         "Operation not permitted)");
  r = cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_INT8, EINVAL, buf, sizeof buf);
  assert_non_null(strstr(r, "the kernel refused the AMX tile state "
                            "(arch_prctl: Invalid argument"));
  assert_non_null(strstr(r, "5.16"));
  /* granted: no reason */
  assert_null(cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_BF16, 0, buf, sizeof buf));
  assert_null(cal_amx_why_not(ALL_AMX, CAL_AMX_NEED_INT8, 0, buf, sizeof buf));
  /* a short buffer is cut, never overrun */
  char tiny[12];
  memset(tiny, 'x', sizeof tiny);
  r = cal_amx_why_not(0, CAL_AMX_NEED_BF16, 0, tiny, 8);
  assert_int_equal(strlen(r), 7);
  assert_int_equal(tiny[8], 'x');
}

static void amx_tile_config(void **state) {
  (void)state;
  /* LDTILECFG reads 64 bytes: palette 1, every field where the SDM puts it */
  assert_int_equal(sizeof(cal_amx_cfg_t), 64);
  assert_int_equal(offsetof(cal_amx_cfg_t, colsb), 16);
  assert_int_equal(offsetof(cal_amx_cfg_t, rows), 48);
  cal_amx_cfg_t c;
  memset(&c, 0xab, sizeof c);
  cal_amx_config(&c);
  assert_int_equal(c.palette_id, 1);
  assert_int_equal(c.start_row, 0);
  for (int i = 0; i < 14; i++)
    assert_int_equal(c.reserved[i], 0);
  for (int t = 0; t < 16; t++) {
    /* palette 1: 8 tiles of at most 16 rows x 64 bytes; the rest zero */
    assert_int_equal(c.colsb[t], t < 8 ? 64 : 0);
    assert_int_equal(c.rows[t], t < 8 ? 16 : 0);
  }
  /* the shape rules of TDPBF16PS / TDPBSSD for C = tmm0..3, A = tmm4..5,
   * B = tmm6..7 (else #UD): C.rows == A.rows, C.colsb == B.colsb,
   * A.colsb == 4 * B.rows */
  for (int ct = 0; ct < 4; ct++)
    for (int at = 4; at < 6; at++)
      for (int bt = 6; bt < 8; bt++) {
        assert_int_equal(c.rows[ct], c.rows[at]);
        assert_int_equal(c.colsb[ct], c.colsb[bt]);
        assert_int_equal(c.colsb[at], 4 * c.rows[bt]);
      }
  assert_int_equal(CAL_AMX_TILE_BYTES, CAL_AMX_ROWS * CAL_AMX_ROW_BYTES);
}

static void amx_build_has_loops(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&       \
    __GNUC__ >= 11
  /* GCC 11+ knows -mamx-*: the tile loops must be in this build */
  assert_true(cal_amx_compiled());
#endif
  if (cal_amx_compiled()) {
    void (*f)(const cal_amx_tiles_t *, int64_t, void *) = cal_tile_dp_bf16_amx;
    assert_non_null(f);
    f = cal_tile_dp_int8_amx;
    assert_non_null(f);
  }
  print_message("AMX tile loops compiled: %s\n",
                cal_amx_compiled() ? "yes" : "no");
}

/* ---- the kernels on this machine -------------------------------------- */

/* Whether a loop needing `need` may run here, decided apart from the
 * kernel's own answer; buf gets the reason when not. */
static int expect_amx(uint32_t need, char *buf, size_t len) {
  uint32_t f = cal_isa_features();
  int err = 0;
  if ((need & ~f) == 0 && cal_amx_compiled())
    err = cal_amx_request_permission();
  return cal_amx_why_not(f, need, err, buf, len) == NULL;
}

static const struct {
  const char *name, *dtype;
  uint32_t need;
  double flops_per_step; /* four tile multiply-adds */
} amx_kernels[2] = {{"amx_bf16", "bf16", CAL_AMX_NEED_BF16, 4 * 16384.0},
                    {"amx_int8", "int8", CAL_AMX_NEED_INT8, 4 * 32768.0}};

/* Where the loop cannot run: refused with exactly the expected reason,
 * no state, no work; nothing ever reaches a tile instruction (which would
 * end this process with SIGILL). */
static void amx_refused_with_reason(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(amx_kernels[i].name);
    assert_non_null(k);
    assert_string_equal(k->family, "matrix");
    assert_string_equal(k->dtype, amx_kernels[i].dtype);
    char want[256];
    cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 1, .n = 16};
    const char *why = NULL;
    if (expect_amx(amx_kernels[i].need, want, sizeof want)) {
      assert_int_equal(k->supported(&p, &why), 0);
      continue;
    }
    assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
    assert_string_equal(why, want);
    if (!(cal_isa_features() & CAL_ISA_AMX_TILE))
      assert_non_null(strstr(why, "CPU has no AMX (amx_tile"));
    print_message("%s: %s\n", k->name, why);
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), CAL_EUNSUPP);
    assert_null(st);
    assert_true(k->flops(&p) == 0.0);
  }
  /* the loops have one variant: asking for another is refused */
  cal_params_t p = {.variant = CAL_VARIANT_SCALAR, .n = 16};
  const char *why = NULL;
  assert_int_equal(cal_kernel_find("amx_bf16")->supported(&p, &why),
                   CAL_EUNSUPP);
  assert_non_null(strstr(why, "auto"));
}

/* setup, verify fails before any run (poisoned), run twice, verify,
 * corrupt, verify fails */
static void check_kernel(const cal_kernel_t *k, const cal_params_t *p,
                         void (*corrupt)(void *)) {
  void *st = NULL;
  assert_int_equal(k->setup(p, &st), 0);
  assert_non_null(st);
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->run(st), 0);
  assert_int_equal(k->verify(st), 0);
  corrupt(st);
  assert_int_equal(k->verify(st), CAL_EVERIFY);
  k->teardown(st);
}

static void amx_closed_form(void **state) {
  (void)state;
  char why[256];
  if (!expect_amx(CAL_AMX_NEED_BF16, why, sizeof why) &&
      !expect_amx(CAL_AMX_NEED_INT8, why, sizeof why)) {
    print_message("skipped: %s\n", why);
    skip();
  }
  for (int i = 0; i < 2; i++) {
    const cal_kernel_t *k = cal_kernel_find(amx_kernels[i].name);
    if (!expect_amx(amx_kernels[i].need, why, sizeof why)) {
      print_message("%s skipped: %s\n", k->name, why);
      continue;
    }
    const int64_t steps[] = {1, 7, 1000, 0 /* the default */};
    for (size_t s = 0; s < 4; s++)
      for (int t = 1; t <= 3; t++) {
        cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = t,
                          .n = steps[s]};
        check_kernel(k, &p, cal_amx_test_corrupt);
      }
    cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 2, .n = 1000};
    assert_double_equal(k->flops(&p), 2 * 1000 * amx_kernels[i].flops_per_step,
                        0);
    void *st = NULL;
    assert_int_equal(k->setup(&p, &st), 0);
    assert_string_equal(k->variant_name(st), "amx");
    k->teardown(st);
    /* more steps than stay exact (bf16: 2^24 in fp32) are refused */
    p.n = i == 0 ? 100000 : INT64_C(1) << 32;
    st = NULL;
    assert_int_equal(k->setup(&p, &st), CAL_EINVAL);
    assert_null(st);
  }
}

static void fp16_closed_form(void **state) {
  (void)state;
  const cal_kernel_t *k = cal_kernel_find("fma_fp16");
  assert_non_null(k);
  assert_string_equal(k->dtype, "fp16");
  cal_params_t p = {.variant = CAL_VARIANT_AUTO, .threads = 1, .n = 64};
  const char *why = NULL;
  int best = CAL_VARIANT_SCALAR;
  int have = (cal_isa_features() & CAL_ISA_AVX512FP16) &&
             cal_variant_best(&best) == 0 && best == CAL_VARIANT_AVX512;
  if (!have) {
    assert_int_equal(k->supported(&p, &why), CAL_EUNSUPP);
    if (!(cal_isa_features() & CAL_ISA_AVX512FP16))
      assert_string_equal(why, "CPU has no AVX512_FP16 (vfmadd231ph)");
    print_message("skipped: %s\n", why);
    skip();
  }
  /* one partial round, exactly one round, several with a partial last */
  const int64_t steps[] = {1003, CAL_FP16_ROUND, 5 * CAL_FP16_ROUND + 77};
  for (size_t s = 0; s < 3; s++)
    for (int t = 1; t <= 3; t++) {
      p.threads = t;
      p.n = steps[s];
      check_kernel(k, &p, cal_fma_test_corrupt);
    }
  p.threads = 2;
  p.n = 1000; /* 16 chains x 32 lanes x 2 flops */
  assert_double_equal(k->flops(&p), 2.0 * 1000 * 16 * 32 * 2, 0);
}

/* ---- theory ------------------------------------------------------------ */

static void theory_matrix_rows(void **state) {
  (void)state;
  cal_theory_t m;
  uint32_t f = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI | CAL_ISA_AVX512FP16 |
               ALL_AMX;
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512, f, 2.0, 2), 0);
  assert_string_equal(m.matrix_engine, "amx");
  /* 1024 bf16 flops and 2048 int8 ops per cycle per core */
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_BF16), 2048.0,
                      1e-9);
  assert_double_equal(cal_theory_matrix_gflops(&m, CAL_DT_BF16), 4096.0, 1e-9);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_INT8), 4096.0,
                      1e-9);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, CAL_DT_FP32), 0.0, 0);
  assert_double_equal(cal_theory_matrix_gflops_core(&m, 99), 0.0, 0);
  /* vfmadd231ph: 32 lanes x 2 flops x 2 per cycle */
  assert_double_equal(cal_ops_per_instr(CAL_DT_FP16, 512), 64.0, 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP16), 256.0, 1e-9);
  /* the vector rows keep their meaning: vdpbf16ps 64 flops, 1 per 2 cycles */
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_BF16), 64.0, 1e-9);
  assert_non_null(strstr(m.assumption, "vfmadd231ph 2 per cycle"));
  assert_non_null(strstr(m.assumption, "1024 bf16 flops per cycle"));
  assert_non_null(strstr(m.assumption, "2048 int8 ops per cycle"));
  assert_non_null(strstr(m.assumption, "Sapphire Rapids"));
  /* amx_tile alone, or no tile bit: no matrix engine */
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512, CAL_ISA_AMX_TILE,
                                   2.0, 1), 0);
  assert_null(m.matrix_engine);
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512,
                                   CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8, 2.0, 1),
                   0);
  assert_null(m.matrix_engine);
  assert_double_equal(cal_theory_matrix_gflops(&m, CAL_DT_BF16), 0.0, 0);
  assert_null(strstr(m.assumption, "AMX"));
  /* fp16 needs the avx512 variant */
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX2, CAL_ISA_AVX512FP16,
                                   2.0, 1), 0);
  assert_double_equal(cal_theory_gflops_core(&m, CAL_DT_FP16), 0.0, 0);
  int dt;
  assert_int_equal(cal_ceiling_dtype_parse("fp16", &dt), 0);
  assert_int_equal(dt, CAL_DT_FP16);
  assert_string_equal(cal_ceiling_dtype_name(CAL_DT_FP16), "fp16");
}

/* ---- profile keys and the roofline ------------------------------------- */

/* a fake ok point: rate gflops·(1, 1.01, 0.99) over 3 samples */
static void fake_point(cal_point_t *pt, const char *kernel, int threads,
                       double flops, double bytes, const char *variant) {
  memset(pt, 0, sizeof *pt);
  pt->kernel = cal_kernel_find(kernel);
  assert_non_null(pt->kernel);
  pt->params.threads = threads;
  pt->params.bytes = (int64_t)bytes;
  pt->status = CAL_POINT_OK;
  snprintf(pt->variant, sizeof pt->variant, "%s", variant);
  pt->flops = flops;
  pt->bytes = bytes;
  pt->m.n = 3;
  pt->m.iters = 10;
  pt->m.samples_s = malloc(3 * sizeof(double));
  assert_non_null(pt->m.samples_s);
  const double secs[3] = {1.0, 1.0 / 1.01, 1.0 / 0.99};
  memcpy(pt->m.samples_s, secs, sizeof secs);
  assert_int_equal(cal_summarize(pt->m.samples_s, 3, 0.95, &pt->m.time), 0);
  double **out = flops > 0 ? &pt->gflops : &pt->gbps;
  cal_summary_t *sum = flops > 0 ? &pt->gflops_sum : &pt->gbps_sum;
  *out = malloc(3 * sizeof(double));
  assert_non_null(*out);
  for (int i = 0; i < 3; i++)
    (*out)[i] = (flops > 0 ? flops : bytes) / secs[i] * 1e-9;
  assert_int_equal(cal_summarize(*out, 3, 0.95, sum), 0);
}

static void skipped_point(cal_point_t *pt, const char *kernel, int threads,
                          const char *why) {
  memset(pt, 0, sizeof *pt);
  pt->kernel = cal_kernel_find(kernel);
  pt->params.threads = threads;
  pt->status = CAL_POINT_SKIPPED;
  snprintf(pt->reason, sizeof pt->reason, "%s", why);
  snprintf(pt->variant, sizeof pt->variant, "default");
}

#define NPK 6
/* A peak result at 2 threads on a 2-core AMX machine at 2 GHz. */
static cal_compute_peak_result_t *fake_peak(void) {
  cal_compute_peak_result_t *pk = calloc(1, sizeof *pk);
  assert_non_null(pk);
  pk->points = calloc(NPK, sizeof *pk->points);
  assert_non_null(pk->points);
  pk->npoints = NPK;
  fake_point(&pk->points[0], "fma_f32", 2, 400e9, 0, "avx512");
  fake_point(&pk->points[1], "dp_bf16", 2, 200e9, 0, "avx512");
  fake_point(&pk->points[2], "amx_bf16", 2, 3000e9, 0, "amx");
  fake_point(&pk->points[3], "amx_int8", 1, 3500e9, 0, "amx");
  fake_point(&pk->points[4], "fma_fp16", 2, 400e9, 0, "avx512");
  skipped_point(&pk->points[5], "amx_int8", 2,
                "the kernel refused the AMX tile state (arch_prctl: "
                "Operation not permitted)");
  uint32_t f = CAL_ISA_AVX512BF16 | CAL_ISA_AVX512VNNI | CAL_ISA_AVX512FP16 |
               ALL_AMX;
  assert_int_equal(cal_theory_init(&pk->model, CAL_VARIANT_AVX512, f, 2.0, 2),
                   0);
  pk->have_model = 1;
  return pk;
}

static json_t *number_at(json_t *o, const char *a, const char *b) {
  json_t *x = json_object_get(o, a);
  return b ? json_object_get(x, b) : x;
}

static void peak_json_matrix_rows(void **state) {
  (void)state;
  cal_compute_peak_result_t *pk = fake_peak();
  json_t *ps = cal_compute_peak_json(pk->points, pk->npoints, NULL, &pk->model);
  assert_non_null(ps);
  json_t *model = json_object_get(ps, "model");
  json_t *mx = json_object_get(model, "matrix");
  assert_string_equal(json_string_value(json_object_get(mx, "engine")), "amx");
  assert_double_equal(
      json_number_value(number_at(json_object_get(mx, "ops_per_cycle"), "bf16",
                                  NULL)),
      1024.0, 0);
  assert_double_equal(json_number_value(number_at(model, "ipc", "fp16")), 2.0,
                      0);
  json_t *tm = json_object_get(ps, "theoretical_matrix");
  assert_double_equal(
      json_number_value(number_at(tm, "bf16", "gflops_per_core")), 2048.0,
      1e-9);
  assert_double_equal(json_number_value(number_at(tm, "int8", "gops")), 8192.0,
                      1e-9);
  /* the vector rows are still there, fp16 among them */
  json_t *tv = json_object_get(ps, "theoretical");
  assert_double_equal(json_number_value(number_at(tv, "bf16", "gflops")),
                      128.0, 1e-9);
  assert_double_equal(json_number_value(number_at(tv, "fp16", "gflops")),
                      512.0, 1e-9);
  /* each point against its own unit: amx_bf16 3000 of 2 x 2048 */
  json_t *pts = json_object_get(ps, "points");
  json_t *amx = json_array_get(pts, 2);
  assert_string_equal(json_string_value(json_object_get(amx, "id")),
                      "peak/amx_bf16/amx/t2");
  assert_double_equal(json_number_value(json_object_get(amx, "efficiency")),
                      3000.0 / 4096.0, 1e-9);
  json_t *dp = json_array_get(pts, 1); /* dp_bf16 200 of 2 x 64 */
  assert_double_equal(json_number_value(json_object_get(dp, "efficiency")),
                      200.0 / 128.0, 1e-9);
  json_t *i8 = json_array_get(pts, 3); /* one thread: 3500 of 4096 */
  assert_string_equal(json_string_value(json_object_get(i8, "metric")), "gops");
  assert_double_equal(json_number_value(json_object_get(i8, "efficiency")),
                      3500.0 / 4096.0, 1e-9);
  json_t *sk = json_array_get(pts, 5);
  assert_string_equal(json_string_value(json_object_get(sk, "status")),
                      "skipped");
  assert_non_null(strstr(json_string_value(json_object_get(sk, "reason")),
                         "refused the AMX tile state"));
  json_decref(ps);
  /* without a matrix engine: no matrix keys at all */
  cal_theory_t plain;
  assert_int_equal(cal_theory_init(&plain, CAL_VARIANT_AVX512, 0, 2.0, 2), 0);
  ps = cal_compute_peak_json(pk->points, 1, NULL, &plain);
  assert_null(json_object_get(ps, "theoretical_matrix"));
  assert_null(json_object_get(json_object_get(ps, "model"), "matrix"));
  json_decref(ps);
  cal_compute_peak_drop(pk);
}

/* A run with peak, bandwidth and (optionally) a bf16 GEMM result. */
static void fake_run(cal_results_t *res, double gemm_bf16) {
  memset(res, 0, sizeof *res);
  res->sec[CAL_SEC_ID_PEAK] = fake_peak();
  cal_bandwidth_result_t *bw = calloc(1, sizeof *bw);
  assert_non_null(bw);
  bw->points = calloc(1, sizeof *bw->points);
  bw->levels = calloc(1, sizeof *bw->levels);
  assert_non_null(bw->points);
  assert_non_null(bw->levels);
  fake_point(&bw->points[0], "stream_read", 2, 0, 20e9, "avx512");
  bw->levels[0] = "memory";
  bw->npoints = 1;
  res->sec[CAL_SEC_ID_BANDWIDTH] = bw;
  if (gemm_bf16 > 0) {
    cal_gemm_result_t *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->ndtypes = 2;
    g->dtypes[0].kernel = cal_kernel_find("sgemm");
    g->dtypes[0].best_gflops[1] = 300;
    g->dtypes[1].kernel = cal_kernel_find("sbgemm");
    g->dtypes[1].supported = 1;
    g->dtypes[1].best_gflops[1] = gemm_bf16;
    res->sec[CAL_SEC_ID_GEMM] = g;
  }
}

static json_t *profile_root(void) {
  json_t *root = json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:n, s:n, "
                           "s:s, s:{}, s:{}, s:{}, s:{}}",
                           "schema", CAL_PROFILE_SCHEMA, "device_name", "t",
                           "device", "cpu", "gflops", "gflops_per_core",
                           "optimal_batch_size", "throughput", "memory_gb",
                           "latency_ms", "created", "2024-01-01T00:00:00Z",
                           "tool", "machine", "settings", "quality");
  assert_non_null(root);
  return root;
}

static void roofline_matrix_ceilings(void **state) {
  (void)state;
  cal_opts_t o;
  memset(&o, 0, sizeof o);
  o.threads = 2;
  cal_results_t res;
  fake_run(&res, 1500);
  cal_run_t r = {.opt = &o, .ctx = NULL, .res = &res};
  assert_int_equal(cal_roofline_measure(&r), 0);
  const cal_roofline_result_t *rr = res.sec[CAL_SEC_ID_ROOFLINE];
  assert_non_null(rr);
  /* the bf16 ceiling is the best engine's (AMX), the matrix one beside it;
   * the one-thread amx_int8 point is no all-thread ceiling */
  assert_double_equal(rr->roof.compute_gflops[CAL_DT_BF16], 3000.0, 1e-6);
  assert_string_equal(rr->roof.compute_kernel[CAL_DT_BF16], "amx_bf16");
  assert_double_equal(rr->roof.matrix_gflops[CAL_DT_BF16], 3000.0, 1e-6);
  assert_double_equal(rr->roof.matrix_gflops[CAL_DT_INT8], 0.0, 0);
  assert_double_equal(rr->roof.compute_gflops[CAL_DT_FP16], 400.0, 1e-6);
  assert_double_equal(rr->efficiency[CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK], 0.5,
                      1e-9);
  json_t *root = profile_root();
  json_t *ps = cal_compute_peak_write(&r, res.sec[CAL_SEC_ID_PEAK]);
  json_t *rs = cal_roofline_write(&r, rr);
  assert_non_null(ps);
  assert_non_null(rs);
  assert_double_equal(
      json_number_value(number_at(rs, "matrix_gflops", "bf16")), 3000.0, 1e-6);
  assert_string_equal(
      json_string_value(number_at(rs, "matrix_kernel", "bf16")), "amx_bf16");
  assert_string_equal(
      json_string_value(number_at(rs, "compute_kernel", "bf16")), "amx_bf16");
  assert_double_equal(
      json_number_value(number_at(rs, "theoretical_matrix_gflops", "int8")),
      8192.0, 1e-6);
  assert_double_equal(json_number_value(number_at(
                          rs, "efficiencies", "gemm_bf16_of_matrix_peak")),
                      0.5, 1e-9);
  /* the existing ridge keys follow the best ceiling */
  assert_double_equal(
      json_number_value(number_at(
          json_object_get(rs, "ridge_flop_per_byte"), "bf16", "memory")),
      150.0, 1e-6);
  assert_int_equal(json_object_set_new(root, "peak", ps), 0);
  assert_int_equal(json_object_set_new(root, "roofline", rs), 0);
  char err[256];
  assert_int_equal(cal_profile_validate(root, err, sizeof err), 0);
  const char *out = getenv("CAL_TEST_PROFILE_OUT");
  if (out && *out)
    assert_int_equal(json_dump_file(root, out, JSON_INDENT(1)), 0);
  json_decref(root);
  cal_results_free(&res);

  /* no bf16 GEMM: the efficiency is unknown, written as null */
  fake_run(&res, 0);
  assert_int_equal(cal_roofline_measure(&r), 0);
  rr = res.sec[CAL_SEC_ID_ROOFLINE];
  assert_true(rr->efficiency[CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK] < 0);
  rs = cal_roofline_write(&r, rr);
  json_t *e = number_at(rs, "efficiencies", "gemm_bf16_of_matrix_peak");
  assert_non_null(e);
  assert_true(json_is_null(e));
  /* the existing keys stay left out when unknown */
  assert_null(number_at(rs, "efficiencies", "gemm_fp32_of_measured_peak"));
  json_decref(rs);
  cal_results_free(&res);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(amx_reasons_from_masks),
      cmocka_unit_test(amx_tile_config),
      cmocka_unit_test(amx_build_has_loops),
      cmocka_unit_test(amx_refused_with_reason),
      cmocka_unit_test(amx_closed_form),
      cmocka_unit_test(fp16_closed_form),
      cmocka_unit_test(theory_matrix_rows),
      cmocka_unit_test(peak_json_matrix_rows),
      cmocka_unit_test(roofline_matrix_ceilings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
