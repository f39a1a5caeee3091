#include "commands.h"

#include <stddef.h>

/* One line per subcommand; `run` is also what a bare `calibrate` does. */
const cal_command_t cal_commands[] = {
    {NULL, NULL, NULL},
};
