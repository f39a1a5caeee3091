/* The identity keys of a profile and their values (see identity.h). */
#include "identity.h"

#include <stdio.h>
#include <string.h>

/* The git commit is left out (base and head differ by design), and so are
 * hostname, memory and clocks (runners of one class differ there without
 * measuring differently). */
const char *const cal_identity_keys[CAL_NIDENTITY_KEYS] = {
    "machine.cpu.vendor",   "machine.cpu.brand",    "machine.cpu.family",
    "machine.cpu.model",    "machine.cpu.stepping", "machine.cpu.isa",
    "machine.caches",       "machine.usable_cores", "blas.library",
    "blas.version",         "blas.coretype",        "blas.parallel",
    "gemm.onednn.version",  "tool.version",
};

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
