/* The plan as JSON (schema in plan_json.h): writes the typed result, key
 * by key in the schema's order; computes nothing. */
#include "plan_json.h"

#include <math.h>
#include <stdlib.h>

#include "cal_err.h"

static json_t *num_or_null(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

static json_t *real_if(int cond, double x) {
  return cond ? json_real(x) : json_null();
}

static json_t *int_or_null(int64_t x) {
  return x ? json_integer((json_int_t)x) : json_null();
}

static json_t *str_or_null(const char *s) {
  return s && *s ? json_string(s) : json_null();
}

static json_t *work_json(const cal_plan_t *p) {
  static const char *const units[] = {NULL, "examples", "epochs", "steps"};
  const cal_work_t *w = &p->work;
  if (w->unit == CAL_WORK_NONE)
    return json_null();
  json_t *x = json_object();
  json_object_set_new(x, "unit", json_string(units[w->unit]));
  json_object_set_new(x, "examples", json_integer((json_int_t)p->examples));
  json_object_set_new(x, "epochs",
                      real_if(w->unit == CAL_WORK_EPOCHS, w->epochs));
  json_object_set_new(x, "dataset_examples",
                      w->unit == CAL_WORK_EPOCHS
                          ? json_integer((json_int_t)w->dataset_examples)
                          : json_null());
  json_object_set_new(x, "steps", w->unit == CAL_WORK_STEPS
                                      ? json_integer((json_int_t)w->steps)
                                      : json_null());
  json_object_set_new(x, "global_batch",
                      w->unit == CAL_WORK_STEPS
                          ? json_integer((json_int_t)w->global_batch)
                          : json_null());
  return x;
}

/* The split's figures at the top of the plan (nulls with no split). */
static void split_json(json_t *root, const cal_plan_t *p) {
  const cal_split_t *sp = &p->sp;
  const int ex = p->examples && p->nsplit, on = p->nsplit > 0;
  json_t *strag = json_array();
  json_object_set_new(root, "schema", json_string(CAL_PLAN_SCHEMA));
  json_object_set_new(root, "examples", int_or_null((int64_t)p->examples));
  json_object_set_new(root, "work", work_json(p));
  json_object_set_new(root, "makespan_s", real_if(ex, sp->makespan_s));
  json_object_set_new(root, "even_split_makespan_s",
                      real_if(ex, sp->even_makespan_s));
  json_object_set_new(root, "speedup_vs_even_split", real_if(on, sp->speedup));
  json_object_set_new(root, "sum_throughput", real_if(on, sp->sum_throughput));
  json_object_set_new(root, "mean_throughput",
                      real_if(on, sp->mean_throughput));
  json_object_set_new(root, "throughput_ratio", real_if(on, sp->ratio));
  json_object_set_new(root, "heterogeneous", json_boolean(sp->heterogeneous));
  json_object_set_new(root, "heterogeneous_note", str_or_null(p->hetero_note));
  for (size_t k = 0; k < p->nmachines; k++)
    if (p->machines[k].straggler)
      json_array_append_new(strag, json_string(p->machines[k].m->name));
  json_object_set_new(root, "stragglers", strag);
  json_object_set_new(root, "machines_in_split",
                      json_integer((json_int_t)p->nsplit));
  json_object_set_new(root, "split_note", str_or_null(p->split_note));
  json_object_set_new(root, "target_effective_batch", int_or_null(p->target));
  json_object_set_new(root, "cost_usd", num_or_null(p->cost_usd));
}

/* The "activation_model" object: modelled from the shapes, not measured. */
static json_t *act_json(const cal_plan_model_t *md) {
  const cal_plan_act_t *a = &md->act;
  json_t *x = json_object();
  json_object_set_new(x, "measured", json_false());
  json_object_set_new(x, "source", json_string("analytic"));
  json_object_set_new(x, "layers", json_integer(a->layers));
  json_object_set_new(x, "seq", json_integer(a->seq));
  json_object_set_new(x, "hidden", json_integer(a->shape.hidden));
  json_object_set_new(x, "heads", json_integer(a->shape.heads));
  json_object_set_new(x, "kv_heads", json_integer(a->shape.kv_heads));
  json_object_set_new(x, "head_dim", json_integer(a->shape.head_dim));
  json_object_set_new(x, "ffn", json_integer(a->shape.ffn));
  json_object_set_new(x, "bytes_per_element", json_real(a->bytes_per_element));
  json_object_set_new(x, "checkpointing", json_boolean(a->checkpointing));
  json_object_set_new(x, "lora_rank", int_or_null(md->lora_rank));
  json_object_set_new(x, "bytes_per_example",
                      json_real(md->assume.activation_bytes_per_example));
  json_object_set_new(x, "without_checkpointing_bytes_per_example",
                      json_real(a->est.full_bytes));
  json_object_set_new(x, "with_checkpointing_bytes_per_example",
                      json_real(a->est.checkpointed_bytes));
  json_object_set_new(x, "shapes_from", json_string(a->shapes_from));
  json_object_set_new(
      x, "note",
      json_string("modelled from the shapes, not measured, by the memory "
                  "model the batch sweep's fits uses: per layer seq x (4 "
                  "hidden + 2 + 2 q + 2 kv + heads + 3 ffn) elements kept "
                  "for the backward pass (fused attention: a log-sum-exp, "
                  "not the probabilities), fp32 in training as the "
                  "measured step keeps them; the LM head's rows and one "
                  "chunk of logits where the profile records its "
                  "vocabulary; embedding and framework workspace not "
                  "counted"));
  return x;
}

/* The "model" object: its memory at micro-batch 1 and the assumptions. */
static json_t *model_json(const cal_plan_model_t *md) {
  const cal_mem_need_t *base = &md->base;
  json_t *model = json_object();
  json_object_set_new(model, "params", json_real(md->params));
  json_object_set_new(model, "dtype", json_string(cal_dtype_name(md->dtype)));
  json_object_set_new(model, "bytes_per_param",
                      json_real(cal_dtype_bytes(md->dtype)));
  json_object_set_new(model, "training",
                      json_string(cal_training_name(md->training)));
  json_object_set_new(model, "optimizer",
                      md->training == CAL_TRAIN_INFERENCE
                          ? json_null()
                          : json_string("adam"));
  json_object_set_new(model, "trainable_params",
                      json_real(base->trainable_params));
  json_object_set_new(model, "lora_fraction",
                      real_if(md->training == CAL_TRAIN_LORA,
                              md->lora_fraction));
  json_object_set_new(model, "lora_rank", int_or_null(md->lora_rank));
  json_object_set_new(model, "activation_fraction",
                      real_if(!md->has_act, md->assume.activation_fraction));
  json_object_set_new(model, "headroom", json_real(md->assume.headroom));
  json_object_set_new(model, "weights_bytes", json_real(base->weights_bytes));
  json_object_set_new(model, "gradients_bytes",
                      json_real(base->gradients_bytes));
  json_object_set_new(model, "optimizer_bytes",
                      json_real(base->optimizer_bytes));
  json_object_set_new(model, "master_weights_bytes",
                      json_real(base->master_bytes));
  json_object_set_new(model, "activations_bytes_per_example",
                      json_real(base->activations_bytes));
  json_object_set_new(model, "activation_model",
                      md->has_act ? act_json(md) : json_null());
  return model;
}

/* A machine's "memory" object. */
static json_t *memory_json(const cal_plan_entry_t *e) {
  json_t *mem = json_object();
  json_object_set_new(mem, "batch_size", json_integer(e->mem.batch_size));
  json_object_set_new(mem, "available_bytes", num_or_null(e->mem.available));
  json_object_set_new(mem, "budget_bytes", num_or_null(e->mem.budget));
  json_object_set_new(mem, "state_bytes", json_real(e->mem.state));
  json_object_set_new(mem, "activations_bytes",
                      json_real(e->mem.activations));
  json_object_set_new(mem, "need_bytes", json_real(e->mem.need));
  json_object_set_new(mem, "max_batch_size",
                      e->mem.max_batch >= 0 ? json_integer(e->mem.max_batch)
                                            : json_null());
  json_object_set_new(mem, "fits", e->mem.fits >= 0
                                       ? json_boolean(e->mem.fits)
                                       : json_null());
  return mem;
}

/* A machine's entry: its share, time, cost, batch and memory. */
static json_t *machine_json(const cal_plan_t *p, const cal_plan_entry_t *e) {
  const cal_plan_machine_t *m = e->m;
  json_t *x = json_pack(
      "{s:s, s:s, s:s, s:f, s:o, s:o, s:o, s:o, s:b, s:o, s:f, s:o, s:o, s:o,"
      " s:o, s:o, s:o, s:b}",
      "name", m->name, "profile", m->path, "source",
      cal_plan_source_name(m->source), "throughput", m->throughput,
      "throughput_ci_low", num_or_null(m->ci_low), "throughput_ci_high",
      num_or_null(m->ci_high), "throughput_ci_level", num_or_null(m->ci_level),
      "optimal_batch_size", int_or_null(m->optimal_batch), "in_split",
      e->in_split, "left_out_reason", str_or_null(e->left_out_reason),
      "share", e->share, "examples",
      p->examples ? json_integer((json_int_t)e->examples) : json_null(),
      "finish_s", num_or_null(e->finish_s), "alone_s",
      num_or_null(e->alone_s), "price_per_hour_usd",
      num_or_null(m->price_per_hour), "cost_usd", num_or_null(e->cost_usd),
      "alone_cost_usd", num_or_null(e->alone_cost_usd), "straggler",
      e->straggler);
  json_object_set_new(x, "throughput_basis", str_or_null(m->basis));
  json_object_set_new(x, "optimal_batch_is_lower_bound",
                      json_boolean(m->optimal_is_lower_bound));
  json_object_set_new(
      x, "scaled_from",
      isfinite(m->flops_ratio)
          ? json_pack("{s:o, s:f, s:f, s:f}", "preset", str_or_null(m->preset),
                      "throughput", m->measured_throughput, "flops_params",
                      m->flops_params, "flops_per_token_ratio", m->flops_ratio)
          : json_null());
  if (p->target) {
    json_object_set_new(x, "micro_batch_size",
                        json_integer(e->batch.micro_batch));
    json_object_set_new(x, "grad_accum_steps",
                        json_integer(e->batch.accum_steps));
    json_object_set_new(x, "batch_note", json_string(e->batch_note));
  }
  if (e->has_memory)
    json_object_set_new(x, "memory", memory_json(e));
  return x;
}

/* A machine left out of the split. */
static json_t *excluded_json(const cal_plan_machine_t *m) {
  json_t *x = json_object();
  json_object_set_new(x, "name", json_string(m->name));
  json_object_set_new(x, "profile", json_string(m->path));
  json_object_set_new(x, "reason", json_string(cal_plan_excluded_reason(m)));
  return x;
}

/* Names of the plan's machines at the indices idx. */
static json_t *names_json(const cal_plan_t *p, const size_t *idx, size_t n) {
  json_t *a = json_array();
  for (size_t k = 0; k < n; k++)
    json_array_append_new(a, json_string(p->machines[idx[k]].m->name));
  return a;
}

static json_t *placement_json(const cal_plan_t *p) {
  const cal_plan_placement_t *pl = p->placement;
  json_t *x = json_object();
  json_object_set_new(x, "fits_on", names_json(p, pl->fits_on, pl->nfits_on));
  json_object_set_new(x, "shard_need_bytes", json_real(pl->shard_need));
  json_object_set_new(x, "shard_group", names_json(p, pl->group, pl->ngroup));
  json_object_set_new(x, "strategy", json_string(cal_place_name(pl->strategy)));
  json_object_set_new(x, "note", json_string(pl->note));
  return x;
}

/* The "network" object: the data-parallel step with its all-reduce. */
static json_t *network_json(const cal_plan_network_t *nw) {
  const cal_net_step_t *st = &nw->st;
  json_t *ms = json_array(), *lines = json_array();
  for (size_t k = 0; k < nw->nmachines; k++) {
    const cal_plan_step_machine_t *s = &nw->machines[k];
    json_array_append_new(
        ms, json_pack("{s:s, s:f, s:s?, s:s, s:f, s:f}", "name", s->m->name,
                      "throughput", s->throughput, "throughput_mode",
                      s->m->mode, "throughput_from", cal_step_src_name(s->from),
                      "examples_per_step", s->examples_per_step, "compute_s",
                      st->compute_s));
  }
  for (size_t k = 0; k < nw->narith; k++)
    json_array_append_new(lines, json_string(nw->arith[k]));
  return json_pack(
      "{s:s, s:i, s:i, s:b, s:s*, s:s?, s:f, s:f, s:s, s:f, s:f, s:b, s:f,"
      " s:f, s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:{s:s, s:f, s:f},"
      " s:b, s:b, s:s, s:{s:I, s:o, s:I, s:f, s:f, s:f}, s:o}",
      "source", nw->net->source, "ranks", nw->net->ranks, "hosts",
      nw->net->hosts, "intra_host", nw->net->intra_host, "note", nw->note,
      "compute_note", nw->compute_note, "trainable_params",
      nw->trainable_params, "bytes_per_gradient", nw->bytes_per_gradient,
      "gradient_dtype", cal_dtype_name(nw->dtype), "gradient_bytes",
      nw->gradient_bytes, "allreduce_s", nw->allreduce_s,
      "allreduce_extrapolated", nw->extrapolated, "allreduce_busbw_gbps",
      nw->busbw_gbps, "global_batch", nw->global_batch, "global_batch_from",
      nw->global_batch_from, "machines", ms, "compute_s", st->compute_s,
      "step_s", st->step_s, "fleet_throughput", st->fleet_throughput,
      "step_overlap_s", st->step_overlap_s, "fleet_throughput_overlap",
      st->fleet_throughput_overlap, "overlap_note",
      "with overlap: communication fully hidden behind compute, an upper "
      "bound of what overlap gains",
      "allreduce_fraction", st->allreduce_fraction, "fastest", "name",
      nw->fastest->name, "throughput", st->fastest_throughput, "alone_s",
      st->alone_s, "slower_than_fastest", st->slower_than_fastest,
      "slower_than_fastest_with_overlap", st->slower_overlap, "verdict",
      nw->verdict, "grad_accum", "recommended", (json_int_t)st->accum,
      "crossover", int_or_null(st->crossover_accum), "amortise",
      (json_int_t)st->amortise_accum, "allreduce_fraction_target",
      CAL_NET_AR_FRACTION, "step_s", st->accum_step_s, "fleet_throughput",
      st->accum_throughput, "arithmetic", lines);
}

json_t *cal_plan_json(const cal_plan_t *p) {
  json_t *root = json_object(), *machines = json_array(),
         *excluded = json_array(), *warnings = json_array();
  if (!root || !machines || !excluded || !warnings)
    goto fail;
  split_json(root, p);
  json_object_set_new(root, "model",
                      p->model ? model_json(p->model) : json_null());
  for (size_t k = 0; k < p->nmachines; k++)
    json_array_append_new(machines, machine_json(p, &p->machines[k]));
  for (size_t k = 0; k < p->nexcluded; k++)
    json_array_append_new(excluded, excluded_json(p->excluded[k]));
  for (size_t k = 0; k < p->nwarnings; k++)
    json_array_append_new(warnings, json_string(p->warnings[k]));
  json_object_set_new(root, "machines", machines);
  json_object_set_new(root, "excluded", excluded);
  json_object_set_new(root, "warnings", warnings);
  json_object_set_new(root, "placement",
                      p->placement ? placement_json(p) : json_null());
  if (p->has_net) {
    json_t *net = p->network ? network_json(p->network) : json_null();
    if (!net || json_object_set_new(root, "network", net) < 0) {
      json_decref(root);
      return NULL;
    }
  }
  return root;
fail:
  json_decref(root);
  json_decref(machines);
  json_decref(excluded);
  json_decref(warnings);
  return NULL;
}

int cal_plan_render_json(const void *in, int variant, FILE *out, char *err,
                         size_t errlen) {
  (void)variant;
  json_t *root = cal_plan_json(in);
  char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10))
                    : NULL;
  json_decref(root);
  if (!text) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  fputs(text, out);
  fputc('\n', out);
  free(text);
  return 0;
}
