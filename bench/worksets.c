#include "worksets.h"

#include <math.h>

#include "cal_err.h"

#define MIN_MEMORY_WS (INT64_C(64) << 20)
#define L3_OVER_L2 4.0

static int64_t round_grain(double bytes) {
  int64_t b = (int64_t)llround(bytes / CAL_WS_GRAIN) * CAL_WS_GRAIN;
  return b < CAL_WS_GRAIN ? CAL_WS_GRAIN : b;
}

/* Capacity of one level usable by `threads` threads on distinct cores. */
static double capacity(int64_t size, int shared_by, int threads) {
  if (size <= 0)
    return 0.0;
  int by = shared_by > 1 ? shared_by : 1;
  int instances = (threads + by - 1) / by;
  return (double)size * instances;
}

int cal_bandwidth_worksets(const cal_cache_sizes_t *c, int threads,
                           double mem_factor, int64_t mem_cap,
                           cal_workset_t *out, size_t *n) {
  static const char *const names[] = {"L1", "L2", "L3"};
  *n = 0;
  if (threads < 1 || !(mem_factor >= 1.0))
    return CAL_EINVAL;
  const int64_t sizes[] = {c->l1d, c->l2, c->l3};
  const int shared[] = {c->l1_shared_by, c->l2_shared_by, c->l3_shared_by};
  double last = 0.0, prev = 0.0, trusted = 0.0;
  for (int i = 0; i < 3; i++) {
    double cap = capacity(sizes[i], shared[i], threads);
    if (cap <= 0)
      continue;
    /* a shared last level may be far bigger than the slice these threads
     * really get (a VM on a big socket, other tenants): stay within
     * L3_OVER_L2 times the level below, which is still well past it */
    double ws = cap / 2.0;
    if (i == 2 && prev > 0 && ws > L3_OVER_L2 * prev)
      ws = L3_OVER_L2 * prev;
    out[*n].level = names[i];
    out[*n].bytes = round_grain(ws);
    out[*n].capped = 0;
    (*n)++;
    last = prev = cap;
    trusted = 2.0 * ws;
  }
  if (last <= 0)
    return CAL_EINVAL;
  double mem = mem_factor * last;
  if (mem < MIN_MEMORY_WS)
    mem = MIN_MEMORY_WS;
  out[*n].capped = 0;
  if (mem_cap > 0 && mem > (double)mem_cap) {
    mem = (double)mem_cap > 2.0 * trusted ? (double)mem_cap : 2.0 * trusted;
    out[*n].capped = 1;
  }
  out[*n].level = "memory";
  out[*n].bytes = round_grain(mem);
  (*n)++;
  return 0;
}

int cal_staircase(int64_t lo, int64_t hi, int per_octave, int64_t *out,
                  size_t cap) {
  if (lo < 1 || hi < lo || per_octave < 1)
    return CAL_EINVAL;
  int count = 0;
  int64_t prev = -1, top = round_grain((double)hi);
  double octaves = log2((double)hi / (double)lo);
  int steps = (int)floor(octaves * per_octave + 1e-9);
  for (int k = 0; k <= steps + 1; k++) {
    int64_t b = k > steps ? top
                          : round_grain((double)lo * exp2((double)k / per_octave));
    if (b > top)
      b = top;
    if (b <= prev)
      continue;
    if (out && (size_t)count < cap)
      out[count] = b;
    count++;
    prev = b;
  }
  return count;
}
