/* The machine's limits in the table: the compute peak per kernel against
 * the theory, the bandwidth per cache level, the roofline's ridge point
 * and efficiencies. */
#include <string.h>

#include "limits_json.h"
#include "results.h"
#include "table.h"

static const char *status_name(cal_point_status_t st) {
  return cal_point_status_name(st);
}

static int threads_of(const cal_point_t *pt) {
  return pt->params.threads > 0 ? pt->params.threads : 1;
}

/* A peak point's fraction of the theoretical peak of its unit (vector or
 * matrix engine), 0 when unknown. */
static double peak_efficiency(const cal_compute_peak_result_t *res,
                              const cal_point_t *pt) {
  double theo =
      res->have_model ? cal_peak_theory_gflops(&res->model, pt) : 0.0;
  return theo > 0 ? pt->gflops_sum.median / theo : 0;
}

void cal_compute_peak_print(const cal_run_result_t *r, const void *result,
                            FILE *out) {
  const cal_compute_peak_result_t *res = result;
  fprintf(out, "\nPeak (register- and tile-resident multiply-add)");
  if (res->have_clock)
    fprintf(out, ", clock %.2f GHz under vector load", res->clock.ghz);
  fprintf(out, "\n  kernel    variant  threads   measured  theoretical  of theory\n");
  for (size_t i = 0; i < res->npoints; i++) {
    const cal_point_t *pt = &res->points[i];
    if (pt->status != CAL_POINT_OK) {
      fprintf(out, "  %-9s %s: %s\n", pt->kernel->name,
              status_name(pt->status), pt->reason);
      continue;
    }
    const char *metric = cal_limits_metric(pt);
    double v = pt->gflops_sum.median, eff = peak_efficiency(res, pt);
    fprintf(out, "  %-9s %-8s %7d %8.1f %-5s", pt->kernel->name, pt->variant,
            threads_of(pt), v, strcmp(metric, "gops") == 0 ? "GOPS" : "GF/s");
    if (eff > 0)
      fprintf(out, " %8.1f %6.0f%%", v / eff, 100 * eff);
    fprintf(out, "%s\n", cal_table_unstable_mark(pt));
  }
  if (res->have_model)
    fprintf(out, "  theoretical: %s\n", res->model.assumption);
}

void cal_bandwidth_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_bandwidth_result_t *res = result;
  fprintf(out, "\nBandwidth (GB/s, STREAM byte counts)   level   working set  threads  GB/s\n");
  for (size_t i = 0; i < res->npoints; i++) {
    const cal_point_t *pt = &res->points[i];
    if (!res->levels[i])
      continue; /* the staircase is for the plot */
    double ws = (double)pt->params.bytes;
    fprintf(out, "  %-36s %-7s %9.1f %s %4lld  ", pt->kernel->name,
            res->levels[i], ws >= 1048576.0 ? ws / 1048576.0 : ws / 1024.0,
            ws >= 1048576.0 ? "MiB" : "KiB", (long long)threads_of(pt));
    if (pt->status == CAL_POINT_OK)
      fprintf(out, "%6.1f%s\n", pt->gbps_sum.median,
              cal_table_unstable_mark(pt));
    else
      fprintf(out, "%s: %s\n", status_name(pt->status), pt->reason);
  }
}

/* The matrix engine's ceilings, one line, when it was measured. */
static void print_matrix_ceilings(const cal_roofline_t *roof, FILE *out) {
  const char *sep = "  matrix engine ceilings:";
  for (int dt = 0; dt < CAL_DT_COUNT; dt++) {
    if (!(roof->matrix_gflops[dt] > 0))
      continue;
    fprintf(out, "%s %s %.0f %s (%s)", sep, cal_ceiling_dtype_name(dt),
            roof->matrix_gflops[dt], dt == CAL_DT_INT8 ? "GOPS" : "GFLOPS",
            roof->matrix_kernel[dt] ? roof->matrix_kernel[dt] : "?");
    sep = ",";
  }
  if (sep[0] == ',')
    fprintf(out, "\n");
}

void cal_roofline_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_roofline_result_t *res = result;
  const cal_roofline_t *roof = &res->roof;
  double peak = roof->compute_gflops[CAL_DT_FP32];
  double mem = cal_ridge_point(peak, cal_roofline_gbps(roof, "memory"));
  if (peak > 0 && mem > 0)
    fprintf(out, "\nRoofline (%lld thread%s): fp32 ridge point %.1f FLOP/byte "
                 "against memory\n",
            (long long)roof->threads, roof->threads == 1 ? "" : "s", mem);
  print_matrix_ceilings(roof, out);
  for (int i = 0; i < CAL_NEFF; i++)
    if (res->efficiency[i] >= 0)
      fprintf(out, "  %-36s %5.0f%%\n", cal_efficiency_keys[i],
              100 * res->efficiency[i]);
}
