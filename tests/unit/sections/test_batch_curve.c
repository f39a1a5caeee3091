/* The batch sweep's samples as throughput and its curve
 * (sections/batch_curve.c): a measured point's examples/s and tokens/s
 * from its step times, a train step built of layers and the LM head, a
 * point that was not measured, and the analysis of a mode's points (peak,
 * batch-1 latency, the recommendation), never from a point that swapped
 * or whose threads did not run side by side; the training step's
 * distinct layers, the modes' time budgets and a decode step's expected
 * growth (batch_plan.c).
 * covers: calibrator/sections/batch_plan.c
 * covers: calibrator/sections/batch_curve.c */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "batch_sweep.h"
#include "cal_err.h"
#include "layer.h"
#include "layer_train.h"
#include "options.h"
#include "test_util.h"

typedef struct {
  cal_opts_t opt;
  cal_run_t run;
  cal_batch_result_t res;
  sweep_t s;
} fixture_t;

/* A prefill sweep of sequence 128 at a 95% confidence level. */
static void fixture_init(fixture_t *f) {
  memset(f, 0, sizeof *f);
  f->opt.sweep.seq = 128;
  f->opt.sweep.tolerance = 0.05;
  f->opt.hcfg.ci_level = 0.95;
  f->run.opt = &f->opt;
  f->res.layers = 4;
  f->s.r = &f->run;
  f->s.res = &f->res;
  f->s.m = &f->res.modes[0];
  f->s.mem_read_gbps = NAN;
}

/* A harness point of the given step times (seconds), owned samples. */
static void timed_point(cal_point_t *pt, const double *secs, size_t n,
                        int64_t layers) {
  memset(pt, 0, sizeof *pt);
  pt->status = CAL_POINT_OK;
  pt->params.layers = layers;
  pt->flops = 1e9;
  pt->m.n = n;
  pt->m.samples_s = malloc(n * sizeof *pt->m.samples_s);
  assert_non_null(pt->m.samples_s);
  memcpy(pt->m.samples_s, secs, n * sizeof *secs);
  assert_int_equal(cal_summarize(pt->m.samples_s, n, 0.95, &pt->m.time), 0);
}

static void point_free(cal_batch_point_t *bp) {
  free(bp->examples_per_s);
  cal_point_free(&bp->pt);
}

static void measured_point(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const double secs[] = {0.1, 0.2, 0.4};
  cal_point_t pt;
  timed_point(&pt, secs, 3, 1);
  cal_batch_point_t bp = {.batch = 4};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, NULL, NULL), 0);
  assert_true(bp.measured);
  assert_null(pt.m.samples_s); /* taken, not copied */
  assert_int_equal(bp.n, 3);
  assert_double_equal(bp.examples_per_s[0], 40, 1e-9);
  assert_double_equal(bp.examples_per_s[2], 10, 1e-9);
  assert_double_equal(bp.examples.median, 20, 1e-9);
  assert_double_equal(bp.tokens.median, 20 * 128, 1e-6);
  assert_double_equal(bp.step_ms, 0, 0); /* not a train point */
  point_free(&bp);
  /* decode: one token per example, the read rate over the bandwidth */
  f.s.decode = 1;
  f.s.mem_read_gbps = 10;
  timed_point(&pt, secs, 3, 1);
  bp = (cal_batch_point_t){.batch = 4, .read_bytes = 4e9};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, NULL, NULL), 0);
  assert_double_equal(bp.tokens.median, 20, 1e-9);
  assert_double_equal(bp.read_gbps, 20, 1e-9);
  assert_double_equal(bp.bw_efficiency, 2, 1e-9);
  point_free(&bp);
}

/* Train: sample j of the model's step is layers / measured layers times
 * the stack's sample j plus the LM head's, as many as both have. */
static void train_step(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  f.s.train = 1;
  const double stack[] = {0.01, 0.02, 0.03}, head[] = {0.005, 0.005};
  cal_point_t pt, hp;
  timed_point(&pt, stack, 3, 2); /* 2 of the model's 4 layers measured */
  timed_point(&hp, head, 2, 1);
  cal_batch_point_t bp = {.batch = 2};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, &hp, NULL), 0);
  assert_int_equal(bp.n, 2);
  assert_int_equal(bp.layers_measured, 2);
  assert_double_equal(bp.examples_per_s[0], 2 / (2 * 0.01 + 0.005), 1e-9);
  assert_double_equal(bp.examples_per_s[1], 2 / (2 * 0.02 + 0.005), 1e-9);
  assert_double_equal(bp.head_ms, 5, 1e-9);
  assert_double_equal(bp.step_flops, 2 * 1e9 + 1e9, 0);
  assert_double_equal(bp.step_ms, 2 / bp.examples.median * 1e3, 1e-9);
  point_free(&bp);
  cal_point_free(&hp);
}

/* DPO: sample j is the train step's plus the reference forward's sample
 * j (as many as all three have); an example is a pair: its tokens are
 * its two sequences'. */
static void dpo_step(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  f.s.train = 1;
  f.s.dpo = 1;
  static const cal_kernel_t ref_kernel = {.name = "model_prefill"};
  f.s.ref = &ref_kernel;
  const double stack[] = {0.01, 0.02, 0.03}, head[] = {0.005, 0.005, 0.005},
               ref[] = {0.004, 0.006};
  cal_point_t pt, hp, rp;
  timed_point(&pt, stack, 3, 2); /* 2 of the model's 4 layers measured */
  timed_point(&hp, head, 3, 1);
  timed_point(&rp, ref, 2, 1);
  cal_batch_point_t bp = {.batch = 2};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, &hp, &rp), 0);
  assert_int_equal(bp.n, 2);
  assert_double_equal(bp.examples_per_s[0], 2 / (2 * 0.01 + 0.005 + 0.004), 1e-9);
  assert_double_equal(bp.examples_per_s[1], 2 / (2 * 0.02 + 0.005 + 0.006), 1e-9);
  assert_double_equal(bp.tokens.median, bp.examples.median * 2 * 128, 1e-6);
  assert_double_equal(bp.ref_ms, 5, 1e-9);
  assert_double_equal(bp.step_flops, 2 * 1e9 + 1e9 + 1e9, 0);
  point_free(&bp);
  cal_point_free(&hp);
  cal_point_free(&rp);
}

/* GRPO: the generation's samples take dpo's reference's place (kept as
 * generation_ms); an example is a prompt: its group's sequences of prompt
 * and generated tokens. */
static void grpo_step(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  f.s.train = 1;
  f.s.grpo = 1;
  f.res.group = 3;
  f.res.gen_len = 8;
  static const cal_kernel_t gen_kernel = {.name = "model_infer"};
  f.s.ref = &gen_kernel;
  const double stack[] = {0.01, 0.02}, head[] = {0.005, 0.005},
               gen[] = {0.1, 0.1};
  cal_point_t pt, hp, gp;
  timed_point(&pt, stack, 2, 4);
  timed_point(&hp, head, 2, 1);
  timed_point(&gp, gen, 2, 1);
  cal_batch_point_t bp = {.batch = 1};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, &hp, &gp), 0);
  assert_double_equal(bp.examples_per_s[0], 1 / (0.01 + 0.005 + 0.1), 1e-9);
  assert_double_equal(bp.tokens.median, bp.examples.median * 3 * (128 + 8), 1e-6);
  assert_double_equal(bp.gen_ms, 100, 1e-9);
  assert_double_equal(bp.ref_ms, 0, 0);
  point_free(&bp);
  cal_point_free(&hp);
  cal_point_free(&gp);
}

/* A point that was not measured keeps its status and reason only. */
static void skipped_point(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  cal_point_t pt;
  memset(&pt, 0, sizeof pt);
  pt.status = CAL_POINT_SKIPPED;
  snprintf(pt.reason, sizeof pt.reason, "needs 9 GiB, budget 1 GiB");
  cal_batch_point_t bp = {.batch = 64};
  assert_int_equal(cal_sweep_point_take(&f.s, &bp, &pt, NULL, NULL), 0);
  assert_false(bp.measured);
  assert_int_equal(bp.status, CAL_POINT_SKIPPED);
  assert_string_equal(bp.reason, "needs 9 GiB, budget 1 GiB");
  assert_null(bp.examples_per_s);
}

/* Measured points of batches 1, 2, 4, 8 at 100, 180, 300, 280
 * examples/s (rising, then falling), each at 2 threads, the first marked
 * not side by side when `np1`. */
static void four_points(fixture_t *f, cal_batch_point_t *pts, int np1) {
  static const int64_t batch[] = {1, 2, 4, 8};
  static const double rate[] = {100, 180, 300, 280}; /* examples/s */
  for (size_t i = 0; i < 4; i++) {
    double secs[3];
    for (int j = 0; j < 3; j++)
      secs[j] = (double)batch[i] / rate[i] * (1 + 0.001 * j);
    cal_point_t pt;
    timed_point(&pt, secs, 3, 1);
    pt.params.threads = 2;
    if (i == 0 && np1)
      snprintf(pt.not_parallel, sizeof pt.not_parallel,
               "cpu time 1.0 x wall, below 0.8 x 2 threads");
    pts[i].batch = batch[i];
    assert_int_equal(cal_sweep_point_take(&f->s, &pts[i], &pt, NULL, NULL), 0);
    assert_int_equal(cal_sweep_point_headline(&pts[i]), !(i == 0 && np1));
  }
}

/* The mode's curve over its n points (analysed). */
static const cal_curve_result_t *analyzed(fixture_t *f, cal_batch_point_t *pts,
                                          size_t n) {
  f->s.m->points = pts;
  f->s.m->npoints = n;
  assert_int_equal(cal_sweep_analyze(&f->s), 0);
  assert_non_null(f->s.m->curve);
  return f->s.m->curve;
}

/* The mode's curve and its first n points freed. */
static void mode_free(fixture_t *f, cal_batch_point_t *pts, size_t n) {
  cal_curve_result_free(f->s.m->curve);
  for (size_t i = 0; i < n; i++)
    point_free(&pts[i]);
}

/* A mode of batches 1, 2, 4, 8 (rising, then falling) and one skipped:
 * the curve's peak, the latency at batch 1, and the recommendation for
 * an effective batch of 32. */
static void mode_analysis(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  f.opt.sweep.target_effective_batch = 32;
  cal_batch_point_t pts[5];
  memset(pts, 0, sizeof pts);
  four_points(&f, pts, 0);
  pts[4].batch = 16;
  pts[4].status = CAL_POINT_SKIPPED;
  const cal_curve_result_t *c = analyzed(&f, pts, 5);
  assert_int_equal(c->peak_batch_size, 4);
  assert_double_equal(c->peak_median, 300 / 1.001, 1e-6);
  assert_double_equal(f.s.m->latency_ms_batch_1, 10 * 1.001, 1e-9);
  assert_true(f.s.m->have_rec);
  assert_true(f.s.m->time_s >= 0);
  mode_free(&f, pts, 4);
}

/* A point whose threads did not run side by side (its own, or a train
 * point's LM head's) or during which the process swapped is kept with its
 * figures but is never the peak, the knee, the optimum nor the batch-1
 * latency: here only batch 2 may be, and it is all of them. */
static void not_headline_points(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  cal_batch_point_t pts[4];
  memset(pts, 0, sizeof pts);
  four_points(&f, pts, 1);
  /* batch 4's LM head did not run side by side (a train point) */
  f.s.train = 1;
  const double stack[] = {0.01, 0.01}, head[] = {0.005, 0.005};
  cal_point_t lp, hp;
  timed_point(&lp, stack, 2, 4);
  timed_point(&hp, head, 2, 1);
  lp.cpu_s = 0.04, lp.wall_s = 0.02;
  hp.cpu_s = 0.01, hp.wall_s = 0.01;
  snprintf(hp.not_parallel, sizeof hp.not_parallel, "two threads on CPU 0");
  cal_batch_point_t tp = {.batch = 4};
  assert_int_equal(cal_sweep_point_take(&f.s, &tp, &lp, &hp, NULL), 0);
  assert_string_equal(tp.pt.not_parallel, "LM head: two threads on CPU 0");
  assert_double_equal(tp.pt.cpu_s, 0.05, 1e-12); /* the whole step's */
  assert_double_equal(tp.pt.wall_s, 0.03, 1e-12);
  assert_false(cal_sweep_point_headline(&tp));
  cal_point_free(&hp);
  snprintf(pts[2].pt.not_parallel, sizeof pts[2].pt.not_parallel, "%s",
           tp.pt.not_parallel);
  point_free(&tp);
  f.s.train = 0;
  pts[3].mem.swapped = 1; /* batch 8 */
  assert_false(cal_sweep_point_headline(&pts[3]));
  f.s.m->latency_ms_batch_1 = NAN; /* as the sweep starts a mode */
  const cal_curve_result_t *c = analyzed(&f, pts, 4);
  assert_int_equal(c->peak_batch_size, 2);
  assert_int_equal(c->optimal_batch_size, 2);
  assert_int_equal(c->knee_batch_size, 2);
  assert_true(isnan(f.s.m->latency_ms_batch_1));
  mode_free(&f, pts, 4);
}

/* The training step's distinct layers: the model's depth where its stack
 * fits the memory budget; else the fewest whose weights exceed 4 x the
 * last-level cache, as many as fit; at least one. */
static void train_depth(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  const cal_layer_preset_t *t = cal_layer_preset_find("tiny");
  cal_sweep_opts_t *o = &f.opt.sweep;
  o->hidden = t->hidden, o->heads = t->heads, o->kv_heads = t->kv_heads;
  o->ffn = t->ffn, o->seq = t->seq;
  f.res.layers = 24;
  f.s.train = 1;
  f.s.k = cal_kernel_find("layer_train");
  assert_non_null(f.s.k);
  cal_layer_shape_t sh = {t->hidden, t->heads, t->kv_heads, t->ffn, t->seq,
                          1, 0, 0, 0, 0};
  const double w = cal_layer_weight_bytes(&sh);
  cal_params_t p;
  f.s.llc = 1048576;
  f.s.mem_budget = 1e12;
  cal_sweep_shape(&f.s, 0, 1, &p);
  assert_int_equal(p.layers, 24); /* the whole depth fits */
  f.s.mem_budget = cal_train_stack_mem_bytes(&sh, 23);
  cal_sweep_shape(&f.s, 0, 1, &p);
  assert_int_equal(p.layers, (int64_t)floor(4.0 * 1048576 / w) + 1);
  assert_true(p.layers * w > 4.0 * 1048576 && (p.layers - 1) * w <= 4.0 * 1048576);
  f.s.mem_budget = cal_train_stack_mem_bytes(&sh, 3);
  cal_sweep_shape(&f.s, 0, 1, &p);
  assert_int_equal(p.layers, 3); /* as many as fit */
  f.s.llc = 0; /* unknown: as many as fit */
  f.s.mem_budget = cal_train_stack_mem_bytes(&sh, 10);
  cal_sweep_shape(&f.s, 0, 1, &p);
  assert_int_equal(p.layers, 10);
  f.s.mem_budget = 1.0;
  cal_sweep_shape(&f.s, 0, 1, &p);
  assert_int_equal(p.layers, 1);
}

/* The modes' time: 20/20/60 of the section for prefill, decode and train
 * in that order; what a mode left goes to those after it; one that ran
 * over takes nothing from the next's share of the whole. */
static void mode_budget(void **state) {
  (void)state;
  const int all3 = 1 | 2 | 4;
  assert_float_equal(cal_sweep_mode_budget(110, 0, all3, 0), 22.0, 1e-9);
  /* prefill took 10 s: decode a quarter of the 100 s left */
  assert_float_equal(cal_sweep_mode_budget(110, 10, all3, 1), 25.0, 1e-9);
  /* prefill took 37 s: decode keeps its 22 s (a quarter of 73 is less) */
  assert_float_equal(cal_sweep_mode_budget(110, 37, all3, 1), 22.0, 1e-9);
  /* train: all of what is left, at least 60% of the whole */
  assert_float_equal(cal_sweep_mode_budget(110, 30, all3, 2), 80.0, 1e-9);
  assert_float_equal(cal_sweep_mode_budget(110, 60, all3, 2), 66.0, 1e-9);
  /* a mode alone takes all of it; one that does not run, none */
  assert_float_equal(cal_sweep_mode_budget(110, 0, 2, 1), 110.0, 1e-9);
  assert_float_equal(cal_sweep_mode_budget(110, 0, 1 | 4, 1), 0.0, 0);
  /* prefill and train: a quarter and three quarters */
  assert_float_equal(cal_sweep_mode_budget(20, 0, 1 | 4, 0), 5.0, 1e-9);
  /* never under a second */
  assert_float_equal(cal_sweep_mode_budget(2, 0, all3, 0), 1.0, 1e-9);
}

/* A decode step at 4x the batch: its read the same, its arithmetic 4x;
 * a step that is all arithmetic, or whose arithmetic is not known, 4x. */
static void step_at(void **state) {
  (void)state;
  /* 69 ms at batch 1, 5.8 ms of it arithmetic: batch 4 at 86.4 ms */
  assert_float_equal(cal_sweep_step_at(0.069, 0.0058, 4.0), 0.0864, 1e-12);
  assert_float_equal(cal_sweep_step_at(0.069, 0.069, 4.0), 0.276, 1e-12);
  assert_float_equal(cal_sweep_step_at(0.069, 0.1, 4.0), 0.276, 1e-12);
  assert_float_equal(cal_sweep_step_at(0.069, NAN, 4.0), 0.276, 1e-12);
  assert_float_equal(cal_sweep_step_at(0.069, 0.0058, 1.0), 0.069, 1e-12);
}

CAL_TEST_MAIN(
    cmocka_unit_test(measured_point),
    cmocka_unit_test(train_step),
    cmocka_unit_test(dpo_step),
    cmocka_unit_test(grpo_step),
    cmocka_unit_test(skipped_point),
    cmocka_unit_test(mode_analysis),
    cmocka_unit_test(not_headline_points),
    cmocka_unit_test(train_depth),
    cmocka_unit_test(mode_budget),
    cmocka_unit_test(step_at))
