/* The charts of `calibrate plot`, described by one table (cal_charts): for
 * each, the profile section it reads, how a point becomes a row of the
 * data file and which series it joins, the columns and extra script
 * variables it writes, and its place and caption on the report page.
 * cal_chart_collect() walks the points of every profile the same way for
 * all of them.  Everything here reads borrowed typed views of profiles
 * (profile/view.h) and allocates only the rows of the caller's set (free
 * with cal_gp_set_free()). */
#ifndef CAL_CHARTS_H
#define CAL_CHARTS_H

#include <stddef.h>

#include "gnuplot.h"
#include "view.h"

/* The profiles charts are drawn from; every pointer is borrowed. */
typedef struct cal_chart_in {
  const cal_profile_view_t *const *views; /* n profiles */
  const char *const *labels;              /* n names for legends and marks */
  size_t n;
  int plot_px; /* the plot's width in pixels, beside its key; 0: 700 */
} cal_chart_in_t;

/* Where a chart's points are in a profile. */
typedef enum cal_chart_src {
  CAL_CHART_SRC_BATCH = 0, /* batch_sweep, a group per mode */
  CAL_CHART_SRC_GEMM,
  CAL_CHART_SRC_SCALING,
  CAL_CHART_SRC_BANDWIDTH,
  CAL_CHART_SRC_ROOFLINE, /* the roofline's kernels, not measured points */
  CAL_CHART_SRC_ATTENTION,
  CAL_CHART_SRC_PEAK,
} cal_chart_src_t;

/* One point offered to a chart's row function. */
typedef struct cal_chart_pt {
  const cal_profile_view_t *view;   /* the profile it is from */
  size_t profile;                   /* its index in the chart's input */
  const cal_vpoint_t *pt;           /* the point; NULL for a kernel */
  const cal_vroof_kernel_t *kernel; /* a roofline kernel; else NULL */
  const cal_vpoints_t *group;       /* the points of its group */
  const cal_vbatch_mode_t *mode;    /* its batch-sweep mode; else NULL */
  const char *group_key;            /* the group's name; "" without groups */
  int by_threads; /* the group's ok points differ in threads */
} cal_chart_pt_t;

/* Fill r and the series key from p: 1 a row; 0 leaves the point out
 * (a confirmation, a point with no name); -1 leaves it out as one that
 * cannot be drawn (a figure of 0 on a logarithmic axis, or past
 * gnuplot's range), which the chart says. */
typedef int (*cal_chart_row_fn)(const cal_chart_pt_t *p, cal_gp_row_t *r,
                                char *key, size_t keylen);

typedef struct cal_chart {
  const char *name;    /* file and template name */
  const char *section; /* the section it reads, as notes name it */
  cal_chart_src_t src; /* where its points are */
  const char *what;    /* start of the title */
  /* what profile p measured, named in the title (one line when every
   * profile's is the same, else a line each); NULL: nothing */
  void (*what_fn)(const cal_chart_in_t *in, size_t p, char *buf,
                  size_t len);
  /* marks of the profiles it cannot draw (its rows' are counted by
   * cal_chart_collect); NULL: none */
  size_t (*left_out)(const cal_chart_in_t *in);
  int width, height;   /* image size; 0: the default */
  int bar_px;          /* bars side by side: pixels each at least; 0 */
  /* the key beside the plot: entries per series (0: 1) and per profile
   * besides them (roofs, peaks, marks) and the characters of the longest
   * of those; how many fit the height (0: 28); pixels of height each one
   * more needs (0: 16); key_below: the keys are under the panels */
  int key_per_series, key_marks, key_mark_chars, key_rows, key_px;
  int key_below;
  int ok_only;         /* only points whose status is "ok" */
  cal_chart_row_fn row;
  void (*finish)(cal_gp_set_t *set);          /* after collecting; NULL */
  int (*has_extra)(const cal_chart_in_t *in); /* drawn with no series */
  cal_gp_header_fn header; /* extra variables; its arg is the chart_in */
  int ncols, with_text;
  const char *cols[CAL_GP_NCOL + 1];
  int page;            /* its place on the report page, from 1 */
  const char *caption; /* its caption on the report page */
} cal_chart_t;

/* The charts in drawing order, cal_ncharts of them (counted from the
 * table itself). */
extern const cal_chart_t cal_charts[];
extern const size_t cal_ncharts;

/* Whether profile v has the section chart ch reads. */
int cal_chart_has_section(const cal_chart_t *ch, const cal_profile_view_t *v);

/* The chart at place 0, 1, ... of the report page; NULL past the last. */
const cal_chart_t *cal_chart_on_page(size_t place);

/* A chart draws at most this many series; the points of more are left
 * out and counted in *left_out. */
#define CAL_CHART_MAX_SERIES 96

/* Add the rows of ch from every profile of in to set, each series with
 * its style (a colour, and a marker and dash no other series of the
 * chart shares with that colour); *left_out (NULL: not counted) counts
 * the points that cannot be drawn.  0 or CAL_ENOMEM. */
int cal_chart_collect(const cal_chart_t *ch, const cal_chart_in_t *in,
                      cal_gp_set_t *set, size_t *left_out);

#endif
