/* The shared path of the measuring commands (run, attention, peak-flops,
 * bandwidth): parse the run options, read the machine, let the command
 * choose its sections, run them. */
#ifndef CAL_MEASURE_H
#define CAL_MEASURE_H

#include <jansson.h>
#include <stdio.h>

#include "run.h"

typedef struct cal_measure_cmd {
  const cal_opt_cmd_t *opts;   /* its options, name and help */
  int list_presets;            /* --preset list lists them (else an error) */
  /* after the options are resolved: set o->sections and anything else the
   * command adds; returns 0 or an exit code after printing one line */
  int (*prepare)(cal_opts_t *o, void *arg);
} cal_measure_cmd_t;

/* The exit-status paragraph of every measuring command's --help. */
#define CAL_HELP_EXIT_MEASURE                                                  \
  "Exit status:\n"                                                           \
  "  0  success\n"                                                           \
  "  2  usage or input error (one line on standard error)\n"                 \
  "  3  a result failed verification\n"                                      \
  "  4  internal error\n"                                                    \
  "  5  the machine was busy (headline figures withheld, or --no-wait\n"     \
  "     and another run holds the machine)\n"                               \
  "  128+N  interrupted by signal N with --partial\n"

/* The default run's sections (run and fleet's node run): every section but
 * the batch sweep, which --sweep-batch and --ci add (--ci drops the thread
 * scaling); --sections replaces them.  A cal_measure_cmd_t.prepare. */
int cal_measure_default_sections(cal_opts_t *o, void *arg);

/* The options of `calibrate run` (commands/run.c). */
extern const cal_opt_cmd_t cal_run_opts;

/* Parse argv, measure, write the profile, print the table (and charts).
 * Returns the exit code. */
int cal_measure_main(const cal_measure_cmd_t *mc, int argc, char **argv,
                     void *arg);

/* A fleet node's run of the parsed options o (cal_opts_parse; resolved
 * here, with the default run's sections): its table on `table`, its
 * profile into *profile (new reference; NULL when none) instead of a file.
 * Returns the run's exit code, as `calibrate run` would exit. */
int cal_measure_node(cal_opts_t *o, FILE *table, json_t **profile);

#endif
