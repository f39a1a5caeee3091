/* Inside the fleet: waits that neither spin nor hang, and the link
 * measurements (fleet_links.c). */
#ifndef CAL_FLEET_MPI_H
#define CAL_FLEET_MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"
#include "fleet_json.h"

/* Wait for rq without spinning: MPI_Test polled between short sleeps (Open
 * MPI busy-polls in blocking calls, and a waiting rank on a measuring
 * host would take a core).  Past timeout_s seconds, print one line naming
 * `what` and MPI_Abort the job with CAL_EXIT_INTERNAL. */
void cal_fleet_wait(MPI_Request *rq, double timeout_s, const char *what);
/* Inside a step where every rank takes part in blocking calls (the
 * timed loops cannot sleep between polls): arm a watchdog that, past
 * timeout_s seconds, prints one line naming `what` and ends this process
 * with CAL_EXIT_INTERNAL (the launcher then ends the job).  `what` must
 * stay valid while armed; timeout_s 0 disarms it. */
void cal_fleet_watchdog(double timeout_s, const char *what);

/* A barrier waited for as above. */
void cal_fleet_barrier(double timeout_s, const char *what);

/* What each rank brings to the job (fleet_start.c), gathered on every
 * rank before anything is measured. */
typedef struct cal_fleet_rank {
  char name[256];      /* CALIBRATE_HOST_ID where set, else the hostname */
  char hostname[256];
  char boot_id[64];    /* /proc/sys/kernel/random/boot_id */
  int id_override;     /* 1: named by CALIBRATE_HOST_ID; -1: that is
                          malformed (the job ends with exit 2) */
  int mpi_node;        /* the lowest rank of its MPI_COMM_TYPE_SHARED group */
  int out_ok;          /* rank 0: the fleet profile can be written */
  /* the fleet options, which every rank must share */
  uint64_t p2p_max, ar_max;
  double timeout_s, node_timeout_s;
  int quick, compare_plain;
} cal_fleet_rank_t;

/* This rank's record (all but mpi_node and out_ok). */
void cal_fleet_rank_self(const cal_fleet_args_t *a, cal_fleet_rank_t *r);
/* Whether two ranks share a host: the same CALIBRATE_HOST_ID, or without
 * one the same hostname and boot id. */
int cal_fleet_same_host(const cal_fleet_rank_t *x, const cal_fleet_rank_t *y);
/* The job may go on (CAL_EXIT_OK) or ends with CAL_EXIT_USAGE: rank 0 could
 * not write its output, a malformed CALIBRATE_HOST_ID, or a rank started
 * with other fleet options than rank 0 (rank 0 prints the one line). */
int cal_fleet_ranks_check(const cal_fleet_rank_t *all, int n, int me);

/* A thread that ends this rank (exit 4, one line) within a second or two
 * of the launcher that started it going away (mpirun or its daemon
 * killed), instead of waiting out --timeout or --node-timeout. */
void cal_fleet_watch_launcher(void);

/* How the links are sampled. */
typedef struct cal_fleet_plan {
  int samples;            /* timed samples per size */
  double min_time_s;      /* shortest sample */
  uint64_t p2p_max, ar_max;
  double timeout_s;
  int fail_rank;          /* test hook: this rank's all-reduce input is
                             wrong (-1: none) */
} cal_fleet_plan_t;

/* Point to point between every ordered pair of endpoints[0..n-1] (ranks),
 * every rank taking part (the others wait); f->links filled on every rank,
 * each with what carried it (host_of: each rank's host; node_of: each
 * rank's MPI node, MPI_COMM_TYPE_SHARED; f->mpi: the library's
 * selection).  0 or a CAL_E* code. */
int cal_fleet_p2p(const cal_fleet_plan_t *pl, const int *endpoints, int n,
                  const int *host_of, const int *node_of, cal_fleet_t *f);

/* The all-reduce curve over MPI_COMM_WORLD, each size's result checked;
 * f->ar filled on every rank; *bad_bytes = the first size whose sum was
 * wrong on this rank (0: none).  0 or a CAL_E* code. */
int cal_fleet_allreduce(const cal_fleet_plan_t *pl, cal_fleet_t *f,
                        uint64_t *bad_bytes);

/* --compare-plain: the same operations in bare loops (ranks a, b for
 * point to point), into f->plain. */
int cal_fleet_compare_plain(const cal_fleet_plan_t *pl, int a, int b,
                            cal_fleet_t *f);

/* The table rank 0 prints. */
void cal_fleet_table(const cal_fleet_t *f, FILE *out);

#endif
