/* The `peak` profile section (keys in limits_json.c's header comment):
 * the clock, the theoretical model of the vector units and of the matrix
 * engine, and the points with their efficiency against that model. */
#include <stdio.h>
#include <string.h>

#include "cal_isa.h"
#include "limits_json.h"
#include "profile.h"
#include "results.h"
#include "run_result.h"

static int threads_of(const cal_point_t *pt) {
  return pt->params.threads > 0 ? pt->params.threads : 1;
}

static json_t *real_array(const double *x, size_t n, double scale) {
  json_t *a = json_array();
  if (!a)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (json_array_append_new(a, json_real(x[i] * scale)) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

static json_t *clock_json(const cal_clock_t *c) {
  cal_summary_t s;
  if (cal_summarize(c->samples_ghz, c->n, 0.95, &s) < 0)
    return NULL;
  int ok = 1;
  json_t *o = json_pack("{s:f, s:s, s:s}", "ghz", c->ghz, "method",
                        c->method ? c->method : "", "variant",
                        cal_variant_name(c->variant));
  if (!o)
    return NULL;
  cal_limits_put(o, "samples_ghz", real_array(c->samples_ghz, c->n, 1.0), &ok);
  cal_limits_put(o, "stats", cal_stats_json(&s, 0), &ok);
  return cal_limits_done(o, ok);
}

/* {dtype: {gflops_per_core, gflops}} (int8: gops_*) of the vector units
 * (matrix 0) or the matrix engine; an empty object when none. */
static json_t *theory_json(const cal_theory_t *m, int matrix) {
  int ok = 1;
  json_t *o = json_object();
  for (int dt = 0; o && dt < CAL_DT_COUNT && ok; dt++) {
    double core = matrix ? cal_theory_matrix_gflops_core(m, dt)
                         : cal_theory_gflops_core(m, dt);
    double all =
        matrix ? cal_theory_matrix_gflops(m, dt) : cal_theory_gflops(m, dt);
    if (!(core > 0))
      continue;
    int ops = dt == CAL_DT_INT8;
    cal_limits_put(o, cal_ceiling_dtype_name(dt),
                   json_pack("{s:f, s:f}",
                             ops ? "gops_per_core" : "gflops_per_core", core,
                             ops ? "gops" : "gflops", all),
                   &ok);
  }
  return cal_limits_done(o, ok);
}

/* model: {vector_bits, usable_cores, ghz, ipc{dtype}, assumption[, matrix
 * {engine, ops_per_cycle{dtype}}]} */
static json_t *model_json(const cal_theory_t *m) {
  int ok = 1;
  json_t *ipc = json_object();
  if (!ipc)
    return NULL;
  for (int dt = 0; dt < CAL_DT_COUNT; dt++)
    if (m->ipc[dt] > 0)
      cal_limits_put(ipc, cal_ceiling_dtype_name(dt), json_real(m->ipc[dt]),
                     &ok);
  /* json_pack's "o" takes the reference to ipc, even on failure */
  json_t *o = json_pack("{s:i, s:i, s:f, s:o, s:s}", "vector_bits",
                        m->vector_bits, "usable_cores", m->cores, "ghz", m->ghz,
                        "ipc", ipc, "assumption", m->assumption);
  if (!o || !ok) {
    json_decref(o);
    return NULL;
  }
  if (m->matrix_engine) {
    json_t *rates = json_object();
    for (int dt = 0; rates && dt < CAL_DT_COUNT; dt++)
      if (m->matrix_ops_per_cycle[dt] > 0)
        cal_limits_put(rates, cal_ceiling_dtype_name(dt),
                       json_real(m->matrix_ops_per_cycle[dt]), &ok);
    cal_limits_put(o, "matrix",
                   json_pack("{s:s, s:o}", "engine", m->matrix_engine,
                             "ops_per_cycle", rates),
                   &ok);
  }
  return cal_limits_done(o, ok);
}

json_t *cal_compute_peak_json(const cal_point_t *pts, size_t n,
                              const cal_clock_t *clock,
                              const cal_theory_t *model) {
  int ok = 1;
  json_t *sec = json_object(), *points = json_array();
  if (!sec || !points)
    return cal_limits_finish(sec, points, 0);
  if (clock)
    cal_limits_put(sec, "clock", clock_json(clock), &ok);
  if (model) {
    cal_limits_put(sec, "model", model_json(model), &ok);
    cal_limits_put(sec, "theoretical", theory_json(model, 0), &ok);
    if (model->matrix_engine)
      cal_limits_put(sec, "theoretical_matrix", theory_json(model, 1), &ok);
    if (!ok)
      return cal_limits_finish(sec, points, 0);
  }
  for (size_t i = 0; i < n && ok; i++) {
    const cal_point_t *pt = &pts[i];
    char id[160];
    snprintf(id, sizeof id, "peak/%s/%s/t%d", pt->kernel->name, pt->variant,
             threads_of(pt));
    json_t *o = cal_limits_point_json(pt, id, NULL);
    if (o && model && pt->status == CAL_POINT_OK) {
      double theo = cal_peak_theory_gflops(model, pt);
      if (theo > 0)
        cal_limits_put(o, "efficiency", json_real(pt->gflops_sum.median / theo),
                       &ok);
    }
    cal_limits_append(points, o, &ok);
  }
  return cal_limits_finish(sec, points, ok);
}

json_t *cal_compute_peak_write(const cal_run_result_t *r, const void *result) {
  const cal_compute_peak_result_t *res = result;
  return cal_compute_peak_json(res->points, res->npoints,
                               res->have_clock ? &res->clock : NULL,
                               res->have_model ? &res->model : NULL);
}
