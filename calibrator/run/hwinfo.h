/* What the machine is: CPU, ISA, topology, caches, memory, BLAS, clocks,
 * and the cores this process may really use. */
#ifndef CAL_HWINFO_H
#define CAL_HWINFO_H

#include <hwloc.h>
#include <stdint.h>
#include <stdio.h>

#include "machine.h"


/* Fill everything that can be read; unknown fields stay 0/"".
 * Returns 0, or a CAL_E* code when even the basics fail. */
int cal_hwinfo_read(cal_hwinfo_t *hw);
/* The same on a topology the caller loaded with cal_topology_load()
 * (threads.h) and still owns, so one load serves a whole run. */
int cal_hwinfo_read_topology(cal_hwinfo_t *hw, hwloc_topology_t topo);

/* Human-readable report. */
void cal_hwinfo_print(FILE *out, const cal_hwinfo_t *hw);

/* Parse "MemTotal:  123 kB" style /proc/meminfo text: bytes of the key,
 * CAL_ENOTFOUND when absent. */
int cal_meminfo_value(const char *text, const char *key, uint64_t *bytes);

/* The memory limit of this process's own cgroup (its /proc/self/cgroup
 * line, v2 or v1's memory controller), the tightest on its way up to the
 * cgroup root, and the room left under it (limit - usage there); root is
 * "/" but for tests.  CAL_ENOTFOUND when no limit is set or readable. */
int cal_cgroup_mem_room(const char *root, uint64_t *limit, uint64_t *room);
/* Room under an address-space limit: RLIMIT_AS less this process's
 * VmSize, of which four fifths less 256 MiB, since the libraries map more
 * than a point touches (malloc arenas, stacks, BLAS buffers).
 * CAL_ENOTFOUND when there is no limit. */
int cal_as_room(uint64_t *room);

/* OpenBLAS with DYNAMIC_ARCH sometimes picks an old kernel set for a CPU it
 * does not know.  When that happened and the user did not choose a core
 * type, re-execute this program with OPENBLAS_CORETYPE set from the CPU's
 * feature bits.  Returns only when no re-exec was needed or it failed. */
void cal_blas_fix_coretype(char **argv);
/* The best OpenBLAS core type for these feature bits, NULL when unknown. */
const char *cal_blas_coretype_for(uint32_t isa);
/* Rank of an OpenBLAS core name by the widest ISA its kernels use
 * (1 SSE, 2 AVX, 3 AVX2, 4 AVX-512, 5 AVX-512+BF16); 0 when unknown. */
int cal_blas_coretype_rank(const char *core);

#endif
