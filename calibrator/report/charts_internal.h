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
/* Whether gnuplot can place v on a logarithmic axis, or as a rate on a
 * linear one: positive, finite and within 1e-300 .. 1e300 (so that what
 * is computed from it stays finite). */
static inline int cal_chart_pos(double v) {
  return v >= 1e-300 && v <= 1e300;
}
/* "thread" for one, else "threads". */
static inline const char *cal_chart_thread_word(double t) {
  return t == 1 ? "thread" : "threads";
}
/* An interval bound of y: n where it can be drawn, else y. */
static inline double cal_chart_ci(cal_vnum_t n, double y) {
  return n.has && cal_chart_pos(n.v) ? n.v : y;
}
/* The palette entry of a dtype, the same in every chart (gnuplot.c
 * defines the palette); 8 (grey) for another. */
int cal_chart_dtype_lt(const char *dt);

/* charts_style.c: the markers and dashes of every series (after
 * collecting), the dash of profile p's lines, and the charts whose x
 * axis is a list of names: each row's text numbered 1, 2, ... in order
 * of first appearance over all series, each series spread over a share
 * `spread` of its name's place, the bar width in v[width_col] (-1:
 * none); returns how many names. */
void cal_chart_style(cal_gp_set_t *set);
int cal_chart_profile_dt(size_t profile);
/* the dash of profile p's marks (peaks, cache sizes): a dash type the
 * palette of gnuplot.c defines, unlike any series' */
int cal_chart_mark_dt(size_t profile);
size_t cal_chart_slots(cal_gp_set_t *set, double spread, int width_col);

/* rows (cal_chart_row_fn: 1 a row, 0 left out, -1 left out as it
 * cannot be drawn) */
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
/* after collecting: the peak's bars and the attention's points placed */
void cal_chart_peak_place(cal_gp_set_t *set);
void cal_chart_attention_place(cal_gp_set_t *set);

/* script headers (cal_gp_header_fn, arg: the cal_chart_in_t) */
void cal_chart_bandwidth_header(FILE *f, const void *arg);
/* the cache sizes the bandwidth chart cannot draw */
size_t cal_chart_bandwidth_left_out(const cal_chart_in_t *in);
void cal_chart_roofline_header(FILE *f, const void *arg);
void cal_chart_gemm_header(FILE *f, const void *arg);
/* the roofline is drawn when a profile has ceilings, without kernels */
int cal_chart_roofline_has_ceilings(const cal_chart_in_t *in);
/* the ceilings the roofline cannot draw */
size_t cal_chart_roofline_left_out(const cal_chart_in_t *in);
/* the batch sweep's title: what profile p measured */
void cal_chart_batch_what(const cal_chart_in_t *in, size_t p, char *buf,
                          size_t len);

#endif
