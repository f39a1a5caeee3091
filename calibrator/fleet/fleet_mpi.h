/* Inside the fleet: waits that neither spin nor hang, and the link
 * measurements (fleet_links.c). */
#ifndef CAL_FLEET_MPI_H
#define CAL_FLEET_MPI_H

#include <mpi.h>
#include <stddef.h>

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
 * every rank taking part (the others wait); f->links filled on every rank.
 * 0 or a CAL_E* code. */
int cal_fleet_p2p(const cal_fleet_plan_t *pl, const int *endpoints, int n,
                  const int *host_of, cal_fleet_t *f);

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
