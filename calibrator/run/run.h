/* A measuring run: options (read-only), context (machine, threads,
 * progress) and results (one typed result per section that ran, and the
 * quality notes).  The flow:
 *
 *   argv -> cal_opts_t -> cal_ctx_t -> sections (cal_sections[]) ->
 *   cal_results_t -> profile JSON (profile/) -> table (report/) -> charts
 *
 * A section's measure function fills its own typed result and reads
 * other sections' results through cal_results_get; it never reads JSON. */
#ifndef CAL_RUN_H
#define CAL_RUN_H

#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "context.h"
#include "harness.h"
#include "options.h"

typedef struct cal_run cal_run_t;

/* Section ids and bits, from sections/section_list.h. */
enum {
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p) CAL_SEC_ID_##ID,
#include "section_list.h"
#undef CAL_SECTION
  CAL_NSECTIONS
};
#define CAL_SEC_ALL ((1u << CAL_NSECTIONS) - 1)
enum {
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p) \
  CAL_SEC_##ID = 1u << CAL_SEC_ID_##ID,
#include "section_list.h"
#undef CAL_SECTION
};

typedef struct cal_section {
  const char *key;
  double budget_full_s, budget_quick_s;
  int derived;
  int (*measure)(cal_run_t *r);
  void (*drop)(void *result);
  json_t *(*write)(const cal_run_t *r, const void *result);
  void (*print)(const cal_run_t *r, const void *result, FILE *out);
} cal_section_t;

/* The table, CAL_NSECTIONS rows in section_list.h's order. */
extern const cal_section_t cal_sections[];

/* The functions of a section whose result is a cal_points_result_t. */
void cal_points_drop(void *result);
json_t *cal_points_write(const cal_run_t *r, const void *result);
void cal_points_print(const cal_run_t *r, const void *result, FILE *out);

/* Every section function, declared from the table. */
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p) \
  int m(cal_run_t *r);                                         \
  void d(void *result);                                        \
  json_t *w(const cal_run_t *r, const void *result);           \
  void p(const cal_run_t *r, const void *result, FILE *out);
#include "section_list.h"
#undef CAL_SECTION

/* A point is contaminated when, during its timed part, other processes
 * and the hypervisor took more than this share of the usable cores' time
 * (beyond the two ticks per core /proc/stat's sampling may be off by).  A
 * competing process on one of two cores takes 50%; an idle machine's
 * housekeeping stays near 1%. */
#define CAL_BUSY_SHARE 0.10
/* A contaminated point is measured once more after waiting (at most
 * CAL_QUIET_WAIT_S) for a quiet 0.1 s, while the run's re-measuring time
 * lasts: this share of the run's planned time, at least CAL_REMEASURE_MIN_S. */
#define CAL_QUIET_WAIT_S 2.0
#define CAL_REMEASURE_SHARE 0.15
#define CAL_REMEASURE_MIN_S 5.0
/* The clock is measured before the first section and after each; a
 * reading below the first by more than this is throttling. */
#define CAL_THROTTLE_DROP 0.05

/* What a section saw: the load over its whole time and the clock after. */
typedef struct cal_section_watch {
  cal_load_share_t load;
  double clock_ghz;         /* 0: not measured */
} cal_section_watch_t;

typedef struct cal_quality {
  int failed;               /* points that failed verification */
  int unstable;             /* points over the CV threshold */
  int contaminated;         /* points measured while others took the cores
                               (kept as figures with --allow-busy) */
  int remeasured;           /* points measured again after a wait */
  double remeasure_s;       /* time spent doing it */
  double watch_s;           /* time the watch itself took (the load window
                               before the run, the clock readings) */
  cal_load_share_t before;  /* the machine just before the first section */
  double clock_start_ghz;   /* 0: not measured */
  cal_section_watch_t watch[CAL_NSECTIONS];
  int throttled;            /* a clock reading fell by CAL_THROTTLE_DROP */
  char throttle_note[256];
  int interrupted;          /* --partial: the signal that stopped it, 0 */
  int interrupted_section;  /* the section it stopped, -1: none */
  char **sanity;            /* cross-section findings, owned strings */
  size_t nsanity;
  char **warnings;          /* owned strings */
  size_t nwarnings;
  double section_s[CAL_NSECTIONS]; /* seconds, for sections that ran */
  unsigned timed;           /* bits of sections with a time */
  double elapsed_s;
} cal_quality_t;

typedef struct cal_results {
  void *sec[CAL_NSECTIONS]; /* typed result per section; owned, NULL: none */
  cal_quality_t quality;
} cal_results_t;

struct cal_run {
  const cal_opts_t *opt;
  cal_ctx_t *ctx;
  cal_results_t *res;
};

/* The result of section `id` when it ran, else NULL (borrowed). */
const void *cal_results_get(const cal_results_t *res, int id);
/* Free every result and the quality notes; accepts a zeroed struct. */
void cal_results_free(cal_results_t *res);

/* Time budget of a section in seconds for this run (quick or full). */
double cal_run_budget(const cal_run_t *r, int id);

/* Progress line on stderr (only when ctx->progress): the current step
 * with elapsed time and an ETA.  cal_progress_done clears the line. */
void cal_progress(const cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cal_progress_done(const cal_run_t *r);

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

/* Run the sections in opt->sections, write the profile, print the table
 * and draw the charts.  Returns the exit code. */
int cal_run_main(const cal_opts_t *opt, cal_ctx_t *ctx);

#endif
