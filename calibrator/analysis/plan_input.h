/* The inputs of `calibrate plan`: each file is a profile
 * ("calibrate-profile/1"), a `calibrate peak --format json` document
 * ("calibrate-peak/1") or a curve CSV (curve_csv.h), told apart by their
 * content.  A profile is one machine; each curve of the other two is one
 * machine, named by its machine column or key, else by the file name
 * without its extension.  A curve's throughput is the median at its
 * optimal batch (the peak, as `calibrate peak` finds it with the default
 * tolerance) with that point's confidence interval; its memory is
 * unknown unless the command sets it.
 * A fleet profile ("calibrate-fleet/1", `calibrate fleet`) is one machine
 * per host (its embedded profile, named by the host) and the fleet's
 * all-reduce curve (net; one fleet profile per plan). */
#ifndef CAL_PLAN_INPUT_H
#define CAL_PLAN_INPUT_H

#include <stddef.h>

#include "plan.h"

/* Read a machine's figures from its profile's view (m borrows from p);
 * 0, or CAL_ENOMEM when the view cannot be built.
 * Figures read: device_name, throughput (examples/s at the optimal
 * batch; null or <= 0 = left out), optimal_batch_size (int or null),
 * machine.memory.available_bytes, else memory_gb x 1e9; the CI of the
 * throughput from the batch_sweep point at the optimal batch (mode from
 * batch_source.mode, else prefill, else decode; used only when its median
 * is the top-level throughput); the shapes from batch_sweep.model; the
 * mode behind the throughput (batch_source.mode) and the train curve's
 * optimum (batch_sweep.modes.train: optimal_batch_size and its point's
 * examples_per_s), which the network step uses for its compute time. */
int cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m);

typedef struct cal_plan_inputs {
  cal_plan_machine_t *ms; /* n machines, in the order read */
  size_t n, cap;
  cal_profile_t **profs;  /* owned */
  size_t nprof, capprof;
  char **strs;            /* names and paths the curves' machines borrow */
  size_t nstrs, capstrs;
  int has_net;            /* a fleet profile was read: net holds its curve */
  cal_plan_net_t net;     /* arrays owned */
} cal_plan_inputs_t;

/* Read path ("-" is standard input) and append its machines to in
 * (zero-initialised before the first call).  CAL_EIO (cannot open or
 * read), CAL_EPARSE / CAL_ESCHEMA (not a valid profile, peak document or
 * curve CSV), CAL_ENOMEM, with one line naming the file in err. */
int cal_plan_inputs_add(cal_plan_inputs_t *in, const char *path, char *err,
                        size_t errlen);

/* Everything the inputs hold; accepts a zeroed or NULL in. */
void cal_plan_inputs_free(cal_plan_inputs_t *in);

#endif
