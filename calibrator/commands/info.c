/* calibrate info: what the machine is. */
#include <stdio.h>
#include <string.h>

#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "hwinfo.h"
#include "machine_json.h"
#include "opt_table.h"
#include "profile.h"
#include "subcommands.h"

static const cal_opt_t info_rows[] = {
    {.type = CAL_OPT_FLAG, .name = "json", .off = 0,
     .help = "print the same as JSON (the profile's machine and\n"
             "blas) on standard output"},
    CAL_OPT_LAST("show this help"),
};

/* The object parsed into is the int --json sets. */
static const cal_opt_cmd_t info_opts = {
    "info",
    "Usage: calibrate info [--json]\n\n"
    "Print what this machine is: CPU, ISA features, topology, caches,\n"
    "memory, BLAS library, clocks, and the cores this process may use\n"
    "(affinity mask and cgroup CPU quota).\n\n",
    {{info_rows, 17, 0}},
    "\nExit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON,
};

int cal_cmd_info(int argc, char **argv) {
  int json = 0, first;
  int rc = cal_opt_parse(&info_opts, &json, argc, argv, &first);
  if (rc >= 0)
    return rc;
  if (first < argc)
    return cal_usage("info", "unexpected argument '%s'", argv[first]);
  cal_hwinfo_t hw;
  rc = cal_hwinfo_read(&hw);
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
