/* What the charts' scripts get besides their rows: the cache sizes and
 * measured drops of the bandwidth chart, the roofline's ceilings, the
 * measured peaks of the GEMM chart, the batch sweep's title. */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"

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

static void level_name(const cal_vbw_level_t *cc, char *buf, size_t len) {
  if (cc->level.is_int)
    snprintf(buf, len, "L%lld", (long long)cc->level.i);
  else if (cc->level_str)
    snprintf(buf, len, "%s", cc->level_str);
  else
    snprintf(buf, len, "?");
}

typedef char cache_name_t[160];

/* Cache cc of profile p as a mark after the n in size[] and name[],
 * unless one of the same level and size is there; the new count. */
static size_t cache_mark(const cal_chart_in_t *in, size_t p,
                         const cal_vbw_level_t *cc, double *size,
                         cache_name_t *name, size_t n) {
  double total = cc->size_bytes.v;
  double sharing = cal_chart_num(cc->cores_sharing, 1);
  if (!(total > 0))
    return n;
  /* the axis is the working set per core: a shared cache's share */
  double sz = sharing > 1 ? total / sharing : total;
  char lv[32], hb[100], tb[32];
  level_name(cc, lv, sizeof lv);
  human_bytes(sz, hb, sizeof hb);
  if (sharing > 1) {
    human_bytes(total, tb, sizeof tb);
    size_t at = strlen(hb);
    snprintf(hb + at, sizeof hb - at, " per core (%s / %g, reported)", tb,
             sharing);
  }
  for (size_t j = 0; j < n; j++)
    if (size[j] == sz && strncmp(name[j], lv, strlen(lv)) == 0)
      return n;
  size[n] = sz;
  if (in->n > 1)
    snprintf(name[n], sizeof name[n], "%s %s (%.30s)", lv, hb, in->labels[p]);
  else
    snprintf(name[n], sizeof name[n], "%s %s", lv, hb);
  return n + 1;
}

/* Distinct (level, size) cache marks over all profiles into size[] and
 * name[] (room for every cache); returns how many. */
static size_t cache_marks(const cal_chart_in_t *in, double *size,
                          cache_name_t *name) {
  size_t n = 0;
  for (size_t p = 0; p < in->n; p++)
    for (size_t c = 0; c < in->views[p]->bandwidth.ncaches; c++)
      n = cache_mark(in, p, &in->views[p]->bandwidth.caches[c], size, name,
                     n);
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
    const cal_vpoints_t *pts = &in->views[p]->bandwidth.points;
    ws_pt_t w[128];
    size_t nw = 0, i;
    const char *kernel = NULL;
    for (i = 0; i < pts->n; i++) {
      const cal_vpoint_t *pt = pts->p[i];
      const char *k = pt->kernel;
      if (!cal_chart_point_ok(pt) || pt->level || !k ||
          cal_chart_num(pt->threads, 1) != 1 || nw >= 128)
        continue;
      if (!kernel)
        kernel = k; /* the first staircase kernel */
      if (strcmp(k, kernel) != 0)
        continue;
      w[nw].ws = pt->working_set_bytes.v;
      w[nw].gbps = pt->gbps.v;
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
  for (size_t p = 0; p < in->n; p++)
    cap += in->views[p]->bandwidth.ncaches;
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
static double dram_gbps(const cal_vroofline_t *roof) {
  const cal_vfields_t *bw = &roof->bandwidth_gbps;
  const cal_vfield_t *mem = cal_vfields_get(bw, "memory");
  double m = mem ? mem->num.v : NAN;
  if (m > 0)
    return m;
  double lo = 0;
  for (size_t i = 0; i < bw->n; i++) {
    double b = bw->f[i].num.v;
    if (b > 0 && (lo == 0 || b < lo))
      lo = b;
  }
  return lo;
}

/* The ceilings of profile p: counted, ridges measured, written to w->f. */
static void roof_profile(const cal_chart_in_t *in, size_t p, roof_walk_t *w) {
  const cal_vroofline_t *roof = &in->views[p]->roofline;
  const char *pre = in->n > 1 ? in->labels[p] : "", *sep = in->n > 1 ? " " : "";
  double peak = 0, dram = dram_gbps(roof);
  char l[200];
  for (size_t i = 0; i < roof->compute_gflops.n; i++) {
    const char *key = roof->compute_gflops.f[i].key;
    double g = roof->compute_gflops.f[i].num.v;
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
  for (size_t i = 0; i < roof->bandwidth_gbps.n; i++) {
    const char *key = roof->bandwidth_gbps.f[i].key;
    double b = roof->bandwidth_gbps.f[i].num.v;
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
  for (size_t p = 0; p < in->n; p++)
    for (size_t k = 0; k < in->views[p]->roofline.nkernels; k++) {
      double x = in->views[p]->roofline.kernels[k].intensity_flop_per_byte.v;
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
    if (in->views[p]->roofline.compute_gflops.n ||
        in->views[p]->roofline.bandwidth_gbps.n)
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
      const cal_vroofline_t *roof = &in->views[p]->roofline;
      for (size_t i = 0; i < roof->compute_gflops.n; i++) {
        const char *key = roof->compute_gflops.f[i].key;
        double g = roof->compute_gflops.f[i].num.v;
        /* only dtypes the GEMM section measured */
        const cal_vgemm_dtype_t *d = cal_vgemm_dtype(&in->views[p]->gemm, key);
        if (!(g > 0) || !d || !d->status || strcmp(d->status, "measured"))
          continue;
        n++;
        if (pass == 0)
          continue;
        char l[160];
        snprintf(l, sizeof l, "%s%.30s%s%s measured peak, %g threads: %.4g",
                 "", in->n > 1 ? in->labels[p] : "", in->n > 1 ? " " : "",
                 key, cal_chart_num(roof->threads, 0), g);
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
    const cal_vbatch_sweep_t *bs = &in->views[p]->batch_sweep;
    if (!bs->has)
      continue;
    const char *preset = bs->model.preset;
    double seq = bs->model.seq.v;
    size_t at = (size_t)snprintf(buf, len, "Batch sweep:");
    if (preset)
      at += (size_t)snprintf(buf + at, len - at, " %.24s,", preset);
    if (seq > 0)
      at += (size_t)snprintf(buf + at, len - at, " seq %g,", seq);
    /* the modes, each with what it ran (the model's layers, measured or
     * scaled from fewer distinct ones; profiles from before the forward
     * modes ran the model: one layer), and the dtype of their points */
    const char *dtype = NULL;
    for (size_t i = 0; i < bs->nmodes; i++) {
      const cal_vbatch_mode_t *mode = &bs->modes[i];
      double layers = mode->layers.v, from = mode->scaled_from_layers.v;
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
                               i == 0 ? " " : ", ", mode->name, what);
      if (!dtype && mode->points.n)
        dtype = mode->points.p[0]->dtype;
    }
    if (dtype && at < len)
      snprintf(buf + at, len - at, ", %.12s", dtype);
    return;
  }
  snprintf(buf, len, "Batch sweep");
}

