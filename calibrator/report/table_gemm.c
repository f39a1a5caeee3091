/* The GEMM and scaling parts of the run's table. */
#include <stdio.h>
#include <string.h>

#include "results.h"
#include "run.h"

static const char *status_name(cal_point_status_t st) {
  return st == CAL_POINT_SKIPPED ? "skipped" : "failed";
}

/* "fp32 t=2    128:40 256:80 | again 256:81  [plateau]" */
static void sweep_line(const cal_gemm_result_t *g, const cal_gemm_sweep_t *s,
                       FILE *out) {
  fprintf(out, "    %-5s t=%-3d", s->kernel->dtype, s->threads);
  for (size_t j = 0; j < g->npoints; j++) {
    const cal_gemm_point_t *p = &g->points[j];
    if (p->pt.kernel != s->kernel || p->threads != s->threads)
      continue;
    if (p->confirms[0])
      fprintf(out, " | again");
    if (p->pt.status == CAL_POINT_OK)
      fprintf(out, " %lld:%.0f%s", (long long)p->n, p->pt.gflops_sum.median,
              p->pt.m.unstable ? "~" : "");
    else
      fprintf(out, " %lld:%s", (long long)p->n, status_name(p->pt.status));
  }
  fprintf(out, "  [%s]\n", s->stop);
}

void cal_gemm_print(const cal_run_t *r, const void *result, FILE *out) {
  const cal_gemm_result_t *g = result;
  fprintf(out, "\nGEMM (C = A*B, square n)      1 thread, pinned       %d threads\n",
          r->opt->threads);
  for (size_t i = 0; i < g->ndtypes; i++) {
    const cal_gemm_dtype_t *d = &g->dtypes[i];
    if (!d->supported) {
      fprintf(out, "  %-5s unsupported: %s\n", d->kernel->dtype,
              d->why ? d->why : "");
      continue;
    }
    fprintf(out, "  %-5s best GFLOPS          ", d->kernel->dtype);
    int col = 0;
    for (size_t j = 0; j < g->nsweeps; j++)
      if (g->sweeps[j].kernel == d->kernel)
        fprintf(out, "%s%9.1f at n=%-6lld", col++ ? "   " : "",
                g->sweeps[j].best_gflops, (long long)g->sweeps[j].best_n);
    fprintf(out, "\n");
  }
  fprintf(out, "  size sweep (GFLOPS):\n");
  for (size_t j = 0; j < g->nsweeps; j++)
    sweep_line(g, &g->sweeps[j], out);
}

void cal_scaling_print(const cal_run_t *r, const void *result, FILE *out) {
  const cal_scaling_result_t *s = result;
  fprintf(out, "\nScaling (n=%lld)   threads  GFLOPS   speedup  efficiency\n",
          (long long)s->n);
  for (size_t i = 0; i < s->npoints; i++) {
    const cal_scaling_point_t *p = &s->points[i];
    if (p->pt.status != CAL_POINT_OK)
      continue;
    fprintf(out, "  %-5s            %5d  %7.1f  %6.2fx  %8.0f%%\n",
            p->pt.kernel->dtype, p->pt.params.threads, p->pt.gflops_sum.median,
            p->speedup, 100.0 * p->efficiency);
  }
}
