/* The fleet profile (schema "calibrate-fleet/1"): what `calibrate fleet`
 * measured, as typed results, and the one module that turns them into
 * JSON (fleet_json.c).  No MPI here: the results are plain data.
 *
 * Conventions, written into the profile:
 *   point to point: ping-pong between two ranks (as Intel MPI Benchmarks'
 *     PingPong and OSU's osu_latency): one-way time = round trip / 2,
 *     bandwidth = bytes / one-way time; "from" is the rank that sends
 *     first (both directions are measured);
 *   all-reduce (MPI_SUM over fp32, out of place): time = the slowest
 *     rank's time per call; algbw = bytes / time; busbw = algbw x
 *     2(n-1)/n (nccl-tests and OSU), n the number of ranks. */
#ifndef CAL_FLEET_JSON_H
#define CAL_FLEET_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define CAL_FLEET_SCHEMA "calibrate-fleet/1"

/* One message size: the samples of the time per operation (microseconds,
 * owned) and their summaries. */
typedef struct cal_fleet_point {
  uint64_t bytes;
  double *t_us;            /* n samples, owned */
  size_t n;
  long iters;              /* operations per sample */
  cal_summary_t time_us;   /* one-way time (p2p) or time per call */
  cal_summary_t gbps;      /* p2p bandwidth or all-reduce algbw, GB/s */
  cal_summary_t busbw_gbps; /* all-reduce only */
} cal_fleet_point_t;

/* What carried one link's bytes, as found by fleet/fleet_transport.c:
 * kind "tcp", "shared memory", "fabric" or "unknown" (never a guess from
 * host names); the network interface whose byte counters moved by the
 * bytes the ping-pong exchanged ("" when none did); basis says how. */
typedef struct cal_fleet_transport {
  char kind[16];
  char iface[32];
  double sent, received;   /* that interface's counters over the link's
                              measurement on the sending rank, bytes */
  double payload;          /* bytes the ping-pong sent each way */
  int mpi_same_node;       /* MPI_COMM_TYPE_SHARED puts both ranks on one
                              node (the MPI library's notion of a node) */
  char basis[480];
} cal_fleet_transport_t;

/* One direction between two ranks. */
typedef struct cal_fleet_link {
  int from_rank, to_rank;
  int from_host, to_host;  /* indices into cal_fleet_t.hosts; equal: the
                              same host, sharing its CPUs */
  cal_fleet_point_t *pts;  /* owned */
  size_t npts;
  cal_fleet_transport_t tr;
} cal_fleet_link_t;

/* The MPI library of the job (rank 0's view) and the components it was
 * told to use (Open MPI's MCA selection read through MPI_T control
 * variables: "" when not set, meaning every component it has). */
typedef struct cal_fleet_mpi {
  char library[160];       /* MPI_Get_library_version's first line */
  int open_mpi;            /* the library is Open MPI */
  int cvars;               /* the control variables could be read */
  char pml[64], btl[160], mtl[64], btl_tcp_if[160];
} cal_fleet_mpi_t;

typedef struct cal_fleet_host {
  char name[256];          /* CALIBRATE_HOST_ID where set, else hostname */
  char hostname[256];
  char boot_id[64];
  int id_override;         /* told apart by CALIBRATE_HOST_ID */
  int *ranks;              /* owned */
  int nranks;
  int measuring_rank;      /* the rank that calibrated the node */
  int exit_code;           /* its measuring run's exit code */
  char *profile;           /* its profile JSON text, owned; NULL: none */
  size_t profile_len;
  /* the other ranks while it measured: seconds waited and CPU seconds
   * spent waiting (sleeping between polls: a small fraction) */
  double *wait_s, *wait_cpu_s; /* nranks each, owned; the measuring rank 0 */
} cal_fleet_host_t;

/* --compare-plain: the same operation in a bare MPI loop of our own,
 * timed the same way. */
typedef struct cal_fleet_plain {
  const char *what;        /* "p2p_latency", "p2p_bandwidth", "allreduce" */
  uint64_t bytes;
  double ours, plain;      /* medians in `unit` */
  const char *unit;        /* "us" or "GB/s" */
} cal_fleet_plain_t;

typedef struct cal_fleet {
  int nranks, nhosts;
  cal_fleet_host_t *hosts; /* owned */
  int intra_host;          /* one host: links are between its ranks */
  cal_fleet_mpi_t mpi;
  cal_fleet_link_t *links; /* owned */
  size_t nlinks;
  cal_fleet_point_t *ar;   /* all-reduce curve, owned */
  size_t nar;
  int ar_verified;         /* every result's sum was checked and right */
  uint64_t ar_checked_values; /* floats compared against the expected sum */
  cal_fleet_plain_t plain[3];
  size_t nplain;
  double elapsed_links_s;
  double elapsed_s;
} cal_fleet_t;

/* Fill a point's summaries from its samples (gbps from bytes / time; the
 * bus bandwidth with factor busbw_factor when > 0).  CAL_EINVAL,
 * CAL_ENOMEM. */
int cal_fleet_point_summarize(cal_fleet_point_t *p, double busbw_factor);

/* The fleet profile; node profiles are embedded as parsed JSON (a text
 * that does not parse is an error).  New reference, NULL with err. */
json_t *cal_fleet_json(const cal_fleet_t *f, char *err, size_t errlen);

/* Everything f owns; f itself is not freed. */
void cal_fleet_free(cal_fleet_t *f);

#endif
