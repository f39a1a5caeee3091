/* What a run measures with: the machine (read once), the thread team
 * (topology loaded once), the progress line and where the table goes.
 * Mutable during a run; options and results live elsewhere. */
#ifndef CAL_CONTEXT_H
#define CAL_CONTEXT_H

#include <stdio.h>

#include "hwinfo.h"
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
} cal_ctx_t;

/* Read the machine.  Returns 0, or an exit code after printing one line. */
int cal_ctx_open(cal_ctx_t *c);
/* Start the thread team.  Returns 0, or an exit code after printing. */
int cal_ctx_start_threads(cal_ctx_t *c);
/* Accepts a zeroed struct. */
void cal_ctx_close(cal_ctx_t *c);

#endif
