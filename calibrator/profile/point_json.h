/* The JSON of a measured point (layout in profile.h): the one place the
 * point convention's keys are written. */
#ifndef CAL_POINT_JSON_H
#define CAL_POINT_JSON_H

#include <jansson.h>

#include "harness.h"
#include "memuse.h"

/* id, status, reason, metric and its samples/stats, time samples, kernel,
 * dtype, variant, engine, impl (when the engine names one), threads,
 * pinned, flops_per_run, bytes_per_run.  metric
 * is "gbps" for the bandwidth rate, else the name of the work rate
 * ("gflops", "gops" for int8).  New reference; NULL when out of memory. */
json_t *cal_point_json(const cal_point_t *pt, const char *id,
                       const char *metric);
/* The generic form: samples of `metric` with their summary, and the time
 * measurement behind them (may be NULL). */
json_t *cal_metric_json(const char *id, const char *metric,
                        int higher_is_better, const double *samples,
                        const cal_summary_t *sum, int unstable,
                        const cal_measurement_t *m);
/* A point that did not run: {id, status, reason}. */
json_t *cal_unmeasured_json(const char *id, cal_point_status_t status,
                            const char *reason);

/* What the run saw while pt was measured, into its object o: status
 * "contaminated" and the reason, the load others put on the cores
 * ({others, steal}), and the flags contaminated (kept under --allow-busy),
 * remeasured and throttled when set. */
void cal_point_watch_json(const cal_point_t *pt, json_t *o);
/* The process's memory while a point ran (memuse.h) into o: rss_before_bytes,
 * peak_rss_bytes and swap_bytes (null where unknown), major_faults (null
 * where unknown), swapped; nothing where it was not read. */
void cal_memuse_json(const cal_memuse_t *u, json_t *o);

#endif
