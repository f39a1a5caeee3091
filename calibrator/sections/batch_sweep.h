/* Inside the batch sweep (batch_sweep.c measures, batch_plan.c plans
 * the points and the sweep's settings, batch_curve.c turns samples into
 * throughput and analyses the curve): the state of one mode's sweep and
 * what the three files share. */
#ifndef CAL_BATCH_SWEEP_H
#define CAL_BATCH_SWEEP_H

#include <stdint.h>

#include "curve.h"
#include "engine.h"
#include "results.h"
#include "run.h"

/* One mode's sweep in progress. */
typedef struct sweep {
  cal_run_t *r;
  const cal_kernel_t *k;
  int decode;
  int train;                /* the training step (layer and LM head) */
  const cal_batch_result_t *res;
  cal_batch_mode_t *m;      /* the result being filled */
  int64_t *list;            /* batches to measure (owned), room for cap */
  size_t nlist, cap;
  double t0, budget, mem_budget;
  double mem_read_gbps;     /* the run's memory read bandwidth; NAN: none */
  cal_engine_t engine;      /* the products' engine (cal_params_t.engine) */
  const cal_kernel_t *head; /* train: the LM head's step */
  double llc;               /* the last-level cache's bytes; 0: unknown */
  cal_harness_cfg_t h;      /* the points' harness settings */
  int infer;                /* the inference workload (prefill, decode) */
  int dpo;                  /* dpo: train over 2 x batch sequences, and */
  const cal_kernel_t *ref;  /* the frozen reference's forward at 2 x batch
                               (grpo: the completions' generation) */
  char busy_part[160];      /* train: a part measured while others ran */
  int grpo;                 /* grpo: generation, then train over batch x
                               group sequences of seq + gen_len tokens */
  /* the mode's models, kept from one point to the next (re-shaped for
   * each batch) and released at the mode's end: CAL_KEPT_MAIN the
   * mode's kernel (decode: on the GEMV path), CAL_KEPT_BLAS decode on
   * the engine's GEMM, CAL_KEPT_HEAD train's LM head, CAL_KEPT_REF dpo's
   * reference or grpo's generation */
  cal_kept_t kept[4];
  int said_long;            /* the note on a long given list was made */
  double built_s;           /* the point's seconds building models (not
                               re-shaping kept ones) */
  double built_all_s;       /* the mode's, every point's */
} sweep_t;

enum { CAL_KEPT_MAIN, CAL_KEPT_BLAS, CAL_KEPT_HEAD, CAL_KEPT_REF };

/* decode batches up to this are measured on both paths (the one-team GEMV
 * and the engine's GEMM) and keep the faster: which wins depends on the
 * engine and the dtype (measured on 2 cores: OpenBLAS fp32 loses to the
 * GEMV up to batch 32, oneDNN bf16 wins from batch 16, oneDNN fp32 from 4) */
#define CAL_SWEEP_BOTH_PATHS_MAX 32

/* ---- the pace (batch_pace.c) */

/* The points' samples: by confidence (the median's interval within 1%,
 * at least 3 and at most 10, 5 with --quick, no more once they took 2 s,
 * 1 s with --quick) unless --samples or rounds ask for a count. */
void cal_sweep_samples(sweep_t *s);
/* A part of a point (kernel k at p) on the model kept in slot `slot`,
 * the other slots' released first where they and this part would not fit
 * the memory budget together; what building (not re-shaping) cost is
 * added to built_s and built_all_s.  What cal_run_point_kept returns. */
int cal_sweep_run_kept(sweep_t *s, int slot, const cal_kernel_t *k,
                       const cal_params_t *p, cal_point_t *pt);
/* Seconds the point at batch b should take, from the last measured one
 * (lb, its step and its wall time less the building of models). */
double cal_sweep_next_cost(const sweep_t *s, int64_t b, int64_t lb,
                           double step, double wall);
/* Seconds of the mode's share spent: its time less its models' building. */
double cal_sweep_spent(const sweep_t *s);
/* How many of the list's first batches the user gave (--batches). */
size_t cal_sweep_given(const sweep_t *s);
/* The progress line of point i (batch b), the points left and their
 * expected time; once, a note when a given list will outrun the share. */
void cal_sweep_progress(sweep_t *s, size_t i, int64_t b, int64_t lb,
                        double step, double wall);

/* ---- the plan (batch_plan.c) */

/* Seconds mode m (0 prefill, 1 decode, 2 train, 3 inference, 4 dpo,
 * 5 grpo; bit m of `modes` set: it runs) may take of the section's
 * `total` when `elapsed` have gone: its share of what is left among the
 * modes still to run (in that order), at least its share of the whole,
 * at least 1 s; 0 for a mode that does not run. */
double cal_sweep_mode_budget(double total, double elapsed, int modes, int m);
/* The step expected at `ratio` times a measured point's batch, from its
 * step and the part of it that is arithmetic (arith, seconds; a decode
 * step's flops at the run's GEMM rate): that part grows with the batch,
 * the rest (reading the weights) does not.  Where the arithmetic is not
 * known or is the whole step, the step in proportion. */
double cal_sweep_step_at(double step, double arith, double ratio);
/* Bytes a point may use: --memory-budget, else the harness's share of
 * available memory. */
double cal_sweep_mem_budget(const cal_run_t *r);
/* The last-level cache of the machine (one instance times their count),
 * bytes; 0 when unknown. */
double cal_sweep_llc_bytes(const cal_run_t *r);
/* The kernel parameters of the sweep's point at `batch`: train, the
 * layers' step (the stack where --layers asked and it fits, else one); the
 * forward modes, the model's step (distinct layers: cal_model_distinct_
 * layers against the LLC and the memory budget). */
void cal_sweep_shape(const sweep_t *s, int decode, int64_t batch,
                     cal_params_t *p);
/* The frozen reference's forward point beside a dpo point p (the
 * model's prefill over p's sequences). */
void cal_sweep_ref_params(const sweep_t *sw, const cal_params_t *p,
                          cal_params_t *rp);
/* The LM head's kernel point beside a train point p. */
void cal_sweep_head_params(const sweep_t *sw, const cal_params_t *p,
                           cal_params_t *hp);
/* Bytes a point of parameters p needs. */
double cal_sweep_mem_of(const sweep_t *sw, const cal_params_t *p);
/* The next point of the mode at batch b, skipped until measured. */
cal_batch_point_t *cal_sweep_point_add(sweep_t *s, int64_t b);
/* Mark bp skipped for `why`, or for needing more than the memory budget. */
void cal_sweep_point_skip(cal_batch_point_t *bp, const char *why);
void cal_sweep_over_budget(const sweep_t *s, cal_batch_point_t *bp);
/* The batches to measure into s->list and the mode's points; CAL_ENOMEM. */
int cal_sweep_batch_list(sweep_t *s);
/* The sweep's settings in res: the products' engine, the LM head's
 * kernel, the whole model's parameters and training state. */
void cal_sweep_layer_engine(const cal_run_t *r, cal_batch_result_t *res);
void cal_sweep_head_kernel(cal_batch_result_t *res);
void cal_sweep_model_state(const cal_sweep_opts_t *o, cal_batch_result_t *res);
/* The headline's mode (res->top_mode, -1: none) and why (res->top_why):
 * wm, --workload's mode (-1: none), when it has an optimal batch. */
void cal_sweep_top_mode(cal_batch_result_t *res, int wm);

/* ---- the train modes' ceilings (batch_rates.c) */

/* res->gemm_gflops: the run's GEMM of the sweep's dtype on all threads
 * (NAN with gemm_why when unknown). */
void cal_sweep_gemm_ref(const cal_run_t *r, cal_batch_result_t *res);
/* The AdamW pass measured once, against the run's triad (res->adamw_*,
 * triad_gbps).  0 or a harness error. */
int cal_sweep_adamw(cal_run_t *r, cal_batch_result_t *res);

/* ---- throughput and the curve (batch_curve.c) */

/* The points so far as the curve analysis reads them, and its options;
 * free() the array.  NULL when out of memory. */
cal_curve_point_t *cal_sweep_curve_of(const sweep_t *s, cal_curve_opts_t *po);
/* Take the harness point *pt (and train's LM head point, dpo's reference
 * point) into bp; pt is emptied in every case.  CAL_ENOMEM. */
int cal_sweep_point_take(const sweep_t *s, cal_batch_point_t *bp,
                         cal_point_t *pt, const cal_point_t *head,
                         const cal_point_t *ref);
/* Peak, knee, shape and advice of the measured curve; batch-1 latency. */
int cal_sweep_analyze(sweep_t *s);
/* Whether a point may be a figure of the curve (its peak, knee, optimum,
 * batch-1 latency, and so the profile's headline): measured and not
 * contaminated, the process did not swap, and its threads (every part's,
 * for a train point) ran side by side. */
int cal_sweep_point_headline(const cal_batch_point_t *bp);

#endif
