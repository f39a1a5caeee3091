/* The settings a measuring run ran with (cal_opts_t): run/options.c
 * parses and resolves them, then they are read-only; profile/ and
 * report/ read them from the run's result. */
#ifndef CAL_SETTINGS_H
#define CAL_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* Options of the batch sweep (--sweep-batch). */
typedef struct cal_sweep_opts {
  char preset[32];          /* layer preset name, "custom" when overridden */
  int64_t hidden, heads, kv_heads, ffn, seq;
  int modes;                /* bit 0 prefill, bit 1 decode, bit 2 train,
                               bit 3 inference (--workload only) */
  /* the whole model (train): decoder layers (--layers, else the preset's)
   * and vocabulary (the preset's) */
  int64_t layers, vocab;
  int layers_given;
  int modes_given;          /* --mode was given */
  /* --workload: "sft", "inference", "dpo", "grpo" or NULL (the bare
   * modes); the mode it runs (2 train, 3 inference, 4 dpo, 5 grpo), the
   * tokens inference and grpo generate after the prompt (--gen-len) and
   * grpo's completions a prompt (--group) */
  const char *workload;
  int workload_mode;
  int64_t gen_len, group;
  int gen_len_given, group_given; /* --gen-len, --group given */
  /* --lora-rank: the training step trains LoRA adapters of this rank on
   * a frozen base (0: every weight) */
  int64_t lora_rank;
  int64_t *batches;         /* user list (owned) or NULL for the default */
  size_t nbatches;
  int extend;               /* extend while still rising */
  int64_t max_batch;        /* never extend past this */
  int max_batch_given;      /* --max-batch given: no listed batch above */
  int policy;               /* cal_curve_policy_t */
  double tolerance;         /* knee / shape tolerance, fraction */
  int64_t target_effective_batch; /* 0: none */
  double memory_budget;     /* bytes a point may use; 0: available memory */
  const char *dtype_asked;  /* --dtype: "fp32", "bf16" or NULL (auto) */
  /* resolved: the layer's dtype and why (auto: which way and why) */
  const char *dtype;
  char dtype_why[192];
} cal_sweep_opts_t;

/* Options of the attention section: a forced SIMD variant and, for
 * `calibrate attention` with shape flags, the one shape to run. */
typedef struct cal_attn_opts {
  int variant;              /* CAL_VARIANT_AUTO unless forced */
  int custom, with_ref;
  cal_params_t shape;
  /* as given: batch heads kv-heads seq nq nk head-dim, which of them were
   * given (bit i: given[i]), --causal/--no-causal, --decode */
  long given_shape[7];
  unsigned given;
  int causal, decode;
  /* the fused kernels' dtypes: 0 both, else CAL_ATTN_DT_* bits */
  unsigned dtypes;
} cal_attn_opts_t;

#define CAL_ATTN_DT_FP32 1u
#define CAL_ATTN_DT_BF16 2u

typedef struct cal_opts {
  const char *cmd;          /* subcommand name for messages ("run", ...) */
  char out_path[4096];      /* profile destination, "-" for stdout */
  int quick, verbose;
  int progress;             /* cal_progress_mode_t */
  int threads;              /* the "all threads" count (<= usable) */
  uint64_t seed;
  unsigned sections;        /* CAL_SEC_* to run */
  unsigned sections_asked;  /* --sections (run only), 0: not given */
  double budget_scale;      /* multiplies every section's time budget */
  const char *plots_dir;    /* --plots DIR: draw charts after the run */
  int ci;                   /* --ci: fixed point lists, interleaved rounds */
  int allow_busy;           /* --allow-busy: keep contaminated figures */
  int partial;              /* --partial: SIGINT/SIGTERM write what finished */
  int no_wait;              /* --no-wait: refuse when another run measures */
  const char *gemm_engine;  /* --gemm-engine / CALIBRATE_GEMM_ENGINE: "auto"
                               or the one engine the GEMM section measures;
                               static storage */
  int rounds;               /* rounds per point (samples each: hcfg.samples) */
  cal_harness_cfg_t hcfg;
  cal_sweep_opts_t sweep;
  cal_attn_opts_t attn;
  /* parsed but resolved against the machine by cal_opts_resolve */
  long threads_asked;       /* -t; -1 when not given */
  const char *out_asked;    /* -o; NULL when not given */
  long samples_asked, rounds_asked;
  double min_time_asked, cv_asked;
  int no_progress, seq_given, gemm_engine_given;
  /* the batch sweep's flags as given: --hidden --heads --kv-heads --ffn
   * --seq (0: the preset's), --preset, --sweep-batch, --preset list */
  long shape_asked[5];
  const char *preset_asked;
  int sweep_asked, list_presets;
} cal_opts_t;

#endif
