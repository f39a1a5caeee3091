/* Reading the inputs of `calibrate plan`: profiles, `calibrate peak`
 * JSON and curve CSV, each turned into cal_plan_machine_t. */
#include "plan_input.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_file.h"
#include "curve.h"
#include "curve_csv.h"
#include "curve_json.h"
#include "fleet_json.h"

/* The batch sweep's point behind the top-level throughput: its mode is
 * batch_source.mode, else prefill, else decode; NULL when none is found
 * or its median is not the throughput (an edited or older profile).
 * *mode: the mode it was found in. */
static const json_t *throughput_point(const json_t *r, double thr,
                                      int64_t batch, const char **mode) {
  const json_t *modes =
      json_object_get(json_object_get(r, "batch_sweep"), "modes");
  const char *want = json_string_value(
      json_object_get(json_object_get(r, "batch_source"), "mode"));
  const char *const order[] = {want, "prefill", "decode"};
  for (size_t k = 0; k < 3; k++) {
    const json_t *pts =
        order[k] ? json_object_get(json_object_get(modes, order[k]), "points")
                 : NULL;
    size_t i;
    const json_t *pt;
    json_array_foreach(pts, i, pt) {
      const json_t *bs = json_object_get(pt, "batch_size");
      if (!json_is_integer(bs) || json_integer_value(bs) != batch ||
          strcmp(cal_json_str(pt, "status"), "ok") != 0)
        continue;
      double med = cal_json_num(pt, "examples_per_s", NAN);
      if (fabs(med - thr) <= 1e-6 * fabs(thr)) {
        *mode = order[k];
        return pt;
      }
    }
    if (order[k] && k == 0)
      break; /* the recorded mode decides */
  }
  return NULL;
}

/* The train curve's optimal point (batch_sweep.modes.train): its
 * examples/s into *thr and its batch into *batch, or nothing. */
static void train_optimum(const json_t *r, double *thr, int64_t *batch) {
  const json_t *train = json_object_get(
      json_object_get(json_object_get(r, "batch_sweep"), "modes"), "train");
  const json_t *ob = json_object_get(train, "optimal_batch_size");
  size_t i;
  const json_t *pt;
  if (!json_is_integer(ob) || json_integer_value(ob) < 1)
    return;
  json_array_foreach(json_object_get(train, "points"), i, pt) {
    const json_t *bs = json_object_get(pt, "batch_size");
    double v = cal_json_num(pt, "examples_per_s", NAN);
    if (json_is_integer(bs) &&
        json_integer_value(bs) == json_integer_value(ob) &&
        strcmp(cal_json_str(pt, "status"), "ok") == 0 && v > 0 &&
        isfinite(v)) {
      *thr = v;
      *batch = (int64_t)json_integer_value(ob);
      return;
    }
  }
}

static int64_t shape_int(const json_t *model, const char *k) {
  const json_t *v = json_object_get(model, k);
  return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

void cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m) {
  const json_t *r = p->root;
  memset(m, 0, sizeof *m);
  m->prof = p;
  m->path = p->path;
  m->source = CAL_PLAN_SRC_PROFILE;
  m->name = json_string_value(json_object_get(r, "device_name"));
  if (!m->name)
    m->name = p->path;
  const json_t *t = json_object_get(r, "throughput");
  m->throughput = json_is_number(t) ? json_number_value(t) : NAN;
  const json_t *b = json_object_get(r, "optimal_batch_size");
  m->optimal_batch = json_is_integer(b) ? (int64_t)json_integer_value(b) : 0;
  const json_t *avail = json_object_get(
      json_object_get(json_object_get(r, "machine"), "memory"),
      "available_bytes");
  const json_t *mgb = json_object_get(r, "memory_gb");
  if (json_is_number(avail) && json_number_value(avail) > 0)
    m->available = json_number_value(avail);
  else if (json_is_number(mgb) && json_number_value(mgb) > 0)
    m->available = json_number_value(mgb) * 1e9;
  else
    m->available = 0;
  m->price_per_hour = m->ci_low = m->ci_high = m->ci_level = NAN;
  const char *found = NULL;
  const json_t *pt = isfinite(m->throughput) && m->optimal_batch
                         ? throughput_point(r, m->throughput, m->optimal_batch,
                                            &found)
                         : NULL;
  m->mode = json_string_value(
      json_object_get(json_object_get(r, "batch_source"), "mode"));
  if (!m->mode)
    m->mode = found;
  train_optimum(r, &m->train_throughput, &m->train_batch);
  const json_t *st = json_object_get(pt, "stats");
  if (st) {
    m->ci_low = cal_json_num(st, "ci_low", NAN);
    m->ci_high = cal_json_num(st, "ci_high", NAN);
    m->ci_level = cal_json_num(st, "ci_level", NAN);
  }
  const json_t *model =
      json_object_get(json_object_get(r, "batch_sweep"), "model");
  m->shape = (cal_act_shape_t){
      .hidden = shape_int(model, "hidden"), .heads = shape_int(model, "heads"),
      .kv_heads = shape_int(model, "kv_heads"),
      .head_dim = shape_int(model, "head_dim"), .ffn = shape_int(model, "ffn"),
      .seq = shape_int(model, "seq")};
  if (m->shape.head_dim == 0 && m->shape.heads > 0 &&
      m->shape.hidden % m->shape.heads == 0)
    m->shape.head_dim = m->shape.hidden / m->shape.heads;
  cal_act_shape_t probe = m->shape;
  probe.layers = 1;
  m->has_shape = cal_lora_params(&probe, 1) > 0;
}

/* Room for one more machine; NULL when out of memory. */
static cal_plan_machine_t *new_machine(cal_plan_inputs_t *in) {
  if (in->n == in->cap) {
    size_t cap = in->cap ? 2 * in->cap : 4;
    cal_plan_machine_t *ms = realloc(in->ms, cap * sizeof *ms);
    if (!ms)
      return NULL;
    in->ms = ms;
    in->cap = cap;
  }
  cal_plan_machine_t *m = &in->ms[in->n];
  memset(m, 0, sizeof *m);
  m->throughput = m->ci_low = m->ci_high = m->ci_level = NAN;
  m->price_per_hour = NAN;
  return m;
}

/* A copy of s the inputs own; NULL when out of memory. */
static const char *keep(cal_plan_inputs_t *in, const char *s) {
  if (in->nstrs == in->capstrs) {
    size_t cap = in->capstrs ? 2 * in->capstrs : 8;
    char **v = realloc(in->strs, cap * sizeof *v);
    if (!v)
      return NULL;
    in->strs = v;
    in->capstrs = cap;
  }
  char *c = strdup(s);
  if (c)
    in->strs[in->nstrs++] = c;
  return c;
}

/* The machine name of a curve without one: the file's name without its
 * extension ("gpu-box" for "data/gpu-box.csv"), into buf. */
static const char *base_name(const char *path, char *buf, size_t len) {
  const char *s = strrchr(path, '/');
  s = strcmp(path, "-") == 0 ? "<stdin>" : s && s[1] ? s + 1 : path;
  snprintf(buf, len, "%s", s);
  char *dot = strrchr(buf, '.');
  if (dot && dot != buf)
    *dot = '\0';
  return buf;
}

/* One curve as a machine: throughput and CI of its optimal point. */
static int add_curve(cal_plan_inputs_t *in, const char *path,
                     cal_plan_source_t src, const char *name, double thr,
                     double lo, double hi, double level, int64_t batch) {
  char buf[256];
  cal_plan_machine_t *m = new_machine(in);
  if (!m || !(m->path = keep(in, path)) ||
      !(m->name = keep(in, name ? name : base_name(path, buf, sizeof buf))))
    return CAL_ENOMEM;
  m->source = src;
  m->throughput = thr;
  m->ci_low = lo;
  m->ci_high = hi;
  m->ci_level = level;
  m->optimal_batch = batch;
  in->n++;
  return 0;
}

static int add_csv(cal_plan_inputs_t *in, const char *path, const char *buf,
                   size_t len, char *err, size_t errlen) {
  cal_curve_set_t *set = NULL;
  FILE *f = fmemopen((void *)buf, len, "r");
  int rc = CAL_ENOMEM;
  if (!f) {
    snprintf(err, errlen, "out of memory reading %s", path);
    return rc;
  }
  rc = cal_curves_read(f, strcmp(path, "-") ? path : "<stdin>", &set, err,
                       errlen);
  fclose(f);
  for (size_t c = 0; rc == 0 && set && c < set->n; c++) {
    const cal_curve_t *cv = &set->curves[c];
    char nb[256];
    cal_curve_result_t *r = NULL;
    if ((rc = cal_curve_analyze(cv->points, cv->n, NULL, &r)) < 0) {
      snprintf(err, errlen, "%s: curve %s cannot be analysed", path,
               cv->machine ? cv->machine : base_name(path, nb, sizeof nb));
      rc = CAL_EPARSE;
      break;
    }
    double thr = NAN, lo = NAN, hi = NAN, lev = NAN;
    for (size_t k = 0; k < r->n; k++)
      if (r->points[k].is_optimal && r->points[k].status == CAL_POINT_OK) {
        thr = r->points[k].stats.median;
        lo = r->points[k].stats.ci_low;
        hi = r->points[k].stats.ci_high;
        lev = r->points[k].stats.ci_level;
      }
    rc = add_curve(in, path, CAL_PLAN_SRC_CSV, cv->machine, thr, lo, hi, lev,
                   r->optimal_batch_size);
    cal_curve_result_free(r);
    if (rc < 0)
      snprintf(err, errlen, "out of memory reading %s", path);
  }
  cal_curve_set_free(set);
  return rc;
}

/* A number of a peak document's point, NaN when absent. */
static double stat_of(const json_t *pt, const char *k) {
  return cal_json_num(json_object_get(pt, "stats"), k, NAN);
}

/* Curve i of a "calibrate-peak/1" document; err filled when malformed. */
static int add_peak_curve(cal_plan_inputs_t *in, const char *path, size_t i,
                          const json_t *c, char *err, size_t errlen) {
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
  double thr = NAN, lo = NAN, hi = NAN, lev = NAN;
  int64_t b = json_is_integer(ob) ? (int64_t)json_integer_value(ob) : 0;
  size_t k;
  const json_t *pt;
  json_array_foreach(pts, k, pt) {
    const json_t *bs = json_object_get(pt, "batch_size");
    if (b && json_is_integer(bs) && json_integer_value(bs) == b &&
        strcmp(cal_json_str(pt, "status"), "ok") == 0) {
      thr = cal_json_num(pt, "examples_per_s", NAN);
      lo = stat_of(pt, "ci_low");
      hi = stat_of(pt, "ci_high");
      lev = stat_of(pt, "ci_level");
    }
  }
  if (b && !(isfinite(thr) && thr >= 0)) {
    snprintf(err, errlen, "%s: curves[%zu]: no ok point with a finite "
             "examples_per_s at its optimal batch %lld", path, i,
             (long long)b);
    return CAL_ESCHEMA;
  }
  if (add_curve(in, path, CAL_PLAN_SRC_PEAK, json_string_value(mach), thr, lo,
                hi, lev, b) < 0) {
    snprintf(err, errlen, "out of memory reading %s", path);
    return CAL_ENOMEM;
  }
  return 0;
}

static int add_peak(cal_plan_inputs_t *in, const char *path,
                    const json_t *doc, char *err, size_t errlen) {
  const json_t *curves = json_object_get(doc, "curves");
  if (!json_is_array(curves) || json_array_size(curves) == 0) {
    snprintf(err, errlen, "%s: a calibrate peak document without curves",
             path);
    return CAL_ESCHEMA;
  }
  size_t i;
  const json_t *c;
  json_array_foreach(curves, i, c) {
    int rc = add_peak_curve(in, path, i, c, err, errlen);
    if (rc < 0)
      return rc;
  }
  return 0;
}

static int add_profile(cal_plan_inputs_t *in, const char *path,
                       const char *buf, size_t len, char *err, size_t errlen) {
  cal_profile_t *p = NULL;
  cal_plan_machine_t *m;
  int rc;
  if (in->nprof == in->capprof) {
    size_t cap = in->capprof ? 2 * in->capprof : 4;
    cal_profile_t **v = realloc(in->profs, cap * sizeof *v);
    if (!v)
      goto nomem;
    in->profs = v;
    in->capprof = cap;
  }
  if ((rc = cal_profile_parse(buf, len, path, &p, err, errlen)) < 0)
    return rc;
  in->profs[in->nprof++] = p;
  if (!(m = new_machine(in)))
    goto nomem;
  cal_plan_read_machine(p, m);
  in->n++;
  return 0;
nomem:
  snprintf(err, errlen, "out of memory reading %s", path);
  return CAL_ENOMEM;
}

/* A fleet profile: each host's embedded profile as a machine named by its
 * host, and the all-reduce curve. */
static int add_fleet(cal_plan_inputs_t *in, const char *path,
                     const json_t *doc, char *err, size_t errlen) {
  const json_t *hosts = json_object_get(doc, "hosts");
  const json_t *pts =
      json_object_get(json_object_get(doc, "allreduce"), "points");
  if (in->has_net) {
    snprintf(err, errlen, "%s: a second fleet profile: give one fleet "
             "(its hosts and their links) per plan", path);
    return CAL_EPARSE;
  }
  if (!json_is_array(hosts) || json_array_size(hosts) == 0 ||
      !json_is_array(pts)) {
    snprintf(err, errlen, "%s: a fleet profile without hosts[] or "
             "allreduce.points[]", path);
    return CAL_ESCHEMA;
  }
  size_t n = json_array_size(pts), i;
  const json_t *x;
  double *b = calloc(n ? n : 1, sizeof *b), *t = calloc(n ? n : 1, sizeof *t);
  if (!b || !t) {
    free(b);
    free(t);
    snprintf(err, errlen, "out of memory reading %s", path);
    return CAL_ENOMEM;
  }
  in->net.curve.bytes = b;
  in->net.curve.time_s = t;
  in->net.curve.n = n;
  in->has_net = 1;
  json_array_foreach(pts, i, x) {
    b[i] = cal_json_num(x, "bytes", NAN);
    t[i] = cal_json_num(x, "time_us", NAN) * 1e-6;
    if (!(b[i] > 0 && t[i] > 0) || (i && !(b[i] > b[i - 1]))) {
      snprintf(err, errlen, "%s: allreduce.points[%zu]: bytes and time_us "
               "must be positive, sizes ascending", path, i);
      return CAL_ESCHEMA;
    }
  }
  in->net.ranks = (int)cal_json_num(doc, "ranks", 0);
  in->net.hosts = (int)json_array_size(hosts);
  in->net.intra_host =
      json_is_true(json_object_get(json_object_get(doc, "links"), "intra_host"));
  if (!(in->net.source = keep(in, path)))
    goto nomem;
  json_array_foreach(hosts, i, x) {
    const json_t *prof = json_object_get(x, "profile");
    const char *host = cal_json_str(x, "host");
    char where[512];
    snprintf(where, sizeof where, "%s:hosts[%zu]", path, i);
    if (json_is_null(prof))
      continue;
    char *text = json_dumps(prof, JSON_COMPACT);
    if (!text)
      goto nomem;
    int rc = add_profile(in, where, text, strlen(text), err, errlen);
    free(text);
    if (rc < 0)
      return rc;
    if (*host && !(in->ms[in->n - 1].name = keep(in, host)))
      goto nomem;
  }
  return 0;
nomem:
  snprintf(err, errlen, "out of memory reading %s", path);
  return CAL_ENOMEM;
}

int cal_plan_inputs_add(cal_plan_inputs_t *in, const char *path, char *err,
                        size_t errlen) {
  char *buf = NULL, why[256];
  size_t len = 0;
  int rc = cal_file_read(path, CAL_PROFILE_MAX_BYTES, &buf, &len, why,
                         sizeof why);
  if (rc == CAL_EIO || rc == CAL_ESYS) {
    snprintf(err, errlen, "cannot %s %s: %s", rc == CAL_EIO ? "open" : "read",
             path, why);
    free(buf);
    return CAL_EIO;
  }
  if (rc < 0) {
    snprintf(err, errlen, "out of memory reading %s", path);
    free(buf);
    return rc;
  }
  size_t at = 0;
  if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
    at = 3;
  while (at < len && strchr(" \t\r\n", buf[at]))
    at++;
  if (at == len) {
    snprintf(err, errlen, "%s: empty file: give a profile, a calibrate peak "
             "JSON document or a curve CSV", path);
    rc = CAL_EPARSE;
  } else if (buf[at] == '{') {
    /* a profile or a peak document: the schema says which */
    json_t *doc = json_loadb(buf, len, 0, NULL);
    if (doc && strcmp(cal_json_str(doc, "schema"), CAL_CURVE_SCHEMA) == 0)
      rc = add_peak(in, path, doc, err, errlen);
    else if (doc && strcmp(cal_json_str(doc, "schema"), CAL_FLEET_SCHEMA) == 0)
      rc = add_fleet(in, path, doc, err, errlen);
    else
      rc = add_profile(in, path, buf, len, err, errlen);
    json_decref(doc);
  } else {
    rc = add_csv(in, path, buf, len, err, errlen);
  }
  free(buf);
  return rc;
}

void cal_plan_inputs_free(cal_plan_inputs_t *in) {
  if (!in)
    return;
  for (size_t i = 0; i < in->nprof; i++)
    cal_profile_free(in->profs[i]);
  for (size_t i = 0; i < in->nstrs; i++)
    free(in->strs[i]);
  free(in->profs);
  free(in->strs);
  free((double *)in->net.curve.bytes);
  free((double *)in->net.curve.time_s);
  free(in->ms);
  memset(in, 0, sizeof *in);
}
