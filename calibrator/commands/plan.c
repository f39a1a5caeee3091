/* `calibrate plan PROFILE... [options]`: parse the options, load the
 * profiles, build the plan (analysis/plan.c) and write it as a table,
 * markdown (report/plan_render.c) or JSON. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "compare.h"
#include "plan.h"
#include "plan_render.h"
#include "profile.h"

#define CMD "plan"

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

typedef struct plan_args {
  cal_plan_opts_t o;
  double lora, act, head;
  int act_set;
  const char *format;
  const char *output;
} plan_args_t;

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

/* A count in [1, hi] written with digits only (no sign, no space). */
static int parse_count(const char *s, long hi, long *out) {
  if (!s || *s < '0' || *s > '9')
    return CAL_EINVAL;
  return cal_parse_long(s, 1, hi, out);
}

/* One option; -1 to go on, else the exit code. */
static int plan_option(int c, char **argv, plan_args_t *a) {
  long v;
  switch (c) {
  case OPT_EXAMPLES:
    if (parse_count(optarg, CAL_PLAN_MAX_EXAMPLES, &v) < 0)
      return bad("--examples needs an integer from 1 to 2^53 "
                 "(9007199254740992)", optarg);
    a->o.examples = (uint64_t)v;
    return -1;
  case OPT_TARGET:
    if (parse_count(optarg, INT32_MAX, &v) < 0)
      return bad("--target-effective-batch needs a positive integer", optarg);
    a->o.target = v;
    return -1;
  case OPT_PARAMS:
    if (cal_parse_double(optarg, 1, 1e15, &a->o.params) < 0)
      return bad("--model-params needs a positive number such as 7e9", optarg);
    return -1;
  case OPT_DTYPE:
    if (cal_dtype_parse(optarg, &a->o.dtype) < 0)
      return bad("--dtype must be fp32, bf16, fp16 or int8", optarg);
    return -1;
  case OPT_TRAINING:
    if (cal_training_parse(optarg, &a->o.training) < 0)
      return bad("--training must be full, lora or inference", optarg);
    return -1;
  case OPT_LORA:
    if (cal_parse_double(optarg, 0, 1, &a->lora) < 0 || a->lora == 0)
      return bad("--lora-fraction must be in (0, 1]", optarg);
    return -1;
  case OPT_ACT:
    if (cal_parse_double(optarg, 0, 100, &a->act) < 0)
      return bad("--activation-fraction must be a number >= 0", optarg);
    a->act_set = 1;
    return -1;
  case OPT_HEADROOM:
    if (cal_parse_double(optarg, 0, 0.99, &a->head) < 0)
      return bad("--headroom must be in [0, 0.99]", optarg);
    return -1;
  case OPT_FORMAT:
    if (strcmp(optarg, "table") && strcmp(optarg, "md") && strcmp(optarg, "json"))
      return bad("--format must be table, md or json", optarg);
    a->format = optarg;
    return -1;
  case 'o': a->output = optarg; return -1;
  case 'h': fputs(usage, stdout); return CAL_EXIT_OK;
  case ':': return bad("option needs a value", argv[optind - 1]);
  default: return bad("unknown option", argv[optind - 1]);
  }
}

/* -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, plan_args_t *a) {
  int c, code;
  *a = (plan_args_t){.o = {.dtype = CAL_DT_BF16, .training = CAL_TRAIN_FULL},
                     .lora = CAL_PLAN_LORA_FRACTION,
                     .head = CAL_PLAN_HEADROOM,
                     .format = "table"};
  optind = 0; /* full re-initialisation: tests call this more than once */
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:h", long_opts, NULL)) != -1)
    if ((code = plan_option(c, argv, a)) >= 0)
      return code;
  if (optind >= argc)
    return bad("give at least one profile (calibrate plan --help)", NULL);
  cal_mem_assume_default(a->o.training, &a->o.assume);
  a->o.assume.lora_fraction = a->lora;
  a->o.assume.headroom = a->head;
  if (a->act_set)
    a->o.assume.activation_fraction = a->act;
  return -1;
}

/* Warn about machines left out, unless none is left (one error line). */
static void warn_left_out(const cal_plan_machine_t *ms, size_t n) {
  size_t usable = 0;
  for (size_t i = 0; i < n; i++)
    usable += ms[i].throughput > 0 && isfinite(ms[i].throughput);
  for (size_t i = 0; usable && i < n; i++)
    if (!(ms[i].throughput > 0 && isfinite(ms[i].throughput)))
      fprintf(stderr,
              "calibrate plan: warning: %s (%s) has no measured throughput; "
              "left out\n", ms[i].name, ms[i].prof->path);
}

/* The plan as a table or markdown, rendered whole, then written through
 * the one writer to a.output or stdout: an exit code. */
static int write_text(const json_t *plan, const plan_args_t *a) {
  char *text = NULL, err[512];
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) {
    fprintf(stderr, "calibrate plan: out of memory\n");
    return CAL_EXIT_INTERNAL;
  }
  cal_plan_render(mem, plan, strcmp(a->format, "md") == 0);
  if (fclose(mem) != 0) {
    free(text);
    fprintf(stderr, "calibrate plan: out of memory\n");
    return CAL_EXIT_INTERNAL;
  }
  int rc = CAL_EXIT_OK;
  if (cal_write_atomic(a->output ? a->output : "-", text, len, err,
                       sizeof err) < 0) {
    fprintf(stderr, "calibrate plan: %s\n", err);
    rc = CAL_EXIT_USAGE;
  }
  free(text);
  return rc;
}

int cal_cmd_plan(int argc, char **argv) {
  plan_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0)
    return rc;
  size_t n = (size_t)(argc - optind);
  cal_profile_t **profs = calloc(n, sizeof *profs);
  cal_plan_machine_t *ms = calloc(n, sizeof *ms);
  json_t *plan = NULL;
  char err[512];
  rc = CAL_EXIT_USAGE;
  if (!profs || !ms) {
    fprintf(stderr, "calibrate plan: out of memory\n");
    rc = CAL_EXIT_INTERNAL;
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    if (!(profs[i] = cal_cmd_load_profile(CMD, argv[optind + (int)i])))
      goto out;
    cal_plan_read_machine(profs[i], &ms[i]);
  }
  warn_left_out(ms, n);
  if (!(plan = cal_plan_build(&a.o, ms, n, err, sizeof err))) {
    fprintf(stderr, "calibrate plan: %s\n", err);
    goto out;
  }
  rc = strcmp(a.format, "json") == 0
           ? cal_cmd_write_json(CMD, plan, a.output ? a.output : "-")
           : write_text(plan, &a);
out:
  json_decref(plan);
  for (size_t i = 0; profs && i < n; i++)
    cal_profile_free(profs[i]);
  free(profs);
  free(ms);
  return rc;
}
