#include "commands.h"

#include <stddef.h>

#include "peak_cmd.h"

/* One line per subcommand; `run` is also what a bare `calibrate` does. */
const cal_command_t cal_commands[] = {
    {"peak", "peak, knee and shape of throughput-versus-batch curves (CSV)",
     cal_cmd_peak},
    {NULL, NULL, NULL},
};
