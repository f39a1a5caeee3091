#include "commands.h"

#include <stddef.h>

#include "plan.h"
#include "plot.h"

/* One line per subcommand; `run` is also what a bare `calibrate` does. */
const cal_command_t cal_commands[] = {
    {"plan", "split work across machines by measured throughput; batch and memory fit", cal_cmd_plan},
    {"plot", "draw gnuplot charts of one or more profiles", cal_cmd_plot},
    {NULL, NULL, NULL},
};
