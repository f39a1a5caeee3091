/* The typed results of the measurement sections: what each section's
 * measure function leaves in cal_results_t.sec[CAL_SEC_ID_<ID>], what the
 * profile writers (profile/) turn into JSON and the table (report/)
 * prints.  Another section reads them through cal_results_get.  Every
 * cal_point_t here is owned by its result and freed by the section's drop
 * function. */
#ifndef CAL_RESULTS_H
#define CAL_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "clock.h"
#include "curve.h"
#include "gemm_onednn.h"
#include "harness.h"
#include "memuse.h"
#include "roofline.h"

/* ---- a plain list of kernel points: a section that needs no keys of its
 * own keeps this result and names cal_points_drop, cal_points_write and
 * cal_points_print in its table row */

typedef struct cal_points_result {
  const char *title;        /* the table's heading line; static */
  char (*ids)[128];         /* id of each point */
  cal_point_t *points;
  size_t n;
} cal_points_result_t;

/* A new result of n zeroed points; NULL when out of memory. */
cal_points_result_t *cal_points_new(const char *title, size_t n);
/* Frees it (a section's drop function); accepts NULL. */
void cal_points_drop(void *result);
/* Frees n points and the array holding them (NULL accepted). */
void cal_points_free(cal_point_t *points, size_t n);

/* Defines `void fn(void *result)`, the drop function of a result of type
 * `type` whose `points` (npoints of them) each keep their measurement in
 * `.pt`: frees those, the array and the result; accepts NULL. */
#define CAL_PT_RESULT_DROP(fn, type)                                         \
  void fn(void *result) {                                                    \
    type *r_ = result;                                                       \
    if (!r_)                                                                 \
      return;                                                                \
    for (size_t i_ = 0; i_ < r_->npoints; i_++)                              \
      cal_point_free(&r_->points[i_].pt);                                    \
    free(r_->points);                                                        \
    free(r_);                                                                \
  }

/* ---- gemm: size sweeps per dtype and engine at one pinned thread and all
 * threads; each dtype's headline is its best verified engine's figure */

/* a slot per dtype and, in each, per engine (core/kind.h): the plan
 * stops the run when the kernel table holds two GEMM kernels of one dtype
 * and engine */
#define CAL_GEMM_MAX_DTYPES CAL_DTYPE_COUNT
#define CAL_GEMM_MAX_ENGINES CAL_ENGINE_COUNT
#define CAL_GEMM_MAX_SWEEPS (2 * CAL_GEMM_MAX_DTYPES * CAL_GEMM_MAX_ENGINES)

typedef struct cal_gemm_point {
  char id[112];             /* "gemm/<dtype>/NxNxN/t<threads>" for
                               OpenBLAS, "gemm/<engine>/<dtype>/..." for
                               the other engines; a confirmation
                               "gemm/<dtype>/<engine>/confirm/t<threads>"
                               (an earlier one of its sweep: its size id
                               + "/confirm") */
  int64_t n;                /* m = n = k */
  int threads;
  char confirms[112];       /* id of the point a confirmation repeats, "" */
  double pooled_gflops;     /* confirmation: median of both measurements'
                               samples (GOPS for int8); 0 otherwise */
  cal_point_t pt;
} cal_gemm_point_t;

typedef struct cal_gemm_sweep {
  const cal_kernel_t *kernel;
  int threads;
  const char *stop;         /* static string */
  int64_t best_n;
  double best_gflops;       /* after confirmation (GOPS for int8) */
  double best_gflops_in_sweep;
  char best_id[112];        /* id of the point behind best_gflops */
  char impl[96];            /* the engine's implementation at best_n */
  double budget_s, time_s;  /* its share of the section's time, time spent */
  int failed;               /* a point failed verification */
} cal_gemm_sweep_t;

/* A best figure at one thread count and what made it. */
typedef struct cal_gemm_best {
  const cal_kernel_t *kernel; /* NULL: not measured */
  double gflops;            /* GOPS for int8 */
  int64_t n;
  char impl[96];            /* "" when the engine names none */
} cal_gemm_best_t;

/* One engine's kernel for a dtype. */
typedef struct cal_gemm_engine {
  const cal_kernel_t *kernel;
  int selected;             /* 0: --gemm-engine chose another engine */
  int supported;
  const char *why;          /* static; when not supported */
  int failed;               /* a point failed verification: never headline */
  cal_gemm_best_t best[2];  /* [0] one pinned thread, [1] all threads */
} cal_gemm_engine_t;

typedef struct cal_gemm_dtype {
  cal_kdtype_t kdtype;
  const char *dtype;        /* its name: "fp32", "fp64", "bf16", "int8" */
  const char *metric;       /* "gflops"; "gops" for int8 */
  cal_gemm_engine_t engines[CAL_GEMM_MAX_ENGINES];
  size_t nengines;
  int supported;            /* some selected engine can run it */
  char why[320];            /* when not: each engine's reason */
  cal_gemm_best_t best[2];  /* the headline: the best verified engine's
                               figure at [0] one pinned thread, [1] all */
} cal_gemm_dtype_t;

typedef struct cal_gemm_result {
  const char *engine_choice; /* "auto" or the forced engine; static */
  cal_onednn_info_t onednn; /* the oneDNN library the onednn kernels use */
  cal_gemm_dtype_t dtypes[CAL_GEMM_MAX_DTYPES];
  size_t ndtypes;
  cal_gemm_sweep_t sweeps[CAL_GEMM_MAX_SWEEPS];
  size_t nsweeps;
  cal_gemm_point_t *points; /* every size of every sweep, in order */
  size_t npoints, cap;
  /* the fp32 headline (the profile's gflops_per_core and gflops) and
   * where it was met: [0] one pinned thread, [1] all threads */
  double sgemm_best[2];
  int64_t sgemm_best_n[2];
} cal_gemm_result_t;

/* The headline of `dtype` at one pinned thread (all_threads 0) or all
 * threads; NULL when the dtype was not measured there.  Borrowed. */
const cal_gemm_best_t *cal_gemm_best(const cal_gemm_result_t *g,
                                     cal_kdtype_t dtype, int all_threads);

/* ---- scaling: GFLOPS versus threads at one size */

typedef struct cal_scaling_point {
  char id[96];              /* "scaling/<dtype>/<engine>/t<threads>" (the
                               size is the result's n) */
  double speedup, efficiency; /* 0 when the 1-thread point is missing */
  cal_point_t pt;
} cal_scaling_point_t;

typedef struct cal_scaling_result {
  int64_t n;
  cal_scaling_point_t *points;
  size_t npoints;
} cal_scaling_result_t;

/* ---- attention: fused (fp32 and bf16) and reference kernels per shape
 * and thread count */

typedef struct cal_attn_point {
  char id[160];
  cal_attn_shape_t shape;   /* kernels/attention/attention.h */
  int reference;            /* the reference kernel, not the fused one */
  int bf16;                 /* the bf16 fused kernel (attn_fused_bf16) */
  double ratio_to_gemm;     /* 0: unknown; against the GEMM of the point's
                               dtype at its thread count (gemm_ref) */
  double speedup_vs_reference; /* fused points; 0: unknown */
  int64_t fused;            /* reference points: index in points of the
                               fused point of the same shape and threads;
                               -1: none (and on fused points) */
  cal_point_t pt;
} cal_attn_point_t;

typedef struct cal_attn_gemm_ref {
  int threads;
  int bf16;                 /* the bf16 GEMM (else fp32) */
  double gflops;            /* 0: none measured */
  const char *source;       /* static string */
} cal_attn_gemm_ref_t;

typedef struct cal_attention_result {
  cal_attn_gemm_ref_t gemm_ref[4]; /* per dtype and thread count */
  size_t ngemm_ref;
  cal_attn_point_t *points;
  size_t npoints, cap;
} cal_attention_result_t;

/* ---- peak: register-resident multiply-add loops, clock, theory */

typedef struct cal_compute_peak_result {
  cal_point_t *points;      /* id: "peak/<kernel>/<variant>/t<threads>";
                               vector loops and matrix-engine tile loops */
  size_t npoints;
  cal_clock_t clock;
  cal_theory_t model;       /* model.uarch NULL: theory unknown */
  int have_clock, have_model;
  /* the CPU as identified for the microarchitecture table */
  char cpu_vendor[32], cpu_codename[64];
  int cpu_family, cpu_model, cpu_stepping;
  const char *uarch_why;    /* why no row (static), NULL with a row */
  /* the cross-check of the row against the one-thread loops: one
   * sentence per dtype whose loop disagrees, "" when it agrees */
  char cross_check[CAL_DT_COUNT][320];
} cal_compute_peak_result_t;

/* ---- bandwidth: stream kernels per cache level and a staircase */

typedef struct cal_bandwidth_result {
  cal_point_t *points;
  const char **levels;      /* level of each point ("L1".."memory", static
                               storage), NULL for a staircase point */
  size_t npoints;
} cal_bandwidth_result_t;

/* The memory read bandwidth on `threads` threads: the median GB/s of the
 * stream_read point at level "memory".  NAN, with a one-line reason in
 * why[len], when bw is NULL (the section did not run) or has no such
 * measured point. */
double cal_bandwidth_memory_read(const cal_bandwidth_result_t *bw, int threads,
                                 char *why, size_t len);
/* The same for the stream kernel `kernel` (stream_read, stream_triad,
 * stream_copy) at level memory. */
double cal_bandwidth_memory(const cal_bandwidth_result_t *bw,
                            const char *kernel, int threads, char *why,
                            size_t len);
/* The point of stream kernel `kernel` at level memory on `threads`
 * threads, measured or not; NULL when bw is NULL or has none. */
const cal_point_t *cal_bandwidth_memory_point(const cal_bandwidth_result_t *bw,
                                              const char *kernel, int threads);

/* ---- roofline: derived from peak, bandwidth and the measured kernels */

/* The efficiencies of a roofline result, in the profile's order. */
enum {
  CAL_EFF_GEMM_FP32_OF_PEAK = 0,  /* best fp32 GEMM / measured FMA peak */
  CAL_EFF_PEAK_FP32_OF_THEORY,    /* measured fp32 peak / theoretical */
  CAL_EFF_PEAK_FP64_OF_THEORY,    /* measured fp64 peak / theoretical */
  CAL_EFF_ATTENTION_OF_GEMM,      /* best fused attention / fp32 GEMM */
  CAL_EFF_GEMM_BF16_OF_MATRIX_PEAK, /* best bf16 GEMM / the matrix engine's
                                       measured bf16 peak */
  CAL_NEFF
};

typedef struct cal_roofline_result {
  cal_roofline_t roof;
  cal_point_t *kernels;     /* shells of every all-thread kernel point:
                               kernel, threads, flops, bytes, median */
  double *kernel_gflops;    /* storage behind kernels[i].gflops */
  size_t nkernels;
  int have_model;
  cal_theory_t model;
  /* efficiencies the profile states (CAL_EFF_*); < 0 when not known */
  double efficiency[CAL_NEFF];
} cal_roofline_result_t;

/* ---- batch_sweep: throughput versus batch size of the layer */

typedef struct cal_batch_point {
  char id[160];
  int64_t batch;
  double memory_bytes;
  cal_point_status_t status;
  char reason[160];         /* when not ok */
  double *examples_per_s;   /* samples, owned; n of them */
  size_t n;
  cal_summary_t examples, tokens; /* summaries of examples/s and tokens/s */
  int measured;             /* 1: pt holds the harness point (status ok
                               points only; others keep status, reason) */
  cal_point_t pt;
  const char *matrix_path;  /* "gemv" or "blas": what ran the point */
  /* decode batches where both paths were measured: the other one's
   * figures (alt_path NULL when only one path ran) */
  const char *alt_path;
  double alt_examples_per_s, alt_latency_ms;
  /* decode points: bytes a step must read (cal_model_read_bytes), those
   * bytes over the median step time, and that over the run's memory read
   * bandwidth (NAN when it is not known); 0, 0, NAN otherwise; and
   * over the same read measured again before and after the mode's points
   * (cal_batch_mode_t.read_beside_gbps; NAN when not known) */
  double read_bytes, read_gbps, bw_efficiency, bw_beside;
  /* train points (0 otherwise): the measured median step of one layer and
   * of the LM head (ms), the model's step built of them (layers × layer +
   * head) and its FLOPs and rate; the activation bytes the measured layer
   * step keeps for backward (its saved buffers), the model's activations
   * without and with checkpointing, its whole training memory (state and
   * activations) and whether that fits the memory budget */
  double layer_ms, head_ms, step_ms, step_flops, step_gflops;
  /* train points: the LM head's own rate (its FLOPs over head_ms), and
   * the step's and the head's rates over the run's GEMM (the result's
   * gemm_gflops; NAN when that is not known) */
  double head_gflops, step_gemm_fraction, head_gemm_fraction;
  /* dpo points: the frozen reference model's measured forward (ms);
   * grpo points: the completions' measured generation (ms) */
  double ref_ms, gen_ms;
  double act_layer_bytes, act_bytes, act_ckpt_bytes, model_bytes;
  int model_fits;
  /* train points: the measured step's memory by the one memory model
   * (mem_model.h: its stack, the LM head, their activations), and the
   * resident peak over its timed runs (the largest of its parts'
   * cal_point_t.step_peak_rss; NAN unknown) */
  double step_memory_bytes, step_peak_rss;
  int64_t layers_measured;  /* distinct decoder layers the point held: train,
                               the measured stack; prefill and decode, the
                               sets the model's passes cycled over */
  /* the process's memory while the point ran (memuse.h; known 0 where it
   * was not read: skipped points, --ci's interleaved rounds) */
  cal_memuse_t mem;
} cal_batch_point_t;

/* A batch sweep's stop reasons that cal_batch_open_ended reads: the walls
 * past which no larger batch could run here, and the time budget. */
#define CAL_STOP_MEMORY "memory limit"
#define CAL_STOP_SWAPPED "the process swapped"
#define CAL_STOP_VERIFY "verification failed"
#define CAL_STOP_TIME "time budget"

typedef struct cal_batch_mode {
  const char *name;         /* "prefill", "decode", "train", "inference",
                               "dpo", "grpo" */
  const char *status;       /* "measured", "skipped", "failed" */
  char reason[256];
  cal_batch_point_t *points;
  size_t npoints;
  const char *stop;         /* why the sweep ended; static (CAL_STOP_* or
                               another reason) */
  cal_curve_result_t *curve; /* the analysis; owned, NULL when not run */
  int have_rec;
  cal_curve_rec_t rec;      /* batch x accumulation recommendation */
  double latency_ms_batch_1; /* NAN when batch 1 was not measured */
  double time_s;
  /* decode: the bandwidth section's memory read point measured again
   * just before the mode's first point and just after its last (median
   * GB/s; NAN when not measured), and the higher of the two, of which the
   * points' share is taken: the memory's speed of the same minutes, a
   * repeat that others disturbed reading low; NAN with why when the
   * section has no such point or neither repeat could be measured */
  double read_before_gbps, read_after_gbps;
  double read_beside_gbps;
  char read_beside_why[192];
  /* train: the implementations the LM head's measured points ran (each
   * once, comma-separated; "" when none was measured) */
  char head_impl[160];
  /* the fewest distinct decoder layers a measured point held (0: none
   * measured); fewer than the model's: train scaled its step from them,
   * prefill and decode cycled the depth's passes over them */
  int64_t layers_measured;
} cal_batch_mode_t;

/* the sweep's modes: prefill, decode, train, and the inference workload */
#define CAL_BATCH_NMODES 6

typedef struct cal_batch_result {
  /* [0] prefill, [1] decode, [2] train, [3] inference, [4] dpo, [5] grpo
   * (--workload) */
  cal_batch_mode_t modes[CAL_BATCH_NMODES];
  cal_kdtype_t dtype;       /* the layer's: fp32 or bf16 */
  /* the engine of the layer's BLAS-path products (OpenBLAS or oneDNN)
   * and why it was chosen */
  cal_engine_t engine;
  char engine_why[192];
  int ran[CAL_BATCH_NMODES];
  /* --workload's name ("sft", "inference", "dpo", "grpo") or NULL;
   * inference and grpo: the tokens generated after the prompt; grpo: the
   * completions a prompt */
  const char *workload;
  int64_t gen_len, group;
  double weights_bytes, memory_budget_bytes, time_budget_s;
  /* the mode whose optimal batch is the profile's top level, -1: none */
  int top_mode;
  /* the run's memory read bandwidth at the sweep's thread count (the
   * bandwidth section's stream_read point at level "memory"), which decode
   * points' efficiency divides by: NAN when unknown, with why */
  double mem_read_gbps;
  int mem_read_threads;
  char mem_read_why[256];
  /* train: the same run's GEMM of the sweep's dtype on its threads (the
   * gemm section's headline), which the points' gemm fractions divide by;
   * the AdamW pass (kernel adamw or adamw_bf16) measured once over
   * adamw_elems parameters with the vector loops adamw_variant: bytes a
   * pass moves, its median seconds and rate, the run's stream_triad from
   * memory on the sweep's threads and the ratio of the two.  NAN where
   * unknown, with why. */
  double gemm_gflops;
  char gemm_why[160];
  const char *adamw_kernel;
  int64_t adamw_elems;
  char adamw_variant[32];
  double adamw_bytes, adamw_s, adamw_gbps, triad_gbps, adamw_triad_fraction;
  char adamw_why[256];
  /* train: the model's decoder layers and vocabulary, its parameters and
   * training state (masters, gradients, moments; bf16: and the bf16 copy) */
  int64_t layers, vocab;
  double model_params, model_state_bytes;
  /* one decoder layer's parameters; the LM head's (vocab x hidden) */
  double layer_params, model_params_head;
  /* --lora-rank (0: full fine-tuning): the training modes train LoRA
   * adapters of this rank on a frozen base (the LM head's step stays a
   * full one); the model's adapter parameters */
  int64_t lora_rank;
  double lora_params;
  /* train: the LM head's kernel (bf16 where the layer's bf16 products run
   * on oneDNN, else fp32) and why */
  const cal_kernel_t *head;
  char head_why[192];
  /* why top_mode is the headline (or why no mode is) */
  char top_why[224];
} cal_batch_result_t;

/* Whether measured mode m's optimal batch is a lower bound only: its
 * curve's best point is its largest measured batch (shape single or
 * rising) and the sweep ended for want of time or of batches to try, not
 * at the memory limit, a swap or a failed verification, so a larger batch
 * may be faster still.  0 for a mode without a peak. */
int cal_batch_open_ended(const cal_batch_mode_t *m);

#endif
