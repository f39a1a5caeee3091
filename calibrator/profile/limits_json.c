/* Builders of the `peak` (its writers in peak_json.c), `bandwidth` and
 * `roofline` profile sections.
 *
 * peak:
 *   clock:       {ghz, method, variant, samples_ghz[], stats}
 *   model:       {vector_bits, usable_cores, ghz, ipc{dtype}, assumption,
 *                 matrix{engine, ops_per_cycle{dtype}} (only with a matrix
 *                 engine)}
 *   theoretical: {dtype: {gflops_per_core, gflops}}  (int8: gops_*), the
 *                vector units
 *   theoretical_matrix: the same for the matrix engine (only with one)
 *   points[]:    "peak/<kernel>/<variant>/t<threads>", metric gflops (gops
 *                for int8), + efficiency vs the theoretical figure of its
 *                unit (matrix-family kernels: the matrix engine's) per
 *                core × threads
 * bandwidth:
 *   convention:  how bytes are counted (STREAM; write-allocate apart)
 *   points[]:    "bandwidth/<kernel>/<level>/t<threads>" (staircase points:
 *                "bandwidth/<kernel>/ws<bytes>/t<threads>"), metric gbps,
 *                + level, working_set_bytes, bytes_counted, bytes_actual,
 *                gbps_actual (the median with write-allocate traffic)
 *   caches[]:    {level, size_bytes, cores_sharing} of the data caches
 * roofline: derived only (no points): see limits_json.h, + efficiencies
 *   {gemm_fp32_of_measured_peak, measured_peak_fp32_of_theoretical,
 *    measured_peak_fp64_of_theoretical, attention_of_gemm_best} (each
 *   only when known) and gemm_bf16_of_matrix_peak (always; null when the
 *   bf16 GEMM or the matrix engine's bf16 peak is missing).
 * The sections' write functions (cal_bandwidth_write, ...) at the end
 * turn their typed results into these objects. */
#include "limits_json.h"
#include "profile.h"
#include "point_json.h"
#include "results.h"
#include "run_result.h"

#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "stream.h"

void cal_limits_put(json_t *o, const char *k, json_t *v, int *ok) {
  if (!v || json_object_set_new(o, k, v) < 0)
    *ok = 0;
}

void cal_limits_append(json_t *a, json_t *v, int *ok) {
  if (!v || json_array_append_new(a, v) < 0)
    *ok = 0;
}

json_t *cal_limits_done(json_t *v, int ok) {
  if (ok)
    return v;
  json_decref(v);
  return NULL;
}

json_t *cal_limits_finish(json_t *sec, json_t *points, int ok) {
  if (!sec) {
    json_decref(points);
    return NULL;
  }
  cal_limits_put(sec, "points", points, &ok);
  return cal_limits_done(sec, ok);
}

const char *cal_limits_metric(const cal_point_t *pt) {
  if (pt->kernel && pt->kernel->family == CAL_FAMILY_STREAM)
    return "gbps";
  if (pt->kernel && pt->kernel->dtype == CAL_DTYPE_INT8)
    return "gops";
  return "gflops";
}

static int threads_of(const cal_point_t *pt) {
  return pt->params.threads > 0 ? pt->params.threads : 1;
}

json_t *cal_limits_point_json(const cal_point_t *pt, const char *id,
                              const char *metric) {
  if (!pt || !pt->kernel || !id)
    return NULL;
  return cal_point_json(pt, id, metric ? metric : cal_limits_metric(pt));
}

static int dtype_of(const cal_point_t *pt) {
  return cal_ceiling_dtype_of(pt->kernel->dtype);
}

int cal_limits_is_matrix(const cal_point_t *pt) {
  return pt->kernel && pt->kernel->family == CAL_FAMILY_MATRIX;
}

double cal_peak_theory_gflops(const cal_theory_t *m, const cal_point_t *pt) {
  int dt = pt->kernel ? dtype_of(pt) : -1;
  if (!m || dt < 0)
    return 0.0;
  double core = cal_limits_is_matrix(pt) ? cal_theory_matrix_gflops_core(m, dt)
                                         : cal_theory_gflops_core(m, dt);
  return core * threads_of(pt);
}

json_t *cal_bandwidth_section_json(const cal_point_t *pts,
                                   const char *const *levels, size_t n) {
  int ok = 1;
  json_t *sec = json_object(), *points = json_array();
  if (!sec || !points)
    return cal_limits_finish(sec, points, 0);
  cal_limits_put(
      sec, "convention",
      json_string("STREAM: 8 bytes per element read or written (read 1, "
                  "copy 2, triad 3 arrays); bytes_actual adds the "
                  "write-allocate read of every written line"),
      &ok);
  cal_limits_put(
      sec, "working_sets",
      json_string("per cache level half the capacity the threads can use "
                  "(L3: at most 4x the L2 capacity); memory: 4x the last "
                  "level's capacity (STREAM's rule), at least 64 MiB, at most "
                  "512 MiB (256 MiB with --ci) but never below "
                  "twice the L3 "
                  "point's working set"),
      &ok);
  for (size_t i = 0; i < n && ok; i++) {
    const cal_point_t *pt = &pts[i];
    const char *level = levels ? levels[i] : NULL;
    char id[160];
    if (level)
      snprintf(id, sizeof id, "bandwidth/%s/%s/t%d", pt->kernel->name, level,
               threads_of(pt));
    else
      snprintf(id, sizeof id, "bandwidth/%s/ws%lld/t%d", pt->kernel->name,
               (long long)pt->params.bytes, threads_of(pt));
    json_t *o = cal_limits_point_json(pt, id, "gbps");
    if (o) {
      double counted = 0, actual = 0;
      if (level)
        cal_limits_put(o, "level", json_string(level), &ok);
      cal_limits_put(o, "working_set_bytes", json_integer(pt->params.bytes),
                     &ok);
      if (cal_stream_traffic(pt->kernel->name, &pt->params, &counted,
                             &actual) == 0) {
        cal_limits_put(o, "bytes_counted", json_real(counted), &ok);
        cal_limits_put(o, "bytes_actual", json_real(actual), &ok);
        if (pt->status == CAL_POINT_OK && counted > 0)
          cal_limits_put(o, "gbps_actual",
                         json_real(pt->gbps_sum.median * actual / counted),
                         &ok);
      }
    }
    cal_limits_append(points, o, &ok);
  }
  return cal_limits_finish(sec, points, ok);
}

int cal_roofline_from_points(const cal_point_t *peak, size_t npeak,
                             const cal_point_t *bw, const char *const *levels,
                             size_t nbw, int threads, cal_roofline_t *r) {
  int rc;
  memset(r, 0, sizeof *r);
  r->threads = threads;
  for (size_t i = 0; i < npeak; i++) {
    const cal_point_t *pt = &peak[i];
    if (pt->status != CAL_POINT_OK || threads_of(pt) != threads || !pt->gflops)
      continue;
    int dt = dtype_of(pt);
    if (dt < 0)
      continue;
    rc = cal_limits_is_matrix(pt)
             ? cal_roofline_add_matrix(r, dt, pt->gflops_sum.median,
                                       pt->kernel->name)
             : cal_roofline_add_compute(r, dt, pt->gflops_sum.median,
                                        pt->kernel->name);
    if (rc < 0)
      return rc;
  }
  for (size_t i = 0; i < nbw; i++) {
    const cal_point_t *pt = &bw[i];
    if (!levels || !levels[i] || pt->status != CAL_POINT_OK ||
        threads_of(pt) != threads || !pt->gbps)
      continue;
    if ((rc = cal_roofline_add_bandwidth(r, levels[i], pt->gbps_sum.median,
                                         pt->kernel->name)) < 0)
      return rc;
  }
  return 0;
}

/* The matrix engine's ceilings beside the compute ones: matrix_gflops and
 * matrix_kernel per dtype (empty without one), theoretical_matrix_gflops
 * with a model. */
static void matrix_ceilings(json_t *sec, const cal_roofline_t *r,
                            const cal_theory_t *model, int *ok) {
  json_t *mg = json_object(), *mk = json_object(),
         *mt = model ? json_object() : NULL;
  for (int dt = 0; dt < CAL_DT_COUNT; dt++) {
    const char *name = cal_ceiling_dtype_name(dt);
    if (mt && cal_theory_matrix_gflops(model, dt) > 0)
      cal_limits_put(mt, name, json_real(cal_theory_matrix_gflops(model, dt)),
                     ok);
    if (!(r->matrix_gflops[dt] > 0) || !mg || !mk)
      continue;
    cal_limits_put(mg, name, json_real(r->matrix_gflops[dt]), ok);
    if (r->matrix_kernel[dt])
      cal_limits_put(mk, name, json_string(r->matrix_kernel[dt]), ok);
  }
  cal_limits_put(sec, "matrix_gflops", mg, ok);
  cal_limits_put(sec, "matrix_kernel", mk, ok);
  if (model)
    cal_limits_put(sec, "theoretical_matrix_gflops", mt, ok);
}

json_t *cal_roofline_section_json(const cal_roofline_t *r,
                                  const cal_theory_t *model,
                                  const cal_point_t *kernels, size_t nk,
                                  const char *level) {
  int ok = 1;
  json_t *sec = json_object(), *comp = json_object(), *ck = json_object(),
         *bwj = json_object(), *bk = json_object(), *ridge = json_object(),
         *list = json_array(), *theo = model ? json_object() : NULL;
  if (!sec || !comp || !ck || !bwj || !bk || !ridge || !list ||
      (model && !theo)) {
    json_decref(comp); json_decref(ck); json_decref(bwj); json_decref(bk);
    json_decref(ridge); json_decref(list); json_decref(theo);
    json_decref(sec);
    return NULL;
  }
  cal_limits_put(sec, "threads", json_integer(r->threads), &ok);
  cal_limits_put(sec, "compute_gflops", comp, &ok);
  cal_limits_put(sec, "compute_kernel", ck, &ok);
  if (theo)
    cal_limits_put(sec, "theoretical_gflops", theo, &ok);
  cal_limits_put(sec, "bandwidth_gbps", bwj, &ok);
  cal_limits_put(sec, "bandwidth_kernel", bk, &ok);
  cal_limits_put(sec, "ridge_flop_per_byte", ridge, &ok);
  cal_limits_put(sec, "kernels", list, &ok);
  matrix_ceilings(sec, r, model, &ok);
  if (!ok) { /* a failed set already released its value */
    json_decref(sec);
    return NULL;
  }
  for (size_t l = 0; l < r->nlevels; l++) {
    cal_limits_put(bwj, r->level[l], json_real(r->gbps[l]), &ok);
    if (r->bandwidth_kernel[l])
      cal_limits_put(bk, r->level[l], json_string(r->bandwidth_kernel[l]), &ok);
  }
  for (int dt = 0; dt < CAL_DT_COUNT && ok; dt++) {
    const char *name = cal_ceiling_dtype_name(dt);
    if (theo && cal_theory_gflops(model, dt) > 0)
      cal_limits_put(theo, name, json_real(cal_theory_gflops(model, dt)), &ok);
    if (!(r->compute_gflops[dt] > 0))
      continue;
    cal_limits_put(comp, name, json_real(r->compute_gflops[dt]), &ok);
    if (r->compute_kernel[dt])
      cal_limits_put(ck, name, json_string(r->compute_kernel[dt]), &ok);
    json_t *per = json_object();
    cal_limits_put(ridge, name, per, &ok);
    for (size_t l = 0; l < r->nlevels && per; l++) {
      double x = cal_ridge_point(r->compute_gflops[dt], r->gbps[l]);
      if (x > 0)
        cal_limits_put(per, r->level[l], json_real(x), &ok);
    }
  }
  double gbps = level ? cal_roofline_gbps(r, level) : 0.0;
  for (size_t i = 0; i < nk && ok; i++) {
    const cal_point_t *pt = &kernels[i];
    int dt = pt->kernel ? dtype_of(pt) : -1;
    if (pt->status != CAL_POINT_OK || dt < 0 || !(pt->flops > 0) ||
        !(pt->bytes > 0) || !pt->gflops)
      continue;
    double peak = r->compute_gflops[dt], intensity = pt->flops / pt->bytes;
    cal_bound_t bound;
    double eff;
    if (cal_roofline_classify(peak, gbps, intensity, pt->gflops_sum.median,
                              &bound, &eff) < 0)
      continue; /* no ceiling for this dtype or level */
    cal_limits_append(
        list,
        json_pack("{s:s, s:s, s:s, s:i, s:s, s:f, s:f, s:f, s:s, s:f, "
                  "s:f, s:f}",
                  "kernel", pt->kernel->name, "dtype", cal_kdtype_name(pt->kernel->dtype),
                  "variant", pt->variant, "threads", threads_of(pt), "level",
                  level, "intensity_flop_per_byte", intensity, "gflops",
                  pt->gflops_sum.median, "attainable_gflops",
                  cal_attainable_gflops(peak, gbps, intensity), "bound",
                  cal_bound_name(bound), "efficiency", eff, "ceiling_gflops",
                  peak, "ceiling_gbps", gbps),
        &ok);
  }
  return cal_limits_done(sec, ok);
}

/* ---- the sections' profile objects, from their typed results */

/* The machine's data caches: [{level, size_bytes, cores_sharing}]. */
static json_t *caches_json(const cal_hwinfo_t *hw) {
  int ok = 1;
  json_t *caches = json_array();
  for (int i = 0; caches && ok && i < hw->ncaches; i++) {
    const cal_cache_info_t *c = &hw->caches[i];
    if (strcmp(c->type, "instruction") != 0)
      cal_limits_append(caches,
                        json_pack("{s:i, s:I, s:i}", "level", c->level,
                                  "size_bytes", (json_int_t)c->size_bytes,
                                  "cores_sharing", c->cores_sharing),
                        &ok);
  }
  return cal_limits_done(caches, ok);
}

json_t *cal_bandwidth_write(const cal_run_result_t *r, const void *result) {
  const cal_bandwidth_result_t *res = result;
  int ok = 1;
  json_t *sec = cal_bandwidth_section_json(res->points, res->levels,
                                           res->npoints);
  if (!sec)
    return NULL;
  cal_limits_put(sec, "caches", caches_json(r->hw), &ok);
  return cal_limits_done(sec, ok);
}

const char *const cal_efficiency_keys[CAL_NEFF] = {
    "gemm_fp32_of_measured_peak", "measured_peak_fp32_of_theoretical",
    "measured_peak_fp64_of_theoretical", "attention_of_gemm_best",
    "gemm_bf16_of_matrix_peak"};

/* Keys written as null when unknown (the others are left out then). */
static const int efficiency_null_when_unknown[CAL_NEFF] = {
    [CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK] = 1};

json_t *cal_roofline_write(const cal_run_result_t *r, const void *result) {
  const cal_roofline_result_t *res = result;
  int ok = 1;
  json_t *sec = cal_roofline_section_json(
      &res->roof, res->have_model ? &res->model : NULL, res->kernels,
      res->nkernels, "memory");
  json_t *eff = json_object();
  if (!sec || !eff) {
    json_decref(eff);
    json_decref(sec);
    return NULL;
  }
  for (int i = 0; i < CAL_NEFF; i++)
    if (res->efficiency[i] >= 0)
      cal_limits_put(eff, cal_efficiency_keys[i], json_real(res->efficiency[i]),
                     &ok);
    else if (efficiency_null_when_unknown[i])
      cal_limits_put(eff, cal_efficiency_keys[i], json_null(), &ok);
  cal_limits_put(sec, "efficiencies", eff, &ok);
  return cal_limits_done(sec, ok);
}
