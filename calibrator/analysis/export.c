/* One profile in the formats continuous-benchmarking services read
 * (Bencher Metric Format; github-action-benchmark's custom formats).  The
 * `calibrate export` command is in commands/export.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "profile.h"

/* Display units of the metric names used in profiles. */
static const struct {
  const char *metric, *unit;
} units[] = {
    {"gflops", "GFLOPS"},       {"gflops_per_core", "GFLOPS"},
    {"gbps", "GB/s"},           {"examples_per_s", "examples/s"},
    {"throughput", "examples/s"}, {"ms", "ms"},
    {"latency_ms", "ms"},       {"time_ms", "ms"},
};

static const char *unit_of(const char *metric) {
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(units[i].metric, metric) == 0)
      return units[i].unit;
  return metric;
}


typedef struct export_ctx {
  json_t *out;
  int bigger; /* gab: which direction goes in; -1 for bmf */
  int failed;
} export_ctx_t;

static int visit(const char *section, json_t *pt, void *arg) {
  export_ctx_t *c = arg;
  const char *id = json_string_value(json_object_get(pt, "id"));
  const char *status = json_string_value(json_object_get(pt, "status"));
  const char *metric = json_string_value(json_object_get(pt, "metric"));
  if (!id || !status || strcmp(status, "ok") || !metric)
    return 0;
  const json_t *value = json_object_get(pt, metric);
  const json_t *stats = json_object_get(pt, "stats");
  const json_t *lo = json_object_get(stats, "ci_low");
  const json_t *hi = json_object_get(stats, "ci_high");
  int have_ci = json_is_number(lo) && json_is_number(hi);
  json_t *e = NULL;
  if (!json_is_number(value))
    return 0;
  if (c->bigger < 0) {
    if (json_object_get(c->out, id))
      return 0; /* a repeated id keeps its first point */
    json_t *m = json_pack("{s:O}", "value", value);
    if (m && have_ci) {
      json_object_set(m, "lower_value", (json_t *)lo);
      json_object_set(m, "upper_value", (json_t *)hi);
    }
    e = m ? json_pack("{s:o}", metric, m) : NULL;
    if (!e || json_object_set_new(c->out, id, e))
      c->failed = 1;
    return 0;
  }
  if (cal_point_higher_is_better(pt, metric) != c->bigger)
    return 0;
  char extra[256], key[128];
  snprintf(key, sizeof key, "samples_%s", metric);
  size_t n = json_array_size(json_object_get(pt, key));
  snprintf(extra, sizeof extra, "%s, metric %s, %zu samples", section, metric, n);
  e = json_pack("{s:s, s:s, s:O, s:s}", "name", id, "unit", unit_of(metric),
                "value", value, "extra", extra);
  if (e && have_ci) {
    char range[96];
    double v = json_number_value(value);
    double h = fmax(json_number_value(hi) - v, v - json_number_value(lo));
    const json_t *lvl = json_object_get(stats, "ci_level");
    snprintf(range, sizeof range, "± %.4g", h);
    json_object_set_new(e, "range", json_string(range));
    snprintf(extra, sizeof extra,
             "%s, metric %s, %zu samples, %.0f%% CI [%.6g, %.6g]", section,
             metric, n,
             json_is_number(lvl) ? 100 * json_number_value(lvl) : 95.0,
             json_number_value(lo), json_number_value(hi));
    json_object_set_new(e, "extra", json_string(extra));
  }
  if (!e || json_array_append_new(c->out, e))
    c->failed = 1;
  return 0;
}

json_t *cal_export_bmf(const json_t *profile) {
  export_ctx_t c = {json_object(), -1, 0};
  if (!c.out)
    return NULL;
  cal_profile_each_point(profile, visit, &c);
  json_t *top = json_object();
  if (!top)
    c.failed = 1;
  for (size_t i = 0; top && i < CAL_NTOP_FIGURES; i++) {
    json_t *v = json_object_get(profile, cal_top_figures[i].key);
    if (json_is_number(v) &&
        json_object_set_new(top, cal_top_figures[i].key, json_pack("{s:O}", "value", v)))
      c.failed = 1;
  }
  if (top && json_object_size(top))
    json_object_set(c.out, "profile", top);
  json_decref(top);
  if (c.failed) {
    json_decref(c.out);
    return NULL;
  }
  return c.out;
}

json_t *cal_export_gab(const json_t *profile, int bigger) {
  export_ctx_t c = {json_array(), bigger ? 1 : 0, 0};
  if (!c.out)
    return NULL;
  cal_profile_each_point(profile, visit, &c);
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++) {
    json_t *v = json_object_get(profile, cal_top_figures[i].key);
    if (!json_is_number(v) || cal_top_figures[i].higher_is_better != c.bigger)
      continue;
    char name[64];
    snprintf(name, sizeof name, "profile/%s", cal_top_figures[i].key);
    if (json_array_append_new(
            c.out, json_pack("{s:s, s:s, s:O, s:s}", "name", name, "unit",
                             unit_of(cal_top_figures[i].key), "value", v, "extra",
                             "top-level figure")))
      c.failed = 1;
  }
  if (c.failed) {
    json_decref(c.out);
    return NULL;
  }
  return c.out;
}
