/* Comparison statistics: two profiles point by point (see compare.h). */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "mwu.h"
#include "stats.h"
#include "profile.h"
#include "verdict.h"

/* ---------------------------------------------------------------- helpers */

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Value at a dotted path ("machine.cpu.brand"), NULL when absent. */
static const json_t *get_path(const json_t *root, const char *path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", path);
  const json_t *node = root;
  char *save = NULL;
  for (char *part = strtok_r(buf, ".", &save); part && node;
       part = strtok_r(NULL, ".", &save))
    node = json_object_get(node, part);
  return node;
}

/* Identity of the machine and BLAS a profile was measured with. */
static const char *const machine_keys[] = {
    "machine.cpu.brand",
    "machine.usable_cores",
    "blas.library",
    "blas.version",
};

json_t *cal_compare_machine_diff(const json_t *base, const json_t *newp) {
  json_t *diffs = json_array();
  if (!diffs)
    return NULL;
  for (size_t i = 0; i < sizeof machine_keys / sizeof machine_keys[0]; i++) {
    const json_t *a = get_path(base, machine_keys[i]);
    const json_t *b = get_path(newp, machine_keys[i]);
    if (!a || !b || json_equal((json_t *)a, (json_t *)b))
      continue;
    if (json_array_append_new(diffs,
                              json_pack("{s:s, s:O, s:O}", "key",
                                        machine_keys[i], "base", a, "new", b))) {
      json_decref(diffs);
      return NULL;
    }
  }
  return diffs;
}

/* ------------------------------------------------------- point collection */

typedef struct point_set {
  json_t *order; /* array of {section, point} in document order */
  json_t *by_id; /* id -> the same entry */
  const char *dup; /* first repeated id, if any (borrowed from the tree) */
} point_set_t;

static int collect(const char *section, json_t *point, void *arg) {
  point_set_t *s = arg;
  const char *id = json_string_value(json_object_get(point, "id"));
  if (!id)
    return 0;
  if (json_object_get(s->by_id, id)) {
    s->dup = id;
    return 1;
  }
  json_t *e = json_pack("{s:s, s:O}", "section", section, "point", point);
  if (!e || json_array_append(s->order, e) || json_object_set(s->by_id, id, e)) {
    json_decref(e);
    return CAL_ENOMEM;
  }
  json_decref(e);
  return 0;
}

static void point_set_clear(point_set_t *s) {
  json_decref(s->order);
  json_decref(s->by_id);
}

static int point_set_load(const json_t *root, point_set_t *s, const char *name,
                          char *err, size_t errlen) {
  s->order = json_array();
  s->by_id = json_object();
  s->dup = NULL;
  if (!s->order || !s->by_id)
    return CAL_ENOMEM;
  int rc = cal_profile_each_point(root, collect, s);
  if (rc < 0)
    return rc;
  if (s->dup) {
    snprintf(err, errlen, "%s: point id \"%s\" appears twice", name, s->dup);
    return CAL_EINVAL;
  }
  return 0;
}

/* Samples of `metric` as a malloc'ed array; NULL with *n = 0 on failure. */
static double *samples_of(const json_t *pt, const char *metric, size_t *n) {
  char key[128];
  snprintf(key, sizeof key, "samples_%s", metric);
  const json_t *arr = json_object_get(pt, key);
  size_t len = json_array_size(arr);
  *n = 0;
  double *x = len ? malloc(len * sizeof *x) : NULL;
  if (!x)
    return NULL;
  for (size_t i = 0; i < len; i++)
    x[i] = json_number_value(json_array_get(arr, i));
  *n = len;
  return x;
}

/* Direction of a point: its own "higher_is_better", else a guess from the
 * metric's name (times are lower-is-better). */
int cal_point_higher_is_better(const json_t *pt, const char *metric) {
  const json_t *h = json_object_get(pt, "higher_is_better");
  if (json_is_boolean(h))
    return json_is_true(h);
  size_t len = strlen(metric);
  return !(strcmp(metric, "ms") == 0 ||
           (len > 3 && strcmp(metric + len - 3, "_ms") == 0));
}

/* --------------------------------------------------------------- compare */

/* Judge one point present and ok in both profiles; a new report entry. */
static json_t *judge(const char *id, const char *section, const json_t *bp,
                     const json_t *np, const char *metric,
                     const cal_compare_opts_t *o, int *rc) {
  size_t nb = 0, nn = 0;
  double *xb = samples_of(bp, metric, &nb);
  double *xn = samples_of(np, metric, &nn);
  json_t *e = NULL;
  cal_mwu_t t;
  cal_ratio_ci_t ci;
  *rc = CAL_ENOMEM;
  if (!xb || !xn)
    goto out;
  if ((*rc = cal_mwu_test(xb, nb, xn, nn, &t)) < 0 ||
      (*rc = cal_ratio_ci(xb, nb, xn, nn, o->ci_level, &ci)) < 0)
    goto out;
  int hib = cal_point_higher_is_better(bp, metric);
  cal_verdict_in_t in = {hib, ci.ratio, ci.lo, ci.hi, t.p, t.p_min,
                         o->threshold, o->alpha};
  const char *reason = NULL;
  cal_verdict_t v = cal_verdict_decide(&in, &reason);
  e = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o,"
                " s:o, s:o, s:f, s:o, s:f, s:f, s:s, s:s, s:s, s:i}",
                "id", id, "section", section, "metric", metric,
                "higher_is_better", hib, "n_base", (json_int_t)nb, "n_new",
                (json_int_t)nn, "base_median", num(cal_median(xb, nb)),
                "new_median", num(cal_median(xn, nn)), "ratio", num(ci.ratio),
                "ci_low", num(ci.lo), "ci_high", num(ci.hi), "ci_level",
                num(ci.level), "hl_ratio", num(ci.hl), "oriented_ratio",
                num(cal_ratio_oriented(ci.ratio, hib)), "u", t.u, "z",
                num(t.z), "p", t.p, "p_min", t.p_min, "method",
                cal_mwu_method_name(t.method), "verdict", cal_verdict_name(v),
                "reason", reason, "_rank", (int)v);
  *rc = e ? 0 : CAL_ENOMEM;
out:
  free(xb);
  free(xn);
  return e;
}

static int by_rank(const void *a, const void *b) {
  const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
  json_int_t rx = json_integer_value(json_object_get(x, "_rank"));
  json_int_t ry = json_integer_value(json_object_get(y, "_rank"));
  json_int_t ox = json_integer_value(json_object_get(x, "_order"));
  json_int_t oy = json_integer_value(json_object_get(y, "_order"));
  if (rx != ry)
    return rx < ry ? -1 : 1;
  return (ox > oy) - (ox < oy);
}

/* Sort the entries by verdict (stable by document order), drop the helper
 * keys; a new array. */
static json_t *sorted_points(json_t *entries) {
  size_t n = json_array_size(entries);
  json_t **v = malloc((n ? n : 1) * sizeof *v);
  json_t *out = json_array();
  if (!v || !out)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    v[i] = json_array_get(entries, i);
    if (json_object_set_new(v[i], "_order", json_integer((json_int_t)i)))
      goto fail;
  }
  qsort(v, n, sizeof *v, by_rank);
  for (size_t i = 0; i < n; i++) {
    json_object_del(v[i], "_rank");
    json_object_del(v[i], "_order");
    if (json_array_append(out, v[i]))
      goto fail;
  }
  free(v);
  return out;
fail:
  free(v);
  json_decref(out);
  return NULL;
}


/* Record a point found in both profiles but not compared: "<what> A in
 * base, B in new". */
static int add_not_compared(json_t *arr, const char *id, const char *what,
                            const char *a, const char *b) {
  char why[160];
  snprintf(why, sizeof why, "%s %s in base, %s in new", what, a, b);
  return json_array_append_new(arr, json_pack("{s:s, s:s}", "id", id,
                                              "reason", why));
}

/* What a comparison gathers before the report is packed; owned. */
typedef struct compare_acc {
  json_t *entries, *only_b, *only_n, *skipped, *tops;
  double *oriented; /* oriented ratio of every compared point */
  size_t n_or;
  size_t counts[CAL_VERDICT_INFO + 1];
} compare_acc_t;

static void compare_acc_clear(compare_acc_t *a) {
  free(a->oriented);
  json_decref(a->entries);
  json_decref(a->only_b);
  json_decref(a->only_n);
  json_decref(a->skipped);
  json_decref(a->tops);
}

/* Ids of base points missing from new. */
static int list_only_in_base(const point_set_t *sb, const point_set_t *sn,
                             json_t *only_b) {
  size_t i;
  json_t *e;
  json_array_foreach(sb->order, i, e) {
    json_t *pt = json_object_get(e, "point");
    const char *id = json_string_value(json_object_get(pt, "id"));
    if (!json_object_get(sn->by_id, id) && json_array_append_new(only_b, json_string(id)))
      return CAL_ENOMEM;
  }
  return 0;
}

/* One point of new (entry e): only in new, not comparable, or judged. */
static int compare_point(const point_set_t *sb, json_t *e,
                         const cal_compare_opts_t *o, compare_acc_t *a) {
  json_t *np = json_object_get(e, "point");
  const char *id = json_string_value(json_object_get(np, "id"));
  const char *section = json_string_value(json_object_get(e, "section"));
  json_t *be = json_object_get(sb->by_id, id);
  int rc = CAL_ENOMEM;
  if (!be)
    return json_array_append_new(a->only_n, json_string(id)) ? CAL_ENOMEM : 0;
  json_t *bp = json_object_get(be, "point");
  const char *bs = json_string_value(json_object_get(bp, "status"));
  const char *ns = json_string_value(json_object_get(np, "status"));
  if (strcmp(bs, "ok") || strcmp(ns, "ok"))
    return add_not_compared(a->skipped, id, "status", bs, ns) ? CAL_ENOMEM : 0;
  const char *bm = json_string_value(json_object_get(bp, "metric"));
  const char *nm = json_string_value(json_object_get(np, "metric"));
  if (strcmp(bm, nm))
    return add_not_compared(a->skipped, id, "metric", bm, nm) ? CAL_ENOMEM : 0;
  json_t *entry = judge(id, section, bp, np, bm, o, &rc);
  if (!entry)
    return rc;
  cal_verdict_t v = (cal_verdict_t)json_integer_value(json_object_get(entry, "_rank"));
  a->counts[v]++;
  a->oriented[a->n_or++] = cal_json_num(entry, "oriented_ratio", NAN);
  return json_array_append_new(a->entries, entry) ? CAL_ENOMEM : 0;
}

/* The top-level figures both profiles hold: their ratio only. */
static int compare_top_level(const json_t *base, const json_t *newp,
                             json_t *tops) {
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++) {
    double a = cal_json_num(base, cal_top_figures[i].key, NAN), b = cal_json_num(newp, cal_top_figures[i].key, NAN);
    if (!isfinite(a) || !isfinite(b))
      continue;
    if (json_array_append_new(
            tops, json_pack("{s:s, s:f, s:f, s:o, s:b, s:s}", "key",
                            cal_top_figures[i].key, "base", a, "new", b, "ratio",
                            num(a != 0 ? b / a : NAN), "higher_is_better",
                            cal_top_figures[i].higher_is_better, "verdict",
                            cal_verdict_name(CAL_VERDICT_INFO))))
      return CAL_ENOMEM;
  }
  return 0;
}

/* The report tree from what was gathered; NULL when out of memory. */
static json_t *pack_report(const json_t *base, const json_t *newp,
                           const cal_compare_opts_t *o, const compare_acc_t *a) {
  size_t used = 0;
  double gm = cal_geomean(a->oriented, a->n_or, &used);
  json_t *points = sorted_points(a->entries);
  if (!points)
    return NULL;
  json_t *diffs = cal_compare_machine_diff(base, newp);
  return json_pack(
      "{s:s, s:s?, s:s?, s:f, s:f, s:f, s:o*, s:b, s:o, s:O, s:O, s:O, s:O,"
      " s:{s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b}}",
      "schema", CAL_COMPARE_SCHEMA, "base", o->base_name, "new", o->new_name,
      "threshold", o->threshold, "alpha", o->alpha, "ci_level", o->ci_level,
      "machine_differences", diffs, "allow_different_machines", 0, "points",
      points, "top_level", a->tops, "only_in_base", a->only_b, "only_in_new",
      a->only_n, "not_compared", a->skipped, "summary", "compared",
      (json_int_t)a->n_or, "regressed",
      (json_int_t)a->counts[CAL_VERDICT_REGRESSED], "improved",
      (json_int_t)a->counts[CAL_VERDICT_IMPROVED], "inconclusive",
      (json_int_t)a->counts[CAL_VERDICT_INCONCLUSIVE], "unchanged",
      (json_int_t)a->counts[CAL_VERDICT_UNCHANGED], "geomean", num(gm),
      "geomean_points", (json_int_t)used, "regression",
      a->counts[CAL_VERDICT_REGRESSED] > 0);
}

int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *o, json_t **report,
                         char *err, size_t errlen) {
  point_set_t sb = {0}, sn = {0};
  compare_acc_t a = {json_array(), json_array(), json_array(), json_array(),
                     json_array(), NULL, 0, {0}};
  json_t *rep = NULL;
  int rc = CAL_ENOMEM;
  if (!a.entries || !a.only_b || !a.only_n || !a.skipped || !a.tops)
    goto out;
  if ((rc = point_set_load(base, &sb, o->base_name ? o->base_name : "base",
                           err, errlen)) < 0 ||
      (rc = point_set_load(newp, &sn, o->new_name ? o->new_name : "new", err,
                           errlen)) < 0)
    goto out;
  rc = CAL_ENOMEM;
  a.oriented = malloc((json_array_size(sn.order) + 1) * sizeof *a.oriented);
  if (!a.oriented || (rc = list_only_in_base(&sb, &sn, a.only_b)) < 0)
    goto out;
  size_t i;
  json_t *e;
  json_array_foreach(sn.order, i, e) {
    if ((rc = compare_point(&sb, e, o, &a)) < 0)
      goto out;
  }
  rc = CAL_ENOMEM;
  if (compare_top_level(base, newp, a.tops) < 0)
    goto out;
  rep = pack_report(base, newp, o, &a);
  rc = rep ? 0 : CAL_ENOMEM;
out:
  if (rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory comparing profiles");
  point_set_clear(&sb);
  point_set_clear(&sn);
  compare_acc_clear(&a);
  if (rc == 0)
    *report = rep;
  return rc;
}
