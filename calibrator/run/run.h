/* The measurement run shared by `calibrate` (run) and the single-section
 * subcommands: options, machine, harness settings, the profile being
 * built, and progress.  Sections add themselves to `root`. */
#ifndef CAL_RUN_H
#define CAL_RUN_H

#include <jansson.h>
#include <stdint.h>

#include "clock.h"
#include "harness.h"
#include "hwinfo.h"
#include "profile.h"
#include "roofline.h"
#include "threads.h"

enum {
  CAL_SEC_GEMM = 1u << 0,
  CAL_SEC_SCALING = 1u << 1,
  CAL_SEC_ATTENTION = 1u << 2,
  CAL_SEC_PEAK = 1u << 3,
  CAL_SEC_BANDWIDTH = 1u << 4,
  CAL_SEC_ROOFLINE = 1u << 5,
  CAL_SEC_BATCH = 1u << 6,
};

/* Options of the batch sweep (--sweep-batch). */
typedef struct cal_sweep_opts {
  char preset[32];          /* layer preset name */
  int64_t hidden, heads, kv_heads, ffn, seq; /* overrides; 0 = preset's */
  int modes;                /* bit 0 prefill, bit 1 decode */
  int64_t *batches;         /* user list (owned) or NULL for the default */
  size_t nbatches;
  int extend;               /* extend while still rising */
  int64_t max_batch;        /* never extend past this */
  int policy;               /* cal_curve_policy_t */
  double tolerance;         /* knee / shape tolerance, fraction */
  int64_t target_effective_batch; /* 0: none */
  double memory_budget;     /* bytes a point may use; 0: available memory */
} cal_sweep_opts_t;

typedef struct cal_run {
  /* options */
  const char *cmd;          /* subcommand name for messages ("run", ...) */
  char out_path[4096];      /* profile destination, "-" for stdout */
  int quick, verbose, progress;
  int threads;              /* the "all threads" count (<= usable) */
  uint64_t seed;
  unsigned sections;        /* CAL_SEC_* to run */
  double budget_scale;      /* multiplies every section's time budget */
  const char *plots_dir;    /* --plots DIR: draw charts after the run */
  int ci;                   /* --ci: fixed point lists, interleaved rounds */
  int rounds;               /* rounds per point (samples each: hcfg.samples) */
  cal_harness_cfg_t hcfg;
  cal_sweep_opts_t sweep;
  /* attention: SIMD variant (CAL_VARIANT_AUTO unless forced) and, for
   * `calibrate attention` with shape flags, the one shape to run */
  int attn_variant;
  int attn_custom, attn_with_ref;
  cal_params_t attn;
  /* machine */
  cal_hwinfo_t hw;
  cal_threads_t *thr;
  /* the profile being built (owned) and its quality notes */
  json_t *root;
  json_t *warnings;         /* array of strings, owned by root */
  int failed;               /* points that failed verification */
  int unstable;             /* points over the CV threshold */
  /* results other sections use: best fp32 GEMM GFLOPS by thread count
   * (index 0: one pinned thread, 1: all threads) and where it was met */
  double sgemm_best[2];
  int64_t sgemm_best_n[2];
  /* the limits sections keep their points for the roofline */
  cal_point_t *peak_pts, *bw_pts;
  size_t npeak, nbw;
  const char **bw_levels;   /* level of each bw point, NULL: staircase */
  cal_clock_t clock;
  cal_theory_t model;
  int have_clock, have_model;
  /* progress */
  double t_start, sec_start, sec_budget, planned_left;
  unsigned sec_current;     /* the section running (CAL_SEC_*), 0: none */
  json_t *section_times;    /* seconds per section (owned by quality) */
  FILE *table;              /* where the readable table goes */
} cal_run_t;

/* Time budget of a section in seconds for this run (quick or full). */
double cal_run_budget(const cal_run_t *r, unsigned section);

/* Progress: start a section (its planned budget leaves planned_left), and
 * show the current step with elapsed time and an ETA (stderr, only when
 * r->progress).  cal_progress_done clears the line. */
void cal_progress_section(cal_run_t *r, unsigned section);
void cal_progress(cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cal_progress_done(cal_run_t *r);
/* Record the running section's duration (the next section or the end of
 * the run calls it). */
void cal_progress_end(cal_run_t *r);
/* Add a warning to the profile's quality notes (and stderr if verbose). */
void cal_run_warn(cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Bench a kernel point and account for it (unstable/failed counters,
 * warnings).  Returns what cal_bench_kernel returns except CAL_EVERIFY,
 * which is counted in r->failed and returned as 0 so the run goes on. */
int cal_run_point(cal_run_t *r, const cal_kernel_t *k, const cal_params_t *p,
                  cal_point_t *pt);

/* Measure n kernel points (kernels k[i] with params p[i]) into out[i]:
 * one after the other, or with r->rounds > 1 in interleaved rounds (every
 * point once per round, hcfg.samples samples each, pooled), so slow drift
 * of the machine spreads over all points instead of biasing some.  `what`
 * names the step in the progress line.  out[i] belong to the caller
 * (cal_point_free). */
int cal_run_points(cal_run_t *r, const cal_kernel_t *const *k,
                   const cal_params_t *p, size_t n, cal_point_t *out,
                   const char *what);

/* JSON of a measured point (see profile.h): id, status, reason, metric and
 * its samples/stats, time samples.  metric is "gbps" for the bandwidth
 * rate, else the name of the work rate ("gflops", "gops" for int8).
 * New reference; NULL on allocation failure. */
json_t *cal_point_json(const cal_point_t *pt, const char *id,
                       const char *metric);
/* The generic form: samples of `metric` with their summary, and the time
 * measurement behind them (may be NULL). */
json_t *cal_metric_json(const char *id, const char *metric,
                        int higher_is_better, const double *samples,
                        const cal_summary_t *sum, int unstable,
                        const cal_measurement_t *m);

/* Parse the options every measuring command shares into r, read the
 * machine and prepare threads.  Returns -1 to go on, -2 for --help, -3 for
 * --preset list, else an exit code (after printing the reason). */
int cal_run_parse(cal_run_t *r, int argc, char **argv, const char *cmd);
/* Run the sections in order, write the profile and print the table.
 * Returns the exit code. */
int cal_run_main(cal_run_t *r, int (**sections)(cal_run_t *), size_t n);
/* Free what cal_run_parse and the sections allocated. */
void cal_run_free(cal_run_t *r);

/* Sections. */
int cal_section_gemm(cal_run_t *r);
int cal_section_scaling(cal_run_t *r);
int cal_section_batch(cal_run_t *r);
int cal_section_attention(cal_run_t *r);
int cal_section_peak(cal_run_t *r);
int cal_section_bandwidth(cal_run_t *r);
int cal_section_roofline(cal_run_t *r);

#endif
