/* The charts of `calibrate plot`, described by one table (cal_charts): for
 * each, the profile section it reads, where its points are, how a point
 * becomes a row of the data file and which series it joins, and the
 * columns and extra script variables it writes, and its place and
 * caption on the report page.  cal_chart_collect() walks the points of
 * every profile the same way for all of them.
 * Everything here reads borrowed profile trees and allocates only the
 * rows of the caller's set (free with cal_gp_set_free()). */
#ifndef CAL_CHARTS_H
#define CAL_CHARTS_H

#include <jansson.h>
#include <stddef.h>

#include "gnuplot.h"

/* The profiles charts are drawn from; every pointer is borrowed. */
typedef struct cal_chart_in {
  const json_t *const *roots; /* n profile trees */
  const char *const *labels;  /* n names for legends and marks */
  size_t n;
} cal_chart_in_t;

/* One point offered to a chart's row function. */
typedef struct cal_chart_pt {
  const json_t *pt;      /* the point */
  const json_t *group;   /* its group (a batch_sweep mode), else the section */
  const char *group_key; /* the group's name; "" without groups */
  int by_threads;        /* the group's ok points differ in threads */
} cal_chart_pt_t;

/* Fill r and the series key from p; 0 leaves the point out. */
typedef int (*cal_chart_row_fn)(const cal_chart_pt_t *p, cal_gp_row_t *r,
                                char *key, size_t keylen);

typedef struct cal_chart {
  const char *name;    /* file and template name */
  const char *section; /* profile section it reads */
  const char *what;    /* start of the title */
  /* the start of the title from the profiles; NULL: what */
  void (*what_fn)(const cal_chart_in_t *in, char *buf, size_t len);
  int width, height;   /* image size; 0: the default */
  const char *groups;  /* NULL, or the object of the section whose members
                          each hold points (named by the member's key) */
  const char *points;  /* the array of points in the section or group */
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

/* The chart at place 0, 1, ... of the report page; NULL past the last. */
const cal_chart_t *cal_chart_on_page(size_t place);

/* Add the rows of ch from every profile of in to set; CAL_ENOMEM. */
int cal_chart_collect(const cal_chart_t *ch, const cal_chart_in_t *in,
                      cal_gp_set_t *set);

#endif
