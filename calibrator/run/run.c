#include "run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "timer.h"

/* Time budgets per section, seconds: full run, --quick run. */
static const struct {
  unsigned section;
  double full, quick;
} budgets[] = {
    {CAL_SEC_GEMM, 40.0, 7.0},     {CAL_SEC_SCALING, 6.0, 1.5},
    {CAL_SEC_ATTENTION, 12.0, 3.0}, {CAL_SEC_PEAK, 4.0, 1.0},
    {CAL_SEC_BANDWIDTH, 12.0, 3.0}, {CAL_SEC_ROOFLINE, 0.0, 0.0},
    {CAL_SEC_BATCH, 90.0, 12.0},
};

double cal_run_budget(const cal_run_t *r, unsigned section) {
  for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
    if (budgets[i].section == section)
      return (r->quick ? budgets[i].quick : budgets[i].full) *
             (r->budget_scale > 0 ? r->budget_scale : 1.0);
  return 0.0;
}

static const char *section_name(unsigned section) {
  switch (section) {
  case CAL_SEC_GEMM: return "gemm";
  case CAL_SEC_SCALING: return "scaling";
  case CAL_SEC_ATTENTION: return "attention";
  case CAL_SEC_PEAK: return "peak";
  case CAL_SEC_BANDWIDTH: return "bandwidth";
  case CAL_SEC_ROOFLINE: return "roofline";
  case CAL_SEC_BATCH: return "batch_sweep";
  default: return "other";
  }
}

void cal_progress_end(cal_run_t *r) {
  if (r->sec_current && r->section_times)
    json_object_set_new(r->section_times, section_name(r->sec_current),
                        json_real(cal_now() - r->sec_start));
  r->sec_current = 0;
}

void cal_progress_section(cal_run_t *r, unsigned section) {
  cal_progress_end(r);
  r->sec_current = section;
  if (r->planned_left <= 0) { /* first section: plan the whole run */
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++)
      if (r->sections & budgets[i].section)
        r->planned_left += cal_run_budget(r, budgets[i].section);
  }
  r->sec_budget = cal_run_budget(r, section);
  r->planned_left -= r->sec_budget;
  if (r->planned_left < 0)
    r->planned_left = 0;
  r->sec_start = cal_now();
}

void cal_progress(cal_run_t *r, const char *fmt, ...) {
  if (!r->progress)
    return;
  double now = cal_now();
  double in_sec = now - r->sec_start;
  double left = r->planned_left + (r->sec_budget > in_sec ? r->sec_budget - in_sec : 0);
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\r\033[K[%4.0fs, ETA %3.0fs] %s", now - r->t_start, left, msg);
  fflush(stderr);
}

void cal_progress_done(cal_run_t *r) {
  if (r->progress) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
}

void cal_run_warn(cal_run_t *r, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->warnings)
    json_array_append_new(r->warnings, json_string(msg));
  if (r->verbose) {
    cal_progress_done(r);
    fprintf(stderr, "calibrate: warning: %s\n", msg);
  }
}

int cal_run_point(cal_run_t *r, const cal_kernel_t *k, const cal_params_t *p,
                  cal_point_t *pt) {
  int rc = cal_bench_kernel(&r->hcfg, r->thr, k, p, pt);
  if (rc == CAL_EVERIFY) {
    r->failed++;
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s (%s) failed verification: %s\n", k->name,
            pt->variant, pt->reason);
    return 0;
  }
  if (rc < 0)
    return rc;
  if (pt->status == CAL_POINT_OK && pt->m.unstable)
    r->unstable++;
  if (pt->status == CAL_POINT_OK && !pt->pinned && r->thr && r->verbose)
    fprintf(stderr, "calibrate: note: threads could not be pinned\n");
  if (r->verbose && pt->status == CAL_POINT_OK) {
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s variant %s: %.2f GFLOPS (cv %.1f%%)\n",
            k->name, pt->variant, pt->gflops_sum.median,
            100.0 * pt->m.time.cv);
  }
  return 0;
}

int cal_run_points(cal_run_t *r, const cal_kernel_t *const *k,
                   const cal_params_t *p, size_t n, cal_point_t *out,
                   const char *what) {
  int rounds = r->rounds > 1 ? r->rounds : 1;
  int unstable_before = r->unstable;
  memset(out, 0, n * sizeof *out);
  for (int round = 0; round < rounds; round++) {
    for (size_t i = 0; i < n; i++) {
      if (round > 0 && out[i].status != CAL_POINT_OK)
        continue; /* skipped or failed: no second try */
      cal_point_t pt;
      if (rounds > 1)
        cal_progress(r, "%s: %s, point %zu/%zu, round %d/%d", what, k[i]->name,
                     i + 1, n, round + 1, rounds);
      else
        cal_progress(r, "%s: %s, point %zu/%zu", what, k[i]->name, i + 1, n);
      int rc = cal_run_point(r, k[i], &p[i], &pt);
      if (rc < 0)
        return rc;
      if ((rc = cal_point_merge(&out[i], &pt, &r->hcfg)) < 0) {
        cal_point_free(&pt);
        return rc;
      }
    }
  }
  /* count instability on the pooled samples, not per round */
  r->unstable = unstable_before;
  for (size_t i = 0; i < n; i++)
    if (out[i].status == CAL_POINT_OK && out[i].m.unstable)
      r->unstable++;
  return 0;
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

json_t *cal_point_json(const cal_point_t *pt, const char *id,
                       const char *metric) {
  json_t *o;
  /* "gbps" is the bandwidth rate; any other metric ("gflops", "gops") is
   * the work rate the kernel's flops() counts */
  int gb = strcmp(metric, "gbps") == 0;
  if (pt->status != CAL_POINT_OK) {
    o = json_pack("{s:s, s:s, s:s}", "id", id, "status",
                  pt->status == CAL_POINT_SKIPPED ? "skipped" : "failed",
                  "reason", pt->reason);
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
  json_object_set_new(o, "kernel", json_string(pt->kernel->name));
  json_object_set_new(o, "dtype", json_string(pt->kernel->dtype));
  json_object_set_new(o, "variant", json_string(pt->variant));
  json_object_set_new(o, "threads",
                      json_integer(pt->params.threads > 0 ? pt->params.threads : 1));
  json_object_set_new(o, "pinned", json_boolean(pt->pinned));
  json_object_set_new(o, "flops_per_run", json_real(pt->flops));
  json_object_set_new(o, "bytes_per_run", json_real(pt->bytes));
  return o;
}
