/* What the charts' scripts get besides their rows: the roofline's
 * ceilings, the measured peaks of the GEMM chart, the batch sweep's title
 * (the bandwidth chart's marks are in charts_bandwidth.c). */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"

/* ---- roofline: compute and memory ceilings ---- */

typedef struct roof_walk {
  FILE *f; /* NULL: count and measure only */
  size_t ncomp, nmem, left_out;
  double xmin, xmax; /* ridge points and kernel intensities */
} roof_walk_t;

static void roof_range(roof_walk_t *w, double x) {
  w->xmin = x < w->xmin ? x : w->xmin;
  w->xmax = x > w->xmax ? x : w->xmax;
}

/* The bandwidth of the last level (main memory) of a profile: the
 * "memory" key, else the lowest bandwidth; 0 when none can be drawn. */
static double dram_gbps(const cal_vroofline_t *roof) {
  const cal_vfields_t *bw = &roof->bandwidth_gbps;
  const cal_vfield_t *mem = cal_vfields_get(bw, "memory");
  double m = mem ? mem->num.v : NAN;
  if (cal_chart_pos(m))
    return m;
  double lo = 0;
  for (size_t i = 0; i < bw->n; i++) {
    double b = bw->f[i].num.v;
    if (cal_chart_pos(b) && (lo == 0 || b < lo))
      lo = b;
  }
  return lo;
}

/* The highest roof of a profile that can be drawn (GFLOPS or GOPS); 0
 * when none. */
static double top_roof(const cal_vroofline_t *roof) {
  double peak = 0;
  for (size_t i = 0; i < roof->compute_gflops.n; i++) {
    double g = roof->compute_gflops.f[i].num.v;
    if (cal_chart_pos(g) && g > peak)
      peak = g;
  }
  return peak;
}

/* The compute roofs of profile p: counted, ridges measured, written to
 * w->f; each in its dtype's colour and the profile's dash. */
static void roof_compute(const cal_chart_in_t *in, size_t p, roof_walk_t *w) {
  const cal_vroofline_t *roof = &in->views[p]->roofline;
  const char *pre = in->n > 1 ? in->labels[p] : "", *sep = in->n > 1 ? " " : "";
  double dram = dram_gbps(roof);
  char l[200];
  for (size_t i = 0; i < roof->compute_gflops.n; i++) {
    const char *key = roof->compute_gflops.f[i].key;
    double g = roof->compute_gflops.f[i].num.v;
    if (!cal_chart_pos(g) || (dram > 0 && !cal_chart_pos(g / dram))) {
      w->left_out++;
      continue;
    }
    /* int8 counts integer operations */
    const char *unit = strcmp(key, "int8") == 0 ? "GOPS" : "GFLOPS";
    if (dram > 0)
      roof_range(w, g / dram);
    if (w->f) {
      if (dram > 0)
        snprintf(l, sizeof l, "%.30s%s%s roof %.4g %s, ridge %.3g %s/B", pre,
                 sep, key, g, unit, g / dram, unit[1] == 'O' ? "op" : "FLOP");
      else
        snprintf(l, sizeof l, "%.30s%s%s roof %.4g %s", pre, sep, key, g,
                 unit);
      fprintf(w->f,
              "compute_gflops[%zu] = %.10g; compute_lt[%zu] = %d; "
              "compute_dt[%zu] = %d; compute_dram[%zu] = %.10g\n"
              "compute_label[%zu] = ",
              w->ncomp + 1, g, w->ncomp + 1, cal_chart_dtype_lt(key),
              w->ncomp + 1, cal_chart_profile_dt(p), w->ncomp + 1,
              dram > 0 ? dram : 0, w->ncomp + 1);
      cal_gp_quote(w->f, l);
      fputc('\n', w->f);
    }
    w->ncomp++;
  }
}

/* The memory slopes of profile p, up to its highest roof: a grey per
 * level, the profile's dash. */
static void roof_memory(const cal_chart_in_t *in, size_t p, roof_walk_t *w) {
  const cal_vroofline_t *roof = &in->views[p]->roofline;
  const char *pre = in->n > 1 ? in->labels[p] : "", *sep = in->n > 1 ? " " : "";
  double peak = top_roof(roof);
  char l[200];
  for (size_t i = 0, level = 0; i < roof->bandwidth_gbps.n; i++) {
    const char *key = roof->bandwidth_gbps.f[i].key;
    double b = roof->bandwidth_gbps.f[i].num.v;
    if (!cal_chart_pos(b) || (peak > 0 && !cal_chart_pos(peak / b))) {
      w->left_out++;
      continue;
    }
    if (peak > 0)
      roof_range(w, peak / b);
    if (w->f) {
      snprintf(l, sizeof l, "%.30s%s%s %.4g GB/s", pre, sep, key, b);
      fprintf(w->f,
              "memory_gbps[%zu] = %.10g; memory_peak[%zu] = %.10g; "
              "memory_grey[%zu] = %zu; memory_dt[%zu] = %d\n"
              "memory_label[%zu] = ",
              w->nmem + 1, b, w->nmem + 1, peak, w->nmem + 1, level % 4 + 1,
              w->nmem + 1, cal_chart_profile_dt(p), w->nmem + 1);
      cal_gp_quote(w->f, l);
      fputc('\n', w->f);
    }
    level++;
    w->nmem++;
  }
}

static void roof_walk(const cal_chart_in_t *in, roof_walk_t *w) {
  w->ncomp = w->nmem = w->left_out = 0;
  for (size_t p = 0; p < in->n; p++) {
    roof_compute(in, p, w);
    roof_memory(in, p, w);
  }
}

/* Ceilings as arrays; the x range covers every ridge and point. */
void cal_chart_roofline_header(FILE *f, const void *arg) {
  const cal_chart_in_t *in = arg;
  roof_walk_t w = {.xmin = INFINITY};
  roof_walk(in, &w);
  fprintf(f, "ncompute = %zu\nnmemory = %zu\n", w.ncomp, w.nmem);
  /* arrays of at least one: gnuplot parses a loop it never runs */
  size_t nc = w.ncomp ? w.ncomp : 1, nm = w.nmem ? w.nmem : 1;
  fprintf(f, "array compute_gflops[%zu]\narray compute_label[%zu]\n"
             "array compute_lt[%zu]\narray compute_dt[%zu]\n"
             "array compute_dram[%zu]\n", nc, nc, nc, nc, nc);
  fprintf(f, "array memory_gbps[%zu]\narray memory_peak[%zu]\n"
             "array memory_grey[%zu]\narray memory_dt[%zu]\n"
             "array memory_label[%zu]\n", nm, nm, nm, nm, nm);
  /* gnuplot evaluates a loop's body it never runs: every array with
   * its first element */
  fputs("compute_label[1] = ''; compute_lt[1] = 1; compute_dt[1] = 1\n"
        "compute_gflops[1] = 1; compute_dram[1] = 0\n"
        "memory_label[1] = ''; memory_grey[1] = 1; memory_dt[1] = 1\n"
        "memory_gbps[1] = 1; memory_peak[1] = 0\n", f);
  w.f = f;
  roof_walk(in, &w);
  for (size_t p = 0; p < in->n; p++)
    for (size_t k = 0; k < in->views[p]->roofline.nkernels; k++) {
      const cal_vroof_kernel_t *kr = &in->views[p]->roofline.kernels[k];
      if (cal_chart_pos(kr->intensity_flop_per_byte.v) &&
          cal_chart_pos(kr->gflops.v))
        roof_range(&w, kr->intensity_flop_per_byte.v);
    }
  if (!(w.xmax > 0)) {
    w.xmin = 1.0 / 16;
    w.xmax = 64;
  }
  fprintf(f, "xmin = %.10g\nxmax = %.10g\n", w.xmin / 8, w.xmax * 8);
}

size_t cal_chart_roofline_left_out(const cal_chart_in_t *in) {
  roof_walk_t w = {.xmin = INFINITY};
  roof_walk(in, &w);
  return w.left_out;
}

int cal_chart_roofline_has_ceilings(const cal_chart_in_t *in) {
  roof_walk_t w = {.xmin = INFINITY};
  roof_walk(in, &w);
  return w.ncomp || w.nmem;
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
                 "array peak_dt[%zu]\narray peak_label[%zu]\n", a, a, a, a);
      if (!n)
        fputs("peak_label[1] = ''; peak_lt[1] = 1; peak_dt[1] = 1; "
              "peak_gflops[1] = 0\n", f);
      n = 0;
    }
    for (size_t p = 0; p < in->n; p++) {
      const cal_vroofline_t *roof = &in->views[p]->roofline;
      for (size_t i = 0; i < roof->compute_gflops.n; i++) {
        const char *key = roof->compute_gflops.f[i].key;
        double g = roof->compute_gflops.f[i].num.v;
        /* only dtypes the GEMM section measured */
        const cal_vgemm_dtype_t *d = cal_vgemm_dtype(&in->views[p]->gemm, key);
        if (!cal_chart_pos(g) || !d || !d->status ||
            strcmp(d->status, "measured"))
          continue;
        n++;
        if (pass == 0)
          continue;
        char l[160];
        double nt = cal_chart_num(roof->threads, 0);
        snprintf(l, sizeof l, "%.30s%s%s measured peak, %g %s: %.4g %s",
                 in->n > 1 ? in->labels[p] : "", in->n > 1 ? " " : "",
                 key, nt, cal_chart_thread_word(nt), g,
                 strcmp(key, "int8") == 0 ? "GOPS" : "GFLOPS");
        /* the dtype's colour, the machine's dash for marks */
        fprintf(f, "peak_gflops[%zu] = %.10g; peak_lt[%zu] = %d; "
                   "peak_dt[%zu] = %d\npeak_label[%zu] = ", n, g, n,
                cal_chart_dtype_lt(key), n, cal_chart_mark_dt(p), n);
        cal_gp_quote(f, l);
        fputc('\n', f);
      }
    }
  }
}

/* ---- batch sweep: what was measured, in the title ---- */

/* The dtype of a mode: its first point's, else the sweep's. */
static const char *mode_dtype(const cal_vbatch_sweep_t *bs,
                              const cal_vbatch_mode_t *mode) {
  const char *dt = mode->points.n ? mode->points.p[0]->dtype : NULL;
  return dt ? dt : bs->dtype;
}

/* What a mode ran: the model's layers, measured or scaled from fewer
 * distinct ones (profiles from before the forward modes ran the model:
 * one layer). */
static void mode_layers(const cal_vbatch_mode_t *mode, char *buf, size_t len) {
  double layers = mode->layers.v, from = mode->scaled_from_layers.v;
  if (layers > 1 && from > 0)
    snprintf(buf, len, "%g layers, scaled from %g", layers, from);
  else if (layers > 1)
    snprintf(buf, len, "%g layers", layers);
  else
    snprintf(buf, len, "one layer");
}

/* "qwen2-0.5b, seq 128, bf16: prefill, decode (24 layers), train (24
 * layers, scaled from 1)": the model, its dtype (each mode's where they
 * differ) and the modes, those that ran alike grouped. */
void cal_chart_batch_what(const cal_chart_in_t *in, size_t p, char *buf,
                          size_t len) {
  const cal_vbatch_sweep_t *bs = &in->views[p]->batch_sweep;
  const char *preset = bs->model.preset, *dtype = NULL;
  int mixed = 0;
  for (size_t i = 0; i < bs->nmodes; i++) {
    const char *dt = mode_dtype(bs, &bs->modes[i]);
    if (i == 0)
      dtype = dt;
    else if (!dt != !dtype || (dt && strcmp(dt, dtype) != 0))
      mixed = 1;
  }
  size_t at = (size_t)snprintf(buf, len, "%.24s", preset ? preset : "");
  if (bs->model.seq.v > 0 && at < len)
    at += (size_t)snprintf(buf + at, len - at, "%sseq %g", at ? ", " : "",
                           bs->model.seq.v);
  if (!mixed && dtype && at < len)
    at += (size_t)snprintf(buf + at, len - at, "%s%.12s", at ? ", " : "",
                           dtype);
  for (size_t i = 0; i < bs->nmodes && at < len; i++) {
    const cal_vbatch_mode_t *mode = &bs->modes[i];
    char what[64], next[64] = "";
    mode_layers(mode, what, sizeof what);
    if (i + 1 < bs->nmodes)
      mode_layers(&bs->modes[i + 1], next, sizeof next);
    const char *dt = mode_dtype(bs, mode);
    at += (size_t)snprintf(buf + at, len - at, "%s%.20s%s%.12s",
                           i == 0 ? (at ? ": " : "") : ", ", mode->name,
                           mixed ? " " : "", mixed && dt ? dt : "");
    /* the layers once for a run of modes that ran alike */
    if (strcmp(what, next) != 0 && at < len)
      at += (size_t)snprintf(buf + at, len - at, " (%s)", what);
  }
}
