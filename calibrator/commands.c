#include "commands.h"

#include <stddef.h>

#include "compare.h"

/* One line per subcommand; `run` is also what a bare `calibrate` does. */
const cal_command_t cal_commands[] = {
    {"compare", "compare two profiles; exit 1 on a regression", cal_cmd_compare},
    {"export", "write a profile as Bencher BMF or github-action-benchmark JSON", cal_cmd_export},
    {NULL, NULL, NULL},
};
