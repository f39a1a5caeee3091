/* The scaling section: fp32 and fp64 GEMM GFLOPS versus threads at one
 * fixed size, each with the engine of its all-thread headline (OpenBLAS
 * when the GEMM section did not run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "results.h"
#include "run.h"
#include "timer.h"

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

/* The size of the curve: one for every machine, so that its points keep
 * their ids and figures whatever size the GEMM sweeps' time budget
 * reached.  2048: OpenBLAS's threads share each packed panel of B, and
 * where the hypervisor places two vCPUs on different dies (a round trip
 * of 300 ns and more instead of 50-65) that sharing cost 8-12% of a
 * 2-thread fp64 point at 1024 and about half that at 2048; a one-thread
 * fp64 point takes a third of a second on a Zen 4 core. */
#define SCALING_N 2048

/* The kernel of a dtype's all-thread headline; OpenBLAS's when the GEMM
 * section did not run; NULL when it ran without measuring the dtype (an
 * engine without it was forced). */
static const cal_kernel_t *headline_kernel(const cal_gemm_result_t *g,
                                           cal_kdtype_t dtype,
                                           const char *fallback) {
  const cal_gemm_best_t *b = cal_gemm_best(g, dtype, 1);
  return b ? b->kernel : g ? NULL : cal_kernel_find(fallback);
}

/* A scaling point this far below the same kernel at the same size and
 * threads in the GEMM section (the same code, measured seconds earlier in
 * this process) was disturbed: the VM's speed moved while it ran, which
 * neither the load on the cores nor the threads' CPU time shows. */
#define SCALING_AGREE 0.85

/* The GEMM section's best median of kernel k at n^3 on t threads (a
 * sweep point or its confirmation), 0 when it measured none. */
static double gemm_same(const cal_gemm_result_t *g, const cal_kernel_t *k,
                        int64_t n, int t) {
  double best = 0;
  for (size_t i = 0; g && i < g->npoints; i++) {
    const cal_gemm_point_t *gp = &g->points[i];
    if (gp->pt.kernel == k && gp->n == n && gp->threads == t &&
        gp->pt.status == CAL_POINT_OK && gp->pt.gflops_sum.median > best)
      best = gp->pt.gflops_sum.median;
  }
  return best;
}

static int below(const cal_point_t *pt, double ref) {
  return ref > 0 && pt->status == CAL_POINT_OK &&
         pt->gflops_sum.median < SCALING_AGREE * ref;
}

/* Measure the point again once (within the run's re-measuring time) when
 * it fell below the GEMM section's same point; still below, it is marked
 * unstable (compare does not judge one run by it) with a warning. */
static int check_against_gemm(cal_run_t *r, const cal_kernel_t *k,
                              const cal_params_t *p, double ref,
                              cal_point_t *pt) {
  if (below(pt, ref) && r->ctx->remeasure_left_s > 0) {
    double t0 = cal_now();
    cal_point_t again;
    int rc = cal_run_point(r, NULL, k, p, &again);
    if (rc < 0)
      return rc;
    cal_run_remeasured(r, t0);
    if (again.status == CAL_POINT_OK &&
        again.gflops_sum.median > pt->gflops_sum.median) {
      cal_point_free(pt);
      *pt = again;
    } else {
      cal_point_free(&again);
    }
    pt->remeasured = 1;
  }
  if (below(pt, ref)) {
    pt->m.unstable = 1;
    cal_run_warn(r, "scaling %s at %d threads: %.1f GFLOPS, below %.0f%% "
                    "of the same GEMM in the gemm section (%.1f): the "
                    "machine's speed moved while it ran; marked unstable",
                 k->name, p->threads, pt->gflops_sum.median,
                 100.0 * SCALING_AGREE, ref);
  }
  return 0;
}

int cal_scaling_measure(cal_run_t *r) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const int max = r->opt->threads;
  cal_scaling_result_t *s = calloc(1, sizeof *s);
  if (!s)
    return CAL_ENOMEM;
  r->res->sec[CAL_SEC_ID_SCALING] = s;
  s->n = SCALING_N;
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
      if (rc == 0)
        rc = check_against_gemm(r, k, &p, gemm_same(g, k, s->n, t), &sp->pt);
      if (rc < 0)
        return rc;
      s->npoints++;
      /* a role id: the size is the section's n */
      snprintf(sp->id, sizeof sp->id, "scaling/%s/%s/t%d",
               cal_kdtype_name(k->dtype), cal_kernel_engine(k), t);
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

CAL_PT_RESULT_DROP(cal_scaling_drop, cal_scaling_result_t)
