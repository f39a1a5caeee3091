/* Subcommands of the calibrate program.  Each takes the arguments after its
 * name (argv[0] is the subcommand name) and returns the process exit code:
 * CAL_EXIT_OK, CAL_EXIT_REGRESSION, CAL_EXIT_USAGE, CAL_EXIT_VERIFY. */
#ifndef CAL_COMMANDS_H
#define CAL_COMMANDS_H

enum {
  CAL_EXIT_OK = 0,
  CAL_EXIT_REGRESSION = 1, /* compare found a regression */
  CAL_EXIT_USAGE = 2,      /* usage or input error */
  CAL_EXIT_VERIFY = 3,     /* a measurement failed verification */
  CAL_EXIT_INTERNAL = 4,   /* out of memory, system failure */
};

typedef struct cal_command {
  const char *name;
  const char *summary; /* one line for the program's --help */
  int (*main)(int argc, char **argv);
} cal_command_t;

/* The command table, in commands.c, ends with a zeroed entry. */
extern const cal_command_t cal_commands[];

/* The program's version string, e.g. "0.1.0". */
extern const char cal_version[];
/* git describe of the build, "unknown" outside a checkout. */
extern const char cal_git[];

#endif
