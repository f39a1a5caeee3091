/* Exit codes of the calibrate program, the same for every command. */
#ifndef CAL_EXIT_H
#define CAL_EXIT_H

enum {
  CAL_EXIT_OK = 0,
  CAL_EXIT_REGRESSION = 1, /* compare found a regression */
  CAL_EXIT_NOFIT = 1,      /* plan: the model fits on no machine alone */
  CAL_EXIT_USAGE = 2,      /* usage or input error */
  CAL_EXIT_VERIFY = 3,     /* a measurement failed verification */
  CAL_EXIT_INTERNAL = 4,   /* out of memory, system failure */
  CAL_EXIT_BUSY = 5,       /* the machine was busy: headline figures
                              withheld (contaminated), or another run holds
                              the machine and --no-wait was given */
};

#endif
