/* The machine and thread team a run measures with. */
#include "context.h"

#include <string.h>

#include "cal_err.h"
#include "cal_exit.h"

int cal_ctx_open(cal_ctx_t *c) {
  memset(c, 0, sizeof *c);
  c->sec_current = -1;
  int rc = cal_hwinfo_read(&c->hw);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the machine: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  return 0;
}

int cal_ctx_start_threads(cal_ctx_t *c) {
  int rc = cal_threads_init(&c->thr);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the topology: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  return 0;
}

void cal_ctx_close(cal_ctx_t *c) {
  cal_threads_free(c->thr);
  c->thr = NULL;
}
