/* The GEMM section's sweeps: one engine and dtype at one thread count
 * over square sizes (or the fixed sizes of --ci), each kept as a point of
 * the result, the best size confirmed by a later re-measurement. */
#include "gemm_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_vec.h"
#include "timer.h"

/* Square sizes tried in order; a sweep stops when the curve has flattened,
 * at its time budget or at the memory limit, whichever comes first.  It
 * starts at 512: a smaller point costs as much as a 1024 one (the
 * harness's minimum warm-up and sample times) and only shows the
 * overhead-bound start of the curve, while every sweep's budget is needed
 * at the top. */
static const int64_t gemm_sizes[] = {512,  1024, 1536, 2048, 3072,
                                     4096, 6144, 8192, 12288};
#define NSIZES (sizeof gemm_sizes / sizeof gemm_sizes[0])
/* a size shows no meaningful gain when the upper end of its median's CI
 * lies below the best median so far plus this fraction... */
#define GEMM_GAIN 0.02
/* ...and the curve has flattened after this many such sizes (each size
 * whose CI lies wholly above the best's starts the count again)... */
#define GEMM_FLAT_SIZES 2
/* ...but not below this size: small sizes are dominated by overheads and
 * can look flat */
#define GEMM_MIN_PLATEAU_N 1024

/* GEMM sizes of a --ci run: fixed, so two runs measure the same points;
 * one size past the small-matrix overheads keeps the run near 20 s */
static const int64_t ci_sizes[] = {1024};
#define NCI (sizeof ci_sizes / sizeof ci_sizes[0])

/* Seconds a point of one run lasting run_s will take in the harness. */
static double point_cost(const cal_harness_cfg_t *h, double run_s) {
  double per_sample = run_s > h->min_sample_s ? run_s : h->min_sample_s;
  return h->warmup_s + 2 * run_s + (h->samples + 2) * per_sample;
}

/* Append a point slot to the result; NULL when out of memory. */
static cal_gemm_point_t *new_point(cal_gemm_result_t *g) {
  if (cal_grow(&g->points, g->npoints, &g->cap, sizeof *g->points, 32) < 0)
    return NULL;
  cal_gemm_point_t *gp = &g->points[g->npoints++];
  memset(gp, 0, sizeof *gp);
  return gp;
}

/* The id of a square point, "gemm/[<engine>/]<dtype>/NxNxN/t<threads>"
 * plus suffix: OpenBLAS points keep the ids they had before there was a
 * second engine, so that old baselines still match. */
static void size_id(char *id, size_t len, const cal_kernel_t *k, int64_t n,
                    int threads, const char *suffix) {
  int plain = k->engine == CAL_ENGINE_OPENBLAS;
  snprintf(id, len, "gemm/%s%s%s/%lldx%lldx%lld/t%d%s",
           plain ? "" : cal_kernel_engine(k), plain ? "" : "/",
           cal_kdtype_name(k->dtype), (long long)n, (long long)n,
           (long long)n, threads, suffix);
}

/* Take a measured square point into the result under its size id plus
 * suffix. */
static cal_gemm_point_t *keep_point(cal_gemm_result_t *g, cal_point_t *pt,
                                    int64_t n, int threads, const char *suffix) {
  cal_gemm_point_t *gp = new_point(g);
  if (!gp) {
    cal_point_free(pt);
    return NULL;
  }
  size_id(gp->id, sizeof gp->id, pt->kernel, n, threads, suffix);
  gp->n = n;
  gp->threads = threads;
  gp->pt = *pt;
  return gp;
}

/* Measure one square size and keep it; *out is the kept point's index. */
static int measure_size(cal_run_t *r, cal_gemm_result_t *g,
                        const cal_kernel_t *k, int64_t n, int threads,
                        uint64_t seed, const char *suffix, size_t *out) {
  cal_params_t p = {.m = n, .n = n, .k = n, .threads = threads, .seed = seed,
                    .variant = -1};
  cal_point_t pt;
  int rc = cal_run_point(r, NULL, k, &p, &pt);
  if (rc < 0)
    return rc;
  if (!keep_point(g, &pt, n, threads, suffix))
    return CAL_ENOMEM;
  *out = g->npoints - 1;
  return 0;
}

/* The best size so far is judged on its median less a robust spread
 * (1.4826 x the MAD, a standard deviation for normal samples), so that one
 * lucky point with a wide spread does not win, and one slow sample among
 * seven does not lose a size its place either: the CI's lower end, the
 * slowest sample at seven, did that and moved the headline between two
 * sizes 6% apart from run to run.  1 when gp is the new best. */
double cal_gemm_rank(const cal_summary_t *x) {
  return x->median - 1.4826 * x->mad;
}

int cal_gemm_beats(const cal_summary_t *x, const cal_gemm_walk_t *w) {
  return !w->have_best || cal_gemm_rank(x) > w->best_low;
}

static int consider_best(cal_gemm_sweep_t *s, const cal_gemm_point_t *gp,
                         cal_gemm_walk_t *w) {
  const cal_summary_t *sum = &gp->pt.gflops_sum;
  if (!CAL_POINT_HEADLINE(&gp->pt) || !cal_gemm_beats(sum, w))
    return 0;
  w->best_low = cal_gemm_rank(sum);
  s->best_gflops = sum->median;
  s->best_n = gp->n;
  snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
  snprintf(s->impl, sizeof s->impl, "%s", gp->pt.impl);
  return 1;
}

int cal_gemm_trend(const cal_summary_t *best, const cal_summary_t *x) {
  if (x->ci_low > best->ci_high)
    return 1;
  if (x->ci_high < best->median * (1.0 + GEMM_GAIN))
    return -1;
  return 0;
}

/* Whether the next size n and the confirmation of the best size after it
 * still fit: t0 and budget_s are this walk's start and time. */
static int next_fits(const cal_run_t *r, const cal_gemm_walk_t *w, int64_t n,
                     double t0, double budget_s) {
  const cal_harness_cfg_t *h = &r->opt->hcfg;
  double ratio = (double)n / (double)w->last_n;
  double est = point_cost(h, w->last_s * ratio * ratio * ratio);
  /* the confirmation repeats this size if it wins, else the best one */
  double confirm = fmax(est, point_cost(h, w->best_s));
  return cal_now() - t0 + est + confirm <= budget_s;
}

/* Why a size was not measured: the memory check, or its setup refused. */
static const char *skip_reason(const cal_point_t *pt) {
  return pt->err == CAL_ETOOBIG || pt->err == CAL_ENOMEM ? "memory limit"
                                                         : "size not supported";
}

/* Take the measured size `at` into the walk: the trend against the best
 * so far, the best, the plateau.  1 when the sweep has flattened. */
static int step(cal_gemm_result_t *g, cal_gemm_sweep_t *s, cal_gemm_walk_t *w,
                size_t at) {
  const cal_point_t *pt = &g->points[at].pt;
  w->last_s = pt->m.time.median;
  w->last_n = g->points[at].n;
  if (w->have_best) {
    w->last_trend = cal_gemm_trend(&g->points[w->best].pt.gflops_sum, &pt->gflops_sum);
    w->flat = w->last_trend < 0 ? w->flat + 1 : w->last_trend > 0 ? 0 : w->flat;
  }
  if (consider_best(s, &g->points[at], w)) {
    w->best = at;
    w->best_s = w->last_s;
    w->have_best = 1;
  }
  return w->flat >= GEMM_FLAT_SIZES && w->last_n >= GEMM_MIN_PLATEAU_N;
}

/* Measure sizes from w->next on while they fit; sets s->stop. */
static int sweep(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s,
                 cal_gemm_walk_t *w, double budget_s) {
  const cal_kernel_t *k = s->kernel;
  double t0 = cal_now();
  w->more = 0;
  s->stop = "largest size reached";
  for (; w->next < NSIZES; w->next++) {
    int64_t n = gemm_sizes[w->next];
    if (w->last_n && !next_fits(r, w, n, t0, budget_s)) {
      /* "still rising" only on evidence: the last size's CI lay above
       * the best one's */
      s->stop = w->last_trend > 0 ? "time budget, still rising" : "time budget";
      w->more = 1;
      return 0;
    }
    cal_progress(r, "gemm %s %s %lld^3, %d thread%s", cal_kdtype_name(k->dtype),
                 cal_kernel_engine(k), (long long)n, s->threads,
                 s->threads > 1 ? "s" : "");
    size_t at;
    int rc = measure_size(r, g, k, n, s->threads, r->opt->seed + (uint64_t)n,
                          "", &at);
    if (rc < 0)
      return rc;
    const cal_point_t *pt = &g->points[at].pt;
    if (pt->status == CAL_POINT_SKIPPED) {
      s->stop = skip_reason(pt);
      return 0;
    }
    if (pt->status == CAL_POINT_FAILED) {
      s->failed = 1;
      s->stop = "verification failed";
      return 0;
    }
    if (pt->status == CAL_POINT_CONTAMINATED) {
      /* no evidence about the curve, but its time still says what the
       * next size costs */
      w->last_s = pt->m.time.median;
      w->last_n = n;
      continue;
    }
    if (step(g, s, w, at)) {
      s->stop = "plateau";
      return 0;
    }
  }
  return 0;
}

/* A confirmation's id is its role, "gemm/<dtype>/<engine>/confirm/t<threads>"
 * (its size is the point's n), so that it does not move with the size the
 * time budget let the sweep reach; a sweep confirmed again later (its
 * best moved when it went on) hands the role to the newer confirmation,
 * and the older one keeps its size id with "/confirm". */
static void name_confirmation(cal_gemm_result_t *g, cal_gemm_point_t *gp,
                              const cal_kernel_t *k, int threads) {
  char role[sizeof gp->id];
  snprintf(role, sizeof role, "gemm/%s/%s/confirm/t%d",
           cal_kdtype_name(k->dtype), cal_kernel_engine(k), threads);
  for (size_t i = 0; i < g->npoints; i++)
    if (&g->points[i] != gp && strcmp(g->points[i].id, role) == 0)
      size_id(g->points[i].id, sizeof g->points[i].id, k, g->points[i].n,
              threads, "/confirm");
  snprintf(gp->id, sizeof gp->id, "%s", role);
}

/* The best size of a sweep is picked among several noisy measurements,
 * which biases its figure upward (the winner's curse), and on a shared
 * machine one measurement can fall in a slow or a fast spell.  Measure
 * that size once more, later, and report the median of both measurements'
 * samples as the sweep's figure. */
static int confirm(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s) {
  const cal_kernel_t *k = s->kernel;
  int64_t n = s->best_n;
  cal_progress(r, "gemm %s %s %lld^3, %d thread%s: confirming the best size",
               cal_kdtype_name(k->dtype), cal_kernel_engine(k), (long long)n, s->threads,
               s->threads > 1 ? "s" : "");
  size_t at;
  int rc = measure_size(r, g, k, n, s->threads, r->opt->seed + (uint64_t)n + 1,
                        "", &at);
  if (rc < 0)
    return rc;
  cal_gemm_point_t *gp = &g->points[at];
  name_confirmation(g, gp, k, s->threads);
  snprintf(gp->confirms, sizeof gp->confirms, "%s", s->best_id);
  if (gp->pt.status == CAL_POINT_FAILED)
    s->failed = 1;
  if (!CAL_POINT_HEADLINE(&gp->pt))
    return 0;
  const cal_gemm_point_t *first = NULL;
  for (size_t i = 0; i < at; i++)
    if (strcmp(g->points[i].id, s->best_id) == 0)
      first = &g->points[i];
  size_t n1 = first && first->pt.gflops ? first->pt.m.n : 0, n2 = gp->pt.m.n;
  double *all = malloc((n1 + n2) * sizeof *all);
  if (!all)
    return CAL_ENOMEM;
  if (n1)
    memcpy(all, first->pt.gflops, n1 * sizeof *all);
  memcpy(all + n1, gp->pt.gflops, n2 * sizeof *all);
  s->best_gflops = gp->pooled_gflops = cal_median(all, n1 + n2);
  free(all);
  snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
  return 0;
}

int cal_gemm_fixed(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s) {
  const cal_kernel_t *ks[NCI];
  cal_params_t ps[NCI];
  cal_point_t pts[NCI];
  s->stop = "fixed sizes (--ci)";
  for (size_t i = 0; i < NCI; i++) {
    ks[i] = s->kernel;
    ps[i] = (cal_params_t){.m = ci_sizes[i], .n = ci_sizes[i], .k = ci_sizes[i],
                           .threads = s->threads,
                           .seed = r->opt->seed + (uint64_t)ci_sizes[i],
                           .variant = -1};
  }
  char what[64];
  snprintf(what, sizeof what, "gemm %s %s, %d thread%s", cal_kdtype_name(s->kernel->dtype),
           cal_kernel_engine(s->kernel), s->threads, s->threads > 1 ? "s" : "");
  int rc = cal_run_points(r, NULL, 0, ks, ps, NCI, pts, what);
  size_t i = 0;
  for (; rc == 0 && i < NCI; i++) {
    cal_gemm_point_t *gp = keep_point(g, &pts[i], ci_sizes[i], s->threads, "");
    if (!gp) {
      rc = CAL_ENOMEM;
      i++;
      break;
    }
    s->failed |= gp->pt.status == CAL_POINT_FAILED;
    if (CAL_POINT_HEADLINE(&gp->pt) &&
        gp->pt.gflops_sum.median > s->best_gflops) {
      s->best_gflops = gp->pt.gflops_sum.median;
      s->best_n = gp->n;
      snprintf(s->best_id, sizeof s->best_id, "%s", gp->id);
      snprintf(s->impl, sizeof s->impl, "%s", gp->pt.impl);
    }
  }
  for (; i < NCI; i++)
    cal_point_free(&pts[i]);
  return rc;
}


int cal_gemm_walk(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s,
                  cal_gemm_walk_t *w, double budget_s) {
  size_t best_before = w->have_best ? w->best : (size_t)-1;
  int rc = sweep(r, g, s, w, budget_s);
  if (rc < 0 || !w->have_best || w->best == best_before)
    return rc;
  s->best_gflops_in_sweep = s->best_gflops;
  return confirm(r, g, s);
}
