/* `calibrate plan PROFILE...`: split work across machines in proportion to
 * their measured throughput, choose batch size and gradient accumulation,
 * and say whether a model fits each machine or must be sharded.
 * Output: table (default), markdown, or JSON of schema "calibrate-plan/1".
 * The arithmetic lives in plan_math.h.
 *
 * Profile keys read: device_name, throughput (examples/s at the optimal
 * batch; null or <= 0 = left out), optimal_batch_size (int or null),
 * machine.memory.available_bytes, else memory_gb × 1e9.
 *
 * JSON output, schema "calibrate-plan/1" (bytes in *_bytes, seconds in
 * *_s; null where an input was not given):
 *   schema, examples, makespan_s, even_split_makespan_s,
 *   speedup_vs_even_split, sum_throughput, mean_throughput,
 *   throughput_ratio (max/min), heterogeneous, stragglers [names],
 *   target_effective_batch,
 *   model {params, dtype, bytes_per_param, training, optimizer ("adam" or
 *     null), trainable_params, lora_fraction, activation_fraction,
 *     headroom, weights_bytes, gradients_bytes, optimizer_bytes,
 *     master_weights_bytes, activations_bytes_per_example} | null,
 *   machines [{name, profile, throughput, optimal_batch_size, share,
 *     examples, finish_s, straggler, micro_batch_size, grad_accum_steps,
 *     batch_note, memory {batch_size, available_bytes, budget_bytes,
 *     state_bytes, activations_bytes, need_bytes, max_batch_size, fits}}]
 *     (usable machines only, in argument order),
 *   excluded [{name, profile, reason}],
 *   placement {strategy: data_parallel | fits_some | sharded |
 *     does_not_fit | unknown, fits_on [names], shard_group [names],
 *     shard_need_bytes, note} | null. */
#ifndef CAL_PLAN_H
#define CAL_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_math.h"
#include "profile.h"

#define CAL_PLAN_SCHEMA "calibrate-plan/1"

/* What to plan for; zero where not given. */
typedef struct cal_plan_opts {
  uint64_t examples;        /* 0: not given */
  int64_t target;           /* target effective batch; 0: not given */
  double params;            /* model parameters; 0: not given */
  cal_dtype_t dtype;
  cal_training_t training;
  cal_mem_assume_t assume;
} cal_plan_opts_t;

/* One input machine, borrowed from its profile. */
typedef struct cal_plan_machine {
  const cal_profile_t *prof;
  const char *name;
  double throughput;     /* NaN when null or missing */
  int64_t optimal_batch; /* 0 when null */
  double available;      /* bytes; 0 when unknown */
} cal_plan_machine_t;

/* Read a machine's figures from its profile (m borrows from p). */
void cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m);

/* The plan as a JSON tree of schema "calibrate-plan/1" (above): the single
 * source every format renders.  New reference, caller json_decref()s it;
 * NULL with err filled when no machine is usable or out of memory. */
json_t *cal_plan_build(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                       size_t n, char *err, size_t errlen);

#endif
