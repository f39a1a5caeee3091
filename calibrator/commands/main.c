/* calibrate: hardware calibration for ML work. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hwinfo.h"

static void usage(FILE *out) {
  fprintf(out, "Usage: calibrate [COMMAND] [options]\n\n"
               "Measure what this machine can really do for ML work and write\n"
               "a calibrated profile (JSON).  With no command, runs `run`.\n\n"
               "Commands:\n");
  for (const cal_command_t *c = cal_commands; c->name; c++)
    if (c->summary)
      fprintf(out, "  %-10s  %s\n", c->name, c->summary);
  fprintf(out, "\n'calibrate COMMAND --help' describes a command's options.\n"
               "  -h, --help     show this help\n"
               "  -V, --version  show the version\n\n"
               "Output goes to standard output, or with -o FILE to FILE\n"
               "(replaced atomically; '-': standard output); a measuring\n"
               "command's -o is its profile (its table on standard output),\n"
               "plot's -o a directory of charts.\n\n"
               "Exit status (every command; each --help lists its own):\n"
               "  0  success\n"
               "  1  compare: a regression; plan: the model fits on no\n"
               "     machine alone\n"
               "  2  usage or input error (one line on standard error)\n"
               "  3  a result failed verification\n"
               "  4  internal error\n"
               "  5  the machine was busy\n"
               "  128+N  a measuring run stopped by signal N (--partial)\n");
}

int main(int argc, char **argv) {
  /* Before anything else: make sure OpenBLAS runs kernels this CPU can
   * use (may re-execute the program once). */
  cal_blas_fix_coretype(argv);
  if (argc > 1) {
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CAL_EXIT_OK;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
      return cal_print_version();
    }
    for (const cal_command_t *c = cal_commands; c->name; c++)
      if (strcmp(a, c->name) == 0)
        return c->main(argc - 1, argv + 1);
    if (a[0] != '-') {
      return cal_usage(NULL, "unknown command '%s'", a);
    }
  }
  /* options only: the default run */
  return cal_commands[0].main(argc, argv);
}
