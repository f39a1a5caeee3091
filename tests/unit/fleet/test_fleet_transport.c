/* What carried a link (fleet/fleet_transport.c), from hand-made interface
 * counters: TCP over the interface whose counters moved by the bytes sent,
 * shared memory where none did and MPI puts the ranks on one node, a
 * fabric between nodes, and "unknown" wherever the evidence does not name
 * it; the /proc/net/dev reader and Open MPI's selection lists.
 * covers: calibrator/fleet/fleet_transport.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fleet_transport.h"
#include "test_util.h"

static void netdev_file(void **state) {
  (void)state;
  char path[] = "/tmp/calibrate-netdev-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("Inter-|   Receive                            |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|"
        "bytes    packets errs drop fifo colls carrier compressed\n"
        "    lo: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n"
        "veth-a: 123456789012 5 0 0 0 0 0 0 42 7 0 0 0 0 0 0\n", f);
  fclose(f);
  cal_netdev_t d[4];
  assert_int_equal(cal_netdev_read(path, d, 4), 2);
  assert_string_equal(d[0].name, "lo");
  assert_true(d[0].rx == 1000 && d[0].tx == 2000);
  assert_string_equal(d[1].name, "veth-a");
  assert_true(d[1].rx == 123456789012ULL && d[1].tx == 42);
  assert_int_equal(cal_netdev_read(path, d, 1), 1); /* capped */
  f = fopen(path, "w");
  fputs("a\nb\nnot a counter line\n", f);
  fclose(f);
  assert_int_equal(cal_netdev_read(path, d, 4), -1);
  unlink(path);
  assert_int_equal(cal_netdev_read("/nonexistent/net/dev", d, 4), -1);
}

static void mca_lists(void **state) {
  (void)state;
  assert_true(cal_fleet_mca_allows("", "tcp"));
  assert_true(cal_fleet_mca_allows(NULL, "vader"));
  assert_true(cal_fleet_mca_allows("tcp,self", "tcp"));
  assert_false(cal_fleet_mca_allows("tcp,self", "vader"));
  assert_false(cal_fleet_mca_allows("tcpx,self", "tcp"));
  assert_false(cal_fleet_mca_allows("^tcp,openib", "tcp"));
  assert_true(cal_fleet_mca_allows("^openib", "tcp"));
}

static const cal_netdev_t before[2] = {{"lo", 100, 100}, {"veth-a", 0, 0}};

/* The judgement of counters `after` (2 interfaces) against `before`,
 * which must name the transport `kind` (NULL: not checked). */
static cal_fleet_transport_t judge(const char *kind, const cal_fleet_mpi_t *m,
                                   int same_node, const cal_netdev_t *after,
                                   double payload) {
  cal_fleet_transport_t t;
  cal_fleet_transport_judge(m, same_node, before, 2, after, 2, payload, &t);
  if (kind)
    assert_string_equal(t.kind, kind);
  return t;
}

/* Open MPI with btl list btl, pml any. */
static cal_fleet_mpi_t ompi(const char *btl) {
  cal_fleet_mpi_t m = {.library = "Open MPI v4.1.4", .open_mpi = 1,
                       .cvars = 1};
  snprintf(m.btl, sizeof m.btl, "%s", btl);
  return m;
}

static void tcp_over_interface(void **state) {
  (void)state;
  cal_fleet_mpi_t m = ompi("tcp,self");
  cal_netdev_t after[2] = {{"lo", 150, 150}, {"veth-a", 1050000, 1100000}};
  cal_fleet_transport_t t = judge("tcp", &m, 0, after, 1e6);
  assert_string_equal(t.iface, "veth-a");
  assert_double_equal(t.sent, 1100000, 0);
  assert_double_equal(t.received, 1050000, 0);
  assert_false(t.mpi_same_node);
  cal_assert_contains(t.basis, "interface veth-a sent 1100000 and received "
                               "1050000 bytes", "btl tcp,self",
                      "TCP over that interface");
  /* one way only (below 90% received): no interface carried it */
  after[1].rx = 850000;
  t = judge("fabric", &m, 0, after, 1e6);
  assert_string_equal(t.iface, "");
  /* the loopback between ranks of one node, TCP forced */
  cal_netdev_t lo[2] = {{"lo", 2000100, 2000100}, {"veth-a", 0, 0}};
  t = judge("tcp", &m, 1, lo, 1e6);
  assert_string_equal(t.iface, "lo");
  /* another library: the interface is named, the transport is not */
  m.open_mpi = 0;
  snprintf(m.library, sizeof m.library, "MPICH Version: 4.0");
  t = judge("unknown", &m, 0, after, 1e5);
  assert_string_equal(t.iface, "veth-a");
  /* Open MPI told to use no TCP, yet an interface moved: not named */
  m = ompi("^tcp");
  snprintf(m.pml, sizeof m.pml, "ob1");
  judge("unknown", &m, 0, after, 1e5);
}

static void no_interface(void **state) {
  (void)state;
  cal_fleet_mpi_t m = ompi("");
  cal_netdev_t after[2] = {{"lo", 200, 200}, {"veth-a", 10, 10}};
  cal_fleet_transport_t t = judge("shared memory", &m, 1, after, 1e6);
  assert_true(t.mpi_same_node);
  cal_assert_contains(t.basis, "no network interface carried", "one node",
                      "pml any, btl any");
  /* shared memory excluded by the selection (ob1 over tcp alone): not
   * named */
  m = ompi("tcp,self");
  snprintf(m.pml, sizeof m.pml, "ob1");
  judge("unknown", &m, 1, after, 1e6);
  /* between nodes, no IP interface: a fabric */
  t = judge("fabric", &m, 0, after, 1e6);
  cal_assert_contains(t.basis, "different nodes");
  /* the selection unread, the counters unread, a counter reset */
  m.cvars = 0;
  t = judge("unknown", &m, 1, after, 1e6);
  cal_assert_contains(t.basis, "could not be read");
  m = ompi("");
  cal_fleet_transport_judge(&m, 1, before, -1, after, 2, 1e6, &t);
  assert_string_equal(t.kind, "unknown");
  cal_assert_contains(t.basis, "/proc/net/dev");
  cal_netdev_t reset[2] = {{"lo", 5, 5}, {"veth-a", 0, 0}};
  t = judge(NULL, &m, 0, reset, 1e6);
  assert_string_equal(t.iface, "");
}

CAL_TEST_MAIN(cmocka_unit_test(netdev_file), cmocka_unit_test(mca_lists),
              cmocka_unit_test(tcp_over_interface),
              cmocka_unit_test(no_interface))
