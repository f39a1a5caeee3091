/* The plan of `calibrate plan`: work split, batch and accumulation, memory
 * fit and placement, computed once into a typed result (plan.h) from the
 * arithmetic of plan_math.c; the data-parallel step is plan_step.c.  The
 * outputs (report/plan_json.c, report/plan_render.c) render the result;
 * the command is commands/plan.c. */
#include "plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "plan_step.h"

const char *cal_plan_source_name(cal_plan_source_t s) {
  switch (s) {
  case CAL_PLAN_SRC_CSV: return "curve_csv";
  case CAL_PLAN_SRC_PEAK: return "peak_json";
  default: return "profile";
  }
}

const char *cal_place_name(cal_place_t s) {
  static const char *const names[] = {"data_parallel", "fits_some", "sharded",
                                      "does_not_fit", "unknown"};
  return names[s];
}

const char *cal_plan_excluded_reason(const cal_plan_machine_t *m) {
  return isnan(m->throughput) ? "no measured throughput"
                              : "throughput is not positive";
}

/* The state of one computation: inputs, the split, and what the machines
 * add to the placement. */
typedef struct plan_build {
  cal_plan_opts_t o;       /* a copy: the activation model fills assume */
  const cal_plan_machine_t *ms;
  size_t n;
  cal_plan_t *p;
  cal_split_entry_t *ent;
  double *budget; /* bytes each machine may use, when the model is given */
  int64_t *maxb;  /* largest micro-batch each holds; -1 unknown, 0 none */
  size_t *use;    /* indices of the machines with a throughput */
  size_t nu, nfit, nknown;
  cal_mem_need_t base; /* the model at micro-batch 1 */
  cal_plan_act_t act;  /* the activation model, when used */
} plan_build_t;

static int has_throughput(const cal_plan_machine_t *m) {
  return isfinite(m->throughput) && m->throughput > 0;
}

/* A copy of s appended to the plan's warnings.  CAL_ENOMEM. */
static int plan_warn(cal_plan_t *p, const char *s) {
  char **v = realloc(p->warnings, (p->nwarnings + 1) * sizeof *v);
  if (!v)
    return CAL_ENOMEM;
  p->warnings = v;
  if (!(v[p->nwarnings] = strdup(s)))
    return CAL_ENOMEM;
  p->nwarnings++;
  return 0;
}

static void batch_note(const cal_batch_plan_t *bp, int64_t b, char *buf,
                       size_t len) {
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
}

/* What the flags say when the points alone would say more. */
static void hetero_note(const cal_split_t *sp, char *buf, size_t len) {
  if (sp->heterogeneous)
    snprintf(buf, len,
             "fastest/slowest %.2fx, confidence intervals apart", sp->ratio);
  else if (sp->ratio_exceeded)
    snprintf(buf, len,
             "fastest/slowest %.2fx, but the confidence intervals overlap: "
             "the difference is within the measurements' noise", sp->ratio);
}

/* Micro-batch and accumulation for the target effective batch. */
static void plan_batch(const cal_plan_opts_t *o, const cal_plan_machine_t *m,
                       cal_batch_plan_t *bp, char *note, size_t notelen) {
  *bp = (cal_batch_plan_t){m->optimal_batch ? m->optimal_batch : 1, 1,
                           CAL_BATCH_EXACT};
  if (!o->target)
    return;
  if (m->optimal_batch && cal_plan_batch(m->optimal_batch, o->target, bp) == 0) {
    batch_note(bp, m->optimal_batch, note, notelen);
    size_t at = strlen(note);
    if (m->optimal_is_lower_bound)
      snprintf(note + at, notelen - at,
               "; optimal batch a lower bound (the sweep ended at its best "
               "point)");
  } else {
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

/* Machine i's memory: model state plus the activations of the
 * micro-batch, which shrinks (e->batch and its note updated) when it does
 * not fit.  The model "fits" when its state and one example's activations
 * do. */
static void plan_memory(plan_build_t *b, size_t i, cal_plan_entry_t *e) {
  const cal_plan_opts_t *o = &b->o;
  const cal_plan_machine_t *m = &b->ms[i];
  const double state = b->base.total_bytes - b->base.activations_bytes;
  const int64_t max_batch = b->maxb[i];
  int64_t micro = e->batch.micro_batch;
  if (max_batch >= 1 && micro > max_batch) {
    if (o->target && cal_plan_batch(max_batch, o->target, &e->batch) == 0) {
      size_t at = strlen(e->batch_note);
      snprintf(e->batch_note + at, sizeof e->batch_note - at,
               "%sreduced to fit memory (at most %" PRId64 ")",
               at ? "; " : "", max_batch);
      micro = e->batch.micro_batch;
    } else if (!o->target) {
      micro = max_batch;
    }
  }
  cal_mem_need_t need;
  cal_plan_memory(o->params, o->dtype, o->training, micro, &o->assume, &need);
  e->has_memory = 1;
  e->mem.batch_size = micro;
  e->mem.available = m->available > 0 ? m->available : NAN;
  e->mem.budget = m->available > 0 ? b->budget[i] : NAN;
  e->mem.state = state;
  e->mem.activations = need.activations_bytes;
  e->mem.need = need.total_bytes;
  e->mem.max_batch = max_batch >= 0 ? max_batch : -1;
  e->mem.fits = m->available > 0 ? max_batch >= 1 : -1;
}

/* Time and cost of machine i: its part of the split and the whole work
 * alone. */
static void plan_time_cost(const plan_build_t *b, size_t i,
                           cal_plan_entry_t *e) {
  const cal_plan_opts_t *o = &b->o;
  const cal_split_entry_t *s = &b->ent[i];
  /* a machine that cannot hold the model cannot do the work alone */
  const int can = o->examples && b->maxb[i] != 0;
  const double alone = (double)o->examples / e->m->throughput;
  const double price = e->m->price_per_hour;
  e->finish_s = o->examples && s->usable ? s->finish_s : NAN;
  e->alone_s = can ? alone : NAN;
  e->cost_usd =
      o->examples && isfinite(price)
          ? (s->usable ? cal_plan_cost(price, b->p->sp.makespan_s) : 0)
          : NAN;
  e->alone_cost_usd = can && isfinite(price) ? cal_plan_cost(price, alone)
                                             : NAN;
}

/* Machine i's entry: its share, time, cost, batch and memory. */
static void plan_entry(plan_build_t *b, size_t i, cal_plan_entry_t *e) {
  const cal_plan_opts_t *o = &b->o;
  const cal_split_entry_t *s = &b->ent[i];
  e->m = &b->ms[i];
  e->in_split = s->usable;
  if (!s->usable) {
    const double state = b->base.total_bytes - b->base.activations_bytes;
    snprintf(e->left_out_reason, sizeof e->left_out_reason,
             "cannot hold the model: %.2f GB of state and one example's "
             "%.2f GB of activations, %.2f GB budget",
             state / 1e9, b->base.activations_bytes / 1e9, b->budget[i] / 1e9);
  }
  e->share = s->share;
  e->examples = o->examples ? s->count : 0;
  plan_time_cost(b, i, e);
  e->straggler = s->straggler;
  plan_batch(o, e->m, &e->batch, e->batch_note, sizeof e->batch_note);
  if (o->params > 0)
    plan_memory(b, i, e);
}

/* Where the model goes when it fits on no machine alone: the shard group
 * into pl.  CAL_ENOMEM. */
static int shard_strategy(const plan_build_t *b, cal_plan_placement_t *pl) {
  size_t nu = b->nu, nch = 0;
  double *bud = calloc(nu ? nu : 1, sizeof *bud);
  size_t *ord = calloc(nu ? nu : 1, sizeof *ord);
  int rc = CAL_ENOMEM;
  if (!bud || !ord)
    goto out;
  for (size_t k = 0; k < nu; k++)
    bud[k] = b->budget[b->use[k]];
  int ok = cal_plan_shard(bud, nu, pl->shard_need, ord, &nch);
  for (size_t k = 0; k < nch && ok; k++)
    pl->group[pl->ngroup++] = ord[k];
  if (b->nknown == 0) {
    pl->strategy = CAL_PLACE_UNKNOWN;
    pl->note = "no profile records its memory: cannot tell whether the "
               "model fits";
  } else if (ok) {
    pl->strategy = CAL_PLACE_SHARDED;
    pl->note = "the model fits on no machine alone: sharding is required "
               "across the shard group (largest memory first)";
  } else {
    pl->strategy = CAL_PLACE_DOES_NOT_FIT;
    pl->note = "the model does not fit even sharded across every machine";
  }
  rc = 0;
out:
  free(bud);
  free(ord);
  return rc;
}

/* The placement (the model is given).  CAL_ENOMEM. */
static int plan_placement(plan_build_t *b) {
  cal_plan_placement_t *pl = calloc(1, sizeof *pl);
  if (!pl)
    return CAL_ENOMEM;
  b->p->placement = pl;
  pl->fits_on = calloc(b->nu ? b->nu : 1, sizeof *pl->fits_on);
  pl->group = calloc(b->nu ? b->nu : 1, sizeof *pl->group);
  if (!pl->fits_on || !pl->group)
    return CAL_ENOMEM;
  for (size_t k = 0; k < b->nu; k++)
    if (b->maxb[b->use[k]] >= 1)
      pl->fits_on[pl->nfits_on++] = k;
  /* sharding holds the model state once plus one example's activations */
  pl->shard_need = b->base.total_bytes;
  if (b->nfit == b->nu) {
    pl->strategy = CAL_PLACE_DATA_PARALLEL;
    pl->note = "the model fits on every machine: run independent batches on "
               "each (data parallel, no sharding traffic)";
  } else if (b->nfit > 0) {
    pl->strategy = CAL_PLACE_FITS_SOME;
    pl->note = "the model fits on some machines only: give them independent "
               "batches; the others cannot hold it alone and get no share";
  } else {
    return shard_strategy(b, pl);
  }
  return 0;
}

/* Warn about machines whose shapes differ from those of machine k, which
 * the activation model uses.  CAL_ENOMEM. */
static int warn_other_shapes(plan_build_t *b, size_t k) {
  const cal_act_shape_t *u = &b->ms[k].shape;
  for (size_t i = k + 1; i < b->n; i++) {
    const cal_act_shape_t *t = &b->ms[i].shape;
    char w[400];
    if (b->ms[i].has_shape &&
        (t->hidden != u->hidden || t->heads != u->heads ||
         t->kv_heads != u->kv_heads || t->ffn != u->ffn || t->seq != u->seq)) {
      snprintf(w, sizeof w, "%s measured other shapes than %s; the "
               "activation model uses those of %s", b->ms[i].path,
               b->ms[k].path, b->ms[k].path);
      if (plan_warn(b->p, w) < 0)
        return CAL_ENOMEM;
    }
  }
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
  cal_act_shape_t s = b->ms[k].shape;
  s.layers = o->layers;
  if (o->seq)
    s.seq = o->seq;
  b->act = (cal_plan_act_t){.layers = o->layers,
                            .seq = o->seq ? o->seq : b->ms[k].shape.seq,
                            .shape = b->ms[k].shape,
                            /* the step keeps its activations in fp32;
                               the KV cache is of the dtype */
                            .bytes_per_element =
                                o->training != CAL_TRAIN_INFERENCE
                                    ? 4
                                    : cal_dtype_bytes(o->dtype),
                            .checkpointing = o->checkpointing,
                            .shapes_from = b->ms[k].path};
  if (cal_act_model(&s, b->act.bytes_per_element, o->lora_rank,
                    &b->act.est) < 0) {
    snprintf(err, errlen, "the shapes in %s cannot be modelled",
             b->ms[k].path);
    return CAL_EINVAL;
  }
  o->assume.activation_bytes_per_example =
      o->training == CAL_TRAIN_INFERENCE ? b->act.est.inference_bytes
      : o->checkpointing                 ? b->act.est.checkpointed_bytes
                                         : b->act.est.full_bytes;
  if (o->lora_rank)
    o->assume.lora_params = cal_lora_params(&s, o->lora_rank);
  if (warn_other_shapes(b, k) < 0) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  return 0;
}

/* Which machines can hold the model (b->maxb), then the split over those
 * that can or whose memory is unknown.  err filled on failure. */
static int fit_and_split(plan_build_t *b, char *err, size_t errlen) {
  const cal_plan_opts_t *o = &b->o;
  /* the throughputs and their CI bounds, one block of three arrays */
  double *thr = calloc(3 * (b->n ? b->n : 1), sizeof *thr);
  double *lo = thr ? thr + b->n : NULL, *hi = thr ? thr + 2 * b->n : NULL;
  int rc = CAL_ENOMEM;
  if (!thr) {
    snprintf(err, errlen, "out of memory");
    return rc;
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
    b->nknown += b->maxb[i] >= 0;
    b->nfit += b->maxb[i] >= 1;
    thr[i] = b->maxb[i] != 0 ? m->throughput : 0;
    lo[i] = m->ci_low;
    hi[i] = m->ci_high;
  }
  if (b->nu == 0) {
    snprintf(err, errlen,
             "no usable machine: no input has a measured throughput > 0 "
             "(run calibrate --sweep-batch)");
    free(thr);
    return CAL_EINVAL;
  }
  cal_split_t *sp = &b->p->sp;
  rc = cal_plan_split_ci(thr, lo, hi, b->n, o->examples, b->ent, sp);
  if (rc == CAL_EPARSE) {
    snprintf(err, errlen, "the throughputs' sum or a machine's time is not "
                          "a finite number (throughputs near 1e308 or 1e-308)");
    free(thr);
    return CAL_EINVAL;
  }
  b->p->nsplit = rc < 0 ? 0 : sp->n_usable;
  if (rc < 0) /* nothing can hold the model: no split, every share 0 */
    memset(sp, 0, sizeof *sp);
  free(thr);
  return 0;
}

/* Every machine in the split priced, or none: the total cost.  err
 * filled when some are and one is not. */
static int plan_cost(plan_build_t *b, char *err, size_t errlen) {
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
    total += cal_plan_cost(m->price_per_hour, b->p->sp.makespan_s);
  }
  b->p->cost_usd =
      b->o.priced && b->o.examples && b->p->nsplit ? total : NAN;
  return 0;
}

/* The model with its memory at micro-batch 1.  CAL_ENOMEM. */
static int plan_model(plan_build_t *b) {
  const cal_plan_opts_t *o = &b->o;
  cal_plan_model_t *md = calloc(1, sizeof *md);
  if (!md)
    return CAL_ENOMEM;
  *md = (cal_plan_model_t){
      .params = o->params, .dtype = o->dtype, .training = o->training,
      .lora_fraction = o->training == CAL_TRAIN_LORA
                           ? b->base.trainable_params / o->params
                           : NAN,
      .lora_rank = o->lora_rank, .assume = o->assume, .base = b->base,
      .has_act = o->assume.activation_bytes_per_example > 0, .act = b->act};
  b->p->model = md;
  return 0;
}

/* The split, the model and the machines into b->p; err filled on
 * failure. */
static int build_into(plan_build_t *b, char *err, size_t errlen) {
  cal_plan_opts_t *o = &b->o;
  cal_plan_t *p = b->p;
  int rc;
  if ((rc = activation_model(b, err, errlen)) < 0)
    return rc;
  if (o->params > 0 && (rc = cal_plan_memory(o->params, o->dtype, o->training,
                                             1, &o->assume, &b->base)) < 0) {
    snprintf(err, errlen, "invalid model arguments");
    return rc;
  }
  if ((rc = fit_and_split(b, err, errlen)) < 0)
    return rc;
  p->split_note = p->nsplit > 0
                      ? NULL
                      : "no machine can hold the model alone: no share of "
                        "the work is given (a sharded replica's throughput "
                        "is not measured by these inputs)";
  hetero_note(&p->sp, p->hetero_note, sizeof p->hetero_note);
  if ((rc = plan_cost(b, err, errlen)) < 0)
    return rc;
  p->machines = calloc(b->nu, sizeof *p->machines);
  p->excluded = calloc(b->n - b->nu + 1, sizeof *p->excluded);
  if (!p->machines || !p->excluded || (o->params > 0 && plan_model(b) < 0) ||
      (o->params > 0 && plan_placement(b) < 0))
    goto nomem;
  for (size_t i = 0; i < b->n; i++) {
    if (has_throughput(&b->ms[i]))
      plan_entry(b, i, &p->machines[p->nmachines++]);
    else
      p->excluded[p->nexcluded++] = &b->ms[i];
  }
  return 0;
nomem:
  snprintf(err, errlen, "out of memory");
  return CAL_ENOMEM;
}

/* Why a fleet's curve gives no network estimate; NULL when it does. */
static const char *no_network_reason(const cal_plan_opts_t *o,
                                     const cal_plan_t *p) {
  if (o->net->curve.n == 0)
    return "the fleet profile has no all-reduce curve (a job of one rank): "
           "no network estimate";
  if (!(o->params > 0))
    return "the fleet's all-reduce curve enters the plan with a model to "
           "train: give --model-params (and --dtype)";
  if (o->training == CAL_TRAIN_INFERENCE)
    return "inference all-reduces no gradients: no network estimate";
  if (p->nsplit == 0)
    return "no machine can hold the model: no data-parallel step to "
           "estimate";
  return NULL;
}

/* The network estimate of a fleet, or the warning why there is none. */
static int plan_network(const plan_build_t *b, char *err, size_t errlen) {
  cal_plan_t *p = b->p;
  const char *why = no_network_reason(&b->o, p);
  p->has_net = 1;
  if (why) {
    if (plan_warn(p, why) == 0)
      return 0;
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  return cal_plan_step(&b->o, p, &b->base, &p->network, err, errlen);
}

int cal_plan_compute(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                     size_t n, cal_plan_t **out, char *err, size_t errlen) {
  plan_build_t b = {.o = *o, .ms = ms, .n = n};
  int rc = CAL_ENOMEM;
  *out = NULL;
  b.p = calloc(1, sizeof *b.p);
  b.ent = calloc(n ? n : 1, sizeof *b.ent);
  b.budget = calloc(n ? n : 1, sizeof *b.budget);
  b.maxb = calloc(n ? n : 1, sizeof *b.maxb);
  b.use = calloc(n ? n : 1, sizeof *b.use);
  if (!b.p || !b.ent || !b.budget || !b.maxb || !b.use) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  b.p->examples = o->examples;
  b.p->work = o->work;
  b.p->target = o->target;
  if ((rc = build_into(&b, err, errlen)) < 0)
    goto out;
  if (o->net && (rc = plan_network(&b, err, errlen)) < 0)
    goto out;
  *out = b.p;
  b.p = NULL;
out:
  cal_plan_free(b.p);
  free(b.ent);
  free(b.budget);
  free(b.maxb);
  free(b.use);
  return rc < 0 ? rc : 0;
}

int cal_plan_fits_nowhere(const cal_plan_t *p) {
  return p->placement && p->placement->strategy != CAL_PLACE_DATA_PARALLEL &&
         p->placement->strategy != CAL_PLACE_FITS_SOME;
}

void cal_plan_free(cal_plan_t *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->nwarnings; i++)
    free(p->warnings[i]);
  free(p->warnings);
  free(p->machines);
  free(p->excluded);
  free(p->model);
  if (p->placement) {
    free(p->placement->fits_on);
    free(p->placement->group);
    free(p->placement);
  }
  if (p->network)
    free(p->network->machines);
  free(p->network);
  free(p);
}
