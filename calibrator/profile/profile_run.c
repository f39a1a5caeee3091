/* The whole profile of a run, from typed results. */
#include "profile_run.h"

#include <math.h>
#include <time.h>

#include "build_info.h"
#include "gemm_json.h"
#include "machine_json.h"
#include "profile.h"
#include "results.h"
#include "timer.h"

static json_t *top_number(double v) { return v > 0 ? json_real(v) : json_null(); }

static json_t *settings_json(const cal_opts_t *o) {
  return json_pack(
      "{s:b, s:b, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:s}",
      "quick",
      o->quick, "ci", o->ci, "rounds", o->rounds > 1 ? o->rounds : 1,
      "threads", o->threads, "samples", o->hcfg.samples, "min_sample_s",
      o->hcfg.min_sample_s, "warmup_s", o->hcfg.warmup_s, "cv_threshold",
      o->hcfg.cv_threshold, "ci_level", o->hcfg.ci_level, "seed",
      (json_int_t)o->seed, "budget_scale", o->budget_scale,
      "timer_resolution_s", cal_timer_resolution(), "gemm_engine",
      o->gemm_engine);
}

static json_t *skeleton(const cal_run_t *r) {
  const cal_hwinfo_t *hw = &r->ctx->hw;
  char created[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_t *root = json_pack(
      "{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:f, s:n, s:n,"
      " s:{s:s, s:s, s:s}, s:s, s:o, s:o}",
      "schema", CAL_PROFILE_SCHEMA, "device_name",
      hw->brand[0] ? hw->brand : "unknown CPU", "device", "cpu", "gflops",
      "gflops_per_core", "optimal_batch_size", "throughput", "memory_gb",
      (double)hw->mem_total_bytes / 1e9, "latency_ms", "gemm_best", "tool", "name",
      "calibrate", "version", cal_version, "git", cal_git, "created", created,
      "machine", cal_hwinfo_machine_json(hw), "blas", cal_hwinfo_blas_json(hw));
  json_t *settings = settings_json(r->opt);
  if (!root || !settings || json_object_set_new(root, "settings", settings) < 0) {
    json_decref(root);
    return NULL;
  }
  return root;
}

/* The top-level figures planners read: the best fp32 GEMM of the best
 * verified engine and the same per dtype in gemm_best (only the GEMM
 * sweep measures them; a single-section run leaves them null rather than
 * report a one-size figure) and the batch sweep's optimal point. */
static void top_level(const cal_run_t *r, json_t *root) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  if (g) {
    json_t *best = cal_gemm_best_json(g);
    json_object_set_new(root, "gflops", top_number(g->sgemm_best[1]));
    json_object_set_new(root, "gflops_per_core", top_number(g->sgemm_best[0]));
    json_object_set_new(root, "gemm_best", best ? best : json_null());
  }
  const cal_batch_result_t *b = cal_results_get(r->res, CAL_SEC_ID_BATCH);
  if (!b || b->top_mode < 0)
    return;
  const cal_batch_mode_t *m = &b->modes[b->top_mode];
  int64_t ob = m->curve->optimal_batch_size;
  for (size_t i = 0; i < m->npoints; i++)
    if (m->points[i].batch == ob && m->points[i].status == CAL_POINT_OK)
      json_object_set_new(root, "throughput",
                          json_real(m->points[i].examples.median));
  json_object_set_new(root, "optimal_batch_size", json_integer(ob));
  if (!isnan(m->latency_ms_batch_1))
    json_object_set_new(root, "latency_ms", json_real(m->latency_ms_batch_1));
  const cal_sweep_opts_t *o = &r->opt->sweep;
  json_object_set_new(
      root, "batch_source",
      json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s}", "mode", m->name,
                "dtype", b->dtype, "engine", b->engine, "preset", o->preset,
                "hidden", (json_int_t)o->hidden, "seq", (json_int_t)o->seq,
                "workload", "one decoder layer, forward pass"));
}

static json_t *quality_json(const cal_run_t *r) {
  const cal_quality_t *q = &r->res->quality;
  json_t *times = json_object(), *warnings = json_array();
  for (int pass = 0; times && pass < 2; pass++) /* in the order they ran */
    for (int i = 0; i < CAL_NSECTIONS; i++)
      if ((q->timed & (1u << i)) && cal_sections[i].derived == pass)
        json_object_set_new(times, cal_sections[i].key, json_real(q->section_s[i]));
  for (size_t i = 0; warnings && i < q->nwarnings; i++)
    json_array_append_new(warnings, json_string(q->warnings[i]));
  if (!times || !warnings) {
    json_decref(times);
    json_decref(warnings);
    return NULL;
  }
  return json_pack("{s:b, s:i, s:i, s:f, s:o, s:o}", "noisy", q->unstable > 0,
                   "unstable_points", q->unstable, "failed_points", q->failed,
                   "elapsed_s", q->elapsed_s, "section_times_s", times,
                   "warnings", warnings);
}

/* Sections in the order they ran: measured ones, then derived ones. */
static int sections_json(const cal_run_t *r, json_t *root) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < CAL_NSECTIONS; i++) {
      const void *res = cal_results_get(r->res, i);
      if (!res || cal_sections[i].derived != pass)
        continue;
      json_t *o = cal_sections[i].write(r, res);
      if (!o || json_object_set_new(root, cal_sections[i].key, o) < 0)
        return -1;
    }
  return 0;
}

json_t *cal_profile_of_run(const cal_run_t *r) {
  json_t *root = skeleton(r), *q = NULL;
  if (!root || sections_json(r, root) < 0 || !(q = quality_json(r)) ||
      json_object_set_new(root, "quality", q) < 0) {
    json_decref(root);
    return NULL;
  }
  top_level(r, root);
  return root;
}
