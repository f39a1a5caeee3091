/* The "gemm" and "scaling" objects of the profile.
 *
 * gemm:    operation, dtypes{<dtype>: {kernel, status, reason |
 *          best_gflops_1_thread, best_gflops_all_threads}},
 *          sweeps[{kernel, dtype, threads, stop_reason, best_n,
 *          best_gflops, best_id, best_gflops_in_sweep}],
 *          points[] ("gemm/<dtype>/NxNxN/t<threads>[/confirm]", metric
 *          gflops, + m, n, k; confirmations: confirms, pooled_gflops)
 * scaling: n, points[] ("scaling/<dtype>/<n>/t<threads>", metric gflops,
 *          + n, speedup, efficiency, gflops_per_thread) */
#include <jansson.h>

#include "point_json.h"
#include "results.h"
#include "run.h"

static json_t *best_or_null(double v) { return v > 0 ? json_real(v) : json_null(); }

static json_t *dtype_json(const cal_gemm_dtype_t *d) {
  if (!d->supported)
    return json_pack("{s:s, s:s, s:s}", "kernel", d->kernel->name, "status",
                     "unsupported", "reason", d->why ? d->why : "");
  return json_pack("{s:s, s:s, s:o, s:o}", "kernel", d->kernel->name, "status",
                   "measured", "best_gflops_1_thread",
                   best_or_null(d->best_gflops[0]), "best_gflops_all_threads",
                   best_or_null(d->best_gflops[1]));
}

static json_t *sweep_json(const cal_gemm_sweep_t *s) {
  return json_pack("{s:s, s:s, s:i, s:s, s:I, s:f, s:s, s:f}", "kernel",
                   s->kernel->name, "dtype", s->kernel->dtype, "threads",
                   s->threads, "stop_reason", s->stop, "best_n",
                   (json_int_t)s->best_n, "best_gflops", s->best_gflops,
                   "best_id", s->best_id, "best_gflops_in_sweep",
                   s->best_gflops_in_sweep);
}

static json_t *gemm_point_json(const cal_gemm_point_t *gp) {
  json_t *o = cal_point_json(&gp->pt, gp->id, "gflops");
  if (!o)
    return NULL;
  json_object_set_new(o, "m", json_integer(gp->n));
  json_object_set_new(o, "n", json_integer(gp->n));
  json_object_set_new(o, "k", json_integer(gp->n));
  if (gp->confirms[0])
    json_object_set_new(o, "confirms", json_string(gp->confirms));
  if (gp->confirms[0] && gp->pt.status == CAL_POINT_OK)
    json_object_set_new(o, "pooled_gflops", json_real(gp->pooled_gflops));
  return o;
}

/* Append v to a; 0, or -1 (v released) when v is NULL or on failure. */
static int append(json_t *a, json_t *v) {
  return v && json_array_append_new(a, v) == 0 ? 0 : -1;
}

json_t *cal_gemm_write(const cal_run_t *r, const void *result) {
  const cal_gemm_result_t *g = result;
  json_t *sec = json_pack("{s:o, s:o, s:o, s:s}", "dtypes", json_object(),
                          "sweeps", json_array(), "points", json_array(),
                          "operation", "C = A*B, row-major, square, beta = 0");
  if (!sec)
    return NULL;
  json_t *dtypes = json_object_get(sec, "dtypes");
  json_t *sweeps = json_object_get(sec, "sweeps");
  json_t *points = json_object_get(sec, "points");
  for (size_t i = 0; i < g->ndtypes; i++) {
    json_t *d = dtype_json(&g->dtypes[i]);
    if (!d || json_object_set_new(dtypes, g->dtypes[i].kernel->dtype, d) < 0)
      goto fail;
  }
  for (size_t i = 0; i < g->nsweeps; i++)
    if (append(sweeps, sweep_json(&g->sweeps[i])) < 0)
      goto fail;
  for (size_t i = 0; i < g->npoints; i++)
    if (append(points, gemm_point_json(&g->points[i])) < 0)
      goto fail;
  return sec;
fail:
  json_decref(sec);
  return NULL;
}

json_t *cal_scaling_write(const cal_run_t *r, const void *result) {
  const cal_scaling_result_t *s = result;
  json_t *sec = json_pack("{s:I, s:o}", "n", (json_int_t)s->n, "points",
                          json_array());
  if (!sec)
    return NULL;
  json_t *points = json_object_get(sec, "points");
  for (size_t i = 0; i < s->npoints; i++) {
    const cal_scaling_point_t *sp = &s->points[i];
    json_t *o = cal_point_json(&sp->pt, sp->id, "gflops");
    if (!o)
      goto fail;
    json_object_set_new(o, "n", json_integer(s->n));
    if (sp->pt.status == CAL_POINT_OK) {
      double gf = sp->pt.gflops_sum.median;
      int t = sp->pt.params.threads;
      if (sp->speedup > 0) {
        json_object_set_new(o, "speedup", json_real(sp->speedup));
        json_object_set_new(o, "efficiency", json_real(sp->efficiency));
      }
      json_object_set_new(o, "gflops_per_thread", json_real(gf / t));
    }
    if (append(points, o) < 0)
      goto fail;
  }
  return sec;
fail:
  json_decref(sec);
  return NULL;
}
