/* Threads really used: whether the threads of a multi-thread point ran
 * side by side, judged from the CPU time the process got over the point's
 * wall time (robust for BLAS pools the harness does not control) and the
 * CPUs the team's threads were on.  Pure functions: figures in, verdict
 * out. */
#ifndef CAL_PARALLEL_H
#define CAL_PARALLEL_H

#include <stddef.h>

/* The most threads whose CPUs a point records. */
#define CAL_PAR_MAX_CPUS 64
/* Threads ran side by side when the CPU time over the wall time is at
 * least this share of the thread count. */
#define CAL_PAR_MIN_SHARE 0.8

/* 1 when `threads` (> 1) threads did not run side by side: cpu_s / wall_s
 * below CAL_PAR_MIN_SHARE x threads (when both are known, > 0), or two of
 * the ncpus recorded CPUs (-1: unknown, ignored) the same; `why` gets the
 * reason.  0 otherwise (one thread, or nothing known), why "". */
int cal_parallel_judge(int threads, double cpu_s, double wall_s,
                       const int *cpus, int ncpus, char *why, size_t len);

/* 1 when a point's pipes probe (cal_pipes_probe right after it, > 0)
 * fell below CAL_PIPES_MIN while the machine's threads have been seen to
 * compute side by side in this run (`best`, the highest probe so far, at
 * least CAL_PIPES_MIN): its threads shared a core's pipes while it ran
 * (the hypervisor placed the vCPUs on one core, or a sibling hardware
 * thread was busy).  A machine whose threads never computed side by side
 * is the machine, not a disturbance: 0.  `why` as above. */
int cal_parallel_judge_pipes(int threads, double rate, double best,
                             char *why, size_t len);

/* What the run does with a point after judging it. */
typedef enum {
  CAL_PAR_KEEP = 0, /* ran side by side */
  CAL_PAR_AGAIN,    /* measure it again (first time, re-measuring time left) */
  CAL_PAR_MARK,     /* keep the samples, mark the point, never a headline */
} cal_par_action_t;

/* not_parallel from cal_parallel_judge; tries: how many times the point was
 * measured already; left_s: the run's re-measuring time left. */
cal_par_action_t cal_parallel_action(int not_parallel, int tries,
                                     double left_s);

#endif
