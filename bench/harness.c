#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cal_err.h"
#include "memuse.h"
#include "pipes.h"
#include "timer.h"

void cal_harness_defaults(cal_harness_cfg_t *cfg, int quick) {
  memset(cfg, 0, sizeof *cfg);
  cfg->samples = 7;
  cfg->min_sample_s = quick ? 0.01 : 0.05;
  cfg->warmup_s = quick ? 0.02 : 0.1;
  cfg->cv_threshold = 0.05;
  cfg->ci_level = 0.95;
}

void cal_measurement_free(cal_measurement_t *m) {
  if (!m)
    return;
  free(m->samples_s);
  m->samples_s = NULL;
  m->n = 0;
}

static int time_runs(const cal_harness_cfg_t *cfg, cal_run_fn run, void *arg,
                     int64_t iters, double *secs) {
  if (cfg->stop && *cfg->stop)
    return CAL_EINTR;
  double t0 = cal_now();
  for (int64_t i = 0; i < iters; i++) {
    int rc = run(arg);
    if (rc < 0)
      return rc;
  }
  *secs = cal_now() - t0;
  return 0;
}

/* Samples by confidence (cfg->ci_target): whether the n samples so far,
 * which took `spent` seconds, are enough: at least min_samples and the
 * median's interval within the target, or the samples' time spent. */
static int enough(const cal_harness_cfg_t *cfg, const double *x, size_t n,
                  double spent) {
  if (!(cfg->ci_target > 0) || n < (size_t)(cfg->min_samples > 1
                                                ? cfg->min_samples : 2))
    return 0;
  if (cfg->max_samples_s > 0 && spent >= cfg->max_samples_s)
    return 1;
  cal_summary_t sum;
  if (cal_summarize(x, n, cfg->ci_level, &sum) < 0 || !(sum.median > 0))
    return 0;
  return (sum.ci_high - sum.ci_low) / 2.0 <= cfg->ci_target * sum.median;
}

int cal_measure(const cal_harness_cfg_t *cfg, cal_run_fn run, void *arg,
                cal_measurement_t *out) {
  memset(out, 0, sizeof *out);
  if (cfg->samples < 1 || !(cfg->min_sample_s >= 0))
    return CAL_EINVAL;
  double min_s = cfg->min_sample_s;
  double floor_s = 1000.0 * cal_timer_resolution();
  if (min_s < floor_s)
    min_s = floor_s;

  /* Warm-up: at least one run (discarded, like STREAM's first pass), then
   * keep running until warmup_s has passed. */
  double t_start = cal_now(), dt;
  int rc = time_runs(cfg, run, arg, 1, &dt);
  if (rc < 0)
    return rc;
  while (cal_now() - t_start < cfg->warmup_s) {
    if ((rc = time_runs(cfg, run, arg, 1, &dt)) < 0)
      return rc;
  }
  /* Calibrate: double the run count until one sample is long enough. */
  int64_t iters = 1;
  for (;;) {
    if ((rc = time_runs(cfg, run, arg, iters, &dt)) < 0)
      return rc;
    if (dt >= min_s || iters >= (INT64_C(1) << 40))
      break;
    /* jump close to the target, then let doubling finish the job */
    double scale = dt > 0 ? min_s / dt : 2.0;
    int64_t next = scale > 2.0 ? (int64_t)(iters * fmin(scale * 1.1, 1024.0))
                               : iters * 2;
    iters = next > iters ? next : iters * 2;
  }
  out->warmup_s = cal_now() - t_start;
  out->iters = iters;
  out->samples_s = malloc((size_t)cfg->samples * sizeof *out->samples_s);
  if (!out->samples_s)
    return CAL_ENOMEM;
  /* a run long enough to be a sample on its own (a model's step) was
   * timed alone after the warm-up, as a sample is: it is the first one */
  size_t n = 0;
  if (iters == 1)
    out->samples_s[n++] = dt;
  double t_samples = cal_now();
  while (n < (size_t)cfg->samples && !enough(cfg, out->samples_s, n,
                                             cal_now() - t_samples)) {
    if ((rc = time_runs(cfg, run, arg, iters, &dt)) < 0) {
      cal_measurement_free(out);
      return rc;
    }
    out->samples_s[n++] = dt / (double)iters;
  }
  out->n = n;
  rc = cal_summarize(out->samples_s, out->n, cfg->ci_level, &out->time);
  if (rc < 0) {
    cal_measurement_free(out);
    return rc;
  }
  out->unstable = out->time.cv > cfg->cv_threshold;
  return 0;
}

const char *cal_point_status_name(cal_point_status_t st) {
  switch (st) {
  case CAL_POINT_OK: return "ok";
  case CAL_POINT_SKIPPED: return "skipped";
  case CAL_POINT_FAILED: return "failed";
  case CAL_POINT_CONTAMINATED: return "contaminated";
  }
  return "failed";
}

void cal_point_free(cal_point_t *pt) {
  if (!pt)
    return;
  cal_measurement_free(&pt->m);
  free(pt->gflops);
  free(pt->gbps);
  pt->gflops = pt->gbps = NULL;
}

static int kernel_run(void *arg) {
  void **pair = arg;
  const cal_kernel_t *k = pair[0];
  return k->run(pair[1]);
}

static int rates(const double *secs, size_t n, double work, double scale,
                 double level, double **out, cal_summary_t *sum) {
  *out = NULL;
  if (work <= 0)
    return 0;
  double *r = malloc(n * sizeof *r);
  if (!r)
    return CAL_ENOMEM;
  for (size_t i = 0; i < n; i++)
    r[i] = work / secs[i] * scale;
  int rc = cal_summarize(r, n, level, sum);
  if (rc < 0) {
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

static double cpu_now(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return -1.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void skip(cal_point_t *pt, int err, const char *why) {
  pt->status = CAL_POINT_SKIPPED;
  pt->err = err;
  snprintf(pt->reason, sizeof pt->reason, "%s", why);
}

void cal_kept_release(cal_kept_t *kp) {
  if (kp && kp->state && kp->k)
    kp->k->teardown(kp->state);
  if (kp)
    memset(kp, 0, sizeof *kp);
}

/* The point's state: the kept one re-shaped for p where it is k's and
 * differs in the batch alone, else k set up anew (what was kept torn
 * down first, so that two models are never held at once). */
static int obtain(const cal_kernel_t *k, const cal_params_t *p,
                  cal_kept_t *kept, void **state, int *reused) {
  *state = NULL;
  *reused = 0;
  if (kept && kept->state) {
    int rc = CAL_EUNSUPP;
    if (kept->k == k && k->reshape && cal_params_same_but_batch(&kept->p, p))
      rc = k->reshape(kept->state, p);
    if (rc == 0) {
      *state = kept->state;
      *reused = 1;
      memset(kept, 0, sizeof *kept); /* the point holds it now */
      return 0;
    }
    cal_kept_release(kept);
  }
  return k->setup(p, state);
}

/* After the point: a measured and verified state kept (kept), any other
 * torn down. */
static void put_back(const cal_kernel_t *k, const cal_params_t *p,
                     cal_kept_t *kept, void *state, int ok) {
  if (kept && ok && state) {
    kept->k = k;
    kept->state = state;
    kept->p = *p;
  } else if (state) {
    k->teardown(state);
  }
}

/* The point's result checked, timed in pt->verify_s: 0, with the point
 * skipped where the check ran out of memory (no verdict, so no figure
 * either: never a wrong answer for a lack of memory); CAL_EVERIFY with
 * the point failed on a wrong answer or another error. */
static int verify(const cal_kernel_t *k, void *state, cal_point_t *pt) {
  double t_verify = cal_now();
  int rc = k->verify(state);
  pt->verify_s = cal_now() - t_verify;
  if (rc == CAL_ENOMEM) {
    skip(pt, rc, "out of memory for the verification's reference");
    cal_measurement_free(&pt->m);
    return 0;
  }
  if (rc < 0) {
    pt->status = CAL_POINT_FAILED;
    pt->err = rc;
    snprintf(pt->reason, sizeof pt->reason, "%s", cal_strerror(rc));
    return CAL_EVERIFY;
  }
  return 0;
}

int cal_bench_kernel(const cal_harness_cfg_t *cfg, cal_threads_t *threads,
                     const cal_kernel_t *k, const cal_params_t *p,
                     cal_point_t *pt) {
  return cal_bench_kernel_kept(cfg, threads, k, p, NULL, pt);
}

int cal_bench_kernel_kept(const cal_harness_cfg_t *cfg, cal_threads_t *threads,
                          const cal_kernel_t *k, const cal_params_t *p,
                          cal_kept_t *kept, cal_point_t *pt) {
  void *state = NULL;
  int rc;
  memset(pt, 0, sizeof *pt);
  pt->step_peak_rss = NAN;
  pt->kernel = k;
  pt->engine = k->engine;
  pt->params = *p;
  pt->flops = k->flops ? k->flops(p) : 0.0;
  pt->bytes = k->bytes ? k->bytes(p) : 0.0;
  snprintf(pt->variant, sizeof pt->variant, "default");

  const char *why = NULL;
  if (k->supported && (rc = k->supported(p, &why)) < 0) {
    skip(pt, rc, why ? why : cal_strerror(rc));
    return 0;
  }
  double need = k->mem_bytes ? k->mem_bytes(p) : 0.0;
  if (cfg->mem_avail_bytes > 0 && need > cfg->mem_avail_bytes) {
    char buf[160];
    snprintf(buf, sizeof buf,
             "needs %.0f MiB, more than the %.0f MiB available", need / 1048576.0,
             cfg->mem_avail_bytes / 1048576.0);
    skip(pt, CAL_ETOOBIG, buf);
    return 0;
  }
  if (threads) {
    if ((rc = cal_threads_use(threads, p->threads > 0 ? p->threads : 1)) < 0)
      return rc;
    pt->pinned = cal_threads_pinned(threads);
  }
  double t_setup = cal_now();
  rc = obtain(k, p, kept, &state, &pt->reused);
  pt->setup_s = cal_now() - t_setup;
  if (rc == CAL_ENOMEM || rc == CAL_EUNSUPP) {
    skip(pt, rc, cal_strerror(rc));
    return 0;
  }
  if (rc < 0)
    return rc;
  if (k->variant_name)
    snprintf(pt->variant, sizeof pt->variant, "%s", k->variant_name(state));
  const char *impl = k->impl_name ? k->impl_name(state) : NULL;
  snprintf(pt->impl, sizeof pt->impl, "%s", impl ? impl : "");
  pt->engine = k->engine_used ? k->engine_used(state) : k->engine;

  void *pair[2] = {(void *)k, state};
  cal_load_snap_t before, after;
  if (cfg->load)
    cal_load_read(cfg->load, &before);
  /* the threads' placement on both sides of the measurement: the
   * hypervisor can move them within seconds */
  double rtt0 = threads && p->threads > 1
                    ? cal_team_rtt_probe(p->threads, CAL_TEAM_RTT_ROUNDS, 2)
                    : 0;
  double cpu0 = cpu_now(), wall0 = cal_now();
  int window = cal_memuse_window_begin();
  rc = cal_measure(cfg, kernel_run, pair, &pt->m);
  pt->step_peak_rss = cal_memuse_window_end(window);
  if (rc < 0)
    goto out;
  double cpu1 = cpu_now();
  pt->wall_s = cal_now() - wall0;
  pt->cpu_s = cpu0 >= 0 && cpu1 >= cpu0 ? cpu1 - cpu0 : 0.0;
  if (threads && p->threads > 1) {
    pt->ncpus = cal_threads_cpus(
        p->threads < CAL_PAR_MAX_CPUS ? p->threads : CAL_PAR_MAX_CPUS,
        pt->cpus);
    double r = cal_pipes_probe(p->threads, CAL_PIPES_PROBE_S, 2);
    pt->team_rate = r > 0 ? r : 0;
    r = cal_team_rtt_probe(p->threads, CAL_TEAM_RTT_ROUNDS, 2);
    r = r > rtt0 ? r : rtt0; /* the farther of the two */
    pt->team_rtt_ns = r > 0 ? r : 0;
  }
  if (cfg->load) {
    cal_load_read(cfg->load, &after);
    cal_load_between(cfg->load, &before, &after, &pt->load);
  }
  if ((rc = verify(k, state, pt)) < 0 || pt->status == CAL_POINT_SKIPPED)
    goto out;
  if ((rc = rates(pt->m.samples_s, pt->m.n, pt->flops, 1e-9, cfg->ci_level,
                  &pt->gflops, &pt->gflops_sum)) < 0 ||
      (rc = rates(pt->m.samples_s, pt->m.n, pt->bytes, 1e-9, cfg->ci_level,
                  &pt->gbps, &pt->gbps_sum)) < 0)
    goto out;
  pt->status = CAL_POINT_OK;
out:
  put_back(k, p, kept, state, rc == 0 && pt->status != CAL_POINT_SKIPPED);
  return rc;
}

static int append(double **dst, size_t n, const double *src, size_t m) {
  if (!*dst && !src)
    return 0;
  if (!*dst || !src)
    return CAL_EINVAL;
  double *r = realloc(*dst, (n + m) * sizeof *r);
  if (!r)
    return CAL_ENOMEM;
  memcpy(r + n, src, m * sizeof *r);
  *dst = r;
  return 0;
}

int cal_point_merge(cal_point_t *acc, cal_point_t *more,
                    const cal_harness_cfg_t *cfg) {
  if (!acc->kernel) {
    *acc = *more;
    memset(more, 0, sizeof *more);
    return 0;
  }
  if (!CAL_POINT_HAS_SAMPLES(acc) || !CAL_POINT_HAS_SAMPLES(more)) {
    if (CAL_POINT_HAS_SAMPLES(acc) || more->status == CAL_POINT_FAILED) {
      cal_point_t keep = *more;
      memset(more, 0, sizeof *more);
      cal_point_free(acc);
      *acc = keep;
    } else {
      cal_point_free(more);
    }
    return 0;
  }
  size_t n = acc->m.n, m = more->m.n;
  int rc;
  if ((rc = append(&acc->m.samples_s, n, more->m.samples_s, m)) < 0 ||
      (rc = append(&acc->gflops, n, more->gflops, m)) < 0 ||
      (rc = append(&acc->gbps, n, more->gbps, m)) < 0)
    return rc;
  acc->m.n = n + m;
  acc->m.warmup_s += more->m.warmup_s;
  acc->pinned = acc->pinned && more->pinned;
  if (more->status == CAL_POINT_CONTAMINATED) {
    acc->status = CAL_POINT_CONTAMINATED;
    snprintf(acc->reason, sizeof acc->reason, "%s", more->reason);
  }
  acc->contaminated |= more->contaminated;
  acc->remeasured |= more->remeasured;
  acc->cpu_s += more->cpu_s;
  acc->wall_s += more->wall_s;
  if (more->team_rate > 0 &&
      (acc->team_rate <= 0 || more->team_rate < acc->team_rate))
    acc->team_rate = more->team_rate; /* the worse of the two */
  if (more->team_rtt_ns > acc->team_rtt_ns)
    acc->team_rtt_ns = more->team_rtt_ns; /* the worse of the two */
  if (more->ncpus > 0) {
    acc->ncpus = more->ncpus;
    memcpy(acc->cpus, more->cpus, sizeof acc->cpus);
  }
  if (!acc->not_parallel[0]) /* the run's verdict on either stays */
    snprintf(acc->not_parallel, sizeof acc->not_parallel, "%s",
             more->not_parallel);
  acc->throttled |= more->throttled;
  if (more->load.known && (!acc->load.known ||
                           more->load.others + more->load.steal >
                               acc->load.others + acc->load.steal))
    acc->load = more->load;
  cal_point_free(more);
  if ((rc = cal_summarize(acc->m.samples_s, acc->m.n, cfg->ci_level,
                          &acc->m.time)) < 0)
    return rc;
  acc->m.unstable = acc->m.time.cv > cfg->cv_threshold;
  if (acc->gflops &&
      (rc = cal_summarize(acc->gflops, acc->m.n, cfg->ci_level, &acc->gflops_sum)) < 0)
    return rc;
  if (acc->gbps &&
      (rc = cal_summarize(acc->gbps, acc->m.n, cfg->ci_level, &acc->gbps_sum)) < 0)
    return rc;
  return 0;
}
