/* The identity keys of a profile and their values (see identity.h). */
#include "identity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The git commit is left out (base and head differ by design), and so are
 * hostname and clocks (runners of one class differ there without
 * measuring differently). */
const char *const cal_identity_keys[CAL_NIDENTITY_KEYS] = {
    /* the machine */
    "machine.cpu.vendor", "machine.cpu.brand", "machine.cpu.family",
    "machine.cpu.model", "machine.cpu.stepping", "machine.cpu.isa",
    "machine.caches", "machine.usable_cores", "machine.memory.total_bytes",
    /* the environment */
    "tool.version", "tool.compiler", "tool.cflags", "blas.library",
    "blas.version", "blas.coretype", "blas.parallel", "gemm.onednn.version",
    "gemm.onednn.max_isa", "gemm.onednn.threading",
    /* where the hypervisor placed the threads (the least round trip a
     * run saw between them) */
    "quality.team_rtt_ns.min",
};

/* The index of the memory total, compared with a tolerance. */
#define MEMORY_KEY 8
/* The index of the threads' round trip: the same placement within this
 * factor (the probe reads 50-65 ns on one L3, 300 ns and more across
 * dies) */
#define RTT_KEY 19
#define RTT_SAME 2.5

int cal_identity_is_environment(size_t i) { return i >= CAL_NMACHINE_KEYS; }

const json_t *cal_profile_identity(const json_t *root, size_t i) {
  char buf[128];
  if (i >= CAL_NIDENTITY_KEYS)
    return NULL;
  snprintf(buf, sizeof buf, "%s", cal_identity_keys[i]);
  const json_t *node = root;
  char *save = NULL;
  for (char *part = strtok_r(buf, ".", &save); part && node;
       part = strtok_r(NULL, ".", &save))
    node = json_object_get(node, part);
  return node;
}

int cal_identity_same(size_t i, const json_t *a, const json_t *b) {
  if (json_equal((json_t *)a, (json_t *)b))
    return 1;
  if ((i != MEMORY_KEY && i != RTT_KEY) || !json_is_number(a) ||
      !json_is_number(b))
    return 0;
  double x = json_number_value(a), y = json_number_value(b);
  if (i == RTT_KEY)
    return x > 0 && y > 0 && fmax(x, y) <= RTT_SAME * fmin(x, y);
  return x > 0 && y > 0 && fabs(x - y) <= fmax(x, y) / 8;
}
