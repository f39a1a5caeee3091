#include "curve_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "profile.h"

static json_t *num_or_null(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(int64_t v) {
  return v > 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *point_json(const cal_curve_row_t *p) {
  json_t *o = json_object();
  if (!o)
    return NULL;
  json_object_set_new(o, "batch_size", json_integer((json_int_t)p->batch_size));
  json_object_set_new(o, "status",
                      json_string(p->status == CAL_POINT_OK ? "ok" : "skipped"));
  if (p->status != CAL_POINT_OK)
    return o;
  json_t *samples = json_array();
  for (size_t i = 0; samples && i < p->n; i++)
    json_array_append_new(samples, json_real(p->samples[i]));
  const cal_summary_t *s = &p->stats;
  json_object_set_new(o, "examples_per_s", json_real(s->median));
  json_object_set_new(o, "samples_examples_per_s", samples);
  json_object_set_new(
      o, "stats",
      json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "n",
                (json_int_t)s->n, "median", s->median, "mean", s->mean, "min",
                s->min, "max", s->max, "stddev", s->stddev, "mad", s->mad, "cv",
                s->cv, "ci_low", s->ci_low, "ci_high", s->ci_high, "ci_level",
                s->ci_level));
  json_object_set_new(o, "pct_of_peak", num_or_null(p->pct_of_peak));
  json_object_set_new(o, "tied_with_peak", json_boolean(p->tied));
  return o;
}

/* The members of a curve after its points, in the document's order. */
static void curve_tail(json_t *c, const cal_curve_result_t *r,
                       const cal_curve_rec_t *rec) {
  json_t *tied = json_array();
  for (size_t i = 0; tied && i < r->n_tied; i++)
    json_array_append_new(tied, json_integer((json_int_t)r->tied_batch_sizes[i]));
  int have = r->n_ok > 0;
  json_object_set_new(c, "peak_batch_size", int_or_null(r->peak_batch_size));
  json_object_set_new(c, "peak_examples_per_s",
                      have ? json_real(r->peak_median) : json_null());
  json_object_set_new(c, "knee_batch_size", int_or_null(r->knee_batch_size));
  json_object_set_new(c, "optimal_batch_size",
                      int_or_null(r->optimal_batch_size));
  json_object_set_new(c, "optimize",
                      json_string(cal_curve_policy_name(r->policy)));
  json_object_set_new(c, "tolerance_pct", json_real(r->tolerance * 100.0));
  json_object_set_new(c, "shape", json_string(cal_curve_shape_name(r->shape)));
  json_object_set_new(c, "rise_pct", num_or_null(r->rise_pct));
  json_object_set_new(c, "degradation_pct", num_or_null(r->degradation_pct));
  json_object_set_new(c, "worst_drop_pct", num_or_null(r->worst_drop_pct));
  json_object_set_new(c, "worst_batch_size", int_or_null(r->worst_batch_size));
  json_object_set_new(c, "tied_batch_sizes", tied);
  if (rec)
    json_object_set_new(
        c, "recommendation",
        json_pack("{s:I, s:o, s:o, s:o, s:b, s:s}", "target_effective_batch",
                  (json_int_t)rec->target_effective_batch, "batch_size",
                  int_or_null(rec->batch_size), "accumulation_steps",
                  int_or_null(rec->accumulation_steps), "effective_batch",
                  int_or_null(rec->effective_batch), "exact", rec->exact,
                  "note", rec->note));
  else
    json_object_set_new(c, "recommendation", json_null());
}

/* A string from outside (a machine or file name) as JSON: escaped
 * (cal_esc.h) when it is not UTF-8, which JSON cannot hold. */
static json_t *text_json(const char *s) {
  json_t *j = s ? json_string(s) : json_null();
  if (!j && s) {
    char *safe = cal_esc_text(s, strlen(s), 0, NULL);
    j = safe ? json_string(safe) : NULL;
    free(safe);
  }
  return j;
}

json_t *cal_curve_json(const char *machine, const cal_curve_result_t *r,
                       const cal_curve_rec_t *rec) {
  json_t *c = json_object();
  json_t *pts = json_array();
  if (!c || !pts)
    goto fail;
  for (size_t i = 0; i < r->n; i++) {
    json_t *p = point_json(&r->points[i]);
    if (!p || json_array_append_new(pts, p) < 0)
      goto fail;
  }
  json_object_set_new(c, "machine", text_json(machine));
  json_object_set_new(c, "points", pts);
  curve_tail(c, r, rec);
  return c;
fail:
  json_decref(c);
  json_decref(pts);
  return NULL;
}

/* ---- the document written in pieces ---- */

#define DOC_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10))

/* Text on its way to the sink, in blocks. */
typedef struct doc_out {
  cal_text_sink_fn sink;
  void *ctx;
  int rc;
  size_t n;
  char buf[1 << 16];
} doc_out_t;

static void flush(doc_out_t *w) {
  if (w->rc == 0 && w->n)
    w->rc = w->sink(w->ctx, w->buf, w->n);
  w->n = 0;
}

static void put(doc_out_t *w, const char *s, size_t n) {
  while (w->rc == 0 && n) {
    if (w->n == sizeof w->buf)
      flush(w);
    size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
    memcpy(w->buf + w->n, s, k);
    w->n += k;
    s += k;
    n -= k;
  }
}

/* A new line indented to depth, as JSON_INDENT(2) indents. */
static void newline(doc_out_t *w, int depth) {
  put(w, "\n", 1);
  for (int i = 0; i < depth; i++)
    put(w, "  ", 2);
}

/* v (a new reference, taken) as json_dumps writes it at depth: NULL is
 * out of memory. */
static void put_value(doc_out_t *w, json_t *v, int depth) {
  char *t = v && w->rc == 0 ? json_dumps(v, DOC_FLAGS | JSON_ENCODE_ANY)
                            : NULL;
  if (t && cal_esc_needed(t, strlen(t), CAL_ESC_KEEP_LINES)) {
    char *safe = cal_esc_text(t, strlen(t), CAL_ESC_KEEP_LINES, NULL);
    free(t); /* bidi overrides in names: \u escapes read the same */
    t = safe;
  }
  if (!t && w->rc == 0)
    w->rc = CAL_ENOMEM;
  for (const char *p = t, *nl; p && *p; p = nl + 1) {
    if (!(nl = strchr(p, '\n'))) {
      put(w, p, strlen(p));
      break;
    }
    put(w, p, (size_t)(nl - p));
    newline(w, depth);
  }
  free(t);
  json_decref(v);
}

/* An object member's key at depth; first: no comma before it. */
static void put_key(doc_out_t *w, const char *key, int depth, int first) {
  if (!first)
    put(w, ",", 1);
  newline(w, depth);
  put_value(w, json_string(key), depth);
  put(w, ": ", 2);
}

/* One curve at depth, its points one at a time. */
static void put_curve(doc_out_t *w, const char *machine,
                      const cal_curve_result_t *r, const cal_curve_rec_t *rec,
                      int depth) {
  put(w, "{", 1);
  put_key(w, "machine", depth + 1, 1);
  put_value(w, text_json(machine), depth + 1);
  put_key(w, "points", depth + 1, 0);
  put(w, "[", 1);
  for (size_t i = 0; i < r->n && w->rc == 0; i++) {
    if (i)
      put(w, ",", 1);
    newline(w, depth + 2);
    put_value(w, point_json(&r->points[i]), depth + 2);
  }
  if (r->n)
    newline(w, depth + 1);
  put(w, "]", 1);
  json_t *tail = json_object(), *v;
  const char *k;
  if (!tail && w->rc == 0)
    w->rc = CAL_ENOMEM;
  if (tail)
    curve_tail(tail, r, rec);
  json_object_foreach(tail, k, v) {
    put_key(w, k, depth + 1, 0);
    put_value(w, json_incref(v), depth + 1);
  }
  json_decref(tail);
  newline(w, depth);
  put(w, "}", 1);
}

int cal_curve_doc_write(const char *source, const cal_curve_opts_t *opts,
                        const char *const *machines,
                        cal_curve_result_t *const *res,
                        const cal_curve_rec_t *recs, size_t n,
                        cal_text_sink_fn sink, void *ctx) {
  doc_out_t *w = malloc(sizeof *w);
  if (!w)
    return CAL_ENOMEM;
  *w = (doc_out_t){.sink = sink, .ctx = ctx};
  put(w, "{", 1);
  put_key(w, "schema", 1, 1);
  put_value(w, json_string(CAL_CURVE_SCHEMA), 1);
  put_key(w, "source", 1, 0);
  put_value(w, text_json(source), 1);
  put_key(w, "tolerance_pct", 1, 0);
  put_value(w, json_real(opts->tolerance * 100.0), 1);
  put_key(w, "optimize", 1, 0);
  put_value(w, json_string(cal_curve_policy_name(opts->policy)), 1);
  put_key(w, "curves", 1, 0);
  put(w, "[", 1);
  for (size_t i = 0; i < n && w->rc == 0; i++) {
    if (i)
      put(w, ",", 1);
    newline(w, 2);
    put_curve(w, machines[i], res[i], recs ? &recs[i] : NULL, 2);
  }
  if (n)
    newline(w, 1);
  put(w, "]\n}\n", 4);
  flush(w);
  int rc = w->rc;
  free(w);
  return rc;
}

int cal_peak_doc_is(const json_t *doc) {
  return strcmp(cal_json_str(doc, "schema"), CAL_CURVE_SCHEMA) == 0;
}

/* A number of a peak document's point, NaN when absent. */
static double stat_of(const json_t *pt, const char *k) {
  return cal_json_num(json_object_get(pt, "stats"), k, NAN);
}

/* Curve i of a peak document; err filled when malformed. */
static int read_peak_curve(const char *path, size_t i, const json_t *c,
                           cal_peak_curve_t *out, char *err, size_t errlen) {
  const json_t *ob = json_object_get(c, "optimal_batch_size");
  const json_t *mach = json_object_get(c, "machine");
  const json_t *pts = json_object_get(c, "points");
  if (!json_is_object(c) || !json_is_array(pts) ||
      !(json_is_null(mach) || json_is_string(mach)) ||
      !(json_is_null(ob) || (json_is_integer(ob) && json_integer_value(ob) >= 1 &&
                             json_integer_value(ob) <= CAL_BATCH_MAX))) {
    snprintf(err, errlen, "%s: curves[%zu] is not a curve of calibrate peak "
             "(machine, points[], optimal_batch_size)", path, i);
    return CAL_ESCHEMA;
  }
  int64_t b = json_is_integer(ob) ? (int64_t)json_integer_value(ob) : 0;
  *out = (cal_peak_curve_t){json_string_value(mach), NAN, NAN, NAN, NAN, b};
  size_t k;
  const json_t *pt;
  json_array_foreach(pts, k, pt) {
    const json_t *bs = json_object_get(pt, "batch_size");
    if (b && json_is_integer(bs) && json_integer_value(bs) == b &&
        strcmp(cal_json_str(pt, "status"), "ok") == 0) {
      out->throughput = cal_json_num(pt, "examples_per_s", NAN);
      out->ci_low = stat_of(pt, "ci_low");
      out->ci_high = stat_of(pt, "ci_high");
      out->ci_level = stat_of(pt, "ci_level");
    }
  }
  if (b && !(isfinite(out->throughput) && out->throughput >= 0)) {
    snprintf(err, errlen, "%s: curves[%zu]: no ok point with a finite "
             "examples_per_s at its optimal batch %lld", path, i,
             (long long)b);
    return CAL_ESCHEMA;
  }
  return 0;
}

int cal_peak_doc_read(const json_t *doc, const char *path,
                      cal_peak_curve_t **out, size_t *n, char *err,
                      size_t errlen) {
  const json_t *curves = json_object_get(doc, "curves"), *c;
  size_t i;
  *out = NULL;
  *n = 0;
  if (!json_is_array(curves) || json_array_size(curves) == 0) {
    snprintf(err, errlen, "%s: a calibrate peak document without curves",
             path);
    return CAL_ESCHEMA;
  }
  cal_peak_curve_t *v = calloc(json_array_size(curves), sizeof *v);
  if (!v) {
    snprintf(err, errlen, "out of memory reading %s", path);
    return CAL_ENOMEM;
  }
  json_array_foreach(curves, i, c) {
    int rc = read_peak_curve(path, i, c, &v[i], err, errlen);
    if (rc < 0) {
      free(v);
      return rc;
    }
  }
  *out = v;
  *n = json_array_size(curves);
  return 0;
}
