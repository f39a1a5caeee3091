/* The options every measuring command shares, one row each: how each is
 * parsed, checked and described in `calibrate run --help`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal_exit.h"
#include "cli.h"
#include "curve.h"
#include "layer.h"
#include "options.h"
#include "run.h"

_Static_assert(sizeof(long) == sizeof(int64_t),
               "CAL_OPT_LONG rows store into int64_t fields");

#define OFF(field) offsetof(cal_opts_t, field)
/* An option that only its setter fn sees (no storage). */
#define CALL(n, a, fn) .type = CAL_OPT_CALL, .name = n, .arg = a, .set = fn

/* --sections LIST: section keys (batch for batch_sweep), comma-separated. */
static int sections_opt(void *obj, const cal_opt_t *row, const char *arg,
                        const char *cmd) {
  cal_opts_t *o = obj;
  unsigned set = 0;
  const char *p = arg;
  while (*p) {
    size_t n = strcspn(p, ",");
    int found = -1;
    for (int i = 0; i < CAL_NSECTIONS && found < 0; i++)
      if ((strlen(cal_sections[i].key) == n &&
           strncmp(p, cal_sections[i].key, n) == 0) ||
          (i == CAL_SEC_ID_BATCH && n == 5 && strncmp(p, "batch", 5) == 0))
        found = i;
    if (found < 0)
      return cal_usage(cmd, "--sections: '%.*s' is not a section (gemm, "
                            "scaling, attention, peak, bandwidth, roofline, "
                            "batch)", (int)(n > 40 ? 40 : n), p);
    set |= 1u << found;
    p += n;
    if (*p == ',')
      p++;
  }
  if (!set)
    return cal_usage(cmd, "--sections needs a list like gemm,peak");
  o->sections_asked = set;
  return -1;
}

/* What --sections takes: each section's key, and batch. */
static void sections_values(FILE *out) {
  for (int i = 0; i < CAL_NSECTIONS; i++)
    fprintf(out, "%s ", cal_sections[i].key);
  fputs("batch", out);
}

/* What --preset takes: every preset's name, and list. */
static void preset_values(FILE *out) {
  const cal_layer_preset_t *p;
  for (size_t i = 0; (p = cal_layer_preset_at(i)); i++)
    fprintf(out, "%s ", p->name);
  fputs("list", out);
}

static int gemm_engine_opt(void *obj, const cal_opt_t *row, const char *arg,
                           const char *cmd) {
  cal_opts_t *o = obj;
  o->gemm_engine_given = 1;
  return cal_opts_gemm_engine(o, arg, "--gemm-engine") ? CAL_EXIT_USAGE : -1;
}

static int preset_opt(void *obj, const cal_opt_t *row, const char *arg,
                      const char *cmd) {
  cal_opts_t *o = obj;
  if (strcmp(arg, "list") == 0) {
    o->list_presets = 1;
    return CAL_EXIT_OK;
  }
  if (!cal_layer_preset_find(arg))
    return cal_usage(cmd, "unknown preset '%s' (--preset list shows them)", arg);
  o->preset_asked = arg;
  return -1;
}

static int layers_opt(void *obj, const cal_opt_t *row, const char *arg,
                      const char *cmd) {
  ((cal_opts_t *)obj)->sweep.layers_given = 1;
  return -1;
}

/* --gen-len, --group, --max-batch given: checked against --workload and
 * --batches once every option is read (cal_opts_parse). */
static int gen_len_opt(void *obj, const cal_opt_t *row, const char *arg,
                       const char *cmd) {
  ((cal_opts_t *)obj)->sweep.gen_len_given = 1;
  return -1;
}

static int group_opt(void *obj, const cal_opt_t *row, const char *arg,
                     const char *cmd) {
  ((cal_opts_t *)obj)->sweep.group_given = 1;
  return -1;
}

static int max_batch_opt(void *obj, const cal_opt_t *row, const char *arg,
                         const char *cmd) {
  ((cal_opts_t *)obj)->sweep.max_batch_given = 1;
  return -1;
}

/* --mode given: --ci keeps it instead of its own prefill and decode. */
static int modes_opt(void *obj, const cal_opt_t *row, const char *arg,
                     const char *cmd) {
  ((cal_opts_t *)obj)->sweep.modes_given = 1;
  return -1;
}

/* What a batch sweep measures at most: batch sizes (a layer at batch
 * 65536 needs tens of GB even for the smallest preset) and points. */
#define CAL_SWEEP_MAX_BATCH 65536
#define CAL_SWEEP_MAX_POINTS 64

static int batches_opt(void *obj, const cal_opt_t *row, const char *arg,
                       const char *cmd) {
  cal_sweep_opts_t *sw = &((cal_opts_t *)obj)->sweep;
  char err[256];
  free(sw->batches);
  sw->batches = NULL;
  if (cal_batches_parse(arg, &sw->batches, &sw->nbatches, err, sizeof err) < 0)
    return cal_usage(cmd, "--batches: %s", err);
  if (sw->nbatches > CAL_SWEEP_MAX_POINTS)
    return cal_usage(cmd, "--batches: %zu batch sizes, at most %d in a "
                          "sweep", sw->nbatches, CAL_SWEEP_MAX_POINTS);
  if (sw->batches[sw->nbatches - 1] > CAL_SWEEP_MAX_BATCH)
    return cal_usage(cmd, "--batches: batch size %lld is above %d, the "
                          "largest a sweep measures",
                     (long long)sw->batches[sw->nbatches - 1],
                     CAL_SWEEP_MAX_BATCH);
  return -1;
}

static int optimize_opt(void *obj, const cal_opt_t *row, const char *arg,
                        const char *cmd) {
  cal_curve_policy_t pol;
  if (cal_curve_policy_parse(arg, &pol) < 0)
    return cal_usage(cmd, "--optimize is throughput or knee, not '%s'", arg);
  ((cal_opts_t *)obj)->sweep.policy = pol;
  return -1;
}

static int dtype_opt(void *obj, const cal_opt_t *row, const char *arg,
                     const char *cmd) {
  cal_sweep_opts_t *sw = &((cal_opts_t *)obj)->sweep;
  if (strcmp(arg, "fp32") == 0 || strcmp(arg, "bf16") == 0)
    sw->dtype_asked = strcmp(arg, "fp32") == 0 ? "fp32" : "bf16";
  else if (strcmp(arg, "auto") == 0)
    sw->dtype_asked = NULL;
  else
    return cal_usage(cmd, "--dtype is fp32, bf16 or auto, not '%s'", arg);
  return -1;
}

/* Above physical memory the budget no longer guards against the OOM
 * killer; below a mebibyte it is a typo (a size without its unit). */
static int memory_budget_opt(void *obj, const cal_opt_t *row, const char *arg,
                             const char *cmd) {
  double b = ((cal_opts_t *)obj)->sweep.memory_budget;
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (b < 1048576)
    return cal_usage(cmd, "--memory-budget %s is less than 1M (give a "
                          "unit: 512M, 8G)", arg);
  if (phys > 0 && b > phys)
    return cal_usage(cmd, "--memory-budget %s is more than this machine's "
                          "%.1f GiB of memory", arg, phys / 1073741824.0);
  return -1;
}

/* --workload: the sweep runs (its mode alone, unless --mode adds
 * others) and the headline follows it.  Given once: a second one would
 * silently replace the first. */
static int workload_opt(void *obj, const cal_opt_t *row, const char *arg,
                        const char *cmd) {
  cal_opts_t *o = obj;
  (void)row;
  if (o->sweep.workload)
    return cal_usage(cmd, "--workload given twice ('%s', then '%s'): a run "
                          "measures one workload", o->sweep.workload, arg);
  if (strcmp(arg, "sft") == 0)
    o->sweep.workload_mode = 2;
  else if (strcmp(arg, "inference") == 0)
    o->sweep.workload_mode = 3;
  else if (strcmp(arg, "dpo") == 0)
    o->sweep.workload_mode = 4;
  else if (strcmp(arg, "grpo") == 0)
    o->sweep.workload_mode = 5;
  else
    return cal_usage(cmd, "--workload is sft, dpo, grpo or inference, not "
                          "'%s'", arg);
  static const char *const names[] = {"sft", "inference", "dpo", "grpo"};
  o->sweep.workload = names[o->sweep.workload_mode - 2];
  o->sweep_asked = 1;
  return -1;
}

/* The values of the options whose setters read the name (checked by
 * the table before the setter runs). */
static const cal_opt_choice_t workloads[] = {
    {"sft", 0}, {"dpo", 0}, {"grpo", 0}, {"inference", 0}, {NULL, 0}};
static const cal_opt_choice_t optimizes[] = {
    {"throughput", 0}, {"knee", 0}, {NULL, 0}};
static const cal_opt_choice_t dtypes[] = {
    {"fp32", 0}, {"bf16", 0}, {"auto", 0}, {NULL, 0}};

static const cal_opt_choice_t modes[] = {
    {"prefill", 1}, {"decode", 2}, {"train", 4}, {"both", 3}, {"all", 7},
    {NULL, 0}};

const cal_opt_t cal_opts_run_rows[] = {
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(out_asked),
     .help = "write the profile to FILE ('-': standard output;\n"
             "the table then goes to standard error); default:\n"
             "<host>-<UTC time>.json in the current directory\n"
             "(results/ of the source tree for an\n"
             "uninstalled build; $CALIBRATE_RESULTS_DIR)"},
    {.type = CAL_OPT_FLAG, .name = "quick", .letter = 'q', .off = OFF(quick),
     .help = "short run (about 20 s on 2 cores), fewer sizes"},
    {.type = CAL_OPT_FLAG, .name = "ci", .off = OFF(ci),
     .help = "preset for CI regression runs on noisy shared runners:\n"
             "a few fixed points (about 25 s on 2 cores, so runs can\n"
             "be repeated: compare several per side), 2 interleaved\n"
             "rounds of 4 samples per point, with a short batch sweep"},
    {.type = CAL_OPT_LONG, .name = "rounds", .arg = "N", .min = 1, .max = 100,
     .off = OFF(rounds_asked),
     .help = "measure every point in N interleaved rounds"},
    {.type = CAL_OPT_LONG, .name = "threads", .letter = 't', .arg = "N",
     .min = 1, .max = 1 << 20, .off = OFF(threads_asked),
     .bad = "--threads needs a whole number of at least 1, not '%s'",
     .help = "threads for the all-core runs (1..usable cores)"},
    {.type = CAL_OPT_LONG, .name = "samples", .arg = "N", .min = 1,
     .max = 10000, .off = OFF(samples_asked),
     .help = "timed samples per point (default 7, at least 1)"},
    {.type = CAL_OPT_DOUBLE, .name = "min-time", .arg = "S", .min = 1e-6,
     .max = 60, .off = OFF(min_time_asked),
     .bad = "--min-time needs seconds between 1e-6 and 60, not '%s'",
     .help = "minimum seconds per sample (default 0.05, quick 0.01)"},
    {.type = CAL_OPT_FRACTION, .name = "cv-threshold", .arg = "F",
     .off = OFF(cv_asked),
     .help = "mark points unstable above this CV (default 5%%)"},
    {.type = CAL_OPT_DOUBLE, .name = "budget-scale", .arg = "F", .min = 0.01,
     .max = 100, .def = "1", .off = OFF(budget_scale),
     .bad = "--budget-scale needs a factor between 0.01 and 100, not '%s'",
     .help = "multiply every section's time budget by F"},
    {.type = CAL_OPT_U64, .name = "seed", .arg = "N", .def = "42",
     .off = OFF(seed), .bad = "--seed needs a non-negative integer, not '%s'",
     .help = "seed of the input data (default 42)"},
    {.type = CAL_OPT_FLAG, .name = "no-progress", .off = OFF(no_progress),
     .help = "no progress on standard error (by default a\n"
             "live line on a terminal, else, and under\n"
             "TERM=dumb, one line per finished section)"},
    {.type = CAL_OPT_STRING, .name = "plots", .arg = "DIR",
     .off = OFF(plots_dir),
     .help = "draw the charts (gnuplot) into DIR after the run"},
    {CALL("gemm-engine", "E", gemm_engine_opt), .values = cal_opts_gemm_engines,
     .help = "auto (default: every engine that offers a dtype;\n"
             "the best verified one is the headline), openblas\n"
             "or onednn (only that one)"},
    {.type = CAL_OPT_FLAG, .name = "verbose", .letter = 'v', .off = OFF(verbose),
     .help = "say which kernel variants ran, and warnings"},
    {CALL("sections", "LIST", sections_opt), .values = sections_values,
     .help = "only these sections, e.g. gemm,peak (gemm,\n"
             "scaling, attention, peak, bandwidth, roofline,\n"
             "batch); --sweep-batch adds batch"},
    {.type = CAL_OPT_FLAG, .name = "allow-busy", .off = OFF(allow_busy),
     .help = "keep the figures of points measured while other\n"
             "processes took the cores (marked contaminated)"},
    {.type = CAL_OPT_FLAG, .name = "partial", .off = OFF(partial),
     .help = "on SIGINT/SIGTERM stop measuring and write the\n"
             "sections that finished, marked incomplete"},
    {.type = CAL_OPT_FLAG, .name = "no-wait", .off = OFF(no_wait),
     .help = "refuse (exit 5) instead of waiting when another\n"
             "calibrate run is measuring this machine"},
    {.type = CAL_OPT_END},
};

#define SHAPE(n, i)                                                            \
  {.type = CAL_OPT_LONG, .name = n, .arg = "N", .min = 1, .max = 1L << 22,   \
   .off = OFF(shape_asked[i])}

const cal_opt_t cal_opts_sweep_rows[] = {
    {.type = CAL_OPT_TEXT,
     .help = "\nBatch sweep (the throughput-versus-batch curve of the model's "
             "step):\n"},
    {.type = CAL_OPT_FLAG, .name = "sweep-batch", .off = OFF(sweep_asked),
     .help = "also run the batch sweep"},
    {CALL("preset", "NAME", preset_opt), .values = preset_values,
     .help = "model shape (default qwen2-0.5b; 'list' lists them)"},
    {.type = CAL_OPT_LONG, .name = "hidden", .arg = "N", .min = 1,
     .max = 1L << 22, .off = OFF(shape_asked[0]),
     .label = "      --hidden N, --heads N, --kv-heads N, --ffn N, --seq N",
     .help = "\noverride the preset's sizes (seq: prefill length\n"
             "and decode KV-cache length)"},
    SHAPE("heads", 1), SHAPE("kv-heads", 2), SHAPE("ffn", 3), SHAPE("seq", 4),
    {.type = CAL_OPT_SET, .name = "mode", .arg = "M", .choices = modes,
     .def = "all", .off = OFF(sweep.modes), .set = modes_opt,
     .bad = "--mode is prefill, decode, train, both or all (or a "
            "comma-separated list), not '%s'",
     .help = "prefill, decode, train, both (prefill and\n"
             "decode), all (the default; --ci: both), or a\n"
             "list: a,b"},
    {CALL("workload", "W", workload_opt), .choices = workloads,
     .bad = "--workload is sft, dpo, grpo or inference, not '%s'",
     .help = "sft, dpo, grpo or inference, given once: the\n"
             "workload as users run it, its curve the headline\n"
             "(runs the sweep; dpo: an example is a pair, grpo:\n"
             "a prompt and its --group completions)"},
    {.type = CAL_OPT_LONG, .name = "gen-len", .arg = "N", .min = 1,
     .max = 4096, .def = "32", .off = OFF(sweep.gen_len), .set = gen_len_opt,
     .help = "tokens --workload inference and grpo generate\n"
             "after the prompt of seq tokens (default 32;\n"
             "refused without one of them)"},
    {.type = CAL_OPT_LONG, .name = "group", .arg = "G", .min = 1,
     .max = 256, .def = "4", .off = OFF(sweep.group), .set = group_opt,
     .help = "completions --workload grpo generates a prompt\n"
             "(default 4; refused without it)"},
    {.type = CAL_OPT_LONG, .name = "lora-rank", .arg = "R", .min = 1,
     .max = 1024, .off = OFF(sweep.lora_rank),
     .help = "the training step (train/sft, dpo, grpo) trains\n"
             "LoRA adapters of rank R on a frozen base (R at\n"
             "most the smaller of hidden and ffn)"},
    {.type = CAL_OPT_LONG, .name = "layers", .arg = "N", .min = 1, .max = 4096,
     .off = OFF(sweep.layers), .set = layers_opt,
     .help = "the model's decoder layers (default: the\n"
             "preset's depth); train measures the whole\n"
             "stack where it fits the memory budget, else\n"
             "the fewest layers past 4x the LLC, scaled"},
    {CALL("batches", "LIST", batches_opt),
     .help = "e.g. 1,2,4,8 or 1-256*2 (default: decode\n"
             "1,4,16,64, the others 1-32*2; extended while\n"
             "throughput rises)"},
    {.type = CAL_OPT_CLEAR, .name = "no-extend", .off = OFF(sweep.extend),
     .help = "do not extend past the list"},
    {.type = CAL_OPT_LONG, .name = "max-batch", .arg = "N", .min = 1,
     .max = CAL_SWEEP_MAX_BATCH, .def = "4096", .off = OFF(sweep.max_batch),
     .set = max_batch_opt,
     .help = "never extend past N (default 4096); given,\n"
             "no --batches size may be above it"},
    {CALL("optimize", "P", optimize_opt), .choices = optimizes,
     .bad = "--optimize is throughput or knee, not '%s'",
     .help = "throughput (the peak) or knee (default throughput)"},
    {.type = CAL_OPT_FRACTION, .name = "tolerance", .arg = "F", .def = "3%",
     .off = OFF(sweep.tolerance),
     .bad = "--tolerance needs a fraction like 3%% or 0.03, not '%s'",
     .help = "knee and shape tolerance (default 3%%)"},
    {.type = CAL_OPT_LONG, .name = "target-effective-batch", .arg = "N",
     .min = 1, .max = (double)CAL_BATCH_MAX,
     .off = OFF(sweep.target_effective_batch),
     .help = "recommend batch x accumulation steps"},
    {CALL("dtype", "D", dtype_opt), .choices = dtypes,
     .bad = "--dtype is fp32, bf16 or auto, not '%s'",
     .help = "fp32, bf16 or auto (default: bf16 where the CPU\n"
             "has a native bf16 matrix path, else fp32): the\n"
             "layer's weights and matrix products' inputs"},
    {.type = CAL_OPT_SIZE, .name = "memory-budget", .arg = "SIZE", .max = HUGE_VAL,
     .off = OFF(sweep.memory_budget), .set = memory_budget_opt,
     .help = "memory a point may use, e.g. 512M, 8G\n"
             "(default: 90%% of available memory)"},
    {.type = CAL_OPT_END},
};
