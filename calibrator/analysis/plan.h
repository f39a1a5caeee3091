/* `calibrate plan INPUT...`: split work across machines in proportion to
 * their measured throughput, give the wall-clock time and cost of the
 * work, choose batch size and gradient accumulation, and say whether a
 * model fits each machine or must be sharded.  An input is a profile, or
 * a measured curve (`calibrate peak` JSON or curve CSV) of a machine this
 * tool cannot run on (plan_input.h).
 * Output: table (default), markdown, or JSON of schema "calibrate-plan/1".
 * The arithmetic lives in plan_math.h.
 *
 * Profile keys read: device_name, throughput (examples/s at the optimal
 * batch; null or <= 0 = left out), optimal_batch_size (int or null),
 * machine.memory.available_bytes, else memory_gb × 1e9; the CI of the
 * throughput from the batch_sweep point at the optimal batch (mode from
 * batch_source.mode, else prefill, else decode; used only when its median
 * is the top-level throughput); the shapes from batch_sweep.model; the
 * mode behind the throughput (batch_source.mode) and the train curve's
 * optimum (batch_sweep.modes.train: optimal_batch_size and its point's
 * examples_per_s), which the network step uses for its compute time.
 *
 * Rules: a machine that cannot hold the model (state plus one example's
 * activations over its budget) gets no share of the work; one whose
 * memory is unknown keeps its share.  Flags account for each
 * throughput's confidence interval (plan_math.h).
 *
 * JSON output, schema "calibrate-plan/1" (bytes in *_bytes, seconds in
 * *_s, dollars in *_usd; null where an input was not given or a figure
 * does not apply):
 *   schema, examples, work {unit: examples|epochs|steps, examples,
 *     epochs, dataset_examples, steps, global_batch} | null,
 *   makespan_s (wall-clock of the split), even_split_makespan_s,
 *   speedup_vs_even_split, sum_throughput, mean_throughput,
 *   throughput_ratio (max/min), heterogeneous, heterogeneous_note,
 *   stragglers [names], machines_in_split, split_note,
 *   cost_usd (every machine in the split held for makespan_s) | null,
 *   target_effective_batch, warnings [strings],
 *   model {params, dtype, bytes_per_param, training, optimizer ("adam" or
 *     null), trainable_params, lora_fraction, lora_rank, activation_fraction
 *     (null when the activation model is used), headroom, weights_bytes,
 *     gradients_bytes, optimizer_bytes, master_weights_bytes,
 *     activations_bytes_per_example, activation_model {measured: false,
 *     source: "analytic", layers, seq, hidden, heads, kv_heads, head_dim,
 *     ffn, bytes_per_element, checkpointing, lora_rank,
 *     bytes_per_example, without_checkpointing_bytes_per_example,
 *     with_checkpointing_bytes_per_example, shapes_from, note} | null}
 *     | null,
 *   machines [{name, profile (the input file), source (profile |
 *     curve_csv | peak_json), throughput, throughput_ci_low,
 *     throughput_ci_high, throughput_ci_level, optimal_batch_size,
 *     in_split, left_out_reason, share, examples, finish_s, alone_s,
 *     straggler, price_per_hour_usd, cost_usd, alone_cost_usd,
 *     micro_batch_size, grad_accum_steps, batch_note, memory {batch_size,
 *     available_bytes, budget_bytes, state_bytes, activations_bytes,
 *     need_bytes, max_batch_size, fits}}]
 *     (machines with a throughput, in argument order),
 *   excluded [{name, profile, reason}],
 *   placement {strategy: data_parallel | fits_some | sharded |
 *     does_not_fit | unknown, fits_on [names], shard_group [names],
 *     shard_need_bytes, note} | null,
 *   network (a fleet profile and a model to train) {source, ranks, hosts,
 *     intra_host, note, compute_note (what the step's compute time rests
 *     on when a machine's figure is not a training step's; null when
 *     every one is), machines [{name, throughput (the step's),
 *     throughput_mode (batch_source.mode; null: unknown), throughput_from
 *     (train | train_curve | inference | unknown), examples_per_step,
 *     compute_s}], gradient and all-reduce figures, the step with and
 *     without overlap, fastest, verdict, grad_accum, arithmetic [lines]}
 *     | null. */
#ifndef CAL_PLAN_H
#define CAL_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_math.h"
#include "plan_net.h"
#include "profile.h"

#define CAL_PLAN_SCHEMA "calibrate-plan/1"

/* What to plan for; zero where not given. */
typedef struct cal_plan_opts {
  cal_work_t work;          /* how much work; unit CAL_WORK_NONE: none */
  uint64_t examples;        /* what work stands for; 0: not given */
  int64_t target;           /* target effective batch; 0: not given */
  double params;            /* model parameters; 0: not given */
  cal_dtype_t dtype;
  cal_training_t training;
  cal_mem_assume_t assume;
  /* The activation model (plan_math.h), used when layers > 0 and a
   * profile records the shapes. */
  int64_t layers;
  int64_t seq;              /* 0: the seq the profile measured */
  int checkpointing;
  int64_t lora_rank;        /* 0: lora_fraction gives the trainable part */
  int priced;               /* a price was given: costs are computed */
  /* A fleet profile's all-reduce curve (plan_input.h): with params, the
   * plan adds the data-parallel step with its all-reduce ("network"). */
  const cal_plan_net_t *net;
} cal_plan_opts_t;

typedef enum {
  CAL_PLAN_SRC_PROFILE = 0,
  CAL_PLAN_SRC_CSV,
  CAL_PLAN_SRC_PEAK,
} cal_plan_source_t;

/* One input machine; strings borrowed from what it was read from. */
typedef struct cal_plan_machine {
  const cal_profile_t *prof; /* NULL for a curve */
  const char *path;          /* the input file, as given */
  const char *name;
  cal_plan_source_t source;
  double throughput;     /* NaN when null or missing */
  double ci_low, ci_high, ci_level; /* its CI; NaN when unknown */
  int64_t optimal_batch; /* 0 when null */
  double available;      /* bytes; 0 when unknown */
  double price_per_hour; /* USD; NaN when not given */
  const char *mode;      /* the batch sweep's mode behind throughput
                            (batch_source.mode, else the mode of its
                            point): "train" is a training step, "prefill"
                            and "decode" inference; NULL: unknown */
  double train_throughput; /* examples/s at the train curve's optimal
                              batch; 0: the profile has no train curve */
  int64_t train_batch;   /* that batch; 0: none */
  int has_shape;         /* shape (layers 0) read from the profile */
  cal_act_shape_t shape;
} cal_plan_machine_t;

/* Read a machine's figures from its profile (m borrows from p). */
void cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m);

/* The name a source has in the plan ("profile", "curve_csv",
 * "peak_json"); static. */
const char *cal_plan_source_name(cal_plan_source_t s);

/* The plan as a JSON tree of schema "calibrate-plan/1" (above): the single
 * source every format renders.  New reference, caller json_decref()s it;
 * NULL with err filled (one line) when no machine is usable, a machine in
 * the split has no price while others do, the activation model has no
 * shapes, or out of memory. */
json_t *cal_plan_build(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                       size_t n, char *err, size_t errlen);

#endif
