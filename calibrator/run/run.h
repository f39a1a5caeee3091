/* A measuring run: options (read-only), context (machine, threads,
 * progress) and results (one typed result per section that ran, and the
 * quality notes).  The flow:
 *
 *   cal_opts_t, cal_ctx_t -> sections (cal_sections[]) -> cal_run_result_t
 *
 * and the caller (commands/) turns the result into the profile (profile/),
 * the table (report/) and the charts.
 *
 * A section's measure function fills its own typed result and reads
 * other sections' results through cal_results_get; it never reads JSON. */
#ifndef CAL_RUN_H
#define CAL_RUN_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "context.h"
#include "harness.h"
#include "options.h"
#include "run_result.h"

typedef struct cal_run cal_run_t;

/* CAL_BUSY_SHARE and CAL_THROTTLE_DROP: run_result.h. */
/* A contaminated point is measured once more after waiting (at most
 * CAL_QUIET_WAIT_S) for a quiet 0.1 s, while the run's re-measuring time
 * lasts: this share of the run's planned time, at least CAL_REMEASURE_MIN_S. */
#define CAL_QUIET_WAIT_S 2.0
#define CAL_REMEASURE_SHARE 0.15
#define CAL_REMEASURE_MIN_S 5.0

struct cal_run {
  const cal_opts_t *opt;
  cal_ctx_t *ctx;
  cal_results_t *res;
};

/* Time budget of a section in seconds for this run (quick or full). */
double cal_run_budget(const cal_run_t *r, int id);

/* Progress line on stderr (only when ctx->progress): the current step
 * with elapsed time and an ETA.  cal_progress_done clears the line. */
void cal_progress(const cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cal_progress_done(const cal_run_t *r);

/* Add a note (fmt, ap) to the list *notes of *n owned strings and, when
 * show, print it on stderr as "calibrate: LABEL: note" (a note that
 * cannot be kept is still printed). */
void cal_run_notev(cal_run_t *r, char ***notes, size_t *n, int show,
                   const char *label, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

/* A point measured again from t0 (cal_now()) until now: counted in
 * quality and taken from the run's re-measuring time. */
void cal_run_remeasured(cal_run_t *r, double t0);

/* Add a warning to the quality notes (and stderr when verbose). */
void cal_run_warn(cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The signal --partial caught (0: none); the harness stops on it. */
extern volatile sig_atomic_t cal_run_stop;

/* Bench a kernel point with harness settings h (NULL: the options') and
 * account for it (unstable/failed counters).  A point others disturbed
 * (CAL_BUSY_SHARE) is measured again after a wait; still disturbed, it is
 * contaminated (status CAL_POINT_CONTAMINATED, or OK with `contaminated`
 * set under --allow-busy).  Returns what cal_bench_kernel returns except
 * CAL_EVERIFY, which is counted in quality.failed and returned as 0 so the
 * run goes on; CAL_EINTR after a --partial signal. */
int cal_run_point(cal_run_t *r, const cal_harness_cfg_t *h,
                  const cal_kernel_t *k, const cal_params_t *p,
                  cal_point_t *pt);
/* The same on a kept state (cal_bench_kernel_kept): the batch sweep's
 * model, kept from one batch to the next. */
int cal_run_point_kept(cal_run_t *r, const cal_harness_cfg_t *h,
                       const cal_kernel_t *k, const cal_params_t *p,
                       cal_kept_t *kept, cal_point_t *pt);

/* Measure n kernel points (k[i] with p[i]) into out[i]: one after the
 * other, or with rounds > 1 in interleaved rounds (every point once per
 * round, pooled), so slow drift of the machine spreads over all points
 * instead of biasing some.  h NULL: the options' settings; rounds 0: the
 * options' rounds.  `what` names the step in the progress line.  out[i]
 * belong to the caller (cal_point_free). */
int cal_run_points(cal_run_t *r, const cal_harness_cfg_t *h, int rounds,
                   const cal_kernel_t *const *k, const cal_params_t *p,
                   size_t n, cal_point_t *out, const char *what);

/* Cross-section sanity (sanity.c): attention faster than GEMM, a GEMM
 * confirmation far from its sweep point, all threads slower than one.
 * Findings go to stderr and quality.sanity. */
void cal_sanity_check(cal_run_t *r);

/* Run the sections in opt->sections with the machine of ctx: out gets
 * their typed results, the quality notes (warnings, sanity findings) and
 * borrows opt and the machine.  Returns 0, or a CAL_E* code after an
 * internal error (the results so far stay in out).  Free out->res with
 * cal_results_free either way. */
int cal_run_measure(const cal_opts_t *opt, cal_ctx_t *ctx,
                    cal_run_result_t *out);

#endif
