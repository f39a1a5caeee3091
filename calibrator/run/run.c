/* The section loop, progress, warnings and point accounting of a run. */
#include "run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_exit.h"
#include "profile_run.h"
#include "results.h"
#include "plot.h"
#include "table.h"
#include "timer.h"

const cal_section_t cal_sections[] = {
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p) \
  {key, full, quick, derived, m, d, w, p},
#include "section_list.h"
#undef CAL_SECTION
};

const void *cal_results_get(const cal_results_t *res, int id) {
  return id >= 0 && id < CAL_NSECTIONS ? res->sec[id] : NULL;
}

void cal_results_free(cal_results_t *res) {
  for (int i = 0; i < CAL_NSECTIONS; i++) {
    if (res->sec[i])
      cal_sections[i].drop(res->sec[i]);
    res->sec[i] = NULL;
  }
  for (size_t i = 0; i < res->quality.nwarnings; i++)
    free(res->quality.warnings[i]);
  free(res->quality.warnings);
  memset(&res->quality, 0, sizeof res->quality);
}

cal_points_result_t *cal_points_new(const char *title, size_t n) {
  cal_points_result_t *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->title = title;
  p->ids = calloc(n ? n : 1, sizeof *p->ids);
  p->points = calloc(n ? n : 1, sizeof *p->points);
  if (!p->ids || !p->points) {
    cal_points_drop(p);
    return NULL;
  }
  p->n = n;
  return p;
}

void cal_points_drop(void *result) {
  cal_points_result_t *p = result;
  if (!p)
    return;
  for (size_t i = 0; p->points && i < p->n; i++)
    cal_point_free(&p->points[i]);
  free(p->points);
  free(p->ids);
  free(p);
}

double cal_run_budget(const cal_run_t *r, int id) {
  const cal_section_t *s = &cal_sections[id];
  double scale = r->opt->budget_scale > 0 ? r->opt->budget_scale : 1.0;
  return (r->opt->quick ? s->budget_quick_s : s->budget_full_s) * scale;
}

/* Record the running section's duration. */
static void section_end(cal_run_t *r) {
  cal_ctx_t *c = r->ctx;
  if (c->sec_current >= 0) {
    r->res->quality.section_s[c->sec_current] = cal_now() - c->sec_start;
    r->res->quality.timed |= 1u << c->sec_current;
  }
  c->sec_current = -1;
}

static void section_begin(cal_run_t *r, int id) {
  cal_ctx_t *c = r->ctx;
  section_end(r);
  c->sec_current = id;
  c->sec_budget = cal_run_budget(r, id);
  c->planned_left -= c->sec_budget;
  if (c->planned_left < 0)
    c->planned_left = 0;
  c->sec_start = cal_now();
}

void cal_progress(const cal_run_t *r, const char *fmt, ...) {
  const cal_ctx_t *c = r->ctx;
  if (!c->progress)
    return;
  double now = cal_now();
  double in_sec = now - c->sec_start;
  double left = c->planned_left + (c->sec_budget > in_sec ? c->sec_budget - in_sec : 0);
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\r\033[K[%4.0fs, ETA %3.0fs] %s", now - c->t_start, left, msg);
  fflush(stderr);
}

void cal_progress_done(const cal_run_t *r) {
  if (r->ctx->progress) {
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
  cal_quality_t *q = &r->res->quality;
  char **w = realloc(q->warnings, (q->nwarnings + 1) * sizeof *w);
  if (w) {
    q->warnings = w;
    if ((w[q->nwarnings] = strdup(msg)) != NULL)
      q->nwarnings++;
  }
  if (r->opt->verbose) {
    cal_progress_done(r);
    fprintf(stderr, "calibrate: warning: %s\n", msg);
  }
}

int cal_run_point(cal_run_t *r, const cal_harness_cfg_t *h,
                  const cal_kernel_t *k, const cal_params_t *p,
                  cal_point_t *pt) {
  int rc = cal_bench_kernel(h ? h : &r->opt->hcfg, r->ctx->thr, k, p, pt);
  if (rc == CAL_EVERIFY) {
    r->res->quality.failed++;
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s (%s) failed verification: %s\n", k->name,
            pt->variant, pt->reason);
    return 0;
  }
  if (rc < 0)
    return rc;
  if (pt->status == CAL_POINT_OK && pt->m.unstable)
    r->res->quality.unstable++;
  if (pt->status == CAL_POINT_OK && !pt->pinned && r->ctx->thr && r->opt->verbose)
    fprintf(stderr, "calibrate: note: threads could not be pinned\n");
  if (r->opt->verbose && pt->status == CAL_POINT_OK) {
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s variant %s: %.2f GFLOPS (cv %.1f%%)\n",
            k->name, pt->variant, pt->gflops_sum.median,
            100.0 * pt->m.time.cv);
  }
  return 0;
}

int cal_run_points(cal_run_t *r, const cal_harness_cfg_t *h, int rounds,
                   const cal_kernel_t *const *k, const cal_params_t *p,
                   size_t n, cal_point_t *out, const char *what) {
  if (!h)
    h = &r->opt->hcfg;
  if (rounds <= 0)
    rounds = r->opt->rounds > 1 ? r->opt->rounds : 1;
  int unstable_before = r->res->quality.unstable;
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
      int rc = cal_run_point(r, h, k[i], &p[i], &pt);
      if (rc < 0)
        return rc;
      if ((rc = cal_point_merge(&out[i], &pt, h)) < 0) {
        cal_point_free(&pt);
        return rc;
      }
    }
  }
  /* count instability on the pooled samples, not per round */
  r->res->quality.unstable = unstable_before;
  for (size_t i = 0; i < n; i++)
    if (out[i].status == CAL_POINT_OK && out[i].m.unstable)
      r->res->quality.unstable++;
  return 0;
}

/* Measured sections in table order, then the derived ones. */
static int measure_all(cal_run_t *r) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < CAL_NSECTIONS; i++) {
      if (!(r->opt->sections & (1u << i)) || cal_sections[i].derived != pass)
        continue;
      section_begin(r, i);
      int rc = cal_sections[i].measure(r);
      if (rc < 0)
        return rc;
    }
  section_end(r);
  return 0;
}

static void warn_machine(cal_run_t *r) {
  const cal_hwinfo_t *hw = &r->ctx->hw;
  if (strcmp(hw->blas_coretype_source, "calibrate") == 0)
    cal_run_warn(r, "OpenBLAS chose %s kernels for this CPU; calibrate ran it "
                    "with OPENBLAS_CORETYPE=%s, which the CPU's features support",
                 hw->blas_coretype_library, hw->blas_coretype);
  if (hw->governor[0] && strcmp(hw->governor, "performance") != 0)
    cal_run_warn(r, "frequency governor is '%s', not 'performance': clocks may "
                    "vary during the run", hw->governor);
}

/* The charts of the profile just written, from the tree in memory. */
static void draw_charts(const cal_run_t *r, const json_t *root) {
  /* the profile is safe on disk; a missing gnuplot only costs the charts */
  char err[512];
  if (cal_plot_tree(root, r->opt->out_path, r->opt->plots_dir, "png", err,
                    sizeof err) < 0)
    fprintf(stderr, "calibrate: no charts: %s\n", err);
  else
    fprintf(r->ctx->table, "Charts written to %s\n", r->opt->plots_dir);
}

int cal_run_main(const cal_opts_t *opt, cal_ctx_t *ctx) {
  cal_results_t res;
  memset(&res, 0, sizeof res);
  cal_run_t run = {opt, ctx, &res}, *r = &run;
  json_t *root = NULL;
  char err[512];
  int rc, exit_code = CAL_EXIT_OK;
  ctx->t_start = cal_now();
  ctx->sec_current = -1;
  ctx->planned_left = 0;
  for (int i = 0; i < CAL_NSECTIONS; i++)
    if (opt->sections & (1u << i))
      ctx->planned_left += cal_run_budget(r, i);
  warn_machine(r);
  if ((rc = measure_all(r)) < 0)
    goto internal;
  cal_progress_done(r);
  if (!cal_threads_pinned(ctx->thr))
    cal_run_warn(r, "threads could not be pinned to cores (binding refused)");
  res.quality.elapsed_s = cal_now() - ctx->t_start;
  if (res.quality.unstable)
    cal_run_warn(r, "%d point%s had a coefficient of variation above %.0f%%: "
                    "the machine was busy or its clock varied",
                 res.quality.unstable, res.quality.unstable == 1 ? "" : "s",
                 100 * opt->hcfg.cv_threshold);
  if (!(root = cal_profile_of_run(r))) {
    rc = CAL_ENOMEM;
    goto internal;
  }
  if (cal_json_write_atomic(root, opt->out_path, err, sizeof err) < 0) {
    fprintf(stderr, "calibrate: %s\n", err);
    exit_code = CAL_EXIT_USAGE;
    goto out;
  }
  cal_table_print(r, ctx->table);
  if (strcmp(opt->out_path, "-") != 0)
    fprintf(ctx->table, "\nProfile written to %s\n", opt->out_path);
  if (opt->plots_dir)
    draw_charts(r, root);
  if (res.quality.failed) {
    fprintf(stderr, "calibrate: %d measurement%s failed verification\n",
            res.quality.failed, res.quality.failed == 1 ? "" : "s");
    exit_code = CAL_EXIT_VERIFY;
  }
  goto out;
internal:
  cal_progress_done(r);
  fprintf(stderr, "calibrate: %s\n", cal_strerror(rc));
  exit_code = CAL_EXIT_INTERNAL;
out:
  json_decref(root);
  cal_results_free(&res);
  return exit_code;
}
