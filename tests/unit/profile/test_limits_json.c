/* The machine-limits sections in the profile (profile/limits_json.c,
 * peak_json.c): the compute peak, bandwidth and roofline sections of a
 * 1-thread machine, valid as a profile; and the matrix engine: the peak
 * section's model, theory and points (each against the theory of its own
 * unit), the roofline's compute and matrix ceilings, and the bf16 GEMM /
 * matrix-engine peak efficiency, computed by the roofline section from
 * synthetic results of a 2-core AMX machine (so they are checked on
 * machines without AMX), and their part of the run's table.
 *
 * With CAL_TEST_PROFILE_OUT=FILE the synthetic profile is also written to
 * FILE (tests/e2e_matrix_peak.sh validates it against the JSON schema).
 * covers: calibrator/profile/peak_json.c calibrator/sections/roofline.c
 * covers: calibrator/report/table_limits.c
 * covers: calibrator/sections/compute_peak.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "clock.h"
#include "compute_peak.h"
#include "kernel.h"
#include "limits_json.h"
#include "profile.h"
#include "results.h"
#include "roofline.h"
#include "run.h"
#include "test_util.h"

#define ALL_AMX (CAL_ISA_AMX_TILE | CAL_ISA_AMX_BF16 | CAL_ISA_AMX_INT8)

/* a fake ok point of `secs` per run: rate r·(1, 1.01, 0.99) over 3
 * samples, of FLOP/s and of bytes/s where each is counted */
static void fake_point(cal_point_t *pt, const char *kernel, int threads,
                       double flops, double bytes, double secs,
                       const char *variant) {
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
  const double t[3] = {secs, secs / 1.01, secs / 0.99};
  memcpy(pt->m.samples_s, t, sizeof t);
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
      (*outs[w])[i] = work[w] / t[i] * 1e-9;
    assert_int_equal(cal_summarize(*outs[w], 3, 0.95, sums[w]), 0);
  }
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
  fake_point(&pk->points[0], "fma_f32", 2, 400e9, 0, 1.0, "avx512");
  fake_point(&pk->points[1], "dp_bf16", 2, 200e9, 0, 1.0, "avx512");
  fake_point(&pk->points[2], "amx_bf16", 2, 3000e9, 0, 1.0, "amx");
  fake_point(&pk->points[3], "amx_int8", 1, 3500e9, 0, 1.0, "amx");
  fake_point(&pk->points[4], "fma_fp16", 2, 400e9, 0, 1.0, "avx512");
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
  fake_point(&bw->points[0], "stream_read", 2, 0, 20e9, 1.0, "avx512");
  bw->levels[0] = "memory";
  bw->npoints = 1;
  res->sec[CAL_SEC_ID_BANDWIDTH] = bw;
  if (gemm_bf16 > 0) {
    cal_gemm_result_t *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->ndtypes = 2;
    g->dtypes[0].dtype = "fp32";
    g->dtypes[0].supported = 1;
    g->dtypes[0].best[1].kernel = cal_kernel_find("sgemm");
    g->dtypes[0].best[1].gflops = 300;
    g->dtypes[1].kdtype = CAL_DTYPE_BF16;
    g->dtypes[1].dtype = "bf16";
    g->dtypes[1].supported = 1;
    g->dtypes[1].best[1].kernel = cal_kernel_find("onednn_bf16gemm");
    g->dtypes[1].best[1].gflops = gemm_bf16;
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

/* The peak and roofline parts of the run's table (report/table_limits.c)
 * through their section rows. */
static void check_tables(const cal_run_result_t *run) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cal_sections[CAL_SEC_ID_PEAK].print(run, run->res.sec[CAL_SEC_ID_PEAK], f);
  cal_sections[CAL_SEC_ID_ROOFLINE].print(run,
                                          run->res.sec[CAL_SEC_ID_ROOFLINE], f);
  fclose(f);
  cal_assert_contains(
      buf, "  amx_bf16  amx            2   3000.0 GF/s    4096.0     73%",
      "  amx_int8  skipped: the kernel refused the AMX tile state",
      "  matrix engine ceilings: bf16 3000 GFLOPS (amx_bf16)",
      "  gemm_bf16_of_matrix_peak                50%");
  free(buf);
}

static void roofline_matrix_ceilings(void **state) {
  (void)state;
  cal_opts_t o;
  memset(&o, 0, sizeof o);
  o.threads = 2;
  cal_run_result_t run = {.opt = &o};
  cal_results_t *res = &run.res;
  fake_run(res, 1500);
  cal_run_t r = {.opt = &o, .ctx = NULL, .res = res};
  assert_int_equal(cal_roofline_measure(&r), 0);
  const cal_roofline_result_t *rr = res->sec[CAL_SEC_ID_ROOFLINE];
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
  check_tables(&run);
  json_t *root = profile_root();
  json_t *ps = cal_compute_peak_write(&run, res->sec[CAL_SEC_ID_PEAK]);
  json_t *rs = cal_roofline_write(&run, rr);
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
  cal_results_free(res);

  /* no bf16 GEMM: the efficiency is unknown, written as null */
  fake_run(res, 0);
  assert_int_equal(cal_roofline_measure(&r), 0);
  rr = res->sec[CAL_SEC_ID_ROOFLINE];
  assert_true(rr->efficiency[CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK] < 0);
  rs = cal_roofline_write(&run, rr);
  json_t *e = number_at(rs, "efficiencies", "gemm_bf16_of_matrix_peak");
  assert_non_null(e);
  assert_true(json_is_null(e));
  /* the existing keys stay left out when unknown */
  assert_null(number_at(rs, "efficiencies", "gemm_fp32_of_measured_peak"));
  json_decref(rs);
  cal_results_free(res);
}

/* The compute peak, bandwidth and roofline sections of a 1-thread
 * machine: their keys and values, and the tree valid as a profile. */
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
  fake_point(&peak[0], "fma_f64", 1, 80e9, 0, 1.0, "avx512");
  fake_point(&peak[1], "dp_int8", 1, 1000e9, 0, 1.0, "avx512");
  skipped_point(&peak[2], "dp_bf16", 0, "CPU has no AVX512_BF16");
  /* bandwidth: L1 200 GB/s, memory 10 and 12 GB/s */
  fake_point(&bw[0], "stream_read", 1, 0, 200e9, 1.0, "avx512");
  fake_point(&bw[1], "stream_triad", 1, 0, 24e9, 2.4, "avx512");
  fake_point(&bw[2], "stream_read", 1, 0, 12e9, 1.0, "avx512");
  const char *levels[3] = {"L1", "memory", "memory"};
  /* a dgemm point: 2 flops per byte at 20 GFLOPS -> memory bound */
  fake_point(&gemm[0], "dgemm", 1, 40e9, 20e9, 2.0, "avx512");

  cal_clock_t clk;
  memset(&clk, 0, sizeof clk);
  clk.n = 3;
  clk.samples_ghz[0] = 2.5, clk.samples_ghz[1] = 2.4, clk.samples_ghz[2] = 2.6;
  clk.ghz = 2.5;
  clk.variant = CAL_VARIANT_AVX512;
  clk.method = "test";
  cal_theory_t m;
  assert_int_equal(cal_theory_init(&m, CAL_VARIANT_AVX512,
                                       CAL_ISA_AVX512VNNI, 2.5, 2), 0);

  json_t *root = profile_root();
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

CAL_TEST_MAIN(
    cmocka_unit_test(peak_json_matrix_rows),
    cmocka_unit_test(roofline_matrix_ceilings),
    cmocka_unit_test(limits_sections_json))
