#include "pipes.h"

#include <omp.h>

#include "timer.h"

/* Two doubles per operation: baseline x86-64 and every other target have
 * a vector type this wide.  Sixteen independent chains of a multiply and
 * an add keep a core's floating-point pipes full (latency 3-5 cycles, two
 * to four pipes), so two threads on one core cannot hide each other. */
typedef double v2d __attribute__((vector_size(16)));
#define CHAINS 16

static double spin(long iters) {
  v2d acc[CHAINS];
  const v2d m = {0.999999999, 0.999999998}, c = {1e-9, 2e-9};
  for (int j = 0; j < CHAINS; j++)
    acc[j] = (v2d){1.0 + j, 2.0 + j};
  for (long i = 0; i < iters; i++)
    for (int j = 0; j < CHAINS; j++)
      acc[j] = acc[j] * m + c;
  v2d s = acc[0];
  for (int j = 1; j < CHAINS; j++)
    s += acc[j];
  return s[0] + s[1];
}

static volatile double sink;

static double time_one(long iters) {
  double t = cal_now();
  sink = spin(iters);
  return cal_now() - t;
}

/* The slowest thread's own time, each timed from a barrier: waking a
 * sleeping team (an idle vCPU is halted, and waking it can take a
 * millisecond) is not the pipes' doing. */
static double time_team(int n, long iters) {
  double s = 0, worst = 0;
#pragma omp parallel num_threads(n) reduction(+ : s) reduction(max : worst)
  {
#pragma omp barrier
    double t = cal_now();
    s += spin(iters);
    worst = cal_now() - t;
  }
  sink = s;
  return worst;
}

double cal_pipes_probe(int n, double seconds, int tries) {
  if (n < 2)
    return -1;
  long iters = 1024;
  while (time_one(iters) < seconds / 4 && iters < (1L << 40))
    iters *= 2;
  double t = time_one(iters);
  iters = (long)(iters * (seconds / (t > 0 ? t : seconds)));
  if (iters < 1)
    iters = 1;
  double one = 0, team = 0;
  for (int i = 0; i < (tries < 1 ? 1 : tries); i++) {
    double a = time_team(n, iters), b = time_one(iters);
    if (i == 0 || a < team)
      team = a;
    if (i == 0 || b < one)
      one = b;
  }
  return team > 0 ? one / team : -1;
}
