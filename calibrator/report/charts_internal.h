/* What the parts of the chart table share: the row functions of
 * charts_rows.c, the script variables and titles of charts_marks.c, and
 * two readers of points (charts.c). */
#ifndef CAL_CHARTS_INTERNAL_H
#define CAL_CHARTS_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "charts.h"
#include "gnuplot.h"

/* Whether a point's status is "ok". */
int cal_chart_point_ok(const cal_vpoint_t *pt);
/* A number of a view, or d where the profile has none. */
static inline double cal_chart_num(cal_vnum_t n, double d) {
  return n.has ? n.v : d;
}
/* The palette entry of a dtype, the same in every chart (gnuplot.c
 * defines the palette). */
int cal_chart_dtype_lt(const char *dt);

/* rows (cal_chart_row_fn) */
int cal_chart_batch_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                        size_t keylen);
int cal_chart_gemm_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen);
int cal_chart_scaling_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                          size_t keylen);
/* the scaling chart's ideal line, after collecting */
void cal_chart_scaling_ideal(cal_gp_set_t *set);
int cal_chart_bandwidth_row(const cal_chart_pt_t *p, cal_gp_row_t *r,
                            char *key, size_t keylen);
int cal_chart_roofline_row(const cal_chart_pt_t *p, cal_gp_row_t *r,
                           char *key, size_t keylen);
int cal_chart_attention_row(const cal_chart_pt_t *p, cal_gp_row_t *r,
                            char *key, size_t keylen);
int cal_chart_peak_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen);

/* script headers (cal_gp_header_fn, arg: the cal_chart_in_t) */
void cal_chart_bandwidth_header(FILE *f, const void *arg);
void cal_chart_roofline_header(FILE *f, const void *arg);
void cal_chart_gemm_header(FILE *f, const void *arg);
/* the roofline is drawn when a profile has ceilings, without kernels */
int cal_chart_roofline_has_ceilings(const cal_chart_in_t *in);
/* the batch sweep's title: what was measured */
void cal_chart_batch_what(const cal_chart_in_t *in, char *buf, size_t len);

#endif
