/* The measurement harness: warm-up, adaptive repetition, samples.
 *
 * Each sample times `iters` back-to-back runs, with `iters` doubled during
 * calibration until one sample lasts at least min_sample_s (and at least
 * 1000 timer ticks).  Every sample is kept. */
#ifndef CAL_HARNESS_H
#define CAL_HARNESS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "load.h"
#include "parallel.h"
#include "stats.h"
#include "threads.h"

typedef struct cal_harness_cfg {
  int samples;          /* samples per point (>= 1; default 7) */
  double min_sample_s;  /* minimum duration of one sample */
  double warmup_s;      /* minimum warm-up before calibration */
  double cv_threshold;  /* a point with CV above this is unstable */
  /* samples by confidence: with ci_target > 0, a point stops taking
   * samples once it has min_samples and its median's confidence interval
   * is within ci_target of the median (its half-width over the median),
   * or once its samples have taken max_samples_s; `samples` stays the
   * most it takes.  0: always `samples` */
  double ci_target;
  int min_samples;
  double max_samples_s;
  double ci_level;      /* confidence level of the median CI */
  double mem_avail_bytes; /* memory a point may allocate (0: no check) */
  /* who else used the cores during each point's timed part (NULL: not
   * watched) */
  const cal_load_t *load;
  /* set by a signal handler: stop between runs with CAL_EINTR (NULL:
   * never) */
  volatile sig_atomic_t *stop;
} cal_harness_cfg_t;

/* Defaults for a full run (`quick` selects the --quick ones). */
void cal_harness_defaults(cal_harness_cfg_t *cfg, int quick);

typedef int (*cal_run_fn)(void *arg);

typedef struct cal_measurement {
  double *samples_s;    /* seconds per run, one per sample; owned */
  size_t n;
  int64_t iters;        /* runs per sample */
  double warmup_s;      /* time spent warming up */
  cal_summary_t time;   /* summary of samples_s */
  int unstable;         /* time.cv > cv_threshold */
} cal_measurement_t;

/* Time `run(arg)`.  A failing run aborts with its code; a stop request
 * (cfg->stop) with CAL_EINTR.  Free the result with
 * cal_measurement_free(). */
int cal_measure(const cal_harness_cfg_t *cfg, cal_run_fn run, void *arg,
                cal_measurement_t *out);
/* Accepts NULL and zeroed measurements. */
void cal_measurement_free(cal_measurement_t *m);

/* What happened to one kernel point. */
typedef enum {
  CAL_POINT_OK = 0,
  CAL_POINT_SKIPPED,     /* not run: unsupported, too big, over budget */
  CAL_POINT_FAILED,      /* ran and produced a wrong result */
  CAL_POINT_CONTAMINATED, /* measured while others took the cores: its
                            samples are kept as evidence, never used as a
                            figure (see calibrator/run/run.h) */
} cal_point_status_t;

/* "ok", "skipped", "failed", "contaminated": the profile's names. */
const char *cal_point_status_name(cal_point_status_t st);

/* Whether a point has samples (measured, contaminated or not). */
#define CAL_POINT_HAS_SAMPLES(pt) \
  ((pt)->status == CAL_POINT_OK || (pt)->status == CAL_POINT_CONTAMINATED)

/* Whether a point may be a headline or a best: measured, not contaminated,
 * and its threads ran side by side. */
#define CAL_POINT_HEADLINE(pt) \
  ((pt)->status == CAL_POINT_OK && !(pt)->not_parallel[0])

typedef struct cal_point {
  const cal_kernel_t *kernel;
  cal_params_t params;
  cal_point_status_t status;
  int err;              /* CAL_E* behind a skip or failure */
  char reason[160];     /* human-readable reason for a skip or failure */
  char variant[32];     /* SIMD variant that ran */
  char impl[96];        /* the engine's implementation name (kernel's
                           impl_name after setup), "" when it has none */
  cal_engine_t engine;  /* the engine that ran it (kernel's engine_used
                           after setup, else its engine) */
  int pinned;
  double flops, bytes;  /* analytic work of one run */
  cal_measurement_t m;
  double *gflops;       /* per-sample rates (NULL when flops == 0); owned */
  double *gbps;         /* per-sample bandwidth (NULL when bytes == 0) */
  cal_summary_t gflops_sum, gbps_sum;
  /* the timed part's load (cfg->load): the largest share others took over
   * the measurements pooled in this point */
  cal_load_share_t load;
  int contaminated;     /* others took more than the allowed share; with
                           --allow-busy the status stays OK */
  int remeasured;       /* measured again after a wait */
  /* threads really used (more than one thread): the process's CPU time
   * and the wall time over the measurement (warm-up, calibration,
   * samples; summed over pooled measurements), the CPU each thread of the
   * team was on after it (-1 unknown), and why the threads did not run
   * side by side ("" when they did or nobody judged: the run judges a
   * point others did not disturb, cal_parallel_judge) */
  double cpu_s, wall_s;
  int ncpus;
  int cpus[CAL_PAR_MAX_CPUS];
  char not_parallel[160];
  /* the pipes probe right after the measurement on the point's threads
   * (cal_pipes_probe): about 1 when each thread had a core's arithmetic
   * to itself, about 1/threads when they shared one; 0 not probed */
  double team_rate;
  /* the threads' cache-line round trip just before and right after it,
   * the longer (cal_team_rtt_probe, ns; the slowest pair): how far apart
   * the hypervisor placed them; 0 not probed */
  double team_rtt_ns;
  int throttled;        /* measured after the clock fell (run.h) */
  /* seconds the point's setup (or the kept state's reshape) took, and its
   * verification; reused: the state was a kept one re-shaped
   * (cal_kept_t) */
  double setup_s, verify_s;
  int reused;
  /* the process's resident peak over the timed runs alone (bytes; the
   * state set up and what its runs add; not the setup's or the
   * verification's scratch), NAN where the peak cannot be reset */
  double step_peak_rss;
} cal_point_t;

/* A kernel's state kept from one point to the next: the batch sweep keeps
 * one model a mode, and a point whose parameters differ from the kept
 * state's in the batch alone re-shapes it (cal_kernel_t.reshape) instead
 * of setting up anew.  Zero-initialise; release with cal_kept_release. */
typedef struct cal_kept {
  const cal_kernel_t *k;
  void *state;
  cal_params_t p;     /* the parameters the state runs now */
} cal_kept_t;

/* Tear the kept state down (accepts an empty one). */
void cal_kept_release(cal_kept_t *kp);

/* Bench one kernel point on `threads` threads: support and memory checks,
 * setup, warm-up, samples, verification, teardown.  Returns 0 when the
 * point was measured or skipped (see status), CAL_EVERIFY when its result
 * was wrong (status FAILED), other codes on internal errors. */
int cal_bench_kernel(const cal_harness_cfg_t *cfg, cal_threads_t *threads,
                     const cal_kernel_t *k, const cal_params_t *p,
                     cal_point_t *out);
/* The same on a kept state (NULL: cal_bench_kernel): the kept one
 * re-shaped where it can be, else torn down and k set up anew; a point
 * measured and verified leaves its state kept, any other outcome leaves
 * nothing kept. */
int cal_bench_kernel_kept(const cal_harness_cfg_t *cfg, cal_threads_t *threads,
                          const cal_kernel_t *k, const cal_params_t *p,
                          cal_kept_t *kept, cal_point_t *out);
/* Accepts NULL. */
void cal_point_free(cal_point_t *pt);

/* Pool the samples of `more` (the same kernel point measured again) into
 * `acc` and recompute every summary; `more` is emptied.  A point that was
 * skipped or failed in either measurement keeps that status; contaminated
 * in either, it is contaminated, with the larger load.  An empty
 * `acc` (kernel NULL) simply takes `more`.  CAL_ENOMEM. */
int cal_point_merge(cal_point_t *acc, cal_point_t *more,
                    const cal_harness_cfg_t *cfg);

#endif
