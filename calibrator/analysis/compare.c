/* Comparison statistics: two sides of one or more profiles, point by
 * point (see compare.h). */
#include "compare.h"

#include <fnmatch.h>
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

/* Identity of the machine, its BLAS and engines, and the tool a profile
 * was measured with: what must not differ for a difference of speed to
 * mean a change of code.  The git commit is left out (base and head
 * differ by design), and so are hostname, memory and clocks (runners of
 * one class differ there without measuring differently). */
static const char *const machine_keys[] = {
    "machine.cpu.vendor",   "machine.cpu.brand",    "machine.cpu.family",
    "machine.cpu.model",    "machine.cpu.stepping", "machine.cpu.isa",
    "machine.caches",       "machine.usable_cores", "blas.library",
    "blas.version",         "blas.coretype",        "blas.parallel",
    "gemm.onednn.version",  "tool.version",
};

/* Append {key, base, new} unless an equal entry is there. */
static int add_diff(json_t *diffs, const char *key, const json_t *a,
                    const json_t *b, const char *where) {
  size_t i;
  json_t *e;
  json_array_foreach(diffs, i, e) {
    if (strcmp(cal_json_str(e, "key"), key) == 0 &&
        json_equal(json_object_get(e, "base"), (json_t *)a) &&
        json_equal(json_object_get(e, "new"), (json_t *)b))
      return 0;
  }
  return json_array_append_new(
      diffs, json_pack("{s:s, s:O, s:O, s:s?}", "key", key, "base", a, "new",
                       b, "profile", where));
}

/* Differences of one profile against the reference into diffs. */
static int diff_into(json_t *diffs, const json_t *ref, const json_t *p,
                     const char *where) {
  for (size_t i = 0; i < sizeof machine_keys / sizeof machine_keys[0]; i++) {
    const json_t *a = get_path(ref, machine_keys[i]);
    const json_t *b = get_path(p, machine_keys[i]);
    if (!a || !b || json_equal((json_t *)a, (json_t *)b))
      continue;
    if (add_diff(diffs, machine_keys[i], a, b, where))
      return CAL_ENOMEM;
  }
  return 0;
}

json_t *cal_compare_machine_diff(const json_t *base, const json_t *newp) {
  json_t *diffs = json_array();
  if (diffs && diff_into(diffs, base, newp, NULL) < 0) {
    json_decref(diffs);
    return NULL;
  }
  return diffs;
}

/* Every profile of both sides against the first base profile. */
static json_t *sides_machine_diff(const cal_compare_side_t *b,
                                  const cal_compare_side_t *n) {
  json_t *diffs = json_array();
  const json_t *ref = b->runs[0];
  for (size_t s = 0; diffs && s < 2; s++) {
    const cal_compare_side_t *side = s ? n : b;
    for (size_t i = s ? 0 : 1; i < side->n; i++)
      if (diff_into(diffs, ref, side->runs[i],
                    side->names ? side->names[i] : NULL) < 0) {
        json_decref(diffs);
        return NULL;
      }
  }
  return diffs;
}

/* ------------------------------------------------------- point collection */

/* The points of one side: every id seen in any of its runs, in the order
 * first seen, each with its point in every run (null where a run lacks
 * it). */
typedef struct side_points {
  json_t *order; /* [id] */
  json_t *by_id; /* id -> {section, points: [point | null] * nruns} */
  size_t nruns;
} side_points_t;

typedef struct collect_ctx {
  side_points_t *s;
  size_t run;
  json_t *seen;    /* ids of this run */
  const char *dup; /* first repeated id of this run (borrowed) */
  const char *filter;
} collect_ctx_t;

/* Whether id matches one of the comma-separated globs (all when NULL). */
static int id_selected(const char *filter, const char *id) {
  if (!filter || !*filter)
    return 1;
  char glob[256];
  for (const char *p = filter; *p;) {
    size_t len = strcspn(p, ",");
    if (len && len < sizeof glob) {
      memcpy(glob, p, len);
      glob[len] = '\0';
      if (fnmatch(glob, id, 0) == 0)
        return 1;
    }
    p += len + (p[len] == ',');
  }
  return 0;
}

static int collect(const char *section, json_t *point, void *arg) {
  collect_ctx_t *c = arg;
  const char *id = json_string_value(json_object_get(point, "id"));
  if (!id || !id_selected(c->filter, id))
    return 0;
  if (json_object_get(c->seen, id)) {
    c->dup = id;
    return 1;
  }
  if (json_object_set(c->seen, id, json_true()))
    return CAL_ENOMEM;
  json_t *e = json_object_get(c->s->by_id, id);
  if (!e) {
    json_t *pts = json_array();
    for (size_t i = 0; pts && i < c->s->nruns; i++)
      json_array_append_new(pts, json_null());
    e = json_pack("{s:s, s:o}", "section", section, "points", pts);
    if (!e || json_object_set_new(c->s->by_id, id, e) ||
        json_array_append_new(c->s->order, json_string(id)))
      return CAL_ENOMEM;
  }
  return json_array_set(json_object_get(e, "points"), c->run, point)
             ? CAL_ENOMEM
             : 0;
}

static void side_points_clear(side_points_t *s) {
  json_decref(s->order);
  json_decref(s->by_id);
}

static int side_points_load(const cal_compare_side_t *side, const char *filter,
                            side_points_t *s, char *err, size_t errlen) {
  s->order = json_array();
  s->by_id = json_object();
  s->nruns = side->n;
  if (!s->order || !s->by_id)
    return CAL_ENOMEM;
  for (size_t r = 0; r < side->n; r++) {
    collect_ctx_t c = {s, r, json_object(), NULL, filter};
    if (!c.seen)
      return CAL_ENOMEM;
    int rc = cal_profile_each_point(side->runs[r], collect, &c);
    if (rc >= 0 && c.dup) {
      snprintf(err, errlen, "%s: point id \"%s\" appears twice",
               side->names && side->names[r] ? side->names[r] : side->label,
               c.dup);
      rc = CAL_EINVAL;
    }
    json_decref(c.seen);
    if (rc < 0)
      return rc;
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

/* One run's value of a point: the median of its samples, else its
 * figure; NAN when it has neither. */
static double run_value(const json_t *pt, const char *metric) {
  size_t n = 0;
  double *x = samples_of(pt, metric, &n), v = NAN;
  if (x && n)
    v = cal_median(x, n);
  free(x);
  return isfinite(v) ? v : cal_json_num(pt, metric, NAN);
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

/* One run per side: Mann-Whitney U on the samples, Moses interval of the
 * ratio of medians.  A new entry (verdict decided later). */
static json_t *judge_samples(const char *id, const char *section,
                             const json_t *bp, const json_t *np,
                             const char *metric, const cal_compare_opts_t *o,
                             int *rc) {
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
  double mb = cal_median(xb, nb), mn = cal_median(xn, nn);
  if (!isfinite(ci.ratio) && mb == 0 && mn > 0)
    ci.ratio = INFINITY; /* from nothing to something */
  int hib = cal_point_higher_is_better(bp, metric);
  e = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:i, s:i, s:o, s:o, s:o, s:o,"
                " s:o, s:o, s:o, s:o, s:f, s:o, s:f, s:f, s:s, s:n, s:n}",
                "id", id, "section", section, "metric", metric,
                "higher_is_better", hib, "n_base", (json_int_t)nb, "n_new",
                (json_int_t)nn, "runs_base", 1, "runs_new", 1, "base_median",
                num(mb), "new_median", num(mn), "ratio", num(ci.ratio),
                "ci_low", num(ci.lo), "ci_high", num(ci.hi), "ci_level",
                num(ci.level), "hl_ratio", num(ci.hl), "oriented_ratio",
                num(cal_ratio_oriented(ci.ratio, hib)), "u", t.u, "z",
                num(t.z), "p", t.p, "p_min", t.p_min, "method",
                cal_mwu_method_name(t.method), "base_run_spread",
                "new_run_spread");
  /* the ratio as a number even when JSON cannot hold it (0 or inf) */
  if (e)
    json_object_set_new(e, "_ratio", json_real(isinf(ci.ratio) ? 1e308 : ci.ratio));
  /* a point its run marked unstable (CV past the run's threshold: the
   * machine was busy or its clock moved) */
  if (e && (json_is_true(json_object_get(json_object_get(bp, "stats"), "unstable")) ||
            json_is_true(json_object_get(json_object_get(np, "stats"), "unstable"))))
    json_object_set_new(e, "_unstable", json_true());
  *rc = e ? 0 : CAL_ENOMEM;
out:
  free(xb);
  free(xn);
  return e;
}

/* Several runs on a side: one value per run (its median), Welch's t on
 * their logs (cal_runs_test).  A new entry (verdict decided later). */
static json_t *judge_runs(const char *id, const char *section,
                          const double *vb, size_t nb, const double *vn,
                          size_t nn, int hib, const char *metric,
                          const cal_compare_opts_t *o, int *rc) {
  cal_runs_test_t t;
  if ((*rc = cal_runs_test(vb, nb, vn, nn, o->ci_level, &t)) < 0)
    return NULL;
  json_t *e = json_pack(
      "{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o,"
      " s:f, s:n, s:o, s:n, s:n, s:o, s:f, s:s, s:o, s:o, s:o}",
      "id", id, "section", section, "metric", metric, "higher_is_better",
      hib, "n_base", (json_int_t)nb, "n_new", (json_int_t)nn, "runs_base",
      (json_int_t)nb, "runs_new", (json_int_t)nn, "base_median",
      num(cal_median(vb, nb)), "new_median", num(cal_median(vn, nn)),
      "ratio", num(t.ratio), "ci_low", num(t.lo), "ci_high", num(t.hi),
      "ci_level", o->ci_level, "hl_ratio", "oriented_ratio",
      num(cal_ratio_oriented(t.ratio, hib)), "u", "z", "p", num(t.p),
      "p_min", 0.0, "method", t.log_scale ? "welch-log-runs" : "welch-runs",
      "df", num(t.df), "base_run_spread", num(t.sd_base), "new_run_spread",
      num(t.sd_new));
  if (e) {
    json_object_set_new(e, "_ratio",
                        json_real(isinf(t.ratio) ? 1e308 : t.ratio));
    /* the figures the ratio is of: geometric means of the runs */
    if (t.log_scale) {
      double gb = cal_geomean(vb, nb, NULL), gn = cal_geomean(vn, nn, NULL);
      json_object_set_new(e, "base_geomean", num(gb));
      json_object_set_new(e, "new_geomean", num(gn));
    }
  }
  *rc = e ? 0 : CAL_ENOMEM;
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
    json_object_del(v[i], "_ratio");
    json_object_del(v[i], "_unstable");
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

/* Record a point found on both sides but not compared: "<what> A in
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
  size_t counts[CAL_VERDICT_INFO + 1];
  size_t undecidable, single;
  size_t *need, nneed; /* runs per side the single-run points would need */
  double speed;        /* single runs: the machine's own speed ratio */
} compare_acc_t;

static void compare_acc_clear(compare_acc_t *a) {
  free(a->need);
  json_decref(a->entries);
  json_decref(a->only_b);
  json_decref(a->only_n);
  json_decref(a->skipped);
  json_decref(a->tops);
}

/* Ids of one side missing from the other, into out. */
static int list_only(const side_points_t *in, const side_points_t *other,
                     json_t *out) {
  size_t i;
  json_t *id;
  json_array_foreach(in->order, i, id) {
    if (!json_object_get(other->by_id, json_string_value(id)) &&
        json_array_append(out, id))
      return CAL_ENOMEM;
  }
  return 0;
}

/* The ok points of a side's entry into ok[] (room for nruns); how many.
 * *first gets the first point of any status. */
static size_t ok_points(const json_t *e, const json_t **ok,
                        const json_t **first) {
  size_t n = 0, i;
  json_t *pt;
  *first = NULL;
  json_array_foreach(json_object_get(e, "points"), i, pt) {
    if (json_is_null(pt))
      continue;
    if (!*first)
      *first = pt;
    if (strcmp(cal_json_str(pt, "status"), "ok") == 0)
      ok[n++] = pt;
  }
  return n;
}

/* A metric differing between the ok points of both sides; NULL when all
 * agree. */
static const char *other_metric(const json_t *const *pts, size_t n,
                                const char *metric) {
  for (size_t i = 0; i < n; i++) {
    const char *m = cal_json_str(pts[i], "metric");
    if (strcmp(m, metric))
      return m;
  }
  return NULL;
}

/* One id of the new side: only in new, not comparable, or judged. */
static int compare_point(const side_points_t *sb, const side_points_t *sn,
                         const char *id, const cal_compare_opts_t *o,
                         compare_acc_t *a) {
  json_t *en = json_object_get(sn->by_id, id);
  json_t *eb = json_object_get(sb->by_id, id);
  const char *section = cal_json_str(en, "section");
  const json_t **okb = NULL, **okn = NULL, *fb, *fn;
  double *vb = NULL, *vn = NULL;
  json_t *entry = NULL;
  int rc = CAL_ENOMEM;
  if (!eb)
    return json_array_append_new(a->only_n, json_string(id)) ? CAL_ENOMEM : 0;
  okb = malloc((sb->nruns + 1) * sizeof *okb);
  okn = malloc((sn->nruns + 1) * sizeof *okn);
  vb = malloc((sb->nruns + 1) * sizeof *vb);
  vn = malloc((sn->nruns + 1) * sizeof *vn);
  if (!okb || !okn || !vb || !vn)
    goto out;
  size_t nb = ok_points(eb, okb, &fb), nn = ok_points(en, okn, &fn);
  if (!nb || !nn) {
    rc = add_not_compared(a->skipped, id, "status",
                          nb ? "ok" : cal_json_str(fb, "status"),
                          nn ? "ok" : cal_json_str(fn, "status"))
             ? CAL_ENOMEM
             : 0;
    goto out;
  }
  const char *metric = cal_json_str(okb[0], "metric"), *m2;
  if ((m2 = other_metric(okb, nb, metric)) ||
      (m2 = other_metric(okn, nn, metric))) {
    rc = add_not_compared(a->skipped, id, "metric", metric, m2) ? CAL_ENOMEM : 0;
    goto out;
  }
  if (nb == 1 && nn == 1) {
    entry = judge_samples(id, section, okb[0], okn[0], metric, o, &rc);
  } else {
    for (size_t i = 0; i < nb; i++)
      vb[i] = run_value(okb[i], metric);
    for (size_t i = 0; i < nn; i++)
      vn[i] = run_value(okn[i], metric);
    entry = judge_runs(id, section, vb, nb, vn, nn,
                       cal_point_higher_is_better(okb[0], metric), metric, o,
                       &rc);
    if (rc == CAL_EINVAL) { /* a run without a usable figure */
      rc = json_array_append_new(
               a->skipped, json_pack("{s:s, s:s}", "id", id, "reason",
                                     "a run has no finite figure"))
               ? CAL_ENOMEM
               : 0;
      goto out;
    }
  }
  if (entry)
    rc = json_array_append_new(a->entries, entry) ? CAL_ENOMEM : 0;
out:
  free(okb);
  free(okn);
  free(vb);
  free(vn);
  return rc;
}

/* The verdicts, once every point's p is known: Benjamini-Hochberg over
 * the points, then the rules of verdict.h; with one run per side a change
 * inside the run-to-run allowance is inconclusive. */
/* The machine's own speed between two single runs: the ratio of the
 * register-resident fp32 FMA loop at one pinned thread ("peak/fma_f32/
 * <isa>/t1"), which no BLAS, kernel or memory change touches; NAN when
 * the runs lack it.  When the host is oversubscribed every point of a run
 * slows together, and this is where it shows. */
static double machine_speed(const json_t *entries) {
  size_t i;
  json_t *e;
  json_array_foreach(entries, i, e) {
    const char *id = cal_json_str(e, "id");
    size_t len = strlen(id);
    if (strncmp(id, "peak/fma_f32/", 13) == 0 && len > 3 &&
        strcmp(id + len - 3, "/t1") == 0 &&
        json_integer_value(json_object_get(e, "runs_base")) == 1 &&
        json_integer_value(json_object_get(e, "runs_new")) == 1)
      return cal_json_num(e, "_ratio", NAN);
  }
  return NAN;
}

static int decide_all(const cal_compare_opts_t *o, compare_acc_t *a) {
  size_t n = json_array_size(a->entries), i;
  double *p = malloc((n ? n : 1) * sizeof *p);
  json_t *e;
  if (!p)
    return CAL_ENOMEM;
  a->speed = machine_speed(a->entries);
  /* one run a side on a machine whose own speed moved past the threshold:
   * no point of the two runs can be compared with the other */
  int moved = isfinite(a->speed) && a->speed > 0 &&
              fabs(log(a->speed)) > log1p(o->threshold);
  json_array_foreach(a->entries, i, e) p[i] = cal_json_num(e, "p", NAN);
  if (cal_bh_adjust(p, n, p) < 0 ||
      !(a->need = malloc((n ? n : 1) * sizeof *a->need))) {
    free(p);
    return CAL_ENOMEM;
  }
  json_array_foreach(a->entries, i, e) {
    int hib = json_is_true(json_object_get(e, "higher_is_better"));
    int single = json_integer_value(json_object_get(e, "runs_base")) == 1 &&
                 json_integer_value(json_object_get(e, "runs_new")) == 1;
    double allow = single && o->run_allowance > o->threshold ? o->run_allowance
                                                             : o->threshold;
    double q = isnan(p[i]) ? 1.0 : p[i];
    cal_verdict_in_t in = {hib,
                           cal_json_num(e, "_ratio", NAN),
                           cal_json_num(e, "ci_low", NAN),
                           cal_json_num(e, "ci_high", NAN),
                           q,
                           cal_json_num(e, "p_min", 0.0),
                           allow,
                           o->alpha};
    const char *reason = NULL;
    cal_verdict_t v = cal_verdict_decide(&in, &reason);
    int undecidable = in.p_min > o->alpha && !(q < o->alpha);
    size_t need = 0;
    if (single && !undecidable && moved) {
      v = CAL_VERDICT_INCONCLUSIVE;
      reason = "one run per side, and the machine's own speed changed between "
               "them (fp32 FMA loop)";
    } else if (single && !undecidable && json_object_get(e, "_unstable")) {
      /* one run a side, and a run saw this point disturbed: its samples
       * say nothing about the other run's conditions */
      v = CAL_VERDICT_INCONCLUSIVE;
      reason = "one run per side, unstable in a run (the machine was busy)";
    } else if (single && !undecidable &&
               (v == CAL_VERDICT_UNCHANGED || v == CAL_VERDICT_INCONCLUSIVE)) {
      v = CAL_VERDICT_INCONCLUSIVE;
      reason = "one run per side: within the run-to-run allowance";
      need = cal_runs_needed(in.ratio, o->run_allowance, o->threshold, o->alpha,
                             o->ci_level);
      a->single++;
      if (need)
        a->need[a->nneed++] = need;
    } else if (single && (v == CAL_VERDICT_REGRESSED || v == CAL_VERDICT_IMPROVED)) {
      reason = v == CAL_VERDICT_REGRESSED
                   ? "significant and worse than the run-to-run allowance"
                   : "significant and better than the run-to-run allowance";
    }
    a->undecidable += undecidable;
    a->counts[v]++;
    if (json_object_set_new(e, "p_adjusted", num(q)) ||
        json_object_set_new(e, "verdict", json_string(cal_verdict_name(v))) ||
        json_object_set_new(e, "reason", json_string(reason)) ||
        json_object_set_new(e, "undecidable", json_boolean(undecidable)) ||
        json_object_set_new(e, "runs_needed",
                            need ? json_integer((json_int_t)need) : json_null()) ||
        json_object_set_new(e, "_rank", json_integer((json_int_t)v))) {
      free(p);
      return CAL_ENOMEM;
    }
  }
  free(p);
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* Median of a top-level figure over the runs of a side; NAN when none. */
static double side_figure(const cal_compare_side_t *s, const char *key) {
  double v[64];
  size_t k = 0;
  for (size_t i = 0; i < s->n && k < 64; i++) {
    double x = cal_json_num(s->runs[i], key, NAN);
    if (isfinite(x))
      v[k++] = x;
  }
  if (!k)
    return NAN;
  qsort(v, k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* The top-level figures both sides hold: their ratio only (medians over
 * the runs of a side). */
static int compare_top_level(const cal_compare_side_t *b,
                             const cal_compare_side_t *n, json_t *tops) {
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++) {
    double x = side_figure(b, cal_top_figures[i].key);
    double y = side_figure(n, cal_top_figures[i].key);
    if (!isfinite(x) || !isfinite(y))
      continue;
    if (json_array_append_new(
            tops, json_pack("{s:s, s:f, s:f, s:o, s:b, s:s}", "key",
                            cal_top_figures[i].key, "base", x, "new", y,
                            "ratio", num(x != 0 ? y / x : NAN),
                            "higher_is_better",
                            cal_top_figures[i].higher_is_better, "verdict",
                            cal_verdict_name(CAL_VERDICT_INFO))))
      return CAL_ENOMEM;
  }
  return 0;
}

/* Median over the points of a per-point run spread; NAN when none. */
static double median_spread(const json_t *entries, const char *key) {
  size_t n = json_array_size(entries), k = 0, i;
  double *v = malloc((n ? n : 1) * sizeof *v), m = NAN;
  json_t *e;
  if (!v)
    return NAN;
  json_array_foreach(entries, i, e) {
    double x = cal_json_num(e, key, NAN);
    if (isfinite(x))
      v[k++] = x;
  }
  if (k) {
    qsort(v, k, sizeof *v, cmp_double);
    m = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
  }
  free(v);
  return m;
}

/* The report tree from what was gathered; NULL when out of memory. */
static json_t *pack_report(const cal_compare_side_t *b,
                           const cal_compare_side_t *n,
                           const cal_compare_opts_t *o, compare_acc_t *a) {
  size_t used = 0, i, k = 0, np = json_array_size(a->entries);
  double *oriented = malloc((np ? np : 1) * sizeof *oriented);
  json_t *e;
  if (!oriented)
    return NULL;
  json_array_foreach(a->entries, i, e) {
    double r = cal_json_num(e, "_ratio", NAN);
    oriented[k++] = cal_ratio_oriented(r, json_is_true(json_object_get(e, "higher_is_better")));
  }
  double gm = cal_geomean(oriented, k, &used);
  free(oriented);
  double sb = median_spread(a->entries, "base_run_spread");
  double sn = median_spread(a->entries, "new_run_spread");
  json_t *points = sorted_points(a->entries);
  json_t *diffs = sides_machine_diff(b, n);
  if (!points || !diffs) {
    json_decref(points);
    json_decref(diffs);
    return NULL;
  }
  json_t *rep = json_pack(
      "{s:s, s:s?, s:s?, s:f, s:f, s:f, s:f, s:s, s:s?, s:o, s:b, s:o, s:O,"
      " s:O, s:O, s:O}",
      "schema", CAL_COMPARE_SCHEMA, "base", b->label, "new", n->label,
      "threshold", o->threshold, "alpha", o->alpha, "ci_level", o->ci_level,
      "run_allowance", o->run_allowance, "multiple_testing",
      "benjamini-hochberg", "filter", o->filter, "machine_differences", diffs,
      "allow_different_machines", 0, "points", points, "top_level", a->tops,
      "only_in_base", a->only_b, "only_in_new", a->only_n, "not_compared",
      a->skipped);
  json_t *runs_b = json_array(), *runs_n = json_array();
  for (size_t r = 0; runs_b && r < b->n; r++)
    json_array_append_new(runs_b, json_string(b->names && b->names[r] ? b->names[r] : "?"));
  for (size_t r = 0; runs_n && r < n->n; r++)
    json_array_append_new(runs_n, json_string(n->names && n->names[r] ? n->names[r] : "?"));
  json_t *sum = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b, s:I, s:I, s:o,"
      " s:o}",
      "compared", (json_int_t)np, "regressed",
      (json_int_t)a->counts[CAL_VERDICT_REGRESSED], "improved",
      (json_int_t)a->counts[CAL_VERDICT_IMPROVED], "inconclusive",
      (json_int_t)a->counts[CAL_VERDICT_INCONCLUSIVE], "unchanged",
      (json_int_t)a->counts[CAL_VERDICT_UNCHANGED], "undecidable",
      (json_int_t)a->undecidable, "within_run_allowance",
      (json_int_t)a->single, "geomean", num(gm), "geomean_points",
      (json_int_t)used, "regression", a->counts[CAL_VERDICT_REGRESSED] > 0,
      "runs_base", (json_int_t)b->n, "runs_new", (json_int_t)n->n,
      "base_run_spread", num(sb), "new_run_spread", num(sn));
  if (sum)
    json_object_set_new(sum, "machine_speed_ratio", num(a->speed));
  if (sum && a->nneed) {
    qsort(a->need, a->nneed, sizeof *a->need, cmp_size);
    json_object_set_new(sum, "runs_needed_median",
                        json_integer((json_int_t)a->need[a->nneed / 2]));
    json_object_set_new(sum, "runs_needed_most",
                        json_integer((json_int_t)a->need[a->nneed - 1 - a->nneed / 20]));
  }
  if (!rep || !sum || !runs_b || !runs_n ||
      json_object_set_new(rep, "summary", sum) ||
      json_object_set_new(rep, "base_runs", runs_b) ||
      json_object_set_new(rep, "new_runs", runs_n)) {
    json_decref(rep);
    return NULL;
  }
  return rep;
}

int cal_compare_sides(const cal_compare_side_t *base,
                      const cal_compare_side_t *newp,
                      const cal_compare_opts_t *o, json_t **report, char *err,
                      size_t errlen) {
  side_points_t sb = {0}, sn = {0};
  compare_acc_t a = {json_array(), json_array(), json_array(), json_array(),
                     json_array(), {0}, 0, 0, NULL, 0, NAN};
  json_t *rep = NULL;
  int rc = CAL_ENOMEM;
  if (!base->n || !newp->n) {
    snprintf(err, errlen, "a side has no profile");
    return CAL_EINVAL;
  }
  if (!a.entries || !a.only_b || !a.only_n || !a.skipped || !a.tops)
    goto out;
  if ((rc = side_points_load(base, o->filter, &sb, err, errlen)) < 0 ||
      (rc = side_points_load(newp, o->filter, &sn, err, errlen)) < 0)
    goto out;
  rc = CAL_ENOMEM;
  if (list_only(&sb, &sn, a.only_b) < 0)
    goto out;
  size_t i;
  json_t *id;
  json_array_foreach(sn.order, i, id) {
    if ((rc = compare_point(&sb, &sn, json_string_value(id), o, &a)) < 0)
      goto out;
  }
  rc = CAL_ENOMEM;
  if (decide_all(o, &a) < 0 || compare_top_level(base, newp, a.tops) < 0)
    goto out;
  rep = pack_report(base, newp, o, &a);
  rc = rep ? 0 : CAL_ENOMEM;
out:
  if (rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory comparing profiles");
  side_points_clear(&sb);
  side_points_clear(&sn);
  compare_acc_clear(&a);
  if (rc == 0)
    *report = rep;
  return rc;
}

int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *o, json_t **report,
                         char *err, size_t errlen) {
  const json_t *b[1] = {base}, *n[1] = {newp};
  const char *bn[1] = {o->base_name}, *nn[1] = {o->new_name};
  cal_compare_side_t sb = {b, bn, 1, o->base_name ? o->base_name : "base"};
  cal_compare_side_t sn = {n, nn, 1, o->new_name ? o->new_name : "new"};
  return cal_compare_sides(&sb, &sn, o, report, err, errlen);
}

int cal_compare_keep_changed(json_t *report) {
  json_t *pts = json_object_get(report, "points"), *kept = json_array();
  size_t i;
  json_t *e;
  if (!kept)
    return CAL_ENOMEM;
  json_array_foreach(pts, i, e) {
    const char *v = cal_json_str(e, "verdict");
    if ((!strcmp(v, "regressed") || !strcmp(v, "improved")) &&
        json_array_append(kept, e)) {
      json_decref(kept);
      return CAL_ENOMEM;
    }
  }
  return json_object_set_new(report, "points", kept) ? CAL_ENOMEM : 0;
}
