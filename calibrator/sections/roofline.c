/* The roofline, derived: compute ceilings from the peak section, bandwidth
 * ceilings from the bandwidth section, and every measured kernel at all
 * threads (GEMM sizes, attention shapes, layer batches) placed against
 * them, with the efficiencies the profile states. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "limits_json.h"
#include "results.h"
#include "run.h"

#define MAX_KERNELS 512

void cal_roofline_drop(void *result) {
  cal_roofline_result_t *res = result;
  if (!res)
    return;
  free(res->kernels);
  free(res->kernel_gflops);
  free(res);
}

static int threads_of(const cal_point_t *pt) {
  return pt->params.threads > 0 ? pt->params.threads : 1;
}

/* A shell of an ok point at `threads` threads with its analytic work:
 * kernel, threads, flops and bytes per run, median GFLOPS, variant. */
static void add_shell(cal_roofline_result_t *res, const cal_point_t *pt,
                      int threads) {
  if (!pt->kernel || pt->status != CAL_POINT_OK ||
      threads_of(pt) != threads || res->nkernels >= MAX_KERNELS)
    return;
  size_t i = res->nkernels++;
  cal_point_t *s = &res->kernels[i];
  memset(s, 0, sizeof *s);
  s->kernel = pt->kernel;
  s->status = CAL_POINT_OK;
  s->params.threads = threads;
  s->flops = pt->flops;
  s->bytes = pt->bytes;
  res->kernel_gflops[i] = pt->gflops_sum.median;
  s->gflops = &res->kernel_gflops[i];
  s->gflops_sum.median = res->kernel_gflops[i];
  snprintf(s->variant, sizeof s->variant, "%s", pt->variant);
}

static void add_kernels(const cal_run_t *r, cal_roofline_result_t *res) {
  int threads = r->opt->threads;
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  for (size_t i = 0; g && i < g->npoints; i++)
    add_shell(res, &g->points[i].pt, threads);
  const cal_attention_result_t *a =
      cal_results_get(r->res, CAL_SEC_ID_ATTENTION);
  for (size_t i = 0; a && i < a->npoints; i++)
    add_shell(res, &a->points[i].pt, threads);
  const cal_batch_result_t *b = cal_results_get(r->res, CAL_SEC_ID_BATCH);
  for (int m = 0; b && m < 2; m++)
    for (size_t i = 0; b->ran[m] && i < b->modes[m].npoints; i++)
      if (b->modes[m].points[i].measured)
        add_shell(res, &b->modes[m].points[i].pt, threads);
}

/* The best all-thread GEMM figure of `dtype` (any engine), 0 when none. */
static double gemm_best(const cal_gemm_result_t *g, cal_kdtype_t dtype) {
  double best = 0;
  for (size_t i = 0; g && i < g->ndtypes; i++) {
    const cal_gemm_dtype_t *d = &g->dtypes[i];
    if (d->dtype && d->kdtype == dtype && d->best[1].kernel &&
        d->best[1].gflops > best)
      best = d->best[1].gflops;
  }
  return best;
}

/* The efficiencies: the GEMM against the measured peak (fp32 against the
 * FMA loop, bf16 against the matrix engine's tile loop), the measured
 * peak against the theory, the fused attention against the GEMM. */
static void efficiencies(const cal_run_t *r,
                         const cal_compute_peak_result_t *pk,
                         cal_roofline_result_t *res) {
  int threads = r->opt->threads;
  double peak32 = 0, peak64 = 0, matrix_bf16 = 0;
  for (int i = 0; i < CAL_NEFF; i++)
    res->efficiency[i] = -1;
  for (size_t i = 0; i < pk->npoints; i++) {
    const cal_point_t *p = &pk->points[i];
    if (p->status != CAL_POINT_OK || p->params.threads != threads)
      continue;
    if (strcmp(p->kernel->name, "fma_f32") == 0) peak32 = p->gflops_sum.median;
    if (strcmp(p->kernel->name, "fma_f64") == 0) peak64 = p->gflops_sum.median;
    if (cal_limits_is_matrix(p) && p->kernel->dtype == CAL_DTYPE_BF16 &&
        p->gflops_sum.median > matrix_bf16)
      matrix_bf16 = p->gflops_sum.median;
  }
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  if (peak32 > 0 && g && g->sgemm_best[1] > 0)
    res->efficiency[CAL_EFF_GEMM_FP32_OF_PEAK] = g->sgemm_best[1] / peak32;
  double gemm_bf16 = gemm_best(g, CAL_DTYPE_BF16);
  if (matrix_bf16 > 0 && gemm_bf16 > 0)
    res->efficiency[CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK] = gemm_bf16 / matrix_bf16;
  if (res->have_model) {
    double t32 = cal_theory_gflops(&res->model, CAL_DT_FP32);
    double t64 = cal_theory_gflops(&res->model, CAL_DT_FP64);
    if (t32 > 0 && peak32 > 0)
      res->efficiency[CAL_EFF_PEAK_FP32_OF_THEORY] = peak32 / t32;
    if (t64 > 0 && peak64 > 0)
      res->efficiency[CAL_EFF_PEAK_FP64_OF_THEORY] = peak64 / t64;
  }
  const cal_attention_result_t *a =
      cal_results_get(r->res, CAL_SEC_ID_ATTENTION);
  double best_ratio = 0;
  for (size_t i = 0; a && i < a->npoints; i++) {
    const cal_attn_point_t *p = &a->points[i];
    if (!p->reference && !p->bf16 && p->ratio_to_gemm > best_ratio &&
        threads_of(&p->pt) == threads)
      best_ratio = p->ratio_to_gemm;
  }
  if (best_ratio > 0)
    res->efficiency[CAL_EFF_ATTENTION_OF_GEMM] = best_ratio;
}

int cal_roofline_measure(cal_run_t *r) {
  const cal_compute_peak_result_t *pk =
      cal_results_get(r->res, CAL_SEC_ID_PEAK);
  const cal_bandwidth_result_t *bw =
      cal_results_get(r->res, CAL_SEC_ID_BANDWIDTH);
  if (!pk || !pk->npoints || !bw || !bw->npoints)
    return 0; /* nothing to draw ceilings from */
  cal_roofline_result_t *res = calloc(1, sizeof *res);
  int rc = CAL_ENOMEM;
  if (!res || !(res->kernels = calloc(MAX_KERNELS, sizeof *res->kernels)) ||
      !(res->kernel_gflops = calloc(MAX_KERNELS, sizeof *res->kernel_gflops)))
    goto out;
  if ((rc = cal_roofline_from_points(pk->points, pk->npoints, bw->points,
                                     bw->levels, bw->npoints, r->opt->threads,
                                     &res->roof)) < 0)
    goto out;
  res->have_model = pk->have_model;
  res->model = pk->model;
  add_kernels(r, res);
  efficiencies(r, pk, res);
  r->res->sec[CAL_SEC_ID_ROOFLINE] = res;
  res = NULL;
out:
  cal_roofline_drop(res);
  return rc;
}
