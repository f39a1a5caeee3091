/* Comparison statistics: two sides of one or more profiles, point by
 * point, into the typed result of compare.h. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "compare_internal.h"
#include "mwu.h"
#include "profile.h"
#include "stats.h"
#include "verdict.h"
#include "view.h"

cal_compare_opts_t cal_compare_defaults(void) {
  return (cal_compare_opts_t){0.05, 0.01, 0.95, CAL_COMPARE_RUN_ALLOWANCE,
                              NULL, NULL, NULL};
}

/* v as the report states it: NAN when it cannot (not finite). */
static double fin(double v) { return isfinite(v) ? v : NAN; }

/* The ratio as judged: +-inf as 1e308, a number the verdict, the
 * geometric mean and the machine's speed can use. */
static double judged(double r) { return isinf(r) ? 1e308 : r; }

/* A string of a view, "" when absent. */
static const char *str(const char *s) { return s ? s : ""; }

/* One run's value of a point: the median of its samples, else its
 * figure; NAN when it has neither. */
static double run_value(const cal_vpoint_t *pt) {
  double v = pt->samples.n ? cal_median(pt->samples.v, pt->samples.n) : NAN;
  return isfinite(v) ? v : pt->value.v;
}

/* --------------------------------------------------------------- judge */

/* One run per side: Mann-Whitney U on the samples, Moses interval of the
 * ratio of medians, into e (verdict decided later). */
static int judge_samples(const cal_vpoint_t *bp, const cal_vpoint_t *np,
                         const char *metric, const cal_compare_opts_t *o,
                         cal_compare_point_t *e) {
  size_t nb = bp->samples.n, nn = np->samples.n;
  const double *xb = bp->samples.v, *xn = np->samples.v;
  cal_mwu_t t;
  cal_ratio_ci_t ci;
  int rc;
  if (!nb || !nn) /* no samples to test (the sides' checks ask for them) */
    return CAL_ENOMEM;
  if ((rc = cal_mwu_test(xb, nb, xn, nn, &t)) < 0 ||
      (rc = cal_ratio_ci(xb, nb, xn, nn, o->ci_level, &ci)) < 0)
    return rc;
  double mb = cal_median(xb, nb), mn = cal_median(xn, nn);
  if (!isfinite(ci.ratio) && mb == 0 && mn > 0)
    ci.ratio = INFINITY; /* from nothing to something */
  int hib = bp->higher_better;
  /* a point its run marked unstable (CV past the run's threshold: the
   * machine was busy or its clock moved) */
  int unstable = bp->stats.unstable == 1 || np->stats.unstable == 1;
  /* or one whose threads did not run side by side (cal_parallel_judge) */
  if (bp->threads_not_parallel || np->threads_not_parallel)
    unstable = CAL_UNSTABLE_THREADS;
  *e = (cal_compare_point_t){
      .metric = metric, .higher_is_better = hib, .n_base = nb, .n_new = nn,
      .runs_base = 1, .runs_new = 1, .base_median = fin(mb),
      .new_median = fin(mn), .base_geomean = NAN, .new_geomean = NAN,
      .ratio = fin(ci.ratio), .ratio_judged = judged(ci.ratio),
      .ci_low = fin(ci.lo), .ci_high = fin(ci.hi), .ci_level = fin(ci.level),
      .hl_ratio = fin(ci.hl),
      .oriented_ratio = fin(cal_ratio_oriented(ci.ratio, hib)), .u = t.u,
      .z = fin(t.z), .df = NAN, .p = t.p, .p_min = t.p_min,
      .method = cal_mwu_method_name(t.method), .base_run_spread = NAN,
      .new_run_spread = NAN, .unstable = unstable};
  /* the report states u, p and p_min as numbers: a test that gives none
   * fails the comparison */
  return isfinite(t.u) && isfinite(t.p) && isfinite(t.p_min) ? 0 : CAL_ENOMEM;
}

/* Several runs on a side: one value per run (its median), Welch's t on
 * their logs (cal_runs_test), into e (verdict decided later). */
static int judge_runs(const double *vb, size_t nb, const double *vn,
                      size_t nn, int hib, const char *metric,
                      const cal_compare_opts_t *o, cal_compare_point_t *e) {
  cal_runs_test_t t;
  int rc = cal_runs_test(vb, nb, vn, nn, o->ci_level, &t);
  if (rc < 0)
    return rc;
  *e = (cal_compare_point_t){
      .metric = metric, .higher_is_better = hib, .by_runs = 1, .n_base = nb,
      .n_new = nn, .runs_base = nb, .runs_new = nn,
      .base_median = fin(cal_median(vb, nb)),
      .new_median = fin(cal_median(vn, nn)), .base_geomean = NAN,
      .new_geomean = NAN, .ratio = fin(t.ratio),
      .ratio_judged = judged(t.ratio), .ci_low = fin(t.lo),
      .ci_high = fin(t.hi), .ci_level = o->ci_level, .hl_ratio = NAN,
      .oriented_ratio = fin(cal_ratio_oriented(t.ratio, hib)), .u = NAN,
      .z = NAN, .df = fin(t.df), .p = fin(t.p), .p_min = 0.0,
      .method = t.log_scale ? "welch-log-runs" : "welch-runs",
      .base_run_spread = fin(t.sd_base), .new_run_spread = fin(t.sd_new)};
  /* the figures the ratio is of: geometric means of the runs */
  if (t.log_scale) {
    e->has_geomean = 1;
    e->base_geomean = fin(cal_geomean(vb, nb, NULL));
    e->new_geomean = fin(cal_geomean(vn, nn, NULL));
  }
  return 0;
}

/* Record a point found on both sides but not compared. */
static void add_skip(cal_comparison_t *c, const char *id, const char *why) {
  cal_compare_skip_t *s = &c->skipped[c->nskipped++];
  s->id = id;
  snprintf(s->reason, sizeof s->reason, "%s", why);
}

/* "<what> A in base, B in new" */
static void add_not_compared(cal_comparison_t *c, const char *id,
                             const char *what, const char *a, const char *b) {
  char why[160];
  snprintf(why, sizeof why, "%s %s in base, %s in new", what, a, b);
  add_skip(c, id, why);
}

/* Ids of one side missing from the other, into ids[*n]. */
static void list_only(const cal_side_points_t *in,
                      const cal_side_points_t *other, const char **ids,
                      size_t *n) {
  for (size_t k = 0; k < in->nids; k++)
    if (cal_side_points_find(other, in->ids[k]) < 0)
      ids[(*n)++] = in->ids[k];
}

/* The ok points of id k on a side into ok[] (room for nruns); how many.
 * *first gets the first point of any status. */
static size_t ok_points(const cal_side_points_t *s, size_t k,
                        const cal_vpoint_t **ok, const cal_vpoint_t **first) {
  size_t n = 0;
  *first = NULL;
  for (size_t r = 0; r < s->nruns; r++) {
    const cal_vpoint_t *pt = s->at[k * s->nruns + r];
    if (!pt)
      continue;
    if (!*first)
      *first = pt;
    if (strcmp(str(pt->status), "ok") == 0)
      ok[n++] = pt;
  }
  return n;
}

/* A metric differing between the ok points of both sides; NULL when all
 * agree. */
static const char *other_metric(const cal_vpoint_t *const *pts, size_t n,
                                const char *metric) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(str(pts[i]->metric), metric))
      return str(pts[i]->metric);
  return NULL;
}

/* The point an alias names (role_of) in every run of both sides, when
 * they all name the same one and both sides hold it: that point is judged
 * under its own id, and the alias would count the same event twice.  NULL
 * when id is no alias or its target moved (then the alias is the only
 * series that matches across the sides, and it is judged). */
static const char *alias_target(const cal_side_points_t *sb, size_t kb,
                                const cal_side_points_t *sn, size_t kn) {
  const char *target = NULL;
  for (int side = 0; side < 2; side++) {
    const cal_side_points_t *s = side ? sn : sb;
    size_t k = side ? kn : kb;
    for (size_t r = 0; r < s->nruns; r++) {
      const cal_vpoint_t *pt = s->at[k * s->nruns + r];
      if (!pt)
        continue;
      if (!pt->role_of || (target && strcmp(target, pt->role_of)))
        return NULL;
      target = pt->role_of;
    }
  }
  return target && cal_side_points_find(sb, target) >= 0 &&
                 cal_side_points_find(sn, target) >= 0
             ? target
             : NULL;
}

/* One id of the new side: only in new, not comparable, an alias of a
 * point judged under its own id, or judged into the next point of c. */
static int compare_point(const cal_side_points_t *sb,
                         const cal_side_points_t *sn, size_t kn,
                         const cal_compare_opts_t *o, cal_comparison_t *c) {
  const char *id = sn->ids[kn];
  long kb = cal_side_points_find(sb, id);
  const cal_vpoint_t **okb = NULL, **okn = NULL, *fb, *fn;
  double *vb = NULL, *vn = NULL;
  cal_compare_point_t *e = &c->points[c->npoints];
  int rc = CAL_ENOMEM;
  if (kb < 0) {
    c->only_new[c->nonly_new++] = id;
    return 0;
  }
  const char *target = alias_target(sb, (size_t)kb, sn, kn);
  if (target) {
    char why[160];
    snprintf(why, sizeof why, "alias of %s, judged there", target);
    add_skip(c, id, why);
    return 0;
  }
  okb = malloc((sb->nruns + 1) * sizeof *okb);
  okn = malloc((sn->nruns + 1) * sizeof *okn);
  vb = malloc((sb->nruns + 1) * sizeof *vb);
  vn = malloc((sn->nruns + 1) * sizeof *vn);
  if (!okb || !okn || !vb || !vn)
    goto out;
  rc = 0;
  size_t nb = ok_points(sb, (size_t)kb, okb, &fb);
  size_t nn = ok_points(sn, kn, okn, &fn);
  if (!nb || !nn) {
    add_not_compared(c, id, "status", nb ? "ok" : str(fb->status),
                     nn ? "ok" : str(fn->status));
    goto out;
  }
  const char *metric = str(okb[0]->metric), *m2;
  if ((m2 = other_metric(okb, nb, metric)) ||
      (m2 = other_metric(okn, nn, metric))) {
    add_not_compared(c, id, "metric", metric, m2);
    goto out;
  }
  if (nb == 1 && nn == 1) {
    rc = judge_samples(okb[0], okn[0], metric, o, e);
  } else {
    for (size_t i = 0; i < nb; i++)
      vb[i] = run_value(okb[i]);
    for (size_t i = 0; i < nn; i++)
      vn[i] = run_value(okn[i]);
    rc = judge_runs(vb, nb, vn, nn, okb[0]->higher_better, metric, o, e);
    if (rc == CAL_EINVAL) { /* a run without a usable figure */
      add_skip(c, id, "a run has no finite figure");
      rc = 0;
      goto out;
    }
  }
  if (rc == 0) {
    e->id = id;
    e->section = fn->section;
    c->npoints++;
  }
out:
  free(okb);
  free(okn);
  free(vb);
  free(vn);
  return rc;
}

/* --------------------------------------------------------------- decide */

/* The machine's own speed between two single runs: the ratio of the
 * register-resident fp32 FMA loop at one pinned thread ("peak/fma_f32/
 * <isa>/t1"), which no BLAS, kernel or memory change touches; NAN when
 * the runs lack it.  When the host is oversubscribed every point of a run
 * slows together, and this is where it shows. */
static double machine_speed(const cal_comparison_t *c) {
  for (size_t i = 0; i < c->npoints; i++) {
    const cal_compare_point_t *e = &c->points[i];
    size_t len = strlen(e->id);
    if (strncmp(e->id, "peak/fma_f32/", 13) == 0 && len > 3 &&
        strcmp(e->id + len - 3, "/t1") == 0 && e->runs_base == 1 &&
        e->runs_new == 1)
      return e->ratio_judged;
  }
  return NAN;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* The verdicts, once every point's p is known: Benjamini-Hochberg over
 * the points, then the rules of verdict.h (cal_verdict_point). */
static int decide_all(const cal_compare_opts_t *o, cal_comparison_t *c) {
  size_t n = c->npoints, nneed = 0;
  double *p = malloc((n ? n : 1) * sizeof *p);
  size_t *need = malloc((n ? n : 1) * sizeof *need);
  cal_compare_summary_t *s = &c->summary;
  if (!p || !need) {
    free(p);
    free(need);
    return CAL_ENOMEM;
  }
  s->machine_speed_ratio = machine_speed(c);
  int moved = cal_machine_moved(s->machine_speed_ratio, o->threshold);
  for (size_t i = 0; i < n; i++)
    p[i] = c->points[i].p;
  int rc = cal_bh_adjust(p, n, p);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    cal_compare_point_t *e = &c->points[i];
    int single = e->runs_base == 1 && e->runs_new == 1;
    cal_point_judge_in_t in = {
        e->higher_is_better, single, e->unstable, moved, e->ratio_judged,
        e->ci_low, e->ci_high, p[i], e->p_min, o->threshold, o->alpha,
        o->run_allowance, o->ci_level};
    cal_point_judge_t j;
    cal_verdict_point(&in, &j);
    e->p_adjusted = j.p;
    e->verdict = j.verdict;
    e->reason = j.reason;
    e->undecidable = j.undecidable;
    e->runs_needed = j.runs_needed;
    s->within_run_allowance += (size_t)j.within_allowance;
    if (j.runs_needed)
      need[nneed++] = j.runs_needed;
    s->undecidable += (size_t)j.undecidable;
    s->counts[j.verdict]++;
  }
  if (nneed) {
    qsort(need, nneed, sizeof *need, cmp_size);
    s->runs_needed_median = need[nneed / 2];
    s->runs_needed_most = need[nneed - 1 - nneed / 20];
  }
  free(p);
  free(need);
  return rc;
}

/* ------------------------------------------------------------- summary */

/* Median over the points of a per-point run spread (base = 1: the base
 * side's); NAN when none. */
static double median_spread(const cal_comparison_t *c, int base) {
  double *v = malloc((c->npoints ? c->npoints : 1) * sizeof *v);
  size_t k = 0;
  if (!v)
    return NAN;
  for (size_t i = 0; i < c->npoints; i++) {
    double x = base ? c->points[i].base_run_spread
                    : c->points[i].new_run_spread;
    if (isfinite(x))
      v[k++] = x;
  }
  double m = cal_compare_median(v, k);
  free(v);
  return m;
}

/* The summary's figures over the points (in document order), and the
 * points sorted by verdict, document order within each.  CAL_ENOMEM. */
static int summarize(cal_comparison_t *c) {
  size_t n = c->npoints, used = 0, k = 0;
  cal_compare_summary_t *s = &c->summary;
  double *oriented = malloc((n ? n : 1) * sizeof *oriented);
  cal_compare_point_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (!oriented || !sorted) {
    free(oriented);
    free(sorted);
    return CAL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    oriented[i] = cal_ratio_oriented(c->points[i].ratio_judged,
                                     c->points[i].higher_is_better);
  s->geomean = fin(cal_geomean(oriented, n, &used));
  s->geomean_points = used;
  free(oriented);
  s->compared = n;
  s->regression = s->counts[CAL_VERDICT_REGRESSED] > 0;
  s->base_run_spread = median_spread(c, 1);
  s->new_run_spread = median_spread(c, 0);
  s->machine_speed_ratio = fin(s->machine_speed_ratio);
  for (int v = CAL_VERDICT_REGRESSED; v <= CAL_VERDICT_INFO; v++)
    for (size_t i = 0; i < n; i++)
      if ((int)c->points[i].verdict == v)
        sorted[k++] = c->points[i];
  free(c->points);
  c->points = sorted;
  return 0;
}

/* ----------------------------------------------------------------- api */

/* A side's tool.git: its runs' one commit, "several", or NULL. */
static const char *git_of(const cal_compare_side_t *s) {
  const char *g = NULL;
  for (size_t r = 0; r < s->n; r++) {
    const char *v = json_string_value(
        json_object_get(json_object_get(s->runs[r], "tool"), "git"));
    if (v && g && strcmp(v, g) != 0)
      return "several";
    g = v ? v : g;
  }
  return g;
}

/* The result's arrays, sized for what the sides hold; its labels and
 * run names.  CAL_ENOMEM. */
static int result_init(const cal_compare_side_t *b,
                       const cal_compare_side_t *n, const cal_side_points_t *sb,
                       const cal_side_points_t *sn, const cal_compare_opts_t *o,
                       cal_comparison_t *c) {
  size_t nn = sn->nids + 1;
  c->opts = *o;
  c->base_label = b->label;
  c->new_label = n->label;
  c->base_git = git_of(b);
  c->new_git = git_of(n);
  c->summary.runs_base = b->n;
  c->summary.runs_new = n->n;
  c->points = calloc(nn, sizeof *c->points);
  c->skipped = calloc(nn, sizeof *c->skipped);
  c->only_new = calloc(nn, sizeof *c->only_new);
  c->only_base = calloc(sb->nids + 1, sizeof *c->only_base);
  c->base_runs = calloc(b->n, sizeof *c->base_runs);
  c->new_runs = calloc(n->n, sizeof *c->new_runs);
  if (!c->points || !c->skipped || !c->only_new || !c->only_base ||
      !c->base_runs || !c->new_runs)
    return CAL_ENOMEM;
  for (size_t r = 0; r < b->n; r++)
    c->base_runs[r] = b->names && b->names[r] ? b->names[r] : "?";
  for (size_t r = 0; r < n->n; r++)
    c->new_runs[r] = n->names && n->names[r] ? n->names[r] : "?";
  return 0;
}

int cal_compare_sides(const cal_compare_side_t *base,
                      const cal_compare_side_t *newp,
                      const cal_compare_opts_t *o, cal_comparison_t *c,
                      char *err, size_t errlen) {
  cal_side_points_t sb = {0}, sn = {0};
  int rc;
  *c = (cal_comparison_t){0};
  if (!base->n || !newp->n) {
    snprintf(err, errlen, "a side has no profile");
    return CAL_EINVAL;
  }
  if ((rc = cal_side_points_load(base, o->filter, &sb, err, errlen)) < 0 ||
      (rc = cal_side_points_load(newp, o->filter, &sn, err, errlen)) < 0 ||
      (rc = result_init(base, newp, &sb, &sn, o, c)) < 0)
    goto out;
  list_only(&sb, &sn, c->only_base, &c->nonly_base);
  for (size_t k = 0; k < sn.nids; k++)
    if ((rc = compare_point(&sb, &sn, k, o, c)) < 0)
      goto out;
  if ((rc = decide_all(o, c)) < 0 ||
      (rc = cal_compare_top_level(sb.views, sb.nruns, sn.views, sn.nruns,
                                  c)) < 0 ||
      (rc = summarize(c)) < 0)
    goto out;
  rc = cal_compare_sides_diff(base, newp, c);
out:
  if (rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory comparing profiles");
  cal_side_points_clear(&sb);
  cal_side_points_clear(&sn);
  return rc;
}

/* One profile a side, with its view (NULL: built for the comparison). */
static int compare_pair(const json_t *base, const json_t *newp,
                        const cal_profile_view_t *bview,
                        const cal_profile_view_t *nview,
                        const cal_compare_opts_t *o, cal_comparison_t *c,
                        char *err, size_t errlen) {
  const json_t *b[1] = {base}, *n[1] = {newp};
  const char *bn[1] = {o->base_name}, *nn[1] = {o->new_name};
  const cal_profile_view_t *bv[1] = {bview}, *nv[1] = {nview};
  int views = bview && nview;
  cal_compare_side_t sb = {b, bn, 1, o->base_name ? o->base_name : "base",
                          views ? bv : NULL};
  cal_compare_side_t sn = {n, nn, 1, o->new_name ? o->new_name : "new",
                          views ? nv : NULL};
  return cal_compare_sides(&sb, &sn, o, c, err, errlen);
}

int cal_compare_profiles(const json_t *base, const json_t *newp,
                         const cal_compare_opts_t *o, cal_comparison_t *c,
                         char *err, size_t errlen) {
  return compare_pair(base, newp, NULL, NULL, o, c, err, errlen);
}

int cal_compare_loaded(const cal_profile_t *base, const cal_profile_t *newp,
                       const cal_compare_opts_t *o, cal_comparison_t *c,
                       char *err, size_t errlen) {
  return compare_pair(base->root, newp->root, cal_profile_view(base),
                      cal_profile_view(newp), o, c, err, errlen);
}

void cal_compare_free(cal_comparison_t *c) {
  free(c->base_runs);
  free(c->new_runs);
  free(c->diffs);
  free(c->env_diffs);
  free(c->points);
  free(c->tops);
  free(c->only_base);
  free(c->only_new);
  free(c->skipped);
  *c = (cal_comparison_t){0};
}

void cal_compare_keep_changed(cal_comparison_t *c) {
  size_t k = 0;
  for (size_t i = 0; i < c->npoints; i++)
    if (c->points[i].verdict == CAL_VERDICT_REGRESSED ||
        c->points[i].verdict == CAL_VERDICT_IMPROVED)
      c->points[k++] = c->points[i];
  c->npoints = k;
}
