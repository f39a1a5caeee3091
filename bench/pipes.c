#include "pipes.h"

#include <omp.h>
#include <stdatomic.h>

#include "timer.h"

/* Two doubles per operation: baseline x86-64 and every other target have
 * a vector type this wide.  Fourteen independent multiply chains, held in
 * registers (fourteen and the factor fit the sixteen a baseline x86-64
 * has), ask a core's two multiply pipes for seven cycles an iteration
 * while each chain's latency is three to five: one thread keeps the pipes
 * full, so a second on the same core (its SMT sibling) halves both.
 * Chains that spill to the stack wait on it, at about twice the pipes'
 * time an iteration, and a sibling fits into the idle cycles (a team
 * that reads 0.85 while its FMA loops run at half rate): they are written
 * out one by one so that no optimisation level decides how many stay in
 * registers. */
typedef double v2d __attribute__((vector_size(16)));
#define SPIN_CHAINS(X)                                                       \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define SPIN_INIT(j) v2d a##j = {1.0 + (j), 2.0 + (j)};
#define SPIN_MUL(j) a##j *= m;
#define SPIN_SUM(j) s += a##j;

/* A factor a hair below 1: the chains stay near their start (no
 * overflow or subnormals in the 2^40 iterations allowed).  Volatile, so
 * that spin() reads memory and is no pure function: the compiler would
 * otherwise hand a second call with the same count the first one's
 * result, and a timing of it would take no time. */
static volatile const double factor[2] = {0.9999999999, 0.9999999998};

static double spin(long iters) {
  const v2d m = {factor[0], factor[1]};
  SPIN_CHAINS(SPIN_INIT)
  for (long i = 0; i < iters; i++) {
    SPIN_CHAINS(SPIN_MUL)
  }
  v2d s = {0.0, 0.0};
  SPIN_CHAINS(SPIN_SUM)
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

/* The line the two threads of a round trip hand back and forth, alone in
 * its cache line. */
static _Alignas(64) atomic_long baton;

/* A round trip's timing stops after this long (a thread that shares its
 * CPU with another waits for it to be scheduled at every hand-over). */
#define RTT_MAX_S 0.05

/* Up to `rounds` round trips of the baton between thread 0 and thread j
 * of the team: thread 0 hands out odd values, thread j answers with the
 * next even one; -1 ends it early (RTT_MAX_S).  The mean round trip in
 * seconds, on thread 0. */
static double trips(int j, long rounds) {
  const int me = omp_get_thread_num();
  double t = 0;
#pragma omp master
  atomic_store(&baton, 0);
#pragma omp barrier
  if (me == 0) {
    const double t0 = cal_now();
    long i = 0;
    for (; i < rounds; i++) {
      atomic_store_explicit(&baton, 2 * i + 1, memory_order_release);
      while (atomic_load_explicit(&baton, memory_order_acquire) != 2 * i + 2)
        ;
      if (i % 64 == 63 && cal_now() - t0 > RTT_MAX_S) {
        i++;
        break;
      }
    }
    t = (cal_now() - t0) / (double)i;
    atomic_store_explicit(&baton, -1, memory_order_release);
  } else if (me == j) {
    for (long i = 0;; i++) {
      long b;
      while ((b = atomic_load_explicit(&baton, memory_order_acquire)) !=
                 2 * i + 1 &&
             b != -1)
        ;
      if (b == -1)
        break;
      atomic_store_explicit(&baton, 2 * i + 2, memory_order_release);
    }
  }
#pragma omp barrier
  return t;
}

double cal_team_rtt_probe(int n, long rounds, int tries) {
  if (n < 2 || rounds < 1)
    return -1;
  double worst = 0;
#pragma omp parallel num_threads(n)
  {
    for (int j = 1; j < omp_get_num_threads(); j++) {
      double best = 0;
      for (int i = 0; i < (tries < 1 ? 1 : tries); i++) {
        double t = trips(j, rounds);
        if (i == 0 || t < best)
          best = t;
      }
#pragma omp master
      if (best > worst)
        worst = best;
    }
  }
  return worst > 0 ? worst * 1e9 : -1;
}

double cal_team_rtt_least(int n, int probes, double gap_s) {
  double least = -1;
  for (int i = 0; i < probes; i++) {
    cal_sleep(gap_s);
    double r = cal_team_rtt_probe(n, CAL_TEAM_RTT_ROUNDS, 2);
    if (r > 0 && (least < 0 || r < least))
      least = r;
  }
  return least;
}

double cal_team_rtt_wait(int n, double limit_ns, double wait_s, double gap_s) {
  double t0 = cal_now(), r;
  do {
    cal_sleep(gap_s);
    r = cal_team_rtt_probe(n, CAL_TEAM_RTT_ROUNDS, 2);
  } while (r > limit_ns && cal_now() - t0 < wait_s);
  return r;
}
