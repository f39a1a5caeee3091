/* The section loop, progress, warnings and point accounting of a run. */
#include "run.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_err.h"
#include "cal_isa.h"
#include "cal_vec.h"
#include "clock.h"
#include "pipes.h"
#include "results.h"
#include "timer.h"

volatile sig_atomic_t cal_run_stop;

double cal_run_budget(const cal_run_t *r, int id) {
  const cal_section_t *s = &cal_sections[id];
  double scale = r->opt->budget_scale > 0 ? r->opt->budget_scale : 1.0;
  return (r->opt->quick ? s->budget_quick_s : s->budget_full_s) * scale;
}

/* The clock under vector load on one pinned thread, quickly (about 0.1
 * s): the fastest of nine short samples, so an interruption does not read
 * as a slower clock.  0 when it cannot be measured. */
static double clock_reading(cal_run_t *r) {
  cal_clock_t c;
  cal_load_snap_t a, b;
  cal_load_share_t l = {0};
  if (r->ctx->thr)
    cal_threads_use(r->ctx->thr, 1);
  if (r->ctx->load_ok)
    cal_load_read(&r->ctx->load, &a);
  if (cal_clock_measure(CAL_VARIANT_AUTO, 0.003, &c) != 0)
    return 0.0;
  if (r->ctx->load_ok) {
    cal_load_read(&r->ctx->load, &b);
    cal_load_between(&r->ctx->load, &a, &b, &l);
  }
  /* a reading while others held the cores is no reading of the clock
   * (one pinned thread: its core is one of ncpus) */
  return l.known && (l.others + l.steal) * (double)r->ctx->load.ncpus > 0.5
             ? 0.0
             : c.ghz;
}

/* The same, its time counted as the watch's. */
static double clock_now(cal_run_t *r) {
  double t0 = cal_now();
  double ghz = clock_reading(r);
  r->res->quality.watch_s += cal_now() - t0;
  return ghz;
}

/* After a section: the clock again; a reading CAL_THROTTLE_DROP below the
 * first is throttling, said once, and the points measured from now on are
 * marked.  One short reading on a VM wanders by a few percent (seen: 3.30
 * to 3.49 GHz within one run, with no trend), so a low one is read once
 * more and only a drop both readings show counts. */
static void watch_clock(cal_run_t *r, int id) {
  cal_quality_t *q = &r->res->quality;
  double low = q->clock_start_ghz * (1.0 - CAL_THROTTLE_DROP);
  double ghz = q->clock_start_ghz > 0 && !cal_run_stop ? clock_now(r) : 0.0;
  if (ghz > 0 && ghz < low && !cal_run_stop) {
    double again = clock_now(r);
    ghz = again > ghz ? again : ghz;
  }
  q->watch[id].clock_ghz = ghz;
  if (ghz > 0 && ghz < low && !q->throttled) {
    q->throttled = r->ctx->throttled = 1;
    snprintf(q->throttle_note, sizeof q->throttle_note,
             "the clock under vector load fell from %.2f GHz at the start to "
             "%.2f GHz after the %s section: throttling; the points measured "
             "after it are marked throttled",
             q->clock_start_ghz, ghz, cal_sections[id].key);
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s\n", q->throttle_note);
  }
}

/* Record the running section's duration, load and the clock after it. */
static void section_end(cal_run_t *r) {
  cal_ctx_t *c = r->ctx;
  if (c->sec_current >= 0) {
    int id = c->sec_current;
    r->res->quality.section_s[id] = cal_now() - c->sec_start;
    r->res->quality.timed |= 1u << id;
    if (c->load_ok) {
      cal_load_snap_t now;
      cal_load_read(&c->load, &now);
      cal_load_between(&c->load, &c->sec_load0, &now,
                       &r->res->quality.watch[id].load);
    }
    if (!cal_sections[id].derived)
      watch_clock(r, id);
    if (c->progress == CAL_PROGRESS_SECTIONS)
      fprintf(stderr, "calibrate: [%4.0fs] %s done (%.1f s)\n",
              cal_now() - c->t_start, cal_sections[id].key,
              r->res->quality.section_s[id]);
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
  if (c->load_ok)
    cal_load_read(&c->load, &c->sec_load0);
}

void cal_progress(const cal_run_t *r, const char *fmt, ...) {
  const cal_ctx_t *c = r->ctx;
  if (c->progress != CAL_PROGRESS_LINE)
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
  if (r->ctx->progress == CAL_PROGRESS_LINE) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
}

void cal_run_notev(cal_run_t *r, char ***notes, size_t *n, int show,
                   const char *label, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  (void)cal_strv_push(notes, n, msg); /* a note lost */
  if (show) {
    cal_progress_done(r);
    fprintf(stderr, "calibrate: %s: %s\n", label, msg);
  }
}

void cal_run_warn(cal_run_t *r, const char *fmt, ...) {
  cal_quality_t *q = &r->res->quality;
  va_list ap;
  va_start(ap, fmt);
  cal_run_notev(r, &q->warnings, &q->nwarnings, r->opt->verbose, "warning",
                fmt, ap);
  va_end(ap);
}

/* Whether others took more than CAL_BUSY_SHARE of the usable cores while
 * the point was timed, beyond the sampling error of /proc/stat (two ticks
 * a core). */
static int disturbed(const cal_run_t *r, const cal_point_t *pt) {
  const cal_load_share_t *l = &pt->load;
  if (!l->known || pt->status != CAL_POINT_OK)
    return 0;
  const cal_load_t *ld = &r->ctx->load;
  double cap = (double)ld->ncpus * l->seconds;
  double slack = 2.0 * ld->tick_s * (double)ld->ncpus;
  return (l->others + l->steal) * cap - slack > CAL_BUSY_SHARE * cap;
}

/* Wait, at most CAL_QUIET_WAIT_S, for a 0.1 s in which the others leave
 * the cores alone. */
static void wait_quiet(const cal_run_t *r) {
  double t0 = cal_now();
  while (cal_now() - t0 < CAL_QUIET_WAIT_S && !cal_run_stop) {
    cal_load_share_t w;
    cal_load_watch(&r->ctx->load, 0.1, &w);
    if (!w.known || w.others + w.steal <= CAL_BUSY_SHARE)
      return;
  }
}

/* The evidence of a disturbed point; without --allow-busy it is no figure. */
static void contaminate(cal_run_t *r, cal_point_t *pt) {
  pt->contaminated = 1;
  r->res->quality.contaminated++;
  if (r->opt->allow_busy)
    return;
  pt->status = CAL_POINT_CONTAMINATED;
  snprintf(pt->reason, sizeof pt->reason,
           "others took %.0f%% of the usable cores and the hypervisor %.0f%% "
           "while it was measured%s (more than %.0f%%)",
           100.0 * pt->load.others, 100.0 * pt->load.steal,
           pt->remeasured ? ", twice" : "", 100.0 * CAL_BUSY_SHARE);
}

/* Whether the threads of a point others did not disturb ran side by side
 * (a disturbed point is the busy-machine rules' business): the verdict
 * goes into pt->not_parallel, and what to do with it is returned. */
static cal_par_action_t judge_threads(const cal_run_t *r, cal_point_t *pt,
                                      int tries) {
  pt->not_parallel[0] = '\0';
  if (pt->status != CAL_POINT_OK || disturbed(r, pt))
    return CAL_PAR_KEEP;
  if (pt->team_rate > r->ctx->team_best)
    r->ctx->team_best = pt->team_rate;
  int bad = cal_parallel_judge(pt->params.threads, pt->cpu_s, pt->wall_s,
                               pt->cpus, pt->ncpus, pt->not_parallel,
                               sizeof pt->not_parallel) ||
            cal_parallel_judge_pipes(pt->params.threads, pt->team_rate,
                                     r->ctx->team_best, pt->not_parallel,
                                     sizeof pt->not_parallel);
  return cal_parallel_action(bad, tries, r->ctx->remeasure_left_s);
}

/* A point's threads' round trip where it counts for the run (a measured
 * point others did not disturb), else 0. */
static double rtt_of(const cal_run_t *r, const cal_point_t *pt) {
  return pt->status == CAL_POINT_OK && pt->team_rtt_ns > 0 && !disturbed(r, pt)
             ? pt->team_rtt_ns
             : 0;
}

/* The round trip past which a team counts as placed apart:
 * CAL_TEAM_RTT_APART x the least the run has seen. */
static double apart_ns(const cal_run_t *r) {
  return CAL_TEAM_RTT_APART * r->ctx->rtt_least_ns;
}

/* Whether the threads of an undisturbed point were placed apart when it
 * was measured: their round trip past CAL_TEAM_RTT_APART x the least the
 * run has seen (which it updates).  The hypervisor moves a guest's vCPUs
 * between one L3 and two dies from one second to the next, and a product
 * whose threads share blocks runs a quarter slower apart; measured again,
 * a point is measured as the run's other points were.  When a point
 * measured again was apart again, the threads stay apart for a while:
 * no point is measured again for it until one finds them close. */
static int placed_apart(cal_run_t *r, const cal_point_t *pt) {
  const double rtt = rtt_of(r, pt);
  if (rtt <= 0)
    return 0;
  double *least = &r->ctx->rtt_least_ns;
  if (*least <= 0 || rtt < *least)
    *least = rtt;
  int apart = rtt > apart_ns(r);
  if (!apart)
    r->ctx->rtt_stayed_apart = 0;
  return apart && !r->ctx->rtt_stayed_apart;
}

/* Wait, at most CAL_TEAM_RTT_WAIT_S, for the threads of a point placed
 * apart to come close again: probes of their round trip, each after a
 * pause in which the hypervisor can move a halted vCPU (a team that keeps
 * computing keeps its placement). */
static void wait_close(const cal_run_t *r, const cal_params_t *p) {
  cal_team_rtt_wait(p->threads, apart_ns(r), CAL_TEAM_RTT_WAIT_S,
                    CAL_TEAM_RTT_GAP_S);
}

/* The run's span of the threads' round trip, over undisturbed points. */
static void note_rtt(cal_run_t *r, const cal_point_t *pt) {
  cal_quality_t *q = &r->res->quality;
  const double rtt = rtt_of(r, pt);
  if (rtt <= 0)
    return;
  if (q->rtt_points == 0 || rtt < q->rtt_min_ns)
    q->rtt_min_ns = rtt;
  if (q->rtt_points == 0 || rtt > q->rtt_max_ns)
    q->rtt_max_ns = rtt;
  q->rtt_points++;
}

void cal_run_remeasured(cal_run_t *r, double t0) {
  double s = cal_now() - t0;
  r->res->quality.remeasured++;
  r->res->quality.remeasure_s += s;
  r->ctx->remeasure_left_s -= s;
}

int cal_run_point(cal_run_t *r, const cal_harness_cfg_t *h,
                  const cal_kernel_t *k, const cal_params_t *p,
                  cal_point_t *pt) {
  return cal_run_point_kept(r, h, k, p, NULL, pt);
}

int cal_run_point_kept(cal_run_t *r, const cal_harness_cfg_t *h,
                       const cal_kernel_t *k, const cal_params_t *p,
                       cal_kept_t *kept, cal_point_t *pt) {
  cal_harness_cfg_t cfg = h ? *h : r->opt->hcfg;
  cfg.load = r->ctx->load_ok ? &r->ctx->load : NULL;
  cfg.stop = &cal_run_stop;
  int rc = cal_bench_kernel_kept(&cfg, r->ctx->thr, k, p, kept, pt);
  int busy = rc == 0 && disturbed(r, pt);
  int apart = rc == 0 && placed_apart(r, pt);
  if (rc == 0 && r->ctx->remeasure_left_s > 0 &&
      (busy || judge_threads(r, pt, 1) == CAL_PAR_AGAIN || apart)) {
    /* once more, after the others have had a moment to finish */
    double t0 = cal_now();
    cal_point_t again;
    cal_progress(r, "%s: %s; measuring again", k->name,
                 busy    ? "the machine is busy"
                 : apart ? "its threads were placed apart"
                         : "its threads did not run side by side");
    wait_quiet(r);
    if (apart && !busy)
      wait_close(r, p);
    rc = cal_bench_kernel_kept(&cfg, r->ctx->thr, k, p, kept, &again);
    again.setup_s += pt->setup_s; /* what the point cost in all */
    again.verify_s += pt->verify_s;
    cal_run_remeasured(r, t0);
    cal_point_free(pt);
    *pt = again;
    pt->remeasured = 1;
    /* its round trip joins the run's least; apart again, they stay so */
    if (rc == 0 && placed_apart(r, pt) && apart)
      r->ctx->rtt_stayed_apart = 1;
  }
  if (rc == 0 && disturbed(r, pt))
    contaminate(r, pt);
  /* still not side by side: kept with the reason, never a best */
  if (rc == 0 && judge_threads(r, pt, 2) == CAL_PAR_MARK)
    cal_run_warn(r, "%s at %d threads: %s%s; never a headline", k->name,
                 pt->params.threads, pt->not_parallel,
                 pt->remeasured ? " (measured twice)" : "");
  pt->throttled = r->ctx->throttled;
  if (rc == 0)
    note_rtt(r, pt);
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
    fprintf(stderr,
            "calibrate: %s variant %s: %.2f GFLOPS (cv %.1f%%); setup %.2f s%s, "
            "%zu samples of %lld runs, timed %.2f s, verify %.2f s\n",
            k->name, pt->variant, pt->gflops_sum.median,
            100.0 * pt->m.time.cv, pt->setup_s, pt->reused ? " (kept)" : "",
            pt->m.n, (long long)pt->m.iters, pt->wall_s, pt->verify_s);
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
      if (round > 0 && !CAL_POINT_HAS_SAMPLES(&out[i]))
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

/* Measured sections in table order, then the derived ones.  A --partial
 * signal stops the section it arrives in: that section's result is
 * dropped (it would be half a section), the finished ones stay. */
static int measure_all(cal_run_t *r) {
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < CAL_NSECTIONS; i++) {
      if (!(r->opt->sections & (1u << i)) || cal_sections[i].derived != pass)
        continue;
      section_begin(r, i);
      int rc = cal_run_stop ? CAL_EINTR : cal_sections[i].measure(r);
      if (rc == CAL_EINTR || (rc == 0 && cal_run_stop)) {
        if (r->res->sec[i])
          cal_sections[i].drop(r->res->sec[i]);
        r->res->sec[i] = NULL;
        r->res->quality.interrupted = (int)cal_run_stop;
        r->res->quality.interrupted_section = i;
        r->ctx->sec_current = -1;
        return 0;
      }
      if (rc < 0)
        return rc;
    }
  section_end(r);
  if (cal_run_stop) { /* after the last section's check: nothing dropped */
    r->res->quality.interrupted = (int)cal_run_stop;
    r->res->quality.interrupted_section = -1;
  }
  return 0;
}

static void on_signal(int sig) { cal_run_stop = sig; }

/* --partial: SIGINT and SIGTERM stop the measuring (the harness checks
 * between runs) instead of the process; a second one kills it. */
static void catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* Before the first section: who else is on the cores, and the clock. */
static void watch_start(cal_run_t *r) {
  cal_quality_t *q = &r->res->quality;
  if (r->ctx->load_ok) {
    double t0 = cal_now();
    cal_load_watch(&r->ctx->load, 0.2, &q->before);
    q->watch_s += cal_now() - t0;
    if (q->before.known && q->before.others + q->before.steal > CAL_BUSY_SHARE)
      cal_run_warn(r, "before the run, others took %.0f%% of the usable cores "
                      "(the hypervisor %.0f%%, %d runnable): points they "
                      "disturb will be measured again or marked contaminated",
                   100.0 * q->before.others, 100.0 * q->before.steal,
                   q->before.procs_running);
  }
  q->clock_start_ghz = clock_now(r);
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

int cal_run_measure(const cal_opts_t *opt, cal_ctx_t *ctx,
                    cal_run_result_t *out) {
  memset(out, 0, sizeof *out);
  out->opt = opt;
  out->hw = &ctx->hw;
  out->load_ok = ctx->load_ok;
  cal_results_t *res = &out->res;
  cal_run_t run = {opt, ctx, res}, *r = &run;
  int rc;
  ctx->t_start = cal_now();
  ctx->sec_current = -1;
  ctx->planned_left = 0;
  res->quality.interrupted_section = -1;
  for (int i = 0; i < CAL_NSECTIONS; i++)
    if (opt->sections & (1u << i))
      ctx->planned_left += cal_run_budget(r, i);
  ctx->remeasure_left_s = CAL_REMEASURE_SHARE * ctx->planned_left;
  if (ctx->remeasure_left_s < CAL_REMEASURE_MIN_S)
    ctx->remeasure_left_s = CAL_REMEASURE_MIN_S;
  if (opt->partial)
    catch_signals();
  warn_machine(r);
  watch_start(r);
  if ((rc = measure_all(r)) < 0) {
    cal_progress_done(r);
    return rc;
  }
  cal_sanity_check(r);
  cal_progress_done(r);
  if (!cal_threads_pinned(ctx->thr))
    cal_run_warn(r, "threads could not be pinned to cores (binding refused)");
  res->quality.elapsed_s = cal_now() - ctx->t_start;
  if (res->quality.unstable)
    cal_run_warn(r, "%d point%s had a coefficient of variation above %.0f%%: "
                    "the machine was busy or its clock varied",
                 res->quality.unstable, res->quality.unstable == 1 ? "" : "s",
                 100 * opt->hcfg.cv_threshold);
  return 0;
}
