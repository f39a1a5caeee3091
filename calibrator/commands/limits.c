/* calibrate peak-flops and calibrate bandwidth: one section each. */
#include <stdio.h>

#include "cli.h"
#include "measure.h"
#include "subcommands.h"

/* What the one-section commands say of the run options they share. */
static const cal_opt_t run_options[] = {
    {.type = CAL_OPT_TEXT,
     .help = "Options: -o FILE ('-': standard output), --quick, --threads N,\n"
             "--samples N, --min-time S, --rounds N, --seed N, --no-progress,\n"
             "--verbose, --allow-busy, --no-wait, --partial (see calibrate "
             "run --help).\n"},
    {.type = CAL_OPT_END},
};

#define ONE_SECTION_OPTS(name, head)                                           \
  {name, head,                                                                 \
   {{run_options, 17, 0}, {cal_opts_run_rows, 0, 0},                          \
    {cal_opts_sweep_rows, 0, 0}, {cal_opt_help_rows, 17, 0}},                 \
   "\n" CAL_HELP_EXIT_MEASURE}

static const cal_opt_cmd_t peak_opts = ONE_SECTION_OPTS(
    "peak-flops",
    "Usage: calibrate peak-flops [options]\n\n"
    "Measure only the machine's compute peak: register-resident\n"
    "multiply-add kernels (fp64, fp32 FMA; AVX512_BF16 and VNNI int8 dot\n"
    "products and AVX512_FP16 FMA where the CPU has them) and the AMX\n"
    "matrix engine's tile loops (bf16, int8; where the CPU has AMX and\n"
    "the kernel grants the tile state) at one pinned thread and all\n"
    "threads, the clock under vector load, and the theoretical peak they\n"
    "are a fraction of.  A loop the machine cannot run is a skipped\n"
    "point with the reason.  Writes a profile with its peak section.\n\n");

static const cal_opt_cmd_t bandwidth_opts = ONE_SECTION_OPTS(
    "bandwidth",
    "Usage: calibrate bandwidth [options]\n\n"
    "Measure only memory bandwidth: read, copy and triad kernels (STREAM\n"
    "byte counts; write-allocate traffic reported apart) inside L1, L2,\n"
    "L3 and at 4x the last level, at one thread and all threads, and a\n"
    "working-set staircase for the plot.  Writes a profile with its\n"
    "bandwidth section.\n\n");

/* --sweep-batch belongs to calibrate run: a command measuring one section
 * refuses it rather than ignore it. */
static int no_sweep(const cal_opts_t *o) {
  if (o->sections_asked)
    return cal_usage(o->cmd, "--sections belongs to 'calibrate run' "
                             "(this command measures one section)");
  if (o->sections & CAL_SEC_BATCH)
    return cal_usage(o->cmd, "--sweep-batch belongs to 'calibrate run' "
                             "(this command measures one section)");
  return 0;
}

static int only_peak(cal_opts_t *o, void *arg) {
  int rc = no_sweep(o);
  o->sections = CAL_SEC_PEAK;
  return rc;
}

static int only_bandwidth(cal_opts_t *o, void *arg) {
  int rc = no_sweep(o);
  o->sections = CAL_SEC_BANDWIDTH;
  return rc;
}

int cal_cmd_peak_flops(int argc, char **argv) {
  static const cal_measure_cmd_t mc = {&peak_opts, 0, only_peak};
  return cal_measure_main(&mc, argc, argv, NULL);
}

int cal_cmd_bandwidth(int argc, char **argv) {
  static const cal_measure_cmd_t mc = {&bandwidth_opts, 0,
                                       only_bandwidth};
  return cal_measure_main(&mc, argc, argv, NULL);
}
