/* The GEMM and scaling parts of the run's table. */
#include <stdio.h>
#include <string.h>

#include "results.h"
#include "run_result.h"

static const char *status_name(cal_point_status_t st) {
  return cal_point_status_name(st);
}

/* One size of a sweep line: "512:80", "512:80~" (unstable), "512:skipped". */
static void size_cell(const cal_gemm_point_t *p, FILE *out) {
  if (p->pt.status == CAL_POINT_OK)
    fprintf(out, " %lld:%.0f%s", (long long)p->n, p->pt.gflops_sum.median,
            p->pt.m.unstable ? "~" : "");
  else
    fprintf(out, " %lld:%s", (long long)p->n, status_name(p->pt.status));
}

/* "fp32 onednn    t=2   512:80 1024:90 | again 1024:91  [plateau]": the
 * sizes in the order measured, then the confirmations. */
static void sweep_line(const cal_gemm_result_t *g, const cal_gemm_sweep_t *s,
                       FILE *out) {
  fprintf(out, "    %-5s %-9s t=%-3d", cal_kdtype_name(s->kernel->dtype),
          cal_kernel_engine(s->kernel), s->threads);
  for (int again = 0; again < 2; again++)
    for (size_t j = 0, first = 1; j < g->npoints; j++) {
      const cal_gemm_point_t *p = &g->points[j];
      if (p->pt.kernel != s->kernel || p->threads != s->threads ||
          !p->confirms[0] != !again)
        continue;
      if (again && first)
        fprintf(out, " | again");
      first = 0;
      size_cell(p, out);
    }
  fprintf(out, "  [%s]\n", s->stop);
}

/* "   1234.5 at n=2048  " or blanks of the same width. */
static void figure(const cal_gemm_best_t *b, FILE *out) {
  if (b->kernel)
    fprintf(out, "%9.1f at n=%-6lld", b->gflops, (long long)b->n);
  else
    fprintf(out, "%9s %-10s", "-", "");
}

/* The headline row of a dtype (with the engine that made its all-thread
 * figure, or its one-thread one where no all-thread point could be the
 * headline; where another engine made the one-thread figure, the row ends
 * naming it), then one row per engine with its figures and the
 * implementation it ran. */
static void dtype_rows(const cal_gemm_dtype_t *d, FILE *out) {
  char label[24];
  if (!d->supported) {
    fprintf(out, "  %-5s unsupported: %s\n", d->dtype, d->why);
    return;
  }
  snprintf(label, sizeof label, "best %s",
           strcmp(d->metric, "gops") == 0 ? "GOPS" : "GFLOPS");
  const cal_kernel_t *k = d->best[1].kernel ? d->best[1].kernel : d->best[0].kernel;
  fprintf(out, "  %-5s %-18s %-10s", d->dtype, label, k ? cal_kernel_engine(k) : "-");
  figure(&d->best[0], out);
  fprintf(out, "   ");
  figure(&d->best[1], out);
  const cal_kernel_t *k1 = d->best[0].kernel;
  if (k && k1 && strcmp(cal_kernel_engine(k1), cal_kernel_engine(k)) != 0)
    fprintf(out, "  1 thread: %s", cal_kernel_engine(k1));
  fprintf(out, "\n");
  for (size_t j = 0; j < d->nengines; j++) {
    const cal_gemm_engine_t *e = &d->engines[j];
    const char *engine = cal_kernel_engine(e->kernel);
    if (!e->selected)
      continue;
    if (!e->supported) {
      fprintf(out, "        %-18s unsupported: %s\n", engine, e->why ? e->why : "");
      continue;
    }
    fprintf(out, "        %-18s %-10s", engine, "");
    figure(&e->best[0], out);
    fprintf(out, "   ");
    figure(&e->best[1], out);
    const char *impl = e->best[1].impl[0] ? e->best[1].impl : e->best[0].impl;
    fprintf(out, "%s%s%s%s\n", impl[0] ? "  " : "", impl,
            e->failed ? "  " : "", e->failed ? "FAILED verification" : "");
  }
}

void cal_gemm_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_gemm_result_t *g = result;
  fprintf(out, "\n%-27s%-14s%-23s%d thread%s\n", "GEMM (C = A*B, square n)",
          "engine", "1 thread, pinned", r->opt->threads,
          r->opt->threads == 1 ? "" : "s");
  for (size_t i = 0; i < g->ndtypes; i++)
    dtype_rows(&g->dtypes[i], out);
  fprintf(out, "  size sweep (GFLOPS; GOPS for int8):\n");
  for (size_t j = 0; j < g->nsweeps; j++)
    sweep_line(g, &g->sweeps[j], out);
}

void cal_scaling_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_scaling_result_t *s = result;
  fprintf(out, "\nScaling (n=%lld)         threads  GFLOPS   speedup  efficiency\n",
          (long long)s->n);
  for (size_t i = 0; i < s->npoints; i++) {
    const cal_scaling_point_t *p = &s->points[i];
    if (p->pt.status != CAL_POINT_OK)
      continue;
    fprintf(out, "  %-5s %-9s  %5d  %7.1f  %6.2fx  %8.0f%%\n",
            cal_kdtype_name(p->pt.kernel->dtype), cal_kernel_engine(p->pt.kernel), p->pt.params.threads, p->pt.gflops_sum.median,
            p->speedup, 100.0 * p->efficiency);
  }
}
