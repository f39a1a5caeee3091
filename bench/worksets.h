/* Working-set sizes for the bandwidth kernels, from the cache sizes (the
 * caller reads them from hwloc, so this is testable with any numbers). */
#ifndef CAL_WORKSETS_H
#define CAL_WORKSETS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cal_cache_sizes {
  /* bytes of one instance of each data cache level; 0 when absent */
  int64_t l1d, l2, l3;
  /* cores sharing one instance (0 or 1: private to a core) */
  int l1_shared_by, l2_shared_by, l3_shared_by;
} cal_cache_sizes_t;

#define CAL_WS_MAX_LEVELS 4

typedef struct cal_workset {
  const char *level; /* "L1", "L2", "L3", "memory"; static storage */
  int64_t bytes;     /* total working set of all threads */
  int capped;        /* memory only: below mem_factor × LLC (mem_cap) */
} cal_workset_t;

/* Working sets are rounded to whole KiB (the stream kernels then round
 * each array down to whole 64-byte lines). */
#define CAL_WS_GRAIN 1024

/* One working set per level for `threads` threads: half the capacity of
 * each cache level the threads can use (a private level counts once per
 * thread, a shared one once per instance they span), the L3 one at most 4×
 * the L2 capacity (a big shared L3 is often not all ours: a VM on a large
 * socket measured memory speed at half its L3), and for memory
 * mem_factor (>= 1; STREAM's rule is 4) times the last level's capacity,
 * at least 64 MiB, and at most mem_cap bytes when mem_cap > 0 (a time
 * budget; never below twice the capacity the last level's working set
 * stands for, twice that working set, so a VM's L3 that the L3 point does
 * not trust does not hold memory up either; `capped` says the rule was
 * bent).  A level absent (size 0) is left out.  Writes up to
 * CAL_WS_MAX_LEVELS entries to out and their count to *n.  CAL_EINVAL for
 * threads < 1, mem_factor < 1 or no cache at all. */
int cal_bandwidth_worksets(const cal_cache_sizes_t *c, int threads,
                           double mem_factor, int64_t mem_cap,
                           cal_workset_t *out, size_t *n);

/* Log-spaced staircase from lo to hi bytes, per_octave sizes per doubling,
 * each rounded to CAL_WS_GRAIN, duplicates dropped, hi always last.
 * Returns the number of sizes (writing at most cap of them to out; out
 * may be NULL to count), or CAL_EINVAL for lo < 1, hi < lo or
 * per_octave < 1. */
int cal_staircase(int64_t lo, int64_t hi, int per_octave, int64_t *out,
                  size_t cap);

#endif
