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

typedef struct cal_quality {
  int failed;               /* points that failed verification */
  int unstable;             /* points over the CV threshold */
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

/* Bench a kernel point with harness settings h (NULL: the options') and
 * account for it (unstable/failed counters).  Returns what
 * cal_bench_kernel returns except CAL_EVERIFY, which is counted in
 * quality.failed and returned as 0 so the run goes on. */
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

/* Run the sections in opt->sections, write the profile, print the table
 * and draw the charts.  Returns the exit code. */
int cal_run_main(const cal_opts_t *opt, cal_ctx_t *ctx);

#endif
