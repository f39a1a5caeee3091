/* libFuzzer target: the curve CSV reader (cal_curves_read), then the
 * analysis `calibrate peak` runs on every curve it accepts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "curve_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f)
    return 0;
  cal_curve_set_t *set = NULL;
  char err[512];
  if (cal_curves_read(f, "fuzz", &set, err, sizeof err) == 0) {
    cal_curve_opts_t o;
    cal_curve_opts_default(&o);
    for (size_t i = 0; i < set->n; i++) {
      cal_curve_result_t *r = NULL;
      if (cal_curve_analyze(set->curves[i].points, set->curves[i].n, &o,
                            &r) == 0) {
        cal_curve_rec_t rec;
        cal_curve_recommend(r, 64, &rec);
        cal_curve_result_free(r);
      }
    }
    cal_curve_set_free(set);
  }
  fclose(f);
  return 0;
}
