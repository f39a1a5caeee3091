/* The options of a measuring run, parsed once and then read-only.
 *
 * cal_opts_parse reads the flags every measuring command shares (no
 * hardware is touched); cal_opts_resolve then fills what depends on the
 * machine (thread count, default profile path, memory budget).  Sections
 * never change options: a section that needs other harness settings
 * copies opt->hcfg and passes the copy. */
#ifndef CAL_OPTIONS_H
#define CAL_OPTIONS_H

#include <stdint.h>

#include "harness.h"
#include "hwinfo.h"

/* Options of the batch sweep (--sweep-batch). */
typedef struct cal_sweep_opts {
  char preset[32];          /* layer preset name, "custom" when overridden */
  int64_t hidden, heads, kv_heads, ffn, seq;
  int modes;                /* bit 0 prefill, bit 1 decode, bit 2 train */
  /* the whole model (train): decoder layers (--layers, else the preset's)
   * and vocabulary (the preset's) */
  int64_t layers, vocab;
  int layers_given;
  int modes_given;          /* --mode was given */
  int64_t *batches;         /* user list (owned) or NULL for the default */
  size_t nbatches;
  int extend;               /* extend while still rising */
  int64_t max_batch;        /* never extend past this */
  int policy;               /* cal_curve_policy_t */
  double tolerance;         /* knee / shape tolerance, fraction */
  int64_t target_effective_batch; /* 0: none */
  double memory_budget;     /* bytes a point may use; 0: available memory */
  const char *dtype_asked;  /* --dtype: "fp32", "bf16" or NULL (auto) */
  /* resolved: the layer's dtype and why (auto: which way and why) */
  const char *dtype;
  char dtype_why[192];
} cal_sweep_opts_t;

/* Options of the attention section: a forced SIMD variant and, for
 * `calibrate attention` with shape flags, the one shape to run. */
typedef struct cal_attn_opts {
  int variant;              /* CAL_VARIANT_AUTO unless forced */
  int custom, with_ref;
  cal_params_t shape;
} cal_attn_opts_t;

typedef struct cal_opts {
  const char *cmd;          /* subcommand name for messages ("run", ...) */
  char out_path[4096];      /* profile destination, "-" for stdout */
  int quick, verbose;
  int progress;             /* cal_progress_mode_t */
  int threads;              /* the "all threads" count (<= usable) */
  uint64_t seed;
  unsigned sections;        /* CAL_SEC_* to run */
  unsigned sections_asked;  /* --sections (run only), 0: not given */
  double budget_scale;      /* multiplies every section's time budget */
  const char *plots_dir;    /* --plots DIR: draw charts after the run */
  int ci;                   /* --ci: fixed point lists, interleaved rounds */
  int allow_busy;           /* --allow-busy: keep contaminated figures */
  int partial;              /* --partial: SIGINT/SIGTERM write what finished */
  int no_wait;              /* --no-wait: refuse when another run measures */
  const char *gemm_engine;  /* --gemm-engine / CALIBRATE_GEMM_ENGINE: "auto"
                               or the one engine the GEMM section measures;
                               static storage */
  int rounds;               /* rounds per point (samples each: hcfg.samples) */
  cal_harness_cfg_t hcfg;
  cal_sweep_opts_t sweep;
  cal_attn_opts_t attn;
  /* parsed but resolved against the machine by cal_opts_resolve */
  long threads_asked;       /* -t; -1 when not given */
  const char *out_asked;    /* -o; NULL when not given */
  long samples_asked, rounds_asked;
  double min_time_asked, cv_asked;
  int no_progress, seq_given, gemm_engine_given;
} cal_opts_t;

/* Progress on stderr: off (--no-progress), a live line with an ETA on a
 * terminal, else one line per finished section. */
typedef enum cal_progress_mode {
  CAL_PROGRESS_OFF = 0,
  CAL_PROGRESS_LINE,
  CAL_PROGRESS_SECTIONS,
} cal_progress_mode_t;

/* What the command line asked for besides a run. */
typedef enum cal_opts_action {
  CAL_OPTS_RUN = 0,
  CAL_OPTS_HELP,            /* --help */
  CAL_OPTS_LIST_PRESETS,    /* --preset list */
  CAL_OPTS_VERSION,         /* --version */
} cal_opts_action_t;

/* Parse the options shared by measuring commands (argv[0] is the
 * command's name).  Returns 0 with *action set, or an exit code after
 * printing one line on stderr.  Free with cal_opts_free. */
int cal_opts_parse(cal_opts_t *o, int argc, char **argv, const char *cmd,
                   cal_opts_action_t *action);
/* Fill what depends on the machine: thread count, profile path (checked
 * writable), harness settings of --ci/--quick and the flags, memory
 * budget.  Returns 0 or an exit code after printing one line. */
int cal_opts_resolve(cal_opts_t *o, const cal_hwinfo_t *hw);
/* Accepts a zeroed struct. */
void cal_opts_free(cal_opts_t *o);

/* The layer presets as a table on out (--preset list). */
void cal_presets_print(FILE *out);

#endif
