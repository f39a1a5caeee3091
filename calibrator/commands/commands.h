/* Subcommands of the calibrate program.  Each takes the arguments after its
 * name (argv[0] is the subcommand name) and returns the process exit code:
 * CAL_EXIT_OK, CAL_EXIT_REGRESSION, CAL_EXIT_USAGE, CAL_EXIT_VERIFY. */
#ifndef CAL_COMMANDS_H
#define CAL_COMMANDS_H

#include "cal_exit.h"

typedef struct cal_command {
  const char *name;
  const char *summary; /* one line for the program's --help; NULL: a
                          former name, not listed */
  int (*main)(int argc, char **argv);
} cal_command_t;

/* The command table, in commands.c, ends with a zeroed entry. */
extern const cal_command_t cal_commands[];

#include "build_info.h"

#endif
