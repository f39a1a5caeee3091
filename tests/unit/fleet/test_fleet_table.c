/* The fleet's table (fleet/fleet_table.c) of a hand-made two-rank job on
 * one host: the host row with its node's headline figures, the link and
 * all-reduce rows with their sizes in B, KiB and MiB, the comparison with
 * a plain MPI loop, what carried the link and the MPI library, and the
 * note of a job of one rank.  Built where MPI
 * is found, as fleet/ is.
 * covers: calibrator/fleet/fleet_table.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fleet_mpi.h"
#include "test_util.h"

/* The table of f, as text (free it). */
static char *table_of(const cal_fleet_t *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  assert_non_null(out);
  cal_fleet_table(f, out);
  fclose(out);
  return buf;
}

static void two_ranks_one_host(void **state) {
  (void)state;
  char profile[] = "{\"gflops\": 123.45, \"throughput\": null}";
  cal_fleet_host_t host = {.name = "node-a", .nranks = 2,
                           .measuring_rank = 0, .profile = profile,
                           .profile_len = sizeof profile - 1};
  cal_fleet_point_t pts[3] = {
      {.bytes = 8, .time_us = {.median = 1.5, .mad = 0.25}},
      {.bytes = 4096, .time_us = {.median = 3}, .gbps = {.median = 1.25}},
      {.bytes = 4u << 20, .time_us = {.median = 400}, .gbps = {.median = 10}}};
  cal_fleet_link_t link = {.from_rank = 0, .to_rank = 1, .pts = pts,
                           .npts = 3,
                           .tr = {.kind = "shared memory", .mpi_same_node = 1}};
  cal_fleet_point_t ar = {.bytes = 1u << 20, .time_us = {.median = 250},
                          .gbps = {.median = 4},
                          .busbw_gbps = {.median = 4}};
  cal_fleet_t f = {.nranks = 2, .nhosts = 1, .hosts = &host,
                   .intra_host = 1, .links = &link, .nlinks = 1,
                   .ar = &ar, .nar = 1, .ar_verified = 1, .nplain = 1,
                   .mpi = {.library = "Open MPI v4.1.4", .open_mpi = 1,
                           .cvars = 1, .btl = "tcp,self"}};
  f.plain[0] = (cal_fleet_plain_t){"p2p_latency", 8, 1.5, 3.0, "us"};
  char *t = table_of(&f);
  cal_assert_contains(
      t, "Fleet: 2 ranks on 1 host\n",
      "  node-a                   2        rank 0            123.5 "
      "             -\n",
      "MPI: Open MPI v4.1.4 (pml any, btl tcp,self)\n",
      "(ping-pong, one-way; one host: between its ranks):",
      "  0 -> 1         8 B                    1.50           0.25",
      "                 4 KiB                  3.00           0.00",
      "                 4 MiB                400.00           0.00",
      "                 transport: shared memory; the same host (its CPUs "
      "shared)\n",
      "(sum, fp32, 2 ranks; busbw = algbw x 2(n-1)/n; every sum verified)",
      "  1 MiB                 250.0",
      "  p2p_latency      8 B      ours 1.500 us, plain MPI loop 3.000 us "
      "(200%)");
  assert_null(strstr(t, "No links"));
  free(t);
  /* one rank: no links, said so; an all-reduce not verified is named */
  f.nranks = 1;
  f.nlinks = 0;
  f.ar_verified = 0;
  f.nplain = 0;
  host.profile = NULL;
  t = table_of(&f);
  cal_assert_contains(t, "Fleet: 1 rank on 1 host\n", "No links: a job of one",
                      "NOT verified");
  assert_null(strstr(t, "transport:"));
  assert_null(strstr(t, "Point to point"));
  free(t);
}

CAL_TEST_MAIN(cmocka_unit_test(two_ranks_one_host))
