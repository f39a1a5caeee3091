/* Measured points in the profile's point convention. */
#include "point_json.h"

#include <math.h>
#include <string.h>

#include "profile.h"
#include "results.h"
#include "run_result.h"

json_t *cal_unmeasured_json(const char *id, cal_point_status_t status,
                            const char *reason) {
  return json_pack("{s:s, s:s, s:s}", "id", id, "status",
                   cal_point_status_name(status), "reason",
                   reason);
}

static json_t *array_of(const double *x, size_t n, double scale) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++)
    json_array_append_new(a, json_real(x[i] * scale));
  return a;
}

json_t *cal_metric_json(const char *id, const char *metric,
                        int higher_is_better, const double *samples,
                        const cal_summary_t *sum, int unstable,
                        const cal_measurement_t *m) {
  json_t *o = json_pack("{s:s, s:s, s:s, s:b}", "id", id, "status", "ok",
                        "metric", metric, "higher_is_better", higher_is_better);
  if (!o)
    return NULL;
  char key[96];
  json_object_set_new(o, metric, json_real(sum->median));
  snprintf(key, sizeof key, "samples_%s", metric);
  json_object_set_new(o, key, array_of(samples, sum->n, 1.0));
  json_object_set_new(o, "stats", cal_stats_json(sum, unstable));
  if (m && m->n) {
    json_object_set_new(o, "time_ms", json_real(m->time.median * 1e3));
    json_object_set_new(o, "samples_ms", array_of(m->samples_s, m->n, 1e3));
    json_object_set_new(o, "iterations_per_sample", json_integer(m->iters));
  }
  return o;
}

void cal_point_watch_json(const cal_point_t *pt, json_t *o) {
  if (pt->status == CAL_POINT_CONTAMINATED) {
    json_object_set_new(o, "status", json_string("contaminated"));
    json_object_set_new(o, "reason", json_string(pt->reason));
  }
  if (pt->load.known && CAL_POINT_HAS_SAMPLES(pt))
    json_object_set_new(o, "load",
                        json_pack("{s:f, s:f}", "others", pt->load.others,
                                  "steal", pt->load.steal));
  if (pt->contaminated)
    json_object_set_new(o, "contaminated", json_true());
  if (pt->remeasured)
    json_object_set_new(o, "remeasured", json_true());
  if (pt->throttled)
    json_object_set_new(o, "throttled", json_true());
  cal_point_threads_json(pt, o);
}

void cal_point_threads_json(const cal_point_t *pt, json_t *o) {
  if (pt->params.threads < 2 || !CAL_POINT_HAS_SAMPLES(pt))
    return;
  if (pt->cpu_s > 0 && pt->wall_s > 0)
    json_object_set_new(o, "cpu_time_ratio", json_real(pt->cpu_s / pt->wall_s));
  json_t *cpus = pt->ncpus > 0 ? json_array() : NULL;
  for (int i = 0; cpus && i < pt->ncpus; i++)
    json_array_append_new(cpus, pt->cpus[i] >= 0 ? json_integer(pt->cpus[i])
                                                 : json_null());
  if (cpus)
    json_object_set_new(o, "threads_cpus", cpus);
  if (pt->team_rate > 0)
    json_object_set_new(o, "team_rate", json_real(pt->team_rate));
  if (pt->team_rtt_ns > 0)
    json_object_set_new(o, "team_rtt_ns", json_real(pt->team_rtt_ns));
  if (pt->not_parallel[0])
    json_object_set_new(o, "threads_not_parallel",
                        json_string(pt->not_parallel));
}

static json_t *bytes_or_null(double v) {
  return isnan(v) ? json_null() : json_real(v);
}

void cal_memuse_json(const cal_memuse_t *u, json_t *o) {
  if (!u->known)
    return;
  json_object_set_new(o, "rss_before_bytes", bytes_or_null(u->rss_before));
  json_object_set_new(o, "peak_rss_bytes", bytes_or_null(u->peak_rss));
  json_object_set_new(o, "swap_bytes", bytes_or_null(u->swap_after));
  json_object_set_new(o, "major_faults", u->major_faults >= 0
                                             ? json_integer(u->major_faults)
                                             : json_null());
  json_object_set_new(o, "swapped", json_boolean(u->swapped));
}

json_t *cal_point_json(const cal_point_t *pt, const char *id,
                       const char *metric) {
  json_t *o;
  /* "gbps" is the bandwidth rate; any other metric ("gflops", "gops") is
   * the work rate the kernel's flops() counts */
  int gb = strcmp(metric, "gbps") == 0;
  if (!CAL_POINT_HAS_SAMPLES(pt)) {
    o = cal_unmeasured_json(id, pt->status, pt->reason);
  } else {
    const double *s = gb ? pt->gbps : pt->gflops;
    const cal_summary_t *sum = gb ? &pt->gbps_sum : &pt->gflops_sum;
    if (!s)
      return NULL;
    o = cal_metric_json(id, metric, 1, s, sum, pt->m.unstable, &pt->m);
    if (o && !gb && pt->gbps)
      json_object_set_new(o, "gbps", json_real(pt->gbps_sum.median));
    if (o && gb && pt->gflops)
      json_object_set_new(o, "gflops", json_real(pt->gflops_sum.median));
  }
  if (!o)
    return NULL;
  cal_point_watch_json(pt, o);
  json_object_set_new(o, "kernel", json_string(pt->kernel->name));
  json_object_set_new(o, "dtype", json_string(cal_kdtype_name(pt->kernel->dtype)));
  json_object_set_new(o, "variant", json_string(pt->variant));
  json_object_set_new(o, "engine", json_string(cal_kernel_engine(pt->kernel)));
  if (pt->impl[0])
    json_object_set_new(o, "impl", json_string(pt->impl));
  json_object_set_new(o, "threads",
                      json_integer(pt->params.threads > 0 ? pt->params.threads : 1));
  json_object_set_new(o, "pinned", json_boolean(pt->pinned));
  json_object_set_new(o, "flops_per_run", json_real(pt->flops));
  json_object_set_new(o, "bytes_per_run", json_real(pt->bytes));
  return o;
}

/* {"points": [...]} of a plain point list; the metric is "gbps" for
 * stream kernels, "gops" for int8, else "gflops". */
json_t *cal_points_write(const cal_run_result_t *r, const void *result) {
  const cal_points_result_t *p = result;
  json_t *points = json_array();
  for (size_t i = 0; points && i < p->n; i++) {
    const cal_point_t *pt = &p->points[i];
    const char *metric = !pt->kernel ? "gflops"
                         : pt->kernel->family == CAL_FAMILY_STREAM ? "gbps"
                         : pt->kernel->dtype == CAL_DTYPE_INT8     ? "gops"
                                                                  : "gflops";
    json_t *o = cal_point_json(pt, p->ids[i], metric);
    if (!o || json_array_append_new(points, o) < 0) {
      json_decref(points);
      return NULL;
    }
  }
  return points ? json_pack("{s:o}", "points", points) : NULL;
}
