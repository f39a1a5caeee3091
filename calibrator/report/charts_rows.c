/* The rows of each chart: how a point of a profile becomes a row of the
 * chart's data file and which series it joins.  A row gives its colour
 * (the palette entry of what the series is: a dtype, a mode, a kernel)
 * and what its marker tells (charts_style.c gives the markers out). */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* the marker of a point: filled for all threads, open for one */
static int fill_for(int is_filled) {
  return is_filled ? CAL_GP_FILLED : CAL_GP_OPEN;
}

int cal_chart_batch_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                        size_t keylen) {
  r->x = p->pt->batch_size.v;
  double y = p->pt->examples_per_s.v;
  const cal_vstats_t *st = &p->pt->stats;
  double lat = cal_chart_num(p->pt->latency_ms, p->pt->time_ms.v);
  /* both axes logarithmic: a figure of 0 or past gnuplot's range cannot
   * be placed */
  if (!cal_chart_pos(r->x) || !cal_chart_pos(y) || !cal_chart_pos(lat))
    return -1;
  r->v[0] = y;
  r->v[1] = cal_chart_ci(st->ci_low, y);
  r->v[2] = cal_chart_ci(st->ci_high, y);
  r->v[3] = r->x == p->mode->peak_batch_size.v;
  r->v[4] = r->x == p->mode->knee_batch_size.v;
  r->v[5] = lat;
  /* latency is the step for batch / rate: the rate's interval, inverted */
  r->v[6] = lat * (y / r->v[2]);
  r->v[7] = lat * (y / r->v[1]);
  if (!cal_chart_pos(r->v[6]) || !cal_chart_pos(r->v[7]))
    r->v[6] = r->v[7] = lat;
  /* examples/s (prefill, train) and tokens/s (decode): two panels; tags:
   * 1 prefill, 2 decode, 3 train, 4 a workload (inference, dpo, grpo:
   * examples/s as well); the colour is the mode's, the marker the
   * machine's */
  r->tag = strcmp(p->group_key, "decode") == 0    ? 2
           : strcmp(p->group_key, "train") == 0   ? 3
           : strcmp(p->group_key, "prefill") == 0 ? 1 : 4;
  r->lt = r->tag == 4 ? 5 : r->tag;
  r->marker = CAL_GP_FILLED;
  const char *dt = p->pt->dtype ? p->pt->dtype : p->view->batch_sweep.dtype;
  snprintf(key, keylen, "%s%s%s", p->group_key, dt ? ", " : "", dt ? dt : "");
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
  r->x = cbrt(m * n * k);
  if (!(m > 0 && n > 0 && k > 0) || !cal_chart_pos(r->x) ||
      !cal_chart_pos(g))
    return -1;
  const char *dt = p->pt->dtype, *engine = p->pt->engine;
  char what[64];
  snprintf(what, sizeof what, "%s%s%s%s", dt ? dt : "?", engine ? " " : "",
           engine ? engine : "",
           metric && strcmp(metric, "gops") == 0 ? " (GOPS)" : "");
  double t = cal_chart_num(p->pt->threads, 0);
  if (p->by_threads)
    snprintf(key, keylen, "%s, %g %s", what, t, cal_chart_thread_word(t));
  else
    snprintf(key, keylen, "%s", what);
  const cal_vstats_t *st = &p->pt->stats;
  r->v[0] = m;
  r->v[1] = n;
  r->v[2] = k;
  r->v[3] = g;
  r->v[4] = cal_chart_ci(st->ci_low, g);
  r->v[5] = cal_chart_ci(st->ci_high, g);
  /* colour: the dtype; marker: the engine on that machine */
  r->lt = cal_chart_dtype_lt(dt);
  snprintf(r->mark, sizeof r->mark, "%s", engine ? engine : "");
  r->marker = fill_for(!p->by_threads || t > 1);
  return 1;
}

int cal_chart_scaling_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                          size_t keylen) {
  r->x = p->pt->threads.v;
  r->v[0] = p->pt->gflops.v;
  r->v[2] = p->pt->efficiency.v;
  if (!(r->x >= 1) || !cal_chart_pos(r->x) || !cal_chart_pos(r->v[0]))
    return -1;
  const char *dt = p->pt->dtype;
  const cal_vstats_t *st = &p->pt->stats;
  r->v[3] = cal_chart_ci(st->ci_low, r->v[0]);
  r->v[4] = cal_chart_ci(st->ci_high, r->v[0]);
  r->lt = cal_chart_dtype_lt(dt);
  r->marker = CAL_GP_FILLED;
  snprintf(key, keylen, "%s", dt ? dt : "");
  return 1;
}

/* ideal: the fewest-threads point scaled linearly; the efficiency, where
 * the profile has none that can be drawn, measured / ideal */
void cal_chart_scaling_ideal(cal_gp_set_t *set) {
  cal_gp_set_sort(set);
  for (size_t i = 0; i < set->n; i++) {
    cal_gp_series_t *s = &set->s[i];
    for (size_t r = 0; r < s->n; r++) {
      cal_gp_row_t *row = &s->rows[r];
      row->v[1] = s->rows[0].v[0] * row->x / s->rows[0].x;
      if (!(row->v[2] >= 0 && row->v[2] <= 1e300))
        row->v[2] = row->v[0] / row->v[1];
    }
  }
}

int cal_chart_bandwidth_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                            size_t keylen) {
  double threads = cal_chart_num(p->pt->threads, 1);
  /* per core: the cache marks are per-core sizes, and each thread of a
   * 2-thread point streams its own share of the working set */
  r->x = p->pt->working_set_bytes.v / (threads >= 1 ? threads : 1);
  r->v[0] = p->pt->gbps.v;
  if (!cal_chart_pos(r->x) || !cal_chart_pos(r->v[0]))
    return -1;
  const cal_vstats_t *st = &p->pt->stats;
  r->v[1] = cal_chart_ci(st->ci_low, r->v[0]);
  r->v[2] = cal_chart_ci(st->ci_high, r->v[0]);
  const char *kn = p->pt->kernel;
  if (kn && strncmp(kn, "stream_", 7) == 0)
    kn += 7;
  static const char *const kernels[] = {"read", "triad", "copy", "write",
                                        "scale", "add"};
  /* colour: the kernel; marker: per level or staircase, per machine */
  r->lt = 8;
  for (int i = 0; kn && i < 6; i++)
    if (strcmp(kn, kernels[i]) == 0)
      r->lt = i + 1;
  int level = p->pt->level != NULL;
  /* per-level points are separate measurements, never joined */
  r->tag = level ? 1 : 2;
  r->marker = fill_for(threads > 1);
  /* cache-level points and the working-set staircase are separate
   * series: joining them would zigzag */
  const char *kind = level ? "per level" : "staircase";
  snprintf(r->mark, sizeof r->mark, "%s", kind);
  if (p->by_threads)
    snprintf(key, keylen, "%s %s, %g %s", kn ? kn : "?", kind, threads,
             cal_chart_thread_word(threads));
  else
    snprintf(key, keylen, "%s %s", kn ? kn : "?", kind);
  return 1;
}

int cal_chart_roofline_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                           size_t keylen) {
  const cal_vroof_kernel_t *kr = p->kernel;
  r->x = kr->intensity_flop_per_byte.v;
  r->v[0] = kr->gflops.v;
  if (!cal_chart_pos(r->x) || !cal_chart_pos(r->v[0]))
    return -1;
  const char *nm = kr->kernel, *dt = kr->dtype;
  double t = cal_chart_num(kr->threads, 1);
  snprintf(r->text, sizeof r->text, "%s", nm ? nm : "");
  /* no text at the points (they collide): one series per kernel family,
   * dtype and threads; colour: the dtype, marker: the family on that
   * machine, filled for all threads */
  const char *fam = "other";
  if (nm && strstr(nm, "gemm"))
    fam = "GEMM";
  else if (nm && strstr(nm, "attn"))
    fam = "attention";
  else if (nm && (strstr(nm, "layer") || strncmp(nm, "model", 5) == 0))
    fam = "model step";
  else if (nm && strstr(nm, "stream"))
    fam = "stream";
  r->lt = cal_chart_dtype_lt(dt);
  snprintf(r->mark, sizeof r->mark, "%s", fam);
  r->marker = fill_for(t > 1);
  /* int8 counts integer operations: GOPS, against its own roof */
  snprintf(key, keylen, "%s %s%s, %g %s", fam, dt ? dt : "?",
           dt && strcmp(dt, "int8") == 0 ? " (GOPS)" : "", t,
           cal_chart_thread_word(t));
  return 1;
}

/* attention: one x place per shape (the id without its /tN, named in the
 * text column; charts_style.c numbers them over every profile) */
int cal_chart_attention_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                            size_t keylen) {
  const char *id = p->pt->id;
  double g = p->pt->gflops.v;
  if (!id)
    return 0;
  if (!cal_chart_pos(g))
    return -1;
  const char *cut = strrchr(id, '/');
  size_t shape_len = cut ? (size_t)(cut - id) : strlen(id);
  /* "attention/fused/b1h8kv8/q512k512/d64/causal" -> without the section */
  const char *shown = strncmp(id, "attention/", 10) == 0 ? id + 10 : id;
  size_t skip = (size_t)(shown - id);
  /* at most 44 characters: the names stand under the chart */
  size_t shown_len = shape_len > skip ? shape_len - skip : 0;
  snprintf(r->text, sizeof r->text, "%.*s%s",
           (int)(shown_len > 44 ? 41 : shown_len), shown,
           shown_len > 44 ? "..." : "");
  for (char *c = r->text; *c; c++)
    *c = *c == '/' ? ' ' : *c;
  const cal_vstats_t *st = &p->pt->stats;
  double t = cal_chart_num(p->pt->threads, 1);
  double pct = 100 * p->pt->ratio_to_gemm.v;
  r->v[0] = g;
  r->v[1] = cal_chart_ci(st->ci_low, g);
  r->v[2] = cal_chart_ci(st->ci_high, g);
  r->v[3] = pct >= 0 && pct <= 1e300 ? pct : NAN;
  const char *dt = p->pt->dtype;
  r->lt = cal_chart_dtype_lt(dt);
  r->marker = fill_for(t > 1);
  snprintf(key, keylen, "%s%s%g %s", dt ? dt : "", dt ? ", " : "", t,
           cal_chart_thread_word(t));
  return 1;
}

/* peak: each kernel and variant measured against its theoretical peak
 * (the point's efficiency), one bar per machine and thread count side by
 * side in the kernel's place (charts_style.c places them) */
int cal_chart_peak_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen) {
  const char *metric = p->pt->metric;
  double v = metric ? p->pt->value.v : p->pt->gflops.v;
  double e = p->pt->efficiency.v;
  const char *kn = p->pt->kernel;
  const char *var = p->pt->variant;
  const char *dt = p->pt->dtype;
  if (!kn)
    return 0;
  if (!cal_chart_pos(v) || !cal_chart_pos(e) || !cal_chart_pos(v / e) ||
      !cal_chart_pos(100 * e))
    return -1;
  double t = cal_chart_num(p->pt->threads, 1);
  r->v[0] = 100 * e;
  r->v[1] = v;
  r->v[2] = v / e;
  /* the median's interval, as a share of the same theoretical peak */
  const cal_vstats_t *st = &p->pt->stats;
  r->v[3] = 100 * e * cal_chart_ci(st->ci_low, v) / v;
  r->v[4] = 100 * e * cal_chart_ci(st->ci_high, v) / v;
  snprintf(r->text, sizeof r->text, "%s %s%s%s", dt ? dt : "?", kn,
           var ? " " : "", var ? var : "");
  /* bars: a colour per machine and thread count, hatched for one thread
   * (the template reads pt 2 as hatched) */
  r->pt = t > 1 ? 1 : 2;
  snprintf(key, keylen, "%g %s", t, cal_chart_thread_word(t));
  return 1;
}

/* the peak chart's bars side by side: a colour each, the width in the
 * last numeric column */
void cal_chart_peak_place(cal_gp_set_t *set) {
  cal_chart_slots(set, 0.8, 5);
  for (size_t i = 0; i < set->n; i++) {
    /* the machine's colour; the next free one where a machine has more
     * than one series of a fill */
    cal_gp_series_t *s = &set->s[i];
    s->lt = (int)(s->profile % 8) + 1;
    for (int tries = 0; tries < 8; tries++) {
      size_t j = 0;
      while (j < i && !(set->s[j].lt == s->lt && set->s[j].pt == s->pt))
        j++;
      if (j == i)
        break;
      s->lt = s->lt % 8 + 1;
    }
  }
}

/* the attention chart's points spread in each shape's place; tag 1 when
 * a series has a fraction of GEMM to draw */
void cal_chart_attention_place(cal_gp_set_t *set) {
  cal_chart_slots(set, 0.5, -1);
  for (size_t i = 0; i < set->n; i++) {
    set->s[i].tag = 0;
    for (size_t r = 0; r < set->s[i].n; r++)
      if (!isnan(set->s[i].rows[r].v[3]))
        set->s[i].tag = 1;
  }
}
