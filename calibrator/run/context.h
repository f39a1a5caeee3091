/* What a run measures with: the machine (read once), the thread team
 * (topology loaded once), the progress line and where the table goes.
 * Mutable during a run; options and results live elsewhere. */
#ifndef CAL_CONTEXT_H
#define CAL_CONTEXT_H

#include <stdio.h>

#include "hwinfo.h"
#include "load.h"
#include "threads.h"

typedef struct cal_ctx {
  cal_hwinfo_t hw;
  hwloc_topology_t topo;    /* loaded once, owned; NULL: unreadable */
  cal_threads_t *thr;       /* owned; NULL when the topology is unreadable */
  FILE *table;              /* where the readable table goes */
  int progress, verbose;    /* progress line on stderr; warnings too */
  /* progress */
  double t_start, sec_start, sec_budget, planned_left;
  int sec_current;          /* index in cal_sections, -1: none */
  /* who else uses the cores (load_ok 0: /proc/stat unreadable) */
  cal_load_t load;
  int load_ok;
  cal_load_snap_t sec_load0; /* at the start of the running section */
  double remeasure_left_s;  /* time left for measuring busy points again */
  int throttled;            /* the clock fell: later points are marked */
  /* the highest pipes probe of the run on all usable threads and on the
   * points' threads (bench/pipes.h): at least CAL_PIPES_MIN once the
   * threads have been seen to compute side by side; 0 unknown */
  double team_best;
  /* the least round trip between the threads any undisturbed point of
   * the run has seen (team_rtt_ns), or five probes of the whole team at
   * its start (cal_team_rtt_least); 0 none yet */
  double rtt_least_ns;
  int rtt_stayed_apart;     /* a point measured again was apart again */
  int locked, lock_fd;      /* the machine-wide lock (cal_ctx_lock) */
} cal_ctx_t;

/* Read the machine.  Returns 0, or an exit code after printing one line. */
int cal_ctx_open(cal_ctx_t *c);
/* Start the thread team for a run measuring with `threads` threads (at
 * most the usable cores): refused (CAL_EXIT_USAGE) when the OpenMP
 * runtime allows fewer.  Returns 0, or an exit code after printing. */
int cal_ctx_start_threads(cal_ctx_t *c, int threads);
/* One measurement at a time: take the machine-wide lock, an flock on
 * $CALIBRATE_LOCK, else /run/lock/calibrate.lock where that directory is
 * writable, else /tmp/calibrate.lock.  A file the lock did not create is
 * never truncated or chmodded: an existing path is used only when it is a
 * regular file with one link holding nothing or a pid, else refused
 * (CAL_EXIT_USAGE).  When another run holds it: wait
 * (saying so on stderr) or, with no_wait, refuse.  Commands that only read
 * profiles never take it.  Returns 0, or an exit code after printing one
 * line (CAL_EXIT_BUSY when refused). */
int cal_ctx_lock(cal_ctx_t *c, int no_wait);
/* Accepts a zeroed struct; releases the lock. */
void cal_ctx_close(cal_ctx_t *c);

#endif
