/* `calibrate plan INPUT... [options]`: parse the options, read the inputs
 * (profiles and curves, analysis/plan_input.c), price them, build the plan
 * (analysis/plan.c) and write it through the reporter of --format: a
 * table or markdown (report/plan_render.c) or JSON (report/plan_json.c). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cal_esc.h"
#include "cli.h"
#include "cal_exit.h"
#include "compare.h"
#include "curve.h"
#include "machine_names.h"
#include "opt_table.h"
#include "plan.h"
#include "plan_input.h"
#include "plan_json.h"
#include "plan_render.h"
#include "plan_trainer.h"
#include "profile.h"
#include "reporter.h"

#define CMD "plan"

static const char plan_head[] =
    "Usage: calibrate plan INPUT... [options]\n"
    "\n"
    "Split work across machines in proportion to the throughput each\n"
    "measured at its optimal batch, give the wall-clock time and cost of\n"
    "the work, pick batch size and gradient accumulation, and check\n"
    "whether a model fits in memory.  A machine that cannot hold the model\n"
    "gets no share; heterogeneity and straggler flags count only\n"
    "differences the throughputs' confidence intervals can tell apart.\n"
    "\n"
    "INPUT is a profile, a `calibrate curve --format json` document, or a\n"
    "curve CSV (batch_size, throughput, optionally machine) of a machine\n"
    "this tool cannot run on; each curve is one machine, named by its\n"
    "machine column, else by the file name without its extension.  \"-\"\n"
    "reads standard input.  A fleet profile (`calibrate fleet`) is one\n"
    "machine per host and, with --model-params, adds the data-parallel\n"
    "step: each machine's compute for its share plus the all-reduce of the\n"
    "gradients read off the fleet's measured curve, with and without\n"
    "overlap, whether the fleet beats its fastest machine alone, and the\n"
    "gradient accumulation that amortises the all-reduce (the arithmetic\n"
    "is shown; the step's batch: --global-batch, else\n"
    "--target-effective-batch, else the sum of the optimal batches).\n"
    "\n";

/* A NAME=VALUE option (NAME NULL when there was no '='). */
typedef struct named_val {
  const char *opt, *arg; /* as given, for messages */
  char *name;            /* owned; NULL: every machine not named */
  double val;
} named_val_t;

typedef struct plan_args {
  cal_plan_opts_t o;
  double lora, act, head;
  int act_set;
  const char *format;
  const char *output;
  named_val_t *named; /* prices and memories, in argument order */
  size_t nnamed;
} plan_args_t;

static int bad(const char *msg, const char *arg) {
  return cal_usage(CMD, "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
}

/* [NAME=]NUMBER with the number in [lo, hi]; NAME required when
 * need_name.  Appended to a->named. */
static int parse_named(plan_args_t *a, const char *opt, const char *arg,
                       double lo, double hi, int need_name) {
  const char *eq = strrchr(arg, '=');
  named_val_t *v = &a->named[a->nnamed];
  *v = (named_val_t){.opt = opt, .arg = arg};
  if ((!eq && need_name) || (eq && eq == arg))
    return CAL_EINVAL;
  if (cal_parse_double(eq ? eq + 1 : arg, lo, hi, &v->val) < 0)
    return CAL_EINVAL;
  if (eq && !(v->name = strndup(arg, (size_t)(eq - arg))))
    return CAL_ENOMEM;
  a->nnamed++;
  return 0;
}

static int price_opt(void *obj, const cal_opt_t *row, const char *val,
                     const char *cmd) {
  plan_args_t *a = obj;
  if (parse_named(a, "--price-per-hour", val, 0, 1e6, 0) < 0)
    return cal_opt_bad(cmd, row, val);
  a->o.priced = 1;
  return -1;
}

static int memory_opt(void *obj, const cal_opt_t *row, const char *val,
                      const char *cmd) {
  if (parse_named(obj, "--memory-gb", val, 0.001, 1e6, 1) < 0)
    return cal_opt_bad(cmd, row, val);
  return -1;
}

/* A number that must not be 0 (--epochs, --lora-fraction). */
static int nonzero(void *obj, const cal_opt_t *row, const char *val,
                   const char *cmd) {
  return *(double *)((char *)obj + row->off) == 0 ? cal_opt_bad(cmd, row, val)
                                                  : -1;
}

/* The names cal_dtype_parse and cal_training_parse take, stored as an
 * int (CAL_OPT_ENUM). */
_Static_assert(sizeof(cal_dtype_t) == sizeof(int) &&
                   sizeof(cal_training_t) == sizeof(int),
               "an enum option is stored as an int");
static const cal_opt_choice_t dtypes[] = {
    {"fp32", CAL_DT_FP32}, {"bf16", CAL_DT_BF16}, {"fp16", CAL_DT_FP16},
    {"int8", CAL_DT_INT8}, {NULL, 0}};
static const cal_opt_choice_t trainings[] = {{"full", CAL_TRAIN_FULL},
                                             {"lora", CAL_TRAIN_LORA},
                                             {"inference", CAL_TRAIN_INFERENCE},
                                             {NULL, 0}};

static int act_opt(void *obj, const cal_opt_t *row, const char *val,
                   const char *cmd) {
  ((plan_args_t *)obj)->act_set = 1;
  return -1;
}

/* The --format values, one a reporter of plan_reporters. */
static const cal_opt_choice_t formats[] = {
    {"table", 0}, {"md", 0}, {"json", 0}, {"hf", 0}, {"env", 0}, {NULL, 0}};

#define OFF(field) offsetof(plan_args_t, field)
#define COUNT(n, field, hi, msg)                                               \
  .type = CAL_OPT_COUNT, .name = n, .min = 1, .max = hi, .off = OFF(field),  \
  .bad = msg ": %s"
/* A count up to hi (a literal) with a value named a in the help. */
#define COUNT_TO(n, field, hi, a)                                              \
  COUNT(n, field, hi, "--" n " needs an integer from 1 to " #hi), .arg = a

static const cal_opt_t plan_rows[] = {
    {.type = CAL_OPT_TEXT, .help = "Work (one of):\n"},
    {COUNT("examples", o.work.examples, CAL_PLAN_MAX_EXAMPLES,
           "--examples needs an integer from 1 to 2^53 (9007199254740992)"),
     .arg = "N", .help = "examples to split (integer counts)"},
    {.type = CAL_OPT_DOUBLE, .name = "epochs", .max = 1e9,
     .off = OFF(o.work.epochs), .set = nonzero,
     .bad = "--epochs needs a positive number such as 3 or 0.5: %s",
     .label = "  --epochs E --dataset-examples N ",
     .help = "E passes over N examples"},
    {COUNT("dataset-examples", o.work.dataset_examples, CAL_PLAN_MAX_EXAMPLES,
           "--dataset-examples needs an integer from 1 to 2^53")},
    {COUNT("steps", o.work.steps, CAL_PLAN_MAX_EXAMPLES,
           "--steps needs an integer from 1 to 2^53"),
     .label = "  --steps S --global-batch G",
     .help = "S optimizer steps of G examples (over\nall machines)"},
    {COUNT("global-batch", o.work.global_batch, CAL_PLAN_MAX_EXAMPLES,
           "--global-batch needs an integer from 1 to 2^53")},
    {.type = CAL_OPT_TEXT, .help = "Cost:\n"},
    {.type = CAL_OPT_CALL, .name = "price-per-hour", .arg = "[NAME=]USD",
     .set = price_opt,
     .bad = "--price-per-hour needs [NAME=]USD with USD a number from 0 to "
            "1e6, e.g. 2.50 or gpu-box=4.10: %s",
     .help = "price of a machine, matched by its name\n"
             "or its input file; without NAME, of\n"
             "every machine not priced by name.\n"
             "Repeat per machine.  Each machine in\n"
             "the split is billed for the split's\n"
             "wall-clock time; alone = doing all the\n"
             "work by itself"},
    {.type = CAL_OPT_TEXT, .help = "Batch and memory:\n"},
    {COUNT("target-effective-batch", o.target, (double)CAL_BATCH_MAX,
           "--target-effective-batch needs an integer from 1 to 1073741824"),
     .arg = "T", .help = "micro-batch x accumulation per machine"},
    {.type = CAL_OPT_DOUBLE, .name = "model-params", .arg = "P", .min = 1,
     .max = 1e15, .off = OFF(o.params),
     .bad = "--model-params needs a positive number such as 7e9: %s",
     .help = "model parameters, e.g. 7e9"},
    {.type = CAL_OPT_ENUM, .name = "dtype", .arg = "fp32|bf16|fp16|int8",
     .choices = dtypes, .off = OFF(o.dtype), .bad = "--dtype must be fp32, bf16, fp16 or int8: %s",
     .help = "weight dtype (default bf16)"},
    {.type = CAL_OPT_ENUM, .name = "training", .arg = "full|lora|inference",
     .choices = trainings, .off = OFF(o.training),
     .bad = "--training must be full, lora or inference: %s",
     .help = "(default full; Adam optimizer)"},
    {.type = CAL_OPT_DOUBLE, .name = "lora-fraction", .arg = "F", .max = 1,
     .off = OFF(lora), .set = nonzero,
     .bad = "--lora-fraction must be in (0, 1]: %s",
     .help = "trainable share under LoRA (default 0.01)"},
    {COUNT_TO("layers", o.layers, 100000, "L"),
     .help = "use the activation model: L layers of\n"
             "the shapes a profile's batch sweep\n"
             "records (modelled, not measured)"},
    {COUNT_TO("seq", o.seq, 16777216, "N"),
     .help = "its sequence length (default: the\nprofile's)"},
    {.type = CAL_OPT_FLAG, .name = "checkpointing", .off = OFF(o.checkpointing),
     .help = "activation checkpointing (each layer's\n"
             "input kept, one layer recomputed)"},
    {COUNT_TO("lora-rank", o.lora_rank, 65536, "R"),
     .help = "LoRA of rank R on all seven projections\n"
             "(trainable params from the shapes;\n"
             "with --training lora)"},
    {.type = CAL_OPT_DOUBLE, .name = "activation-fraction", .arg = "F",
     .max = 100, .off = OFF(act), .set = act_opt,
     .bad = "--activation-fraction must be a number >= 0: %s",
     .help = "without --layers: activation bytes per\n"
             "example as a fraction of weight bytes\n"
             "(default 0.02 training, 0.005\n"
             "inference)"},
    {.type = CAL_OPT_DOUBLE, .name = "headroom", .arg = "F", .max = 0.99,
     .off = OFF(head), .bad = "--headroom must be in [0, 0.99]: %s",
     .help = "memory kept free (default 0.10)"},
    {.type = CAL_OPT_CALL, .name = "memory-gb", .arg = "NAME=GB",
     .set = memory_opt,
     .bad = "--memory-gb needs NAME=GB with GB a positive number, e.g. "
            "gpu-box=80: %s",
     .help = "memory of a machine (a curve has none)"},
    {.type = CAL_OPT_TEXT, .help = "Output:\n"},
    {.type = CAL_OPT_STRING, .name = "format", .arg = "table|md|json|hf|env",
     .off = OFF(format), .choices = formats,
     .bad = "--format must be table, md, json, hf or env: %s",
     .help = "\noutput format (default table); hf: per\n"
             "machine the Hugging Face trainer's\n"
             "per_device_train_batch_size,\n"
             "gradient_accumulation_steps and bf16 (JSON);\n"
             "env: the same as shell assignments"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(output),
     .help = "write there instead of stdout ('-':\nstdout)"},
    CAL_OPT_LAST("this text"),
};

static const cal_opt_cmd_t plan_opts = {
    CMD, plan_head, {{plan_rows, 32, CAL_OPT_FLAT}},
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  the model fits on no machine alone (sharding needed, or it fits\n"
    "     nowhere); the plan is written all the same\n" CAL_HELP_EXIT_COMMON,
};

/* The work's unit from the options given; -1 to go on, else the exit
 * code. */
static int resolve_work(plan_args_t *a) {
  cal_work_t *w = &a->o.work;
  int n = (w->examples > 0) + (w->epochs > 0) + (w->steps > 0);
  if (n > 1)
    return bad("give the work once: --examples, --epochs or --steps", NULL);
  if ((w->epochs > 0) != (w->dataset_examples > 0))
    return bad("--epochs and --dataset-examples go together (E passes over "
               "N examples)", NULL);
  if ((w->steps > 0) != (w->global_batch > 0))
    return bad("--steps and --global-batch go together (S steps of G "
               "examples)", NULL);
  w->unit = w->examples    ? CAL_WORK_EXAMPLES
            : w->epochs > 0 ? CAL_WORK_EPOCHS
            : w->steps     ? CAL_WORK_STEPS
                           : CAL_WORK_NONE;
  if (cal_work_examples(w, &a->o.examples) < 0)
    return bad("the work comes to more than 2^53 examples", NULL);
  if (a->o.priced && !a->o.examples)
    return bad("--price-per-hour needs the work to cost: --examples, "
               "--epochs or --steps", NULL);
  return -1;
}

/* The options that only make sense together; -1 to go on. */
static int check_combinations(const plan_args_t *a) {
  const cal_plan_opts_t *o = &a->o;
  if ((o->layers || o->seq || o->checkpointing || o->lora_rank) &&
      !(o->params > 0))
    return bad("--layers, --seq, --checkpointing and --lora-rank describe "
               "the model: give --model-params too", NULL);
  if ((o->seq || o->checkpointing || o->lora_rank) && !o->layers)
    return bad("--seq, --checkpointing and --lora-rank need the activation "
               "model: give --layers L", NULL);
  if (o->lora_rank && o->training != CAL_TRAIN_LORA)
    return bad("--lora-rank needs --training lora", NULL);
  if (o->checkpointing && o->training == CAL_TRAIN_INFERENCE)
    return bad("--checkpointing applies to training, not --training "
               "inference", NULL);
  if (o->layers && a->act_set)
    return bad("--activation-fraction and --layers are two activation "
               "models: give one", NULL);
  return -1;
}

/* -1 to go on (the inputs from argv[*first]), else the exit code. */
static int parse_args(int argc, char **argv, plan_args_t *a, int *first) {
  int code;
  *a = (plan_args_t){.o = {.dtype = CAL_DT_BF16, .training = CAL_TRAIN_FULL},
                     .lora = CAL_PLAN_LORA_FRACTION,
                     .head = CAL_PLAN_HEADROOM,
                     .format = "table"};
  if (!(a->named = calloc((size_t)argc + 1, sizeof *a->named)))
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  if ((code = cal_opt_parse(&plan_opts, a, argc, argv, first)) >= 0)
    return code;
  if (*first >= argc)
    return bad("give at least one profile or curve",
               NULL);
  if ((code = resolve_work(a)) >= 0 || (code = check_combinations(a)) >= 0)
    return code;
  cal_mem_assume_default(a->o.training, &a->o.assume);
  a->o.assume.lora_fraction = a->lora;
  a->o.assume.headroom = a->head;
  if (a->act_set)
    a->o.assume.activation_fraction = a->act;
  return -1;
}

static void free_args(plan_args_t *a) {
  for (size_t i = 0; a->named && i < a->nnamed; i++)
    free(a->named[i].name);
  free(a->named);
}

/* Prices and memories onto the machines: by name or input file, later
 * options over earlier ones, a price without a name for the machines no
 * named price reached.  -1 to go on, else the exit code. */
static int apply_named(const plan_args_t *a, cal_plan_machine_t *ms,
                       size_t n) {
  unsigned char *named_price = calloc(n ? n : 1, 1);
  if (!named_price)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  for (size_t k = 0; k < a->nnamed; k++) {
    const named_val_t *v = &a->named[k];
    const int price = strcmp(v->opt, "--price-per-hour") == 0;
    size_t hits = 0;
    for (size_t i = 0; v->name && i < n; i++) {
      if (strcmp(ms[i].name, v->name) && strcmp(ms[i].path, v->name))
        continue;
      hits++;
      if (price) {
        ms[i].price_per_hour = v->val;
        named_price[i] = 1;
      } else {
        ms[i].available = v->val * 1e9;
      }
    }
    if (v->name && !hits) {
      free(named_price);
      return cal_usage(CMD, "%s %s: no input machine is named '%s' (names "
                       "are device names, curve machine names or input "
                       "files)", v->opt, v->arg, v->name);
    }
  }
  for (size_t k = 0; k < a->nnamed; k++)
    for (size_t i = 0; !a->named[k].name && i < n; i++)
      if (!named_price[i])
        ms[i].price_per_hour = a->named[k].val;
  free(named_price);
  return -1;
}

/* Warn about machines left out, unless none is left (one error line). */
static void warn_left_out(const cal_plan_machine_t *ms, size_t n) {
  size_t usable = 0;
  for (size_t i = 0; i < n; i++)
    usable += ms[i].throughput > 0 && isfinite(ms[i].throughput);
  for (size_t i = 0; usable && i < n; i++)
    if (!(ms[i].throughput > 0 && isfinite(ms[i].throughput)))
      cal_esc_line(stderr,
                   "calibrate plan: warning: %s (%s) has no measured "
                   "throughput; left out", ms[i].name, ms[i].path);
}

/* The outputs of a plan, one a --format value. */
static const cal_reporter_t plan_reporters[] = {
    {"table", "a terminal table", cal_plan_render_text, 0},
    {"md", "GitHub markdown", cal_plan_render_text, 1},
    {"json", "the plan document (calibrate-plan/1)", cal_plan_render_json, 0},
    {"hf", "per machine, Hugging Face TrainingArguments' batch keys (JSON)",
     cal_plan_render_hf, 0},
    {"env", "per machine, shell assignments of batch and accumulation",
     cal_plan_render_env, 0},
};

/* The plan rendered whole by the reporter of a.format, then written
 * through the one writer to a.output or stdout: an exit code. */
static int write_plan(const cal_plan_t *plan, const plan_args_t *a) {
  const cal_reporter_t *r = cal_reporter_find(
      plan_reporters, CAL_NREPORTERS(plan_reporters), a->format);
  char *text = NULL, err[512];
  size_t len = 0;
  if (!r)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "no reporter for --format %s",
                    a->format);
  int e = cal_reporter_render_mem(r, plan, &text, &len, err, sizeof err);
  if (e < 0) /* a name hf or env cannot write is the input's */
    return cal_fail(CMD, e == CAL_EINVAL ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL,
                    "%s", err);
  int rc = CAL_EXIT_OK;
  if (cal_write_atomic(a->output ? a->output : "-", text, len, err,
                       sizeof err) < 0)
    rc = cal_usage(CMD, "%s", err);
  free(text);
  return rc;
}

/* The machines' names as the plan shows them (machine_names.h): names
 * point into *owned (free with cal_machine_names_free).  0 or
 * CAL_ENOMEM. */
static int distinct_names(cal_plan_machine_t *ms, size_t n, char ***owned) {
  const char **own = calloc(n ? n : 1, sizeof *own);
  const char **paths = calloc(n ? n : 1, sizeof *paths);
  int rc = CAL_ENOMEM;
  *owned = NULL;
  if (own && paths) {
    for (size_t i = 0; i < n; i++) {
      own[i] = ms[i].name;
      paths[i] = ms[i].path;
    }
    rc = cal_machine_names(own, paths, n, owned);
    for (size_t i = 0; rc == 0 && i < n; i++)
      ms[i].name = (*owned)[i];
  }
  free(own);
  free(paths);
  return rc;
}

int cal_cmd_plan(int argc, char **argv) {
  plan_args_t a;
  cal_plan_inputs_t in = {0};
  cal_plan_t *plan = NULL;
  char err[512], **names = NULL;
  int first, rc = parse_args(argc, argv, &a, &first);
  if (rc >= 0)
    goto out;
  rc = CAL_EXIT_USAGE;
  for (int i = first; i < argc; i++) {
    int e = cal_plan_inputs_add(&in, argv[i], err, sizeof err);
    if (e < 0) {
      rc = cal_fail(CMD, e == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE,
                    "%s", err);
      goto out;
    }
  }
  if (distinct_names(in.ms, in.n, &names) < 0) {
    rc = cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
    goto out;
  }
  if ((rc = apply_named(&a, in.ms, in.n)) >= 0)
    goto out;
  rc = CAL_EXIT_USAGE;
  warn_left_out(in.ms, in.n);
  if (cal_plan_scale(&a.o, in.ms, in.n, err, sizeof err) < 0) {
    rc = cal_usage(CMD, "%s", err);
    goto out;
  }
  for (size_t i = 0; i < in.n; i++)
    if (in.ms[i].one_layer && !(a.o.params > 0))
      cal_esc_line(stderr, "calibrate plan: warning: %s (%s): %s",
                   in.ms[i].name, in.ms[i].path, in.ms[i].basis);
  a.o.net = in.has_net ? &in.net : NULL;
  if (cal_plan_compute(&a.o, in.ms, in.n, &plan, err, sizeof err) < 0) {
    rc = cal_usage(CMD, "%s", err);
    goto out;
  }
  for (size_t i = 0; i < plan->nwarnings; i++)
    cal_esc_line(stderr, "calibrate plan: warning: %s", plan->warnings[i]);
  rc = write_plan(plan, &a);
  if (rc == CAL_EXIT_OK && cal_plan_fits_nowhere(plan))
    rc = CAL_EXIT_NOFIT;
out:
  cal_plan_free(plan);
  cal_machine_names_free(names, in.n);
  cal_plan_inputs_free(&in);
  free_args(&a);
  return rc;
}
