/* What the bandwidth section shares with the sections that measure its
 * points again (the batch sweep's decode). */
#ifndef CAL_SECTIONS_BANDWIDTH_H
#define CAL_SECTIONS_BANDWIDTH_H

#include "run.h"

/* The harness settings of the bandwidth section's points: the run's,
 * with samples of at most 20 ms after at most 50 ms of warm-up (a stream
 * over a large array is steady from one pass to the next; setting up its
 * arrays is the cost). */
void cal_bandwidth_harness(const cal_run_t *r, cal_harness_cfg_t *h);

#endif
