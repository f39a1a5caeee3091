/* The run's readable table. */
#include "table.h"

#include "build_info.h"
#include "cal_esc.h"
#include "results.h"

const char *cal_table_unstable_mark(const cal_point_t *pt) {
  return pt->m.unstable ? " ~" : "";
}

void cal_points_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_points_result_t *p = result;
  fprintf(out, "\n%s\n", p->title);
  for (size_t i = 0; i < p->n; i++) {
    const cal_point_t *pt = &p->points[i];
    if (pt->status != CAL_POINT_OK)
      fprintf(out, "  %-48s %s: %s\n", p->ids[i],
              cal_point_status_name(pt->status), pt->reason);
    else
      fprintf(out, "  %-48s %9.1f %s%s\n", p->ids[i],
              pt->gbps && !pt->gflops ? pt->gbps_sum.median : pt->gflops_sum.median,
              pt->gbps && !pt->gflops ? "GB/s" : "GFLOPS",
              cal_table_unstable_mark(pt));
  }
}

static void table_write(const void *arg, FILE *out) {
  const cal_run_result_t *r = arg;
  const cal_hwinfo_t *hw = r->hw;
  fprintf(out, "\ncalibrate %s  %s, %d usable core%s, %s %s (%s kernels)\n",
          cal_version, hw->brand, hw->usable_cores,
          hw->usable_cores == 1 ? "" : "s", hw->blas_library, hw->blas_version,
          hw->blas_coretype);
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    const void *res = cal_results_get(&r->res, i);
    if (res)
      cal_sections[i].print(r, res, out);
  }
  const cal_quality_t *q = &r->res.quality;
  fprintf(out, "\nQuality: %d unstable point%s (CV > %.0f%%, marked ~), %d failed\n",
          q->unstable, q->unstable == 1 ? "" : "s",
          100 * r->opt->hcfg.cv_threshold, q->failed);
  if (q->contaminated || q->remeasured)
    fprintf(out, "  busy machine: %d point%s contaminated%s, %d measured "
                 "again (%.1f s)\n",
            q->contaminated, q->contaminated == 1 ? "" : "s",
            r->opt->allow_busy && q->contaminated ? " (kept: --allow-busy)" : "",
            q->remeasured, q->remeasure_s);
  if (q->rtt_points > 0)
    fprintf(out, "  threads' cache-line round trip %.0f-%.0f ns over %d "
                 "point%s (team_rtt_ns: tens of ns on one L3, hundreds "
                 "across dies)\n",
            q->rtt_min_ns, q->rtt_max_ns, q->rtt_points,
            q->rtt_points == 1 ? "" : "s");
  for (size_t i = 0; i < q->nsanity; i++)
    fprintf(out, "  check: %s\n", q->sanity[i]);
  if (q->throttled)
    fprintf(out, "  %s\n", q->throttle_note);
  for (size_t i = 0; i < q->nwarnings; i++)
    fprintf(out, "  warning: %s\n", q->warnings[i]);
}

/* The table is laid out first and printed escaped (cal_esc.h, lines
 * kept): the CPU's brand, the libraries' names and the reasons and
 * warnings it shows come from outside, and none may act on the terminal
 * that shows them. */
void cal_table_print(const cal_run_result_t *r, FILE *out) {
  cal_esc_layout(out, table_write, r);
}
