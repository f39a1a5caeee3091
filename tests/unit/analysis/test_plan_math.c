/* calibrate plan: the arithmetic (plan_math.h) and the command end to end
 * on profiles derived from tests/data/profile_a.json.
 * covers: calibrator/commands/plan.c */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cal_err.h"
#include "cal_mem.h"
#include "cal_exit.h"
#include "machine_names.h"
#include "subcommands.h"
#include "plan.h"
#include "plan_json.h"
#include "plan_render.h"
#include "plan_math.h"
#include "stats.h"
#include "test_fs.h"
#include "test_util.h"

static uint64_t sum_counts(const cal_split_entry_t *e, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++)
    s += e[i].count;
  return s;
}

/* The guide's two machines: 3.86 and 0.76 examples/s. */
static void split_guide_shares(void **state) {
  (void)state;
  const double t[] = {3.86, 0.76};
  cal_split_entry_t e[2];
  cal_split_t s;
  assert_int_equal(cal_plan_split(t, 2, 1000, e, &s), 0);
  assert_double_equal(100 * e[0].share, 83.55, 0.005);
  assert_double_equal(100 * e[1].share, 16.45, 0.005);
  assert_double_equal(e[0].share + e[1].share, 1.0, 1e-12);
  /* quotas 835.497 and 164.502: the spare example goes to the larger
   * remainder */
  assert_int_equal(e[0].count, 835);
  assert_int_equal(e[1].count, 165);
  assert_double_equal(e[0].finish_s, 835 / 3.86, 1e-9);
  assert_double_equal(e[1].finish_s, 165 / 0.76, 1e-9);
  assert_double_equal(s.makespan_s, 165 / 0.76, 1e-9);
  /* even split: 500 each, the slow one decides */
  assert_double_equal(s.even_makespan_s, 500 / 0.76, 1e-9);
  assert_double_equal(s.speedup, (500 / 0.76) / (165 / 0.76), 1e-9);
  assert_true(s.heterogeneous);
  assert_double_equal(s.ratio, 3.86 / 0.76, 1e-12);
  assert_false(e[0].straggler);
  assert_true(e[1].straggler);
  assert_int_equal(s.n_stragglers, 1);
  /* without a count: continuous speedup sum / (k × min) */
  assert_int_equal(cal_plan_split(t, 2, 0, e, &s), 0);
  assert_double_equal(s.speedup, 4.62 / (2 * 0.76), 1e-12);
  assert_int_equal(e[0].count + e[1].count, 0);
}

static void split_largest_remainder(void **state) {
  (void)state;
  cal_split_entry_t e[4];
  cal_split_t s;
  /* quotas 7/6, 14/6, 21/6 = 1.17 2.33 3.5: the half wins */
  const double a[] = {1, 2, 3};
  assert_int_equal(cal_plan_split(a, 3, 7, e, &s), 0);
  assert_int_equal(e[0].count, 1);
  assert_int_equal(e[1].count, 2);
  assert_int_equal(e[2].count, 4);
  /* equal machines, 10 examples: 3.33 each, one spare to the lowest index */
  const double b[] = {2, 2, 2};
  assert_int_equal(cal_plan_split(b, 3, 10, e, &s), 0);
  assert_int_equal(e[0].count, 4);
  assert_int_equal(e[1].count, 3);
  assert_int_equal(e[2].count, 3);
  assert_false(s.heterogeneous);
  assert_double_equal(s.speedup, 1.0, 1e-12);
  /* equal remainders (0.5, 0.5): the faster machine takes the spare */
  const double c[] = {1, 3};
  assert_int_equal(cal_plan_split(c, 2, 2, e, &s), 0);
  assert_int_equal(e[0].count, 0);
  assert_int_equal(e[1].count, 2);
  /* many random sets: always exact, each within one of its quota */
  cal_rng_t r;
  cal_rng_seed(&r, 42);
  for (int trial = 0; trial < 2000; trial++) {
    double t[4];
    for (int i = 0; i < 4; i++)
      t[i] = 0.01 + 100 * cal_rng_uniform(&r);
    uint64_t n = 1 + cal_rng_next(&r) % 100000;
    assert_int_equal(cal_plan_split(t, 4, n, e, &s), 0);
    assert_int_equal(sum_counts(e, 4), n);
    for (int i = 0; i < 4; i++)
      assert_true(fabs((double)e[i].count - e[i].share * (double)n) < 1.0);
    assert_true(s.speedup >= 1.0 - 1e-12);
  }
}

static void split_excludes_unusable(void **state) {
  (void)state;
  const double t[] = {5, 0, NAN, -1, 5, INFINITY};
  cal_split_entry_t e[6];
  cal_split_t s;
  assert_int_equal(cal_plan_split(t, 6, 101, e, &s), 0);
  assert_int_equal(s.n_usable, 2);
  assert_true(e[0].usable && e[4].usable);
  for (int i = 1; i < 4; i++) {
    assert_false(e[i].usable);
    assert_int_equal(e[i].count, 0);
    assert_double_equal(e[i].share, 0, 0);
  }
  assert_false(e[5].usable);
  assert_int_equal(e[0].count, 51);
  assert_int_equal(e[4].count, 50);
  assert_int_equal(sum_counts(e, 6), 101);
}

static void split_single_machine(void **state) {
  (void)state;
  const double t[] = {2.5};
  cal_split_entry_t e[1];
  cal_split_t s;
  assert_int_equal(cal_plan_split(t, 1, 10, e, &s), 0);
  assert_int_equal(e[0].count, 10);
  assert_double_equal(e[0].share, 1.0, 0);
  assert_double_equal(e[0].finish_s, 4.0, 1e-12);
  assert_double_equal(s.makespan_s, 4.0, 1e-12);
  assert_double_equal(s.speedup, 1.0, 1e-12);
  assert_false(s.heterogeneous);
  assert_int_equal(s.n_stragglers, 0);
}

static void split_no_usable_machine(void **state) {
  (void)state;
  const double t[] = {0, NAN};
  cal_split_entry_t e[2];
  cal_split_t s;
  assert_int_equal(cal_plan_split(t, 2, 10, e, &s), CAL_EINVAL);
  assert_int_equal(s.n_usable, 0);
  assert_int_equal(cal_plan_split(t, 0, 10, e, &s), CAL_EINVAL);
}

/* Issue 14: 2^64 - 1 examples wrote out of bounds, 2^63 - 1 overflowed a
 * signed count.  The largest count taken (2^53) splits exactly; one more
 * is refused. */
static void split_huge_counts(void **state) {
  (void)state;
  /* 1e-200: a share of almost nothing whose even-split time is still a
   * number (1e-300 makes it overflow: refused, see split_not_finite) */
  const double t[] = {776, 278, 1e-200, 3};
  cal_split_entry_t e[4];
  cal_split_t s;
  const uint64_t max = (uint64_t)CAL_PLAN_MAX_EXAMPLES;
  assert_int_equal(cal_plan_split(t, 4, max, e, &s), 0);
  uint64_t sum = 0;
  for (int i = 0; i < 4; i++) {
    assert_true(e[i].count <= max);
    sum += e[i].count;
  }
  assert_true(sum == max);
  assert_int_equal(cal_plan_split(t, 4, max + 1, e, &s), CAL_EINVAL);
  assert_int_equal(cal_plan_split(t, 4, UINT64_MAX, e, &s), CAL_EINVAL);
  assert_int_equal(cal_plan_split(t, 4, (uint64_t)INT64_MAX, e, &s),
                   CAL_EINVAL);
}

/* Issue 27: two throughputs of 1e308 overflowed the sum, every share was
 * 0 and the remainder loop handed out 2^53 examples one a turn; 1e-320
 * printed "nan s"; figures near 2^63 overflowed a signed product. */
static void split_not_finite(void **state) {
  (void)state;
  cal_split_entry_t e[2];
  cal_split_t s;
  const double big[] = {1e308, 1e308}, tiny[] = {1e-320, 1e-320},
               apart[] = {1e-320, 5}, slow[] = {1e-300, 5};
  const uint64_t max = (uint64_t)CAL_PLAN_MAX_EXAMPLES;
  assert_int_equal(cal_plan_split(big, 2, max, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(big, 2, 1000, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(tiny, 2, 1000, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(tiny, 2, 0, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(apart, 2, 1000, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(slow, 2, max, e, &s), CAL_EPARSE);
  assert_int_equal(cal_plan_split(slow, 2, 1000, e, &s), 0);
  cal_act_shape_t sh = {.hidden = INT64_MAX, .heads = 14, .kv_heads = 14,
                        .head_dim = INT64_MAX, .ffn = INT64_MAX,
                        .seq = INT64_MAX, .layers = INT64_MAX};
  cal_act_est_t a;
  assert_int_equal(cal_act_model(&sh, 2, 8, &a), 0);
  assert_true(a.full_bytes > 1e38);
  assert_true(cal_lora_params(&sh, INT64_MAX) > 1e38);
}

/* Issue 14: a device name holding '|' or a newline broke the markdown
 * table; control characters reached the terminal. */
static void names_as_cells(void **state) {
  (void)state;
  char buf[64];
  cal_text_cell(buf, sizeof buf, "a|b\n*c*\x1b[2J", 1);
  assert_string_equal(buf, "a\\|b \\*c\\* \\[2J");
  cal_text_cell(buf, sizeof buf, "a|b\n\x1b", 0);
  assert_string_equal(buf, "a|b  ");
  cal_text_cell(buf, 4, "||||", 1); /* cut at a whole escape */
  assert_string_equal(buf, "\\|");
}

/* Issue 17: machines are named by file or host, never by a brand string
 * two of them share (the rule plan, plot and report use). */
static void machine_names_rule(void **state) {
  (void)state;
  static const char *const own[] = {"Xeon", "Xeon", "gpu-box", NULL, "Xeon"};
  static const char *const paths[] = {"runs/host-a.json", "b/host-b.json",
                                      "gpu.csv", "x/anon.json", "-"};
  char **got = NULL;
  assert_int_equal(cal_machine_names(own, paths, 5, &got), 0);
  assert_string_equal(got[0], "host-a"); /* shared: the file's name */
  assert_string_equal(got[1], "host-b");
  assert_string_equal(got[2], "gpu-box"); /* its own: no other has it */
  assert_string_equal(got[3], "anon");   /* none: the file's name */
  assert_string_equal(got[4], "Xeon");   /* stdin has no file name */
  cal_machine_names_free(got, 5);
  /* one file name in two folders: the paths */
  static const char *const same[] = {"Xeon", "Xeon"};
  static const char *const twice[] = {"a/run.json", "b/run.json"};
  assert_int_equal(cal_machine_names(same, twice, 2, &got), 0);
  assert_string_equal(got[0], "a/run.json");
  assert_string_equal(got[1], "b/run.json");
  cal_machine_names_free(got, 2);
  /* a file name that is another machine's own name: the path */
  static const char *const mixed[] = {"Xeon", "Xeon", "box"};
  static const char *const files[] = {"d/box.json", "d/c.json", "e.csv"};
  assert_int_equal(cal_machine_names(mixed, files, 3, &got), 0);
  assert_string_equal(got[0], "d/box.json");
  assert_string_equal(got[1], "c");
  assert_string_equal(got[2], "box");
  cal_machine_names_free(got, 3);
}

static void split_flags(void **state) {
  (void)state;
  cal_split_entry_t e[3];
  cal_split_t s;
  const double close[] = {100, 110}; /* exactly 10% apart: not flagged */
  assert_int_equal(cal_plan_split(close, 2, 0, e, &s), 0);
  assert_false(s.heterogeneous);
  const double apart[] = {100, 111};
  assert_int_equal(cal_plan_split(apart, 2, 0, e, &s), 0);
  assert_true(s.heterogeneous);
  assert_int_equal(s.n_stragglers, 0);
  /* mean 90: below 72 is a straggler */
  const double slow[] = {100, 100, 70};
  assert_int_equal(cal_plan_split(slow, 3, 0, e, &s), 0);
  assert_true(e[2].straggler);
  assert_false(e[0].straggler || e[1].straggler);
  /* mean 91.67: 75 is above 73.3 */
  const double ok[] = {100, 100, 75};
  assert_int_equal(cal_plan_split(ok, 3, 0, e, &s), 0);
  assert_int_equal(s.n_stragglers, 0);
  assert_true(s.heterogeneous);
}

static void batch_for_target(void **state) {
  (void)state;
  cal_batch_plan_t b;
  assert_int_equal(cal_plan_batch(32, 64, &b), 0);
  assert_int_equal(b.micro_batch, 32);
  assert_int_equal(b.accum_steps, 2);
  assert_int_equal(b.kind, CAL_BATCH_EXACT);
  assert_int_equal(cal_plan_batch(6, 64, &b), 0); /* 6 ∤ 64: 4 × 16 */
  assert_int_equal(b.micro_batch, 4);
  assert_int_equal(b.accum_steps, 16);
  assert_int_equal(b.kind, CAL_BATCH_DIVISOR);
  assert_int_equal(cal_plan_batch(7, 13, &b), 0); /* 13 prime: 1 × 13 */
  assert_int_equal(b.micro_batch, 1);
  assert_int_equal(b.accum_steps, 13);
  assert_int_equal(cal_plan_batch(64, 48, &b), 0);
  assert_int_equal(b.micro_batch, 48);
  assert_int_equal(b.accum_steps, 1);
  assert_int_equal(b.kind, CAL_BATCH_CAPPED);
  assert_int_equal(cal_plan_batch(4, 4, &b), 0);
  assert_int_equal(b.kind, CAL_BATCH_EXACT);
  assert_int_equal(cal_plan_batch(0, 4, &b), CAL_EINVAL);
  assert_int_equal(cal_plan_batch(4, 0, &b), CAL_EINVAL);
}

static void parse_names(void **state) {
  (void)state;
  cal_dtype_t d;
  cal_training_t t;
  assert_int_equal(cal_dtype_parse("fp16", &d), 0);
  assert_int_equal(d, CAL_DT_FP16);
  assert_string_equal(cal_dtype_name(d), "fp16");
  assert_int_equal(cal_dtype_parse("FP16", &d), CAL_EINVAL);
  assert_int_equal(cal_dtype_parse("fp64", &d), CAL_EINVAL);
  assert_int_equal(cal_training_parse("lora", &t), 0);
  assert_string_equal(cal_training_name(t), "lora");
  assert_int_equal(cal_training_parse("qlora", &t), CAL_EINVAL);
}

static void shard_greedy(void **state) {
  (void)state;
  const double budget[] = {10e9, 30e9, 20e9, 30e9};
  size_t order[4], n;
  assert_int_equal(cal_plan_shard(budget, 4, 45e9, order, &n), 1);
  assert_int_equal(n, 2);
  assert_int_equal(order[0], 1); /* ties: lower index first */
  assert_int_equal(order[1], 3);
  assert_int_equal(cal_plan_shard(budget, 4, 25e9, order, &n), 1);
  assert_int_equal(n, 1);
  assert_int_equal(cal_plan_shard(budget, 4, 100e9, order, &n), 0);
  assert_int_equal(n, 4);
  assert_int_equal(order[3], 0);
  /* issue 49: a plan of 10,000 machines hung (the choice was O(n^3));
   * 200,000 now, largest first, ties by index, NaN last */
  enum { M = 200000 };
  double *big = malloc(M * sizeof *big);
  size_t *ord = malloc(M * sizeof *ord);
  assert_non_null(big);
  assert_non_null(ord);
  for (size_t i = 0; i < M; i++)
    big[i] = (double)(i % 1000);
  big[5] = NAN;
  assert_int_equal(cal_plan_shard(big, M, 1e12, ord, &n), 0);
  assert_int_equal(n, M);
  assert_int_equal(ord[0], 999);
  assert_int_equal(ord[1], 1999);
  assert_int_equal(ord[M - 1], 5);
  assert_int_equal(cal_plan_shard(big, M, 2500, ord, &n), 1);
  assert_int_equal(n, 3);
  free(big);
  free(ord);
}

/* Issue 15: two runs of one VM, 56.6 and 90.1 examples/s, were called
 * heterogeneous and the slower a straggler; their intervals overlap. */
static void split_ci_flags(void **state) {
  (void)state;
  cal_split_entry_t e[3];
  cal_split_t s;
  const double t[] = {56.6, 90.1};
  const double lo[] = {51.9, 58.0}, hi[] = {60.7, 99.0};
  /* points alone: 1.59x apart, 56.6 below 0.8 x mean 73.35 = 58.68 */
  assert_int_equal(cal_plan_split(t, 2, 0, e, &s), 0);
  assert_true(s.heterogeneous);
  assert_true(e[0].straggler);
  /* with the intervals: they overlap, and 60.7 is above 58.68 */
  assert_int_equal(cal_plan_split_ci(t, lo, hi, 2, 1000, e, &s), 0);
  assert_false(s.heterogeneous);
  assert_true(s.ratio_exceeded);
  assert_double_equal(s.ratio, 90.1 / 56.6, 1e-12);
  assert_false(e[0].straggler);
  assert_true(e[0].slow_point);
  assert_int_equal(s.n_stragglers, 0);
  /* the shares do not depend on the intervals */
  assert_double_equal(e[0].share, 56.6 / 146.7, 1e-12);
  /* intervals apart: heterogeneous again */
  const double lo2[] = {51.9, 85.0}, hi2[] = {60.7, 95.0};
  assert_int_equal(cal_plan_split_ci(t, lo2, hi2, 2, 0, e, &s), 0);
  assert_true(s.heterogeneous);
  /* touching at one point is overlap */
  const double lo3[] = {51.9, 60.7};
  assert_int_equal(cal_plan_split_ci(t, lo3, hi2, 2, 0, e, &s), 0);
  assert_false(s.heterogeneous);
  /* an interval that does not hold its point, or NaN, is not used */
  const double bad_lo[] = {57.0, NAN}, bad_hi[] = {60.7, NAN};
  assert_int_equal(cal_plan_split_ci(t, bad_lo, bad_hi, 2, 0, e, &s), 0);
  assert_true(s.heterogeneous);
  assert_true(e[0].straggler);
  /* a straggler whose whole interval is below the cut: mean 90, cut 72 */
  const double t3[] = {100, 100, 70}, lo4[] = {95, 95, 60},
               hi4[] = {105, 105, 71.9}, hi5[] = {105, 105, 72.5};
  assert_int_equal(cal_plan_split_ci(t3, lo4, hi4, 3, 0, e, &s), 0);
  assert_true(e[2].straggler);
  assert_int_equal(cal_plan_split_ci(t3, lo4, hi5, 3, 0, e, &s), 0);
  assert_false(e[2].straggler);
  assert_true(e[2].slow_point);
}

static void work_units_and_cost(void **state) {
  (void)state;
  uint64_t n;
  cal_work_t w = {.unit = CAL_WORK_NONE};
  assert_int_equal(cal_work_examples(&w, &n), 0);
  assert_int_equal(n, 0);
  w = (cal_work_t){.unit = CAL_WORK_EXAMPLES, .examples = 1234};
  assert_int_equal(cal_work_examples(&w, &n), 0);
  assert_int_equal(n, 1234);
  /* 2.5 epochs of 1001 examples: 2502.5, rounded up */
  w = (cal_work_t){.unit = CAL_WORK_EPOCHS, .epochs = 2.5,
                   .dataset_examples = 1001};
  assert_int_equal(cal_work_examples(&w, &n), 0);
  assert_int_equal(n, 2503);
  w = (cal_work_t){.unit = CAL_WORK_STEPS, .steps = 100, .global_batch = 64};
  assert_int_equal(cal_work_examples(&w, &n), 0);
  assert_int_equal(n, 6400);
  /* 2^40 steps of 2^14: 2^54 examples, past the limit */
  w = (cal_work_t){.unit = CAL_WORK_STEPS, .steps = (uint64_t)1 << 40,
                   .global_batch = (uint64_t)1 << 14};
  assert_int_equal(cal_work_examples(&w, &n), CAL_EINVAL);
  w.global_batch = (uint64_t)1 << 13; /* exactly 2^53 */
  assert_int_equal(cal_work_examples(&w, &n), 0);
  assert_true(n == (uint64_t)CAL_PLAN_MAX_EXAMPLES);
  w = (cal_work_t){.unit = CAL_WORK_EPOCHS, .epochs = 0,
                   .dataset_examples = 10};
  assert_int_equal(cal_work_examples(&w, &n), CAL_EINVAL);
  w = (cal_work_t){.unit = CAL_WORK_EPOCHS, .epochs = 1e10,
                   .dataset_examples = 1000000};
  assert_int_equal(cal_work_examples(&w, &n), CAL_EINVAL);
  assert_double_equal(cal_plan_cost(2.5, 7200), 5.0, 1e-12);
  assert_double_equal(cal_plan_cost(0, 7200), 0.0, 0);
}

/* A machine of the plan without a profile behind it. */
static cal_plan_machine_t machine(const char *name, double thr, double avail) {
  return (cal_plan_machine_t){.name = name, .path = name,
                              .source = CAL_PLAN_SRC_CSV, .throughput = thr,
                              .ci_low = NAN, .ci_high = NAN, .ci_level = NAN,
                              .optimal_batch = 8, .available = avail,
                              .price_per_hour = NAN};
}

static cal_plan_opts_t inference_opts(double params, cal_dtype_t dt) {
  cal_plan_opts_t o = {.dtype = dt, .training = CAL_TRAIN_INFERENCE,
                       .params = params};
  cal_mem_assume_default(o.training, &o.assume);
  return o;
}

/* The plan computed once (plan.h) and written as its JSON document
 * (plan_json.h); NULL with err filled when it cannot be made. */
static json_t *plan_doc(const cal_plan_opts_t *o, const cal_plan_machine_t *ms,
                        size_t n, char *err, size_t errlen) {
  cal_plan_t *p = NULL;
  if (cal_plan_compute(o, ms, n, &p, err, errlen) < 0)
    return NULL;
  json_t *doc = cal_plan_json(p);
  cal_plan_free(p);
  return doc;
}

static json_t *machine_at(json_t *plan, size_t i) {
  return json_array_get(json_object_get(plan, "machines"), i);
}

static double num_at(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  assert_true(json_is_number(v));
  return json_number_value(v);
}

/* Issue 15: with a 70B fp16 model the machine that cannot hold it still
 * got 65% of the work.  It gets none now; a machine whose memory is
 * unknown keeps its share; with no machine able to, nothing is split. */
static void plan_no_fit_rule(void **state) {
  (void)state;
  char err[256];
  /* 70e9 x 2 B = 140 GB of weights (+0.7 GB an example): 200 GB holds
   * it (budget 180), 64 GB does not (57.6) */
  cal_plan_machine_t ms[] = {machine("small", 1.86, 64e9),
                             machine("big", 1.0, 200e9),
                             machine("unknown", 1.0, 0)};
  cal_plan_opts_t o = inference_opts(70e9, CAL_DT_FP16);
  o.work = (cal_work_t){.unit = CAL_WORK_EXAMPLES, .examples = 1000};
  o.examples = 1000;
  json_t *p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_non_null(p);
  json_t *small = machine_at(p, 0), *big = machine_at(p, 1);
  assert_false(json_is_true(json_object_get(small, "in_split")));
  assert_double_equal(num_at(small, "share"), 0, 0);
  assert_int_equal(json_integer_value(json_object_get(small, "examples")), 0);
  assert_true(json_is_null(json_object_get(small, "finish_s")));
  assert_true(json_is_null(json_object_get(small, "alone_s")));
  assert_non_null(strstr(json_string_value(
                             json_object_get(small, "left_out_reason")),
                         "cannot hold the model"));
  assert_true(json_is_true(json_object_get(big, "in_split")));
  assert_double_equal(num_at(big, "share"), 1.0, 0);
  assert_int_equal(json_integer_value(json_object_get(big, "examples")), 1000);
  assert_double_equal(num_at(p, "makespan_s"), 1000.0, 1e-9);
  assert_int_equal(json_integer_value(json_object_get(p, "machines_in_split")),
                   1);
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(p, "placement"), "strategy")),
                      "fits_some");
  json_decref(p);

  /* memory unknown: kept in the split beside the one that fits */
  p = plan_doc(&o, ms, 3, err, sizeof err);
  assert_non_null(p);
  assert_true(json_is_true(json_object_get(machine_at(p, 2), "in_split")));
  assert_double_equal(num_at(machine_at(p, 2), "share"), 0.5, 1e-12);
  assert_double_equal(num_at(machine_at(p, 0), "share"), 0, 0);
  json_decref(p);

  /* full training of 70B (1.12 TB of state) fits neither: no split */
  o.training = CAL_TRAIN_FULL;
  cal_mem_assume_default(o.training, &o.assume);
  p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_non_null(p);
  assert_int_equal(json_integer_value(json_object_get(p, "machines_in_split")),
                   0);
  assert_true(json_is_string(json_object_get(p, "split_note")));
  assert_true(json_is_null(json_object_get(p, "makespan_s")));
  for (size_t i = 0; i < 2; i++)
    assert_double_equal(num_at(machine_at(p, i), "share"), 0, 0);
  assert_false(json_is_true(json_object_get(p, "heterogeneous")));
  json_decref(p);
}

/* Time per machine and for the split, and its cost, on given numbers. */
static void plan_time_and_cost(void **state) {
  (void)state;
  char err[256];
  cal_plan_machine_t ms[] = {machine("fast", 3.0, 0), machine("slow", 1.0, 0)};
  cal_plan_opts_t o = {.dtype = CAL_DT_BF16, .priced = 1};
  cal_mem_assume_default(CAL_TRAIN_FULL, &o.assume);
  /* 100 steps of 36 examples = 3600: 2700 and 900, 900 s each */
  o.work = (cal_work_t){.unit = CAL_WORK_STEPS, .steps = 100,
                        .global_batch = 36};
  assert_int_equal(cal_work_examples(&o.work, &o.examples), 0);
  ms[0].price_per_hour = 2.0;
  ms[1].price_per_hour = 1.0;
  json_t *p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_non_null(p);
  json_t *w = json_object_get(p, "work");
  assert_string_equal(json_string_value(json_object_get(w, "unit")), "steps");
  assert_int_equal(json_integer_value(json_object_get(p, "examples")), 3600);
  assert_double_equal(num_at(p, "makespan_s"), 900, 1e-9);
  json_t *f = machine_at(p, 0), *s = machine_at(p, 1);
  assert_int_equal(json_integer_value(json_object_get(f, "examples")), 2700);
  assert_double_equal(num_at(f, "finish_s"), 900, 1e-9);
  assert_double_equal(num_at(f, "alone_s"), 1200, 1e-9);
  assert_double_equal(num_at(s, "alone_s"), 3600, 1e-9);
  /* both held a quarter hour: 0.50 + 0.25 */
  assert_double_equal(num_at(f, "cost_usd"), 0.5, 1e-12);
  assert_double_equal(num_at(s, "cost_usd"), 0.25, 1e-12);
  assert_double_equal(num_at(p, "cost_usd"), 0.75, 1e-12);
  assert_double_equal(num_at(f, "alone_cost_usd"), 2.0 / 3, 1e-12);
  assert_double_equal(num_at(s, "alone_cost_usd"), 1.0, 1e-12);
  json_decref(p);

  /* a machine in the split without a price, while others have one */
  ms[1].price_per_hour = NAN;
  err[0] = '\0';
  assert_null(plan_doc(&o, ms, 2, err, sizeof err));
  assert_non_null(strstr(err, "no price for slow"));
  /* unpriced: no cost, times still there */
  o.priced = 0;
  p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_non_null(p);
  assert_true(json_is_null(json_object_get(p, "cost_usd")));
  assert_true(json_is_null(json_object_get(machine_at(p, 1), "cost_usd")));
  json_decref(p);
}

/* The CI-aware flags through the plan, with a note for the reader. */
static void plan_ci_flags(void **state) {
  (void)state;
  char err[256];
  cal_plan_machine_t ms[] = {machine("run1", 56.6, 0), machine("run2", 90.1, 0)};
  ms[0].ci_low = 51.9, ms[0].ci_high = 60.7, ms[0].ci_level = 0.98;
  ms[1].ci_low = 58.0, ms[1].ci_high = 99.0, ms[1].ci_level = 0.98;
  cal_plan_opts_t o = {.dtype = CAL_DT_BF16};
  cal_mem_assume_default(CAL_TRAIN_FULL, &o.assume);
  json_t *p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_non_null(p);
  assert_false(json_is_true(json_object_get(p, "heterogeneous")));
  assert_non_null(strstr(json_string_value(json_object_get(p,
                             "heterogeneous_note")), "overlap"));
  assert_int_equal(json_array_size(json_object_get(p, "stragglers")), 0);
  assert_double_equal(num_at(machine_at(p, 0), "throughput_ci_low"), 51.9, 0);
  json_decref(p);
  ms[1].ci_low = 85.0;
  p = plan_doc(&o, ms, 2, err, sizeof err);
  assert_true(json_is_true(json_object_get(p, "heterogeneous")));
  json_decref(p);
}

/* ---- the command ---- */

typedef struct edit {
  double throughput; /* NaN: null */
  const char *name;
  double avail;      /* 0: keep */
} edit_t;

static void apply_edit(json_t *root, void *arg) {
  const edit_t *e = arg;
  json_object_set_new(root, "throughput", isnan(e->throughput)
                                              ? json_null()
                                              : json_real(e->throughput));
  json_object_set_new(root, "device_name", json_string(e->name));
  if (e->avail > 0)
    json_object_set_new(
        json_object_get(json_object_get(root, "machine"), "memory"),
        "available_bytes", json_real(e->avail));
}

typedef struct fixture {
  char *dir;
  char *fast, *slow, *none, *out;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f || !(f->dir = test_scratch_dir()))
    return -1;
  const char *a = CAL_TEST_DATA "/profile_a.json";
  edit_t fast = {3.86, "fast box", 200e9}, slow = {0.76, "slow 'box'", 20e9},
         none = {NAN, "unmeasured", 0};
  f->fast = test_profile_variant(a, f->dir, "fast.json", apply_edit, &fast);
  f->slow = test_profile_variant(a, f->dir, "slow.json", apply_edit, &slow);
  f->none = test_profile_variant(a, f->dir, "none.json", apply_edit, &none);
  f->out = test_path(f->dir, "plan out.json");
  *state = f;
  return f->fast && f->slow && f->none && f->out ? 0 : -1;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  test_rm_rf(f->dir);
  test_free_each(f->dir, f->fast, f->slow, f->none, f->out, f);
  return 0;
}

static int run_plan(char **args, int n) {
  char *argv[32];
  argv[0] = (char *)"plan";
  for (int i = 0; i < n; i++)
    argv[i + 1] = args[i];
  argv[n + 1] = NULL;
  return cal_cmd_plan(n + 1, argv);
}

/* plan with args succeeds: the text of the file it wrote at out. */
static char *plan_text(char **args, int n, const char *out) {
  assert_int_equal(run_plan(args, n), CAL_EXIT_OK);
  char *text = test_read_file(out, NULL);
  assert_non_null(text);
  return text;
}

/* plan with args writes a text at out that has `has` and lacks `lacks`. */
static void expect_plan_text(char **args, int n, const char *out,
                             const char *has, const char *lacks) {
  char *text = plan_text(args, n, out);
  cal_assert_contains(text, has);
  assert_null(strstr(text, lacks));
  free(text);
}

/* plan with these arguments is refused with the usage exit. */
#define expect_plan_usage(...)                                               \
  do {                                                                       \
    char *a_[] = {__VA_ARGS__};                                              \
    assert_int_equal(run_plan(a_, (int)(sizeof a_ / sizeof *a_)),            \
                     CAL_EXIT_USAGE);                                        \
  } while (0)

static json_t *load_json(const char *path) {
  json_error_t e;
  return json_load_file(path, 0, &e);
}

/* plan with args exits rc and writes at out a JSON plan whose placement
 * (*pl) is `strategy`: the plan (json_decref it). */
static json_t *plan_placed(char **args, int n, int rc, const char *out,
                           const char *strategy, json_t **pl) {
  assert_int_equal(run_plan(args, n), rc);
  json_t *p = load_json(out);
  assert_non_null(p);
  *pl = json_object_get(p, "placement");
  assert_string_equal(json_string_value(json_object_get(*pl, "strategy")),
                      strategy);
  return p;
}

static void cli_json_plan(void **state) {
  fixture_t *f = *state;
  char *args[] = {f->fast, f->slow, f->none, "--examples", "1000",
                  "--target-effective-batch", "64", "--model-params", "7e9",
                  "--dtype", "bf16", "--training", "lora", "--format", "json",
                  "-o", f->out};
  assert_int_equal(run_plan(args, 17), CAL_EXIT_OK);
  json_t *p = load_json(f->out);
  assert_non_null(p);
  assert_string_equal(json_string_value(json_object_get(p, "schema")),
                      CAL_PLAN_SCHEMA);
  json_t *ms = json_object_get(p, "machines");
  assert_int_equal(json_array_size(ms), 2);
  json_t *m0 = json_array_get(ms, 0), *m1 = json_array_get(ms, 1);
  assert_string_equal(json_string_value(json_object_get(m1, "name")),
                      "slow 'box'");
  assert_double_equal(json_real_value(json_object_get(m0, "share")),
                      3.86 / 4.62, 1e-9);
  assert_int_equal(json_integer_value(json_object_get(m0, "examples")), 835);
  assert_int_equal(json_integer_value(json_object_get(m1, "examples")), 165);
  assert_true(json_is_true(json_object_get(p, "heterogeneous")));
  assert_int_equal(json_array_size(json_object_get(p, "stragglers")), 1);
  assert_int_equal(json_array_size(json_object_get(p, "excluded")), 1);
  /* optimal batch 32 in the profile: 32 × 2 on the fast machine */
  assert_int_equal(json_integer_value(json_object_get(m0, "micro_batch_size")),
                   32);
  assert_int_equal(json_integer_value(json_object_get(m0, "grad_accum_steps")),
                   2);
  /* LoRA needs 15.26 GB + activations: 200 GB holds it, 18 GB budget
   * (20 GB less 10%) holds the state and 10 examples: micro-batch shrinks
   * to the largest divisor of 64 that fits, 8 */
  json_t *mem1 = json_object_get(m1, "memory");
  assert_true(json_is_true(json_object_get(mem1, "fits")));
  assert_int_equal(json_integer_value(json_object_get(mem1, "max_batch_size")),
                   10);
  assert_int_equal(json_integer_value(json_object_get(m1, "micro_batch_size")),
                   8);
  assert_int_equal(json_integer_value(json_object_get(m1, "grad_accum_steps")),
                   8);
  json_t *pl = json_object_get(p, "placement");
  assert_string_equal(json_string_value(json_object_get(pl, "strategy")),
                      "data_parallel");
  json_decref(p);

  /* full training, 112 GB: only the 200 GB machine holds it */
  char *full[] = {f->fast, f->slow, "--model-params", "7e9", "--format",
                  "json", "-o", f->out};
  p = plan_placed(full, 8, CAL_EXIT_OK, f->out, "fits_some", &pl);
  assert_int_equal(json_array_size(json_object_get(pl, "fits_on")), 1);
  assert_true(json_is_null(json_object_get(p, "target_effective_batch")));
  json_decref(p);

  /* 4.6e10 params in fp32 inference: 184 GB + 0.92 GB for one example is
   * more than the 180 GB budget of the big machine, less than both (198) */
  char *shard[] = {f->fast, f->slow, "--model-params", "4.6e10", "--dtype",
                   "fp32", "--training", "inference", "--format", "json",
                   "-o", f->out};
  /* the plan is written, and the exit status says it fits nowhere alone */
  p = plan_placed(shard, 12, CAL_EXIT_NOFIT, f->out, "sharded", &pl);
  assert_int_equal(json_array_size(json_object_get(pl, "shard_group")), 2);
  json_decref(p);
}

static void cli_text_formats(void **state) {
  fixture_t *f = *state;
  char *out = test_path(f->dir, "plan.md");
  char *args[] = {f->fast, f->slow, "--examples", "100", "--model-params",
                  "7e9", "--training", "inference", "--format", "md", "-o",
                  out};
  char *text = plan_text(args, 12, out);
  assert_non_null(text);
  cal_assert_contains(text, "83.55%", "16.45%", "| machine",
                      "Placement: data_parallel");
  free(text);
  args[9] = "table";
  expect_plan_text(args, 12, out, "Stragglers", "| machine");
  free(out);
}

static void cli_bad_input(void **state) {
  fixture_t *f = *state;
  expect_plan_usage(f->none);
  expect_plan_usage(f->fast, "--bogus");
  expect_plan_usage(f->fast, "--dtype", "fp64");
  expect_plan_usage(f->fast, "--examples", "-5");
  expect_plan_usage(f->fast, "--examples", "12x");
  expect_plan_usage(f->fast, "--model-params", "lots");
  expect_plan_usage(f->fast, "--format");
  expect_plan_usage("--examples", "5");
  expect_plan_usage("/nonexistent/profile.json");
  expect_plan_usage(f->fast, "--examples", "18446744073709551615");
  expect_plan_usage(f->fast, "--examples", "9223372036854775807");
  expect_plan_usage(f->fast, "--examples", "9007199254740993");
}

/* A second run of the reference VM at 90.1 examples/s: the optimal
 * point's samples spread from 58 to 99, so its interval overlaps the
 * first run's (51.9 to 60.7). */
static void second_run(json_t *root, void *arg) {
  (void)arg;
  static const double x[] = {58.0, 70.0, 88.0, 90.1, 92.0, 95.0, 99.0};
  json_t *pts = json_object_get(
      json_object_get(json_object_get(json_object_get(root, "batch_sweep"),
                                      "modes"), "prefill"), "points");
  size_t i;
  json_t *pt;
  json_array_foreach(pts, i, pt) {
    if (json_integer_value(json_object_get(pt, "batch_size")) != 32)
      continue;
    json_t *s = json_array();
    for (size_t k = 0; k < 7; k++)
      json_array_append_new(s, json_real(x[k]));
    cal_summary_t sum;
    cal_summarize(x, 7, 0.95, &sum);
    json_object_set_new(pt, "samples_examples_per_s", s);
    json_object_set_new(pt, "examples_per_s", json_real(sum.median));
    json_object_set_new(pt, "stats", cal_stats_json(&sum, 1));
  }
  json_object_set_new(root, "throughput", json_real(90.1));
}

#define REFERENCE CAL_TEST_DATA "/kvm-xeon-2core-avx512.json"

/* The two runs through the command: the CI read from the profiles, not
 * heterogeneous, no straggler; the text says why. */
static void cli_two_runs_of_one_vm(void **state) {
  fixture_t *f = *state;
  char *run2 = test_profile_variant(REFERENCE, f->dir, "run2.json",
                                    second_run, NULL);
  assert_non_null(run2);
  char *args[] = {REFERENCE, run2, "--examples", "10000", "--format", "json",
                  "-o", f->out};
  assert_int_equal(run_plan(args, 8), CAL_EXIT_OK);
  json_t *p = load_json(f->out);
  assert_non_null(p);
  json_t *m0 = machine_at(p, 0), *m1 = machine_at(p, 1);
  assert_double_equal(num_at(m0, "throughput"), 56.6304175, 1e-9);
  assert_double_equal(num_at(m0, "throughput_ci_low"), 51.89939088, 1e-9);
  assert_double_equal(num_at(m0, "throughput_ci_high"), 60.66789256, 1e-9);
  assert_double_equal(num_at(m1, "throughput_ci_low"), 58.0, 1e-9);
  assert_string_equal(json_string_value(json_object_get(m0, "source")),
                      "profile");
  assert_true(num_at(p, "throughput_ratio") > 1.5);
  assert_false(json_is_true(json_object_get(p, "heterogeneous")));
  assert_int_equal(json_array_size(json_object_get(p, "stragglers")), 0);
  json_decref(p);
  char *md[] = {REFERENCE, run2, "--format", "md", "-o", f->out};
  expect_plan_text(md, 6, f->out, "confidence intervals overlap",
                   "Heterogeneous set");
  free(run2);
}

/* A curve CSV of two machines this tool cannot run on, next to a
 * profile: three machines, the curves' peaks as their throughput. */
static void cli_csv_and_profile(void **state) {
  fixture_t *f = *state;
  char *args[] = {CAL_TEST_DATA "/seed_curves.csv", REFERENCE,
                  "--epochs", "2", "--dataset-examples", "50000",
                  "--price-per-hour", "machine_a=4.0",
                  "--price-per-hour", "0.5", "--memory-gb", "machine_a=80",
                  "--model-params", "5e8", "--training", "lora",
                  "--layers", "24", "--lora-rank", "8", "--checkpointing",
                  "--format", "json", "-o", f->out};
  assert_int_equal(run_plan(args, 25), CAL_EXIT_OK);
  json_t *p = load_json(f->out);
  assert_non_null(p);
  assert_int_equal(json_array_size(json_object_get(p, "machines")), 3);
  json_t *a = machine_at(p, 0), *b = machine_at(p, 1), *x = machine_at(p, 2);
  assert_string_equal(json_string_value(json_object_get(a, "name")),
                      "machine_a");
  assert_string_equal(json_string_value(json_object_get(a, "source")),
                      "curve_csv");
  assert_double_equal(num_at(a, "throughput"), 776, 0);
  assert_int_equal(json_integer_value(json_object_get(a, "optimal_batch_size")),
                   32);
  assert_double_equal(num_at(b, "throughput"), 278, 0);
  assert_int_equal(json_integer_value(json_object_get(b, "optimal_batch_size")),
                   4);
  assert_string_equal(json_string_value(json_object_get(x, "source")),
                      "profile");
  /* the reference profile's one-layer figure (56.63 examples/s) scaled by
   * FLOPs per token to the 5e8-parameter model: one qwen2-0.5b layer
   * multiplies 14909440 parameters a token; the curves are taken as the
   * plan's model's */
  const double ratio = 14909440.0 / 5e8, ref = 56.6304175 * ratio;
  assert_double_equal(num_at(x, "throughput"), ref, 1e-9);
  json_t *sf = json_object_get(x, "scaled_from");
  assert_double_equal(num_at(sf, "flops_per_token_ratio"), ratio, 1e-12);
  assert_double_equal(num_at(sf, "throughput"), 56.6304175, 1e-9);
  assert_true(json_is_null(json_object_get(a, "scaled_from")));
  assert_non_null(strstr(json_string_value(json_object_get(a, "throughput_basis")),
                         "curve"));
  /* 100000 examples over 776 + 278 + the scaled figure */
  assert_int_equal(json_integer_value(json_object_get(p, "examples")), 100000);
  const double sum = 776 + 278 + ref;
  assert_double_equal(num_at(a, "share"), 776 / sum, 1e-9);
  /* within one example of the slowest machine (counts are integers) */
  assert_double_equal(num_at(p, "makespan_s"), 100000 / sum, 1.0 / ref);
  /* prices: by name, then the default for the rest */
  assert_double_equal(num_at(a, "price_per_hour_usd"), 4.0, 0);
  assert_double_equal(num_at(b, "price_per_hour_usd"), 0.5, 0);
  assert_double_equal(num_at(p, "cost_usd"),
                      (4.0 + 0.5 + 0.5) * num_at(p, "makespan_s") / 3600,
                      1e-9);
  /* memory: given for machine_a, unknown for machine_b */
  json_t *mem = json_object_get(a, "memory");
  assert_double_equal(num_at(mem, "available_bytes"), 80e9, 0);
  assert_true(json_is_true(json_object_get(mem, "fits")));
  assert_true(json_is_null(
      json_object_get(json_object_get(b, "memory"), "fits")));
  /* the activation model from the profile's shapes, checkpointed (fp32
   * activations, as the step keeps them; no vocabulary recorded) */
  json_t *am =
      json_object_get(json_object_get(p, "model"), "activation_model");
  assert_false(json_is_true(json_object_get(am, "measured")));
  assert_int_equal(json_integer_value(json_object_get(am, "hidden")), 896);
  assert_double_equal(num_at(am, "bytes_per_example"),
                      (24 * 128 * 896 + 2590720.0 + 128 * 56) * 4, 0);
  assert_double_equal(num_at(json_object_get(p, "model"), "trainable_params"),
                      4399104, 0);
  json_decref(p);
}

/* Issue 49: a machine whose name is not UTF-8 was left out of the JSON
 * (machines_in_split 2, one machine listed); its name is kept escaped, as
 * the tables print it. */
static void cli_names_not_utf8(void **state) {
  fixture_t *f = *state;
  assert_int_equal(test_write_file_at(f->dir, "u.csv",
                                      "machine,batch_size,throughput\n"
                                      "good,1,10\ngood,2,18\n"
                                      "bad\xff,1,5\nbad\xff,2,9\n"),
                   0);
  char *csv = test_path(f->dir, "u.csv");
  assert_non_null(csv);
  char *args[] = {csv, "--examples", "10", "--format", "json", "-o", f->out};
  assert_int_equal(run_plan(args, 7), CAL_EXIT_OK);
  json_t *p = load_json(f->out);
  assert_non_null(p);
  assert_int_equal(json_integer_value(json_object_get(p, "machines_in_split")),
                   2);
  assert_int_equal(json_array_size(json_object_get(p, "machines")), 2);
  int seen = 0;
  for (size_t i = 0; i < 2; i++)
    seen |= strcmp(json_string_value(json_object_get(machine_at(p, i), "name")),
                   "bad\\xff") == 0;
  assert_true(seen);
  json_decref(p);
  free(csv);
}

static void cli_bad_plan_inputs(void **state) {
  fixture_t *f = *state;
  char *csv = CAL_TEST_DATA "/seed_curves.csv";
  /* a price for a machine not in the set; a price but no work */
  expect_plan_usage(csv, "--examples", "10", "--price-per-hour", "gpu=3");
  expect_plan_usage(csv, "--price-per-hour", "3");
  /* a negative price; a price for some machines only */
  expect_plan_usage(csv, "--examples", "10", "--price-per-hour", "a=-1");
  expect_plan_usage(csv, "--examples", "10", "--price-per-hour", "machine_a=1");
  /* two units of work; epochs without the dataset size */
  expect_plan_usage(csv, "--examples", "10", "--steps", "5", "--global-batch",
                    "2");
  expect_plan_usage(csv, "--epochs", "3");
  /* layers without the shapes; a LoRA rank for full training;
   * checkpointing without layers; memory for no named machine */
  expect_plan_usage(csv, "--model-params", "5e8", "--layers", "24");
  expect_plan_usage(REFERENCE, "--model-params", "5e8", "--layers", "24",
                    "--lora-rank", "8");
  expect_plan_usage(REFERENCE, "--model-params", "5e8", "--checkpointing");
  expect_plan_usage(csv, "--memory-gb", "80");
  /* files that are none of the three */
  char *empty = test_path(f->dir, "empty.csv");
  char *notcurve = test_path(f->dir, "junk.csv");
  char *badpeak = test_path(f->dir, "peak.json");
  FILE *w = fopen(empty, "w");
  fclose(w);
  w = fopen(notcurve, "w");
  fputs("machine,batch_size,throughput\nx,abc,3\n", w);
  fclose(w);
  w = fopen(badpeak, "w");
  fputs("{\"schema\": \"calibrate-peak/1\", \"curves\": [{\"machine\": 3}]}",
        w);
  fclose(w);
  char *e1[] = {empty}, *e2[] = {notcurve}, *e3[] = {badpeak};
  assert_int_equal(run_plan(e1, 1), CAL_EXIT_USAGE);
  assert_int_equal(run_plan(e2, 1), CAL_EXIT_USAGE);
  assert_int_equal(run_plan(e3, 1), CAL_EXIT_USAGE);
  free(empty);
  free(notcurve);
  free(badpeak);
}

CAL_TEST_MAIN(
    cmocka_unit_test(split_guide_shares),
    cmocka_unit_test(split_largest_remainder),
    cmocka_unit_test(split_excludes_unusable),
    cmocka_unit_test(split_single_machine),
    cmocka_unit_test(split_no_usable_machine),
    cmocka_unit_test(split_huge_counts), cmocka_unit_test(split_not_finite),
    cmocka_unit_test(names_as_cells),
    cmocka_unit_test(machine_names_rule), cmocka_unit_test(split_flags),
    cmocka_unit_test(batch_for_target),
    cmocka_unit_test(parse_names), cmocka_unit_test(shard_greedy),
    cmocka_unit_test(split_ci_flags), cmocka_unit_test(work_units_and_cost),
    cmocka_unit_test(plan_no_fit_rule), cmocka_unit_test(plan_time_and_cost),
    cmocka_unit_test(plan_ci_flags),
    cmocka_unit_test_setup_teardown(cli_json_plan, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_text_formats, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_bad_input, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_two_runs_of_one_vm, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_csv_and_profile, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_bad_plan_inputs, setup, teardown),
    cmocka_unit_test_setup_teardown(cli_names_not_utf8, setup, teardown))
