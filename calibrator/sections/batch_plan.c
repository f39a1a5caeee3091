/* The batch sweep's plan: the points' shapes, memory and cost, the list
 * of batches, and the sweep's settings (engine, LM head, model state). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "layer.h"
#include "layer_train.h"
#include "lm_head.h"
#include "lora.h"
#include "mem_model.h"
#include "model.h"

/* the default list: decode, powers of four from 1 to this (its points
 * are cheap, its curve rises far); prefill and train, powers of two to
 * half of it (a point is the work of the model's whole depth: the time
 * budget and the early stop end them); then extended (twice the last)
 * while the throughput still rises */
#define SWEEP_DEFAULT_MAX 64

/* the modes' shares of the section's time budget (those that run share
 * it in these proportions, in the order they run: prefill, decode, train,
 * inference, dpo, grpo): the training step, the workload users tune and
 * seconds a point through the whole model, gets the most */
static const double mode_share[CAL_BATCH_NMODES] = {0.2, 0.2, 0.6, 0.4,
                                                    0.4, 0.4};

double cal_sweep_mode_budget(double total, double elapsed, int modes, int m) {
  double left = 0, all = 0;
  for (int j = 0; j < CAL_BATCH_NMODES; j++) {
    double share = modes & (1 << j) ? mode_share[j] : 0.0;
    all += share;
    left += j >= m ? share : 0.0;
  }
  if (!(modes & (1 << m)) || all <= 0)
    return 0.0;
  /* its share of what is left, and never less than its share of the
   * whole: one point of prefill can run past prefill's share, and decode's
   * points (seconds each) would pay for it */
  double b = fmax((total - elapsed) * mode_share[m] / left,
                  total * mode_share[m] / all);
  return b > 1.0 ? b : 1.0;
}

double cal_sweep_step_at(double step, double arith, double ratio) {
  if (!(arith >= 0.0) || arith >= step)
    return step * ratio;
  return step + arith * (ratio - 1.0);
}

double cal_sweep_mem_budget(const cal_run_t *r) {
  const cal_sweep_opts_t *o = &r->opt->sweep;
  return o->memory_budget > 0 ? o->memory_budget : r->opt->hcfg.mem_avail_bytes;
}

double cal_sweep_llc_bytes(const cal_run_t *r) {
  const cal_hwinfo_t *hw = &r->ctx->hw;
  double llc = 0;
  int level = 0;
  for (int i = 0; i < hw->ncaches; i++) {
    const cal_cache_info_t *c = &hw->caches[i];
    if (strcmp(c->type, "instruction") == 0 || c->level < level)
      continue;
    level = c->level;
    llc = (double)c->size_bytes * (c->instances > 0 ? c->instances : 1);
  }
  return llc;
}

/* The forward step's model: its depth, distinct layers where they fit
 * (inference and grpo's generation hold a prefill and a decode step: half
 * the budget each), its LM head, and the tokens generated. */
static void forward_shape(const sweep_t *s, cal_params_t *p, int bf16) {
  int gen = s->infer || s->grpo;
  cal_layer_shape_t sh;
  cal_layer_shape_from_params(p, &sh);
  sh.bf16 = bf16;
  p->depth = s->res->layers;
  p->n = s->res->vocab;
  p->layers = cal_model_distinct_layers(&sh, p->depth, p->n, s->llc,
                                        gen ? s->mem_budget / 2
                                            : s->mem_budget);
  p->gen = gen ? s->res->gen_len : 0;
}

/* The training step's distinct layers: the model's depth where that
 * stack (every layer's weights, gradients, fp32 masters, AdamW moments
 * and saved activations) fits the memory budget; else the fewest whose
 * weights exceed 4 x the last-level cache (each step then reads every
 * layer's weights and state from memory, as the model's would), never
 * more than fit the budget nor fewer than one.  The step is scaled from
 * them to the depth. */
static int64_t train_layers(const sweep_t *s, const cal_layer_shape_t *sh,
                            int64_t depth) {
  if (depth <= 1 || cal_train_stack_mem_bytes(sh, (int)depth) <= s->mem_budget)
    return depth > 1 ? depth : 1;
  int64_t n = depth;
  if (s->llc > 0) {
    double n4 = floor(4.0 * s->llc / cal_layer_weight_bytes(sh)) + 1.0;
    if (n4 < (double)depth)
      n = (int64_t)n4;
  }
  while (n > 1 && cal_train_stack_mem_bytes(sh, (int)n) > s->mem_budget)
    n--;
  return n;
}

void cal_sweep_ref_params(const sweep_t *sw, const cal_params_t *p,
                          cal_params_t *rp) {
  *rp = *p;
  rp->layers = 0;
  rp->lora_rank = 0; /* a forward pass */
  rp->seq = sw->r->opt->sweep.seq; /* grpo: generated from the prompt */
  forward_shape(sw, rp, sw->ref->dtype == CAL_DTYPE_BF16);
}

void cal_sweep_shape(const sweep_t *s, int decode, int64_t batch,
                      cal_params_t *p) {
  const cal_run_t *r = s->r;
  const cal_sweep_opts_t *o = &r->opt->sweep;
  memset(p, 0, sizeof *p);
  p->hidden = o->hidden;
  p->heads = o->heads;
  p->kv_heads = o->kv_heads;
  p->ffn = o->ffn;
  p->seq = o->seq;
  /* dpo: a pair's chosen and rejected sequence; grpo: a prompt's
   * completions, each its prompt and generated tokens */
  p->batch = s->dpo ? 2 * batch : s->grpo ? s->res->group * batch : batch;
  if (s->grpo)
    p->seq += s->res->gen_len;
  p->decode = decode;
  p->threads = r->opt->threads;
  p->seed = r->opt->seed + 1000;
  p->variant = -1;
  p->engine = s->engine;
  if (s->train) {
    /* the model's depth where its stack fits the memory budget, else the
     * fewest distinct layers past 4 x the LLC, scaled (LoRA: adapters on
     * a frozen base) */
    p->lora_rank = s->res->lora_rank;
    cal_layer_shape_t sh;
    cal_layer_shape_from_params(p, &sh);
    sh.bf16 = s->k->dtype == CAL_DTYPE_BF16;
    p->layers = train_layers(s, &sh, s->res->layers);
  } else {
    forward_shape(s, p, s->k->dtype == CAL_DTYPE_BF16);
  }
}

/* The layer shape of a point of this sweep (its dtype the kernel's). */
static void layer_shape(const sweep_t *sw, const cal_params_t *p,
                        cal_layer_shape_t *s) {
  cal_layer_shape_from_params(p, s);
  s->bf16 = sw->k->dtype == CAL_DTYPE_BF16;
}

/* The LM head's kernel point beside a train point p. */
void cal_sweep_head_params(const sweep_t *sw, const cal_params_t *p,
                        cal_params_t *hp) {
  memset(hp, 0, sizeof *hp);
  hp->hidden = p->hidden;
  hp->seq = p->seq;
  hp->batch = p->batch;
  hp->n = sw->res->vocab;
  hp->threads = p->threads;
  hp->seed = p->seed;
  hp->variant = -1;
  hp->engine = p->engine; /* the layers' engine (fp32; bf16 on oneDNN) */
}

/* What a point needs to run: train runs the layers' step, then the LM
 * head's, one after the other. */
double cal_sweep_mem_of(const sweep_t *sw, const cal_params_t *p) {
  cal_layer_shape_t s;
  layer_shape(sw, p, &s);
  if (sw->infer)
    return cal_model_infer_mem_bytes(p, s.bf16);
  if (!sw->train)
    return cal_model_mem_bytes(&s, p->layers > 0 ? p->layers : 1,
                               sw->res->vocab);
  double layer = cal_train_stack_mem_bytes(&s, (int)(p->layers > 1 ? p->layers : 1));
  double head = cal_lm_head_mem_bytes(p->batch * p->seq, p->hidden,
                                      sw->res->vocab,
                                      sw->head->dtype == CAL_DTYPE_BF16);
  double most = layer > head ? layer : head;
  if (sw->ref) { /* the reference's forward (grpo: generation) apart */
    cal_params_t rp;
    cal_sweep_ref_params(sw, p, &rp);
    double ref = sw->ref->mem_bytes(&rp);
    most = most > ref ? most : ref;
  }
  return most;
}

_Static_assert(CAL_LM_HEAD_CHUNK == CAL_MEM_HEAD_CHUNK,
               "the memory model counts the LM head's chunk of logits");

/* The activations one example keeps, by the one memory model
 * (mem_model.h, fp32 elements as the step keeps them): the layer's, the
 * model's without and with checkpointing, its LM head included. */
static void act_of(const sweep_t *sw, const cal_layer_shape_t *s,
                   double layers, cal_act_est_t *a) {
  cal_act_shape_t as = {.hidden = s->hidden, .heads = s->heads,
                        .kv_heads = s->kv_heads,
                        .head_dim = s->hidden / s->heads, .ffn = s->ffn,
                        .seq = s->seq, .layers = (int64_t)layers,
                        .vocab = sw->res->vocab, .bf16_inputs = s->bf16};
  if (cal_act_model(&as, 4.0, s->lora_rank, a) < 0)
    memset(a, 0, sizeof *a);
}

/* The training state of `layers` layers, the LM head and the final norm
 * (hidden wide; and the embedding where `embed`), by the one memory model:
 * the layers trained or, with LoRA, frozen beside their fp32 adapters;
 * the head trained as `head` says. */
static double state_of(const cal_batch_result_t *res, double layers,
                       double hidden, int embed, cal_mem_role_t head) {
  const double wb = res->dtype == CAL_DTYPE_BF16 ? 2.0 : 4.0;
  cal_mem_param_t tr, fr, hd, ad;
  cal_mem_param_bytes(wb, CAL_MEM_TRAINED, &tr);
  cal_mem_param_bytes(wb, CAL_MEM_FROZEN, &fr);
  cal_mem_param_bytes(wb, head, &hd);
  cal_mem_param_bytes(4.0, CAL_MEM_TRAINED, &ad);
  const double lp = res->layer_params;
  double b = res->lora_rank > 0
                 ? layers * (lp * fr.total +
                             res->lora_params / (double)res->layers * ad.total)
                 : layers * lp * tr.total;
  return b + res->model_params_head * hd.total + hidden * tr.total +
         (embed ? res->model_params_head * tr.total : 0.0);
}

/* The model's activations at batch b and its training memory (bytes), by
 * the one memory model: the whole model's (state and activations; dpo:
 * and the frozen reference's weights) against the budget, and the
 * measured step's (its stack, the LM head as its step holds it, no
 * embedding table; dpo and grpo: and the reference's kernel). */
static void model_memory(const sweep_t *sw, const cal_layer_shape_t *s,
                         const cal_params_t *p, cal_batch_point_t *bp) {
  const cal_batch_result_t *res = sw->res;
  double b = (double)s->batch, L = (double)res->layers;
  double stack = (double)(p->layers > 1 ? p->layers : 1);
  cal_act_est_t a, m;
  act_of(sw, s, L, &a);
  act_of(sw, s, stack, &m);
  bp->act_layer_bytes = b * (a.layer_elements * 4.0 + a.layer_bf16_elements * 2.0);
  bp->act_bytes = b * a.full_bytes;
  bp->act_ckpt_bytes = b * a.checkpointed_bytes;
  bp->model_bytes = res->model_state_bytes + bp->act_bytes +
                    (sw->dpo && !res->lora_rank
                         ? res->model_params * (s->bf16 ? 2.0 : 4.0)
                         : 0.0);
  bp->model_fits = bp->model_bytes <= sw->mem_budget;
  bp->step_memory_bytes =
      state_of(res, stack, (double)s->hidden, 0, CAL_MEM_FUSED) +
      b * m.full_bytes;
  if (sw->ref) {
    cal_params_t rp;
    cal_sweep_ref_params(sw, p, &rp);
    bp->step_memory_bytes += sw->ref->mem_bytes(&rp);
  }
}

/* The next point of the mode, skipped until measured. */
cal_batch_point_t *cal_sweep_point_add(sweep_t *s, int64_t b) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  cal_batch_point_t *bp = &s->m->points[s->m->npoints++];
  cal_params_t p;
  cal_sweep_shape(s, s->decode, b, &p);
  cal_layer_shape_t shape;
  layer_shape(s, &p, &shape);
  /* fp32 points keep the ids they had before there was a bf16 layer;
   * prefill and decode, the model's step since, name its depth (/L<n>),
   * so that no comparison holds them against one layer's points */
  char depth[48] = "";
  if (!s->train)
    snprintf(depth, sizeof depth, "/L%lld", (long long)s->res->layers);
  if (s->infer || s->grpo) /* and the tokens generated (grpo: a group) */
    snprintf(depth + strlen(depth), sizeof depth - strlen(depth), "/g%lld",
             (long long)s->res->gen_len);
  if (s->grpo)
    snprintf(depth + strlen(depth), sizeof depth - strlen(depth), "/G%lld",
             (long long)s->res->group);
  if (s->train && s->res->lora_rank > 0) /* never held against full steps */
    snprintf(depth + strlen(depth), sizeof depth - strlen(depth), "/lora%lld",
             (long long)s->res->lora_rank);
  snprintf(bp->id, sizeof bp->id, "batch_sweep/%s/%s%s%s/h%lld/s%lld/b%lld",
           s->m->name, shape.bf16 ? "bf16/" : "", o->preset, depth,
           (long long)o->hidden, (long long)o->seq, (long long)b);
  bp->batch = b;
  bp->memory_bytes = cal_sweep_mem_of(s, &p);
  if (s->train)
    model_memory(s, &shape, &p, bp);
  bp->status = CAL_POINT_SKIPPED;
  bp->matrix_path = cal_layer_matrix_path(&shape);
  bp->read_bytes = s->decode ? cal_model_read_bytes(&shape, s->res->layers,
                                                    s->res->vocab)
                              : 0.0;
  bp->bw_efficiency = bp->bw_beside = NAN;
  return bp;
}

void cal_sweep_point_skip(cal_batch_point_t *bp, const char *why) {
  bp->status = CAL_POINT_SKIPPED;
  snprintf(bp->reason, sizeof bp->reason, "%s", why);
}

/* bytes as "31.0 GiB" from 1 GiB up, else "512 MiB" */
static const char *gib(double bytes, char *buf, size_t len) {
  if (bytes >= 1073741824.0)
    snprintf(buf, len, "%.1f GiB", bytes / 1073741824.0);
  else
    snprintf(buf, len, "%.0f MiB", bytes / 1048576.0);
  return buf;
}

void cal_sweep_over_budget(const sweep_t *s, cal_batch_point_t *bp) {
  char need[32], have[32];
  bp->status = CAL_POINT_SKIPPED;
  snprintf(bp->reason, sizeof bp->reason, "batch %lld needs %s, %s %s",
           (long long)bp->batch, gib(bp->memory_bytes, need, sizeof need),
           gib(s->mem_budget, have, sizeof have),
           s->r->opt->sweep.memory_budget > 0 ? "memory budget (--memory-budget)"
                                              : "available");
}

/* The batches to measure: the user's list or the default, with room to
 * extend; and the mode's point array for all of them. */
int cal_sweep_batch_list(sweep_t *s) {
  const cal_sweep_opts_t *o = &s->r->opt->sweep;
  int64_t *d = NULL;
  size_t n = 0;
  if (o->batches) {
    if (!(d = malloc(o->nbatches * sizeof *d)))
      return CAL_ENOMEM;
    memcpy(d, o->batches, o->nbatches * sizeof *d);
    n = o->nbatches;
  } else {
    int64_t step = s->decode ? 4 : 2, top = s->decode ? SWEEP_DEFAULT_MAX
                                                     : SWEEP_DEFAULT_MAX / 2;
    for (int64_t b = 1; b <= top; b *= step)
      n++;
    if (!(d = malloc(n * sizeof *d)))
      return CAL_ENOMEM;
    for (size_t i = 0; i < n; i++)
      d[i] = i ? d[i - 1] * step : 1;
  }
  s->cap = n + 64;
  if (!(s->list = realloc(d, s->cap * sizeof *d))) {
    free(d);
    return CAL_ENOMEM;
  }
  s->nlist = n;
  s->m->points = calloc(s->cap, sizeof *s->m->points);
  return s->m->points ? 0 : CAL_ENOMEM;
}

/* The engine of the layer's products: the GEMM section's best verified
 * engine for the layer's dtype at the sweep's threads, when it ran. */
void cal_sweep_layer_engine(const cal_run_t *r, cal_batch_result_t *res) {
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const cal_gemm_best_t *b = g ? cal_gemm_best(g, res->dtype, 1) : NULL;
  if (b && b->kernel && b->kernel->engine != CAL_ENGINE_BUILTIN) {
    res->engine = b->kernel->engine;
    snprintf(res->engine_why, sizeof res->engine_why,
             "the GEMM section's best verified %s engine on all threads (%s, "
             "%.0f %s)", cal_kdtype_name(res->dtype), b->kernel->name, b->gflops,
             res->dtype == CAL_DTYPE_INT8 ? "GOPS" : "GFLOPS");
    return;
  }
  res->engine = cal_engine_default(res->dtype == CAL_DTYPE_BF16);
  snprintf(res->engine_why, sizeof res->engine_why,
           "no GEMM figure for %s in this run: the layer's default (oneDNN "
           "for bf16 where it runs natively, else OpenBLAS)",
           cal_kdtype_name(res->dtype));
}

/* The LM head's kernel: the layer's dtype where its products can run as
 * the layer's do (bf16 on oneDNN only: where the layer's bf16 products
 * run on OpenBLAS's sbgemm, or oneDNN has no native bf16, the fp32 head),
 * and why. */
void cal_sweep_head_kernel(cal_batch_result_t *res) {
  const cal_kernel_t *k16 = cal_kernel_find("lm_head_train_bf16");
  const char *why = NULL;
  /* the fp32 head's products on the layers' engine */
  const char *f32 = res->engine == CAL_ENGINE_ONEDNN ? "oneDNN matmul"
                                                     : "OpenBLAS sgemm";
  res->head = cal_kernel_find("lm_head_train");
  if (res->dtype != CAL_DTYPE_BF16) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32, as the layers (%s)", f32);
  } else if (res->engine != CAL_ENGINE_ONEDNN) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32 (%s): the layers' bf16 products run on %s, the bf16 head "
             "on oneDNN only", f32, cal_engine_name(res->engine));
  } else if (k16->supported(NULL, &why) < 0) {
    snprintf(res->head_why, sizeof res->head_why,
             "fp32 (%s): oneDNN cannot run bf16 here (%s)", f32, why);
  } else {
    res->head = k16;
    snprintf(res->head_why, sizeof res->head_why,
             "bf16 mixed precision on oneDNN, as the layers' products");
  }
}

/* The whole model's parameters and training state, by the one memory
 * model (mem_model.h): the layers, the embedding and the LM head (counted
 * as two matrices, as in an untied model) and the final norm, all trained
 * with AdamW's full set (18 bytes a parameter in bf16, 16 in fp32).  With
 * LoRA the layers' weights are frozen (their dtype's bytes only) and each
 * layer's adapters (fp32) carry that state; the embedding, head and norm
 * are counted as trained, as the LM head's measured step is a full one. */
void cal_sweep_model_state(const cal_sweep_opts_t *o, cal_batch_result_t *res) {
  cal_layer_shape_t s = {o->hidden, o->heads, o->kv_heads, o->ffn, o->seq, 1,
                         0, 0, 0, 0};
  res->layers = o->layers > 0 ? o->layers : 1;
  res->vocab = o->vocab > 1 ? o->vocab : 2;
  res->layer_params = cal_layer_weight_bytes(&s) / 4.0; /* fp32: 4 bytes */
  res->model_params_head = (double)res->vocab * (double)o->hidden;
  res->model_params = (double)res->layers * res->layer_params +
                      2.0 * res->model_params_head + (double)o->hidden;
  res->lora_rank = o->lora_rank;
  res->lora_params = 0;
  if (res->lora_rank > 0) {
    s.lora_rank = o->lora_rank;
    res->lora_params = (double)res->layers * cal_lora_layer_params(&s);
  }
  res->model_state_bytes = state_of(res, (double)res->layers,
                                    (double)o->hidden, 1, CAL_MEM_TRAINED);
}

/* The headline's mode: --workload's (wm >= 0) when it has an optimal
 * batch; else the training step (the workload users tune) when it has
 * one, else prefill (the forward pass), else decode; and why, naming what
 * was passed over. */
void cal_sweep_top_mode(cal_batch_result_t *res, int wm) {
  static const int order[3] = {2, 0, 1};
  static const char *const what[CAL_BATCH_NMODES] = {
      "prefill, the model's forward pass", "decode, one new token a sequence",
      "the training step, the workload users tune",
      "the inference workload (--workload inference)",
      "the DPO step (--workload dpo)", "the GRPO step (--workload grpo)"};
  char passed[160] = "";
  res->top_mode = -1;
  if (wm >= 0) {
    const cal_batch_mode_t *m = &res->modes[wm];
    if (res->ran[wm] && m->curve && m->curve->optimal_batch_size > 0) {
      res->top_mode = wm;
      snprintf(res->top_why, sizeof res->top_why, "%s",
               wm == 2 ? "the training step (--workload sft)" : what[wm]);
    } else {
      snprintf(res->top_why, sizeof res->top_why,
               "--workload %s has no optimal batch (its points were "
               "skipped, failed, contaminated, swapped or their threads "
               "did not run side by side)", res->workload);
    }
    return;
  }
  for (int i = 0; i < 3 && res->top_mode < 0; i++) {
    int m = order[i];
    if (!res->ran[m])
      continue;
    if (res->modes[m].curve && res->modes[m].curve->optimal_batch_size > 0) {
      res->top_mode = m;
      break;
    }
    size_t n = strlen(passed);
    snprintf(passed + n, sizeof passed - n, "%s%s", n ? " nor " : "",
             res->modes[m].name);
  }
  if (res->top_mode < 0)
    snprintf(res->top_why, sizeof res->top_why,
             "no mode has an optimal batch (its points were skipped, failed, "
             "contaminated, swapped or their threads did not run side by "
             "side)");
  else
    snprintf(res->top_why, sizeof res->top_why, "%s%s%s%s",
             what[res->top_mode], passed[0] ? " (" : "", passed,
             passed[0] ? " ran but has no optimal batch)" : "");
}
