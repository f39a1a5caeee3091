/* The compute peak: register-resident multiply-add loops per dtype (the
 * vector units' FMA and dot products, and the matrix engine's tile loops
 * where the CPU has one and the kernel lets this process use it) at one
 * pinned thread and all threads, the clock under vector load and the
 * theoretical peak they are a fraction of.  A loop this machine cannot run
 * is a skipped point whose reason says why (kernels/isa/amx.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "pipes.h"
#include "results.h"
#include "run.h"

static const char *const peak_kernels[] = {
    "fma_f64", "fma_f32", "dp_bf16", "dp_int8", "fma_fp16", "amx_bf16",
    "amx_int8"};
#define NPEAK (sizeof peak_kernels / sizeof peak_kernels[0])

void cal_compute_peak_drop(void *result) {
  cal_compute_peak_result_t *res = result;
  if (!res)
    return;
  for (size_t i = 0; i < res->npoints; i++)
    cal_point_free(&res->points[i]);
  free(res->points);
  free(res);
}

/* The CPU's row of the microarchitecture table, from what hwinfo read
 * through libcpuid (vendor, CPUID family and model, brand). */
static const cal_uarch_t *identify(const cal_hwinfo_t *hw,
                                   cal_compute_peak_result_t *res) {
  snprintf(res->cpu_vendor, sizeof res->cpu_vendor, "%s", hw->vendor);
  snprintf(res->cpu_codename, sizeof res->cpu_codename, "%s", hw->codename);
  res->cpu_family = hw->family;
  res->cpu_model = hw->model;
  res->cpu_stepping = hw->stepping;
  return cal_uarch_lookup(hw->vendor, hw->family, hw->model, hw->brand,
                          &res->uarch_why);
}

/* The clock under vector load on one pinned thread, and the model of the
 * theoretical peak built on it and on the CPU's row. */
static void measure_clock(cal_run_t *r, cal_compute_peak_result_t *res) {
  int variant;
  if (cal_variant_best(&variant) < 0)
    variant = CAL_VARIANT_SCALAR;
  if (r->ctx->thr)
    cal_threads_use(r->ctx->thr, 1);
  cal_progress(r, "peak: clock under vector load");
  res->have_clock = cal_clock_measure(CAL_VARIANT_AUTO,
                                      r->opt->quick ? 0.002 : 0.005,
                                      &res->clock) == 0;
  const cal_uarch_t *u = identify(&r->ctx->hw, res);
  res->have_model =
      res->have_clock &&
      cal_theory_init(&res->model, u, variant, cal_isa_features(),
                      res->clock.ghz, r->ctx->hw.usable_cores) == 0;
  if (res->have_model && !u)
    cal_run_warn(r, "theory unknown: %s (%s family %d model %d); "
                 "efficiencies are against the measured peak",
                 res->uarch_why, r->ctx->hw.vendor, r->ctx->hw.family,
                 r->ctx->hw.model);
}

/* The row is documentation, never raised or lowered by a measurement: a
 * one-thread vector loop (undisturbed, at the model's width) that runs at
 * most 0.6 or more than 1.25 times the row's rate says the row's pipes or
 * width are wrong for this CPU, in a warning and in the profile. */
static void cross_check(cal_run_t *r, cal_compute_peak_result_t *res) {
  if (!res->have_model || !res->model.uarch)
    return;
  const char *width = cal_variant_name(
      res->model.vector_bits == 512   ? CAL_VARIANT_AVX512
      : res->model.vector_bits == 256 ? CAL_VARIANT_AVX2
                                      : CAL_VARIANT_SCALAR);
  for (size_t i = 0; i < res->npoints; i++) {
    const cal_point_t *pt = &res->points[i];
    int dt = cal_ceiling_dtype_of(pt->kernel->dtype);
    if (pt->status != CAL_POINT_OK || pt->kernel->family != CAL_FAMILY_FMA ||
        pt->params.threads != 1 || pt->contaminated || dt < 0 ||
        strcmp(pt->variant, width) != 0 || res->cross_check[dt][0])
      continue;
    if (cal_theory_check(&res->model, dt, pt->gflops_sum.median,
                         res->cross_check[dt],
                         sizeof res->cross_check[dt]) != CAL_THEORY_AGREES)
      cal_run_warn(r, "peak: %s", res->cross_check[dt]);
  }
}

/* The median of the FMA loop `name` at `threads`, undisturbed; 0 when
 * not measured. */
static double fma_median(const cal_compute_peak_result_t *res,
                         const char *name, int threads) {
  for (size_t i = 0; i < res->npoints; i++) {
    const cal_point_t *pt = &res->points[i];
    if (pt->status == CAL_POINT_OK && !pt->contaminated &&
        pt->params.threads == threads && strcmp(pt->kernel->name, name) == 0)
      return pt->gflops_sum.median;
  }
  return 0.0;
}

/* Register-resident loops scale with the cores: all threads below 0.8 of
 * the thread count times one thread's rate means the threads shared FMA
 * pipes (vCPUs that are SMT siblings on the host, a CPU quota) or others
 * took the cores.  Where the run never saw its threads side by side (the
 * pipes probe's best below CAL_PIPES_MIN) that is the machine, and every
 * multi-thread figure is low by as much; where it did, the hypervisor
 * placed them together for a while, and the points measured then are the
 * ones with threads_not_parallel. */
static void scaling_check(cal_run_t *r, const cal_compute_peak_result_t *res,
                          int threads) {
  static const char *const names[] = {"fma_f64", "fma_f32"};
  const int always = r->ctx->team_best < CAL_PIPES_MIN;
  for (size_t i = 0; threads > 1 && i < 2; i++) {
    double one = fma_median(res, names[i], 1),
           all = fma_median(res, names[i], threads);
    if (one > 0 && all > 0 && all < 0.8 * threads * one)
      cal_run_warn(r,
                   "peak: %s at %d threads ran %.2f times its one-thread "
                   "rate: the threads shared FMA pipes (SMT siblings on the "
                   "host, a CPU quota) or others took the cores, %s",
                   names[i], threads, all / one,
                   always ? "and every multi-thread figure of this run is "
                             "low by as much"
                           : "while it ran (the run saw them side by side "
                             "at other times: the points measured while "
                             "they shared have threads_not_parallel)");
  }
}

int cal_compute_peak_measure(cal_run_t *r) {
  const cal_opts_t *o = r->opt;
  cal_compute_peak_result_t *res = calloc(1, sizeof *res);
  int rc = 0;
  if (!res)
    return CAL_ENOMEM;
  measure_clock(r, res);
  size_t nk = NPEAK;
  int tcounts[2] = {1, o->threads}, nt = o->threads > 1 ? 2 : 1;
  const cal_kernel_t *ks[2 * NPEAK];
  cal_params_t ps[2 * NPEAK];
  size_t n = 0;
  for (int ti = 0; ti < nt; ti++)
    for (size_t i = 0; i < nk; i++) {
      /* quick: the ML dtypes (dot products, fp16, matrix engine) at one
       * thread only */
      if (o->quick && ti > 0 && i >= 2)
        continue;
      /* --ci: the fp32 peak only, the roofline's ceiling for fp32 work */
      if (o->ci && strcmp(peak_kernels[i], "fma_f32") != 0)
        continue;
      ks[n] = cal_kernel_find(peak_kernels[i]);
      ps[n] = (cal_params_t){.threads = tcounts[ti], .seed = o->seed,
                             .variant = CAL_VARIANT_AUTO};
      n++;
    }
  if (!(res->points = calloc(n, sizeof *res->points))) {
    rc = CAL_ENOMEM;
    goto out;
  }
  res->npoints = n;
  /* register-resident loops: no memory, no warm-up of caches; 20 ms
   * samples are already a million timer ticks */
  cal_harness_cfg_t h = o->hcfg;
  if (h.min_sample_s > 0.02)
    h.min_sample_s = 0.02;
  if (h.warmup_s > 0.02)
    h.warmup_s = 0.02;
  if ((rc = cal_run_points(r, &h, 0, ks, ps, n, res->points, "peak")) < 0)
    goto out;
  cross_check(r, res);
  scaling_check(r, res, o->threads);
  r->res->sec[CAL_SEC_ID_PEAK] = res;
  res = NULL;
out:
  cal_compute_peak_drop(res);
  return rc;
}
