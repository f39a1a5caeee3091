/* The machine and thread team a run measures with. */
#include "context.h"

#include <string.h>

#include "cal_err.h"
#include "cal_exit.h"

int cal_ctx_open(cal_ctx_t *c) {
  memset(c, 0, sizeof *c);
  c->sec_current = -1;
  /* one topology for the machine facts and the thread team */
  int rc = cal_topology_load(&c->topo);
  if (rc < 0)
    c->topo = NULL;
  rc = c->topo ? cal_hwinfo_read_topology(&c->hw, c->topo) : cal_hwinfo_read(&c->hw);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the machine: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  return 0;
}

int cal_ctx_start_threads(cal_ctx_t *c) {
  int rc = c->topo ? cal_threads_init_topology(&c->thr, c->topo)
                   : cal_threads_init(&c->thr);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the topology: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  return 0;
}

void cal_ctx_close(cal_ctx_t *c) {
  cal_threads_free(c->thr);
  c->thr = NULL;
  if (c->topo)
    hwloc_topology_destroy(c->topo);
  c->topo = NULL;
}
