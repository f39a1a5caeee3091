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

#include "hwinfo.h"
#include "opt_table.h"
#include "settings.h"

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
  CAL_OPTS_DONE,            /* --help or --version: printed */
  CAL_OPTS_LIST_PRESETS,    /* --preset list */
} cal_opts_action_t;

/* The rows every measuring command shares (option_rows.c): the run's own
 * flags, and the batch sweep's (led by their help heading).  A measuring
 * command's table (cal_opt_cmd_t) is its own rows, these, and the help
 * rows. */
extern const cal_opt_t cal_opts_run_rows[];
extern const cal_opt_t cal_opts_sweep_rows[];

/* Parse a measuring command's options by its table t (argv[0] is the
 * command's name, t->cmd the name in messages).  Returns 0 with *action
 * set, or an exit code after printing one line on stderr.  Free with
 * cal_opts_free. */
int cal_opts_parse(cal_opts_t *o, int argc, char **argv,
                   const cal_opt_cmd_t *t, cal_opts_action_t *action);
/* --gemm-engine, or CALIBRATE_GEMM_ENGINE when flag is NULL: 0, or exit
 * 2 after its line. */
int cal_opts_gemm_engine(cal_opts_t *o, const char *arg, const char *flag);
/* The names --gemm-engine takes, space-separated (shell completion). */
void cal_opts_gemm_engines(FILE *out);
/* Fill what depends on the machine: thread count, profile path (checked
 * writable), harness settings of --ci/--quick and the flags, memory
 * budget.  Returns 0 or an exit code after printing one line. */
int cal_opts_resolve(cal_opts_t *o, const cal_hwinfo_t *hw);
/* Accepts a zeroed struct. */
void cal_opts_free(cal_opts_t *o);

/* The layer presets as a table on out (--preset list). */
void cal_presets_print(FILE *out);

#endif
