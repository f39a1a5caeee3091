#include "plan.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "commands.h"
#include "plan_math.h"
#include "profile.h"

static const char usage[] =
    "usage: calibrate plan PROFILE... [options]\n"
    "\n"
    "Split work across machines in proportion to the throughput each\n"
    "profile measured at its optimal batch, pick batch size and gradient\n"
    "accumulation, and check whether a model fits in memory.\n"
    "\n"
    "  --examples N                  examples to split (integer counts)\n"
    "  --target-effective-batch T    micro-batch x accumulation per machine\n"
    "  --model-params P              model parameters, e.g. 7e9\n"
    "  --dtype fp32|bf16|fp16|int8   weight dtype (default bf16)\n"
    "  --training full|lora|inference  (default full; Adam optimizer)\n"
    "  --lora-fraction F             trainable share under LoRA (default 0.01)\n"
    "  --activation-fraction F       activation bytes per example as a\n"
    "                                fraction of weight bytes (default 0.02\n"
    "                                training, 0.005 inference)\n"
    "  --headroom F                  memory kept free (default 0.10)\n"
    "  --format table|md|json        output format (default table)\n"
    "  -o, --output FILE             write there instead of stdout\n"
    "  -h, --help                    this text\n";

typedef struct plan_opts {
  uint64_t examples;        /* 0: not given */
  int64_t target;           /* 0: not given */
  double params;            /* 0: not given */
  cal_dtype_t dtype;
  cal_training_t training;
  cal_mem_assume_t assume;
  int act_set;
  const char *format;
  const char *output;
} plan_opts_t;

/* One input machine, borrowed from its profile. */
typedef struct machine {
  const cal_profile_t *prof;
  const char *name;
  double throughput;     /* NaN when null or missing */
  int64_t optimal_batch; /* 0 when null */
  double available;      /* bytes; 0 when unknown */
} machine_t;

static double gb(double bytes) { return bytes / 1e9; }

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  if (!s || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v == 0)
    return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

static void read_machine(const cal_profile_t *p, machine_t *m) {
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

/* Build the plan as JSON: the single source every format renders. */
static json_t *build_plan(const plan_opts_t *o, machine_t *ms, size_t n,
                          char *err, size_t errlen) {
  json_t *root = NULL, *machines = NULL, *excluded = NULL;
  double *thr = NULL, *budget = NULL;
  size_t *order = NULL, *use = NULL;
  cal_split_entry_t *ent = NULL;
  cal_split_t sp;
  thr = calloc(n, sizeof *thr);
  ent = calloc(n, sizeof *ent);
  budget = calloc(n, sizeof *budget);
  order = calloc(n, sizeof *order);
  use = calloc(n, sizeof *use);
  root = json_object();
  machines = json_array();
  excluded = json_array();
  if (!thr || !ent || !budget || !order || !use || !root || !machines ||
      !excluded) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  for (size_t i = 0; i < n; i++)
    thr[i] = ms[i].throughput;
  if (cal_plan_split(thr, n, o->examples, ent, &sp) < 0) {
    snprintf(err, errlen,
             "no usable machine: no profile has a measured throughput > 0 "
             "(run calibrate --sweep-batch)");
    goto fail;
  }
  json_object_set_new(root, "schema", json_string(CAL_PLAN_SCHEMA));
  json_object_set_new(root, "examples", o->examples
                                            ? json_integer((json_int_t)o->examples)
                                            : json_null());
  json_object_set_new(root, "makespan_s",
                      o->examples ? json_real(sp.makespan_s) : json_null());
  json_object_set_new(root, "even_split_makespan_s",
                      o->examples ? json_real(sp.even_makespan_s) : json_null());
  json_object_set_new(root, "speedup_vs_even_split", json_real(sp.speedup));
  json_object_set_new(root, "sum_throughput", json_real(sp.sum_throughput));
  json_object_set_new(root, "mean_throughput", json_real(sp.mean_throughput));
  json_object_set_new(root, "throughput_ratio", json_real(sp.ratio));
  json_object_set_new(root, "heterogeneous", json_boolean(sp.heterogeneous));
  json_t *strag = json_array();
  json_object_set_new(root, "stragglers", strag);
  json_object_set_new(root, "target_effective_batch",
                      o->target ? json_integer(o->target) : json_null());

  cal_mem_need_t base = {0};
  if (o->params > 0) {
    if (cal_plan_memory(o->params, o->dtype, o->training, 1, &o->assume,
                        &base) < 0) {
      snprintf(err, errlen, "invalid model arguments");
      goto fail;
    }
    json_t *model = json_object();
    json_object_set_new(root, "model", model);
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
                        json_real(base.trainable_params));
    json_object_set_new(model, "lora_fraction",
                        o->training == CAL_TRAIN_LORA
                            ? json_real(o->assume.lora_fraction)
                            : json_null());
    json_object_set_new(model, "activation_fraction",
                        json_real(o->assume.activation_fraction));
    json_object_set_new(model, "headroom", json_real(o->assume.headroom));
    json_object_set_new(model, "weights_bytes", json_real(base.weights_bytes));
    json_object_set_new(model, "gradients_bytes",
                        json_real(base.gradients_bytes));
    json_object_set_new(model, "optimizer_bytes",
                        json_real(base.optimizer_bytes));
    json_object_set_new(model, "master_weights_bytes",
                        json_real(base.master_bytes));
    json_object_set_new(model, "activations_bytes_per_example",
                        json_real(base.activations_bytes));
  } else {
    json_object_set_new(root, "model", json_null());
  }

  size_t nu = 0, nfit = 0, nknown = 0;
  json_t *fits_on = json_array();
  for (size_t i = 0; i < n; i++) {
    const machine_t *m = &ms[i];
    if (!ent[i].usable) {
      json_t *x = json_object();
      json_object_set_new(x, "name", json_string(m->name));
      json_object_set_new(x, "profile", json_string(m->prof->path));
      json_object_set_new(x, "reason",
                          json_string(isnan(m->throughput)
                                          ? "no measured throughput"
                                          : "throughput is not positive"));
      json_array_append_new(excluded, x);
      continue;
    }
    use[nu++] = i;
    json_t *x = json_object();
    json_array_append_new(machines, x);
    json_object_set_new(x, "name", json_string(m->name));
    json_object_set_new(x, "profile", json_string(m->prof->path));
    json_object_set_new(x, "throughput", json_real(m->throughput));
    json_object_set_new(x, "optimal_batch_size",
                        m->optimal_batch ? json_integer(m->optimal_batch)
                                         : json_null());
    json_object_set_new(x, "share", json_real(ent[i].share));
    json_object_set_new(x, "examples",
                        o->examples ? json_integer((json_int_t)ent[i].count)
                                    : json_null());
    json_object_set_new(x, "finish_s",
                        o->examples ? json_real(ent[i].finish_s) : json_null());
    json_object_set_new(x, "straggler", json_boolean(ent[i].straggler));
    if (ent[i].straggler)
      json_array_append_new(strag, json_string(m->name));

    int64_t micro = m->optimal_batch ? m->optimal_batch : 1;
    cal_batch_plan_t bp = {micro, 1, CAL_BATCH_EXACT};
    char note[200] = "";
    if (o->target) {
      if (m->optimal_batch &&
          cal_plan_batch(m->optimal_batch, o->target, &bp) == 0)
        batch_note(&bp, m->optimal_batch, note, sizeof note);
      else {
        bp = (cal_batch_plan_t){1, o->target, CAL_BATCH_DIVISOR};
        snprintf(note, sizeof note, "no optimal batch measured: batch 1");
      }
      micro = bp.micro_batch;
    }
    json_t *mem = NULL;
    if (o->params > 0) {
      /* model state plus activations of the micro-batch; the model "fits"
       * when its state and one example's activations do */
      const double state = base.total_bytes - base.activations_bytes;
      const double per_ex = base.activations_bytes;
      budget[i] = cal_plan_budget(m->available, o->assume.headroom);
      int64_t max_batch = -1; /* unknown */
      if (m->available > 0) {
        double room = budget[i] - state;
        max_batch = room < per_ex ? 0
                    : per_ex > 0 ? (int64_t)fmin(floor(room / per_ex), 1e9)
                                 : 1000000000;
      }
      if (max_batch >= 1 && micro > max_batch) {
        /* the planned micro-batch does not fit: shrink it */
        int64_t cap = max_batch;
        if (o->target && cal_plan_batch(cap, o->target, &bp) == 0) {
          size_t at = strlen(note);
          snprintf(note + at, sizeof note - at,
                   "%sreduced to fit memory (at most %" PRId64 ")",
                   at ? "; " : "", cap);
          micro = bp.micro_batch;
        } else if (!o->target) {
          micro = cap;
        }
      }
      cal_mem_need_t need;
      cal_plan_memory(o->params, o->dtype, o->training, micro, &o->assume,
                      &need);
      mem = json_object();
      json_object_set_new(mem, "batch_size", json_integer(micro));
      json_object_set_new(mem, "available_bytes",
                          m->available > 0 ? json_real(m->available)
                                           : json_null());
      json_object_set_new(mem, "budget_bytes",
                          m->available > 0 ? json_real(budget[i]) : json_null());
      json_object_set_new(mem, "state_bytes", json_real(state));
      json_object_set_new(mem, "activations_bytes",
                          json_real(need.activations_bytes));
      json_object_set_new(mem, "need_bytes", json_real(need.total_bytes));
      json_object_set_new(mem, "max_batch_size",
                          max_batch >= 0 ? json_integer(max_batch)
                                         : json_null());
      if (m->available > 0) {
        int fits = max_batch >= 1;
        nknown++;
        nfit += (size_t)fits;
        if (fits)
          json_array_append_new(fits_on, json_string(m->name));
        json_object_set_new(mem, "fits", json_boolean(fits));
      } else {
        json_object_set_new(mem, "fits", json_null());
      }
    }
    if (o->target) {
      json_object_set_new(x, "micro_batch_size", json_integer(bp.micro_batch));
      json_object_set_new(x, "grad_accum_steps", json_integer(bp.accum_steps));
      json_object_set_new(x, "batch_note", json_string(note));
    }
    if (mem)
      json_object_set_new(x, "memory", mem);
  }
  json_object_set_new(root, "machines", machines);
  machines = NULL;
  json_object_set_new(root, "excluded", excluded);
  excluded = NULL;

  if (o->params > 0) {
    json_t *pl = json_object();
    json_object_set_new(root, "placement", pl);
    json_object_set_new(pl, "fits_on", fits_on);
    fits_on = NULL;
    /* sharding holds the model state once plus one example's activations */
    double shard_need = base.total_bytes;
    json_object_set_new(pl, "shard_need_bytes", json_real(shard_need));
    const char *strategy, *note;
    json_t *group = json_array();
    json_object_set_new(pl, "shard_group", group);
    if (nfit == nu) {
      strategy = "data_parallel";
      note = "the model fits on every machine: run independent batches on "
             "each (data parallel, no sharding traffic)";
    } else if (nfit > 0) {
      strategy = "fits_some";
      note = "the model fits on some machines only: give them independent "
             "batches; the others cannot hold it alone";
    } else {
      double *b = calloc(nu ? nu : 1, sizeof *b);
      size_t *ord = calloc(nu ? nu : 1, sizeof *ord), nch = 0;
      if (!b || !ord) {
        free(b);
        free(ord);
        snprintf(err, errlen, "out of memory");
        goto fail;
      }
      for (size_t k = 0; k < nu; k++)
        b[k] = budget[use[k]];
      int ok = cal_plan_shard(b, nu, shard_need, ord, &nch);
      for (size_t k = 0; k < nch && ok; k++)
        json_array_append_new(group, json_string(ms[use[ord[k]]].name));
      free(b);
      free(ord);
      if (nknown == 0) {
        strategy = "unknown";
        note = "no profile records its memory: cannot tell whether the "
               "model fits";
      } else if (ok) {
        strategy = "sharded";
        note = "the model fits on no machine alone: sharding is required "
               "across the shard group (largest memory first)";
      } else {
        strategy = "does_not_fit";
        note = "the model does not fit even sharded across every machine";
      }
    }
    json_object_set_new(pl, "strategy", json_string(strategy));
    json_object_set_new(pl, "note", json_string(note));
  } else {
    json_object_set_new(root, "placement", json_null());
  }
  json_decref(fits_on);
  free(thr);
  free(ent);
  free(budget);
  free(order);
  free(use);
  return root;
fail:
  json_decref(root);
  json_decref(machines);
  json_decref(excluded);
  free(thr);
  free(ent);
  free(budget);
  free(order);
  free(use);
  return NULL;
}

static double num(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}
static const char *str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* Table and markdown from the plan JSON.  md selects pipes and headings. */
static void render_text(FILE *f, const json_t *p, int md) {
  const json_t *ms = json_object_get(p, "machines");
  const json_t *model = json_object_get(p, "model");
  const json_t *ex = json_object_get(p, "examples");
  size_t i;
  const json_t *m;
  const char *h = md ? "## " : "";
  const char *sep = md ? " | " : "  ";
  const char *lead = md ? "| " : "";
  const char *tail = md ? " |" : "";

  fprintf(f, "%sWork split (proportional to throughput at each machine's "
             "optimal batch)\n\n", h);
  fprintf(f, "%s%-24s%s%12s%s%7s%s%10s%s%10s%s%s%s\n", lead, "machine", sep,
          "examples/s", sep, "share", sep, "examples", sep, "finish s", sep,
          "flag", tail);
  if (md)
    fprintf(f, "|---|---:|---:|---:|---:|---|\n");
  json_array_foreach(ms, i, m) {
    char cnt[32] = "-", fin[32] = "-";
    if (json_is_integer(ex)) {
      snprintf(cnt, sizeof cnt, "%" JSON_INTEGER_FORMAT,
               json_integer_value(json_object_get(m, "examples")));
      snprintf(fin, sizeof fin, "%.4g", num(m, "finish_s"));
    }
    fprintf(f, "%s%-24s%s%12.3f%s%6.2f%%%s%10s%s%10s%s%s%s\n", lead,
            str(m, "name"), sep, num(m, "throughput"), sep,
            100 * num(m, "share"), sep, cnt, sep, fin, sep,
            json_is_true(json_object_get(m, "straggler")) ? "straggler" : "",
            tail);
  }
  fprintf(f, "\n");
  if (json_is_integer(ex))
    fprintf(f, "%" JSON_INTEGER_FORMAT " examples finish in %.4g s; an even "
               "split would take %.4g s: proportional split is %.2fx "
               "faster.\n",
            json_integer_value(ex), num(p, "makespan_s"),
            num(p, "even_split_makespan_s"), num(p, "speedup_vs_even_split"));
  else
    fprintf(f, "Proportional split is %.2fx faster than an even split "
               "(give --examples N for counts).\n",
            num(p, "speedup_vs_even_split"));
  if (json_is_true(json_object_get(p, "heterogeneous")))
    fprintf(f, "Heterogeneous set: fastest/slowest throughput = %.2fx "
               "(more than 10%% apart).\n",
            num(p, "throughput_ratio"));
  const json_t *st = json_object_get(p, "stragglers");
  if (json_array_size(st)) {
    fprintf(f, "Stragglers (more than 20%% below the mean %.3f examples/s):",
            num(p, "mean_throughput"));
    json_array_foreach(st, i, m) fprintf(f, "%s %s", i ? "," : "",
                                         json_string_value(m));
    fprintf(f, "\n");
  }
  const json_t *exc = json_object_get(p, "excluded");
  json_array_foreach(exc, i, m) fprintf(f, "Left out: %s (%s): %s\n",
                                        str(m, "name"), str(m, "profile"),
                                        str(m, "reason"));

  const json_t *T = json_object_get(p, "target_effective_batch");
  if (json_is_integer(T)) {
    fprintf(f, "\n%sBatch for effective batch %" JSON_INTEGER_FORMAT "\n\n", h,
            json_integer_value(T));
    fprintf(f, "%s%-24s%s%8s%s%6s%s%6s%s%s%s\n", lead, "machine", sep,
            "optimal", sep, "micro", sep, "accum", sep, "note", tail);
    if (md)
      fprintf(f, "|---|---:|---:|---:|---|\n");
    json_array_foreach(ms, i, m) {
      const json_t *ob = json_object_get(m, "optimal_batch_size");
      char obs[32] = "-";
      if (json_is_integer(ob))
        snprintf(obs, sizeof obs, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(ob));
      fprintf(f, "%s%-24s%s%8s%s%6.0f%s%6.0f%s%s%s\n", lead, str(m, "name"),
              sep, obs, sep, num(m, "micro_batch_size"), sep,
              num(m, "grad_accum_steps"), sep, str(m, "batch_note"), tail);
    }
  }

  if (json_is_object(model)) {
    const char *tr = str(model, "training");
    double params = num(model, "params"), bpp = num(model, "bytes_per_param");
    double trainable = num(model, "trainable_params");
    fprintf(f, "\n%sMemory: %.3g parameters, %s, %s%s\n\n", h, params,
            str(model, "dtype"), tr,
            strcmp(tr, "inference") ? " training with Adam" : "");
    const char *li = md ? "- " : "  ";
    fprintf(f, "%sweights        %9.2f GB = %.3g params x %g B\n", li,
            gb(num(model, "weights_bytes")), params, bpp);
    if (strcmp(tr, "lora") == 0)
      fprintf(f, "%strainable      %.3g params (LoRA: assumed %g%% of "
                 "params)\n", li, trainable,
              100 * num(model, "lora_fraction"));
    fprintf(f, "%sgradients      %9.2f GB = %.3g trainable x %g B\n", li,
            gb(num(model, "gradients_bytes")), trainable, bpp);
    fprintf(f, "%soptimizer      %9.2f GB = %.3g trainable x 2 states x 4 B "
               "(Adam m, v in fp32)\n", li,
            gb(num(model, "optimizer_bytes")), trainable);
    fprintf(f, "%smaster weights %9.2f GB = %.3g trainable x 4 B (fp32 copy "
               "when dtype is narrower than fp32)\n", li,
            gb(num(model, "master_weights_bytes")), trainable);
    fprintf(f, "%sactivations    %9.2f GB per example = %g x weights "
               "(assumed); times the micro-batch\n", li,
            gb(num(model, "activations_bytes_per_example")),
            num(model, "activation_fraction"));
    fprintf(f, "%sbudget         available memory less %g%% headroom\n\n",
            li, 100 * num(model, "headroom"));
    fprintf(f, "%s%-24s%s%6s%s%9s%s%9s%s%9s%s%9s%s%5s%s\n", lead, "machine",
            sep, "batch", sep, "act GB", sep, "need GB", sep, "budget GB", sep,
            "max batch", sep, "fits", tail);
    if (md)
      fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
    json_array_foreach(ms, i, m) {
      const json_t *mem = json_object_get(m, "memory");
      const json_t *fits = json_object_get(mem, "fits");
      char bud[32] = "?", mb[32] = "?";
      if (json_is_number(json_object_get(mem, "budget_bytes")))
        snprintf(bud, sizeof bud, "%.2f", gb(num(mem, "budget_bytes")));
      if (json_is_integer(json_object_get(mem, "max_batch_size")))
        snprintf(mb, sizeof mb, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(mem, "max_batch_size")));
      fprintf(f, "%s%-24s%s%6.0f%s%9.2f%s%9.2f%s%9s%s%9s%s%5s%s\n", lead,
              str(m, "name"), sep, num(mem, "batch_size"), sep,
              gb(num(mem, "activations_bytes")), sep,
              gb(num(mem, "need_bytes")), sep, bud, sep, mb, sep,
              json_is_null(fits) ? "?" : json_is_true(fits) ? "yes" : "no",
              tail);
    }
    const json_t *pl = json_object_get(p, "placement");
    fprintf(f, "\nPlacement: %s: %s.\n", str(pl, "strategy"), str(pl, "note"));
    const json_t *g = json_object_get(pl, "shard_group");
    if (json_array_size(g)) {
      fprintf(f, "Shard group (%.2f GB):", gb(num(pl, "shard_need_bytes")));
      json_array_foreach(g, i, m) fprintf(f, "%s %s", i ? "," : "",
                                          json_string_value(m));
      fprintf(f, "\n");
    }
  }
}

enum {
  OPT_EXAMPLES = 256, OPT_TARGET, OPT_PARAMS, OPT_DTYPE, OPT_TRAINING,
  OPT_LORA, OPT_ACT, OPT_HEADROOM, OPT_FORMAT,
};

static const struct option long_opts[] = {
    {"examples", required_argument, NULL, OPT_EXAMPLES},
    {"target-effective-batch", required_argument, NULL, OPT_TARGET},
    {"model-params", required_argument, NULL, OPT_PARAMS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"training", required_argument, NULL, OPT_TRAINING},
    {"lora-fraction", required_argument, NULL, OPT_LORA},
    {"activation-fraction", required_argument, NULL, OPT_ACT},
    {"headroom", required_argument, NULL, OPT_HEADROOM},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int bad(const char *msg, const char *arg) {
  fprintf(stderr, "calibrate plan: %s%s%s\n", msg, arg ? ": " : "",
          arg ? arg : "");
  return CAL_EXIT_USAGE;
}

int cal_cmd_plan(int argc, char **argv) {
  plan_opts_t o = {.dtype = CAL_DT_BF16, .training = CAL_TRAIN_FULL,
                   .format = "table"};
  double lora = CAL_PLAN_LORA_FRACTION, act = 0, head = CAL_PLAN_HEADROOM;
  int c;
  optind = 0; /* full re-initialisation: tests call this more than once */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:h", long_opts, NULL)) != -1) {
    switch (c) {
    case OPT_EXAMPLES:
      if (parse_u64(optarg, &o.examples) < 0)
        return bad("--examples needs a positive integer", optarg);
      break;
    case OPT_TARGET: {
      uint64_t t;
      if (parse_u64(optarg, &t) < 0 || t > INT32_MAX)
        return bad("--target-effective-batch needs a positive integer", optarg);
      o.target = (int64_t)t;
      break;
    }
    case OPT_PARAMS:
      if (parse_double(optarg, 1, 1e15, &o.params) < 0)
        return bad("--model-params needs a positive number such as 7e9",
                   optarg);
      break;
    case OPT_DTYPE:
      if (cal_dtype_parse(optarg, &o.dtype) < 0)
        return bad("--dtype must be fp32, bf16, fp16 or int8", optarg);
      break;
    case OPT_TRAINING:
      if (cal_training_parse(optarg, &o.training) < 0)
        return bad("--training must be full, lora or inference", optarg);
      break;
    case OPT_LORA:
      if (parse_double(optarg, 0, 1, &lora) < 0 || lora == 0)
        return bad("--lora-fraction must be in (0, 1]", optarg);
      break;
    case OPT_ACT:
      if (parse_double(optarg, 0, 100, &act) < 0)
        return bad("--activation-fraction must be a number >= 0", optarg);
      o.act_set = 1;
      break;
    case OPT_HEADROOM:
      if (parse_double(optarg, 0, 0.99, &head) < 0)
        return bad("--headroom must be in [0, 0.99]", optarg);
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "table") && strcmp(optarg, "md") &&
          strcmp(optarg, "json"))
        return bad("--format must be table, md or json", optarg);
      o.format = optarg;
      break;
    case 'o': o.output = optarg; break;
    case 'h': fputs(usage, stdout); return CAL_EXIT_OK;
    case ':': return bad("option needs a value", argv[optind - 1]);
    default: return bad("unknown option", argv[optind - 1]);
    }
  }
  if (optind >= argc)
    return bad("give at least one profile (calibrate plan --help)", NULL);
  cal_mem_assume_default(o.training, &o.assume);
  o.assume.lora_fraction = lora;
  o.assume.headroom = head;
  if (o.act_set)
    o.assume.activation_fraction = act;

  int rc = CAL_EXIT_OK;
  size_t n = (size_t)(argc - optind);
  cal_profile_t **profs = calloc(n, sizeof *profs);
  machine_t *ms = calloc(n, sizeof *ms);
  json_t *plan = NULL;
  FILE *out = NULL;
  char err[512];
  if (!profs || !ms) {
    fprintf(stderr, "calibrate plan: out of memory\n");
    rc = CAL_EXIT_INTERNAL;
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    if (cal_profile_load(argv[optind + (int)i], &profs[i], err, sizeof err) <
        0) {
      fprintf(stderr, "calibrate plan: %s\n", err);
      rc = CAL_EXIT_USAGE;
      goto out;
    }
    read_machine(profs[i], &ms[i]);
  }
  /* warn about machines left out, unless none is left (one error line) */
  size_t usable = 0;
  for (size_t i = 0; i < n; i++)
    usable += ms[i].throughput > 0 && isfinite(ms[i].throughput);
  for (size_t i = 0; usable && i < n; i++)
    if (!(ms[i].throughput > 0 && isfinite(ms[i].throughput)))
      fprintf(stderr,
              "calibrate plan: warning: %s (%s) has no measured throughput; "
              "left out\n", ms[i].name, profs[i]->path);
  plan = build_plan(&o, ms, n, err, sizeof err);
  if (!plan) {
    fprintf(stderr, "calibrate plan: %s\n", err);
    rc = CAL_EXIT_USAGE;
    goto out;
  }
  if (strcmp(o.format, "json") == 0) {
    if (cal_json_write_atomic(plan, o.output ? o.output : "-", err,
                              sizeof err) < 0) {
      fprintf(stderr, "calibrate plan: %s\n", err);
      rc = CAL_EXIT_USAGE;
    }
    goto out;
  }
  out = o.output ? fopen(o.output, "w") : stdout;
  if (!out) {
    fprintf(stderr, "calibrate plan: cannot write %s: %s\n", o.output,
            strerror(errno));
    rc = CAL_EXIT_USAGE;
    goto out;
  }
  render_text(out, plan, strcmp(o.format, "md") == 0);
  if (fflush(out) != 0 || ferror(out)) {
    fprintf(stderr, "calibrate plan: cannot write %s\n",
            o.output ? o.output : "standard output");
    rc = CAL_EXIT_USAGE;
  }
out:
  if (out && out != stdout)
    fclose(out);
  json_decref(plan);
  for (size_t i = 0; profs && i < n; i++)
    cal_profile_free(profs[i]);
  free(profs);
  free(ms);
  return rc;
}
