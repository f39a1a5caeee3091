/* What a measuring run hands back: one typed result per section that ran,
 * the quality notes, the machine and the settings it ran with.  run/
 * fills it; commands/ decides what to write from it; profile/ (the JSON)
 * and report/ (the table) read it.  Also the section descriptor table
 * (one row per section in sections/section_list.h): the one place that
 * names a section's measure, drop, writer, table part, profile reader and
 * charts.  Nothing here depends on the section loop (run/run.h). */
#ifndef CAL_RUN_RESULT_H
#define CAL_RUN_RESULT_H

#include <jansson.h>
#include <stdio.h>

#include "load.h"
#include "machine.h"
#include "settings.h"

/* Section ids and bits, from sections/section_list.h. */
enum {
#define CAL_SECTION(ID, ...) CAL_SEC_ID_##ID,
#include "section_list.h"
#undef CAL_SECTION
  CAL_NSECTIONS
};
#define CAL_SEC_ALL ((1u << CAL_NSECTIONS) - 1)
enum {
#define CAL_SECTION(ID, ...) CAL_SEC_##ID = 1u << CAL_SEC_ID_##ID,
#include "section_list.h"
#undef CAL_SECTION
};

/* A point is contaminated when, during its timed part, other processes
 * and the hypervisor took more than this share of the usable cores' time
 * (beyond the two ticks per core /proc/stat's sampling may be off by).  A
 * competing process on one of two cores takes 50%; an idle machine's
 * housekeeping stays near 1%. */
#define CAL_BUSY_SHARE 0.10
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
  /* the threads' round trip over the run's undisturbed multi-thread
   * points (team_rtt_ns): least, most, and how many were probed */
  double rtt_min_ns, rtt_max_ns;
  int rtt_points;
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

/* A finished run: its results and what they were measured on and with.
 * opt and hw are borrowed from the caller of the run and must outlive it. */
typedef struct cal_run_result {
  const cal_opts_t *opt;    /* the settings */
  const cal_hwinfo_t *hw;   /* the machine */
  int load_ok;              /* the load of others could be read */
  cal_results_t res;
} cal_run_result_t;

/* The result of section `id` when it ran, else NULL (borrowed). */
static inline const void *cal_results_get(const cal_results_t *res, int id) {
  return id >= 0 && id < CAL_NSECTIONS ? res->sec[id] : NULL;
}

/* Free every result and the quality notes; accepts a zeroed struct. */
void cal_results_free(cal_results_t *res);

struct cal_run; /* the running measurement (run/run.h) */

struct cal_vbuild; /* a profile view being built (profile/) */

typedef struct cal_section {
  const char *key;
  double budget_full_s, budget_quick_s;
  int derived;
  int (*measure)(struct cal_run *r);
  void (*drop)(void *result);
  json_t *(*write)(const cal_run_result_t *r, const void *result);
  void (*print)(const cal_run_result_t *r, const void *result, FILE *out);
  /* the profile object into its typed view (profile/section_view.h) */
  void (*read)(struct cal_vbuild *b, const json_t *obj);
  const char *charts;       /* the cal_charts[] names drawn from the
                               section's object, comma-separated; "" none */
} cal_section_t;

/* The table, CAL_NSECTIONS rows in section_list.h's order. */
extern const cal_section_t cal_sections[];

/* Every section function, declared from the table. */
#define CAL_SECTION(ID, key, full, quick, derived, m, d, w, p, rd, ch) \
  int m(struct cal_run *r);                                            \
  void d(void *result);                                                \
  json_t *w(const cal_run_result_t *r, const void *result);            \
  void p(const cal_run_result_t *r, const void *result, FILE *out);    \
  void rd(struct cal_vbuild *b, const json_t *obj);
#include "section_list.h"
#undef CAL_SECTION

/* The writer and table part of a section whose result is a
 * cal_points_result_t (results.h). */
json_t *cal_points_write(const cal_run_result_t *r, const void *result);
void cal_points_print(const cal_run_result_t *r, const void *result, FILE *out);

#endif
