/* The plan of `calibrate plan`: work split, batch and accumulation, memory
 * fit and placement, built as one JSON tree (schema in plan.h) from the
 * arithmetic of plan_math.c.  Rendering is in report/plan_render.c, the
 * command in commands/plan.c. */
#include "plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

void cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m) {
  const json_t *r = p->root;
  m->prof = p;
  m->name = json_string_value(json_object_get(r, "device_name"));
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
}

/* The state of one build: inputs, the split, and what the machines add to
 * the placement. */
typedef struct plan_build {
  const cal_plan_opts_t *o;
  const cal_plan_machine_t *ms;
  size_t n;
  cal_split_entry_t *ent;
  double *budget; /* bytes each machine may use, when the model is given */
  size_t *use;    /* indices of the usable machines */
  size_t nu, nfit, nknown;
  cal_mem_need_t base; /* the model at micro-batch 1 */
  json_t *strag, *fits_on; /* borrowed from root / owned */
} plan_build_t;

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

/* The split's figures at the top of the plan. */
static void split_json(json_t *root, const cal_plan_opts_t *o,
                       const cal_split_t *sp, plan_build_t *b) {
  json_object_set_new(root, "schema", json_string(CAL_PLAN_SCHEMA));
  json_object_set_new(root, "examples", o->examples
                                            ? json_integer((json_int_t)o->examples)
                                            : json_null());
  json_object_set_new(root, "makespan_s",
                      o->examples ? json_real(sp->makespan_s) : json_null());
  json_object_set_new(root, "even_split_makespan_s",
                      o->examples ? json_real(sp->even_makespan_s) : json_null());
  json_object_set_new(root, "speedup_vs_even_split", json_real(sp->speedup));
  json_object_set_new(root, "sum_throughput", json_real(sp->sum_throughput));
  json_object_set_new(root, "mean_throughput", json_real(sp->mean_throughput));
  json_object_set_new(root, "throughput_ratio", json_real(sp->ratio));
  json_object_set_new(root, "heterogeneous", json_boolean(sp->heterogeneous));
  b->strag = json_array();
  json_object_set_new(root, "stragglers", b->strag);
  json_object_set_new(root, "target_effective_batch",
                      o->target ? json_integer(o->target) : json_null());
}

/* The "model" object: its memory at micro-batch 1 and the assumptions. */
static json_t *model_json(const cal_plan_opts_t *o, const cal_mem_need_t *base) {
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
                          ? json_real(o->assume.lora_fraction)
                          : json_null());
  json_object_set_new(model, "activation_fraction",
                      json_real(o->assume.activation_fraction));
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
  return model;
}

/* A machine left out of the split. */
static json_t *excluded_json(const cal_plan_machine_t *m) {
  json_t *x = json_object();
  json_object_set_new(x, "name", json_string(m->name));
  json_object_set_new(x, "profile", json_string(m->prof->path));
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
  b->budget[i] = cal_plan_budget(m->available, b->o->assume.headroom);
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
  const cal_plan_opts_t *o = b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const double state = b->base.total_bytes - b->base.activations_bytes;
  const int64_t max_batch = max_batch_of(b, i, state, b->base.activations_bytes);
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
  if (m->available > 0) {
    int fits = max_batch >= 1;
    b->nknown++;
    b->nfit += (size_t)fits;
    if (fits)
      json_array_append_new(b->fits_on, json_string(m->name));
    json_object_set_new(mem, "fits", json_boolean(fits));
  } else {
    json_object_set_new(mem, "fits", json_null());
  }
  return mem;
}

/* A usable machine's entry: its share, batch and memory. */
static json_t *machine_json(plan_build_t *b, size_t i) {
  const cal_plan_opts_t *o = b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const cal_split_entry_t *e = &b->ent[i];
  json_t *x = json_object();
  json_object_set_new(x, "name", json_string(m->name));
  json_object_set_new(x, "profile", json_string(m->prof->path));
  json_object_set_new(x, "throughput", json_real(m->throughput));
  json_object_set_new(x, "optimal_batch_size",
                      m->optimal_batch ? json_integer(m->optimal_batch)
                                       : json_null());
  json_object_set_new(x, "share", json_real(e->share));
  json_object_set_new(x, "examples",
                      o->examples ? json_integer((json_int_t)e->count)
                                  : json_null());
  json_object_set_new(x, "finish_s",
                      o->examples ? json_real(e->finish_s) : json_null());
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
           "batches; the others cannot hold it alone";
  } else if (shard_strategy(b, shard_need, group, &strategy, &note) < 0) {
    return CAL_ENOMEM;
  }
  json_object_set_new(pl, "strategy", json_string(strategy));
  json_object_set_new(pl, "note", json_string(note));
  return 0;
}

/* Split, model and machines into root; err filled on failure. */
static int build_into(plan_build_t *b, json_t *root, char *err, size_t errlen) {
  const cal_plan_opts_t *o = b->o;
  json_t *machines = json_array(), *excluded = json_array();
  double *thr = calloc(b->n, sizeof *thr);
  cal_split_t sp;
  int rc = CAL_ENOMEM;
  if (!thr || !machines || !excluded) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < b->n; i++)
    thr[i] = b->ms[i].throughput;
  if ((rc = cal_plan_split(thr, b->n, o->examples, b->ent, &sp)) < 0) {
    snprintf(err, errlen,
             "no usable machine: no profile has a measured throughput > 0 "
             "(run calibrate --sweep-batch)");
    goto out;
  }
  split_json(root, o, &sp, b);
  if (o->params > 0 && (rc = cal_plan_memory(o->params, o->dtype, o->training,
                                             1, &o->assume, &b->base)) < 0) {
    snprintf(err, errlen, "invalid model arguments");
    goto out;
  }
  json_object_set_new(root, "model",
                      o->params > 0 ? model_json(o, &b->base) : json_null());
  for (size_t i = 0; i < b->n; i++) {
    if (!b->ent[i].usable) {
      json_array_append_new(excluded, excluded_json(&b->ms[i]));
      continue;
    }
    b->use[b->nu++] = i;
    json_array_append_new(machines, machine_json(b, i));
  }
  json_object_set(root, "machines", machines);
  json_object_set(root, "excluded", excluded);
  rc = 0;
out:
  json_decref(machines);
  json_decref(excluded);
  free(thr);
  return rc;
}

json_t *cal_plan_build(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                       size_t n, char *err, size_t errlen) {
  plan_build_t b = {.o = o, .ms = ms, .n = n};
  json_t *root = json_object();
  b.ent = calloc(n, sizeof *b.ent);
  b.budget = calloc(n, sizeof *b.budget);
  b.use = calloc(n, sizeof *b.use);
  b.fits_on = json_array();
  if (!root || !b.ent || !b.budget || !b.use || !b.fits_on) {
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
  goto out;
fail:
  json_decref(root);
  root = NULL;
out:
  json_decref(b.fits_on);
  free(b.ent);
  free(b.budget);
  free(b.use);
  return root;
}
