#include <stdio.h>
#include <string.h>

#include "commands.h"

int main(int argc, char **argv) {
  if (argc > 1)
    for (const cal_command_t *c = cal_commands; c->name; c++)
      if (strcmp(argv[1], c->name) == 0)
        return c->main(argc - 1, argv + 1);
  fprintf(stderr, "calibrate: not yet implemented\n");
  return CAL_EXIT_USAGE;
}
