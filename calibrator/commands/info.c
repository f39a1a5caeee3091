/* calibrate info: what the machine is, and whether it is a virtual
 * machine whose hypervisor steals CPU time (run/virt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "cal_isa.h"
#include "hwinfo.h"
#include "machine_json.h"
#include "opt_table.h"
#include "profile.h"
#include "subcommands.h"
#include "virt.h"

#define CMD "info"

/* How long steal time is watched: /proc/stat counts 10 ms ticks, so a
 * quarter second on two cores resolves 2%. */
#define INFO_STEAL_WATCH_S 0.25

typedef struct info_args {
  int json;
  const char *out;
} info_args_t;

#define OFF(field) offsetof(info_args_t, field)

static const cal_opt_t info_rows[] = {
    {.type = CAL_OPT_FLAG, .name = "json", .off = OFF(json),
     .help = "print the same as JSON (the profile's machine and\n"
             "blas, and virtualization)"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(out), .set = cal_opt_output_file,
     .help = "write there atomically instead of standard output\n"
             "('-': standard output)"},
    CAL_OPT_LAST("show this help"),
};

static const cal_opt_cmd_t info_opts = {
    CMD,
    "Usage: calibrate info [--json] [-o FILE]\n\n"
    "Print what this machine is: CPU, ISA features, topology, caches,\n"
    "memory, BLAS library, clocks, the cores this process may use\n"
    "(affinity mask and cgroup CPU quota), the hypervisor when it is a\n"
    "virtual machine (CPUID, else /sys/hypervisor) and the CPU time the\n"
    "hypervisor gave other guests (steal, from /proc/stat: over a quarter\n"
    "second now, and since boot).  Steal slows every figure a run\n"
    "measures.\n\n",
    {{info_rows, 17, 0}},
    "\nExit status:\n"
    "  0  success\n" CAL_HELP_EXIT_COMMON,
};

/* The machine as JSON or text, written atomically to out; 0, CAL_ENOMEM,
 * or another code with err filled. */
static int write_info(const cal_hwinfo_t *hw, const cal_virt_t *v, int json,
                      const char *out, char *err, size_t errlen) {
  if (json) {
    json_t *root = json_pack("{s:o, s:o, s:o}", "machine",
                             cal_hwinfo_machine_json(hw), "blas",
                             cal_hwinfo_blas_json(hw), "virtualization",
                             cal_virt_json(v));
    int rc = root ? cal_json_write_atomic(root, out, err, errlen) : CAL_ENOMEM;
    json_decref(root);
    return rc;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem)
    return CAL_ENOMEM;
  cal_hwinfo_print(mem, hw);
  cal_virt_print(mem, v);
  int rc = fclose(mem) != 0 ? CAL_ENOMEM
                            : cal_write_atomic(out, text, len, err, errlen);
  free(text);
  return rc;
}

int cal_cmd_info(int argc, char **argv) {
  info_args_t a = {0, NULL};
  int first;
  int rc = cal_opt_parse(&info_opts, &a, argc, argv, &first);
  if (rc >= 0)
    return rc;
  if (first < argc)
    return cal_usage(CMD, "unexpected argument '%s'", argv[first]);
  int variant; /* the cap the measuring commands refuse, refused here too */
  if (cal_variant_best(&variant) == CAL_EINVAL)
    return cal_usage(CMD, "CALIBRATE_ISA is not one of scalar, avx2, avx512, "
                          "auto");
  const char *out = a.out ? a.out : "-";
  char err[512];
  if (cal_check_writable(out, err, sizeof err) < 0)
    return cal_usage(CMD, "cannot write %s: %s", out, err);
  cal_hwinfo_t hw;
  rc = cal_hwinfo_read(&hw);
  if (rc < 0)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "cannot read the machine: %s",
                    cal_strerror(rc));
  cal_virt_t v;
  cal_virt_read(&v, INFO_STEAL_WATCH_S);
  rc = write_info(&hw, &v, a.json, out, err, sizeof err);
  if (rc == CAL_ENOMEM)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  return rc < 0 ? cal_usage(CMD, "%s", err) : CAL_EXIT_OK;
}
