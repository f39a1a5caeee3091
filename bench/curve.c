#include "curve.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cal_err.h"
#include "cal_vec.h"

void cal_curve_opts_default(cal_curve_opts_t *opts) {
  opts->tolerance = 0.03;
  opts->ci_level = 0.95;
  opts->policy = CAL_OPTIMIZE_THROUGHPUT;
}

static const char *const shape_names[] = {
    [CAL_SHAPE_EMPTY] = "empty",     [CAL_SHAPE_SINGLE] = "single",
    [CAL_SHAPE_RISING] = "rising",   [CAL_SHAPE_PLATEAU] = "plateau",
    [CAL_SHAPE_PEAKED] = "peaked",
};

const char *cal_curve_shape_name(cal_curve_shape_t shape) {
  if ((unsigned)shape < sizeof shape_names / sizeof shape_names[0])
    return shape_names[shape];
  return "unknown";
}

static const char *const policy_names[] = {
    [CAL_OPTIMIZE_THROUGHPUT] = "throughput",
    [CAL_OPTIMIZE_KNEE] = "knee",
};

const char *cal_curve_policy_name(cal_curve_policy_t policy) {
  if ((unsigned)policy < sizeof policy_names / sizeof policy_names[0])
    return policy_names[policy];
  return "unknown";
}

int cal_curve_policy_parse(const char *s, cal_curve_policy_t *out) {
  for (size_t i = 0; i < sizeof policy_names / sizeof policy_names[0]; i++)
    if (s && strcasecmp(s, policy_names[i]) == 0) {
      *out = (cal_curve_policy_t)i;
      return 0;
    }
  return CAL_EINVAL;
}

void cal_curve_result_free(cal_curve_result_t *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->n; i++)
    free(r->points[i].samples);
  free(r->points);
  free(r->tied_batch_sizes);
  free(r);
}

static int cmp_point_batch(const void *a, const void *b) {
  int64_t x = ((const cal_curve_row_t *)a)->batch_size;
  int64_t y = ((const cal_curve_row_t *)b)->batch_size;
  return (x > y) - (x < y);
}

static int ci_overlap(const cal_summary_t *a, const cal_summary_t *b) {
  return a->ci_low <= b->ci_high && b->ci_low <= a->ci_high;
}

/* Copy, validate and summarise every point; sort by batch size. */
static int fill_points(cal_curve_result_t *r, const cal_curve_point_t *pts,
                       size_t n, double level) {
  for (size_t i = 0; i < n; i++) {
    const cal_curve_point_t *p = &pts[i];
    cal_curve_row_t *q = &r->points[i];
    r->n = i + 1; /* so that free sees every copied sample array */
    if (p->batch_size < 1 || p->batch_size > CAL_BATCH_MAX)
      return CAL_EINVAL;
    if (p->status != CAL_POINT_OK && p->status != CAL_POINT_SKIPPED)
      return CAL_EINVAL;
    q->batch_size = p->batch_size;
    q->status = p->status;
    q->pct_of_peak = NAN;
    if (p->status == CAL_POINT_SKIPPED)
      continue;
    if (p->n == 0 || !p->samples)
      return CAL_EINVAL;
    for (size_t k = 0; k < p->n; k++)
      if (!isfinite(p->samples[k]) || p->samples[k] < 0)
        return CAL_EINVAL;
    q->samples = malloc(p->n * sizeof *q->samples);
    if (!q->samples)
      return CAL_ENOMEM;
    memcpy(q->samples, p->samples, p->n * sizeof *q->samples);
    q->n = p->n;
    int rc = cal_summarize(q->samples, q->n, level, &q->stats);
    if (rc < 0)
      return rc;
    r->n_ok++;
  }
  qsort(r->points, n, sizeof *r->points, cmp_point_batch);
  for (size_t i = 1; i < n; i++)
    if (r->points[i].batch_size == r->points[i - 1].batch_size)
      return CAL_EINVAL;
  return 0;
}

static double drop_pct(double peak, double v) {
  return peak > 0 ? (peak - v) / peak * 100.0 : 0.0;
}

static void classify(cal_curve_result_t *r, size_t ipeak) {
  const cal_curve_row_t *pk = &r->points[ipeak];
  double tol = r->tolerance;
  size_t ilast = 0, iprev = 0, nseen = 0;
  for (size_t i = 0; i < r->n; i++)
    if (r->points[i].status == CAL_POINT_OK) {
      iprev = ilast;
      ilast = i;
      nseen++;
    }
  if (nseen >= 2) {
    double prev = r->points[iprev].stats.median;
    double last = r->points[ilast].stats.median;
    r->rise_pct = prev > 0 ? (last - prev) / prev * 100.0
                           : (last > 0 ? INFINITY : 0.0);
  }
  if (r->n_ok == 1) {
    r->shape = CAL_SHAPE_SINGLE;
    return;
  }
  if (ilast == ipeak) {
    const cal_curve_row_t *pv = &r->points[iprev];
    int rising = r->rise_pct > tol * 100.0 && !ci_overlap(&pv->stats, &pk->stats);
    r->shape = rising ? CAL_SHAPE_RISING : CAL_SHAPE_PLATEAU;
    return;
  }
  /* points measured past the peak */
  double worst = INFINITY;
  int dropped = 0;
  for (size_t i = ipeak + 1; i < r->n; i++) {
    const cal_curve_row_t *q = &r->points[i];
    if (q->status != CAL_POINT_OK)
      continue;
    if (q->stats.median < worst) {
      worst = q->stats.median;
      r->worst_batch_size = q->batch_size;
    }
    if (q->stats.median < (1.0 - tol) * pk->stats.median &&
        !ci_overlap(&q->stats, &pk->stats))
      dropped = 1;
  }
  r->degradation_pct = drop_pct(pk->stats.median, r->points[ilast].stats.median);
  r->worst_drop_pct = drop_pct(pk->stats.median, worst);
  r->shape = dropped ? CAL_SHAPE_PEAKED : CAL_SHAPE_PLATEAU;
}

int cal_curve_analyze(const cal_curve_point_t *pts, size_t n,
                     const cal_curve_opts_t *opts, cal_curve_result_t **out) {
  cal_curve_opts_t def;
  cal_curve_result_t *r = NULL;
  int rc = CAL_EINVAL;
  *out = NULL;
  if (!opts) {
    cal_curve_opts_default(&def);
    opts = &def;
  }
  if (!pts || n == 0 ||
      !(opts->tolerance >= 0 && opts->tolerance < 1) ||
      !(opts->ci_level > 0 && opts->ci_level < 1) ||
      (opts->policy != CAL_OPTIMIZE_THROUGHPUT &&
       opts->policy != CAL_OPTIMIZE_KNEE))
    return CAL_EINVAL;

  rc = CAL_ENOMEM;
  r = calloc(1, sizeof *r);
  if (!r)
    goto fail;
  r->points = calloc(n, sizeof *r->points);
  if (!r->points)
    goto fail;
  r->tolerance = opts->tolerance;
  r->policy = opts->policy;
  r->rise_pct = r->degradation_pct = r->worst_drop_pct = NAN;
  rc = fill_points(r, pts, n, opts->ci_level);
  if (rc < 0)
    goto fail;
  r->shape = CAL_SHAPE_EMPTY;
  if (r->n_ok == 0) {
    *out = r;
    return 0;
  }

  size_t ipeak = n;
  for (size_t i = 0; i < n; i++) {
    const cal_curve_row_t *q = &r->points[i];
    if (q->status == CAL_POINT_OK &&
        (ipeak == n || q->stats.median > r->points[ipeak].stats.median))
      ipeak = i;
  }
  cal_curve_row_t *pk = &r->points[ipeak];
  pk->is_peak = 1;
  r->peak_batch_size = pk->batch_size;
  r->peak_median = pk->stats.median;

  rc = CAL_ENOMEM;
  r->tied_batch_sizes = malloc(r->n_ok * sizeof *r->tied_batch_sizes);
  if (!r->tied_batch_sizes)
    goto fail;
  size_t iknee = n;
  for (size_t i = 0; i < n; i++) {
    cal_curve_row_t *q = &r->points[i];
    if (q->status != CAL_POINT_OK)
      continue;
    q->pct_of_peak = r->peak_median > 0
                         ? q->stats.median / r->peak_median * 100.0
                         : (q->stats.median > 0 ? INFINITY : 100.0);
    q->tied = ci_overlap(&q->stats, &pk->stats);
    if (q->tied)
      r->tied_batch_sizes[r->n_tied++] = q->batch_size;
    if (iknee == n &&
        q->stats.median >= (1.0 - opts->tolerance) * r->peak_median)
      iknee = i;
  }
  r->points[iknee].is_knee = 1;
  r->knee_batch_size = r->points[iknee].batch_size;
  size_t iopt = opts->policy == CAL_OPTIMIZE_KNEE ? iknee : ipeak;
  r->points[iopt].is_optimal = 1;
  r->optimal_batch_size = r->points[iopt].batch_size;
  classify(r, ipeak);
  *out = r;
  return 0;
fail:
  cal_curve_result_free(r);
  return rc;
}

int cal_curve_point_usable(int ok, int swapped, int threads_not_parallel) {
  return ok && !swapped && !threads_not_parallel;
}

int cal_sweep_should_extend(const cal_curve_point_t *pts, size_t n,
                            const cal_curve_opts_t *opts) {
  cal_curve_result_t *r = NULL;
  int rc = cal_curve_analyze(pts, n, opts, &r);
  if (rc < 0)
    return rc;
  /* Trying one more batch is cheap (the sweep bounds it by memory and
   * time), so extend on the medians alone: while the largest measured
   * batch is the peak and rose by more than the tolerance over the point
   * before it, even when noise makes the two CIs overlap (the shape then
   * still says "plateau": it is the noise-aware verdict). */
  int extend = r->shape == CAL_SHAPE_RISING || r->shape == CAL_SHAPE_SINGLE;
  if (!extend && r->n_ok >= 2 && isfinite(r->rise_pct) &&
      r->rise_pct > 100.0 * r->tolerance) {
    const cal_curve_row_t *last = NULL;
    for (size_t i = 0; i < r->n; i++)
      if (r->points[i].status == CAL_POINT_OK)
        last = &r->points[i];
    extend = last && last->is_peak;
  }
  cal_curve_result_free(r);
  return extend;
}

/* ------------------------------------------------------------------ */
/* Gradient-accumulation advice                                        */

int cal_curve_recommend(const cal_curve_result_t *r, int64_t target,
                       cal_curve_rec_t *out) {
  memset(out, 0, sizeof *out);
  if (!r || target < 1 || target > CAL_BATCH_MAX)
    return CAL_EINVAL;
  out->target_effective_batch = target;

  const cal_curve_row_t *opt = NULL, *best_div = NULL, *best_le = NULL;
  int64_t smallest = 0;
  for (size_t i = 0; i < r->n; i++) {
    const cal_curve_row_t *q = &r->points[i];
    if (q->status != CAL_POINT_OK)
      continue;
    if (!smallest)
      smallest = q->batch_size;
    if (q->batch_size > target)
      continue;
    if (q->batch_size == r->optimal_batch_size)
      opt = q;
    if (!best_le || q->stats.median > best_le->stats.median)
      best_le = q;
    if (target % q->batch_size == 0 &&
        (!best_div || q->stats.median > best_div->stats.median))
      best_div = q;
  }

  const cal_curve_row_t *pick = NULL;
  if (r->n_ok == 0) {
    snprintf(out->note, sizeof out->note, "no batch size was measured");
    return 0;
  }
  if (!best_le) {
    snprintf(out->note, sizeof out->note,
             "no measured batch size is <= %lld (smallest measured: %lld)",
             (long long)target, (long long)smallest);
    return 0;
  }
  if (opt && target % opt->batch_size == 0) {
    pick = opt;
    snprintf(out->note, sizeof out->note,
             "optimal batch %lld divides %lld", (long long)opt->batch_size,
             (long long)target);
  } else if (best_div) {
    pick = best_div;
    if (r->optimal_batch_size > target)
      snprintf(out->note, sizeof out->note,
               "optimal batch %lld exceeds %lld; batch %lld is the fastest "
               "measured divisor (%.1f%% of peak)",
               (long long)r->optimal_batch_size, (long long)target,
               (long long)pick->batch_size, pick->pct_of_peak);
    else
      snprintf(out->note, sizeof out->note,
               "optimal batch %lld does not divide %lld; batch %lld is the "
               "fastest measured divisor (%.1f%% of peak)",
               (long long)r->optimal_batch_size, (long long)target,
               (long long)pick->batch_size, pick->pct_of_peak);
  } else {
    pick = best_le;
  }
  out->batch_size = pick->batch_size;
  out->accumulation_steps = (target + pick->batch_size - 1) / pick->batch_size;
  out->effective_batch = out->batch_size * out->accumulation_steps;
  out->exact = out->effective_batch == target;
  if (!out->exact)
    snprintf(out->note, sizeof out->note,
             "no measured batch size divides %lld; %lld x %lld gives an "
             "effective batch of %lld",
             (long long)target, (long long)out->batch_size,
             (long long)out->accumulation_steps,
             (long long)out->effective_batch);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Batch lists                                                         */

typedef struct i64_vec {
  int64_t *v;
  size_t n, cap;
} i64_vec_t;

static int vec_push(i64_vec_t *a, int64_t x) {
  if (cal_grow(&a->v, a->n, &a->cap, sizeof *a->v, 16) < 0)
    return CAL_ENOMEM;
  a->v[a->n++] = x;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static const char *skip_space(const char *s, const char *end) {
  while (s < end && isspace((unsigned char)*s))
    s++;
  return s;
}

/* A positive integer at *s (digits only), <= CAL_BATCH_MAX.  Returns 0 and
 * advances *s, or a static message. */
static const char *read_count(const char **s, const char *end, int64_t *v) {
  const char *p = skip_space(*s, end);
  if (p == end || *p == ',')
    return "missing number";
  if (*p == '-')
    return "batch sizes must be positive";
  if (!isdigit((unsigned char)*p))
    return "not a number";
  int64_t x = 0;
  while (p < end && isdigit((unsigned char)*p)) {
    x = x * 10 + (*p - '0');
    if (x > CAL_BATCH_MAX)
      return "too large (the limit is 1073741824)";
    p++;
  }
  if (p < end && *p == '.')
    return "not a whole number";
  if (p < end && isalnum((unsigned char)*p))
    return "not a number";
  *s = skip_space(p, end);
  *v = x;
  return NULL;
}

/* Expand one item [s, end) into the list. */
static int parse_item(const char *s, const char *end, i64_vec_t *list,
                      char *err, size_t errlen) {
  const char *msg = NULL;
  int64_t a, b = 0, step = 0;
  char op = 0;
  int item_len = (int)(end - s);
  const char *item = s;

  if (skip_space(s, end) == end) {
    msg = "empty item";
    goto bad;
  }
  if ((msg = read_count(&s, end, &a)) != NULL)
    goto bad;
  if (s == end) {
    b = a;
    op = '+';
    step = 1;
  } else if (*s == '-') {
    s++;
    if ((msg = read_count(&s, end, &b)) != NULL)
      goto bad;
    op = '+';
    step = 1;
    if (s < end && (*s == '*' || *s == '+')) {
      op = *s++;
      if ((msg = read_count(&s, end, &step)) != NULL)
        goto bad;
    }
    if (s != end) {
      msg = "unexpected text (expected N, A-B, A-B*F or A-B+S)";
      goto bad;
    }
  } else {
    msg = "unexpected text (expected N, A-B, A-B*F or A-B+S)";
    goto bad;
  }
  if (a == 0 || b == 0) {
    msg = "batch sizes must be positive";
    goto bad;
  }
  if (b < a) {
    msg = "descending range";
    goto bad;
  }
  if (op == '*' && step < 2) {
    msg = "a geometric factor must be at least 2";
    goto bad;
  }
  if (op == '+' && step < 1) {
    msg = "an arithmetic step must be at least 1";
    goto bad;
  }
  if (op == '+' && (b - a) / step + 1 + (int64_t)list->n > CAL_BATCH_MAX_COUNT)
    goto too_many;
  for (int64_t x = a; x <= b;) {
    if (list->n >= CAL_BATCH_MAX_COUNT)
      goto too_many;
    if (vec_push(list, x) < 0)
      return CAL_ENOMEM;
    if (op == '*') {
      if (x > b / step)
        break;
      x *= step;
    } else {
      x += step;
    }
  }
  return 0;
too_many:
  snprintf(err, errlen, "batch list item \"%.*s\": more than %d batch sizes",
           item_len, item, CAL_BATCH_MAX_COUNT);
  return CAL_EPARSE;
bad:
  snprintf(err, errlen, "batch list item \"%.*s\": %s", item_len, item, msg);
  return CAL_EPARSE;
}

int cal_batches_parse(const char *spec, int64_t **out, size_t *n, char *err,
                      size_t errlen) {
  i64_vec_t list = {NULL, 0, 0};
  int rc;
  *out = NULL;
  *n = 0;
  if (!spec || skip_space(spec, spec + strlen(spec)) == spec + strlen(spec)) {
    snprintf(err, errlen, "empty batch list");
    return CAL_EPARSE;
  }
  const char *s = spec;
  for (;;) {
    const char *comma = strchr(s, ',');
    const char *end = comma ? comma : s + strlen(s);
    rc = parse_item(s, end, &list, err, errlen);
    if (rc < 0)
      goto fail;
    if (!comma)
      break;
    s = comma + 1;
  }
  qsort(list.v, list.n, sizeof *list.v, cmp_i64);
  size_t k = 0;
  for (size_t i = 0; i < list.n; i++)
    if (k == 0 || list.v[i] != list.v[k - 1])
      list.v[k++] = list.v[i];
  *out = list.v;
  *n = k;
  return 0;
fail:
  if (rc == CAL_ENOMEM)
    snprintf(err, errlen, "out of memory");
  free(list.v);
  return rc;
}

int cal_batches_default(int64_t max_batch, int64_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (max_batch < 1 || max_batch > CAL_BATCH_MAX)
    return CAL_EINVAL;
  size_t count = 0;
  for (int64_t x = 1; x <= max_batch; x *= 2)
    count++;
  int64_t *v = malloc(count * sizeof *v);
  if (!v)
    return CAL_ENOMEM;
  for (size_t i = 0; i < count; i++)
    v[i] = (int64_t)1 << i;
  *out = v;
  *n = count;
  return 0;
}
