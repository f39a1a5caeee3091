/* Threads really used: the judgement of a multi-thread point from
 * synthetic CPU and wall times and thread CPUs, and what the run does with
 * it (measure again once while re-measuring time lasts, else mark). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "parallel.h"
#include "pipes.h"
#include "timer.h"
#include "test_util.h"

static void judge_cpu_time(void **state) {
  (void)state;
  char why[160];
  /* one thread is never judged */
  assert_int_equal(cal_parallel_judge(1, 0.1, 1.0, NULL, 0, why, sizeof why),
                   0);
  assert_string_equal(why, "");
  /* two threads with 1.9 CPU-seconds per second: side by side */
  assert_int_equal(cal_parallel_judge(2, 1.9, 1.0, NULL, 0, why, sizeof why),
                   0);
  /* exactly at 0.8 x 2 */
  assert_int_equal(cal_parallel_judge(2, 1.6, 1.0, NULL, 0, why, sizeof why),
                   0);
  /* a 2-thread point at 1-thread speed: 1.0 CPU-seconds per second */
  assert_int_equal(cal_parallel_judge(2, 1.0, 1.0, NULL, 0, why, sizeof why),
                   1);
  assert_non_null(strstr(why, "got 1.00 CPU-seconds per second"));
  assert_non_null(strstr(why, "0.8 x 2"));
  assert_int_equal(cal_parallel_judge(8, 6.0, 1.0, NULL, 0, NULL, 0), 1);
  assert_int_equal(cal_parallel_judge(8, 6.5, 1.0, NULL, 0, NULL, 0), 0);
  /* nothing known: no verdict */
  assert_int_equal(cal_parallel_judge(2, 0.0, 1.0, NULL, 0, why, sizeof why),
                   0);
  assert_int_equal(cal_parallel_judge(2, 1.0, 0.0, NULL, 0, why, sizeof why),
                   0);
}

static void judge_cpus(void **state) {
  (void)state;
  char why[160];
  const int apart[4] = {0, 1, 2, 3}, shared[4] = {0, 1, 1, 3},
            unknown[3] = {-1, -1, 2};
  assert_int_equal(cal_parallel_judge(4, 3.9, 1.0, apart, 4, why, sizeof why),
                   0);
  /* two threads on CPU 1, even with CPU time enough */
  assert_int_equal(cal_parallel_judge(4, 3.9, 1.0, shared, 4, why, sizeof why),
                   1);
  assert_string_equal(why, "threads 1 and 2 ran on the same CPU 1");
  /* unknown CPUs are no evidence */
  assert_int_equal(
      cal_parallel_judge(3, 2.9, 1.0, unknown, 3, why, sizeof why), 0);
}

static void action(void **state) {
  (void)state;
  assert_int_equal(cal_parallel_action(0, 1, 10.0), CAL_PAR_KEEP);
  assert_int_equal(cal_parallel_action(0, 2, 0.0), CAL_PAR_KEEP);
  /* first measurement, time left: again */
  assert_int_equal(cal_parallel_action(1, 1, 10.0), CAL_PAR_AGAIN);
  /* no re-measuring time left, or measured twice: mark */
  assert_int_equal(cal_parallel_action(1, 1, 0.0), CAL_PAR_MARK);
  assert_int_equal(cal_parallel_action(1, 2, 10.0), CAL_PAR_MARK);
}

/* A marked point is never a headline; a plain ok one may be. */
static void headline(void **state) {
  (void)state;
  cal_point_t pt;
  memset(&pt, 0, sizeof pt);
  pt.status = CAL_POINT_OK;
  assert_true(CAL_POINT_HEADLINE(&pt));
  strcpy(pt.not_parallel, "threads 0 and 1 ran on the same CPU 0");
  assert_false(CAL_POINT_HEADLINE(&pt));
  pt.not_parallel[0] = '\0';
  pt.status = CAL_POINT_CONTAMINATED;
  assert_false(CAL_POINT_HEADLINE(&pt));
}

/* Two measured 2-thread points of one kernel, two samples of 1 s each. */
static void two_points(cal_point_t *a, cal_point_t *b) {
  static const cal_kernel_t k = {.name = "k"};
  cal_point_t *pts[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    memset(pts[i], 0, sizeof *pts[i]);
    pts[i]->kernel = &k;
    pts[i]->status = CAL_POINT_OK;
    pts[i]->params.threads = 2;
    pts[i]->m.samples_s = malloc(2 * sizeof(double));
    pts[i]->m.samples_s[0] = pts[i]->m.samples_s[1] = 1.0;
    pts[i]->m.n = 2;
  }
}

/* b pooled into a under the default settings. */
static void pool(cal_point_t *a, cal_point_t *b) {
  cal_harness_cfg_t cfg;
  cal_harness_defaults(&cfg, 1);
  assert_int_equal(cal_point_merge(a, b, &cfg), 0);
}

/* Pooling two measurements sums their times and keeps a verdict. */
static void merge(void **state) {
  (void)state;
  cal_point_t a, b;
  two_points(&a, &b);
  a.cpu_s = 1.9, a.wall_s = 1.0;
  b.cpu_s = 1.0, b.wall_s = 1.0;
  strcpy(b.not_parallel, "slow");
  pool(&a, &b);
  assert_true(a.cpu_s > 2.89 && a.cpu_s < 2.91);
  assert_true(a.wall_s > 1.99 && a.wall_s < 2.01);
  /* the run's verdict on one measurement stays with the pooled point */
  assert_string_equal(a.not_parallel, "slow");
  assert_false(CAL_POINT_HEADLINE(&a));
  cal_point_free(&a);
}

/* The pipes probe judged against the run's best: a point whose threads
 * computed at one core's rate is marked only in a run whose threads were
 * seen side by side; unknown figures are never a verdict. */
static void judge_pipes(void **state) {
  (void)state;
  char why[200];
  assert_int_equal(cal_parallel_judge_pipes(2, 0.52, 0.99, why, sizeof why),
                   1);
  assert_non_null(strstr(why, "0.52"));
  assert_non_null(strstr(why, "shared a core's pipes"));
  /* side by side, one thread, unknown rate or best: no verdict */
  assert_int_equal(cal_parallel_judge_pipes(2, 0.95, 0.99, why, sizeof why),
                   0);
  assert_string_equal(why, "");
  assert_int_equal(cal_parallel_judge_pipes(1, 0.5, 0.99, why, sizeof why), 0);
  assert_int_equal(cal_parallel_judge_pipes(2, 0, 0.99, why, sizeof why), 0);
  assert_int_equal(cal_parallel_judge_pipes(2, 0.5, 0, why, sizeof why), 0);
  /* a machine of sibling hardware threads: that is the machine */
  assert_int_equal(cal_parallel_judge_pipes(2, 0.5, 0.55, why, sizeof why), 0);
}

/* The probe itself: a ratio for a team of two, none for one thread.  Its
 * value depends on the machine and its load, so only its range is
 * checked: the one-thread time over the team's, between 1/threads and
 * about 1 on any machine, with room for a loaded one. */
static void pipes_probe(void **state) {
  (void)state;
  assert_true(cal_pipes_probe(1, 0.001, 1) < 0);
  double r = cal_pipes_probe(2, 0.001, 2);
  assert_true(r > 0.0 && r < 4.0);
}

/* The round-trip probe: none for one thread; for two (and three: each
 * pair in turn) a finite time above a nanosecond, whatever the machine
 * and its load (a busy one stretches it, it never hangs). */
static void rtt_probe(void **state) {
  (void)state;
  assert_true(cal_team_rtt_probe(1, 100, 1) < 0);
  assert_true(cal_team_rtt_probe(2, 0, 1) < 0);
  double ns = cal_team_rtt_probe(2, 200, 2);
  assert_true(ns > 1.0 && isfinite(ns));
  ns = cal_team_rtt_probe(3, 50, 1);
  assert_true(ns > 1.0 && isfinite(ns));
}

/* The pooled point keeps the worse probe of its measurements. */
/* The least of spaced probes, and the wait for a team to come close: no
 * team below two threads; a probe at least once; a limit no round trip
 * meets holds the wait to its end (a lower bound only: a busy machine
 * stretches the probes themselves). */
static void rtt_least_and_wait(void **state) {
  (void)state;
  assert_true(cal_team_rtt_least(1, 3, 0.001) < 0);
  assert_true(cal_team_rtt_wait(1, 1e9, 1.0, 0.001) < 0);
  double least = cal_team_rtt_least(2, 3, 0.001);
  assert_true(least > 0 && isfinite(least));
  double r = cal_team_rtt_wait(2, 1e12, 0.0, 0.001);
  assert_true(r > 0 && isfinite(r));
  double t0 = cal_now();
  r = cal_team_rtt_wait(2, 0.0, 0.1, 0.01);
  assert_true(r > 0 && cal_now() - t0 >= 0.1);
}

static void merge_pipes(void **state) {
  (void)state;
  cal_point_t a, b;
  two_points(&a, &b);
  a.team_rate = 0.98;
  b.team_rate = 0.51;
  a.team_rtt_ns = 60.0;
  b.team_rtt_ns = 330.0;
  pool(&a, &b);
  assert_true(a.team_rate > 0.50 && a.team_rate < 0.52);
  assert_true(a.team_rtt_ns > 329.0 && a.team_rtt_ns < 331.0);
  cal_point_free(&a);
}

/* The CPUs of the team: one entry per thread, each a CPU or -1. */
static void team_cpus(void **state) {
  (void)state;
  int cpus[CAL_PAR_MAX_CPUS];
  assert_int_equal(cal_threads_cpus(0, cpus), 0);
  assert_int_equal(cal_threads_cpus(2, cpus), 2);
  for (int i = 0; i < 2; i++)
    assert_true(cpus[i] >= -1);
}

CAL_TEST_MAIN(
    cmocka_unit_test(judge_cpu_time),
    cmocka_unit_test(judge_cpus),
    cmocka_unit_test(action),
    cmocka_unit_test(headline),
    cmocka_unit_test(merge),
    cmocka_unit_test(team_cpus),
    cmocka_unit_test(judge_pipes),
    cmocka_unit_test(pipes_probe),
    cmocka_unit_test(rtt_probe),
    cmocka_unit_test(rtt_least_and_wait),
    cmocka_unit_test(merge_pipes))
