/* `calibrate fleet`, the MPI side (built only when MPI is found): every
 * host calibrated once through the measuring path, the links between hosts
 * and the all-reduce curve, one fleet profile written by rank 0
 * (fleet_json.h).  No MPI types in this header. */
#ifndef CAL_FLEET_H
#define CAL_FLEET_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cal_fleet_args {
  const char *out_path;   /* the fleet profile; NULL: results/fleet-<time>.json */
  double timeout_s;       /* longest wait of a rank at one link step */
  double node_timeout_s;  /* longest wait for the nodes' measuring runs */
  int compare_plain;      /* also time a bare MPI loop of our own */
  uint64_t p2p_max;       /* largest point-to-point message, bytes */
  uint64_t ar_max;        /* largest all-reduce message, bytes */
  int quick;              /* --quick given: fewer, shorter samples */
  /* the measuring path with the run options (called with measure_arg):
   * measures this node, prints its table on `table`, leaves its profile in
   * *profile (a new reference; NULL: none); returns the run's exit code */
  int (*measure)(void *measure_arg, FILE *table, json_t **profile);
  void *measure_arg;
} cal_fleet_args_t;

/* Runs the whole job on this rank (MPI_Init .. MPI_Finalize) and returns
 * the process exit code (cal_exit.h); the same code on every rank. */
int cal_fleet_main(const cal_fleet_args_t *a);

#endif
