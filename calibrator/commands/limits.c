/* calibrate peak-flops and calibrate bandwidth: one section each. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "run.h"
#include "subcommands.h"

static const char run_options[] =
    "Options: -o FILE, --quick, --threads N, --samples N, --min-time S,\n"
    "--rounds N, --seed N, --no-progress, --verbose (see calibrate run --help).\n";

static void peak_help(void) {
  printf("Usage: calibrate peak-flops [options]\n\n"
         "Measure only the machine's compute peak: register-resident\n"
         "multiply-add kernels (fp64, fp32 FMA; AVX512_BF16 and VNNI int8 dot\n"
         "products where the CPU has them) at one pinned thread and all\n"
         "threads, the clock under vector load, and the theoretical peak they\n"
         "are a fraction of.  Writes a profile with its peak section.\n\n%s",
         run_options);
}

static void bandwidth_help(void) {
  printf("Usage: calibrate bandwidth [options]\n\n"
         "Measure only memory bandwidth: read, copy and triad kernels (STREAM\n"
         "byte counts; write-allocate traffic reported apart) inside L1, L2,\n"
         "L3 and at 4x the last level, at one thread and all threads, and a\n"
         "working-set staircase for the plot.  Writes a profile with its\n"
         "bandwidth section.\n\n%s",
         run_options);
}

static int one_section(int argc, char **argv, const char *cmd, unsigned mask,
                       int (*section)(cal_run_t *), void (*help)(void)) {
  cal_run_t r;
  memset(&r, 0, sizeof r);
  int rc = cal_run_parse(&r, argc, argv, cmd);
  if (rc == -2) {
    help();
    rc = CAL_EXIT_OK;
  } else if (rc == -3) {
    rc = cal_usage(cmd, "--preset belongs to the batch sweep");
  }
  if (rc >= 0) {
    cal_run_free(&r);
    return rc;
  }
  r.sections = mask;
  int (*sections[1])(cal_run_t *) = {section};
  rc = cal_run_main(&r, sections, 1);
  cal_run_free(&r);
  return rc;
}

int cal_cmd_peak_flops(int argc, char **argv) {
  return one_section(argc, argv, "peak-flops", CAL_SEC_PEAK, cal_section_peak,
                     peak_help);
}

int cal_cmd_bandwidth(int argc, char **argv) {
  return one_section(argc, argv, "bandwidth", CAL_SEC_BANDWIDTH,
                     cal_section_bandwidth, bandwidth_help);
}
