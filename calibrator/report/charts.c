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
  if (p->by_threads)
    snprintf(key, keylen, "%s %g threads", what,
             cal_json_num(p->pt, "threads", 0));
  else
    snprintf(key, keylen, "%s", what);
  r->x = cbrt(m * n * k);
  r->v[0] = m;
  r->v[1] = n;
  r->v[2] = k;
  r->v[3] = g;
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
  r->x = cal_json_num(p->pt, "working_set_bytes", NAN);
  r->v[0] = cal_json_num(p->pt, "gbps", NAN);
  if (!(r->x > 0) || !isfinite(r->v[0]))
    return 0;
  const char *kn = json_string_value(json_object_get(p->pt, "kernel"));
  if (kn && strncmp(kn, "stream_", 7) == 0)
    kn += 7;
  /* cache-level points and the working-set staircase are separate
   * series: joining them would zigzag */
  const char *kind = json_is_string(json_object_get(p->pt, "level"))
                         ? "per level" : "staircase";
  double threads = cal_json_num(p->pt, "threads", 0);
  if (p->by_threads)
    snprintf(key, keylen, "%s %s, %g thread%s", kn ? kn : "?", kind, threads,
             threads == 1 ? "" : "s");
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
  snprintf(r->text, sizeof r->text, "%s", nm ? nm : "");
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
  snprintf(buf, len, "%g %s", b, unit[u]);
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
    double sz = cal_json_num(cc, "size_bytes", NAN);
    if (!(sz > 0))
      continue;
    char lv[32], hb[32];
    level_name(json_object_get(cc, "level"), lv, sizeof lv);
    human_bytes(sz, hb, sizeof hb);
    int dup = 0;
    for (size_t j = 0; j < n; j++)
      dup |= size[j] == sz && strncmp(name[j], lv, strlen(lv)) == 0;
    if (dup)
      continue;
    size[n] = sz;
    if (in->n > 1)
      snprintf(name[n], sizeof name[n], "%s %s (%s)", lv, hb,
               in->labels[it.p]);
    else
      snprintf(name[n], sizeof name[n], "%s %s", lv, hb);
    n++;
  }
  return n;
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
  if (n)
    fprintf(f, "array cache_bytes[%zu]\narray cache_label[%zu]\n", n, n);
  for (size_t j = 0; j < n; j++) {
    fprintf(f, "cache_bytes[%zu] = %.10g\ncache_label[%zu] = ", j + 1,
            size[j], j + 1);
    cal_gp_quote(f, name[j]);
    fputc('\n', f);
  }
  free(size);
  free(name);
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

/* The ceilings of profile p: counted, ridges measured, written to w->f. */
static void roof_profile(const cal_chart_in_t *in, size_t p, roof_walk_t *w) {
  const json_t *roof = json_object_get(in->roots[p], "roofline");
  const char *pre = in->n > 1 ? in->labels[p] : "", *sep = in->n > 1 ? " " : "";
  double peak = 0;
  const char *key;
  json_t *x;
  char l[200];
  json_object_foreach(json_object_get(roof, "compute_gflops"), key, x) {
    double g = json_is_number(x) ? json_number_value(x) : NAN;
    if (!(g > 0) || strcmp(key, "int8") == 0) /* int8 is GOPS */
      continue;
    peak = g > peak ? g : peak;
    if (w->f) {
      snprintf(l, sizeof l, "%s%s%s peak %.4g GFLOPS", pre, sep, key, g);
      fprintf(w->f, "compute_gflops[%zu] = %.10g\ncompute_label[%zu] = ",
              w->ncomp + 1, g, w->ncomp + 1);
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
      snprintf(l, sizeof l, "%s%s%s %.4g GB/s", pre, sep, key, b);
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
  if (w.ncomp)
    fprintf(f, "array compute_gflops[%zu]\narray compute_label[%zu]\n",
            w.ncomp, w.ncomp);
  if (w.nmem)
    fprintf(f, "array memory_gbps[%zu]\narray memory_peak[%zu]\n"
               "array memory_label[%zu]\n", w.nmem, w.nmem, w.nmem);
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

/* ---- the table ---- */

const cal_chart_t cal_charts[CAL_NCHARTS] = {
    {.name = "batch_sweep", .section = "batch_sweep",
     .what = "Throughput vs batch size", .groups = "modes", .points = "points",
     .ok_only = 1, .row = batch_row, .ncols = 6,
     .cols = {"batch_size", "examples_per_s", "ci_low", "ci_high", "is_peak",
              "is_knee"}},
    {.name = "gemm", .section = "gemm", .what = "GEMM GFLOPS vs size",
     .points = "points", .ok_only = 1, .row = gemm_row, .ncols = 5,
     .cols = {"cbrt(m*n*k)", "m", "n", "k", "gflops"}},
    {.name = "scaling", .section = "scaling", .what = "Scaling with threads",
     .points = "points", .ok_only = 1, .row = scaling_row,
     .finish = scaling_ideal, .ncols = 4,
     .cols = {"threads", "gflops", "ideal_gflops", "efficiency"}},
    {.name = "bandwidth", .section = "bandwidth",
     .what = "Memory bandwidth vs working set", .points = "points",
     .ok_only = 1, .row = bandwidth_row, .header = bandwidth_header,
     .ncols = 2, .cols = {"bytes", "gbps"}},
    {.name = "roofline", .section = "roofline", .what = "Roofline",
     .points = "kernels", .row = roofline_row,
     .has_extra = roofline_has_ceilings, .header = roofline_header,
     .ncols = 3, .with_text = 1,
     .cols = {"intensity_flop_per_byte", "gflops", "name"}},
};
