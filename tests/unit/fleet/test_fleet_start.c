/* The start of a fleet job (fleet/fleet_start.c) on hand-made records:
 * hosts told apart by hostname and boot id or by CALIBRATE_HOST_ID, a
 * rank started with other fleet options than rank 0 refused with one line
 * naming the option, a malformed CALIBRATE_HOST_ID refused.
 * covers: calibrator/fleet/fleet_start.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cal_exit.h"
#include "fleet_mpi.h"
#include "test_util.h"

static cal_fleet_rank_t rank_of(const char *id) {
  cal_fleet_args_t a = {.timeout_s = 300, .node_timeout_s = 3600,
                        .p2p_max = 64 << 20, .ar_max = 256 << 20};
  if (id)
    setenv("CALIBRATE_HOST_ID", id, 1);
  else
    unsetenv("CALIBRATE_HOST_ID");
  cal_fleet_rank_t r;
  cal_fleet_rank_self(&a, &r);
  unsetenv("CALIBRATE_HOST_ID");
  r.out_ok = 1;
  return r;
}

static void identity(void **state) {
  (void)state;
  cal_fleet_rank_t x = rank_of(NULL), y = rank_of(NULL);
  assert_string_equal(x.name, x.hostname);
  assert_int_equal(x.id_override, 0);
  assert_true(cal_fleet_same_host(&x, &y));
  snprintf(y.boot_id, sizeof y.boot_id, "another-boot");
  assert_false(cal_fleet_same_host(&x, &y)); /* a container or VM apart */
  cal_fleet_rank_t a = rank_of("ns-a.1"), b = rank_of("ns-b.1"),
                   a2 = rank_of("ns-a.1");
  assert_int_equal(a.id_override, 1);
  assert_string_equal(a.name, "ns-a.1");
  assert_string_equal(a.hostname, x.hostname);
  assert_false(cal_fleet_same_host(&a, &b)); /* one kernel, told apart */
  snprintf(a2.boot_id, sizeof a2.boot_id, "another-boot");
  assert_true(cal_fleet_same_host(&a, &a2)); /* the override decides */
  assert_false(cal_fleet_same_host(&a, &x));
  assert_int_equal(rank_of("bad id").id_override, -1);
  assert_int_equal(rank_of("\x1b[31m").id_override, -1);
  char longid[80];
  memset(longid, 'a', 64);
  longid[64] = '\0';
  assert_int_equal(rank_of(longid).id_override, -1);
  longid[63] = '\0';
  assert_int_equal(rank_of(longid).id_override, 1);
}

static void options_agree(void **state) {
  (void)state;
  cal_fleet_rank_t r[3] = {rank_of(NULL), rank_of(NULL), rank_of(NULL)};
  assert_int_equal(cal_fleet_ranks_check(r, 3, 0), CAL_EXIT_OK);
  r[2].p2p_max = 1 << 20;
  assert_int_equal(cal_fleet_ranks_check(r, 3, 0), CAL_EXIT_USAGE);
  assert_int_equal(cal_fleet_ranks_check(r, 3, 1), CAL_EXIT_USAGE);
  r[2] = r[1];
  r[1].quick = 1;
  assert_int_equal(cal_fleet_ranks_check(r, 3, 2), CAL_EXIT_USAGE);
  r[1] = r[2];
  r[1].timeout_s = 30;
  assert_int_equal(cal_fleet_ranks_check(r, 3, 2), CAL_EXIT_USAGE);
  r[1] = r[2];
  r[1].id_override = -1;
  assert_int_equal(cal_fleet_ranks_check(r, 3, 2), CAL_EXIT_USAGE);
  r[1] = r[2];
  r[0].out_ok = 0; /* rank 0 cannot write its output */
  assert_int_equal(cal_fleet_ranks_check(r, 3, 1), CAL_EXIT_USAGE);
}

CAL_TEST_MAIN(cmocka_unit_test(identity), cmocka_unit_test(options_agree))
