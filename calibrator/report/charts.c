/* The chart table and what each chart reads from a profile. */
#include "charts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "profile.h"

/* ---- reading points ---- */

static int point_ok(const json_t *pt) {
  const char *s = json_string_value(json_object_get(pt, "status"));
  return s && strcmp(s, "ok") == 0;
}

/* The palette entry of a dtype, the same in every chart (gnuplot.c
 * defines the palette). */
static int dtype_lt(const char *dt) {
  static const char *const order[] = {"fp64", "fp32", "bf16", "fp16",
                                      "int8", "tf32"};
  for (int i = 0; dt && i < 6; i++)
    if (strcmp(dt, order[i]) == 0)
      return i + 1;
  return 7;
}

/* gnuplot point types: filled for all threads, open for one thread */
enum { PT_CIRCLE = 6, PT_SQUARE = 4, PT_TRIANGLE = 8, PT_DIAMOND = 12 };
static int filled(int open_pt, int is_filled) {
  return is_filled ? open_pt + 1 : open_pt;
}

static const char *thread_word(double t) {
  return t == 1 ? "thread" : "threads";
}

/* root.section.key, or NULL */
static const json_t *section_get(const json_t *root, const char *section,
                                 const char *key) {
  return json_object_get(json_object_get(root, section), key);
}

/* The items of the array section.key of every profile, in order. */
typedef struct item_iter {
  const cal_chart_in_t *in;
  const char *section, *key;
  size_t p, i; /* the profile of the item last returned; the next index */
} item_iter_t;

static const json_t *next_item(item_iter_t *it) {
  for (; it->p < it->in->n; it->p++, it->i = 0) {
    const json_t *a = section_get(it->in->roots[it->p], it->section, it->key);
    if (it->i < json_array_size(a))
      return json_array_get(a, it->i++);
  }
  return NULL;
}

/* Distinct values of an integer key among ok points: more than one? */
static int varies(const json_t *points, const char *k) {
  size_t i;
  const json_t *pt;
  double first = NAN;
  json_array_foreach(points, i, pt) {
    if (!point_ok(pt))
      continue;
    double v = cal_json_num(pt, k, NAN);
    if (isnan(first))
      first = v;
    else if (v != first)
      return 1;
  }
  return 0;
}

/* The points of one group of profile p into set. */
static int collect_group(const cal_chart_t *ch, size_t p, const json_t *group,
                         const char *group_key, cal_gp_set_t *set) {
  const json_t *pts = json_object_get(group, ch->points);
  cal_chart_pt_t in = {.group = group, .group_key = group_key,
                       .by_threads = varies(pts, "threads")};
  size_t i;
  const json_t *pt;
  json_array_foreach(pts, i, pt) {
    if (ch->ok_only && !point_ok(pt))
      continue;
    cal_gp_row_t r = {0};
    char key[sizeof set->s->key] = "";
    in.pt = pt;
    if (ch->row(&in, &r, key, sizeof key) &&
        cal_gp_set_add(set, p, key, &r) < 0)
      return CAL_ENOMEM;
  }
  return 0;
}

int cal_chart_collect(const cal_chart_t *ch, const cal_chart_in_t *in,
                      cal_gp_set_t *set) {
  for (size_t p = 0; p < in->n; p++) {
    const json_t *sec = json_object_get(in->roots[p], ch->section);
    if (!ch->groups) {
      if (collect_group(ch, p, sec, "", set) < 0)
        return CAL_ENOMEM;
      continue;
    }
    const char *name;
    json_t *group;
    json_object_foreach(json_object_get(sec, ch->groups), name, group)
      if (collect_group(ch, p, group, name, set) < 0)
        return CAL_ENOMEM;
  }
  if (ch->finish)
    ch->finish(set);
  return 0;
}

/* ---- rows of each chart ---- */

static int batch_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                     size_t keylen) {
  r->x = cal_json_num(p->pt, "batch_size", NAN);
  double y = cal_json_num(p->pt, "examples_per_s", NAN);
  if (!(r->x > 0) || !isfinite(y))
    return 0;
  const json_t *st = json_object_get(p->pt, "stats");
  r->v[0] = y;
  r->v[1] = cal_json_num(st, "ci_low", y);
  r->v[2] = cal_json_num(st, "ci_high", y);
  r->v[3] = r->x == cal_json_num(p->group, "peak_batch_size", NAN);
  r->v[4] = r->x == cal_json_num(p->group, "knee_batch_size", NAN);
  r->v[5] = cal_json_num(p->pt, "latency_ms",
                         cal_json_num(p->pt, "time_ms", NAN));
  /* latency is the step for batch / rate: the rate's interval, inverted */
  r->v[6] = r->v[5] * y / r->v[2];
  r->v[7] = r->v[5] * y / r->v[1];
  /* prefill and decode count different things: separate panels */
  /* examples/s (prefill, train) and tokens/s (decode): two panels */
  r->tag = strcmp(p->group_key, "decode") == 0  ? 2
           : strcmp(p->group_key, "train") == 0 ? 3 : 1;
  r->pt = r->tag == 2 ? 5 : r->tag == 3 ? 9 : 7;
  snprintf(key, keylen, "%s", p->group_key);
  return 1;
}

static int gemm_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                    size_t keylen) {
  /* a confirmation re-measures a size already on the curve */
  if (json_object_get(p->pt, "confirms"))
    return 0;
  /* the point's own rate: gflops, or gops for int8 */
  const char *metric = json_string_value(json_object_get(p->pt, "metric"));
  double m = cal_json_num(p->pt, "m", NAN), n = cal_json_num(p->pt, "n", NAN);
  double k = cal_json_num(p->pt, "k", NAN);
  double g = cal_json_num(p->pt, metric ? metric : "gflops", NAN);
  if (!(m > 0 && n > 0 && k > 0) || !isfinite(g))
    return 0;
  const char *dt = json_string_value(json_object_get(p->pt, "dtype"));
  const char *engine = json_string_value(json_object_get(p->pt, "engine"));
  char what[64];
  snprintf(what, sizeof what, "%s%s%s%s", dt ? dt : "?", engine ? " " : "",
           engine ? engine : "",
           metric && strcmp(metric, "gops") == 0 ? " (GOPS)" : "");
  double t = cal_json_num(p->pt, "threads", 0);
  if (p->by_threads)
    snprintf(key, keylen, "%s, %g %s", what, t, thread_word(t));
  else
    snprintf(key, keylen, "%s", what);
  const json_t *st = json_object_get(p->pt, "stats");
  r->x = cbrt(m * n * k);
  r->v[0] = m;
  r->v[1] = n;
  r->v[2] = k;
  r->v[3] = g;
  r->v[4] = cal_json_num(st, "ci_low", g);
  r->v[5] = cal_json_num(st, "ci_high", g);
  r->lt = dtype_lt(dt);
  r->pt = filled(PT_CIRCLE, !p->by_threads || t > 1);
  return 1;
}

static int scaling_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                       size_t keylen) {
  r->x = cal_json_num(p->pt, "threads", NAN);
  r->v[0] = cal_json_num(p->pt, "gflops", NAN);
  r->v[2] = cal_json_num(p->pt, "efficiency", NAN);
  if (!(r->x >= 1) || !isfinite(r->v[0]))
    return 0;
  const char *dt = json_string_value(json_object_get(p->pt, "dtype"));
  const json_t *st = json_object_get(p->pt, "stats");
  r->v[3] = cal_json_num(st, "ci_low", r->v[0]);
  r->v[4] = cal_json_num(st, "ci_high", r->v[0]);
  r->lt = dtype_lt(dt);
  snprintf(key, keylen, "%s", dt ? dt : "");
  return 1;
}

/* ideal: the fewest-threads point scaled linearly */
static void scaling_ideal(cal_gp_set_t *set) {
  cal_gp_set_sort(set);
  for (size_t i = 0; i < set->n; i++) {
    cal_gp_series_t *s = &set->s[i];
    for (size_t r = 0; r < s->n; r++)
      s->rows[r].v[1] = s->rows[0].v[0] * s->rows[r].x / s->rows[0].x;
  }
}

static int bandwidth_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                         size_t keylen) {
  double threads = cal_json_num(p->pt, "threads", 1);
  /* per core: the cache marks are per-core sizes, and each thread of a
   * 2-thread point streams its own share of the working set */
  r->x = cal_json_num(p->pt, "working_set_bytes", NAN) /
         (threads >= 1 ? threads : 1);
  r->v[0] = cal_json_num(p->pt, "gbps", NAN);
  if (!(r->x > 0) || !isfinite(r->v[0]))
    return 0;
  const json_t *st = json_object_get(p->pt, "stats");
  r->v[1] = cal_json_num(st, "ci_low", r->v[0]);
  r->v[2] = cal_json_num(st, "ci_high", r->v[0]);
  const char *kn = json_string_value(json_object_get(p->pt, "kernel"));
  if (kn && strncmp(kn, "stream_", 7) == 0)
    kn += 7;
  static const char *const kernels[] = {"read", "triad", "copy", "write",
                                        "scale", "add"};
  r->lt = 7;
  for (int i = 0; kn && i < 6; i++)
    if (strcmp(kn, kernels[i]) == 0)
      r->lt = i + 1;
  int level = json_is_string(json_object_get(p->pt, "level"));
  /* per-level points are separate measurements, never joined */
  r->tag = level ? 1 : 2;
  r->pt = filled(level ? PT_SQUARE : PT_CIRCLE, threads > 1);
  /* cache-level points and the working-set staircase are separate
   * series: joining them would zigzag */
  const char *kind = json_is_string(json_object_get(p->pt, "level"))
                         ? "per level" : "staircase";
  if (p->by_threads)
    snprintf(key, keylen, "%s %s, %g %s", kn ? kn : "?", kind, threads,
             thread_word(threads));
  else
    snprintf(key, keylen, "%s %s", kn ? kn : "?", kind);
  return 1;
}

static int roofline_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                        size_t keylen) {
  (void)key;
  (void)keylen;
  r->x = cal_json_num(p->pt, "intensity_flop_per_byte", NAN);
  r->v[0] = cal_json_num(p->pt, "gflops", NAN);
  if (!(r->x > 0) || !(r->v[0] > 0))
    return 0;
  const char *nm = json_string_value(json_object_get(p->pt, "kernel"));
  const char *dt = json_string_value(json_object_get(p->pt, "dtype"));
  double t = cal_json_num(p->pt, "threads", 1);
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
  r->lt = dtype_lt(dt);
  r->pt = filled(shape, t > 1);
  snprintf(key, keylen, "%s %s, %g %s", fam, dt ? dt : "?", t,
           thread_word(t));
  return 1;
}

/* attention: one x position per shape (the id without its /tN), in the
 * order shapes first appear; the shape named in the text column */
static int attention_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                         size_t keylen) {
  const char *id = json_string_value(json_object_get(p->pt, "id"));
  double g = cal_json_num(p->pt, "gflops", NAN);
  if (!id || !isfinite(g))
    return 0;
  const char *cut = strrchr(id, '/');
  size_t shape_len = cut ? (size_t)(cut - id) : strlen(id);
  size_t i, ord = 0, nseen = 0;
  const json_t *q;
  struct { const char *s; size_t len; } seen[256];
  json_array_foreach(json_object_get(p->group, "points"), i, q) {
    const char *qid = json_string_value(json_object_get(q, "id"));
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
  const json_t *st = json_object_get(p->pt, "stats");
  double t = cal_json_num(p->pt, "threads", 1);
  r->x = (double)ord + 1 + (t > 1 ? 0.12 : -0.12);
  r->v[0] = g;
  r->v[1] = cal_json_num(st, "ci_low", g);
  r->v[2] = cal_json_num(st, "ci_high", g);
  r->v[3] = 100 * cal_json_num(p->pt, "ratio_to_gemm", NAN);
  r->lt = t > 1 ? 2 : 1;
  r->pt = filled(PT_TRIANGLE, t > 1);
  snprintf(key, keylen, "%g %s", t, thread_word(t));
  return 1;
}

/* peak: each kernel and variant measured against its theoretical peak
 * (the point's efficiency), one bar per thread count */
static int peak_row(const cal_chart_pt_t *p, cal_gp_row_t *r, char *key,
                    size_t keylen) {
  const char *metric = json_string_value(json_object_get(p->pt, "metric"));
  double v = cal_json_num(p->pt, metric ? metric : "gflops", NAN);
  double e = cal_json_num(p->pt, "efficiency", NAN);
  const char *kn = json_string_value(json_object_get(p->pt, "kernel"));
  const char *var = json_string_value(json_object_get(p->pt, "variant"));
  const char *dt = json_string_value(json_object_get(p->pt, "dtype"));
  if (!(v > 0) || !(e > 0) || !kn)
    return 0;
  /* x: the position of the (kernel, variant) among the ok points */
  size_t i, ord = 0, nseen = 0;
  const json_t *q;
  const json_t *seen[128];
  json_array_foreach(json_object_get(p->group, "points"), i, q) {
    if (!point_ok(q))
      continue;
    const char *qk = json_string_value(json_object_get(q, "kernel"));
    const char *qv = json_string_value(json_object_get(q, "variant"));
    size_t j;
    for (j = 0; j < nseen; j++) {
      const char *sk = json_string_value(json_object_get(seen[j], "kernel"));
      const char *sv = json_string_value(json_object_get(seen[j], "variant"));
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
  double t = cal_json_num(p->pt, "threads", 1);
  r->x = (double)ord + 1 + (t > 1 ? 0.2 : -0.2);
  r->v[0] = 100 * e;
  r->v[1] = v;
  r->v[2] = v / e;
  /* the median's interval, as a share of the same theoretical peak */
  const json_t *st = json_object_get(p->pt, "stats");
  r->v[3] = 100 * e * cal_json_num(st, "ci_low", v) / v;
  r->v[4] = 100 * e * cal_json_num(st, "ci_high", v) / v;
  snprintf(r->text, sizeof r->text, "%s %s%s%s", dt ? dt : "?", kn,
           var ? " " : "", var ? var : "");
  r->lt = t > 1 ? 2 : 1;
  snprintf(key, keylen, "%g %s", t, thread_word(t));
  return 1;
}

/* ---- bandwidth: cache sizes marked ---- */

static void human_bytes(double b, char *buf, size_t len) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  snprintf(buf, len, "%.3g %s", b, unit[u]);
}

static void level_name(const json_t *lv, char *buf, size_t len) {
  if (json_is_integer(lv))
    snprintf(buf, len, "L%" JSON_INTEGER_FORMAT, json_integer_value(lv));
  else if (json_is_string(lv))
    snprintf(buf, len, "%s", json_string_value(lv));
  else
    snprintf(buf, len, "?");
}

typedef char cache_name_t[160];

/* Distinct (level, size) cache marks over all profiles into size[] and
 * name[] (room for every cache); returns how many. */
static size_t cache_marks(const cal_chart_in_t *in, double *size,
                          cache_name_t *name) {
  size_t n = 0;
  item_iter_t it = {.in = in, .section = "bandwidth", .key = "caches"};
  for (const json_t *cc; (cc = next_item(&it)) != NULL;) {
    double total = cal_json_num(cc, "size_bytes", NAN);
    double sharing = cal_json_num(cc, "cores_sharing", 1);
    if (!(total > 0))
      continue;
    /* the axis is the working set per core: a shared cache's share */
    double sz = sharing > 1 ? total / sharing : total;
    char lv[32], hb[100], tb[32];
    level_name(json_object_get(cc, "level"), lv, sizeof lv);
    human_bytes(sz, hb, sizeof hb);
    if (sharing > 1) {
      human_bytes(total, tb, sizeof tb);
      size_t at = strlen(hb);
      snprintf(hb + at, sizeof hb - at, " per core (%s / %g, reported)", tb,
               sharing);
    }
    int dup = 0;
    for (size_t j = 0; j < n; j++)
      dup |= size[j] == sz && strncmp(name[j], lv, strlen(lv)) == 0;
    if (dup)
      continue;
    size[n] = sz;
    if (in->n > 1)
      snprintf(name[n], sizeof name[n], "%s %s (%.30s)", lv, hb,
               in->labels[it.p]);
    else
      snprintf(name[n], sizeof name[n], "%s %s", lv, hb);
    n++;
  }
  return n;
}

typedef struct ws_pt {
  double ws, gbps;
} ws_pt_t;

static int ws_cmp(const void *a, const void *b) {
  double x = ((const ws_pt_t *)a)->ws, y = ((const ws_pt_t *)b)->ws;
  return (x > y) - (x < y);
}

/* Where the measured bandwidth falls: between two neighbouring sizes of
 * the one-thread staircase of a kernel where it drops by more than a
 * quarter.  A cache's reported size can differ from where it ends in
 * practice (a VM reports the host's L3), so the chart shows both. */
#define DROP_MAX 16
static size_t measured_drops(const cal_chart_in_t *in, double *at,
                             cache_name_t *name) {
  size_t n = 0;
  for (size_t p = 0; p < in->n && n < DROP_MAX; p++) {
    const json_t *pts =
        json_object_get(json_object_get(in->roots[p], "bandwidth"), "points");
    ws_pt_t w[128];
    size_t nw = 0, i;
    const json_t *pt;
    const char *kernel = NULL;
    json_array_foreach(pts, i, pt) {
      const char *k = json_string_value(json_object_get(pt, "kernel"));
      if (!point_ok(pt) || json_object_get(pt, "level") || !k ||
          cal_json_num(pt, "threads", 1) != 1 || nw >= 128)
        continue;
      if (!kernel)
        kernel = k; /* the first staircase kernel */
      if (strcmp(k, kernel) != 0)
        continue;
      w[nw].ws = cal_json_num(pt, "working_set_bytes", NAN);
      w[nw].gbps = cal_json_num(pt, "gbps", NAN);
      if (w[nw].ws > 0 && w[nw].gbps > 0)
        nw++;
    }
    qsort(w, nw, sizeof *w, ws_cmp);
    /* a fall over neighbouring steps is one */
    size_t last = (size_t)-1, from = 0;
    for (i = 1; i < nw && n < DROP_MAX; i++) {
      if (!(w[i].gbps < 0.75 * w[i - 1].gbps))
        continue;
      if (last == i - 1)
        n--; /* this profile's previous drop, extended */
      else
        from = i - 1;
      last = i;
      char a[32], b[32];
      human_bytes(w[from].ws, a, sizeof a);
      human_bytes(w[i].ws, b, sizeof b);
      at[n] = sqrt(w[from].ws * w[i].ws);
      if (in->n > 1)
        snprintf(name[n], sizeof name[n], "measured drop %s-%s (%.30s)", a, b,
                 in->labels[p]);
      else
        snprintf(name[n], sizeof name[n], "measured drop %s-%s", a, b);
      n++;
    }
  }
  return n;
}

static void bandwidth_drops(FILE *f, const cal_chart_in_t *in) {
  double at[DROP_MAX];
  cache_name_t name[DROP_MAX];
  size_t n = measured_drops(in, at, name);
  fprintf(f, "ndrops = %zu\narray drop_bytes[%zu]\narray drop_label[%zu]\n"
             "drop_label[1] = ''\n", n, n ? n : 1, n ? n : 1);
  for (size_t j = 0; j < n; j++) {
    fprintf(f, "drop_bytes[%zu] = %.10g\ndrop_label[%zu] = ", j + 1, at[j],
            j + 1);
    cal_gp_quote(f, name[j]);
    fputc('\n', f);
  }
}

static void bandwidth_header(FILE *f, const void *arg) {
  const cal_chart_in_t *in = arg;
  size_t cap = 0, n = 0;
  item_iter_t it = {.in = in, .section = "bandwidth", .key = "caches"};
  while (next_item(&it))
    cap++;
  double *size = calloc(cap ? cap : 1, sizeof *size);
  cache_name_t *name = calloc(cap ? cap : 1, sizeof *name);
  if (size && name)
    n = cache_marks(in, size, name);
  fprintf(f, "ncaches = %zu\n", n);
  fprintf(f, "array cache_bytes[%zu]\narray cache_label[%zu]\n"
             "cache_label[1] = ''\n", n ? n : 1, n ? n : 1);
  for (size_t j = 0; j < n; j++) {
    fprintf(f, "cache_bytes[%zu] = %.10g\ncache_label[%zu] = ", j + 1,
            size[j], j + 1);
    cal_gp_quote(f, name[j]);
    fputc('\n', f);
  }
  free(size);
  free(name);
  bandwidth_drops(f, in);
}

/* ---- roofline: compute and memory ceilings ---- */

typedef struct roof_walk {
  FILE *f; /* NULL: count and measure only */
  size_t ncomp, nmem;
  double xmin, xmax; /* ridge points and kernel intensities */
} roof_walk_t;

static void roof_range(roof_walk_t *w, double x) {
  w->xmin = x < w->xmin ? x : w->xmin;
  w->xmax = x > w->xmax ? x : w->xmax;
}

/* The bandwidth of the last level (main memory) of a profile: the
 * "memory" key, else the lowest bandwidth; 0 when none. */
static double dram_gbps(const json_t *roof) {
  const json_t *bw = json_object_get(roof, "bandwidth_gbps");
  double m = cal_json_num(bw, "memory", NAN);
  if (m > 0)
    return m;
  double lo = 0;
  const char *key;
  json_t *x;
  json_object_foreach((json_t *)bw, key, x) {
    double b = json_is_number(x) ? json_number_value(x) : NAN;
    if (b > 0 && (lo == 0 || b < lo))
      lo = b;
  }
  return lo;
}

/* The ceilings of profile p: counted, ridges measured, written to w->f. */
static void roof_profile(const cal_chart_in_t *in, size_t p, roof_walk_t *w) {
  const json_t *roof = json_object_get(in->roots[p], "roofline");
  const char *pre = in->n > 1 ? in->labels[p] : "", *sep = in->n > 1 ? " " : "";
  double peak = 0, dram = dram_gbps(roof);
  const char *key;
  json_t *x;
  char l[200];
  json_object_foreach(json_object_get(roof, "compute_gflops"), key, x) {
    double g = json_is_number(x) ? json_number_value(x) : NAN;
    if (!(g > 0) || strcmp(key, "int8") == 0) /* int8 is GOPS */
      continue;
    peak = g > peak ? g : peak;
    if (dram > 0)
      roof_range(w, g / dram);
    if (w->f) {
      if (dram > 0)
        snprintf(l, sizeof l, "%.30s%s%s roof %.4g GFLOPS, ridge %.3g FLOP/B",
                 pre, sep, key, g, g / dram);
      else
        snprintf(l, sizeof l, "%.30s%s%s roof %.4g GFLOPS", pre, sep, key, g);
      fprintf(w->f,
              "compute_gflops[%zu] = %.10g; compute_lt[%zu] = %d; "
              "compute_dram[%zu] = %.10g\ncompute_label[%zu] = ",
              w->ncomp + 1, g, w->ncomp + 1,
              in->n > 1 ? (int)p + 1 : dtype_lt(key), w->ncomp + 1,
              dram > 0 ? dram : 1e30, w->ncomp + 1);
      cal_gp_quote(w->f, l);
      fputc('\n', w->f);
    }
    w->ncomp++;
  }
  json_object_foreach(json_object_get(roof, "bandwidth_gbps"), key, x) {
    double b = json_is_number(x) ? json_number_value(x) : NAN;
    if (!(b > 0))
      continue;
    if (peak > 0)
      roof_range(w, peak / b);
    if (w->f) {
      snprintf(l, sizeof l, "%.30s%s%s %.4g GB/s", pre, sep, key, b);
      fprintf(w->f,
              "memory_gbps[%zu] = %.10g\nmemory_peak[%zu] = %.10g\n"
              "memory_label[%zu] = ",
              w->nmem + 1, b, w->nmem + 1, peak > 0 ? peak : 1e30,
              w->nmem + 1);
      cal_gp_quote(w->f, l);
      fputc('\n', w->f);
    }
    w->nmem++;
  }
}

/* Ceilings as arrays; the x range covers every ridge and point. */
static void roofline_header(FILE *f, const void *arg) {
  const cal_chart_in_t *in = arg;
  roof_walk_t w = {.xmin = INFINITY};
  for (size_t p = 0; p < in->n; p++)
    roof_profile(in, p, &w);
  fprintf(f, "ncompute = %zu\nnmemory = %zu\n", w.ncomp, w.nmem);
  /* arrays of at least one: gnuplot parses a loop it never runs */
  size_t nc = w.ncomp ? w.ncomp : 1, nm = w.nmem ? w.nmem : 1;
  fprintf(f, "array compute_gflops[%zu]\narray compute_label[%zu]\n"
             "array compute_lt[%zu]\narray compute_dram[%zu]\n",
          nc, nc, nc, nc);
  fprintf(f, "array memory_gbps[%zu]\narray memory_peak[%zu]\n"
             "array memory_label[%zu]\n", nm, nm, nm);
  fputs("compute_label[1] = ''\nmemory_label[1] = ''\n", f);
  w.f = f;
  w.ncomp = w.nmem = 0;
  for (size_t p = 0; p < in->n; p++)
    roof_profile(in, p, &w);
  item_iter_t it = {.in = in, .section = "roofline", .key = "kernels"};
  for (const json_t *pt; (pt = next_item(&it)) != NULL;) {
    double x = cal_json_num(pt, "intensity_flop_per_byte", NAN);
    if (x > 0)
      roof_range(&w, x);
  }
  if (!(w.xmax > 0)) {
    w.xmin = 1.0 / 16;
    w.xmax = 64;
  }
  fprintf(f, "xmin = %.10g\nxmax = %.10g\n", w.xmin / 8, w.xmax * 8);
}

static int roofline_has_ceilings(const cal_chart_in_t *in) {
  for (size_t p = 0; p < in->n; p++)
    if (json_object_size(section_get(in->roots[p], "roofline",
                                     "compute_gflops")) ||
        json_object_size(section_get(in->roots[p], "roofline",
                                     "bandwidth_gbps")))
      return 1;
  return 0;
}

/* ---- gemm: the measured compute peaks as lines ---- */

static void gemm_header(FILE *f, const void *arg) {
  const cal_chart_in_t *in = arg;
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      /* arrays of at least one: gnuplot parses a loop it never runs */
      size_t a = n ? n : 1;
      fprintf(f, "npeaks = %zu\n", n);
      fprintf(f, "array peak_gflops[%zu]\narray peak_lt[%zu]\n"
                 "array peak_label[%zu]\n", a, a, a);
      if (!n)
        fputs("peak_label[1] = ''\n", f);
      n = 0;
    }
    for (size_t p = 0; p < in->n; p++) {
      const json_t *roof = json_object_get(in->roots[p], "roofline");
      /* only dtypes the GEMM section measured */
      const json_t *dts =
          json_object_get(json_object_get(in->roots[p], "gemm"), "dtypes");
      const char *key;
      json_t *x;
      json_object_foreach(json_object_get(roof, "compute_gflops"), key, x) {
        double g = json_is_number(x) ? json_number_value(x) : NAN;
        if (!(g > 0) || !json_object_get(dts, key) ||
            strcmp(json_string_value(json_object_get(
                       json_object_get(dts, key), "status")) ?: "", "measured"))
          continue;
        n++;
        if (pass == 0)
          continue;
        char l[160];
        snprintf(l, sizeof l, "%s%.30s%s%s measured peak, %g threads: %.4g",
                 "", in->n > 1 ? in->labels[p] : "", in->n > 1 ? " " : "",
                 key, cal_json_num(roof, "threads", 0), g);
        fprintf(f, "peak_gflops[%zu] = %.10g; peak_lt[%zu] = %d\n"
                   "peak_label[%zu] = ", n, g, n,
                in->n > 1 ? (int)p + 1 : dtype_lt(key), n);
        cal_gp_quote(f, l);
        fputc('\n', f);
      }
    }
  }
}

/* ---- batch sweep: what was measured, in the title ---- */

static void batch_what(const cal_chart_in_t *in, char *buf, size_t len) {
  for (size_t p = 0; p < in->n; p++) {
    const json_t *bs = json_object_get(in->roots[p], "batch_sweep");
    if (!json_is_object(bs))
      continue;
    const json_t *m = json_object_get(bs, "model");
    const char *preset = json_string_value(json_object_get(m, "preset"));
    double seq = cal_json_num(m, "seq", NAN);
    size_t at = (size_t)snprintf(buf, len, "Batch sweep:");
    if (preset)
      at += (size_t)snprintf(buf + at, len - at, " %.24s,", preset);
    if (seq > 0)
      at += (size_t)snprintf(buf + at, len - at, " seq %g,", seq);
    /* the modes, each with what it ran (train: the model's layers,
     * measured or scaled from fewer; the others one layer), and the
     * dtype of their points */
    const char *dtype = NULL, *mk;
    json_t *mode;
    int first = 1;
    json_object_foreach(json_object_get(bs, "modes"), mk, mode) {
      double layers = cal_json_num(mode, "layers", NAN);
      double from = cal_json_num(mode, "scaled_from_layers", NAN);
      char what[80];
      if (layers > 1 && from > 0)
        snprintf(what, sizeof what, " (%g layers, scaled from %g)", layers,
                 from);
      else if (layers > 1)
        snprintf(what, sizeof what, " (%g layers)", layers);
      else
        snprintf(what, sizeof what, " (one layer)");
      if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "%s%.20s%s",
                               first ? " " : ", ", mk, what);
      first = 0;
      const json_t *pt = json_array_get(json_object_get(mode, "points"), 0);
      if (!dtype)
        dtype = json_string_value(json_object_get(pt, "dtype"));
    }
    if (dtype && at < len)
      snprintf(buf + at, len - at, ", %.12s", dtype);
    return;
  }
  snprintf(buf, len, "Batch sweep");
}

/* ---- the table ---- */

const cal_chart_t cal_charts[CAL_NCHARTS] = {
    {.name = "batch_sweep", .section = "batch_sweep",
     .what = "Throughput vs batch size", .what_fn = batch_what,
     .groups = "modes", .points = "points", .ok_only = 1, .row = batch_row,
     .width = 1200, .height = 520, .ncols = 9,
     .cols = {"batch_size", "examples_per_s", "ci_low", "ci_high", "is_peak",
              "is_knee", "latency_ms", "latency_ci_low", "latency_ci_high"}},
    {.name = "gemm", .section = "gemm", .what = "GEMM GFLOPS vs size",
     .points = "points", .ok_only = 1, .row = gemm_row,
     .header = gemm_header, .ncols = 7,
     .cols = {"cbrt(m*n*k)", "m", "n", "k", "gflops", "ci_low", "ci_high"}},
    {.name = "scaling", .section = "scaling", .what = "Scaling with threads",
     .points = "points", .ok_only = 1, .row = scaling_row,
     .finish = scaling_ideal, .ncols = 6,
     .cols = {"threads", "gflops", "ideal_gflops", "efficiency", "ci_low",
              "ci_high"}},
    {.name = "bandwidth", .section = "bandwidth",
     .what = "Memory bandwidth vs working set per core", .points = "points",
     .ok_only = 1, .row = bandwidth_row, .header = bandwidth_header,
     .ncols = 4, .cols = {"bytes_per_core", "gbps", "ci_low", "ci_high"}},
    {.name = "roofline", .section = "roofline", .what = "Roofline",
     .points = "kernels", .row = roofline_row,
     .has_extra = roofline_has_ceilings, .header = roofline_header,
     .height = 720, .ncols = 3, .with_text = 1,
     .cols = {"intensity_flop_per_byte", "gflops", "name"}},
    {.name = "attention", .section = "attention",
     .what = "Attention GFLOPS and fraction of GEMM per shape",
     .points = "points", .ok_only = 1, .row = attention_row, .height = 720,
     .ncols = 6, .with_text = 1,
     .cols = {"position", "gflops", "ci_low", "ci_high", "pct_of_gemm",
              "shape"}},
    {.name = "peak", .section = "peak",
     .what = "Compute peak: measured vs theoretical", .points = "points",
     .ok_only = 1, .row = peak_row, .ncols = 7, .with_text = 1,
     .cols = {"position", "pct_of_theoretical", "measured", "theoretical",
              "ci_low_pct", "ci_high_pct", "kernel"}},
};
