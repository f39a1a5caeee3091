/* Who else uses the cores: /proc/stat parsing for the usable CPUs only,
 * the shares between two snapshots (others = busy minus our own time,
 * steal apart), and live snapshots that count our own threads as ours. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "cal_err.h"
#include "load.h"
#include "test_util.h"

/* Two CPUs of four usable (1 and 3), 100 ticks a second. */
static cal_load_t two_of_four(void) {
  cal_load_t l;
  memset(&l, 0, sizeof l);
  l.ncpus = 2;
  l.cpus[0] = 1;
  l.cpus[1] = 3;
  l.tick_s = 0.01;
  return l;
}

static void parse_usable_cpus_only(void **state) {
  (void)state;
  cal_load_t l = two_of_four();
  cal_load_snap_t s;
  /* user nice system idle iowait irq softirq steal guest guest_nice */
  const char *stat =
      "cpu  1000 0 0 0 0 0 0 0 0 0\n"
      "cpu0 500 0 0 100 0 0 0 0 0 0\n"
      "cpu1 10 2 3 900 7 1 1 4 5 0\n"
      "cpu2 500 0 0 100 0 0 0 0 0 0\n"
      "cpu3 20 0 5 800 0 0 0 6 0 0\n"
      "intr 12345\n"
      "procs_running 3\n"
      "procs_blocked 0\n";
  assert_int_equal(cal_load_parse(&l, stat, &s), 0);
  /* busy = user + nice + system + irq + softirq; iowait and idle are not,
   * guest is inside user already */
  assert_double_equal(s.busy_s, (10 + 2 + 3 + 1 + 1 + 20 + 5) * 0.01, 1e-12);
  assert_double_equal(s.steal_s, (4 + 6) * 0.01, 1e-12);
  assert_int_equal(s.procs_running, 3);
  assert_int_equal(cal_load_parse(&l, "cpu0 1 2 3 4 5 6 7 8\n", &s), CAL_EPARSE);
}

static void shares_between_snapshots(void **state) {
  (void)state;
  cal_load_t l = two_of_four();
  cal_load_snap_t a = {1, 10.0, 100.0, 1.0, 5.0, 1};
  /* 1 s later: 1.5 s busy on the two CPUs, 0.5 s of it ours; 0.2 s stolen */
  cal_load_snap_t b = {1, 11.0, 101.5, 1.2, 5.5, 2};
  cal_load_share_t sh;
  cal_load_between(&l, &a, &b, &sh);
  assert_true(sh.known);
  assert_double_equal(sh.others, 0.5, 1e-12); /* 1.0 s of 2 core-seconds */
  assert_double_equal(sh.steal, 0.1, 1e-12);
  assert_int_equal(sh.procs_running, 2);
  /* our own time above the busy count (tick sampling) is not negative */
  b.self_s = 7.0;
  cal_load_between(&l, &a, &b, &sh);
  assert_double_equal(sh.others, 0.0, 0);
  /* an unreadable snapshot gives nothing */
  b.ok = 0;
  cal_load_between(&l, &a, &b, &sh);
  assert_false(sh.known);
}

/* Spin until this thread has used 0.1 s of CPU. */
static void *spin(void *arg) {
  (void)arg;
  struct timespec ts;
  do
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  while ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec < 0.1);
  return NULL;
}

/* Live: the usable CPUs are read, and a thread of ours spinning for 0.1 s
 * of CPU counts as our own time (what the others' share subtracts). */
static void live_snapshots(void **state) {
  (void)state;
  cal_load_t l;
  if (cal_load_open(&l) != 0)
    cal_test_skip("no /proc/stat here: nothing to read");
  assert_true(l.ncpus >= 1);
  pthread_t t;
  cal_load_snap_t a, b;
  cal_load_read(&l, &a);
  assert_int_equal(pthread_create(&t, NULL, spin, NULL), 0);
  cal_load_share_t w;
  cal_load_watch(&l, 0.05, &w);
  pthread_join(t, NULL);
  cal_load_read(&l, &b);
  assert_true(a.ok && b.ok && w.known);
  assert_true(b.self_s - a.self_s >= 0.099);
  assert_true(w.others >= 0 && w.others <= 1 && w.steal >= 0 && w.steal <= 1);
}

CAL_TEST_MAIN(
    cmocka_unit_test(parse_usable_cpus_only),
    cmocka_unit_test(shares_between_snapshots),
    cmocka_unit_test(live_snapshots))
