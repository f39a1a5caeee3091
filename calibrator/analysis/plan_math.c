#include "plan_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

/* a before b in the tie-break order: faster first, then lower index */
static int faster(const double *t, size_t a, size_t b) {
  if (t[a] != t[b])
    return t[a] > t[b];
  return a < b;
}

/* Machine i's interval: its CI when it holds the point, else the point. */
static void interval(const double *t, const double *lo, const double *hi,
                     size_t i, double *a, double *b) {
  *a = *b = t[i];
  if (lo && hi && isfinite(lo[i]) && isfinite(hi[i]) && lo[i] <= t[i] &&
      t[i] <= hi[i]) {
    *a = lo[i];
    *b = hi[i];
  }
}

/* qsort_r orders of usable machine indices: faster first (the tie-break
 * order), and larger remainder (kept in finish_s) first, then faster. */
static int by_faster(const void *a, const void *b, void *arg) {
  const double *t = arg;
  const size_t i = *(const size_t *)a, j = *(const size_t *)b;
  return faster(t, i, j) ? -1 : faster(t, j, i) ? 1 : 0;
}

typedef struct {
  const double *t;
  const cal_split_entry_t *e;
} order_t;

static int by_remainder(const void *a, const void *b, void *arg) {
  const order_t *o = arg;
  const size_t i = *(const size_t *)a, j = *(const size_t *)b;
  if (o->e[i].finish_s != o->e[j].finish_s)
    return o->e[i].finish_s > o->e[j].finish_s ? -1 : 1;
  return by_faster(a, b, (void *)o->t);
}

/* The flags: heterogeneous when two machines' points are more than the
 * ratio apart and their intervals do not overlap; straggler when the
 * whole interval lies below the fraction of the mean.  idx holds the k
 * usable machines, faster first; pm has k slots.  n log n: for each
 * machine, the slower ones more than the ratio below it are a prefix of
 * the slowest, whose lowest interval top is kept as a running minimum. */
static void flags(const double *t, const double *lo, const double *hi,
                  const size_t *idx, size_t k, double *pm,
                  cal_split_entry_t *e, cal_split_t *out) {
  for (size_t p = 0; p < k; p++) { /* pm[p]: min top of the p+1 slowest */
    double a, b;
    interval(t, lo, hi, idx[k - 1 - p], &a, &b);
    pm[p] = p == 0 || b < pm[p - 1] ? b : pm[p - 1];
  }
  const double cut = CAL_PLAN_STRAGGLER_FRAC * out->mean_throughput;
  for (size_t r = 0; r < k; r++) {
    const size_t i = idx[r];
    double ai, bi;
    interval(t, lo, hi, i, &ai, &bi);
    e[i].slow_point = t[i] < cut;
    e[i].straggler = bi < cut;
    out->n_stragglers += (size_t)e[i].straggler;
    size_t m0 = 0, m1 = k; /* slowest machines j with t[i] > R t[j] */
    while (m0 < m1) {
      size_t mid = m0 + (m1 - m0) / 2;
      if (t[i] > CAL_PLAN_HETERO_RATIO * t[idx[k - 1 - mid]])
        m0 = mid + 1;
      else
        m1 = mid;
    }
    if (m0 > 0 && ai > pm[m0 - 1])
      out->heterogeneous = 1;
  }
}

/* Largest remainder: floors, then one more to the largest remainders
 * (ties: faster first) until the counts sum to examples; rounding may
 * leave a few over or under.  idx as for flags, reordered here. */
static int split_counts(const double *t, size_t *idx, size_t k,
                        uint64_t examples, cal_split_entry_t *e) {
  int64_t left = (int64_t)examples;
  for (size_t r = 0; r < k; r++) {
    const size_t i = idx[r];
    double quota = (double)examples * e[i].share;
    double fl = floor(quota);
    e[i].count = (uint64_t)fl;
    e[i].finish_s = quota - fl;
    left -= (int64_t)e[i].count;
  }
  /* left is in [0, k) in exact arithmetic; rounding moves it a few units
   * per machine at most, more means the shares do not add up to one */
  const int64_t slack = 4 * (int64_t)k + 4;
  if (left > slack || left < -slack)
    return CAL_EPARSE;
  order_t o = {t, e};
  qsort_r(idx, k, sizeof *idx, by_remainder, &o);
  for (size_t r = 0; left > 0; r++, left--) {
    if (r == k) { /* every machine bumped once: a new round, faster first */
      qsort_r(idx, k, sizeof *idx, by_faster, (void *)t);
      r = 0;
    }
    e[idx[r]].count++;
  }
  for (size_t r = 0; r < k; r++)
    e[idx[r]].finish_s = 0;
  while (left < 0) { /* take from the smallest remainder, slower first */
    size_t best = k;
    for (size_t r = k; r-- > 0;)
      if (e[idx[r]].count > 0 && e[idx[r]].finish_s == 0) {
        best = r;
        break;
      }
    if (best == k) { /* each taken from once: a new round */
      int any = 0;
      for (size_t r = 0; r < k; r++)
        any |= e[idx[r]].finish_s == 2 && e[idx[r]].count > 0;
      if (!any) /* no count to take from: cannot happen */
        return CAL_EINVAL;
      for (size_t r = 0; r < k; r++)
        e[idx[r]].finish_s = 0;
      continue;
    }
    e[idx[best]].count--;
    e[idx[best]].finish_s = 2; /* not picked again before the others */
    left++;
  }
  qsort_r(idx, k, sizeof *idx, by_faster, (void *)t);
  return 0;
}

/* Each machine's time and the even split's: the `extra` fastest machines
 * take one more.  idx faster first. */
static void split_times(const double *t, const size_t *idx, size_t k,
                        uint64_t examples, cal_split_entry_t *e,
                        cal_split_t *out) {
  uint64_t base = examples / k, extra = examples % k;
  for (size_t r = 0; r < k; r++) {
    const size_t i = idx[r];
    e[i].finish_s = (double)e[i].count / t[i];
    if (e[i].finish_s > out->makespan_s)
      out->makespan_s = e[i].finish_s;
    double even = (double)(base + (r < extra)) / t[i];
    if (even > out->even_makespan_s)
      out->even_makespan_s = even;
  }
  out->speedup =
      out->makespan_s > 0 ? out->even_makespan_s / out->makespan_s : 1.0;
}

/* The split's times are numbers: a throughput of 1e-320 makes a machine's
 * time (or the even split's) overflow, and "nan s" or "inf x" is no plan. */
static int split_finite(const cal_split_t *out) {
  return isfinite(out->makespan_s) && isfinite(out->even_makespan_s) &&
                 isfinite(out->speedup)
             ? 0
             : CAL_EPARSE;
}

int cal_plan_split(const double *throughput, size_t n, uint64_t examples,
                   cal_split_entry_t *e, cal_split_t *out) {
  return cal_plan_split_ci(throughput, NULL, NULL, n, examples, e, out);
}

int cal_plan_split_ci(const double *throughput, const double *ci_lo,
                      const double *ci_hi, size_t n, uint64_t examples,
                      cal_split_entry_t *e, cal_split_t *out) {
  memset(out, 0, sizeof *out);
  if (n == 0 || examples > (uint64_t)CAL_PLAN_MAX_EXAMPLES)
    return CAL_EINVAL;
  for (size_t i = 0; i < n; i++) {
    memset(&e[i], 0, sizeof e[i]);
    double t = throughput[i];
    e[i].usable = isfinite(t) && t > 0;
    if (!e[i].usable)
      continue;
    if (out->n_usable == 0 || t < out->min_throughput)
      out->min_throughput = t;
    if (t > out->max_throughput)
      out->max_throughput = t;
    out->sum_throughput += t;
    out->n_usable++;
  }
  if (out->n_usable == 0)
    return CAL_EINVAL;
  /* a sum that overflows (two of 1e308) gives every share 0 and nothing
   * to hand out; a ratio that overflows (1e308 beside 1e-320) has no
   * meaning either */
  if (!isfinite(out->sum_throughput) ||
      !isfinite(out->max_throughput / out->min_throughput))
    return CAL_EPARSE;
  const double sum = out->sum_throughput;
  const size_t k = out->n_usable;
  size_t *idx = malloc(k * sizeof *idx);
  double *pm = malloc(k * sizeof *pm);
  int rc = CAL_ENOMEM;
  if (!idx || !pm)
    goto out;
  out->mean_throughput = sum / (double)k;
  out->ratio = out->max_throughput / out->min_throughput;
  out->ratio_exceeded = out->ratio > CAL_PLAN_HETERO_RATIO;
  for (size_t i = 0, r = 0; i < n; i++)
    if (e[i].usable) {
      e[i].share = throughput[i] / sum;
      idx[r++] = i;
    }
  qsort_r(idx, k, sizeof *idx, by_faster, (void *)throughput);
  flags(throughput, ci_lo, ci_hi, idx, k, pm, e, out);
  if (examples == 0) {
    /* time per example: proportional 1/sum; even 1/(k·min) */
    out->makespan_s = 1.0 / sum;
    out->even_makespan_s = 1.0 / ((double)k * out->min_throughput);
    out->speedup = out->even_makespan_s / out->makespan_s;
  } else {
    if ((rc = split_counts(throughput, idx, k, examples, e)) < 0)
      goto out;
    split_times(throughput, idx, k, examples, e, out);
  }
  rc = split_finite(out);
out:
  free(idx);
  free(pm);
  return rc;
}

int cal_work_examples(const cal_work_t *w, uint64_t *examples) {
  const double max = (double)CAL_PLAN_MAX_EXAMPLES;
  double x;
  *examples = 0;
  switch (w->unit) {
  case CAL_WORK_NONE: return 0;
  case CAL_WORK_EXAMPLES:
    if (w->examples < 1 || w->examples > (uint64_t)CAL_PLAN_MAX_EXAMPLES)
      return CAL_EINVAL;
    *examples = w->examples;
    return 0;
  case CAL_WORK_EPOCHS:
    if (!(w->epochs > 0) || !isfinite(w->epochs) || w->dataset_examples < 1)
      return CAL_EINVAL;
    x = ceil(w->epochs * (double)w->dataset_examples);
    break;
  case CAL_WORK_STEPS:
    if (w->steps < 1 || w->global_batch < 1)
      return CAL_EINVAL;
    if (w->steps > (uint64_t)CAL_PLAN_MAX_EXAMPLES / w->global_batch)
      return CAL_EINVAL;
    x = (double)(w->steps * w->global_batch);
    break;
  default: return CAL_EINVAL;
  }
  if (!(x >= 1) || x > max)
    return CAL_EINVAL;
  *examples = (uint64_t)x;
  return 0;
}

double cal_plan_cost(double usd_per_hour, double seconds) {
  return usd_per_hour * seconds / 3600.0;
}

int cal_plan_batch(int64_t b, int64_t target, cal_batch_plan_t *out) {
  if (b < 1 || target < 1)
    return CAL_EINVAL;
  if (b >= target) {
    out->micro_batch = target;
    out->accum_steps = 1;
    out->kind = b == target ? CAL_BATCH_EXACT : CAL_BATCH_CAPPED;
    return 0;
  }
  int64_t d = b;
  while (target % d != 0)
    d--;
  out->micro_batch = d;
  out->accum_steps = target / d;
  out->kind = d == b ? CAL_BATCH_EXACT : CAL_BATCH_DIVISOR;
  return 0;
}

static const struct {
  const char *name;
  double bytes;
} dtypes[] = {
    [CAL_DT_FP32] = {"fp32", 4}, [CAL_DT_BF16] = {"bf16", 2},
    [CAL_DT_FP16] = {"fp16", 2}, [CAL_DT_INT8] = {"int8", 1},
};

static const char *const trainings[] = {
    [CAL_TRAIN_FULL] = "full", [CAL_TRAIN_LORA] = "lora",
    [CAL_TRAIN_INFERENCE] = "inference",
};

int cal_dtype_parse(const char *s, cal_dtype_t *out) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(s, dtypes[i].name) == 0) {
      *out = (cal_dtype_t)i;
      return 0;
    }
  return CAL_EINVAL;
}

int cal_training_parse(const char *s, cal_training_t *out) {
  for (size_t i = 0; i < sizeof trainings / sizeof trainings[0]; i++)
    if (strcmp(s, trainings[i]) == 0) {
      *out = (cal_training_t)i;
      return 0;
    }
  return CAL_EINVAL;
}

const char *cal_dtype_name(cal_dtype_t d) { return dtypes[d].name; }
const char *cal_training_name(cal_training_t t) { return trainings[t]; }
double cal_dtype_bytes(cal_dtype_t d) { return dtypes[d].bytes; }

void cal_mem_assume_default(cal_training_t t, cal_mem_assume_t *out) {
  memset(out, 0, sizeof *out);
  out->lora_fraction = CAL_PLAN_LORA_FRACTION;
  out->activation_fraction = t == CAL_TRAIN_INFERENCE
                                 ? CAL_PLAN_ACT_FRACTION_INFER
                                 : CAL_PLAN_ACT_FRACTION_TRAIN;
  out->headroom = CAL_PLAN_HEADROOM;
}

int cal_plan_memory(double params, cal_dtype_t dtype, cal_training_t training,
                    int64_t batch, const cal_mem_assume_t *a,
                    cal_mem_need_t *out) {
  memset(out, 0, sizeof *out);
  if (!(params > 0) || !isfinite(params) || batch < 1 ||
      !(a->lora_fraction > 0 && a->lora_fraction <= 1) ||
      !(a->activation_fraction >= 0) || !isfinite(a->activation_fraction) ||
      !(a->headroom >= 0 && a->headroom < 1) ||
      !(a->activation_bytes_per_example >= 0) ||
      !isfinite(a->activation_bytes_per_example) || !(a->lora_params >= 0) ||
      !isfinite(a->lora_params))
    return CAL_EINVAL;
  const double bytes = cal_dtype_bytes(dtype);
  out->weights_bytes = params * bytes;
  cal_mem_param_t per;
  /* LoRA's adapters are trained in fp32 beside the frozen weights */
  cal_mem_param_bytes(training == CAL_TRAIN_LORA ? 4 : bytes, CAL_MEM_TRAINED,
                      &per);
  switch (training) {
  case CAL_TRAIN_FULL: out->trainable_params = params; break;
  case CAL_TRAIN_LORA: out->trainable_params = params * a->lora_fraction; break;
  case CAL_TRAIN_INFERENCE: out->trainable_params = 0; break;
  }
  if (training == CAL_TRAIN_LORA && a->lora_params > 0)
    out->trainable_params = fmin(a->lora_params, params);
  const double n = out->trainable_params;
  out->gradients_bytes = n * per.gradients;
  out->optimizer_bytes = n * per.optimizer;
  out->master_bytes = n * per.master;
  if (training == CAL_TRAIN_LORA) /* the adapters' own weights */
    out->weights_bytes += n * per.weights;
  out->activations_bytes =
      a->activation_bytes_per_example > 0
          ? (double)batch * a->activation_bytes_per_example
          : (double)batch * a->activation_fraction * params * bytes;
  out->total_bytes = out->weights_bytes + out->gradients_bytes +
                     out->optimizer_bytes + out->master_bytes +
                     out->activations_bytes;
  return 0;
}

double cal_plan_budget(double available_bytes, double headroom) {
  return available_bytes > 0 ? available_bytes * (1.0 - headroom) : 0;
}

/* qsort_r order of machine indices: larger budget first (a budget that is
 * not a number last), ties by lower index. */
static int by_budget(const void *a, const void *b, void *arg) {
  const double *bud = arg;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  double x = isnan(bud[i]) ? -INFINITY : bud[i],
         y = isnan(bud[j]) ? -INFINITY : bud[j];
  if (x != y)
    return x > y ? -1 : 1;
  return (i > j) - (i < j);
}

int cal_plan_shard(const double *budget, size_t n, double need,
                   size_t *order, size_t *n_chosen) {
  double held = 0;
  *n_chosen = 0;
  for (size_t k = 0; k < n; k++)
    order[k] = k;
  qsort_r(order, n, sizeof *order, by_budget, (void *)budget);
  for (size_t k = 0; k < n; k++) {
    (*n_chosen)++;
    held += budget[order[k]] > 0 ? budget[order[k]] : 0;
    if (held >= need)
      return 1;
  }
  return 0;
}
