/* Profile JSON of the machine-limits sections: `peak`, `bandwidth`,
 * `roofline` (layout in profile.h's point convention; see limits_json.c for
 * the keys of each section).  Every builder returns a new reference the
 * caller owns (json_decref), or NULL when out of memory / on bad input.
 * Points are borrowed; nothing is kept after the call. */
#ifndef CAL_LIMITS_JSON_H
#define CAL_LIMITS_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "clock.h"
#include "harness.h"
#include "roofline.h"

/* json_object_set_new / json_array_append_new that clear *ok on failure
 * (v NULL included); the reference to v is consumed either way. */
void cal_limits_put(json_t *o, const char *k, json_t *v, int *ok);
void cal_limits_append(json_t *a, json_t *v, int *ok);
/* The end of a builder: v when ok, else NULL with v released. */
json_t *cal_limits_done(json_t *v, int ok);
/* The end of a section builder: points under "points" of sec, then
 * cal_limits_done(sec, ok); both references are consumed, either may be
 * NULL. */
json_t *cal_limits_finish(json_t *sec, json_t *points, int ok);

/* The point's metric: "gops" for int8, "gflops" for other compute, "gbps"
 * for stream kernels.  Static storage. */
const char *cal_limits_metric(const cal_point_t *pt);

/* One point in the profile convention: id, status (+ reason), kernel, dtype,
 * variant, threads, pinned, metric, <metric>, samples_<metric>,
 * higher_is_better, stats, samples_ms, time_ms, iters (ok points only
 * carry the measured keys).  metric NULL: cal_limits_metric(pt). */
json_t *cal_limits_point_json(const cal_point_t *pt, const char *id,
                              const char *metric);

/* Whether a point's kernel runs on the matrix engine (family "matrix"). */
int cal_limits_is_matrix(const cal_point_t *pt);

/* The theoretical GFLOPS (GOPS for int8) a peak point is a fraction of:
 * its dtype on its unit (the matrix engine for matrix-family kernels, the
 * vector units otherwise) per core × the point's threads; 0 when the model
 * is NULL or has no such figure. */
double cal_peak_theory_gflops(const cal_theory_t *m, const cal_point_t *pt);

/* "peak": {clock, model, theoretical, theoretical_matrix, points[]}.
 * clock and model may be NULL (then left out, and points carry no
 * efficiency). */
json_t *cal_compute_peak_json(const cal_point_t *pts, size_t n,
                              const cal_clock_t *clock,
                              const cal_theory_t *model);

/* "bandwidth": {convention, points[]}; levels[i] names the cache level of
 * pts[i] ("L1".."memory"), or NULL for a staircase point (its id then
 * carries the working set instead). */
json_t *cal_bandwidth_section_json(const cal_point_t *pts,
                                   const char *const *levels, size_t n);

/* Ceilings at `threads` threads from the peak and bandwidth points: the
 * best ok median per dtype (matrix-family points also raise the matrix
 * ceilings) and per level.  Strings in *r borrow from the
 * points' kernels and from levels. */
int cal_roofline_from_points(const cal_point_t *peak, size_t npeak,
                             const cal_point_t *bw, const char *const *levels,
                             size_t nbw, int threads, cal_roofline_t *r);

/* "roofline": {threads, compute_gflops, compute_kernel, theoretical_gflops
 * (model may be NULL), bandwidth_gbps, bandwidth_kernel,
 * ridge_flop_per_byte{dtype{level}}, kernels[], matrix_gflops,
 * matrix_kernel, theoretical_matrix_gflops (with a model)}: compute_* per
 * dtype is the best of every engine, matrix_* the matrix engine's alone;
 * each ok point of
 * `kernels` (any family with flops and bytes, e.g. gemm) placed against the
 * compute ceiling of its dtype and the bandwidth of `level` (e.g.
 * "memory"): intensity, attainable, bound and efficiency. */
json_t *cal_roofline_section_json(const cal_roofline_t *r,
                                  const cal_theory_t *model,
                                  const cal_point_t *kernels, size_t nk,
                                  const char *level);

/* The keys of roofline.efficiencies, indexed by CAL_EFF_* (results.h);
 * the table prints them as labels. */
extern const char *const cal_efficiency_keys[];

#endif
