/* The batch sweep's profile object, from its typed result. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "batch_json.h"
#include "curve_json.h"
#include "point_json.h"
#include "results.h"
#include "run_result.h"

/* x, or null when it is not known (NAN) */
static json_t *or_null(double x) { return isnan(x) ? json_null() : json_real(x); }

/* A point: measured ones in the point convention (examples/s samples and
 * the layer's figures), others {id, status, reason}; then batch and
 * memory.  NULL when out of memory. */
static json_t *point_json(const cal_run_result_t *r, const cal_batch_result_t *res,
                          const cal_batch_point_t *bp, int decode) {
  json_t *o;
  if (!bp->measured) {
    o = cal_unmeasured_json(bp->id, bp->status, bp->reason);
  } else {
    const cal_point_t *pt = &bp->pt;
    o = cal_metric_json(bp->id, "examples_per_s", 1, bp->examples_per_s,
                        &bp->examples, pt->m.unstable, &pt->m);
    if (o) {
      json_object_set_new(o, "tokens_per_s", json_real(bp->tokens.median));
      /* train: the model's step, the layer's alone in layer_step_ms */
      json_object_set_new(o, "latency_ms", json_real(bp->step_ms > 0
                                                         ? bp->step_ms
                                                         : pt->m.time.median * 1e3));
      json_object_set_new(o, "gflops", json_real(pt->gflops_sum.median));
      json_object_set_new(o, "variant", json_string(pt->variant));
      json_object_set_new(o, "threads", json_integer(r->opt->threads));
      json_object_set_new(o, "kernel", json_string(pt->kernel->name));
      json_object_set_new(o, "dtype", json_string(cal_kdtype_name(pt->kernel->dtype)));
      json_object_set_new(o, "flops_per_run", json_real(pt->flops));
      json_object_set_new(o, "bytes_per_run", json_real(pt->bytes));
      cal_point_watch_json(pt, o);
      json_object_set_new(o, "matrix_path", json_string(bp->matrix_path));
      if (bp->alt_path)
        json_object_set_new(
            o, "other_path",
            json_pack("{s:s, s:f, s:f}", "matrix_path", bp->alt_path,
                      "examples_per_s", bp->alt_examples_per_s, "latency_ms",
                      bp->alt_latency_ms));
      /* train in fp32 runs its products on OpenBLAS's sgemm (transposes
       * as flags) whatever the section's engine: its impl says which */
      cal_engine_t e = strcmp(bp->matrix_path, "gemv") == 0 ? CAL_ENGINE_BUILTIN
                       : bp->step_ms > 0                    ? pt->engine
                                                            : res->engine;
      json_object_set_new(o, "engine", json_string(cal_engine_name(e)));
      if (pt->impl[0])
        json_object_set_new(o, "impl", json_string(pt->impl));
      if (bp->step_ms > 0) {
        /* train: the model's step; "gflops" above is the layer's alone */
        json_object_set_new(o, "step_ms", json_real(bp->step_ms));
        json_object_set_new(o, "layer_step_ms", json_real(bp->layer_ms));
        json_object_set_new(o, "lm_head_step_ms", json_real(bp->head_ms));
        if (bp->ref_ms > 0)
          json_object_set_new(o, "reference_forward_ms", json_real(bp->ref_ms));
        if (bp->gen_ms > 0)
          json_object_set_new(o, "generation_ms", json_real(bp->gen_ms));
        json_object_set_new(o, "flops_per_step", json_real(bp->step_flops));
        json_object_set_new(o, "step_gflops", json_real(bp->step_gflops));
        json_object_set_new(o, "lm_head_gflops", json_real(bp->head_gflops));
        json_object_set_new(o, "step_gemm_fraction", or_null(bp->step_gemm_fraction));
        json_object_set_new(o, "lm_head_gemm_fraction", or_null(bp->head_gemm_fraction));
      }
      if (decode) {
        json_object_set_new(o, "read_bytes_per_step", json_real(bp->read_bytes));
        json_object_set_new(o, "read_gbps", json_real(bp->read_gbps));
        json_object_set_new(o, "bandwidth_efficiency", or_null(bp->bw_efficiency));
        json_object_set_new(o, "bandwidth_efficiency_beside", or_null(bp->bw_beside));
      }
    }
  }
  if (o) {
    json_object_set_new(o, "batch_size", json_integer(bp->batch));
    json_object_set_new(o, "memory_bytes", json_real(bp->memory_bytes));
    if (bp->measured)
      json_object_set_new(o, "layers_measured", json_integer(bp->layers_measured));
    cal_memuse_json(&bp->mem, o); /* measured beside the estimate */
    if (bp->model_bytes > 0) {
      json_object_set_new(o, "activation_bytes_layer", json_real(bp->act_layer_bytes));
      json_object_set_new(o, "activation_bytes", json_real(bp->act_bytes));
      json_object_set_new(o, "activation_bytes_checkpointed",
                          json_real(bp->act_ckpt_bytes));
      json_object_set_new(o, "model_memory_bytes", json_real(bp->model_bytes));
      json_object_set_new(o, "model_fits_memory", json_boolean(bp->model_fits));
      json_object_set_new(o, "step_memory_bytes", json_real(bp->step_memory_bytes));
      json_object_set_new(o, "step_peak_rss_bytes",
                          bp->step_peak_rss > 0 ? json_real(bp->step_peak_rss)
                                                : json_null());
    }
  }
  return o;
}

/* The analysis object, its headline keys copied into the mode (the
 * analysis's own copy of the points would repeat the samples). */
static int analysis_json(const cal_batch_mode_t *m, json_t *jm) {
  static const char *const keys[] = {
      "peak_batch_size", "knee_batch_size", "optimal_batch_size",
      "peak_examples_per_s", "shape", "degradation_pct", "tied_batch_sizes",
      "recommendation"};
  json_t *an = cal_curve_json(NULL, m->curve, m->have_rec ? &m->rec : NULL);
  if (!an)
    return -1;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    json_object_set(jm, keys[i], json_object_get(an, keys[i]));
  json_object_del(an, "points");
  return json_object_set_new(jm, "analysis", an);
}

/* A measured bandwidth, or null (not measured: NAN, or 0 in a mode that
 * never ran). */
static json_t *gbps_json(double gbps) {
  return gbps > 0 ? json_real(gbps) : json_null();
}

/* Decode: what its points' bandwidth efficiency is held against: the
 * bandwidth section's memory read, and that read measured again before
 * and after the mode's points. */
static int bandwidth_ref_json(const cal_batch_result_t *res,
                              const cal_batch_mode_t *m, json_t *jm) {
  char id[96];
  int known = !isnan(res->mem_read_gbps);
  snprintf(id, sizeof id, "bandwidth/stream_read/memory/t%d",
           res->mem_read_threads);
  char note[1024];
  snprintf(note, sizeof note,
           "bandwidth_efficiency = read_gbps / memory_read_gbps (the "
           "bandwidth section's), bandwidth_efficiency_beside = read_gbps / "
           "memory_read_beside_gbps (the same point measured again just "
           "before and just after the decode points, the higher); "
           "read_bytes_per_step = the model's step: per layer (%lld) every "
           "weight once (%s) and the K and V cache rows attention reads "
           "(batch x kv_heads x (seq + 1) x head_dim x 2, %s), plus "
           "the LM head's weights (hidden x vocab) and final norm gain; "
           "activations not counted%s%s",
           (long long)res->layers,
           res->dtype == CAL_DTYPE_BF16
               ? "2 bytes each, the norm gains 4"
               : "4 bytes each",
           res->dtype == CAL_DTYPE_BF16 ? "a bf16 cache, 2 bytes each"
                                        : "4 bytes each",
           known ? "" : "; no efficiency: ", known ? "" : res->mem_read_why);
  int beside = m->read_beside_gbps > 0;
  if (!beside && strcmp(m->status, "measured") == 0)
    json_object_set_new(jm, "memory_read_beside_why",
                        json_string(m->read_beside_why));
  return json_object_set_new(jm, "memory_read_beside_gbps",
                             gbps_json(m->read_beside_gbps)) |
         json_object_set_new(jm, "memory_read_before_gbps",
                             gbps_json(m->read_before_gbps)) |
         json_object_set_new(jm, "memory_read_after_gbps",
                             gbps_json(m->read_after_gbps)) |
         json_object_set_new(jm, "memory_read_gbps",
                             known ? json_real(res->mem_read_gbps) : json_null()) |
         json_object_set_new(jm, "memory_read_point",
                             known ? json_string(id) : json_null()) |
         json_object_set_new(jm, "bandwidth_note", json_string(note));
}

/* Train: the ceilings its rates are held against: the run's GEMM, and
 * the AdamW pass measured against the run's triad. */
static int rates_json(const cal_run_result_t *r, const cal_batch_result_t *res,
                      json_t *jm) {
  char id[64];
  snprintf(id, sizeof id, "gemm/%s/best/t%d", cal_kdtype_name(res->dtype),
           r->opt->threads);
  int gemm = !isnan(res->gemm_gflops), aw_null = 1;
  json_t *aw = json_null();
  if (res->adamw_kernel && !isnan(res->adamw_s))
    aw = json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:o, s:o, s:s}", "kernel",
                   res->adamw_kernel, "variant", res->adamw_variant,
                   "elements", (json_int_t)res->adamw_elems,
                   "bytes_per_pass", res->adamw_bytes, "time_s", res->adamw_s,
                   "gbps", res->adamw_gbps, "triad_gbps", or_null(res->triad_gbps),
                   "triad_fraction", or_null(res->adamw_triad_fraction),
                   "convention",
                   "one pass over fp32 masters, both moments and the gradient "
                   "(read), new masters and moments (written; bf16: and the "
                   "masters rounded to bf16), 28 bytes an element, 30 with "
                   "the copy, over the median pass; stores non-temporal where "
                   "the outputs are aligned (no write-allocate); triad_gbps "
                   "is the bandwidth section's stream_triad at memory on the "
                   "sweep's threads, its bytes counted as STREAM counts them");
  aw_null = json_is_null(aw);
  return json_object_set_new(jm, "gemm_gflops", or_null(res->gemm_gflops)) |
         json_object_set_new(jm, "gemm_point", gemm ? json_string(id) : json_null()) |
         (gemm ? 0 : json_object_set_new(jm, "gemm_why", json_string(res->gemm_why))) |
         json_object_set_new(jm, "adamw", aw) |
         (res->adamw_why[0] && (aw_null || isnan(res->adamw_triad_fraction))
              ? json_object_set_new(jm, "adamw_why", json_string(res->adamw_why))
              : 0);
}

/* Train: what its figures are (the model built of one measured layer and
 * the measured LM head), the FLOP convention and the memory model. */
static int train_json(const cal_run_result_t *r, const cal_batch_result_t *res,
                      json_t *jm, int mi) {
  int64_t fewest = res->modes[mi].layers_measured;
  char note[640];
  snprintf(note, sizeof note,
           "%sone optimizer step of the model: %lld decoder layers (%s; "
           "forward, backward, AdamW), plus the LM head measured "
           "(vocabulary %lld: logits, "
           "cross-entropy, backward, AdamW); examples/s = batch / (layers / layers measured "
           "x the measured stack's step + LM head step); the embedding lookup and its "
           "gradient (tokens x hidden adds) not timed",
           res->workload ? "sft, " : "", (long long)res->layers,
           fewest && fewest < res->layers
               ? "timed as the measured layers scaled to the model's"
               : "the whole stack measured",
           (long long)res->vocab);
  const char *flops =
      "forward (matrix products and attention) + backward counted as 2 x "
      "forward = 3 x forward, per layer and for the LM head; the attention "
      "scores and LM-head logits the backward recomputes are not counted, "
      "nor elementwise work and AdamW";
  const char *mem =
      "activation_bytes_layer: the bytes one measured layer step keeps for "
      "backward, counted from its buffers (inputs, normalised rows and "
      "their inverse RMS, qkv, attention output and log-sum-exp, x1, "
      "gate|up, SwiGLU output; in bf16 also the products' inputs as bf16 "
      "rows and their transposes; test_train holds such counts to the "
      "resident bytes a step adds, within 10%); activation_bytes = layers x that + the LM "
      "head's rows and one chunk of logits; activation_bytes_checkpointed: "
      "each layer keeps its input rows (batch x seq x hidden x 4 bytes) and "
      "one layer's are recomputed at a time; model_memory_bytes = "
      "model_state_bytes + activation_bytes; step_memory_bytes: the "
      "measured step's (its stack of layers_measured layers, the LM head "
      "holding no whole gradient as its step updates chunk by chunk, "
      "their activations; no embedding table); step_peak_rss_bytes: the "
      "resident peak over the step's timed runs, to hold against it; all "
      "by the one memory model that plan and the library use: 18 bytes a "
      "trained bf16 parameter (16 in fp32), 14 (12) under a fused "
      "update, the dtype's bytes a frozen one";
  /* per example: the activations are linear in the batch (the points'
   * activation_bytes over their batch_size) */
  double per = NAN, per_ck = NAN;
  const cal_batch_mode_t *m = &res->modes[mi];
  for (size_t i = 0; i < m->npoints && isnan(per); i++)
    if (m->points[i].model_bytes > 0) {
      per = m->points[i].act_bytes / (double)m->points[i].batch;
      per_ck = m->points[i].act_ckpt_bytes / (double)m->points[i].batch;
    }
  return rates_json(r, res, jm) |
         json_object_set_new(jm, "activation_bytes_per_example",
                             isnan(per) ? json_null() : json_real(per)) |
         json_object_set_new(jm, "activation_bytes_per_example_checkpointed",
                             isnan(per_ck) ? json_null() : json_real(per_ck)) |
         json_object_set_new(jm, "workload", json_string(note)) |
         json_object_set_new(jm, "lm_head_dtype", json_string(cal_kdtype_name(res->head->dtype))) |
         json_object_set_new(jm, "lm_head_impl",
                             m->head_impl[0] ? json_string(m->head_impl)
                                             : json_null()) |
         json_object_set_new(jm, "lm_head_choice", json_string(res->head_why)) |
         json_object_set_new(jm, "model_params", json_real(res->model_params)) |
         json_object_set_new(jm, "model_state_bytes",
                             json_real(res->model_state_bytes)) |
         json_object_set_new(jm, "model_state_fits_memory",
                             json_boolean(res->model_state_bytes <=
                                          res->memory_budget_bytes)) |
         json_object_set_new(jm, "flops_convention", json_string(flops)) |
         json_object_set_new(jm, "memory_note", json_string(mem)) |
         json_object_set_new(jm, "optimizer",
                             json_string(res->lora_rank
                                             ? "AdamW (lr 1e-5, betas 0.9/0.999, "
                                               "eps 1e-8, weight decay 0.01) on "
                                               "the LoRA adapters (and the LM "
                                               "head), fp32 masters and moments; "
                                               "the layers' objective is linear "
                                               "in their output, its upstream "
                                               "gradient's sign alternating step "
                                               "to step"
                                             : "AdamW (lr 1e-5, betas 0.9/0.999, "
                                               "eps 1e-8, weight decay 0.01), fp32 "
                                               "masters and moments; the layers' "
                                               "objective is linear in their "
                                               "output, its upstream gradient's "
                                               "sign alternating step to step"));
}

/* Every mode: the model's depth and vocabulary, the fewest distinct layers
 * a measured point held, and scaled_from_layers when that is fewer than
 * the depth. */
static int depth_json(const cal_batch_result_t *res, int mi, json_t *jm) {
  int64_t fewest = res->modes[mi].layers_measured;
  return json_object_set_new(jm, "layers", json_integer(res->layers)) |
         json_object_set_new(jm, "layers_measured",
                             fewest ? json_integer(fewest) : json_null()) |
         (fewest && fewest < res->layers
              ? json_object_set_new(jm, "scaled_from_layers", json_integer(fewest))
              : 0) |
         json_object_set_new(jm, "vocab", json_integer(res->vocab));
}

void cal_batch_workload(const cal_batch_result_t *res, int mi, char *buf,
                        size_t len) {
  int64_t fewest = res->modes[mi].layers_measured;
  char layers[200];
  if (fewest && fewest < res->layers && (mi == 2 || mi >= 4))
    snprintf(layers, sizeof layers, "%lld decoder layers, timed as %lld "
             "measured layers' step scaled to the model's",
             (long long)res->layers, (long long)fewest);
  else if (fewest && fewest < res->layers)
    snprintf(layers, sizeof layers,
             "%lld decoder layers run in turn over %lld distinct layers' "
             "weights (together several times the last-level cache, or as "
             "many as the memory budget holds)",
             (long long)res->layers, (long long)fewest);
  else
    snprintf(layers, sizeof layers, "%lld decoder layers, each its own "
             "weights", (long long)res->layers);
  if (mi == 0)
    snprintf(buf, len, "the model's forward pass over batch x seq tokens: %s, "
             "then the LM head (final RMSNorm and logits over vocabulary "
             "%lld) on the last position of each sequence, the one the next "
             "token is predicted from; the embedding lookup not timed",
             layers, (long long)res->vocab);
  else if (mi == 1)
    snprintf(buf, len, "one new token a sequence through the model: %s, each "
             "against its KV cache of seq tokens, then the LM head (final "
             "RMSNorm and logits over vocabulary %lld) on the new tokens; "
             "the embedding lookup and sampling not timed", layers,
             (long long)res->vocab);
  else if (mi == 3)
    snprintf(buf, len, "inference of one sequence a batch row, in one timed "
             "run: the model's prefill over seq prompt tokens (%s, then the "
             "LM head on the last position), then %lld decode steps (one new "
             "token a sequence through every layer and the head), the KV "
             "cache growing token by token: step t attends over seq + t + 1 "
             "keys (the decode step holds its own layers' weights and "
             "caches, sized for seq + gen_len); one example: "
             "a sequence of seq prompt and %lld generated tokens; the "
             "embedding lookup and sampling not timed", layers,
             (long long)res->gen_len, (long long)res->gen_len);
  else if (mi == 4)
    snprintf(buf, len, "dpo, one example a preference pair: one optimizer "
             "step of the policy model over the pair's chosen and rejected "
             "sequences (2 x batch sequences of seq tokens: %s, forward, "
             "backward, AdamW, plus the LM head's), plus a frozen reference "
             "model's forward over both (the model's prefill at 2 x batch, "
             "the LM head on the last position of each sequence)", layers);
  else if (mi == 5)
    snprintf(buf, len, "grpo, one example a prompt of seq tokens: %lld "
             "completions of %lld tokens generated from it (the model's "
             "prefill over batch x %lld copies of the prompt, then %lld "
             "decode steps, the KV cache growing from seq to seq + gen_len "
             "tokens), then one "
             "optimizer step of the policy model over the batch x %lld "
             "sequences of seq + %lld tokens (%s, forward, backward, AdamW, "
             "plus the LM head's)", (long long)res->group,
             (long long)res->gen_len, (long long)res->group,
             (long long)res->gen_len, (long long)res->group,
             (long long)res->gen_len, layers);
  else
    snprintf(buf, len, "%sone optimizer step of the model: %s (forward, "
             "backward, AdamW), plus the LM head's (vocabulary %lld)",
             res->workload && mi == 2 ? "sft, " : "", layers,
             (long long)res->vocab);
}

/* How the workloads' steps are measured or put together (indexed by
 * mode; NULL: the bare modes, whose notes say it). */
static const char *const methods[CAL_BATCH_NMODES] = {
    NULL, NULL, NULL,
    "prefill then gen_len decode steps run in sequence inside each timed "
    "sample (not a sum of separately measured figures), as a generate loop "
    "runs them: the KV cache grows token by token (caches sized for seq + "
    "gen_len; decode step t, from 0, writes its token at position seq + t "
    "and attends over the seq + t + 1 positions up to it); FLOPs and bytes "
    "count each step at its own cache length; tokens/s counts seq + "
    "gen_len tokens an example",
    "examples/s = pairs / (the training step at 2 x batch sequences, as the "
    "train mode builds it, + the reference model's forward at 2 x batch), "
    "sample by sample of separately measured runs; the DPO loss (log-ratios "
    "and sigmoid, batch x a few adds) not timed; the reference's LM head "
    "covers the last position of each sequence, not every position's "
    "log-probability (a lower bound of its head's work); model_memory_bytes "
    "adds the reference's weights",
    "examples/s = prompts / (the generation, the inference workload's step "
    "at batch x group sequences, + the training step over batch x group "
    "sequences of seq + gen_len tokens, as the train mode builds it), sample "
    "by sample of separately measured runs; each prompt prefilled once a "
    "completion (no shared prefix), then its KV cache grown token by token "
    "as the inference workload's (decode step t attends over seq + t + 1 "
    "positions); "
    "rewards, advantages and a reference model's KL term not timed"};

/* Every mode but train: what its step is (workload); the workloads, how
 * it is measured (method) and inference's and grpo's gen_len, grpo's
 * group. */
static int workload_json(const cal_batch_result_t *res, int mi, json_t *jm) {
  char note[900];
  cal_batch_workload(res, mi, note, sizeof note);
  int rc = json_object_set_new(jm, "workload", json_string(note));
  if (methods[mi])
    rc |= json_object_set_new(jm, "method", json_string(methods[mi]));
  if (mi == 3 || mi == 5)
    rc |= json_object_set_new(jm, "gen_len", json_integer(res->gen_len));
  if (mi == 5)
    rc |= json_object_set_new(jm, "group", json_integer(res->group));
  return rc;
}

/* Every mode: lora_rank (0: full fine-tuning, or a forward mode); a
 * training mode with LoRA: the adapters' parameters and how its step and
 * FLOPs are made, after the workload's own method. */
static int lora_json(const cal_batch_result_t *res, int mi, json_t *jm) {
  int train = mi == 2 || mi >= 4;
  int64_t r = train ? res->lora_rank : 0;
  int rc = json_object_set_new(jm, "lora_rank", json_integer(r));
  if (!r)
    return rc;
  char m[2048];
  snprintf(m, sizeof m,
           "%s%sLoRA rank %lld (alpha 16, scale 16/%lld) on the four "
           "projections of every layer: q|k|v (one fused matrix), o, "
           "gate|up (one fused matrix) and down; the base weights and norm "
           "gains frozen (no weight gradients, masters' second set nor "
           "moments), the adapters A (in x rank) and B (rank x out) in fp32 "
           "on OpenBLAS sgemm, trained with AdamW; forward adds "
           "scale x (x A) B to each projection, backward computes the data "
           "gradients through the frozen base and the adapters and the "
           "adapters' gradients; B starts non-zero so that verification "
           "(the step against its double-precision composition with "
           "weights W + scale x A B, the adapters' gradients from it by the "
           "chain rule) checks every term.  FLOPs counted as done: per "
           "layer 2 x the base products' forward (forward and data "
           "gradients, no weight gradients) + 3 x attention's forward + 3 "
           "x the adapters' forward (2 x tokens x rank x (in + out) a "
           "projection); the LM head's step is a full one (its weight "
           "gradient and AdamW included: an upper bound of a frozen "
           "head's), and so is the state counted for the embedding and head",
           methods[mi] ? methods[mi] : "", methods[mi] ? " " : "",
           (long long)r, (long long)r);
  return rc | json_object_set_new(jm, "method", json_string(m)) |
         json_object_set_new(jm, "lora_params", json_real(res->lora_params));
}

/* Prefill, decode and inference: the rows the LM head covers. */
static int forward_json(const cal_batch_result_t *res, int mi, json_t *jm) {
  return workload_json(res, mi, jm) |
         json_object_set_new(jm, "lm_head",
                             json_string(mi == 1 ? "the new token of each sequence"
                                         : mi == 0 ? "last position of each sequence"
                                                   : "last prompt position, "
                                                     "then each new token"));
}

json_t *cal_batch_source_json(const cal_run_result_t *r,
                              const cal_batch_result_t *b) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  const cal_batch_mode_t *m = &b->modes[b->top_mode];
  char work[900];
  cal_batch_workload(b, b->top_mode, work, sizeof work);
  json_t *src = json_pack(
      "{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:o, s:I, s:s, s:s}", "mode",
      m->name, "dtype", cal_kdtype_name(b->dtype), "engine",
      cal_engine_name(b->engine), "preset", o->preset, "hidden",
      (json_int_t)o->hidden, "seq", (json_int_t)o->seq, "workload", work,
      "layers", (json_int_t)b->layers, "layers_measured",
      m->layers_measured ? json_integer(m->layers_measured) : json_null(),
      "vocab", (json_int_t)b->vocab, "lm_head",
      b->top_mode == 2 || b->top_mode >= 4
                       ? "training step (logits, cross-entropy, backward, AdamW)"
      : b->top_mode == 0 ? "logits of the last position of each sequence"
      : b->top_mode == 3 ? "logits of the last prompt position, then of each "
                           "new token"
                         : "logits of the new token of each sequence",
      "choice", b->top_why);
  if (src && b->workload)
    json_object_set_new(src, "workload_name", json_string(b->workload));
  if (src && b->lora_rank && (b->top_mode == 2 || b->top_mode >= 4))
    json_object_set_new(src, "lora_rank", json_integer(b->lora_rank));
  if (src)
    json_object_set_new(src, "optimal_is_lower_bound",
                        json_boolean(cal_batch_open_ended(m)));
  if (src && m->layers_measured && m->layers_measured < b->layers)
    json_object_set_new(src, "scaled_from_layers",
                        json_integer(m->layers_measured));
  return src;
}

/* A mode: its points, status, and when measured why the sweep ended, the
 * analysis, batch-1 latency and time.  NULL when out of memory. */
static json_t *mode_json(const cal_run_result_t *r, const cal_batch_result_t *res,
                         int mi) {
  const cal_batch_mode_t *m = &res->modes[mi];
  json_t *jm = json_object(), *pts = json_array();
  if (json_object_set_new(jm, "points", pts) < 0)
    goto fail;
  for (size_t i = 0; i < m->npoints; i++)
    if (json_array_append_new(pts, point_json(r, res, &m->points[i], mi == 1)) < 0)
      goto fail;
  int train = mi == 2 || mi >= 4;
  if (depth_json(res, mi, jm) < 0 || (train && train_json(r, res, jm, mi) < 0) ||
      (mi >= 4 && workload_json(res, mi, jm) < 0) ||
      (!train && forward_json(res, mi, jm) < 0) || lora_json(res, mi, jm) < 0)
    goto fail;
  if (mi == 1 && bandwidth_ref_json(res, m, jm) < 0)
    goto fail;
  json_object_set_new(jm, "status", json_string(m->status));
  if (strcmp(m->status, "measured") != 0) {
    json_object_set_new(jm, "reason", json_string(m->reason));
    return jm;
  }
  json_object_set_new(jm, "stop_reason", json_string(m->stop));
  if (analysis_json(m, jm) < 0)
    goto fail;
  json_object_set_new(jm, "optimal_is_lower_bound",
                      json_boolean(cal_batch_open_ended(m)));
  json_object_set_new(jm, "latency_ms_batch_1",
                      isnan(m->latency_ms_batch_1) ? json_null()
                                                   : json_real(m->latency_ms_batch_1));
  json_object_set_new(jm, "time_s", json_real(m->time_s));
  return jm;
fail:
  json_decref(jm);
  return NULL;
}

static json_t *section_json(const cal_run_result_t *r, const cal_batch_result_t *res) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  return json_pack(
      "{s:{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f}, s:s, s:f, s:f, s:o, s:f, s:o}",
      "model", "preset", o->preset, "hidden", (json_int_t)o->hidden, "heads",
      (json_int_t)o->heads, "kv_heads", (json_int_t)o->kv_heads, "head_dim",
      (json_int_t)(o->hidden / o->heads), "ffn", (json_int_t)o->ffn, "seq",
      (json_int_t)o->seq, "weights_bytes", res->weights_bytes, "optimize",
      cal_curve_policy_name((cal_curve_policy_t)o->policy), "tolerance_pct",
      100.0 * o->tolerance, "memory_budget_bytes", res->memory_budget_bytes,
      "target_effective_batch",
      o->target_effective_batch > 0 ? json_integer(o->target_effective_batch)
                                    : json_null(),
      "time_budget_s", res->time_budget_s, "modes", json_object());
}

json_t *cal_batch_write(const cal_run_result_t *r, const void *result) {
  const cal_batch_result_t *res = result;
  json_t *sec = section_json(r, res);
  if (!sec)
    return NULL;
  json_object_set_new(sec, "dtype", json_string(cal_kdtype_name(res->dtype)));
  json_object_set_new(sec, "dtype_choice", json_string(r->opt->sweep.dtype_why));
  json_object_set_new(sec, "engine", json_string(cal_engine_name(res->engine)));
  json_object_set_new(sec, "engine_choice", json_string(res->engine_why));
  json_object_set_new(sec, "flops_note",
                      json_string("matrix products and attention of every layer, and the LM "
                  "head's logits; elementwise work (norms, SiLU, residuals) "
                  "not counted"));
  if (res->workload)
    json_object_set_new(sec, "workload", json_string(res->workload));
  json_t *modes = json_object_get(sec, "modes");
  for (int m = 0; m < CAL_BATCH_NMODES; m++) {
    if (!res->ran[m])
      continue;
    json_t *jm = mode_json(r, res, m);
    if (!jm || json_object_set_new(modes, res->modes[m].name, jm) < 0) {
      json_decref(sec);
      return NULL;
    }
  }
  if (res->top_mode >= 0)
    json_object_set_new(sec, "top_level_mode",
                        json_string(res->modes[res->top_mode].name));
  return sec;
}
