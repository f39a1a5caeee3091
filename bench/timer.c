#include "timer.h"

#include <time.h>

double cal_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cal_timer_resolution(void) {
  static double res;
  if (res > 0.0)
    return res;
  double best = 1.0;
  for (int i = 0; i < 200; i++) {
    double t0 = cal_now(), t1;
    while ((t1 = cal_now()) == t0)
      ;
    if (t1 - t0 < best)
      best = t1 - t0;
  }
  res = best;
  return res;
}

void cal_sleep(double seconds) {
  struct timespec ts = {(time_t)seconds,
                        (long)((seconds - (double)(time_t)seconds) * 1e9)};
  while (nanosleep(&ts, &ts) != 0)
    ;
}
