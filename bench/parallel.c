#include "parallel.h"

#include <stdio.h>

#include "pipes.h"

int cal_parallel_judge(int threads, double cpu_s, double wall_s,
                       const int *cpus, int ncpus, char *why, size_t len) {
  if (why && len)
    why[0] = '\0';
  if (threads < 2)
    return 0;
  for (int i = 0; cpus && i < ncpus; i++)
    for (int j = 0; j < i; j++)
      if (cpus[i] >= 0 && cpus[i] == cpus[j]) {
        if (why && len)
          snprintf(why, len, "threads %d and %d ran on the same CPU %d", j, i,
                   cpus[i]);
        return 1;
      }
  if (cpu_s > 0 && wall_s > 0 &&
      cpu_s / wall_s < CAL_PAR_MIN_SHARE * threads) {
    if (why && len)
      snprintf(why, len,
               "its %d threads got %.2f CPU-seconds per second, below "
               "%.1f x %d",
               threads, cpu_s / wall_s, CAL_PAR_MIN_SHARE, threads);
    return 1;
  }
  return 0;
}

int cal_parallel_judge_pipes(int threads, double rate, double best,
                             char *why, size_t len) {
  if (why && len)
    why[0] = '\0';
  if (threads < 2 || rate <= 0 || best < CAL_PIPES_MIN ||
      rate >= CAL_PIPES_MIN)
    return 0;
  if (why && len)
    snprintf(why, len,
             "its %d threads computed at %.2f of %d cores' rate right after "
             "it (%.2f earlier in the run): they shared a core's pipes",
             threads, rate, threads, best);
  return 1;
}

cal_par_action_t cal_parallel_action(int not_parallel, int tries,
                                     double left_s) {
  if (!not_parallel)
    return CAL_PAR_KEEP;
  return tries < 2 && left_s > 0 ? CAL_PAR_AGAIN : CAL_PAR_MARK;
}
