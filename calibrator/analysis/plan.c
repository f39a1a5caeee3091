/* The plan of `calibrate plan`: work split, batch and accumulation, memory
 * fit and placement, built as one JSON tree (schema in plan.h) from the
 * arithmetic of plan_math.c.  Rendering is in report/plan_render.c, the
 * command in commands/plan.c. */
#include "plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

const char *cal_plan_source_name(cal_plan_source_t s) {
  switch (s) {
  case CAL_PLAN_SRC_CSV: return "curve_csv";
  case CAL_PLAN_SRC_PEAK: return "peak_json";
  default: return "profile";
  }
}

/* The batch sweep's point behind the top-level throughput: its mode is
 * batch_source.mode, else prefill, else decode; NULL when none is found
 * or its median is not the throughput (an edited or older profile).
 * *mode: the mode it was found in. */
static const json_t *throughput_point(const json_t *r, double thr,
                                      int64_t batch, const char **mode) {
  const json_t *modes =
      json_object_get(json_object_get(r, "batch_sweep"), "modes");
  const char *want = json_string_value(
      json_object_get(json_object_get(r, "batch_source"), "mode"));
  const char *const order[] = {want, "prefill", "decode"};
  for (size_t k = 0; k < 3; k++) {
    const json_t *pts =
        order[k] ? json_object_get(json_object_get(modes, order[k]), "points")
                 : NULL;
    size_t i;
    const json_t *pt;
    json_array_foreach(pts, i, pt) {
      const json_t *bs = json_object_get(pt, "batch_size");
      if (!json_is_integer(bs) || json_integer_value(bs) != batch ||
          strcmp(cal_json_str(pt, "status"), "ok") != 0)
        continue;
      double med = cal_json_num(pt, "examples_per_s", NAN);
      if (fabs(med - thr) <= 1e-6 * fabs(thr)) {
        *mode = order[k];
        return pt;
      }
    }
    if (order[k] && k == 0)
      break; /* the recorded mode decides */
  }
  return NULL;
}

/* The train curve's optimal point (batch_sweep.modes.train): its
 * examples/s into *thr and its batch into *batch, or nothing. */
static void train_optimum(const json_t *r, double *thr, int64_t *batch) {
  const json_t *train = json_object_get(
      json_object_get(json_object_get(r, "batch_sweep"), "modes"), "train");
  const json_t *ob = json_object_get(train, "optimal_batch_size");
  size_t i;
  const json_t *pt;
  if (!json_is_integer(ob) || json_integer_value(ob) < 1)
    return;
  json_array_foreach(json_object_get(train, "points"), i, pt) {
    const json_t *bs = json_object_get(pt, "batch_size");
    double v = cal_json_num(pt, "examples_per_s", NAN);
    if (json_is_integer(bs) &&
        json_integer_value(bs) == json_integer_value(ob) &&
        strcmp(cal_json_str(pt, "status"), "ok") == 0 && v > 0 &&
        isfinite(v)) {
      *thr = v;
      *batch = (int64_t)json_integer_value(ob);
      return;
    }
  }
}

static int64_t shape_int(const json_t *model, const char *k) {
  const json_t *v = json_object_get(model, k);
  return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

void cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m) {
  const json_t *r = p->root;
  memset(m, 0, sizeof *m);
  m->prof = p;
  m->path = p->path;
  m->source = CAL_PLAN_SRC_PROFILE;
  m->name = json_string_value(json_object_get(r, "device_name"));
  if (!m->name)
    m->name = p->path;
  const json_t *t = json_object_get(r, "throughput");
  m->throughput = json_is_number(t) ? json_number_value(t) : NAN;
  const json_t *b = json_object_get(r, "optimal_batch_size");
  m->optimal_batch = json_is_integer(b) ? (int64_t)json_integer_value(b) : 0;
  const json_t *avail = json_object_get(
      json_object_get(json_object_get(r, "machine"), "memory"),
      "available_bytes");
  const json_t *mgb = json_object_get(r, "memory_gb");
  if (json_is_number(avail) && json_number_value(avail) > 0)
    m->available = json_number_value(avail);
  else if (json_is_number(mgb) && json_number_value(mgb) > 0)
    m->available = json_number_value(mgb) * 1e9;
  else
    m->available = 0;
  m->price_per_hour = m->ci_low = m->ci_high = m->ci_level = NAN;
  const char *found = NULL;
  const json_t *pt = isfinite(m->throughput) && m->optimal_batch
                         ? throughput_point(r, m->throughput, m->optimal_batch,
                                            &found)
                         : NULL;
  m->mode = json_string_value(
      json_object_get(json_object_get(r, "batch_source"), "mode"));
  if (!m->mode)
    m->mode = found;
  train_optimum(r, &m->train_throughput, &m->train_batch);
  const json_t *st = json_object_get(pt, "stats");
  if (st) {
    m->ci_low = cal_json_num(st, "ci_low", NAN);
    m->ci_high = cal_json_num(st, "ci_high", NAN);
    m->ci_level = cal_json_num(st, "ci_level", NAN);
  }
  const json_t *model =
      json_object_get(json_object_get(r, "batch_sweep"), "model");
  m->shape = (cal_act_shape_t){
      .hidden = shape_int(model, "hidden"), .heads = shape_int(model, "heads"),
      .kv_heads = shape_int(model, "kv_heads"),
      .head_dim = shape_int(model, "head_dim"), .ffn = shape_int(model, "ffn"),
      .seq = shape_int(model, "seq")};
  if (m->shape.head_dim == 0 && m->shape.heads > 0 &&
      m->shape.hidden % m->shape.heads == 0)
    m->shape.head_dim = m->shape.hidden / m->shape.heads;
  cal_act_shape_t probe = m->shape;
  probe.layers = 1;
  m->has_shape = cal_lora_params(&probe, 1) > 0;
}

/* The state of one build: inputs, the split, and what the machines add to
 * the placement. */
typedef struct plan_build {
  cal_plan_opts_t o;       /* a copy: the activation model fills assume */
  const cal_plan_machine_t *ms;
  size_t n;
  cal_split_entry_t *ent;
  cal_split_t sp;
  size_t nsplit;           /* machines in the split */
  double *budget; /* bytes each machine may use, when the model is given */
  int64_t *maxb;  /* largest micro-batch each holds; -1 unknown, 0 none */
  size_t *use;    /* indices of the machines with a throughput */
  size_t nu, nfit, nknown;
  cal_mem_need_t base; /* the model at micro-batch 1 */
  cal_act_est_t act;   /* the activation model, when used */
  size_t shape_from;   /* the machine whose shapes it used */
  json_t *strag, *fits_on, *warnings; /* borrowed from root / owned */
} plan_build_t;

static json_t *num_or_null(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

static int has_throughput(const cal_plan_machine_t *m) {
  return isfinite(m->throughput) && m->throughput > 0;
}

static const char *batch_note(const cal_batch_plan_t *bp, int64_t b,
                              char *buf, size_t len) {
  switch (bp->kind) {
  case CAL_BATCH_EXACT: snprintf(buf, len, "optimal batch divides target"); break;
  case CAL_BATCH_DIVISOR:
    snprintf(buf, len,
             "optimal batch %" PRId64 " does not divide the target: "
             "largest divisor <= %" PRId64 " used", b, b);
    break;
  case CAL_BATCH_CAPPED:
    snprintf(buf, len, "optimal batch %" PRId64 " exceeds the target: one step",
             b);
    break;
  }
  return buf;
}

static json_t *work_json(const cal_plan_opts_t *o) {
  static const char *const units[] = {NULL, "examples", "epochs", "steps"};
  const cal_work_t *w = &o->work;
  if (w->unit == CAL_WORK_NONE)
    return json_null();
  json_t *x = json_object();
  json_object_set_new(x, "unit", json_string(units[w->unit]));
  json_object_set_new(x, "examples", json_integer((json_int_t)o->examples));
  json_object_set_new(x, "epochs", w->unit == CAL_WORK_EPOCHS
                                       ? json_real(w->epochs)
                                       : json_null());
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

/* What the flags say when the points alone would say more. */
static json_t *hetero_note(const cal_split_t *sp) {
  char buf[240];
  if (sp->heterogeneous)
    snprintf(buf, sizeof buf,
             "fastest/slowest %.2fx, confidence intervals apart", sp->ratio);
  else if (sp->ratio_exceeded)
    snprintf(buf, sizeof buf,
             "fastest/slowest %.2fx, but the confidence intervals overlap: "
             "the difference is within the measurements' noise", sp->ratio);
  else
    return json_null();
  return json_string(buf);
}

/* The split's figures at the top of the plan (nulls with no split). */
static void split_json(json_t *root, plan_build_t *b) {
  const cal_plan_opts_t *o = &b->o;
  const cal_split_t *sp = &b->sp;
  const int ex = o->examples && b->nsplit, on = b->nsplit > 0;
  json_object_set_new(root, "schema", json_string(CAL_PLAN_SCHEMA));
  json_object_set_new(root, "examples", o->examples
                                            ? json_integer((json_int_t)o->examples)
                                            : json_null());
  json_object_set_new(root, "work", work_json(o));
  json_object_set_new(root, "makespan_s",
                      ex ? json_real(sp->makespan_s) : json_null());
  json_object_set_new(root, "even_split_makespan_s",
                      ex ? json_real(sp->even_makespan_s) : json_null());
  json_object_set_new(root, "speedup_vs_even_split",
                      on ? json_real(sp->speedup) : json_null());
  json_object_set_new(root, "sum_throughput",
                      on ? json_real(sp->sum_throughput) : json_null());
  json_object_set_new(root, "mean_throughput",
                      on ? json_real(sp->mean_throughput) : json_null());
  json_object_set_new(root, "throughput_ratio",
                      on ? json_real(sp->ratio) : json_null());
  json_object_set_new(root, "heterogeneous", json_boolean(sp->heterogeneous));
  json_object_set_new(root, "heterogeneous_note", hetero_note(sp));
  b->strag = json_array();
  json_object_set_new(root, "stragglers", b->strag);
  json_object_set_new(root, "machines_in_split", json_integer((json_int_t)b->nsplit));
  json_object_set_new(
      root, "split_note",
      on ? json_null()
         : json_string("no machine can hold the model alone: no share of "
                       "the work is given (a sharded replica's throughput "
                       "is not measured by these inputs)"));
  json_object_set_new(root, "target_effective_batch",
                      o->target ? json_integer(o->target) : json_null());
}

/* The "activation_model" object: modelled from the shapes, not measured. */
static json_t *act_json(const plan_build_t *b) {
  const cal_plan_opts_t *o = &b->o;
  const cal_act_shape_t *s = &b->ms[b->shape_from].shape;
  json_t *x = json_object();
  json_object_set_new(x, "measured", json_false());
  json_object_set_new(x, "source", json_string("analytic"));
  json_object_set_new(x, "layers", json_integer(o->layers));
  json_object_set_new(x, "seq", json_integer(o->seq ? o->seq : s->seq));
  json_object_set_new(x, "hidden", json_integer(s->hidden));
  json_object_set_new(x, "heads", json_integer(s->heads));
  json_object_set_new(x, "kv_heads", json_integer(s->kv_heads));
  json_object_set_new(x, "head_dim", json_integer(s->head_dim));
  json_object_set_new(x, "ffn", json_integer(s->ffn));
  json_object_set_new(x, "bytes_per_element",
                      json_real(o->dtype == CAL_DT_FP32 ? 4 : 2));
  json_object_set_new(x, "checkpointing", json_boolean(o->checkpointing));
  json_object_set_new(x, "lora_rank",
                      o->lora_rank ? json_integer(o->lora_rank) : json_null());
  json_object_set_new(x, "bytes_per_example",
                      json_real(o->assume.activation_bytes_per_example));
  json_object_set_new(x, "without_checkpointing_bytes_per_example",
                      json_real(b->act.full_bytes));
  json_object_set_new(x, "with_checkpointing_bytes_per_example",
                      json_real(b->act.checkpointed_bytes));
  json_object_set_new(x, "shapes_from", json_string(b->ms[b->shape_from].path));
  json_object_set_new(
      x, "note",
      json_string("modelled from the shapes, not measured: per layer "
                  "seq x (4 hidden + 2 q + 2 kv + 4 ffn) + heads x seq^2 "
                  "elements kept for the backward pass; LM head logits, "
                  "embedding and framework workspace not counted"));
  return x;
}

/* The "model" object: its memory at micro-batch 1 and the assumptions. */
static json_t *model_json(const plan_build_t *b) {
  const cal_plan_opts_t *o = &b->o;
  const cal_mem_need_t *base = &b->base;
  const int act = o->assume.activation_bytes_per_example > 0;
  json_t *model = json_object();
  json_object_set_new(model, "params", json_real(o->params));
  json_object_set_new(model, "dtype", json_string(cal_dtype_name(o->dtype)));
  json_object_set_new(model, "bytes_per_param",
                      json_real(cal_dtype_bytes(o->dtype)));
  json_object_set_new(model, "training",
                      json_string(cal_training_name(o->training)));
  json_object_set_new(model, "optimizer",
                      o->training == CAL_TRAIN_INFERENCE ? json_null()
                                                         : json_string("adam"));
  json_object_set_new(model, "trainable_params",
                      json_real(base->trainable_params));
  json_object_set_new(model, "lora_fraction",
                      o->training == CAL_TRAIN_LORA
                          ? json_real(base->trainable_params / o->params)
                          : json_null());
  json_object_set_new(model, "lora_rank",
                      o->lora_rank ? json_integer(o->lora_rank) : json_null());
  json_object_set_new(model, "activation_fraction",
                      act ? json_null()
                          : json_real(o->assume.activation_fraction));
  json_object_set_new(model, "headroom", json_real(o->assume.headroom));
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
                      act ? act_json(b) : json_null());
  return model;
}

/* A machine left out of the split. */
static json_t *excluded_json(const cal_plan_machine_t *m) {
  json_t *x = json_object();
  json_object_set_new(x, "name", json_string(m->name));
  json_object_set_new(x, "profile", json_string(m->path));
  json_object_set_new(x, "reason",
                      json_string(isnan(m->throughput)
                                      ? "no measured throughput"
                                      : "throughput is not positive"));
  return x;
}

/* Micro-batch and accumulation for the target effective batch. */
static void plan_batch(const cal_plan_opts_t *o, const cal_plan_machine_t *m,
                       cal_batch_plan_t *bp, char *note, size_t notelen) {
  *bp = (cal_batch_plan_t){m->optimal_batch ? m->optimal_batch : 1, 1,
                           CAL_BATCH_EXACT};
  if (!o->target)
    return;
  if (m->optimal_batch && cal_plan_batch(m->optimal_batch, o->target, bp) == 0)
    batch_note(bp, m->optimal_batch, note, notelen);
  else {
    *bp = (cal_batch_plan_t){1, o->target, CAL_BATCH_DIVISOR};
    snprintf(note, notelen, "no optimal batch measured: batch 1");
  }
}

/* The largest micro-batch machine i can hold; -1 when its memory is
 * unknown, 0 when not even one example fits. */
static int64_t max_batch_of(plan_build_t *b, size_t i, double state,
                            double per_ex) {
  const cal_plan_machine_t *m = &b->ms[i];
  b->budget[i] = cal_plan_budget(m->available, b->o.assume.headroom);
  if (!(m->available > 0))
    return -1;
  double room = b->budget[i] - state;
  return room < per_ex ? 0
         : per_ex > 0  ? (int64_t)fmin(floor(room / per_ex), 1e9)
                       : 1000000000;
}

/* Machine i's "memory" object: model state plus the activations of the
 * micro-batch, which shrinks (micro, bp, note updated) when it does not
 * fit.  The model "fits" when its state and one example's activations do. */
static json_t *memory_json(plan_build_t *b, size_t i, int64_t *micro,
                           cal_batch_plan_t *bp, char *note, size_t notelen) {
  const cal_plan_opts_t *o = &b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const double state = b->base.total_bytes - b->base.activations_bytes;
  const int64_t max_batch = b->maxb[i];
  if (max_batch >= 1 && *micro > max_batch) {
    if (o->target && cal_plan_batch(max_batch, o->target, bp) == 0) {
      size_t at = strlen(note);
      snprintf(note + at, notelen - at,
               "%sreduced to fit memory (at most %" PRId64 ")",
               at ? "; " : "", max_batch);
      *micro = bp->micro_batch;
    } else if (!o->target) {
      *micro = max_batch;
    }
  }
  cal_mem_need_t need;
  cal_plan_memory(o->params, o->dtype, o->training, *micro, &o->assume, &need);
  json_t *mem = json_object();
  json_object_set_new(mem, "batch_size", json_integer(*micro));
  json_object_set_new(mem, "available_bytes",
                      m->available > 0 ? json_real(m->available) : json_null());
  json_object_set_new(mem, "budget_bytes",
                      m->available > 0 ? json_real(b->budget[i]) : json_null());
  json_object_set_new(mem, "state_bytes", json_real(state));
  json_object_set_new(mem, "activations_bytes",
                      json_real(need.activations_bytes));
  json_object_set_new(mem, "need_bytes", json_real(need.total_bytes));
  json_object_set_new(mem, "max_batch_size",
                      max_batch >= 0 ? json_integer(max_batch) : json_null());
  json_object_set_new(mem, "fits", m->available > 0
                                       ? json_boolean(max_batch >= 1)
                                       : json_null());
  return mem;
}

/* Why machine i has no share of the work, or NULL. */
static const char *left_out_reason(const plan_build_t *b, size_t i,
                                   char *buf, size_t len) {
  if (b->ent[i].usable)
    return NULL;
  const double state = b->base.total_bytes - b->base.activations_bytes;
  snprintf(buf, len,
           "cannot hold the model: %.2f GB of state and one example's "
           "%.2f GB of activations, %.2f GB budget",
           state / 1e9, b->base.activations_bytes / 1e9, b->budget[i] / 1e9);
  return buf;
}

/* Time and cost of machine i: its part of the split and the whole work
 * alone. */
static void time_cost_json(plan_build_t *b, size_t i, json_t *x) {
  const cal_plan_opts_t *o = &b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const cal_split_entry_t *e = &b->ent[i];
  /* a machine that cannot hold the model cannot do the work alone */
  const int can = o->examples && b->maxb[i] != 0;
  const double alone = (double)o->examples / m->throughput;
  const double price = m->price_per_hour;
  json_object_set_new(x, "finish_s", o->examples && e->usable
                                         ? json_real(e->finish_s)
                                         : json_null());
  json_object_set_new(x, "alone_s", can ? json_real(alone) : json_null());
  json_object_set_new(x, "price_per_hour_usd", num_or_null(price));
  json_object_set_new(
      x, "cost_usd",
      o->examples && isfinite(price)
          ? json_real(e->usable ? cal_plan_cost(price, b->sp.makespan_s) : 0)
          : json_null());
  json_object_set_new(x, "alone_cost_usd",
                      can && isfinite(price)
                          ? json_real(cal_plan_cost(price, alone))
                          : json_null());
}

/* A machine's entry: its share, time, cost, batch and memory. */
static json_t *machine_json(plan_build_t *b, size_t i) {
  const cal_plan_opts_t *o = &b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const cal_split_entry_t *e = &b->ent[i];
  char why[200];
  const char *reason = left_out_reason(b, i, why, sizeof why);
  json_t *x = json_object();
  json_object_set_new(x, "name", json_string(m->name));
  json_object_set_new(x, "profile", json_string(m->path));
  json_object_set_new(x, "source", json_string(cal_plan_source_name(m->source)));
  json_object_set_new(x, "throughput", json_real(m->throughput));
  json_object_set_new(x, "throughput_ci_low", num_or_null(m->ci_low));
  json_object_set_new(x, "throughput_ci_high", num_or_null(m->ci_high));
  json_object_set_new(x, "throughput_ci_level", num_or_null(m->ci_level));
  json_object_set_new(x, "optimal_batch_size",
                      m->optimal_batch ? json_integer(m->optimal_batch)
                                       : json_null());
  json_object_set_new(x, "in_split", json_boolean(e->usable));
  json_object_set_new(x, "left_out_reason",
                      reason ? json_string(reason) : json_null());
  json_object_set_new(x, "share", json_real(e->share));
  json_object_set_new(x, "examples",
                      o->examples ? json_integer((json_int_t)e->count)
                                  : json_null());
  time_cost_json(b, i, x);
  json_object_set_new(x, "straggler", json_boolean(e->straggler));
  if (e->straggler)
    json_array_append_new(b->strag, json_string(m->name));

  cal_batch_plan_t bp;
  char note[200] = "";
  plan_batch(o, m, &bp, note, sizeof note);
  int64_t micro = bp.micro_batch;
  json_t *mem = o->params > 0
                    ? memory_json(b, i, &micro, &bp, note, sizeof note)
                    : NULL;
  if (o->target) {
    json_object_set_new(x, "micro_batch_size", json_integer(bp.micro_batch));
    json_object_set_new(x, "grad_accum_steps", json_integer(bp.accum_steps));
    json_object_set_new(x, "batch_note", json_string(note));
  }
  if (mem)
    json_object_set_new(x, "memory", mem);
  return x;
}

/* Where the model goes when it fits on no machine alone: fills group with
 * the shard group; the strategy and its note.  CAL_ENOMEM. */
static int shard_strategy(const plan_build_t *b, double shard_need,
                          json_t *group, const char **strategy,
                          const char **note) {
  size_t nu = b->nu, nch = 0;
  double *bud = calloc(nu ? nu : 1, sizeof *bud);
  size_t *ord = calloc(nu ? nu : 1, sizeof *ord);
  int rc = CAL_ENOMEM;
  if (!bud || !ord)
    goto out;
  for (size_t k = 0; k < nu; k++)
    bud[k] = b->budget[b->use[k]];
  int ok = cal_plan_shard(bud, nu, shard_need, ord, &nch);
  for (size_t k = 0; k < nch && ok; k++)
    json_array_append_new(group, json_string(b->ms[b->use[ord[k]]].name));
  if (b->nknown == 0) {
    *strategy = "unknown";
    *note = "no profile records its memory: cannot tell whether the "
            "model fits";
  } else if (ok) {
    *strategy = "sharded";
    *note = "the model fits on no machine alone: sharding is required "
            "across the shard group (largest memory first)";
  } else {
    *strategy = "does_not_fit";
    *note = "the model does not fit even sharded across every machine";
  }
  rc = 0;
out:
  free(bud);
  free(ord);
  return rc;
}

/* The "placement" object (the model is given).  CAL_ENOMEM. */
static int placement_json(plan_build_t *b, json_t *root) {
  json_t *pl = json_object();
  json_object_set_new(root, "placement", pl);
  json_object_set_new(pl, "fits_on", b->fits_on);
  b->fits_on = NULL;
  /* sharding holds the model state once plus one example's activations */
  double shard_need = b->base.total_bytes;
  json_object_set_new(pl, "shard_need_bytes", json_real(shard_need));
  const char *strategy, *note;
  json_t *group = json_array();
  json_object_set_new(pl, "shard_group", group);
  if (b->nfit == b->nu) {
    strategy = "data_parallel";
    note = "the model fits on every machine: run independent batches on "
           "each (data parallel, no sharding traffic)";
  } else if (b->nfit > 0) {
    strategy = "fits_some";
    note = "the model fits on some machines only: give them independent "
           "batches; the others cannot hold it alone and get no share";
  } else if (shard_strategy(b, shard_need, group, &strategy, &note) < 0) {
    return CAL_ENOMEM;
  }
  json_object_set_new(pl, "strategy", json_string(strategy));
  json_object_set_new(pl, "note", json_string(note));
  return 0;
}

/* The activation model into b->o.assume when --layers was given: shapes
 * from the first machine that records them.  err filled on failure. */
static int activation_model(plan_build_t *b, char *err, size_t errlen) {
  cal_plan_opts_t *o = &b->o;
  if (o->layers <= 0)
    return 0;
  size_t k = 0;
  while (k < b->n && !b->ms[k].has_shape)
    k++;
  if (k == b->n) {
    snprintf(err, errlen,
             "--layers needs the model's shapes (hidden, heads, kv_heads, "
             "ffn, seq) from a profile's batch sweep; no input records them");
    return CAL_EINVAL;
  }
  b->shape_from = k;
  cal_act_shape_t s = b->ms[k].shape;
  s.layers = o->layers;
  if (o->seq)
    s.seq = o->seq;
  const double bpe = o->dtype == CAL_DT_FP32 ? 4 : 2;
  if (cal_act_model(&s, bpe, o->lora_rank, &b->act) < 0) {
    snprintf(err, errlen, "the shapes in %s cannot be modelled",
             b->ms[k].path);
    return CAL_EINVAL;
  }
  o->assume.activation_bytes_per_example =
      o->training == CAL_TRAIN_INFERENCE ? b->act.inference_bytes
      : o->checkpointing                 ? b->act.checkpointed_bytes
                                         : b->act.full_bytes;
  if (o->lora_rank)
    o->assume.lora_params = cal_lora_params(&s, o->lora_rank);
  for (size_t i = k + 1; i < b->n; i++) {
    const cal_act_shape_t *t = &b->ms[i].shape;
    const cal_act_shape_t *u = &b->ms[k].shape;
    char w[400];
    if (b->ms[i].has_shape &&
        (t->hidden != u->hidden || t->heads != u->heads ||
         t->kv_heads != u->kv_heads || t->ffn != u->ffn || t->seq != u->seq)) {
      snprintf(w, sizeof w, "%s measured other shapes than %s; the "
               "activation model uses those of %s", b->ms[i].path,
               b->ms[k].path, b->ms[k].path);
      json_array_append_new(b->warnings, json_string(w));
    }
  }
  return 0;
}

/* Which machines can hold the model (b->maxb), then the split over those
 * that can or whose memory is unknown.  err filled on failure. */
static int fit_and_split(plan_build_t *b, char *err, size_t errlen) {
  const cal_plan_opts_t *o = &b->o;
  double *thr = calloc(b->n, sizeof *thr), *lo = calloc(b->n, sizeof *lo),
         *hi = calloc(b->n, sizeof *hi);
  int rc = CAL_ENOMEM;
  if (!thr || !lo || !hi) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  const double state = b->base.total_bytes - b->base.activations_bytes;
  for (size_t i = 0; i < b->n; i++) {
    const cal_plan_machine_t *m = &b->ms[i];
    b->maxb[i] = o->params > 0
                     ? max_batch_of(b, i, state, b->base.activations_bytes)
                     : -1;
    if (!has_throughput(m))
      continue;
    b->use[b->nu++] = i;
    if (b->maxb[i] >= 0)
      b->nknown++;
    if (b->maxb[i] >= 1) {
      b->nfit++;
      json_array_append_new(b->fits_on, json_string(m->name));
    }
    thr[i] = b->maxb[i] != 0 ? m->throughput : 0;
    lo[i] = m->ci_low;
    hi[i] = m->ci_high;
  }
  if (b->nu == 0) {
    snprintf(err, errlen,
             "no usable machine: no input has a measured throughput > 0 "
             "(run calibrate --sweep-batch)");
    rc = CAL_EINVAL;
    goto out;
  }
  rc = cal_plan_split_ci(thr, lo, hi, b->n, o->examples, b->ent, &b->sp);
  b->nsplit = rc < 0 ? 0 : b->sp.n_usable;
  if (rc < 0) /* nothing can hold the model: no split, every share 0 */
    memset(&b->sp, 0, sizeof b->sp);
  rc = 0;
out:
  free(thr);
  free(lo);
  free(hi);
  return rc;
}

/* Every machine in the split priced, or none: the total cost.  err
 * filled when some are and one is not. */
static int cost_json(plan_build_t *b, json_t *root, char *err, size_t errlen) {
  double total = 0;
  for (size_t k = 0; b->o.priced && k < b->nu; k++) {
    const cal_plan_machine_t *m = &b->ms[b->use[k]];
    if (!b->ent[b->use[k]].usable)
      continue;
    if (!isfinite(m->price_per_hour)) {
      snprintf(err, errlen,
               "no price for %s (%s): give --price-per-hour NAME=USD for it "
               "or a default --price-per-hour USD", m->name, m->path);
      return CAL_EINVAL;
    }
    total += cal_plan_cost(m->price_per_hour, b->sp.makespan_s);
  }
  json_object_set_new(root, "cost_usd",
                      b->o.priced && b->o.examples && b->nsplit
                          ? json_real(total)
                          : json_null());
  return 0;
}

/* Split, model and machines into root; err filled on failure. */
static int build_into(plan_build_t *b, json_t *root, char *err, size_t errlen) {
  cal_plan_opts_t *o = &b->o;
  json_t *machines = json_array(), *excluded = json_array();
  int rc = CAL_ENOMEM;
  if (!machines || !excluded) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if ((rc = activation_model(b, err, errlen)) < 0)
    goto out;
  if (o->params > 0 && (rc = cal_plan_memory(o->params, o->dtype, o->training,
                                             1, &o->assume, &b->base)) < 0) {
    snprintf(err, errlen, "invalid model arguments");
    goto out;
  }
  if ((rc = fit_and_split(b, err, errlen)) < 0)
    goto out;
  split_json(root, b);
  if ((rc = cost_json(b, root, err, errlen)) < 0)
    goto out;
  json_object_set_new(root, "model",
                      o->params > 0 ? model_json(b) : json_null());
  for (size_t i = 0; i < b->n; i++)
    json_array_append_new(has_throughput(&b->ms[i]) ? machines : excluded,
                          has_throughput(&b->ms[i])
                              ? machine_json(b, i)
                              : excluded_json(&b->ms[i]));
  json_object_set(root, "machines", machines);
  json_object_set(root, "excluded", excluded);
  json_object_set(root, "warnings", b->warnings);
  rc = 0;
out:
  json_decref(machines);
  json_decref(excluded);
  return rc;
}

/* Append one line of the network's arithmetic. */
static void net_line(json_t *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void net_line(json_t *a, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  json_array_append_new(a, json_string(line));
}

/* Where machine m's compute figure for a training step comes from. */
typedef enum {
  STEP_TRAIN,       /* its throughput is a training step's */
  STEP_TRAIN_CURVE, /* its train curve's optimum, not the top-level figure */
  STEP_INFERENCE,   /* prefill or decode: a forward pass only */
  STEP_UNKNOWN,     /* a curve whose mode is not recorded */
} step_src_t;

static step_src_t step_source(const cal_plan_machine_t *m) {
  if (m->mode && strcmp(m->mode, "train") == 0)
    return STEP_TRAIN;
  if (m->train_throughput > 0 && isfinite(m->train_throughput))
    return STEP_TRAIN_CURVE;
  return m->mode ? STEP_INFERENCE : STEP_UNKNOWN;
}

/* The step's compute rests on what each machine's figure measured: the
 * "compute_note" (NULL when every figure is a training step's) and one
 * line of arithmetic naming each figure's source. */
static const char *compute_sources(const plan_build_t *b, const double *thr,
                                   json_t *lines) {
  char line[512];
  size_t at = (size_t)snprintf(line, sizeof line,
                               "throughput per machine (examples/s):");
  int inference = 0, unknown = 0, first = 1;
  for (size_t i = 0; i < b->n; i++) {
    if (!(thr[i] > 0))
      continue;
    const cal_plan_machine_t *m = &b->ms[i];
    step_src_t src = step_source(m);
    inference |= src == STEP_INFERENCE;
    unknown |= src == STEP_UNKNOWN;
    char what[160];
    if (src == STEP_TRAIN)
      snprintf(what, sizeof what, "train");
    else if (src == STEP_TRAIN_CURVE)
      snprintf(what, sizeof what, "its train curve at batch %lld, not the "
               "%s figure", (long long)m->train_batch,
               m->mode ? m->mode : "top-level");
    else if (src == STEP_INFERENCE)
      snprintf(what, sizeof what, "%s: inference", m->mode);
    else
      snprintf(what, sizeof what, "a curve, mode not recorded");
    if (at < sizeof line)
      at += (size_t)snprintf(line + at, sizeof line - at, "%s %s %.4g (%s)",
                             first ? "" : ",", m->name, thr[i], what);
    first = 0;
  }
  json_array_append_new(lines, json_string(line));
  if (inference)
    return "the compute time uses inference throughput (a forward pass, "
           "batch_source.mode other than train) where a machine has no "
           "train curve: a training step also runs the backward pass and "
           "the optimizer, so the compute time is too short and the "
           "all-reduce's share too large (measure with --sweep-batch --mode "
           "train)";
  if (unknown)
    return "the compute time uses the throughput of measured curves whose "
           "mode is not recorded: it is a training step's only if the curve "
           "measured one";
  return NULL;
}

/* The data-parallel step with its all-reduce over the fleet's measured
 * curve (plan_net.h): the "network" object, or NULL (err filled).  Each
 * machine computes at its training-step throughput: the top-level figure
 * when it is the train mode's, else the train curve's optimum when the
 * profile has one, else the top-level (inference) figure with a note. */
static json_t *network_json(const plan_build_t *b, char *err, size_t errlen) {
  const cal_plan_opts_t *o = &b->o;
  const cal_plan_net_t *net = o->net;
  double *thr = calloc(b->n ? b->n : 1, sizeof *thr);
  if (!thr) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  double sum_b = 0;
  size_t fastest = 0;
  for (size_t k = 0; k < b->nu; k++) {
    size_t i = b->use[k];
    const cal_plan_machine_t *m = &b->ms[i];
    if (!b->ent[i].usable)
      continue;
    int curve = step_source(m) == STEP_TRAIN_CURVE;
    thr[i] = curve ? m->train_throughput : m->throughput;
    int64_t ob = curve ? m->train_batch : m->optimal_batch;
    sum_b += ob > 0 ? (double)ob : 1;
    if (thr[i] > thr[fastest])
      fastest = i;
  }
  const char *gfrom = "the sum of the machines' optimal batches";
  double G = sum_b;
  if (o->work.unit == CAL_WORK_STEPS && o->work.global_batch) {
    G = (double)o->work.global_batch;
    gfrom = "--global-batch";
  } else if (o->target > 0) {
    G = (double)o->target;
    gfrom = "--target-effective-batch";
  }
  double grad = b->base.gradients_bytes, ar = 0;
  int extra = 0;
  cal_net_step_t st;
  if (cal_net_allreduce_s(&net->curve, grad, &ar, &extra) < 0 ||
      cal_net_step(thr, b->n, G, ar, CAL_NET_AR_FRACTION, &st) < 0) {
    free(thr);
    snprintf(err, errlen, "%s: no usable all-reduce curve or machine for "
             "the network estimate", net->source);
    return NULL;
  }
  int r = net->ranks > 1 ? net->ranks : 2;
  double busbw = grad / ar / 1e9 * 2.0 * (r - 1) / r;
  json_t *ms = json_array(), *ar_lines = json_array();
  static const char *const src_name[] = {"train", "train_curve", "inference",
                                         "unknown"};
  for (size_t i = 0; i < b->n; i++)
    if (thr[i] > 0)
      json_array_append_new(
          ms, json_pack("{s:s, s:f, s:s?, s:s, s:f, s:f}", "name",
                        b->ms[i].name, "throughput", thr[i], "throughput_mode",
                        b->ms[i].mode, "throughput_from",
                        src_name[step_source(&b->ms[i])], "examples_per_step",
                        G * thr[i] / st.sum_throughput, "compute_s",
                        st.compute_s));
  net_line(ar_lines, "gradients: %.4g trainable parameters x %g bytes (%s) = "
           "%.4g bytes", b->base.trainable_params, cal_dtype_bytes(o->dtype),
           cal_dtype_name(o->dtype), grad);
  net_line(ar_lines, "all-reduce of %.4g bytes: %.4g s, %s the measured "
           "curve (%d ranks on %d host%s); bus bandwidth %.3g GB/s",
           grad, ar, extra ? "extrapolated past the largest size of"
                           : "interpolated on", net->ranks, net->hosts,
           net->hosts == 1 ? "" : "s", busbw);
  const char *compute_note = compute_sources(b, thr, ar_lines);
  net_line(ar_lines, "step of G = %.0f examples (%s), split by throughput: "
           "compute = G / sum(throughput) = %.0f / %.4g = %.4g s%s", G, gfrom,
           G, st.sum_throughput, st.compute_s,
           compute_note ? " (see the note on the throughput)" : "");
  net_line(ar_lines, "no overlap: step = compute + all-reduce = %.4g + %.4g "
           "= %.4g s (%.1f%% all-reduce), %.4g examples/s", st.compute_s, ar,
           st.step_s, 100 * st.allreduce_fraction, st.fleet_throughput);
  net_line(ar_lines, "with overlap (an upper bound: all communication hidden "
           "behind compute): step = max(%.4g, %.4g) = %.4g s, %.4g examples/s",
           st.compute_s, ar, st.step_overlap_s, st.fleet_throughput_overlap);
  net_line(ar_lines, "fastest machine alone (%s): G / %.4g = %.4g s a step, "
           "no all-reduce", b->ms[fastest].name, st.fastest_throughput,
           st.alone_s);
  if (st.crossover_accum)
    net_line(ar_lines, "k accumulation steps: k x %.4g + %.4g < k x %.4g from "
             "k = %lld (the crossover)", st.compute_s, ar, st.alone_s,
             (long long)st.crossover_accum);
  net_line(ar_lines, "all-reduce <= %.0f%% of a step: k >= %.4g x %.2g / "
           "(%.2g x %.4g), k = %lld", 100 * CAL_NET_AR_FRACTION, ar,
           1 - CAL_NET_AR_FRACTION, CAL_NET_AR_FRACTION, st.compute_s,
           (long long)st.amortise_accum);
  const char *verdict =
      st.slower_than_fastest
          ? (st.crossover_accum
                 ? "data parallelism over the fleet is slower than the "
                   "fastest machine alone without gradient accumulation"
                 : "data parallelism over the fleet is slower than the "
                   "fastest machine alone at any accumulation")
          : "data parallelism over the fleet is faster than the fastest "
            "machine alone";
  json_t *j = json_pack(
      "{s:s, s:i, s:i, s:b, s:s*, s:s?, s:f, s:f, s:s, s:f, s:f, s:b, s:f,"
      " s:f, s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:{s:s, s:f, s:f},"
      " s:b, s:b, s:s, s:{s:I, s:o, s:I, s:f, s:f, s:f}, s:o}",
      "source", net->source, "ranks", net->ranks, "hosts", net->hosts,
      "intra_host", net->intra_host, "note",
      net->intra_host ? "the curve was measured between ranks of one host "
                        "(shared memory), not over a network"
                      : NULL,
      "compute_note", compute_note,
      "trainable_params", b->base.trainable_params, "bytes_per_gradient",
      cal_dtype_bytes(o->dtype), "gradient_dtype", cal_dtype_name(o->dtype),
      "gradient_bytes", grad, "allreduce_s", ar, "allreduce_extrapolated",
      extra, "allreduce_busbw_gbps", busbw, "global_batch", G,
      "global_batch_from", gfrom, "machines", ms, "compute_s", st.compute_s,
      "step_s", st.step_s, "fleet_throughput", st.fleet_throughput,
      "step_overlap_s", st.step_overlap_s, "fleet_throughput_overlap",
      st.fleet_throughput_overlap, "overlap_note",
      "with overlap: communication fully hidden behind compute, an upper "
      "bound of what overlap gains",
      "allreduce_fraction", st.allreduce_fraction, "fastest", "name",
      b->ms[fastest].name, "throughput", st.fastest_throughput, "alone_s",
      st.alone_s, "slower_than_fastest", st.slower_than_fastest,
      "slower_than_fastest_with_overlap", st.slower_overlap, "verdict",
      verdict, "grad_accum", "recommended", (json_int_t)st.accum,
      "crossover", st.crossover_accum ? json_integer(st.crossover_accum) : json_null(),
      "amortise", (json_int_t)st.amortise_accum, "allreduce_fraction_target",
      CAL_NET_AR_FRACTION, "step_s", st.accum_step_s, "fleet_throughput",
      st.accum_throughput, "arithmetic", ar_lines);
  free(thr);
  if (!j)
    snprintf(err, errlen, "out of memory");
  return j;
}

json_t *cal_plan_build(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                       size_t n, char *err, size_t errlen) {
  plan_build_t b = {.o = *o, .ms = ms, .n = n};
  json_t *root = json_object();
  b.ent = calloc(n ? n : 1, sizeof *b.ent);
  b.budget = calloc(n ? n : 1, sizeof *b.budget);
  b.maxb = calloc(n ? n : 1, sizeof *b.maxb);
  b.use = calloc(n ? n : 1, sizeof *b.use);
  b.fits_on = json_array();
  b.warnings = json_array();
  if (!root || !b.ent || !b.budget || !b.maxb || !b.use || !b.fits_on ||
      !b.warnings) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (build_into(&b, root, err, errlen) < 0)
    goto fail;
  if (o->params > 0) {
    if (placement_json(&b, root) < 0) {
      snprintf(err, errlen, "out of memory");
      goto fail;
    }
  } else {
    json_object_set_new(root, "placement", json_null());
  }
  if (o->net && o->params > 0 && o->training != CAL_TRAIN_INFERENCE &&
      b.nsplit > 0 && o->net->curve.n > 0) {
    json_t *net = network_json(&b, err, errlen);
    if (!net)
      goto fail;
    json_object_set_new(root, "network", net);
  } else if (o->net) {
    json_object_set_new(root, "network", json_null());
    json_array_append_new(
        json_object_get(root, "warnings"),
        json_string(o->net->curve.n == 0
                        ? "the fleet profile has no all-reduce curve (a job "
                          "of one rank): no network estimate"
                    : !(o->params > 0)
                        ? "the fleet's all-reduce curve enters the plan with "
                          "a model to train: give --model-params (and --dtype)"
                    : o->training == CAL_TRAIN_INFERENCE
                        ? "inference all-reduces no gradients: no network "
                          "estimate"
                        : "no machine can hold the model: no data-parallel "
                          "step to estimate"));
  }
  goto out;
fail:
  json_decref(root);
  root = NULL;
out:
  json_decref(b.fits_on);
  json_decref(b.warnings);
  free(b.ent);
  free(b.budget);
  free(b.maxb);
  free(b.use);
  return root;
}
