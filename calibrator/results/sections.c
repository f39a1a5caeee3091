/* The section table, built from sections/section_list.h, and what frees
 * the results its rows leave. */
#include <stdlib.h>
#include <string.h>

#include "results.h"
#include "run_result.h"

const cal_section_t cal_sections[] = {
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p, rd, ch) \
  {key, full, quick, derived, m, d, w, p, rd, ch},
#include "section_list.h"
#undef CAL_SECTION
};

void cal_results_free(cal_results_t *res) {
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    if (res->sec[i])
      cal_sections[i].drop(res->sec[i]);
    res->sec[i] = NULL;
  }
  for (size_t i = 0; i < res->quality.nwarnings; i++)
    free(res->quality.warnings[i]);
  free(res->quality.warnings);
  for (size_t i = 0; i < res->quality.nsanity; i++)
    free(res->quality.sanity[i]);
  free(res->quality.sanity);
  memset(&res->quality, 0, sizeof res->quality);
}

cal_points_result_t *cal_points_new(const char *title, size_t n) {
  cal_points_result_t *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->title = title;
  p->ids = calloc(n ? n : 1, sizeof *p->ids);
  p->points = calloc(n ? n : 1, sizeof *p->points);
  if (!p->ids || !p->points) {
    cal_points_drop(p);
    return NULL;
  }
  p->n = n;
  return p;
}

void cal_points_drop(void *result) {
  cal_points_result_t *p = result;
  if (!p)
    return;
  cal_points_free(p->points, p->n);
  free(p->ids);
  free(p);
}

void cal_points_free(cal_point_t *points, size_t n) {
  for (size_t i = 0; points && i < n; i++)
    cal_point_free(&points[i]);
  free(points);
}
