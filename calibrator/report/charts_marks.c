/* What the charts' scripts get besides their rows: the cache sizes and
 * measured drops of the bandwidth chart, the roofline's ceilings, the
 * measured peaks of the GEMM chart, the batch sweep's title. */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "profile.h"

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
      if (!cal_chart_point_ok(pt) || json_object_get(pt, "level") || !k ||
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

void cal_chart_bandwidth_header(FILE *f, const void *arg) {
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
              in->n > 1 ? (int)p + 1 : cal_chart_dtype_lt(key), w->ncomp + 1,
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
void cal_chart_roofline_header(FILE *f, const void *arg) {
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

int cal_chart_roofline_has_ceilings(const cal_chart_in_t *in) {
  for (size_t p = 0; p < in->n; p++)
    if (json_object_size(section_get(in->roots[p], "roofline",
                                     "compute_gflops")) ||
        json_object_size(section_get(in->roots[p], "roofline",
                                     "bandwidth_gbps")))
      return 1;
  return 0;
}

/* ---- gemm: the measured compute peaks as lines ---- */

void cal_chart_gemm_header(FILE *f, const void *arg) {
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
                in->n > 1 ? (int)p + 1 : cal_chart_dtype_lt(key), n);
        cal_gp_quote(f, l);
        fputc('\n', f);
      }
    }
  }
}

/* ---- batch sweep: what was measured, in the title ---- */

void cal_chart_batch_what(const cal_chart_in_t *in, char *buf, size_t len) {
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

