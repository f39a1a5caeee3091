/* The "gemm" and "scaling" objects of the profile, and the top-level
 * "gemm_best" map.
 *
 * gemm:    operation, engine_choice, onednn {version, threading, max_isa},
 *          dtypes{<dtype>: {kernel, status,
 *          reason | metric, best_<m>_1_thread, best_<m>_all_threads,
 *          best_1_thread, best_all_threads ({engine, kernel, impl, n} of
 *          the headline), engines{<engine>: {kernel, status, reason |
 *          best_<m>_*, best_1_thread, best_all_threads}}}} with <m> the
 *          metric (gflops; gops for int8),
 *          sweeps[{kernel, engine, dtype, threads, stop_reason, best_n,
 *          best_<m>, best_id, best_<m>_in_sweep, impl, budget_s, time_s}],
 *          points[] ("gemm/[<engine>/]<dtype>/NxNxN/t<threads>", metric
 *          gflops or gops, + m, n, k; confirmations, each sweep's best
 *          size measured again, "gemm/<dtype>/<engine>/confirm/t<threads>"
 *          with the size in n, + confirms, pooled_<m>), then the role
 *          points "gemm/<dtype>/best/t<threads>" (a copy of the point
 *          behind each headline at one and all threads, + role_of: the
 *          point copied, an alias compare counts once), whose ids do not
 *          move between runs of one machine
 * gemm_best: {<dtype>: {status, reason | metric, <m>_per_core, <m>,
 *          engine, impl, per_core, all_threads}}
 * scaling: n (fixed for a machine), points[] ("scaling/<dtype>/<engine>/
 *          t<threads>", metric gflops, + n, speedup, efficiency,
 *          gflops_per_thread), then their role copies
 *          "scaling/<dtype>/best/t<threads>" (+ role_of), whose ids do not
 *          move when the headline engine does */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "gemm_json.h"
#include "point_json.h"
#include "results.h"
#include "run_result.h"

static json_t *best_or_null(double v) { return v > 0 ? json_real(v) : json_null(); }

/* "<prefix><metric><suffix>", e.g. "best_gops_1_thread". */
static const char *key(char *buf, size_t len, const char *prefix,
                       const char *metric, const char *suffix) {
  snprintf(buf, len, "%s%s%s", prefix, metric, suffix);
  return buf;
}

/* {engine, kernel, impl, n} of a best figure, or null. */
static json_t *who_json(const cal_gemm_best_t *b) {
  if (!b->kernel)
    return json_null();
  json_t *o = json_pack("{s:s, s:s, s:I}", "engine", cal_kernel_engine(b->kernel),
                        "kernel", b->kernel->name, "n", (json_int_t)b->n);
  if (o && b->impl[0])
    json_object_set_new(o, "impl", json_string(b->impl));
  return o;
}

/* The figures of best[2] into o: best_<m>_1_thread, best_<m>_all_threads,
 * best_1_thread, best_all_threads. */
static void bests_into(json_t *o, const char *metric, const cal_gemm_best_t best[2]) {
  char k[64];
  json_object_set_new(o, key(k, sizeof k, "best_", metric, "_1_thread"),
                      best_or_null(best[0].gflops));
  json_object_set_new(o, key(k, sizeof k, "best_", metric, "_all_threads"),
                      best_or_null(best[1].gflops));
  json_object_set_new(o, "best_1_thread", who_json(&best[0]));
  json_object_set_new(o, "best_all_threads", who_json(&best[1]));
}

static json_t *engine_json(const cal_gemm_dtype_t *d, const cal_gemm_engine_t *e) {
  const char *status = !e->selected ? "not_selected"
                       : !e->supported ? "unsupported"
                       : e->failed ? "failed" : "measured";
  json_t *o = json_pack("{s:s, s:s}", "kernel", e->kernel->name, "status", status);
  if (!o)
    return NULL;
  if (!e->supported)
    json_object_set_new(o, "reason", json_string(e->why ? e->why : ""));
  else
    bests_into(o, d->metric, e->best);
  return o;
}

static json_t *dtype_json(const cal_gemm_dtype_t *d) {
  /* the kernel of the headline (all threads, else one thread), else the
   * dtype's first engine's */
  const cal_kernel_t *k = d->best[1].kernel   ? d->best[1].kernel
                          : d->best[0].kernel ? d->best[0].kernel
                                              : d->engines[0].kernel;
  json_t *o = json_pack("{s:s, s:s, s:s, s:o}", "kernel", k->name, "status",
                        d->supported ? "measured" : "unsupported", "metric",
                        d->metric, "engines", json_object());
  if (!o)
    return NULL;
  if (!d->supported)
    json_object_set_new(o, "reason", json_string(d->why));
  else
    bests_into(o, d->metric, d->best);
  json_t *engines = json_object_get(o, "engines");
  for (size_t j = 0; j < d->nengines; j++) {
    json_t *e = engine_json(d, &d->engines[j]);
    if (!e || json_object_set_new(engines, cal_kernel_engine(d->engines[j].kernel), e) < 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

static const char *metric_of(const cal_kernel_t *k) {
  return k->dtype == CAL_DTYPE_INT8 ? "gops" : "gflops";
}

static json_t *sweep_json(const cal_gemm_sweep_t *s) {
  const char *m = metric_of(s->kernel);
  char k1[64], k2[64];
  json_t *o = json_pack(
      "{s:s, s:s, s:s, s:i, s:s, s:I, s:f, s:s, s:f, s:f, s:f}", "kernel",
      s->kernel->name, "engine", cal_kernel_engine(s->kernel), "dtype",
      cal_kdtype_name(s->kernel->dtype), "threads", s->threads, "stop_reason", s->stop,
      "best_n", (json_int_t)s->best_n, key(k1, sizeof k1, "best_", m, ""),
      s->best_gflops, "best_id", s->best_id,
      key(k2, sizeof k2, "best_", m, "_in_sweep"), s->best_gflops_in_sweep,
      "budget_s", s->budget_s, "time_s", s->time_s);
  if (o && s->impl[0])
    json_object_set_new(o, "impl", json_string(s->impl));
  return o;
}

static json_t *gemm_point_json(const cal_gemm_point_t *gp) {
  const char *m = metric_of(gp->pt.kernel);
  char k[64];
  json_t *o = cal_point_json(&gp->pt, gp->id, m);
  if (!o)
    return NULL;
  json_object_set_new(o, "m", json_integer(gp->n));
  json_object_set_new(o, "n", json_integer(gp->n));
  json_object_set_new(o, "k", json_integer(gp->n));
  if (gp->confirms[0])
    json_object_set_new(o, "confirms", json_string(gp->confirms));
  if (gp->confirms[0] && gp->pt.status == CAL_POINT_OK)
    json_object_set_new(o, key(k, sizeof k, "pooled_", m, ""),
                        json_real(gp->pooled_gflops));
  return o;
}

/* Append v to a; 0, or -1 (v released) when v is NULL or on failure. */
static int append(json_t *a, json_t *v) {
  return v && json_array_append_new(a, v) == 0 ? 0 : -1;
}

/* The point behind a headline figure b of dtype d at `threads`: the
 * point its engine's sweep named best; NULL when none. */
static const cal_gemm_point_t *headline_point(const cal_gemm_result_t *g,
                                              const cal_gemm_best_t *b,
                                              int threads) {
  if (!b->kernel)
    return NULL;
  for (size_t i = 0; i < g->nsweeps; i++) {
    const cal_gemm_sweep_t *s = &g->sweeps[i];
    if (s->kernel != b->kernel || s->threads != threads || !s->best_id[0])
      continue;
    for (size_t j = 0; j < g->npoints; j++)
      if (strcmp(g->points[j].id, s->best_id) == 0)
        return &g->points[j];
  }
  return NULL;
}

/* Role points "gemm/<dtype>/best/t<threads>": a copy of the point behind
 * each dtype's headline at one and at all threads, under an id that does
 * not move when the best size or engine does (a CI tracks these), with
 * "role_of" naming the size-specific point. */
static int append_roles(const cal_run_result_t *r, const cal_gemm_result_t *g,
                        json_t *points) {
  for (size_t i = 0; i < g->ndtypes; i++) {
    const cal_gemm_dtype_t *d = &g->dtypes[i];
    for (int t = 0; t < 2; t++) {
      int threads = t == 0 ? 1 : r->opt->threads;
      const cal_gemm_point_t *gp = headline_point(g, &d->best[t], threads);
      if (!gp || (t == 1 && threads == 1))
        continue;
      json_t *o = gemm_point_json(gp);
      char id[112];
      snprintf(id, sizeof id, "gemm/%s/best/t%d", d->dtype, threads);
      if (!o || json_object_set_new(o, "id", json_string(id)) < 0 ||
          json_object_set_new(o, "role_of", json_string(gp->id)) < 0 ||
          append(points, o) < 0)
        return -1;
    }
  }
  return 0;
}

json_t *cal_gemm_write(const cal_run_result_t *r, const void *result) {
  const cal_gemm_result_t *g = result;
  json_t *sec = json_pack(
      "{s:o, s:o, s:o, s:s, s:s, s:{s:s, s:s, s:s}}", "dtypes", json_object(),
      "sweeps", json_array(), "points", json_array(), "operation",
      "C = A*B, row-major, square, beta = 0", "engine_choice",
      g->engine_choice, "onednn", "version", g->onednn.version, "threading",
      g->onednn.threading, "max_isa", g->onednn.max_isa);
  if (!sec)
    return NULL;
  json_t *dtypes = json_object_get(sec, "dtypes");
  json_t *sweeps = json_object_get(sec, "sweeps");
  json_t *points = json_object_get(sec, "points");
  for (size_t i = 0; i < g->ndtypes; i++) {
    json_t *d = dtype_json(&g->dtypes[i]);
    if (!d || json_object_set_new(dtypes, g->dtypes[i].dtype, d) < 0)
      goto fail;
  }
  for (size_t i = 0; i < g->nsweeps; i++)
    if (append(sweeps, sweep_json(&g->sweeps[i])) < 0)
      goto fail;
  for (size_t i = 0; i < g->npoints; i++)
    if (append(points, gemm_point_json(&g->points[i])) < 0)
      goto fail;
  if (append_roles(r, g, points) < 0)
    goto fail;
  return sec;
fail:
  json_decref(sec);
  return NULL;
}

/* One dtype of the top-level map: the headline figures under the names
 * of the top-level seed keys (<m>_per_core: one pinned thread, <m>: all
 * usable threads) and who made them. */
static json_t *best_entry(const cal_gemm_dtype_t *d) {
  if (!d->supported)
    return json_pack("{s:s, s:s}", "status", "unsupported", "reason", d->why);
  const cal_gemm_best_t *all = &d->best[1];
  char k1[64];
  json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "status", "measured",
                        "metric", d->metric,
                        key(k1, sizeof k1, "", d->metric, "_per_core"),
                        best_or_null(d->best[0].gflops), d->metric,
                        best_or_null(all->gflops), "per_core",
                        who_json(&d->best[0]), "all_threads", who_json(all));
  if (o && all->kernel) {
    json_object_set_new(o, "engine", json_string(cal_kernel_engine(all->kernel)));
    if (all->impl[0])
      json_object_set_new(o, "impl", json_string(all->impl));
  }
  return o;
}

json_t *cal_gemm_best_json(const cal_gemm_result_t *g) {
  json_t *o = json_object();
  for (size_t i = 0; o && i < g->ndtypes; i++) {
    json_t *e = best_entry(&g->dtypes[i]);
    if (!e || json_object_set_new(o, g->dtypes[i].dtype, e) < 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

json_t *cal_scaling_write(const cal_run_result_t *r, const void *result) {
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
  /* role points "scaling/<dtype>/best/t<threads>": the size and the
   * engine (the headline's) can move between runs, the role does not */
  for (size_t i = 0, n = json_array_size(points); i < n; i++) {
    json_t *pt = json_array_get(points, i);
    const char *id = json_string_value(json_object_get(pt, "id"));
    const char *dtype = json_string_value(json_object_get(pt, "dtype"));
    json_int_t t = json_integer_value(json_object_get(pt, "threads"));
    char role[128];
    if (!id || !dtype || t < 1)
      continue;
    snprintf(role, sizeof role, "scaling/%s/best/t%" JSON_INTEGER_FORMAT,
             dtype, t);
    json_t *o = json_deep_copy(pt);
    if (!o || json_object_set_new(o, "id", json_string(role)) < 0 ||
        json_object_set_new(o, "role_of", json_string(id)) < 0 ||
        append(points, o) < 0)
      goto fail;
  }
  return sec;
fail:
  json_decref(sec);
  return NULL;
}
