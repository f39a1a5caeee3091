/* One profile in the formats continuous-benchmarking services read
 * (Bencher Metric Format; github-action-benchmark's custom formats).  The
 * `calibrate export` command is in commands/export.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "export.h"
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

/* The BMF measure of a top-level figure, named for its unit: Bencher's
 * built-in measures have units of their own ("throughput" is operations
 * per second, "latency" nanoseconds), and a figure filed under one of
 * them would be drawn in the wrong unit. */
static const char *bmf_measure(const char *key) {
  return strcmp(key, "throughput") == 0 ? "examples_per_s" : key;
}

typedef struct export_ctx {
  json_t *out;
  int bigger; /* gab: which direction goes in; -1 for bmf */
  int failed;
} export_ctx_t;

/* BMF: {metric: {value, lower_value, upper_value}} under the point's id;
 * a repeated id keeps its first point. */
static void bmf_point(export_ctx_t *c, const cal_vpoint_t *p, int have_ci) {
  json_t *e = NULL;
  if (json_object_get(c->out, p->id))
    return;
  json_t *m = json_pack("{s:o}", "value", cal_vnum_json(&p->value));
  if (m && have_ci) {
    json_object_set_new(m, "lower_value", cal_vnum_json(&p->stats.ci_low));
    json_object_set_new(m, "upper_value", cal_vnum_json(&p->stats.ci_high));
  }
  e = m ? json_pack("{s:o}", p->metric, m) : NULL;
  if (!e || json_object_set_new(c->out, p->id, e))
    c->failed = 1;
}

/* gab: {name, unit, value, range, extra} when the direction matches. */
static void gab_point(export_ctx_t *c, const cal_vpoint_t *p, int have_ci) {
  const char *metric = p->metric;
  if (p->higher_better != c->bigger)
    return;
  char extra[256];
  size_t n = p->samples.n;
  snprintf(extra, sizeof extra, "%s, metric %s, %zu samples", p->section,
           metric, n);
  json_t *e = json_pack("{s:s, s:s, s:o, s:s}", "name", p->id, "unit",
                        unit_of(metric), "value", cal_vnum_json(&p->value),
                        "extra", extra);
  if (e && have_ci) {
    char range[96];
    double v = p->value.v, lo = p->stats.ci_low.v, hi = p->stats.ci_high.v;
    double h = fmax(hi - v, v - lo);
    const cal_vnum_t *lvl = &p->stats.ci_level;
    snprintf(range, sizeof range, "± %.4g", h);
    json_object_set_new(e, "range", json_string(range));
    snprintf(extra, sizeof extra,
             "%s, metric %s, %zu samples, %.0f%% CI [%.6g, %.6g]", p->section,
             metric, n, lvl->has ? 100 * lvl->v : 95.0, lo, hi);
    json_object_set_new(e, "extra", json_string(extra));
  }
  if (!e || json_array_append_new(c->out, e))
    c->failed = 1;
}

/* Every ok point with a figure, in document order. */
static void export_points(export_ctx_t *c, const cal_profile_view_t *v) {
  for (size_t i = 0; i < v->npoints; i++) {
    const cal_vpoint_t *p = &v->points[i];
    if (!p->id || !p->status || strcmp(p->status, "ok") || !p->metric ||
        !p->value.has)
      continue;
    int have_ci = p->stats.ci_low.has && p->stats.ci_high.has;
    if (c->bigger < 0)
      bmf_point(c, p, have_ci);
    else
      gab_point(c, p, have_ci);
  }
}

json_t *cal_export_view_bmf(const cal_profile_view_t *v) {
  export_ctx_t c = {json_object(), -1, 0};
  if (!c.out)
    return NULL;
  export_points(&c, v);
  json_t *top = json_object();
  if (!top)
    c.failed = 1;
  for (size_t i = 0; top && i < CAL_NTOP_FIGURES; i++) {
    const cal_vnum_t *f = cal_profile_view_figure(v, cal_top_figures[i].key);
    if (f && f->has &&
        json_object_set_new(top, bmf_measure(cal_top_figures[i].key),
                            json_pack("{s:o}", "value", cal_vnum_json(f))))
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

json_t *cal_export_view_gab(const cal_profile_view_t *v, int bigger) {
  export_ctx_t c = {json_array(), bigger ? 1 : 0, 0};
  if (!c.out)
    return NULL;
  export_points(&c, v);
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++) {
    const cal_vnum_t *f = cal_profile_view_figure(v, cal_top_figures[i].key);
    if (!f || !f->has || cal_top_figures[i].higher_is_better != c.bigger)
      continue;
    char name[64];
    snprintf(name, sizeof name, "profile/%s", cal_top_figures[i].key);
    if (json_array_append_new(
            c.out, json_pack("{s:s, s:s, s:o, s:s}", "name", name, "unit",
                             unit_of(cal_top_figures[i].key), "value",
                             cal_vnum_json(f), "extra", "top-level figure")))
      c.failed = 1;
  }
  if (c.failed) {
    json_decref(c.out);
    return NULL;
  }
  return c.out;
}

/* The same from a tree: its view, built for the call. */
static json_t *export_tree(const json_t *profile, int bigger) {
  cal_profile_view_t *v = NULL;
  if (cal_profile_view_build(profile, &v) < 0)
    return NULL;
  json_t *out = bigger < 0 ? cal_export_view_bmf(v) : cal_export_view_gab(v, bigger);
  cal_profile_view_free(v);
  return out;
}

json_t *cal_export_bmf(const json_t *profile) { return export_tree(profile, -1); }

json_t *cal_export_gab(const json_t *profile, int bigger) {
  return export_tree(profile, bigger ? 1 : 0);
}
