/* A plan (analysis/plan.h) as JSON: the writer of the plan's own output.
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
 *     throughput_basis (what the throughput rests on: scaled to the
 *     plan's model, one decoder layer's, a curve taken as the plan's
 *     model's; null: the profile's own figure, no model given),
 *     scaled_from {preset, throughput (as measured), flops_params (the
 *     parameters the measured step multiplies per token),
 *     flops_per_token_ratio (throughput = measured x this)} | null,
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
#ifndef CAL_PLAN_JSON_H
#define CAL_PLAN_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "plan.h"

/* The plan as a JSON tree of schema "calibrate-plan/1" (above).  New
 * reference, caller json_decref()s it; NULL when out of memory. */
json_t *cal_plan_json(const cal_plan_t *p);

/* The plan's JSON as text (indented by 2, reals to 10 digits, one
 * trailing newline), a reporter (reporter.h): `in` is a cal_plan_t,
 * variant unused.  0, or CAL_ENOMEM with err filled. */
int cal_plan_render_json(const void *in, int variant, FILE *out, char *err,
                         size_t errlen);

#endif
