/* The run's readable table. */
#include "table.h"

#include "build_info.h"

const char *cal_table_unstable_mark(const cal_point_t *pt) {
  return pt->m.unstable ? " ~" : "";
}

void cal_table_print(const cal_run_t *r, FILE *out) {
  const cal_hwinfo_t *hw = &r->ctx->hw;
  fprintf(out, "\ncalibrate %s  %s, %d usable core%s, %s %s (%s kernels)\n",
          cal_version, hw->brand, hw->usable_cores,
          hw->usable_cores == 1 ? "" : "s", hw->blas_library, hw->blas_version,
          hw->blas_coretype);
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    const void *res = cal_results_get(r->res, i);
    if (res)
      cal_sections[i].print(r, res, out);
  }
  const cal_quality_t *q = &r->res->quality;
  fprintf(out, "\nQuality: %d unstable point%s (CV > %.0f%%, marked ~), %d failed\n",
          q->unstable, q->unstable == 1 ? "" : "s",
          100 * r->opt->hcfg.cv_threshold, q->failed);
  for (size_t i = 0; i < q->nwarnings; i++)
    fprintf(out, "  warning: %s\n", q->warnings[i]);
}
