/* The rows of each chart: how a point of a profile becomes a row of the
 * chart's data file and which series it joins. */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


/* gnuplot point types: filled for all threads, open for one thread */
enum { PT_CIRCLE = 6, PT_SQUARE = 4, PT_TRIANGLE = 8, PT_DIAMOND = 12 };
static int filled(int open_pt, int is_filled) {
  return is_filled ? open_pt + 1 : open_pt;
}

static const char *thread_word(double t) {
  return t == 1 ? "thread" : "threads";
}

int cal_chart_batch_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                        size_t keylen) {
  r->x = p->pt->batch_size.v;
  double y = p->pt->examples_per_s.v;
  if (!(r->x > 0) || !isfinite(y))
    return 0;
  const cal_vstats_t *st = &p->pt->stats;
  r->v[0] = y;
  r->v[1] = cal_chart_num(st->ci_low, y);
  r->v[2] = cal_chart_num(st->ci_high, y);
  r->v[3] = r->x == p->mode->peak_batch_size.v;
  r->v[4] = r->x == p->mode->knee_batch_size.v;
  r->v[5] = cal_chart_num(p->pt->latency_ms, p->pt->time_ms.v);
  /* latency is the step for batch / rate: the rate's interval, inverted */
  r->v[6] = r->v[5] * y / r->v[2];
  r->v[7] = r->v[5] * y / r->v[1];
  /* prefill and decode count different things: separate panels */
  /* examples/s (prefill, train) and tokens/s (decode): two panels */
  /* tags: 1 prefill, 2 decode, 3 train, 4 a workload (inference, dpo,
   * grpo: examples/s as well) */
  r->tag = strcmp(p->group_key, "decode") == 0    ? 2
           : strcmp(p->group_key, "train") == 0   ? 3
           : strcmp(p->group_key, "prefill") == 0 ? 1 : 4;
  r->pt = r->tag == 2 ? 5 : r->tag == 3 ? 9 : r->tag == 4 ? 11 : 7;
  snprintf(key, keylen, "%s", p->group_key);
  return 1;
}

int cal_chart_gemm_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen) {
  /* a confirmation re-measures a size already on the curve */
  if (p->pt->confirms)
    return 0;
  /* the point's own rate: gflops, or gops for int8 */
  const char *metric = p->pt->metric;
  double m = p->pt->m.v, n = p->pt->n.v, k = p->pt->k.v;
  double g = metric ? p->pt->value.v : p->pt->gflops.v;
  if (!(m > 0 && n > 0 && k > 0) || !isfinite(g))
    return 0;
  const char *dt = p->pt->dtype, *engine = p->pt->engine;
  char what[64];
  snprintf(what, sizeof what, "%s%s%s%s", dt ? dt : "?", engine ? " " : "",
           engine ? engine : "",
           metric && strcmp(metric, "gops") == 0 ? " (GOPS)" : "");
  double t = cal_chart_num(p->pt->threads, 0);
  if (p->by_threads)
    snprintf(key, keylen, "%s, %g %s", what, t, thread_word(t));
  else
    snprintf(key, keylen, "%s", what);
  const cal_vstats_t *st = &p->pt->stats;
  r->x = cbrt(m * n * k);
  r->v[0] = m;
  r->v[1] = n;
  r->v[2] = k;
  r->v[3] = g;
  r->v[4] = cal_chart_num(st->ci_low, g);
  r->v[5] = cal_chart_num(st->ci_high, g);
  r->lt = cal_chart_dtype_lt(dt);
  r->pt = filled(PT_CIRCLE, !p->by_threads || t > 1);
  return 1;
}

int cal_chart_scaling_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                          size_t keylen) {
  r->x = p->pt->threads.v;
  r->v[0] = p->pt->gflops.v;
  r->v[2] = p->pt->efficiency.v;
  if (!(r->x >= 1) || !isfinite(r->v[0]))
    return 0;
  const char *dt = p->pt->dtype;
  const cal_vstats_t *st = &p->pt->stats;
  r->v[3] = cal_chart_num(st->ci_low, r->v[0]);
  r->v[4] = cal_chart_num(st->ci_high, r->v[0]);
  r->lt = cal_chart_dtype_lt(dt);
  snprintf(key, keylen, "%s", dt ? dt : "");
  return 1;
}

/* ideal: the fewest-threads point scaled linearly */
void cal_chart_scaling_ideal(cal_gp_set_t *set) {
  cal_gp_set_sort(set);
  for (size_t i = 0; i < set->n; i++) {
    cal_gp_series_t *s = &set->s[i];
    for (size_t r = 0; r < s->n; r++)
      s->rows[r].v[1] = s->rows[0].v[0] * s->rows[r].x / s->rows[0].x;
  }
}

int cal_chart_bandwidth_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                            size_t keylen) {
  double threads = cal_chart_num(p->pt->threads, 1);
  /* per core: the cache marks are per-core sizes, and each thread of a
   * 2-thread point streams its own share of the working set */
  r->x = p->pt->working_set_bytes.v / (threads >= 1 ? threads : 1);
  r->v[0] = p->pt->gbps.v;
  if (!(r->x > 0) || !isfinite(r->v[0]))
    return 0;
  const cal_vstats_t *st = &p->pt->stats;
  r->v[1] = cal_chart_num(st->ci_low, r->v[0]);
  r->v[2] = cal_chart_num(st->ci_high, r->v[0]);
  const char *kn = p->pt->kernel;
  if (kn && strncmp(kn, "stream_", 7) == 0)
    kn += 7;
  static const char *const kernels[] = {"read", "triad", "copy", "write",
                                        "scale", "add"};
  r->lt = 7;
  for (int i = 0; kn && i < 6; i++)
    if (strcmp(kn, kernels[i]) == 0)
      r->lt = i + 1;
  int level = p->pt->level != NULL;
  /* per-level points are separate measurements, never joined */
  r->tag = level ? 1 : 2;
  r->pt = filled(level ? PT_SQUARE : PT_CIRCLE, threads > 1);
  /* cache-level points and the working-set staircase are separate
   * series: joining them would zigzag */
  const char *kind = level ? "per level" : "staircase";
  if (p->by_threads)
    snprintf(key, keylen, "%s %s, %g %s", kn ? kn : "?", kind, threads,
             thread_word(threads));
  else
    snprintf(key, keylen, "%s %s", kn ? kn : "?", kind);
  return 1;
}

int cal_chart_roofline_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                           size_t keylen) {
  (void)key;
  (void)keylen;
  const cal_vroof_kernel_t *kr = p->kernel;
  r->x = kr->intensity_flop_per_byte.v;
  r->v[0] = kr->gflops.v;
  if (!(r->x > 0) || !(r->v[0] > 0))
    return 0;
  const char *nm = kr->kernel, *dt = kr->dtype;
  double t = cal_chart_num(kr->threads, 1);
  snprintf(r->text, sizeof r->text, "%s", nm ? nm : "");
  /* no text at the points (they collide): one series per kernel family,
   * dtype and threads, its marker and colour in the key */
  const char *fam = "other";
  int shape = PT_CIRCLE;
  if (nm && strstr(nm, "gemm")) {
    fam = "GEMM";
    shape = PT_SQUARE;
  } else if (nm && strstr(nm, "attn")) {
    fam = "attention";
    shape = PT_TRIANGLE;
  } else if (nm && strstr(nm, "layer")) {
    fam = "layer";
    shape = PT_DIAMOND;
  } else if (nm && strstr(nm, "stream")) {
    fam = "stream";
  }
  r->lt = cal_chart_dtype_lt(dt);
  r->pt = filled(shape, t > 1);
  snprintf(key, keylen, "%s %s, %g %s", fam, dt ? dt : "?", t,
           thread_word(t));
  return 1;
}

/* attention: one x position per shape (the id without its /tN), in the
 * order shapes first appear; the shape named in the text column */
int cal_chart_attention_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                            size_t keylen) {
  const char *id = p->pt->id;
  double g = p->pt->gflops.v;
  if (!id || !isfinite(g))
    return 0;
  const char *cut = strrchr(id, '/');
  size_t shape_len = cut ? (size_t)(cut - id) : strlen(id);
  size_t i, ord = 0, nseen = 0;
  struct { const char *s; size_t len; } seen[256];
  for (i = 0; i < p->group->n; i++) {
    const cal_vpoint_t *q = p->group->p[i];
    const char *qid = q->id;
    if (!qid)
      continue;
    const char *qc = strrchr(qid, '/');
    size_t ql = qc ? (size_t)(qc - qid) : strlen(qid), j;
    for (j = 0; j < nseen; j++)
      if (seen[j].len == ql && strncmp(seen[j].s, qid, ql) == 0)
        break;
    if (j == nseen && nseen < 256) {
      seen[nseen].s = qid;
      seen[nseen++].len = ql;
    }
    if (q == p->pt) {
      ord = j;
      break;
    }
  }
  /* "attention/fused/b1h8kv8/q512k512/d64/causal" -> without the section */
  const char *shown = strncmp(id, "attention/", 10) == 0 ? id + 10 : id;
  snprintf(r->text, sizeof r->text, "%.*s",
           (int)(shape_len - (size_t)(shown - id)), shown);
  for (char *c = r->text; *c; c++)
    *c = *c == '/' ? ' ' : *c;
  const cal_vstats_t *st = &p->pt->stats;
  double t = cal_chart_num(p->pt->threads, 1);
  r->x = (double)ord + 1 + (t > 1 ? 0.12 : -0.12);
  r->v[0] = g;
  r->v[1] = cal_chart_num(st->ci_low, g);
  r->v[2] = cal_chart_num(st->ci_high, g);
  r->v[3] = 100 * p->pt->ratio_to_gemm.v;
  r->lt = t > 1 ? 2 : 1;
  r->pt = filled(PT_TRIANGLE, t > 1);
  snprintf(key, keylen, "%g %s", t, thread_word(t));
  return 1;
}

/* peak: each kernel and variant measured against its theoretical peak
 * (the point's efficiency), one bar per thread count */
int cal_chart_peak_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen) {
  const char *metric = p->pt->metric;
  double v = metric ? p->pt->value.v : p->pt->gflops.v;
  double e = p->pt->efficiency.v;
  const char *kn = p->pt->kernel;
  const char *var = p->pt->variant;
  const char *dt = p->pt->dtype;
  if (!(v > 0) || !(e > 0) || !kn)
    return 0;
  /* x: the position of the (kernel, variant) among the ok points */
  size_t i, ord = 0, nseen = 0;
  const cal_vpoint_t *seen[128];
  for (i = 0; i < p->group->n; i++) {
    const cal_vpoint_t *q = p->group->p[i];
    if (!cal_chart_point_ok(q))
      continue;
    const char *qk = q->kernel, *qv = q->variant;
    size_t j;
    for (j = 0; j < nseen; j++) {
      const char *sk = seen[j]->kernel, *sv = seen[j]->variant;
      if (sk && qk && !strcmp(sk, qk) && !strcmp(sv ? sv : "", qv ? qv : ""))
        break;
    }
    if (j == nseen && nseen < 128)
      seen[nseen++] = q;
    if (q == p->pt) {
      ord = j;
      break;
    }
  }
  double t = cal_chart_num(p->pt->threads, 1);
  r->x = (double)ord + 1 + (t > 1 ? 0.2 : -0.2);
  r->v[0] = 100 * e;
  r->v[1] = v;
  r->v[2] = v / e;
  /* the median's interval, as a share of the same theoretical peak */
  const cal_vstats_t *st = &p->pt->stats;
  r->v[3] = 100 * e * cal_chart_num(st->ci_low, v) / v;
  r->v[4] = 100 * e * cal_chart_num(st->ci_high, v) / v;
  snprintf(r->text, sizeof r->text, "%s %s%s%s", dt ? dt : "?", kn,
           var ? " " : "", var ? var : "");
  r->lt = t > 1 ? 2 : 1;
  snprintf(key, keylen, "%g %s", t, thread_word(t));
  return 1;
}

