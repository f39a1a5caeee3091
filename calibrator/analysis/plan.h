/* `calibrate plan INPUT...`: split work across machines in proportion to
 * their measured throughput, give the wall-clock time and cost of the
 * work, choose batch size and gradient accumulation, and say whether a
 * model fits each machine or must be sharded.  An input is a profile, or
 * a measured curve (`calibrate peak` JSON or curve CSV) of a machine this
 * tool cannot run on (plan_input.h).
 * cal_plan_compute() computes the plan once as a typed result (cal_plan_t);
 * every output renders that result: the JSON of schema "calibrate-plan/1"
 * (report/plan_json.h), the table and markdown (report/plan_render.h).
 * The arithmetic lives in plan_math.h, the data-parallel step with its
 * all-reduce in plan_step.c.
 *
 * Rules: a machine that cannot hold the model (state plus one example's
 * activations over its budget) gets no share of the work; one whose
 * memory is unknown keeps its share.  Flags account for each
 * throughput's confidence interval (plan_math.h). */
#ifndef CAL_PLAN_H
#define CAL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "plan_math.h"
#include "plan_net.h"
#include "profile.h"

#define CAL_PLAN_SCHEMA "calibrate-plan/1"

/* What to plan for; zero where not given. */
typedef struct cal_plan_opts {
  cal_work_t work;          /* how much work; unit CAL_WORK_NONE: none */
  uint64_t examples;        /* what work stands for; 0: not given */
  int64_t target;           /* target effective batch; 0: not given */
  double params;            /* model parameters; 0: not given */
  cal_dtype_t dtype;
  cal_training_t training;
  cal_mem_assume_t assume;
  /* The activation model (plan_math.h), used when layers > 0 and a
   * profile records the shapes. */
  int64_t layers;
  int64_t seq;              /* 0: the seq the profile measured */
  int checkpointing;
  int64_t lora_rank;        /* 0: lora_fraction gives the trainable part */
  int priced;               /* a price was given: costs are computed */
  /* A fleet profile's all-reduce curve (plan_input.h): with params, the
   * plan adds the data-parallel step with its all-reduce ("network"). */
  const cal_plan_net_t *net;
} cal_plan_opts_t;

typedef enum {
  CAL_PLAN_SRC_PROFILE = 0,
  CAL_PLAN_SRC_CSV,
  CAL_PLAN_SRC_PEAK,
} cal_plan_source_t;

/* One input machine; strings borrowed from what it was read from. */
typedef struct cal_plan_machine {
  const cal_profile_t *prof; /* NULL for a curve */
  const char *path;          /* the input file, as given */
  const char *name;
  cal_plan_source_t source;
  double throughput;     /* NaN when null or missing */
  double ci_low, ci_high, ci_level; /* its CI; NaN when unknown */
  int64_t optimal_batch; /* 0 when null */
  int optimal_is_lower_bound; /* the curve ended at its best point:
                                 batch_source.optimal_is_lower_bound */
  double available;      /* bytes; 0 when unknown */
  double price_per_hour; /* USD; NaN when not given */
  const char *mode;      /* the batch sweep's mode behind throughput
                            (batch_source.mode, else the mode of its
                            point): "train" is a training step, "prefill"
                            and "decode" inference; NULL: unknown */
  const char *measured_dtype; /* the dtype the batch sweep behind
                                 throughput ran in (batch_source.dtype:
                                 "bf16", "fp32"); NULL: unknown (curves) */
  double train_throughput; /* examples/s at the train curve's optimal
                              batch; 0: the profile has no train curve */
  int64_t train_batch;   /* that batch; 0: none */
  int has_shape;         /* shape (layers 0) read from the profile */
  cal_act_shape_t shape;
  /* The model behind the throughput (profiles; 0 and NULL when not
   * recorded): the preset, whether the figure is one decoder layer's
   * forward pass (batch_source.workload, or an older profile's prefill or
   * decode curve), and the parameters its step multiplies per token (the
   * decoder layers' matrices and the LM head: one layer's when one_layer);
   * train_flops_params the same for the train curve. */
  const char *preset;
  int one_layer;
  double flops_params, train_flops_params;
  /* Set by cal_plan_scale: the throughput as measured, the factor it was
   * scaled by to the plan's model (NaN: not scaled) and what it rests on
   * (static; NULL: nothing to say). */
  double measured_throughput, flops_ratio;
  const char *basis;
} cal_plan_machine_t;

/* A plan for a model (o->params) other than the one a profile measured:
 * each profile's throughput (its CI and train curve's optimum too) is
 * scaled by FLOPs per token, measured model over the plan's (FLOPs per
 * token = 2 x the parameters the step multiplies per token, the same in
 * the forward pass and in a training step: the ratio is of parameters;
 * attention's term that grows with the sequence is not counted).  A
 * curve, or a profile that does not record its model, does not say which
 * model it measured: its figure is taken as the plan's model's, and basis
 * says so.  Without a model nothing is scaled; a one-layer figure's basis
 * says what it is (and the command warns).  Call before cal_plan_compute.
 * 0, or CAL_EINVAL with one line in err when a figure is one layer's and
 * the profile does not record the layer's shape. */
int cal_plan_scale(const cal_plan_opts_t *o, cal_plan_machine_t *ms, size_t n,
                   char *err, size_t errlen);

/* The name a source has in the plan ("profile", "curve_csv",
 * "peak_json"); static. */
const char *cal_plan_source_name(cal_plan_source_t s);

/* A machine with a throughput, as the plan places it.  Doubles are NaN
 * where the figure does not apply (null in the JSON). */
typedef struct cal_plan_entry {
  const cal_plan_machine_t *m;
  int in_split;
  char left_out_reason[200]; /* why it has no share; "" when in_split */
  double share;
  uint64_t examples;         /* its part of the work */
  double finish_s;           /* its part done; NaN: no work or no share */
  double alone_s;            /* the whole work alone; NaN: cannot */
  double cost_usd;           /* held for the split's makespan; NaN */
  double alone_cost_usd;     /* the whole work alone; NaN */
  int straggler;
  cal_batch_plan_t batch;    /* micro-batch and accumulation (a target) */
  char batch_note[200];
  int has_memory;            /* a model was given: mem below */
  struct {
    int64_t batch_size;      /* the micro-batch the figures are for */
    double available;        /* bytes; NaN: unknown */
    double budget;           /* bytes; NaN: unknown */
    double state, activations, need;
    int64_t max_batch;       /* -1: unknown */
    int fits;                /* -1: unknown, else 0 or 1 */
  } mem;
} cal_plan_entry_t;

/* The activation model (--layers): modelled from a profile's shapes. */
typedef struct cal_plan_act {
  int64_t layers, seq;
  cal_act_shape_t shape;     /* of the machine it came from */
  double bytes_per_element;
  int checkpointing;
  cal_act_est_t est;
  const char *shapes_from;   /* that machine's input file */
} cal_plan_act_t;

/* The model and its memory at micro-batch 1. */
typedef struct cal_plan_model {
  double params;
  cal_dtype_t dtype;
  cal_training_t training;
  double lora_fraction;      /* trainable / params; NaN unless LoRA */
  int64_t lora_rank;         /* 0: not given */
  cal_mem_assume_t assume;
  cal_mem_need_t base;
  int has_act;
  cal_plan_act_t act;
} cal_plan_model_t;

typedef enum {
  CAL_PLACE_DATA_PARALLEL = 0,
  CAL_PLACE_FITS_SOME,
  CAL_PLACE_SHARDED,
  CAL_PLACE_DOES_NOT_FIT,
  CAL_PLACE_UNKNOWN,
} cal_place_t;

/* The placement's name ("data_parallel", "fits_some", "sharded",
 * "does_not_fit", "unknown"); static. */
const char *cal_place_name(cal_place_t s);

typedef struct cal_plan_placement {
  cal_place_t strategy;
  const char *note;          /* static */
  size_t *fits_on, nfits_on; /* indices into the plan's machines */
  size_t *group, ngroup;     /* the shard group, largest memory first */
  double shard_need;         /* bytes */
} cal_plan_placement_t;

/* Where a machine's compute figure for a training step comes from. */
typedef enum {
  CAL_STEP_TRAIN = 0,   /* its throughput is a training step's */
  CAL_STEP_TRAIN_CURVE, /* its train curve's optimum, not the top-level one */
  CAL_STEP_INFERENCE,   /* prefill or decode: a forward pass only */
  CAL_STEP_UNKNOWN,     /* a curve whose mode is not recorded */
} cal_step_src_t;

/* "train", "train_curve", "inference", "unknown"; static. */
const char *cal_step_src_name(cal_step_src_t s);

typedef struct cal_plan_step_machine {
  const cal_plan_machine_t *m;
  double throughput;         /* the step's */
  cal_step_src_t from;
  double examples_per_step;
} cal_plan_step_machine_t;

#define CAL_PLAN_NET_LINES 12

/* The data-parallel step with its all-reduce over a fleet's curve. */
typedef struct cal_plan_network {
  const cal_plan_net_t *net;
  const char *note;          /* one host: not a network; NULL otherwise */
  const char *compute_note;  /* what the compute time rests on; NULL */
  double trainable_params, bytes_per_gradient;
  cal_dtype_t dtype;         /* the gradients' */
  double gradient_bytes, allreduce_s;
  int extrapolated;
  double busbw_gbps;
  double global_batch;
  const char *global_batch_from; /* static */
  cal_plan_step_machine_t *machines;
  size_t nmachines;
  cal_net_step_t st;
  const cal_plan_machine_t *fastest;
  const char *verdict;       /* static */
  char arith[CAL_PLAN_NET_LINES][512]; /* the arithmetic, line by line */
  size_t narith;
} cal_plan_network_t;

/* The plan, computed once. */
typedef struct cal_plan {
  uint64_t examples;         /* 0: no work given */
  cal_work_t work;
  int64_t target;            /* target effective batch; 0: not given */
  cal_split_t sp;
  size_t nsplit;             /* machines in the split */
  const char *split_note;    /* why nothing is split; NULL */
  char hetero_note[240];     /* "" when none */
  double cost_usd;           /* the split's total; NaN: not priced */
  cal_plan_entry_t *machines; /* with a throughput, in argument order */
  size_t nmachines;
  const cal_plan_machine_t **excluded; /* without one */
  size_t nexcluded;
  char **warnings;
  size_t nwarnings;
  cal_plan_model_t *model;   /* NULL: no model given */
  cal_plan_placement_t *placement; /* NULL: no model given */
  int has_net;               /* a fleet was given: network or its absence */
  cal_plan_network_t *network; /* NULL: no estimate */
} cal_plan_t;

/* Why a machine is left out: "no measured throughput" or "throughput is
 * not positive"; static. */
const char *cal_plan_excluded_reason(const cal_plan_machine_t *m);

/* The plan of n machines (the result borrows from ms and o->net; free it
 * with cal_plan_free).  0, or CAL_EINVAL / CAL_ENOMEM with err filled
 * (one line) when no machine is usable, a machine in the split has no
 * price while others do, the activation model has no shapes, or out of
 * memory. */
int cal_plan_compute(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                     size_t n, cal_plan_t **out, char *err, size_t errlen);

/* Accepts NULL. */
void cal_plan_free(cal_plan_t *p);

/* Whether the model was given and fits on no machine alone (placement
 * sharded, does_not_fit or unknown). */
int cal_plan_fits_nowhere(const cal_plan_t *p);

#endif
