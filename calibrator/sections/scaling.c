/* The scaling section: fp32 and fp64 GEMM GFLOPS versus threads at the
 * GEMM section's all-thread best size, each with the engine of its
 * all-thread headline (OpenBLAS when the GEMM section did not run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "results.h"
#include "run.h"

/* Thread counts for the scaling curve: every count up to 16, then powers
 * of two and the full count. */
static int next_threads(int t, int max) {
  if (t < 16)
    return t + 1;
  return t * 2 < max ? t * 2 : (t == max ? max + 1 : max);
}

static size_t count_points(int max) {
  size_t n = 0;
  for (int t = 1; t <= max; t = next_threads(t, max))
    n++;
  return n;
}

/* The kernel of a dtype's all-thread headline; OpenBLAS's when the GEMM
 * section did not run; NULL when it ran without measuring the dtype (an
 * engine without it was forced). */
static const cal_kernel_t *headline_kernel(const cal_gemm_result_t *g,
                                           cal_kdtype_t dtype,
                                           const char *fallback) {
  const cal_gemm_best_t *b = cal_gemm_best(g, dtype, 1);
  return b ? b->kernel : g ? NULL : cal_kernel_find(fallback);
}

int cal_scaling_measure(cal_run_t *r) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const int max = r->opt->threads;
  cal_scaling_result_t *s = calloc(1, sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  r->res->sec[CAL_SEC_ID_SCALING] = s;
  /* the all-thread best size, capped so a one-thread fp64 run stays near
   * a quarter second: past 2048 the curve is flat and only costs time */
  s->n = g && g->sgemm_best_n[1] ? g->sgemm_best_n[1] : 1024;
  if (s->n > 2048)
    s->n = 2048;
  s->points = calloc(2 * count_points(max), sizeof *s->points);
  if (!s->points)
    return CAL_ENOMEM;
  const cal_kernel_t *ks[2] = {headline_kernel(g, CAL_DTYPE_FP32, "sgemm"),
                               headline_kernel(g, CAL_DTYPE_FP64, "dgemm")};
  for (size_t i = 0; i < 2; i++) {
    const cal_kernel_t *k = ks[i];
    if (!k)
      continue;
    double g1 = 0;
    for (int t = 1; t <= max; t = next_threads(t, max)) {
      cal_params_t p = {.m = s->n, .n = s->n, .k = s->n, .threads = t,
                        .seed = r->opt->seed + 7, .variant = -1};
      cal_progress(r, "scaling %s %lld^3, %d thread%s", cal_kdtype_name(k->dtype),
                   (long long)s->n, t, t > 1 ? "s" : "");
      cal_scaling_point_t *sp = &s->points[s->npoints];
      int rc = cal_run_point(r, NULL, k, &p, &sp->pt);
      if (rc < 0)
        return rc;
      s->npoints++;
      /* OpenBLAS points keep their old ids, as in the GEMM section */
      const char *e = cal_kernel_engine(k);
      int plain = k->engine == CAL_ENGINE_OPENBLAS;
      snprintf(sp->id, sizeof sp->id, "scaling/%s%s%s/%lld/t%d",
               plain ? "" : e, plain ? "" : "/", cal_kdtype_name(k->dtype), (long long)s->n, t);
      if (sp->pt.status != CAL_POINT_OK)
        continue;
      double gf = sp->pt.gflops_sum.median;
      if (t == 1)
        g1 = gf;
      if (g1 > 0) {
        sp->speedup = gf / g1;
        sp->efficiency = gf / (g1 * t);
      }
    }
  }
  return 0;
}

void cal_scaling_drop(void *result) {
  cal_scaling_result_t *s = result;
  if (!s)
    return;
  for (size_t i = 0; i < s->npoints; i++)
    cal_point_free(&s->points[i].pt);
  free(s->points);
  free(s);
}
