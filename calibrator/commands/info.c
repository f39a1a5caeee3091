/* calibrate info: what the machine is. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "hwinfo.h"
#include "machine_json.h"
#include "profile.h"
#include "subcommands.h"

static void info_help(void) {
  printf("Usage: calibrate info [--json]\n\n"
         "Print what this machine is: CPU, ISA features, topology, caches,\n"
         "memory, BLAS library, clocks, and the cores this process may use\n"
         "(affinity mask and cgroup CPU quota).\n\n"
         "      --json     print the same as JSON (the profile's machine and\n"
         "                 blas) on standard output\n"
         "  -h, --help     show this help\n"
         "  -V, --version  show the version\n\n"
         "Exit status:\n"
         "  0  success\n" CAL_HELP_EXIT_COMMON);
}

int cal_cmd_info(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  int json = 0, c;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
    switch (c) {
    case 'j': json = 1; break;
    case 'h': info_help(); return CAL_EXIT_OK;
    case 'V': return cal_print_version();
    default: return cal_bad_option("info", c, argv);
    }
  }
  if (optind < argc)
    return cal_usage("info", "unexpected argument '%s'", argv[optind]);
  cal_hwinfo_t hw;
  int rc = cal_hwinfo_read(&hw);
  if (rc < 0) {
    fprintf(stderr, "calibrate info: cannot read the machine: %s\n",
            cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  if (!json) {
    cal_hwinfo_print(stdout, &hw);
    return CAL_EXIT_OK;
  }
  json_t *root = json_pack("{s:o, s:o}", "machine", cal_hwinfo_machine_json(&hw),
                           "blas", cal_hwinfo_blas_json(&hw));
  char err[256];
  rc = root ? cal_json_write_atomic(root, "-", err, sizeof err) : CAL_ENOMEM;
  json_decref(root);
  if (rc < 0) {
    fprintf(stderr, "calibrate info: %s\n", rc == CAL_ENOMEM ? "out of memory" : err);
    return CAL_EXIT_INTERNAL;
  }
  return CAL_EXIT_OK;
}
