/* The JSON tree of a comparison (see compare_json.h): the typed result
 * written out key by key, in the schema's order. */
#include "compare_json.h"

#include <math.h>
#include <string.h>

#include "cal_err.h"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *count(size_t n) { return json_integer((json_int_t)n); }

/* A point judged on one run a side (samples) or on several (runs): the
 * two carry different statistics. */
static json_t *point_json(const cal_compare_point_t *e) {
  json_t *o;
  if (!e->by_runs)
    o = json_pack(
        "{s:s, s:s, s:s, s:b, s:o, s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o,"
        " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:n, s:n}",
        "id", e->id, "section", e->section, "metric", e->metric,
        "higher_is_better", e->higher_is_better, "n_base", count(e->n_base),
        "n_new", count(e->n_new), "runs_base", 1, "runs_new", 1,
        "base_median", num(e->base_median), "new_median", num(e->new_median),
        "ratio", num(e->ratio), "ci_low", num(e->ci_low), "ci_high",
        num(e->ci_high), "ci_level", num(e->ci_level), "hl_ratio",
        num(e->hl_ratio), "oriented_ratio", num(e->oriented_ratio), "u",
        num(e->u), "z", num(e->z), "p", num(e->p), "p_min", num(e->p_min),
        "method", e->method, "base_run_spread", "new_run_spread");
  else
    o = json_pack(
        "{s:s, s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
        " s:o, s:n, s:o, s:n, s:n, s:o, s:o, s:s, s:o, s:o, s:o}",
        "id", e->id, "section", e->section, "metric", e->metric,
        "higher_is_better", e->higher_is_better, "n_base", count(e->n_base),
        "n_new", count(e->n_new), "runs_base", count(e->runs_base),
        "runs_new", count(e->runs_new), "base_median", num(e->base_median),
        "new_median", num(e->new_median), "ratio", num(e->ratio), "ci_low",
        num(e->ci_low), "ci_high", num(e->ci_high), "ci_level",
        num(e->ci_level), "hl_ratio", "oriented_ratio",
        num(e->oriented_ratio), "u", "z", "p", num(e->p), "p_min",
        num(e->p_min), "method", e->method, "df", num(e->df),
        "base_run_spread", num(e->base_run_spread), "new_run_spread",
        num(e->new_run_spread));
  if (o && e->has_geomean &&
      (json_object_set_new(o, "base_geomean", num(e->base_geomean)) ||
       json_object_set_new(o, "new_geomean", num(e->new_geomean))))
    goto fail;
  if (o && (json_object_set_new(o, "p_adjusted", num(e->p_adjusted)) ||
            json_object_set_new(o, "verdict",
                                json_string(cal_verdict_name(e->verdict))) ||
            json_object_set_new(o, "reason", json_string(e->reason)) ||
            json_object_set_new(o, "undecidable",
                                json_boolean(e->undecidable)) ||
            json_object_set_new(o, "runs_needed",
                                e->runs_needed ? count(e->runs_needed)
                                               : json_null())))
    goto fail;
  return o;
fail:
  json_decref(o);
  return NULL;
}

/* One element of a list of the result: item(c, i). */
typedef json_t *(*item_fn)(const cal_comparison_t *c, size_t i);

/* The array of item(c, 0..n-1); NULL when out of memory. */
static json_t *list_json(const cal_comparison_t *c, size_t n, item_fn item) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) {
    json_t *v = item(c, i);
    if (!v || json_array_append_new(a, v)) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

static json_t *point_item(const cal_comparison_t *c, size_t i) {
  return point_json(&c->points[i]);
}

static json_t *diff_json(const cal_compare_diff_t *d) {
  return json_pack("{s:s, s:O, s:O, s:s?}", "key", d->key, "base", d->base,
                   "new", d->newv, "profile", d->profile);
}

static json_t *diff_item(const cal_comparison_t *c, size_t i) {
  return diff_json(&c->diffs[i]);
}

static json_t *env_item(const cal_comparison_t *c, size_t i) {
  return diff_json(&c->env_diffs[i]);
}

static json_t *top_item(const cal_comparison_t *c, size_t i) {
  const cal_compare_top_t *t = &c->tops[i];
  return json_pack("{s:s, s:f, s:f, s:o, s:b, s:s}", "key", t->key, "base",
                   t->base, "new", t->newv, "ratio", num(t->ratio),
                   "higher_is_better", t->higher_is_better, "verdict",
                   cal_verdict_name(CAL_VERDICT_INFO));
}

static json_t *skip_item(const cal_comparison_t *c, size_t i) {
  return json_pack("{s:s, s:s}", "id", c->skipped[i].id, "reason",
                   c->skipped[i].reason);
}

static json_t *only_base_item(const cal_comparison_t *c, size_t i) {
  return json_string(c->only_base[i]);
}

static json_t *only_new_item(const cal_comparison_t *c, size_t i) {
  return json_string(c->only_new[i]);
}

static json_t *base_run_item(const cal_comparison_t *c, size_t i) {
  return json_string(c->base_runs[i]);
}

static json_t *new_run_item(const cal_comparison_t *c, size_t i) {
  return json_string(c->new_runs[i]);
}

static json_t *summary_json(const cal_comparison_t *c) {
  const cal_compare_summary_t *s = &c->summary;
  json_t *o = json_pack(
      "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:o,"
      " s:o, s:o}",
      "compared", count(s->compared), "regressed",
      count(s->counts[CAL_VERDICT_REGRESSED]), "improved",
      count(s->counts[CAL_VERDICT_IMPROVED]), "inconclusive",
      count(s->counts[CAL_VERDICT_INCONCLUSIVE]), "unchanged",
      count(s->counts[CAL_VERDICT_UNCHANGED]), "undecidable",
      count(s->undecidable), "within_run_allowance",
      count(s->within_run_allowance), "geomean", num(s->geomean),
      "geomean_points", count(s->geomean_points), "regression",
      s->regression, "runs_base", count(s->runs_base), "runs_new",
      count(s->runs_new), "base_run_spread", num(s->base_run_spread),
      "new_run_spread", num(s->new_run_spread), "machine_speed_ratio",
      num(s->machine_speed_ratio));
  if (o && s->runs_needed_median &&
      (json_object_set_new(o, "runs_needed_median",
                           count(s->runs_needed_median)) ||
       json_object_set_new(o, "runs_needed_most",
                           count(s->runs_needed_most)))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *cal_compare_json(const cal_comparison_t *c) {
  const cal_compare_opts_t *o = &c->opts;
  json_t *rep = json_pack(
      "{s:s, s:s?, s:s?, s:f, s:f, s:f, s:f, s:s, s:s?, s:o, s:o, s:b, s:o,"
      " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
      "schema", CAL_COMPARE_SCHEMA, "base", c->base_label, "new",
      c->new_label, "threshold", o->threshold, "alpha", o->alpha, "ci_level",
      o->ci_level, "run_allowance", o->run_allowance, "multiple_testing",
      "benjamini-hochberg", "filter", o->filter, "machine_differences",
      list_json(c, c->ndiffs, diff_item), "environment_differences",
      list_json(c, c->nenv_diffs, env_item), "allow_different_machines",
      c->allow_different_machines, "points",
      list_json(c, c->npoints, point_item), "top_level",
      list_json(c, c->ntops, top_item), "only_in_base",
      list_json(c, c->nonly_base, only_base_item), "only_in_new",
      list_json(c, c->nonly_new, only_new_item), "not_compared",
      list_json(c, c->nskipped, skip_item), "summary", summary_json(c),
      "base_runs", list_json(c, c->summary.runs_base, base_run_item),
      "new_runs", list_json(c, c->summary.runs_new, new_run_item),
      "only_changed", c->only_changed);
  /* the software compared (listed, not judged) */
  if (rep && json_object_set_new(rep, "tool_git",
                                 json_pack("{s:s?, s:s?}", "base", c->base_git,
                                           "new", c->new_git)) < 0) {
    json_decref(rep);
    return NULL;
  }
  return rep;
}

int cal_compare_render_json(const void *in, int variant, FILE *f, char *err,
                            size_t errlen) {
  (void)variant;
  json_t *rep = cal_compare_json(in);
  int rc = rep ? 0 : CAL_EIO; /* as a tree that cannot be written */
  if (rep && json_dumpf(rep, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0)
    rc = CAL_EIO;
  json_decref(rep);
  if (rc == 0 && fputc('\n', f) == EOF)
    rc = CAL_EIO;
  if (rc < 0)
    snprintf(err, errlen, "out of memory");
  return rc;
}
