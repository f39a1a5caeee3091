/* The report page's tables of profiles: the machines side by side, the
 * headline figures, and each profile's sections and quality notes. */
#include "html_profile.h"
#include "html_internal.h"

#include <math.h>
#include <string.h>

#include "html.h"
#include "profile.h"

#define ESC(f, s) cal_html_escape(f, s)
#define str cal_html_str
#define num_cell cal_html_num_cell
#define text_cell cal_html_text_cell

/* ---- one profile's tables ---- */

void cal_html_machine_table(FILE *f, const json_t *const *roots,
                            const char *const *names, size_t n) {
  fputs("<h2>Machine</h2>\n<table>\n<tr><th></th>", f);
  for (size_t i = 0; i < n; i++) {
    fputs("<th>", f);
    ESC(f, names[i]);
    fputs("</th>", f);
  }
  fputs("</tr>\n", f);
  static const struct {
    const char *label, *path[3];
  } rows[] = {
      {"device", {"device_name"}},
      {"CPU", {"machine", "cpu", "brand"}},
      {"host", {"machine", "hostname"}},
      {"OS", {"machine", "os"}},
      {"cores", {"machine", "topology", "cores"}},
      {"hardware threads", {"machine", "topology", "hardware_threads"}},
      {"usable cores", {"machine", "usable_cores"}},
      {"memory (GiB)", {"machine", "memory", "total_bytes"}},
      {"BLAS", {"blas", "config"}},
      {"BLAS core type", {"blas", "coretype"}},
      {"threads", {"settings", "threads"}},
      {"created", {"created"}},
      {"calibrate", {"tool", "version"}},
      {"git", {"tool", "git"}},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    fputs("<tr><th>", f);
    ESC(f, rows[r].label);
    fputs("</th>", f);
    for (size_t i = 0; i < n; i++) {
      const json_t *v = roots[i];
      for (int k = 0; k < 3 && rows[r].path[k]; k++)
        v = json_object_get(v, rows[r].path[k]);
      if (json_is_string(v))
        text_cell(f, json_string_value(v));
      else if (json_is_integer(v) && strstr(rows[r].label, "GiB"))
        num_cell(f, (double)json_integer_value(v) / (1 << 30), "");
      else if (json_is_integer(v))
        fprintf(f, "<td class=\"n\">%" JSON_INTEGER_FORMAT "</td>",
                json_integer_value(v));
      else if (json_is_number(v))
        num_cell(f, json_number_value(v), "");
      else
        fputs("<td>&mdash;</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

void cal_html_headline_table(FILE *f, const json_t *const *roots,
                             const char *const *names, size_t n) {
  static const struct {
    const char *key, *label, *unit;
  } keys[] = {
      {"gflops", "best fp32 GEMM, all threads", "GFLOPS"},
      {"gflops_per_core", "best fp32 GEMM, one thread", "GFLOPS"},
      {"throughput", "batch sweep peak", "examples/s"},
      {"optimal_batch_size", "optimal batch size", ""},
      {"latency_ms", "latency at batch 1", "ms"},
      {"memory_gb", "memory", "GB"},
  };
  fputs("<h2>Headline figures</h2>\n<table class=\"head\">\n<tr><th></th>",
        f);
  for (size_t i = 0; i < n; i++) {
    fputs("<th>", f);
    ESC(f, names[i]);
    fputs("</th>", f);
  }
  fputs("</tr>\n", f);
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    fputs("<tr><th>", f);
    ESC(f, keys[k].label);
    fputs("</th>", f);
    for (size_t i = 0; i < n; i++)
      num_cell(f, cal_json_num(roots[i], keys[k].key, NAN), keys[k].unit);
    fputs("</tr>\n", f);
  }
  fputs("<tr><th>headline status</th>", f);
  for (size_t i = 0; i < n; i++) {
    const char *s = str(roots[i], "headline_status");
    text_cell(f, s[0] ? s : "measured");
  }
  fputs("</tr>\n</table>\n", f);
}

static void gemm_table(FILE *f, const json_t *root) {
  const json_t *dt = json_object_get(json_object_get(root, "gemm"), "dtypes");
  if (!json_object_size(dt))
    return;
  fputs("<h3>GEMM, best per dtype</h3>\n<table>\n<tr><th>dtype</th>"
        "<th>kernel</th><th>status</th><th>1 thread</th><th>all threads</th>"
        "<th>note</th></tr>\n", f);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)dt, k, v) {
    fputs("<tr>", f);
    text_cell(f, k);
    text_cell(f, str(v, "kernel"));
    text_cell(f, str(v, "status"));
    const char *unit = strcmp(k, "int8") == 0 ? "GOPS" : "GFLOPS";
    double t1 = cal_json_num(v, "best_gflops_1_thread",
                             cal_json_num(v, "best_gops_1_thread", NAN));
    double ta = cal_json_num(v, "best_gflops_all_threads",
                             cal_json_num(v, "best_gops_all_threads", NAN));
    num_cell(f, t1, unit);
    num_cell(f, ta, unit);
    text_cell(f, str(v, "reason"));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void peak_table(FILE *f, const json_t *root) {
  const json_t *pts = json_object_get(json_object_get(root, "peak"), "points");
  if (!json_array_size(pts))
    return;
  fputs("<h3>Compute peak: measured versus theoretical</h3>\n<table>\n"
        "<tr><th>kernel</th><th>dtype</th><th>variant</th><th>threads</th>"
        "<th>measured</th><th>theoretical</th><th>of theoretical</th>"
        "<th>status</th></tr>\n", f);
  size_t i;
  const json_t *pt;
  json_array_foreach(pts, i, pt) {
    const char *metric = str(pt, "metric");
    double v = cal_json_num(pt, metric[0] ? metric : "gflops", NAN);
    double e = cal_json_num(pt, "efficiency", NAN);
    const char *unit = strcmp(metric, "gops") == 0 ? "GOPS" : "GFLOPS";
    fputs("<tr>", f);
    text_cell(f, str(pt, "kernel"));
    text_cell(f, str(pt, "dtype"));
    text_cell(f, str(pt, "variant"));
    num_cell(f, cal_json_num(pt, "threads", NAN), "");
    num_cell(f, v, unit);
    num_cell(f, e > 0 ? v / e : NAN, unit);
    num_cell(f, e > 0 ? 100 * e : NAN, "%");
    text_cell(f, str(pt, "status"));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void roof_table(FILE *f, const json_t *root) {
  const json_t *roof = json_object_get(root, "roofline");
  const json_t *bw = json_object_get(roof, "bandwidth_gbps");
  if (!json_object_size(bw))
    return;
  fputs("<h3>Memory bandwidth per level (roofline ceilings)</h3>\n<table>\n"
        "<tr><th>level</th><th>bandwidth</th><th>kernel</th></tr>\n", f);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)bw, k, v) {
    fputs("<tr>", f);
    text_cell(f, k);
    num_cell(f, json_is_number(v) ? json_number_value(v) : NAN, "GB/s");
    text_cell(f, str(json_object_get(roof, "bandwidth_kernel"), k));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void sweep_table(FILE *f, const json_t *root) {
  const json_t *bs = json_object_get(root, "batch_sweep");
  const json_t *modes = json_object_get(bs, "modes");
  if (!json_object_size(modes))
    return;
  const json_t *m = json_object_get(bs, "model");
  fputs("<h3>Batch sweep: ", f);
  ESC(f, str(m, "preset"));
  fprintf(f, ", seq %.0f, hidden %.0f</h3>\n<table>\n<tr><th>mode</th>"
             "<th>status</th><th>peak batch</th><th>peak throughput</th>"
             "<th>knee batch</th><th>optimal batch</th><th>latency at "
             "batch 1</th><th>shape</th><th>stopped</th></tr>\n",
          cal_json_num(m, "seq", NAN), cal_json_num(m, "hidden", NAN));
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)modes, k, v) {
    fputs("<tr>", f);
    text_cell(f, k);
    text_cell(f, str(v, "status"));
    num_cell(f, cal_json_num(v, "peak_batch_size", NAN), "");
    num_cell(f, cal_json_num(v, "peak_examples_per_s", NAN),
             strcmp(k, "decode") == 0 ? "tokens/s" : "examples/s");
    num_cell(f, cal_json_num(v, "knee_batch_size", NAN), "");
    num_cell(f, cal_json_num(v, "optimal_batch_size", NAN), "");
    num_cell(f, cal_json_num(v, "latency_ms_batch_1", NAN), "ms");
    text_cell(f, str(v, "shape"));
    text_cell(f, str(v, "stop_reason"));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

static void attention_table(FILE *f, const json_t *root) {
  const json_t *pts =
      json_object_get(json_object_get(root, "attention"), "points");
  if (!json_array_size(pts))
    return;
  fputs("<h3>Attention</h3>\n<table>\n<tr><th>point</th><th>threads</th>"
        "<th>GFLOPS</th><th>of best GEMM</th><th>status</th></tr>\n", f);
  size_t i;
  const json_t *pt;
  json_array_foreach(pts, i, pt) {
    fputs("<tr>", f);
    text_cell(f, str(pt, "id"));
    num_cell(f, cal_json_num(pt, "threads", NAN), "");
    num_cell(f, cal_json_num(pt, "gflops", NAN), "");
    double r = cal_json_num(pt, "ratio_to_gemm", NAN);
    num_cell(f, 100 * r, "%");
    text_cell(f, str(pt, "status"));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* ---- quality notes ---- */

typedef struct qual {
  FILE *f;
  size_t unstable, bad;
} qual_t;

/* Every measured point (an object with an id and a status) anywhere in
 * the tree: unstable, contaminated, failed or skipped ones listed. */
static void quality_walk(qual_t *q, const json_t *o) {
  if (json_is_array(o)) {
    size_t i;
    const json_t *v;
    json_array_foreach(o, i, v) quality_walk(q, v);
    return;
  }
  if (!json_is_object(o))
    return;
  const char *id = json_string_value(json_object_get(o, "id"));
  const char *st = json_string_value(json_object_get(o, "status"));
  if (id && st) {
    int unstable =
        json_is_true(json_object_get(json_object_get(o, "stats"), "unstable"));
    int contaminated = json_is_true(json_object_get(o, "contaminated"));
    if (strcmp(st, "ok") || contaminated) {
      fputs("<li class=\"warn\">", q->f);
      ESC(q->f, id);
      fputs(": ", q->f);
      ESC(q->f, contaminated && !strcmp(st, "ok") ? "contaminated" : st);
      const char *why = json_string_value(json_object_get(o, "reason"));
      if (why) {
        fputs(" (", q->f);
        ESC(q->f, why);
        fputs(")", q->f);
      }
      fputs("</li>\n", q->f);
      q->bad++;
    } else if (unstable) {
      double cv = cal_json_num(json_object_get(o, "stats"), "cv", NAN);
      fputs("<li>", q->f);
      ESC(q->f, id);
      fprintf(q->f, ": unstable (cv %.1f%%)</li>\n", 100 * cv);
      q->unstable++;
    }
    return;
  }
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)o, k, v) quality_walk(q, v);
}

static void quality_notes(FILE *f, const json_t *root) {
  const json_t *ql = json_object_get(root, "quality");
  fputs("<h3>Quality notes</h3>\n", f);
  fprintf(f, "<p>noisy: %s; unstable points: %.0f; failed points: %.0f; "
             "elapsed %.1f s</p>\n",
          json_is_true(json_object_get(ql, "noisy")) ? "yes" : "no",
          cal_json_num(ql, "unstable_points", NAN),
          cal_json_num(ql, "failed_points", NAN),
          cal_json_num(ql, "elapsed_s", NAN));
  const json_t *w = json_object_get(ql, "warnings");
  if (json_array_size(w)) {
    fputs("<ul>\n", f);
    size_t i;
    const json_t *s;
    json_array_foreach(w, i, s) {
      fputs("<li class=\"warn\">", f);
      ESC(f, json_string_value(s));
      fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
  }
  qual_t q = {.f = f};
  /* a plain list, not a collapsed one: it must print */
  fputs("<p>Points that were unstable (coefficient of variation above the "
        "threshold), contaminated, failed or skipped:</p>\n"
        "<ul class=\"pts\">\n", f);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)root, k, v) if (strcmp(k, "quality"))
      quality_walk(&q, v);
  if (!q.unstable && !q.bad)
    fputs("<li>none</li>\n", f);
  fputs("</ul>\n", f);
}

/* ---- all of one profile ---- */

void cal_html_profile_tables(FILE *f, const json_t *root) {
  gemm_table(f, root);
  peak_table(f, root);
  roof_table(f, root);
  attention_table(f, root);
  sweep_table(f, root);
  quality_notes(f, root);
}
