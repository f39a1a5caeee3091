/* Pure arithmetic behind `calibrate plan`: splitting work in proportion to
 * measured throughput, choosing micro-batch and gradient accumulation, and
 * estimating whether a model fits in memory.  No I/O, no allocation: the
 * caller owns every array passed in. */
#ifndef CAL_PLAN_MATH_H
#define CAL_PLAN_MATH_H

#include <stddef.h>
#include <stdint.h>

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

/* The estimate, in bytes:
 *   weights     = params × bytes(dtype)
 *   trainable   = params (full), params × lora_fraction or lora_params
 *                 (lora), 0 (inference)
 *   gradients   = trainable × bytes(dtype)
 *   optimizer   = trainable × 2 × 4        (Adam m and v in fp32)
 *   master      = trainable × 4 when dtype is narrower than fp32, else 0
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

/* The analytic activation model (modelled from the shapes, not measured).
 * A decoder layer of the shapes below: RMSNorm, Q/K/V projections,
 * attention with its softmax materialised, output projection, RMSNorm,
 * SwiGLU MLP (gate, up, down).  With q = heads × head_dim and
 * kv = kv_heads × head_dim, the elements one example keeps for the
 * backward pass of one layer are
 *   A = seq × (4·hidden + 2·q + 2·kv + 4·ffn) + heads × seq²
 *   (norm inputs and outputs 4·hidden; Q and the attention output 2·q;
 *   K, V 2·kv; gate, up, SiLU(gate), SiLU(gate)·up 4·ffn; the softmax
 *   probabilities heads × seq²), plus seq × 7·rank for LoRA adapters on
 *   all seven projections.  Per example, times bytes_per_element:
 *   training                 layers × A
 *   training, checkpointing  layers × seq × hidden (each layer's input
 *                            kept) + A (one layer recomputed at a time)
 *   inference                layers × 2 × seq × kv (the KV cache) + A
 * Not counted: the LM head's logits (the vocabulary is not recorded),
 * the embedding, framework workspace; a fused attention kernel does not
 * keep the heads × seq² term.  Linear in the batch. */
typedef struct cal_act_shape {
  int64_t hidden, heads, kv_heads, head_dim, ffn, seq, layers;
} cal_act_shape_t;

typedef struct cal_act_est {
  double layer_elements;           /* A with the LoRA term, one example */
  double full_bytes;               /* per example, training, no checkpoints */
  double checkpointed_bytes;       /* per example, training, checkpointing */
  double inference_bytes;          /* per example, inference */
} cal_act_est_t;

/* CAL_EINVAL when a shape is < 1 (lora_rank < 0, bytes_per_element <= 0)
 * or heads is not a multiple of kv_heads. */
int cal_act_model(const cal_act_shape_t *s, double bytes_per_element,
                  int64_t lora_rank, cal_act_est_t *out);

/* Trainable parameters of LoRA rank r on the seven projections of every
 * layer: layers × r × (7·hidden + 2·q + 2·kv + 3·ffn), each adapter of an
 * in × out matrix holding r × (in + out).  0 when the shape is bad. */
double cal_lora_params(const cal_act_shape_t *s, int64_t rank);

#endif
