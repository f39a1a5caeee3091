/* The whole profile of a run, from typed results. */
#include "profile_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "batch_json.h"
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

static json_t *skeleton(const cal_run_result_t *r) {
  const cal_hwinfo_t *hw = r->hw;
  char created[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_t *root = json_pack(
      "{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:f, s:n, s:n,"
      " s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:o, s:o}",
      "schema", CAL_PROFILE_SCHEMA, "device_name",
      hw->brand[0] ? hw->brand : "unknown CPU", "device", "cpu", "gflops",
      "gflops_per_core", "optimal_batch_size", "throughput", "memory_gb",
      (double)hw->mem_total_bytes / 1e9, "latency_ms", "gemm_best", "tool", "name",
      "calibrate", "version", cal_version, "git", cal_git, "compiler",
      cal_compiler, "cflags", cal_cflags, "created", created,
      "machine", cal_hwinfo_machine_json(hw), "blas", cal_hwinfo_blas_json(hw));
  json_t *settings = settings_json(r->opt);
  if (!root || !settings || json_object_set_new(root, "settings", settings) < 0) {
    json_decref(root);
    return NULL;
  }
  return root;
}

/* Why a headline key is null: key -> reason in headline_null_reasons. */
static void null_reason(json_t *root, const char *key, const char *why) {
  json_t *reasons = json_object_get(root, "headline_null_reasons");
  json_object_set_new(root, key, json_null());
  json_object_set_new(reasons, key, json_string(why));
}

/* Count pt when contaminated (never under --allow-busy: its figures
 * stand) and keep the largest share others took. */
static void tally(const cal_point_t *pt, int *n, double *worst) {
  if (pt->status != CAL_POINT_CONTAMINATED)
    return;
  double sh = pt->load.others + pt->load.steal;
  (*n)++;
  *worst = sh > *worst ? sh : *worst;
}

/* The GEMM headline: the best fp32 GEMM of the best verified engine and
 * the same per dtype in gemm_best (only the GEMM sweep measures them; a
 * single-section run leaves them null rather than report a one-size
 * figure), withheld when a point of the section was contaminated. */
static int top_gemm(const cal_run_result_t *r, json_t *root) {
  static const char *const keys[] = {"gflops", "gflops_per_core", "gemm_best"};
  const cal_gemm_result_t *g = cal_results_get(&r->res, CAL_SEC_ID_GEMM);
  const cal_quality_t *q = &r->res.quality;
  char why[320] = "";
  if (!g) {
    if (q->interrupted && q->interrupted_section == CAL_SEC_ID_GEMM)
      snprintf(why, sizeof why, "interrupted before the gemm section finished");
    for (size_t i = 0; why[0] && i < 3; i++)
      null_reason(root, keys[i], why);
    return 0;
  }
  double worst = 0;
  int n = 0;
  for (size_t i = 0; i < g->npoints; i++)
    tally(&g->points[i].pt, &n, &worst);
  if (n)
    snprintf(why, sizeof why, "%d GEMM point%s contaminated: others took up "
             "to %.0f%% of the usable cores", n, n == 1 ? "" : "s",
             100.0 * worst);
  if (why[0]) {
    for (size_t i = 0; i < 3; i++)
      null_reason(root, keys[i], why);
    return 1;
  }
  json_t *best = cal_gemm_best_json(g);
  json_object_set_new(root, "gflops", top_number(g->sgemm_best[1]));
  json_object_set_new(root, "gflops_per_core", top_number(g->sgemm_best[0]));
  json_object_set_new(root, "gemm_best", best ? best : json_null());
  return 0;
}

/* The batch sweep's optimal point, the model's step: from the training
 * step when it has an optimal batch, else prefill, else decode
 * (cal_sweep_top_mode), with what it was measured on (batch_source);
 * withheld when a point of that mode was contaminated,
 * null with the reason when no mode has a curve. */
static int top_batch(const cal_run_result_t *r, json_t *root) {
  static const char *const keys[] = {"optimal_batch_size", "throughput",
                                     "latency_ms"};
  const cal_batch_result_t *b = cal_results_get(&r->res, CAL_SEC_ID_BATCH);
  const cal_quality_t *q = &r->res.quality;
  char why[320] = "";
  int busy = 0;
  if (!b) {
    if (q->interrupted && q->interrupted_section == CAL_SEC_ID_BATCH)
      snprintf(why, sizeof why, "interrupted before the batch sweep finished");
  } else if (b->top_mode < 0) {
    snprintf(why, sizeof why, "no mode of the batch sweep has an optimal "
             "batch (its points were skipped, failed, contaminated, swapped "
             "or their threads did not run side by side)");
  } else {
    const cal_batch_mode_t *m = &b->modes[b->top_mode];
    double worst = 0;
    int n = 0;
    for (size_t i = 0; i < m->npoints; i++)
      if (m->points[i].measured) /* others keep no harness point */
        tally(&m->points[i].pt, &n, &worst);
    if (n) {
      snprintf(why, sizeof why, "%d %s point%s of the batch sweep "
               "contaminated: others took up to %.0f%% of the usable cores",
               n, b->modes[b->top_mode].name, n == 1 ? "" : "s", 100.0 * worst);
      busy = 1;
    }
  }
  if (why[0]) {
    for (size_t i = 0; i < 3; i++)
      null_reason(root, keys[i], why);
    return busy;
  }
  if (!b)
    return 0;
  const cal_batch_mode_t *m = &b->modes[b->top_mode];
  int64_t ob = m->curve->optimal_batch_size;
  for (size_t i = 0; i < m->npoints; i++)
    if (m->points[i].batch == ob && m->points[i].status == CAL_POINT_OK)
      json_object_set_new(root, "throughput",
                          json_real(m->points[i].examples.median));
  json_object_set_new(root, "optimal_batch_size", json_integer(ob));
  if (!isnan(m->latency_ms_batch_1))
    json_object_set_new(root, "latency_ms", json_real(m->latency_ms_batch_1));
  else
    null_reason(root, "latency_ms",
                "batch 1 was not measured, or swapped, or its threads did "
                "not run side by side");
  json_t *src = cal_batch_source_json(r, b);
  if (src && b->top_mode == 1 && b->ran[0])
    json_object_set_new(src, "note",
                        json_string("prefill has no optimal batch (its points "
                                    "were skipped, failed, contaminated, "
                                    "swapped or not side by side): "
                                    "these are decode's figures"));
  json_object_set_new(root, "batch_source", src ? src : json_null());
  return 0;
}

/* The top-level figures planners read, each null with its reason when it
 * cannot be given; headline_status says which case the run is in. */
static void top_level(const cal_run_result_t *r, json_t *root) {
  const cal_quality_t *q = &r->res.quality;
  json_object_set_new(root, "headline_null_reasons", json_object());
  int busy = top_gemm(r, root);
  busy |= top_batch(r, root);
  json_object_set_new(root, "headline_status",
                      json_string(q->interrupted ? "incomplete"
                                  : busy         ? "withheld"
                                                 : "measured"));
  if (q->interrupted) {
    json_t *done = json_array();
    for (int i = 0; done && i < CAL_NSECTIONS; i++)
      if (cal_results_get(&r->res, i))
        json_array_append_new(done, json_string(cal_sections[i].key));
    json_object_set_new(
        root, "incomplete",
        json_pack("{s:s, s:s?, s:o}", "signal", strsignal(q->interrupted),
                  "interrupted_section",
                  q->interrupted_section >= 0
                      ? cal_sections[q->interrupted_section].key
                      : NULL,
                  "finished_sections", done ? done : json_array()));
  }
}

const char *cal_profile_withheld(const json_t *root) {
  const char *st = json_string_value(json_object_get(root, "headline_status"));
  if (!st || strcmp(st, "withheld") != 0)
    return NULL;
  /* withheld is the GEMM headline's or the batch's (top_gemm, top_batch):
   * the first of the two keys that carries a reason says why */
  json_t *reasons = json_object_get(root, "headline_null_reasons");
  const char *why = json_string_value(json_object_get(reasons, "gflops"));
  if (!why)
    why = json_string_value(json_object_get(reasons, "optimal_batch_size"));
  return why ? why : "headline figures withheld";
}

static json_t *share_json(const cal_load_share_t *l) {
  if (!l->known)
    return json_null();
  return json_pack("{s:f, s:f, s:i, s:f}", "others", l->others, "steal",
                   l->steal, "procs_running", l->procs_running, "seconds",
                   l->seconds);
}

/* Who else used the cores (before the run and per section), what was
 * contaminated and measured again, the clock through the run, and the
 * cross-section findings. */
static int watch_json(const cal_run_result_t *r, json_t *o) {
  const cal_quality_t *q = &r->res.quality;
  json_t *secs = json_object(), *sanity = json_array();
  for (int pass = 0; secs && pass < 2; pass++)
    for (int i = 0; i < CAL_NSECTIONS; i++) {
      if (!(q->timed & (1u << i)) || cal_sections[i].derived != pass ||
          cal_sections[i].derived)
        continue;
      const cal_section_watch_t *w = &q->watch[i];
      json_object_set_new(secs, cal_sections[i].key,
                          json_pack("{s:o, s:o}", "load", share_json(&w->load),
                                    "clock_ghz_after",
                                    w->clock_ghz > 0 ? json_real(w->clock_ghz)
                                                     : json_null()));
    }
  for (size_t i = 0; sanity && i < q->nsanity; i++)
    json_array_append_new(sanity, json_string(q->sanity[i]));
  if (!secs || !sanity) {
    json_decref(secs);
    json_decref(sanity);
    return -1;
  }
  int rc = json_object_set_new(
      o, "load",
      json_pack("{s:f, s:o, s:o, s:s}", "busy_share", CAL_BUSY_SHARE,
                "before", share_json(&q->before), "sections", secs, "source",
                r->load_ok ? "/proc/stat and getrusage"
                                : "unavailable (no /proc/stat)"));
  rc |= json_object_set_new(o, "contaminated_points", json_integer(q->contaminated));
  rc |= json_object_set_new(o, "remeasured_points", json_integer(q->remeasured));
  rc |= json_object_set_new(o, "remeasure_s", json_real(q->remeasure_s));
  rc |= json_object_set_new(o, "watch_s", json_real(q->watch_s));
  if (q->rtt_points > 0)
    rc |= json_object_set_new(
        o, "team_rtt_ns",
        json_pack("{s:f, s:f, s:i}", "min", q->rtt_min_ns, "max",
                  q->rtt_max_ns, "points", q->rtt_points));
  rc |= json_object_set_new(o, "allow_busy", json_boolean(r->opt->allow_busy));
  rc |= json_object_set_new(
      o, "clock",
      json_pack("{s:o, s:b, s:f, s:s?}", "start_ghz",
                q->clock_start_ghz > 0 ? json_real(q->clock_start_ghz)
                                       : json_null(),
                "throttled", q->throttled, "tolerance", CAL_THROTTLE_DROP,
                "note", q->throttled ? q->throttle_note : NULL));
  rc |= json_object_set_new(o, "sanity", sanity);
  return rc;
}

static json_t *quality_json(const cal_run_result_t *r) {
  const cal_quality_t *q = &r->res.quality;
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
  json_t *o = json_pack("{s:b, s:i, s:i, s:f, s:o, s:o}", "noisy",
                         q->unstable > 0, "unstable_points", q->unstable,
                         "failed_points", q->failed, "elapsed_s", q->elapsed_s,
                         "section_times_s", times, "warnings", warnings);
  if (o && watch_json(r, o) < 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Sections in the order they ran: measured ones, then derived ones. */
static int sections_json(const cal_run_result_t *r, json_t *root) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < CAL_NSECTIONS; i++) {
      const void *res = cal_results_get(&r->res, i);
      if (!res || cal_sections[i].derived != pass)
        continue;
      json_t *o = cal_sections[i].write(r, res);
      if (!o || json_object_set_new(root, cal_sections[i].key, o) < 0)
        return -1;
    }
  return 0;
}

json_t *cal_profile_of_run(const cal_run_result_t *r) {
  json_t *root = skeleton(r), *q = NULL;
  if (!root || sections_json(r, root) < 0 || !(q = quality_json(r)) ||
      json_object_set_new(root, "quality", q) < 0) {
    json_decref(root);
    return NULL;
  }
  top_level(r, root);
  return root;
}
