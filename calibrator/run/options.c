/* Options shared by the measuring commands: parsing, then resolving what
 * depends on the machine. */
#include "options.h"

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

static void defaults(cal_opts_t *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->threads_asked = o->samples_asked = o->rounds_asked = -1;
  o->min_time_asked = o->cv_asked = -1;
  o->sweep.extend = 1;
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

int cal_opts_gemm_engine(cal_opts_t *o, const char *arg, const char *flag) {
  char list[128];
  const char *e = gemm_engine_find(arg, list, sizeof list);
  if (!e)
    return cal_usage(o->cmd, "%s is one of %s, not '%s'",
                     flag ? flag : "CALIBRATE_GEMM_ENGINE", list, arg);
  o->gemm_engine = e;
  return 0;
}

void cal_opts_gemm_engines(FILE *out) {
  char list[128];
  gemm_engine_find("", list, sizeof list);
  for (const char *p = list; *p; p++)
    if (*p != ',')
      fputc(*p, out);
}

/* The layer shape: preset, then flag-by-flag overrides. */
static int layer_shape(cal_opts_t *o) {
  const char *preset = o->preset_asked;
  const long *shape = o->shape_asked;
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
                          1, 0, 0, 0, 0};
  if (cal_layer_check_shape(&ls, err, sizeof err) < 0)
    return cal_usage(o->cmd, "invalid layer shape: %s", err);
  return 0;
}

/* The sweep's flags that only some runs read, checked once every flag is
 * read (in any order): --gen-len (inference and grpo generate), --group
 * (grpo's completions) and a listed batch above a given --max-batch are
 * refused where they would be ignored.  The defaults are never refused. */
static int sweep_flags_check(const cal_opts_t *o) {
  const cal_sweep_opts_t *sw = &o->sweep;
  const char *w = sw->workload;
  int gen = w && (strcmp(w, "inference") == 0 || strcmp(w, "grpo") == 0);
  if (sw->gen_len_given && !gen)
    return cal_usage(o->cmd, "--gen-len is for --workload inference or grpo "
                             "(the tokens they generate)%s%s",
                     w ? ", not " : "; no --workload was given", w ? w : "");
  if (sw->group_given && !(w && strcmp(w, "grpo") == 0))
    return cal_usage(o->cmd, "--group is for --workload grpo (its "
                             "completions a prompt)%s%s",
                     w ? ", not " : "; no --workload was given", w ? w : "");
  if (sw->max_batch_given && sw->nbatches &&
      sw->batches[sw->nbatches - 1] > sw->max_batch)
    return cal_usage(o->cmd, "--batches: batch size %lld is above --max-batch "
                             "%lld", (long long)sw->batches[sw->nbatches - 1],
                     (long long)sw->max_batch);
  return 0;
}

int cal_opts_parse(cal_opts_t *o, int argc, char **argv,
                   const cal_opt_cmd_t *t, cal_opts_action_t *action) {
  int first, rc;
  defaults(o, t->cmd);
  *action = CAL_OPTS_RUN;
  if (cal_opt_defaults(t, o) < 0)
    return CAL_EXIT_INTERNAL;
  if ((rc = cal_opt_parse(t, o, argc, argv, &first)) >= 0) {
    if (rc == CAL_EXIT_OK)
      *action = o->list_presets ? CAL_OPTS_LIST_PRESETS : CAL_OPTS_DONE;
    return rc;
  }
  if (first < argc)
    return cal_usage(t->cmd, "unexpected argument '%s'", argv[first]);
  if (o->sweep_asked)
    o->sections |= CAL_SEC_BATCH;
  if ((rc = sweep_flags_check(o)) != 0)
    return rc;
  /* the variable, unless the flag chose */
  const char *env = getenv("CALIBRATE_GEMM_ENGINE");
  if (!o->gemm_engine_given && env && *env &&
      (rc = cal_opts_gemm_engine(o, env, NULL)) != 0)
    return rc;
  return layer_shape(o);
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

/* --ci: a run short enough to repeat (about 25 s on 2 cores), since the
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

/* --lora-rank trains adapters: refused where the run has no training
 * step (inference, prefill or decode only, or no batch sweep), and above
 * the smallest dimension of the matrices it adapts (lora.h: q|k|v, o and
 * gate|up read hidden-wide rows, down ffn-wide ones). */
static int lora_check(const cal_opts_t *o) {
  const cal_sweep_opts_t *sw = &o->sweep;
  if (sw->lora_rank < 1)
    return 0;
  int train = sw->workload ? sw->workload_mode != 3 : (sw->modes & 4) != 0;
  if (!((o->sections | o->sections_asked) & CAL_SEC_BATCH) && !o->ci)
    return cal_usage(o->cmd, "--lora-rank trains adapters in the batch "
                             "sweep's training step: add --sweep-batch or "
                             "--workload sft|dpo|grpo");
  if (!train)
    return cal_usage(o->cmd, "--lora-rank trains adapters: %s runs no "
                             "training step (use --workload sft|dpo|grpo or "
                             "--mode train)",
                     sw->workload ? "--workload inference" : "this --mode");
  int ffn = sw->ffn < sw->hidden;
  int64_t dim = ffn ? sw->ffn : sw->hidden;
  if (sw->lora_rank > dim)
    return cal_usage(o->cmd, "--lora-rank %lld is above the layer's %s size "
                             "%lld: the rank is at most the smallest "
                             "dimension of the matrices it adapts",
                     (long long)sw->lora_rank, ffn ? "ffn" : "hidden",
                     (long long)dim);
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
  if ((rc = lora_check(o)) != 0)
    return rc;
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
