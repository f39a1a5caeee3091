/* Options shared by the measuring commands: parsing, then resolving what
 * depends on the machine. */
#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "cal_err.h"
#include "cal_exit.h"
#include "cal_paths.h"
#include "cli.h"
#include "curve.h"
#include "kernel.h"
#include "layer.h"
#include "run.h"

enum { O_SAMPLES = 256, O_MINTIME, O_CV, O_SEED, O_NOPROG, O_BUDGET,
       O_SWEEP, O_PRESET, O_HIDDEN, O_HEADS, O_KVHEADS, O_FFN, O_SEQ, O_MODE,
       O_BATCHES, O_NOEXT, O_MAXB, O_OPT, O_TOL, O_TEB, O_MEMB, O_DTYPE, O_CI,
       O_ROUNDS, O_PLOTS, O_GEMM_ENGINE, O_ALLOW_BUSY, O_PARTIAL, O_NO_WAIT, O_SECTIONS, O_LAYERS };

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"quick", no_argument, NULL, 'q'},
    {"threads", required_argument, NULL, 't'},
    {"samples", required_argument, NULL, O_SAMPLES},
    {"min-time", required_argument, NULL, O_MINTIME},
    {"cv-threshold", required_argument, NULL, O_CV},
    {"budget-scale", required_argument, NULL, O_BUDGET},
    {"seed", required_argument, NULL, O_SEED},
    {"no-progress", no_argument, NULL, O_NOPROG},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"sweep-batch", no_argument, NULL, O_SWEEP},
    {"ci", no_argument, NULL, O_CI},
    {"plots", required_argument, NULL, O_PLOTS},
    {"gemm-engine", required_argument, NULL, O_GEMM_ENGINE},
    {"rounds", required_argument, NULL, O_ROUNDS},
    {"allow-busy", no_argument, NULL, O_ALLOW_BUSY},
    {"partial", no_argument, NULL, O_PARTIAL},
    {"no-wait", no_argument, NULL, O_NO_WAIT},
    {"sections", required_argument, NULL, O_SECTIONS},
    {"preset", required_argument, NULL, O_PRESET},
    {"hidden", required_argument, NULL, O_HIDDEN},
    {"heads", required_argument, NULL, O_HEADS},
    {"kv-heads", required_argument, NULL, O_KVHEADS},
    {"ffn", required_argument, NULL, O_FFN},
    {"seq", required_argument, NULL, O_SEQ},
    {"mode", required_argument, NULL, O_MODE},
    {"layers", required_argument, NULL, O_LAYERS},
    {"batches", required_argument, NULL, O_BATCHES},
    {"no-extend", no_argument, NULL, O_NOEXT},
    {"max-batch", required_argument, NULL, O_MAXB},
    {"optimize", required_argument, NULL, O_OPT},
    {"tolerance", required_argument, NULL, O_TOL},
    {"target-effective-batch", required_argument, NULL, O_TEB},
    {"memory-budget", required_argument, NULL, O_MEMB},
    {"dtype", required_argument, NULL, O_DTYPE},
    {NULL, 0, NULL, 0},
};

static void defaults(cal_opts_t *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->seed = 42;
  o->budget_scale = 1.0;
  o->threads_asked = o->samples_asked = o->rounds_asked = -1;
  o->min_time_asked = o->cv_asked = -1;
  o->sweep.modes = 7; /* the training step and inference */
  o->sweep.extend = 1;
  o->sweep.max_batch = 4096;
  o->sweep.tolerance = 0.03;
  o->sweep.policy = CAL_OPTIMIZE_THROUGHPUT;
  o->attn.variant = -1; /* CAL_VARIANT_AUTO */
  o->gemm_engine = "auto";
}

/* The GEMM engine `name` ("auto" or the engine of a GEMM kernel in the
 * kernel table) as a static string; NULL when there is none of that name.
 * `list` receives the valid names for the message. */
static const char *gemm_engine_find(const char *name, char *list, size_t len) {
  const char *found = strcmp(name, "auto") == 0 ? "auto" : NULL;
  int seen[CAL_ENGINE_COUNT] = {0};
  size_t used = (size_t)snprintf(list, len, "auto");
  const cal_kernel_t *k;
  for (size_t i = 0; (k = cal_kernel_at(i)); i++) {
    const char *e = cal_kernel_engine(k);
    if (k->family != CAL_FAMILY_GEMM || seen[k->engine])
      continue;
    seen[k->engine] = 1;
    if (used < len)
      used += (size_t)snprintf(list + used, len - used, ", %s", e);
    if (cal_engine_parse(name) == (int)k->engine)
      found = e;
  }
  return found;
}

/* --gemm-engine, or CALIBRATE_GEMM_ENGINE when `flag` is NULL. */
static int gemm_engine_opt(cal_opts_t *o, const char *arg, const char *flag) {
  char list[128];
  const char *e = gemm_engine_find(arg, list, sizeof list);
  if (!e)
    return cal_usage(o->cmd, "%s is one of %s, not '%s'",
                     flag ? flag : "CALIBRATE_GEMM_ENGINE", list, arg);
  o->gemm_engine = e;
  return 0;
}

/* --sections LIST: section keys (batch for batch_sweep), comma-separated. */
static int sections_opt(cal_opts_t *o, const char *arg) {
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
      return cal_usage(o->cmd, "--sections: '%.*s' is not a section (gemm, "
                               "scaling, attention, peak, bandwidth, roofline, "
                               "batch)", (int)(n > 40 ? 40 : n), p);
    set |= 1u << found;
    p += n;
    if (*p == ',')
      p++;
  }
  if (!set)
    return cal_usage(o->cmd, "--sections needs a list like gemm,peak");
  o->sections_asked = set;
  return 0;
}

/* The flags of the run itself (not the batch sweep's).  1: not one of
 * them; 0: taken; else an exit code. */
static int run_flag(cal_opts_t *o, int c, const char *arg) {
  const char *cmd = o->cmd;
  switch (c) {
  case 'o': o->out_asked = arg; return 0;
  case 'q': o->quick = 1; return 0;
  case 'v': o->verbose = 1; return 0;
  case O_NOPROG: o->no_progress = 1; return 0;
  case O_SWEEP: o->sections |= CAL_SEC_BATCH; return 0;
  case O_CI: o->ci = 1; return 0;
  case O_ALLOW_BUSY: o->allow_busy = 1; return 0;
  case O_PARTIAL: o->partial = 1; return 0;
  case O_NO_WAIT: o->no_wait = 1; return 0;
  case O_SECTIONS: return sections_opt(o, arg);
  case O_PLOTS: o->plots_dir = arg; return 0;
  case O_GEMM_ENGINE:
    o->gemm_engine_given = 1;
    return gemm_engine_opt(o, arg, "--gemm-engine");
  case 't':
    if (cal_parse_long(arg, 1, 1 << 20, &o->threads_asked) < 0)
      return cal_usage(cmd, "--threads needs a whole number of at least 1, "
                            "not '%s'", arg);
    return 0;
  case O_SAMPLES:
    if (cal_parse_long(arg, 1, 10000, &o->samples_asked) < 0)
      return cal_usage(cmd, "--samples needs a whole number from 1 to 10000, "
                            "not '%s'", arg);
    return 0;
  case O_MINTIME:
    if (cal_parse_double(arg, 1e-6, 60, &o->min_time_asked) < 0)
      return cal_usage(cmd, "--min-time needs seconds between 1e-6 and 60, "
                            "not '%s'", arg);
    return 0;
  case O_CV:
    if (cal_parse_fraction(arg, &o->cv_asked) < 0 || o->cv_asked <= 0)
      return cal_usage(cmd, "--cv-threshold needs a fraction like 5%% or "
                            "0.05, not '%s'", arg);
    return 0;
  case O_BUDGET:
    if (cal_parse_double(arg, 0.01, 100, &o->budget_scale) < 0)
      return cal_usage(cmd, "--budget-scale needs a factor between 0.01 and "
                            "100, not '%s'", arg);
    return 0;
  case O_SEED:
    if (cal_parse_u64(arg, &o->seed) < 0)
      return cal_usage(cmd, "--seed needs a non-negative integer, not '%s'", arg);
    return 0;
  case O_ROUNDS:
    if (cal_parse_long(arg, 1, 100, &o->rounds_asked) < 0)
      return cal_usage(cmd, "--rounds needs a whole number from 1 to 100, "
                            "not '%s'", arg);
    return 0;
  default:
    return 1;
  }
}

/* A whole number flag into *v (1 .. hi). */
static int count_flag(const char *cmd, const char *name, const char *arg,
                      long hi, long *v) {
  if (cal_parse_long(arg, 1, hi, v) < 0)
    return cal_usage(cmd, "%s needs a whole number from 1 to %ld, not '%s'",
                     name, hi, arg);
  return 0;
}

/* --mode: prefill, decode, train, both (prefill and decode) or all, or
 * a comma-separated list of them. */
static int mode_flag(const char *cmd, const char *arg, int *modes) {
  static const struct { const char *name; int bits; } names[] = {
      {"prefill", 1}, {"decode", 2}, {"train", 4}, {"both", 3}, {"all", 7}};
  int set = 0;
  const char *p = arg;
  while (1) {
    size_t n = strcspn(p, ","), i;
    for (i = 0; i < sizeof names / sizeof *names; i++)
      if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0)
        break;
    if (n == 0 || i == sizeof names / sizeof *names)
      return cal_usage(cmd, "--mode is prefill, decode, train, both or all "
                            "(or a comma-separated list), not '%s'", arg);
    set |= names[i].bits;
    if (!p[n])
      break;
    p += n + 1;
  }
  *modes = set;
  return 0;
}

/* What a batch sweep measures at most: batch sizes (a layer at batch
 * 65536 needs tens of GB even for the smallest preset) and points. */
#define CAL_SWEEP_MAX_BATCH 65536
#define CAL_SWEEP_MAX_POINTS 64

/* The batch sweep's flags.  1: not one of them; 0: taken; else an exit
 * code.  shape[] collects --hidden .. --seq. */
static int sweep_flag(cal_opts_t *o, int c, const char *arg, long shape[5],
                      const char **preset) {
  static const char *const names[] = {"--hidden", "--heads", "--kv-heads",
                                      "--ffn", "--seq"};
  const char *cmd = o->cmd;
  cal_sweep_opts_t *sw = &o->sweep;
  char err[256];
  long v;
  switch (c) {
  case O_PRESET:
    if (!cal_layer_preset_find(arg))
      return cal_usage(cmd, "unknown preset '%s' (--preset list shows them)", arg);
    *preset = arg;
    return 0;
  case O_HIDDEN: case O_HEADS: case O_KVHEADS: case O_FFN: case O_SEQ:
    return count_flag(cmd, names[c - O_HIDDEN], arg, 1L << 22,
                      &shape[c - O_HIDDEN]);
  case O_MODE:
    sw->modes_given = 1;
    return mode_flag(cmd, arg, &sw->modes);
  case O_LAYERS:
    if (count_flag(cmd, "--layers", arg, 4096, &v))
      return CAL_EXIT_USAGE;
    sw->layers = v;
    sw->layers_given = 1;
    return 0;
  case O_BATCHES:
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
    return 0;
  case O_NOEXT: sw->extend = 0; return 0;
  case O_MAXB:
    if (count_flag(cmd, "--max-batch", arg, CAL_SWEEP_MAX_BATCH, &v))
      return CAL_EXIT_USAGE;
    sw->max_batch = v;
    return 0;
  case O_OPT: {
    cal_curve_policy_t pol;
    if (cal_curve_policy_parse(arg, &pol) < 0)
      return cal_usage(cmd, "--optimize is throughput or knee, not '%s'", arg);
    sw->policy = pol;
    return 0;
  }
  case O_TOL:
    if (cal_parse_fraction(arg, &sw->tolerance) < 0)
      return cal_usage(cmd, "--tolerance needs a fraction like 3%% or 0.03, "
                            "not '%s'", arg);
    return 0;
  case O_TEB:
    if (count_flag(cmd, "--target-effective-batch", arg, CAL_BATCH_MAX, &v))
      return CAL_EXIT_USAGE;
    sw->target_effective_batch = v;
    return 0;
  case O_DTYPE:
    if (strcmp(arg, "fp32") == 0 || strcmp(arg, "bf16") == 0)
      sw->dtype_asked = strcmp(arg, "fp32") == 0 ? "fp32" : "bf16";
    else if (strcmp(arg, "auto") == 0)
      sw->dtype_asked = NULL;
    else
      return cal_usage(cmd, "--dtype is fp32, bf16 or auto, not '%s'", arg);
    return 0;
  case O_MEMB: {
    /* above physical memory the budget no longer guards against the OOM
     * killer; below a mebibyte it is a typo (a size without its unit) */
    double phys = (double)sysconf(_SC_PHYS_PAGES) *
                  (double)sysconf(_SC_PAGESIZE);
    if (cal_parse_size(arg, &sw->memory_budget) < 0)
      return cal_usage(cmd, "--memory-budget needs a size like 512M or 8G, "
                            "not '%s'", arg);
    if (sw->memory_budget < 1048576)
      return cal_usage(cmd, "--memory-budget %s is less than 1M (give a "
                            "unit: 512M, 8G)", arg);
    if (phys > 0 && sw->memory_budget > phys)
      return cal_usage(cmd, "--memory-budget %s is more than this machine's "
                            "%.1f GiB of memory", arg, phys / 1073741824.0);
    return 0;
  }
  default:
    return 1;
  }
}

/* The layer shape: preset, then flag-by-flag overrides. */
static int layer_shape(cal_opts_t *o, const char *preset, const long shape[5]) {
  cal_sweep_opts_t *sw = &o->sweep;
  const cal_layer_preset_t *ps =
      cal_layer_preset_find(preset ? preset : "qwen2-0.5b");
  char err[256];
  snprintf(sw->preset, sizeof sw->preset, "%s", ps->name);
  sw->hidden = shape[0] ? shape[0] : ps->hidden;
  sw->heads = shape[1] ? shape[1] : ps->heads;
  sw->kv_heads = shape[2] ? shape[2] : ps->kv_heads;
  sw->ffn = shape[3] ? shape[3] : ps->ffn;
  sw->seq = shape[4] ? shape[4] : (o->quick && !preset ? ps->seq / 2 : ps->seq);
  o->seq_given = shape[4] != 0;
  if (shape[0] || shape[1] || shape[2] || shape[3])
    snprintf(sw->preset, sizeof sw->preset, "custom");
  /* a custom shape keeps its base preset's depth and vocabulary */
  if (!sw->layers_given)
    sw->layers = ps->layers;
  sw->vocab = ps->vocab;
  cal_layer_shape_t ls = {sw->hidden, sw->heads, sw->kv_heads, sw->ffn, sw->seq,
                          1, 0, 0};
  if (cal_layer_check_shape(&ls, err, sizeof err) < 0)
    return cal_usage(o->cmd, "invalid layer shape: %s", err);
  return 0;
}

int cal_opts_parse(cal_opts_t *o, int argc, char **argv, const char *cmd,
                   cal_opts_action_t *action) {
  long shape[5] = {0, 0, 0, 0, 0}; /* hidden heads kv-heads ffn seq */
  const char *preset = NULL;
  int c, rc;
  defaults(o, cmd);
  *action = CAL_OPTS_RUN;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, ":o:qt:vhV", long_opts, NULL)) != -1) {
    if (c == 'h' || c == 'V') {
      *action = c == 'h' ? CAL_OPTS_HELP : CAL_OPTS_VERSION;
      return 0;
    }
    if (c == O_PRESET && strcmp(optarg, "list") == 0) {
      *action = CAL_OPTS_LIST_PRESETS;
      return 0;
    }
    if ((rc = run_flag(o, c, optarg)) == 1)
      rc = sweep_flag(o, c, optarg, shape, &preset);
    if (rc == 1)
      return cal_bad_option(cmd, c, argv);
    if (rc)
      return rc;
  }
  if (optind < argc)
    return cal_usage(cmd, "unexpected argument '%s'", argv[optind]);
  /* the variable, unless the flag chose */
  const char *env = getenv("CALIBRATE_GEMM_ENGINE");
  if (!o->gemm_engine_given && env && *env &&
      (rc = gemm_engine_opt(o, env, NULL)) != 0)
    return rc;
  return layer_shape(o, preset, shape);
}

static void default_path(const cal_hwinfo_t *hw, char *out, size_t len) {
  const char *dir = cal_results_default_dir();
  char host[64];
  size_t j = 0;
  for (size_t i = 0; hw->hostname[i] && j < sizeof host - 1; i++) {
    char c = hw->hostname[i];
    host[j++] = (c == '/' || c == ' ' || c == '\\') ? '_' : c;
  }
  host[j] = '\0';
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(out, len, "%s/%s-%s.json", dir, host[0] ? host : "host", stamp);
}

/* --ci: a run short enough to repeat (under 20 s on 2 cores), since the
 * run, not the sample, is what `calibrate compare` replicates: 2
 * interleaved rounds of 4 samples per point (8 in all: the rank test can
 * still reach p = 1.6e-4 for a single-run comparison), a few fixed points
 * chosen by the sections (GEMM fp32 and fp64 at 1024, one prefill and one
 * decode attention shape, L2 and memory read, the fp32 peak) so two runs
 * measure the same points, and batches 1 and 4 of the model's forward
 * step (prefill and decode; the training step only with --mode) at seq 32
 * in one round. */
static int ci_preset(cal_opts_t *o) {
  char err[256];
  o->rounds = 2;
  o->hcfg.samples = 4;
  o->hcfg.min_sample_s = 0.02;
  o->hcfg.warmup_s = 0.05;
  o->hcfg.cv_threshold = 0.10;
  if (!o->sweep.batches &&
      cal_batches_parse("1,4", &o->sweep.batches, &o->sweep.nbatches,
                        err, sizeof err) < 0)
    return CAL_EXIT_INTERNAL;
  o->sweep.extend = 0;
  if (!o->sweep.modes_given)
    o->sweep.modes = 3;
  if (!o->seq_given)
    o->sweep.seq = 32;
  return 0;
}

/* The layer's dtype: the one asked for, or bf16 where the CPU has a
 * native bf16 matrix path (the dtype models run in), else fp32. */
static int sweep_dtype(cal_opts_t *o) {
  cal_sweep_opts_t *sw = &o->sweep;
  const cal_kernel_t *k = cal_kernel_find("layer_prefill_bf16");
  const char *why = NULL;
  int native = k && k->supported(NULL, &why) == 0;
  if (sw->dtype_asked) {
    if (strcmp(sw->dtype_asked, "bf16") == 0 && !native)
      return cal_usage(o->cmd, "--dtype bf16: %s", why);
    sw->dtype = sw->dtype_asked;
    snprintf(sw->dtype_why, sizeof sw->dtype_why, "--dtype %s", sw->dtype);
  } else if (native) {
    sw->dtype = "bf16";
    snprintf(sw->dtype_why, sizeof sw->dtype_why,
             "auto: the CPU has a native bf16 matrix path");
  } else {
    sw->dtype = "fp32";
    snprintf(sw->dtype_why, sizeof sw->dtype_why, "auto: no native bf16: %s",
             why ? why : "unknown");
  }
  return 0;
}

int cal_opts_resolve(cal_opts_t *o, const cal_hwinfo_t *hw) {
  const char *cmd = o->cmd;
  char why[512];
  if (o->threads_asked > hw->usable_cores)
    return cal_usage(cmd, "--threads %ld is more than the %d usable core%s",
                     o->threads_asked, hw->usable_cores,
                     hw->usable_cores == 1 ? "" : "s");
  o->threads = o->threads_asked > 0 ? (int)o->threads_asked : hw->usable_cores;
  if (o->out_asked) {
    if (cal_check_writable(o->out_asked, why, sizeof why) < 0)
      return cal_usage(cmd, "cannot write the profile: %s", why);
    snprintf(o->out_path, sizeof o->out_path, "%s", o->out_asked);
  } else {
    default_path(hw, o->out_path, sizeof o->out_path);
    if (cal_check_writable(o->out_path, why, sizeof why) < 0)
      return cal_usage(cmd, "cannot write the profile: %s (use -o FILE)", why);
  }
  cal_harness_defaults(&o->hcfg, o->quick);
  int rc;
  if (o->ci && (rc = ci_preset(o)) != 0)
    return rc;
  if (o->rounds_asked > 0)
    o->rounds = (int)o->rounds_asked;
  if (o->plots_dir && strcmp(o->out_path, "-") == 0)
    return cal_usage(cmd, "--plots needs the profile in a file, not -o -");
  if (o->samples_asked > 0)
    o->hcfg.samples = (int)o->samples_asked;
  if (o->min_time_asked > 0)
    o->hcfg.min_sample_s = o->min_time_asked;
  if (o->cv_asked > 0)
    o->hcfg.cv_threshold = o->cv_asked;
  /* leave a tenth of available memory to the rest of the system */
  o->hcfg.mem_avail_bytes = 0.9 * (double)hw->mem_available_bytes;
  /* a live line on a terminal; elsewhere (CI logs, pipes) a line per
   * finished section, so a long job is not silent */
  o->progress = o->no_progress         ? CAL_PROGRESS_OFF
                : cal_stderr_is_tty() ? CAL_PROGRESS_LINE
                                      : CAL_PROGRESS_SECTIONS;
  return sweep_dtype(o);
}

void cal_opts_free(cal_opts_t *o) {
  free(o->sweep.batches);
  o->sweep.batches = NULL;
}

void cal_presets_print(FILE *out) {
  fprintf(out, "%-14s %7s %6s %9s %7s %5s %6s %7s  %s\n", "preset", "hidden",
          "heads", "kv-heads", "ffn", "seq", "layers", "vocab", "");
  const cal_layer_preset_t *p;
  for (size_t i = 0; (p = cal_layer_preset_at(i)); i++)
    fprintf(out, "%-14s %7lld %6lld %9lld %7lld %5lld %6lld %7lld  %s\n",
            p->name, (long long)p->hidden, (long long)p->heads,
            (long long)p->kv_heads, (long long)p->ffn, (long long)p->seq,
            (long long)p->layers, (long long)p->vocab, p->description);
}
