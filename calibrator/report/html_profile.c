/* The report page's tables of profiles: the machines side by side, the
 * headline figures, and each profile's sections and quality notes. */
#include "html_profile.h"
#include "html_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "html.h"

#define ESC(f, s) cal_html_escape(f, s)
#define num_cell cal_html_num_cell
#define text_cell cal_html_text_cell

/* ---- the profiles side by side ---- */

/* The names of the profiles as the first row of a table. */
static void name_row(FILE *f, const char *const *names, size_t n) {
  fputs("<tr><th></th>", f);
  for (size_t i = 0; i < n; i++) {
    fputs("<th>", f);
    ESC(f, names[i]);
    fputs("</th>", f);
  }
  fputs("</tr>\n", f);
}

/* A row's label cell. */
static void label_cell(FILE *f, const char *label) {
  fputs("<tr><th>", f);
  ESC(f, label);
  fputs("</th>", f);
}

/* A machine table cell: a string as text, an integer as written (bytes as
 * GiB), another number as %.4g, else a dash. */
static void fact_cell(FILE *f, const char *s, const cal_vnum_t *n, int gib) {
  if (s)
    text_cell(f, s);
  else if (n && n->is_int && gib)
    num_cell(f, (double)n->i / (1 << 30), "");
  else if (n && n->is_int)
    fprintf(f, "<td class=\"n\">%lld</td>", (long long)n->i);
  else if (n && n->has)
    num_cell(f, n->v, "");
  else
    fputs("<td>&mdash;</td>", f);
}

#define VSTR(m) offsetof(cal_profile_view_t, m), 0
#define VNUM(m) offsetof(cal_profile_view_t, m), 1

void cal_html_machine_table(FILE *f, const cal_profile_view_t *const *views,
                            const char *const *names, size_t n) {
  fputs("<h2>Machine</h2>\n<table>\n", f);
  name_row(f, names, n);
  static const struct {
    const char *label;
    size_t off;
    int num;
  } rows[] = {
      {"device", VSTR(device_name)},
      {"CPU", VSTR(machine.cpu.brand)},
      {"host", VSTR(machine.hostname)},
      {"OS", VSTR(machine.os)},
      {"cores", VNUM(machine.topology.cores)},
      {"hardware threads", VNUM(machine.topology.hardware_threads)},
      {"usable cores", VNUM(machine.usable_cores)},
      {"memory (GiB)", VNUM(machine.memory.total_bytes)},
      {"BLAS", VSTR(blas.config)},
      {"BLAS core type", VSTR(blas.coretype)},
      {"threads", VNUM(settings.threads)},
      {"created", VSTR(created)},
      {"calibrate", VSTR(tool.version)},
      {"git", VSTR(tool.git)},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    label_cell(f, rows[r].label);
    for (size_t i = 0; i < n; i++) {
      const char *at = (const char *)views[i] + rows[r].off;
      if (rows[r].num)
        fact_cell(f, NULL, (const cal_vnum_t *)at,
                  strstr(rows[r].label, "GiB") != NULL);
      else
        fact_cell(f, *(const char *const *)at, NULL, 0);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* What a profile's batch figures measured: "train, bf16, qwen2-0.5b,
 * seq 128" (mode, dtype, model), from the curve they come from
 * (batch_source), else the sweep's top-level mode; "" when unknown. */
static void batch_what(const cal_profile_view_t *v, char *buf, size_t len) {
  const cal_vbatch_source_t *src = &v->batch_source;
  const cal_vbatch_sweep_t *bs = &v->batch_sweep;
  const char *mode = src->mode ? src->mode : bs->top_level_mode;
  const cal_vbatch_mode_t *m = cal_vbatch_mode(bs, mode);
  if (!mode && bs->nmodes == 1) {
    m = &bs->modes[0];
    mode = m->name;
  }
  const char *dtype = src->dtype ? src->dtype : bs->dtype;
  if (!dtype && m && m->points.n)
    dtype = m->points.p[0]->dtype;
  const char *preset = src->preset ? src->preset : bs->model.preset;
  double seq = src->seq.has ? src->seq.v : bs->model.seq.v;
  snprintf(buf, len, "%s, %s, %s", mode ? mode : "mode ?",
           dtype ? dtype : "dtype ?", preset ? preset : "model ?");
  if (seq > 0) {
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, ", seq %g", seq);
  }
  if (!mode && !dtype && !preset)
    buf[0] = '\0';
}

/* A headline cell of a batch figure: the number, and under it what was
 * measured (mode, dtype, model). */
static void batch_cell(FILE *f, double v, const char *unit,
                       const char *what) {
  if (!isfinite(v)) {
    fputs("<td class=\"n\">&mdash;</td>", f);
    return;
  }
  fprintf(f, "<td class=\"n\">%.4g%s%s", v, unit[0] ? " " : "", unit);
  if (what[0]) {
    fputs("<br><span class=\"what\">", f);
    ESC(f, what);
    fputs("</span>", f);
  }
  fputs("</td>", f);
}

void cal_html_headline_table(FILE *f, const cal_profile_view_t *const *views,
                             const char *const *names, size_t n) {
  static const struct {
    size_t off;
    const char *label, *unit;
    int batch; /* a figure of the batch sweep */
  } figs[] = {
      {offsetof(cal_profile_view_t, gflops), "best fp32 GEMM, all threads",
       "GFLOPS", 0},
      {offsetof(cal_profile_view_t, gflops_per_core),
       "best fp32 GEMM, one thread", "GFLOPS", 0},
      {offsetof(cal_profile_view_t, throughput), "batch sweep peak",
       "examples/s", 1},
      {offsetof(cal_profile_view_t, optimal_batch_size), "optimal batch size",
       "", 1},
      {offsetof(cal_profile_view_t, latency_ms), "latency at batch 1", "ms",
       1},
      {offsetof(cal_profile_view_t, memory_gb), "memory", "GB", 0},
  };
  fputs("<h2>Headline figures</h2>\n<p class=\"note\">The batch figures "
        "of each profile name what they measured: mode, dtype, model.</p>\n"
        "<table class=\"head\">\n", f);
  name_row(f, names, n);
  for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
    label_cell(f, figs[k].label);
    for (size_t i = 0; i < n; i++) {
      const cal_vnum_t *v =
          (const cal_vnum_t *)((const char *)views[i] + figs[k].off);
      char what[200] = "";
      if (figs[k].batch) {
        batch_what(views[i], what, sizeof what);
        if (figs[k].off == offsetof(cal_profile_view_t, optimal_batch_size) &&
            views[i]->batch_source.optimal_is_lower_bound == 1)
          snprintf(what + strlen(what), sizeof what - strlen(what),
                   "; a lower bound: the sweep ended at its best point");
        batch_cell(f, v->v, figs[k].unit, what);
      } else {
        num_cell(f, v->v, figs[k].unit);
      }
    }
    fputs("</tr>\n", f);
  }
  fputs("<tr><th>headline status</th>", f);
  for (size_t i = 0; i < n; i++) {
    const char *s = views[i]->headline_status;
    text_cell(f, s && s[0] ? s : "measured");
  }
  fputs("</tr>\n</table>\n", f);
}

/* ---- one profile's tables ---- */

/* s, or "" for none */
static const char *or_empty(const char *s) { return s ? s : ""; }

static void gemm_table(FILE *f, const cal_profile_view_t *pv) {
  const cal_vgemm_t *g = &pv->gemm;
  if (!g->ndtypes)
    return;
  fputs("<h3>GEMM, best per dtype</h3>\n<table>\n<tr><th>dtype</th>"
        "<th>kernel</th><th>status</th><th>1 thread</th><th>all threads</th>"
        "<th>note</th></tr>\n", f);
  for (size_t i = 0; i < g->ndtypes; i++) {
    const cal_vgemm_dtype_t *d = &g->dtypes[i];
    fputs("<tr>", f);
    text_cell(f, d->dtype);
    text_cell(f, or_empty(d->kernel));
    text_cell(f, or_empty(d->status));
    const char *unit = strcmp(d->dtype, "int8") == 0 ? "GOPS" : "GFLOPS";
    double t1 = d->best_gflops_1_thread.has ? d->best_gflops_1_thread.v
                                            : d->best_gops_1_thread.v;
    double ta = d->best_gflops_all_threads.has ? d->best_gflops_all_threads.v
                                               : d->best_gops_all_threads.v;
    num_cell(f, t1, unit);
    num_cell(f, ta, unit);
    text_cell(f, or_empty(d->reason));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void peak_table(FILE *f, const cal_profile_view_t *pv) {
  const cal_vpoints_t *pts = &pv->peak.points;
  if (!pts->n)
    return;
  fputs("<h3>Compute peak: measured versus theoretical</h3>\n<table>\n"
        "<tr><th>kernel</th><th>dtype</th><th>variant</th><th>threads</th>"
        "<th>measured</th><th>theoretical</th><th>of theoretical</th>"
        "<th>status</th></tr>\n", f);
  for (size_t i = 0; i < pts->n; i++) {
    const cal_vpoint_t *pt = pts->p[i];
    const char *metric = or_empty(pt->metric);
    double v = metric[0] ? pt->value.v : pt->gflops.v;
    double e = pt->efficiency.v;
    const char *unit = strcmp(metric, "gops") == 0 ? "GOPS" : "GFLOPS";
    fputs("<tr>", f);
    text_cell(f, or_empty(pt->kernel));
    text_cell(f, or_empty(pt->dtype));
    text_cell(f, or_empty(pt->variant));
    num_cell(f, pt->threads.v, "");
    num_cell(f, v, unit);
    num_cell(f, e > 0 ? v / e : NAN, unit);
    num_cell(f, e > 0 ? 100 * e : NAN, "%");
    text_cell(f, or_empty(pt->status));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void roof_table(FILE *f, const cal_profile_view_t *pv) {
  const cal_vroofline_t *roof = &pv->roofline;
  const cal_vfields_t *bw = &roof->bandwidth_gbps;
  if (!bw->n)
    return;
  fputs("<h3>Memory bandwidth per level (roofline ceilings)</h3>\n<table>\n"
        "<tr><th>level</th><th>bandwidth</th><th>kernel</th></tr>\n", f);
  for (size_t i = 0; i < bw->n; i++) {
    const cal_vfield_t *kernel =
        cal_vfields_get(&roof->bandwidth_kernel, bw->f[i].key);
    fputs("<tr>", f);
    text_cell(f, bw->f[i].key);
    num_cell(f, bw->f[i].num.v, "GB/s");
    text_cell(f, kernel ? or_empty(kernel->str) : "");
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void sweep_table(FILE *f, const cal_profile_view_t *pv) {
  const cal_vbatch_sweep_t *bs = &pv->batch_sweep;
  if (!bs->nmodes)
    return;
  fputs("<h3>Batch sweep: ", f);
  ESC(f, or_empty(bs->model.preset));
  fprintf(f, ", seq %.0f, hidden %.0f</h3>\n<table>\n<tr><th>mode</th>"
             "<th>status</th><th>peak batch</th><th>peak throughput</th>"
             "<th>knee batch</th><th>optimal batch</th><th>latency at "
             "batch 1</th><th>shape</th><th>stopped</th></tr>\n",
          bs->model.seq.v, bs->model.hidden.v);
  for (size_t i = 0; i < bs->nmodes; i++) {
    const cal_vbatch_mode_t *m = &bs->modes[i];
    fputs("<tr>", f);
    text_cell(f, m->name);
    text_cell(f, or_empty(m->status));
    num_cell(f, m->peak_batch_size.v, "");
    num_cell(f, m->peak_examples_per_s.v,
             strcmp(m->name, "decode") == 0 ? "tokens/s" : "examples/s");
    num_cell(f, m->knee_batch_size.v, "");
    num_cell(f, m->optimal_batch_size.v, "");
    num_cell(f, m->latency_ms_batch_1.v, "ms");
    text_cell(f, or_empty(m->shape));
    text_cell(f, or_empty(m->stop_reason));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void attention_table(FILE *f, const cal_profile_view_t *pv) {
  const cal_vpoints_t *pts = &pv->attention.points;
  if (!pts->n)
    return;
  fputs("<h3>Attention</h3>\n<table>\n<tr><th>point</th><th>threads</th>"
        "<th>GFLOPS</th><th>of best GEMM</th><th>status</th></tr>\n", f);
  for (size_t i = 0; i < pts->n; i++) {
    const cal_vpoint_t *pt = pts->p[i];
    fputs("<tr>", f);
    text_cell(f, or_empty(pt->id));
    num_cell(f, pt->threads.v, "");
    num_cell(f, pt->gflops.v, "");
    num_cell(f, 100 * pt->ratio_to_gemm.v, "%");
    text_cell(f, or_empty(pt->status));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* ---- quality notes ---- */

/* One measured point in the list when it is unstable, contaminated,
 * failed or skipped; counts it in *unstable or *bad. */
static void quality_point(FILE *f, const cal_vpoint_t *pt, size_t *unstable,
                          size_t *bad) {
  const char *id = pt->id, *st = pt->status;
  if (!id || !st)
    return;
  int contaminated = pt->contaminated == 1;
  if (strcmp(st, "ok") || contaminated) {
    fputs("<li class=\"warn\">", f);
    ESC(f, id);
    fputs(": ", f);
    ESC(f, contaminated && !strcmp(st, "ok") ? "contaminated" : st);
    if (pt->reason) {
      fputs(" (", f);
      ESC(f, pt->reason);
      fputs(")", f);
    }
    fputs("</li>\n", f);
    ++*bad;
  } else if (pt->stats.unstable == 1) {
    fputs("<li>", f);
    ESC(f, id);
    fprintf(f, ": unstable (cv %.1f%%)</li>\n", 100 * pt->stats.cv.v);
    ++*unstable;
  }
}

static void quality_notes(FILE *f, const cal_profile_view_t *pv) {
  const cal_vquality_t *ql = &pv->quality;
  fputs("<h3>Quality notes</h3>\n", f);
  fprintf(f, "<p>noisy: %s; unstable points: %.0f; failed points: %.0f; "
             "elapsed %.1f s</p>\n",
          ql->noisy == 1 ? "yes" : "no", ql->unstable_points.v,
          ql->failed_points.v, ql->elapsed_s.v);
  if (ql->warnings.n) {
    fputs("<ul>\n", f);
    for (size_t i = 0; i < ql->warnings.n; i++) {
      fputs("<li class=\"warn\">", f);
      ESC(f, ql->warnings.s[i]);
      fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
  }
  size_t unstable = 0, bad = 0;
  /* a plain list, not a collapsed one: it must print */
  fputs("<p>Points that were unstable (coefficient of variation above the "
        "threshold), contaminated, failed or skipped:</p>\n"
        "<ul class=\"pts\">\n", f);
  for (size_t i = 0; i < pv->npoints; i++)
    quality_point(f, pv->doc_points[i], &unstable, &bad);
  if (!unstable && !bad)
    fputs("<li>none</li>\n", f);
  fputs("</ul>\n", f);
}

/* ---- all of one profile ---- */

void cal_html_profile_tables(FILE *f, const cal_profile_view_t *v) {
  gemm_table(f, v);
  peak_table(f, v);
  roof_table(f, v);
  attention_table(f, v);
  sweep_table(f, v);
  quality_notes(f, v);
}
