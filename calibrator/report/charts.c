/* The chart table and what each chart reads from a profile: the table
 * and the walk over every profile's points here, each chart's rows in
 * charts_rows.c, the extra variables of their scripts in charts_marks.c. */
#include "charts.h"
#include "charts_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

/* ---- reading points ---- */

int cal_chart_point_ok(const cal_vpoint_t *pt) {
  return pt->status && strcmp(pt->status, "ok") == 0;
}

/* The palette entry of a dtype, the same in every chart (gnuplot.c
 * defines the palette). */
int cal_chart_dtype_lt(const char *dt) {
  static const char *const order[] = {"fp64", "fp32", "bf16", "fp16",
                                      "int8", "tf32"};
  for (int i = 0; dt && i < 6; i++)
    if (strcmp(dt, order[i]) == 0)
      return i + 1;
  return 8;
}

/* Distinct thread counts among ok points: more than one? */
static int threads_vary(const cal_vpoints_t *points) {
  double first = NAN;
  for (size_t i = 0; i < points->n; i++) {
    if (!cal_chart_point_ok(points->p[i]))
      continue;
    double v = points->p[i]->threads.v;
    if (isnan(first))
      first = v;
    else if (v != first)
      return 1;
  }
  return 0;
}

/* Whether set has the series (profile, key). */
static int has_series(const cal_gp_set_t *set, size_t p, const char *key) {
  for (size_t i = 0; i < set->n; i++)
    if (set->s[i].profile == p && strcmp(set->s[i].key, key) == 0)
      return 1;
  return 0;
}

/* One row offered to the chart, added to set when it gives one; what
 * cannot be drawn, and the points of series past the most a chart
 * draws, counted in *left_out. */
static int offer(const cal_chart_t *ch, size_t p, const cal_chart_pt_t *in,
                 cal_gp_set_t *set, size_t *left_out) {
  cal_gp_row_t r = {0};
  char key[sizeof set->s->key] = "";
  int got = ch->row(in, &r, key, sizeof key);
  if (got > 0 && set->n >= CAL_CHART_MAX_SERIES && !has_series(set, p, key))
    got = -1;
  if (got < 0)
    ++*left_out;
  if (got > 0 && cal_gp_set_add(set, p, key, &r) < 0)
    return CAL_ENOMEM;
  return 0;
}

/* The points of one group of profile p into set. */
static int collect_group(const cal_chart_t *ch, const cal_chart_in_t *cin,
                         size_t p, const cal_vpoints_t *pts,
                         const cal_vbatch_mode_t *mode, cal_gp_set_t *set,
                         size_t *left_out) {
  cal_chart_pt_t in = {.view = cin->views[p], .profile = p, .group = pts,
                       .mode = mode, .group_key = mode ? mode->name : "",
                       .by_threads = threads_vary(pts)};
  for (size_t i = 0; i < pts->n; i++) {
    if (ch->ok_only && !cal_chart_point_ok(pts->p[i]))
      continue;
    in.pt = pts->p[i];
    if (offer(ch, p, &in, set, left_out) < 0)
      return CAL_ENOMEM;
  }
  return 0;
}

/* The section chart ch reads in v: whether v has it (*has), and its
 * points (NULL for the batch sweep and the roofline, which have no one
 * list of measured points). */
static const cal_vpoints_t *section_of(const cal_chart_t *ch,
                                       const cal_profile_view_t *v, int *has) {
  switch (ch->src) {
  case CAL_CHART_SRC_BATCH: *has = v->batch_sweep.has; return NULL;
  case CAL_CHART_SRC_ROOFLINE: *has = v->roofline.has; return NULL;
  case CAL_CHART_SRC_GEMM: *has = v->gemm.has; return &v->gemm.points;
  case CAL_CHART_SRC_SCALING: *has = v->scaling.has; return &v->scaling.points;
  case CAL_CHART_SRC_BANDWIDTH:
    *has = v->bandwidth.has;
    return &v->bandwidth.points;
  case CAL_CHART_SRC_ATTENTION:
    *has = v->attention.has;
    return &v->attention.points;
  case CAL_CHART_SRC_PEAK: *has = v->peak.has; return &v->peak.points;
  }
  *has = 0;
  return NULL;
}

int cal_chart_has_section(const cal_chart_t *ch, const cal_profile_view_t *v) {
  int has;
  section_of(ch, v, &has);
  return has;
}

/* The rows of profile p into set. */
static int collect_profile(const cal_chart_t *ch, const cal_chart_in_t *cin,
                           size_t p, cal_gp_set_t *set, size_t *left_out) {
  static const cal_vpoints_t none = {NULL, 0};
  const cal_profile_view_t *v = cin->views[p];
  if (ch->src == CAL_CHART_SRC_BATCH) {
    for (size_t m = 0; m < v->batch_sweep.nmodes; m++)
      if (collect_group(ch, cin, p, &v->batch_sweep.modes[m].points,
                        &v->batch_sweep.modes[m], set, left_out) < 0)
        return CAL_ENOMEM;
    return 0;
  }
  int has;
  const cal_vpoints_t *pts = section_of(ch, v, &has);
  if (pts)
    return collect_group(ch, cin, p, pts, NULL, set, left_out);
  /* the roofline's kernels: placed, not measured, so no status */
  cal_chart_pt_t in = {.view = v, .profile = p, .group = &none,
                       .group_key = ""};
  for (size_t k = 0; k < v->roofline.nkernels; k++) {
    in.kernel = &v->roofline.kernels[k];
    if (offer(ch, p, &in, set, left_out) < 0)
      return CAL_ENOMEM;
  }
  return 0;
}

int cal_chart_collect(const cal_chart_t *ch, const cal_chart_in_t *in,
                      cal_gp_set_t *set, size_t *left_out) {
  size_t none = 0;
  if (!left_out)
    left_out = &none;
  *left_out = 0;
  for (size_t p = 0; p < in->n; p++)
    if (collect_profile(ch, in, p, set, left_out) < 0)
      return CAL_ENOMEM;
  if (ch->finish)
    ch->finish(set);
  cal_chart_style(set);
  return 0;
}

/* ---- the table ---- */

/* In drawing order; page is the chart's place on the report page. */
const cal_chart_t cal_charts[] = {
    {.name = "batch_sweep", .section = "batch_sweep",
     .what = "Batch sweep", .what_fn = cal_chart_batch_what,
     .src = CAL_CHART_SRC_BATCH, .ok_only = 1,
     .row = cal_chart_batch_row, .width = 1200, .height = 560, .ncols = 9,
     .key_below = 1,
     .cols = {"batch_size", "examples_per_s", "ci_low", "ci_high", "is_peak",
              "is_knee", "latency_ms", "latency_ci_low", "latency_ci_high"},
     .page = 7,
     .caption = "Batch sweep: throughput against batch size (examples/s of "
                "prefill and train, tokens/s of decode) and latency per "
                "step; colour per mode, marker and dash per machine, each "
                "series named with its dtype."},
    {.name = "gemm", .section = "gemm", .what = "GEMM GFLOPS vs size",
     .src = CAL_CHART_SRC_GEMM, .ok_only = 1, .row = cal_chart_gemm_row,
     .header = cal_chart_gemm_header, .width = 1200, .key_marks = 4,
     .key_mark_chars = 66, .ncols = 7,
     .cols = {"cbrt(m*n*k)", "m", "n", "k", "gflops", "ci_low", "ci_high"},
     .page = 3,
     .caption = "GEMM throughput per size with confidence intervals and "
                "each dtype's measured compute peak (thin dashes); colour "
                "per dtype, marker per engine and machine, filled = all "
                "threads, open = one thread."},
    {.name = "scaling", .section = "scaling", .what = "Scaling with threads",
     .src = CAL_CHART_SRC_SCALING, .ok_only = 1, .row = cal_chart_scaling_row,
     .finish = cal_chart_scaling_ideal, .width = 1200, .height = 760,
     .key_per_series = 2, .key_rows = 12,
     .key_px = 32, .ncols = 6,
     .cols = {"threads", "gflops", "ideal_gflops", "efficiency", "ci_low",
              "ci_high"},
     .page = 4,
     .caption = "Thread scaling: GFLOPS against ideal linear scaling (open "
                "markers), and parallel efficiency; colour per dtype, "
                "marker and dash per machine."},
    {.name = "bandwidth", .section = "bandwidth",
     .what = "Memory bandwidth vs working set per core",
     .src = CAL_CHART_SRC_BANDWIDTH,
     .ok_only = 1, .row = cal_chart_bandwidth_row,
     .header = cal_chart_bandwidth_header,
     .left_out = cal_chart_bandwidth_left_out, .width = 1200,
     .key_marks = 2, .key_mark_chars = 62, .ncols = 4,
     .cols = {"bytes_per_core", "gbps", "ci_low", "ci_high"},
     .page = 6,
     .caption = "Memory bandwidth against the working set per core; colour "
                "per kernel, marker per kind (per level, staircase) and "
                "machine, filled = all threads; cache sizes per core as "
                "reported (grey) and where the bandwidth drops (orange), "
                "a dash per machine."},
    {.name = "roofline", .section = "roofline", .what = "Roofline",
     .src = CAL_CHART_SRC_ROOFLINE, .row = cal_chart_roofline_row,
     .has_extra = cal_chart_roofline_has_ceilings,
     .left_out = cal_chart_roofline_left_out,
     .header = cal_chart_roofline_header, .width = 1200, .height = 720,
     .key_marks = 9, .key_mark_chars = 72, .key_rows = 36, .ncols = 3,
     .with_text = 1, .cols = {"intensity_flop_per_byte", "gflops", "name"},
     .page = 1,
     .caption = "Roofline: a roof per dtype in its colour (int8 in GOPS), a "
                "dash per machine, stars at the ridge points; kernels: "
                "colour per dtype, marker per kernel family and machine, "
                "filled = all threads, open = one thread."},
    {.name = "attention", .section = "attention",
     .what = "Attention GFLOPS and fraction of GEMM per shape",
     .src = CAL_CHART_SRC_ATTENTION, .ok_only = 1,
     .row = cal_chart_attention_row, .finish = cal_chart_attention_place,
     .width = 1200, .height = 820, .key_rows = 14, .key_px = 38, .ncols = 6,
     .with_text = 1,
     .cols = {"position", "gflops", "ci_low", "ci_high", "pct_of_gemm",
              "shape"},
     .page = 5,
     .caption = "Attention: GFLOPS per shape and its fraction of the best "
                "GEMM at the same threads; colour per dtype, marker per "
                "machine, filled = all threads, open = one thread."},
    {.name = "peak", .section = "peak",
     .what = "Compute peak: measured vs theoretical",
     .src = CAL_CHART_SRC_PEAK, .ok_only = 1, .row = cal_chart_peak_row,
     .finish = cal_chart_peak_place, .width = 1200, .bar_px = 20, .ncols = 8,
     .with_text = 1,
     .cols = {"position", "pct_of_theoretical", "measured", "theoretical",
              "ci_low_pct", "ci_high_pct", "width", "kernel"},
     .page = 2,
     .caption = "Compute peak per dtype and engine as a share of the "
                "theoretical peak: a bar per machine (colour) and thread "
                "count (hatched: one thread) side by side."},
};

const size_t cal_ncharts = sizeof cal_charts / sizeof cal_charts[0];

const cal_chart_t *cal_chart_on_page(size_t place) {
  for (size_t i = 0; i < cal_ncharts; i++)
    if (cal_charts[i].page == (int)place + 1)
      return &cal_charts[i];
  return NULL;
}
