/* Pure arithmetic behind `calibrate plan`: splitting work in proportion to
 * measured throughput, choosing micro-batch and gradient accumulation, and
 * estimating whether a model fits in memory.  No I/O, no allocation: the
 * caller owns every array passed in. */
#ifndef CAL_PLAN_MATH_H
#define CAL_PLAN_MATH_H

#include <stddef.h>
#include <stdint.h>

#include "mem_model.h"

/* Most examples a split takes: 2^53, so every count and its share are
 * exact in a double and no sum overflows. */
#define CAL_PLAN_MAX_EXAMPLES ((int64_t)1 << 53)

/* Flags on a set of machines.  Each throughput may come with a confidence
 * interval [lo, hi] (the CI of the median at the optimal batch); without
 * one the interval is the point itself, and the flags are those of the
 * point estimates. */
#define CAL_PLAN_HETERO_RATIO 1.10   /* max/min throughput above this */
#define CAL_PLAN_STRAGGLER_FRAC 0.80 /* throughput below this × mean */

typedef struct cal_split_entry {
  int usable;       /* throughput finite and > 0 */
  double share;     /* throughput / sum of usable; 0 when unusable */
  uint64_t count;   /* examples assigned (0 when examples == 0) */
  double finish_s;  /* count / throughput */
  int straggler;    /* its whole interval lies below
                       CAL_PLAN_STRAGGLER_FRAC × mean (hi < 0.8 × mean) */
  int slow_point;   /* the point estimate alone is below 0.8 × mean */
} cal_split_entry_t;

typedef struct cal_split {
  size_t n_usable;
  double sum_throughput, mean_throughput, min_throughput, max_throughput;
  double ratio;           /* max / min throughput of usable machines */
  /* Some pair i, j has t_i > CAL_PLAN_HETERO_RATIO × t_j and intervals
   * that do not overlap (lo_i > hi_j): the data tell them apart. */
  int heterogeneous;
  int ratio_exceeded;     /* ratio > CAL_PLAN_HETERO_RATIO (points only) */
  size_t n_stragglers;
  /* With examples > 0: the slowest finish of the proportional split and of
   * an even split (counts differing by at most one, the extra examples
   * going to the fastest machines).  With examples == 0 the same ratio
   * from continuous shares: makespans are per example. */
  double makespan_s, even_makespan_s;
  double speedup;         /* even_makespan_s / makespan_s, >= 1 */
} cal_split_t;

/* Split `examples` over n machines in proportion to throughput[i]
 * (examples/s; zero, negative or NaN = unusable, left out).  Counts are
 * integers summing exactly to `examples` by largest remainder; ties go to
 * the faster machine, then the lower index.  entries[] has n slots.
 * CAL_EINVAL when n == 0, examples > CAL_PLAN_MAX_EXAMPLES or no machine
 * is usable (entries still filled); CAL_EPARSE when the throughputs' sum,
 * their ratio or a machine's time is not a finite number. */
int cal_plan_split(const double *throughput, size_t n, uint64_t examples,
                   cal_split_entry_t *entries, cal_split_t *out);

/* The same with each throughput's confidence interval: ci_lo[i] <=
 * throughput[i] <= ci_hi[i] (either array NULL, or an entry NaN or not
 * around the point, means no interval for that machine: the point is
 * used).  Only the flags differ from cal_plan_split. */
int cal_plan_split_ci(const double *throughput, const double *ci_lo,
                      const double *ci_hi, size_t n, uint64_t examples,
                      cal_split_entry_t *entries, cal_split_t *out);

/* How much work, in the unit people plan in. */
typedef enum {
  CAL_WORK_NONE = 0,  /* not given */
  CAL_WORK_EXAMPLES,  /* examples */
  CAL_WORK_EPOCHS,    /* epochs × dataset_examples, rounded up */
  CAL_WORK_STEPS,     /* steps × global_batch */
} cal_work_unit_t;

typedef struct cal_work {
  cal_work_unit_t unit;
  uint64_t examples;         /* CAL_WORK_EXAMPLES */
  double epochs;             /* CAL_WORK_EPOCHS, > 0 */
  uint64_t dataset_examples; /* CAL_WORK_EPOCHS, >= 1 */
  uint64_t steps;            /* CAL_WORK_STEPS, >= 1 */
  uint64_t global_batch;     /* CAL_WORK_STEPS: examples per optimizer step
                                over all machines, >= 1 */
} cal_work_t;

/* The examples the work stands for (0 for CAL_WORK_NONE).  CAL_EINVAL
 * when a field of its unit is out of range or the count would pass
 * CAL_PLAN_MAX_EXAMPLES. */
int cal_work_examples(const cal_work_t *w, uint64_t *examples);

/* Dollars for holding a machine priced per hour for seconds. */
double cal_plan_cost(double usd_per_hour, double seconds);

/* Micro-batch and gradient accumulation for a target effective batch. */
typedef enum {
  CAL_BATCH_EXACT = 0,    /* optimal batch b divides T: b × T/b */
  CAL_BATCH_DIVISOR = 1,  /* b does not divide T: largest divisor of T <= b */
  CAL_BATCH_CAPPED = 2,   /* b >= T: one step of T */
} cal_batch_kind_t;

typedef struct cal_batch_plan {
  int64_t micro_batch;
  int64_t accum_steps;
  cal_batch_kind_t kind;
} cal_batch_plan_t;

/* CAL_EINVAL when optimal_batch < 1 or target < 1. */
int cal_plan_batch(int64_t optimal_batch, int64_t target,
                   cal_batch_plan_t *out);

typedef enum { CAL_DT_FP32, CAL_DT_BF16, CAL_DT_FP16, CAL_DT_INT8 } cal_dtype_t;
typedef enum { CAL_TRAIN_FULL, CAL_TRAIN_LORA, CAL_TRAIN_INFERENCE } cal_training_t;

/* Parse "fp32"/"bf16"/"fp16"/"int8" and "full"/"lora"/"inference";
 * CAL_EINVAL on anything else.  Names come back from the *_name calls
 * (static strings). */
int cal_dtype_parse(const char *s, cal_dtype_t *out);
int cal_training_parse(const char *s, cal_training_t *out);
const char *cal_dtype_name(cal_dtype_t d);
const char *cal_training_name(cal_training_t t);
double cal_dtype_bytes(cal_dtype_t d); /* 4, 2, 2, 1 */

/* Stated assumptions of the memory estimate. */
typedef struct cal_mem_assume {
  double lora_fraction;       /* trainable share of params under LoRA */
  double activation_fraction; /* activation bytes per example, as a
                                 fraction of the weight bytes */
  double headroom;            /* fraction of memory kept free */
  /* From the activation model (cal_act_model) when > 0, replacing the
   * fraction above; 0: not used. */
  double activation_bytes_per_example;
  /* Trainable parameters under LoRA from its rank (cal_lora_params) when
   * > 0, replacing lora_fraction; 0: not used. */
  double lora_params;
} cal_mem_assume_t;

#define CAL_PLAN_LORA_FRACTION 0.01
#define CAL_PLAN_ACT_FRACTION_TRAIN 0.02
#define CAL_PLAN_ACT_FRACTION_INFER 0.005
#define CAL_PLAN_HEADROOM 0.10

/* Defaults above; activation fraction depends on the training mode. */
void cal_mem_assume_default(cal_training_t t, cal_mem_assume_t *out);

/* The estimate, in bytes, by cal_mem_param_bytes:
 *   weights     = params × bytes(dtype)
 *   trainable   = params (full), params × lora_fraction or lora_params
 *                 (lora; the adapters, beside the frozen params), 0
 *                 (inference)
 *   gradients   = trainable × 4            (fp32)
 *   optimizer   = trainable × 2 × 4        (Adam m and v in fp32)
 *   master      = trainable × 4 when they are narrower than fp32, else 0
 *                 (LoRA's adapters are fp32: no master)
 *   activations = batch × activation_fraction × weights, or
 *                 batch × activation_bytes_per_example when that is set
 *   total       = sum of the above */
typedef struct cal_mem_need {
  double trainable_params;
  double weights_bytes, gradients_bytes, optimizer_bytes, master_bytes;
  double activations_bytes, total_bytes;
} cal_mem_need_t;

/* CAL_EINVAL when params <= 0 or batch < 1 or an assumption is out of
 * range. */
int cal_plan_memory(double params, cal_dtype_t dtype, cal_training_t training,
                    int64_t batch, const cal_mem_assume_t *a,
                    cal_mem_need_t *out);

/* Bytes usable after headroom: available × (1 - headroom). */
double cal_plan_budget(double available_bytes, double headroom);

/* Greedy sharding: pick machines by decreasing budget until their budgets
 * sum to at least need_bytes.  order[] (n slots) receives the chosen
 * indices, largest first (ties: lower index); *n_chosen how many.
 * Returns 1 when the chosen set holds need_bytes, 0 when even all of them
 * do not (then all are listed). */
int cal_plan_shard(const double *budget_bytes, size_t n, double need_bytes,
                   size_t *order, size_t *n_chosen);

#endif
