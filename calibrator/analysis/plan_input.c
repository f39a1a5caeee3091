/* Reading the inputs of `calibrate plan`: profiles, `calibrate peak`
 * JSON and curve CSV, each turned into cal_plan_machine_t. */
#include "plan_input.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "cal_file.h"
#include "curve.h"
#include "curve_csv.h"
#include "curve_json.h"
#include "fleet_json.h"
#include "view.h"

/* Whether pt is an ok point at batch. */
static int ok_point_at(const cal_vpoint_t *pt, int64_t batch) {
  return pt->batch_size.is_int && pt->batch_size.i == batch && pt->status &&
         strcmp(pt->status, "ok") == 0;
}

/* The batch sweep's point behind the top-level throughput: its mode is
 * batch_source.mode, else prefill, else decode; NULL when none is found
 * or its median is not the throughput (an edited or older profile).
 * *mode: the mode it was found in. */
static const cal_vpoint_t *throughput_point(const cal_profile_view_t *v,
                                            double thr, int64_t batch,
                                            const char **mode) {
  const char *const order[] = {v->batch_source.mode, "prefill", "decode"};
  for (size_t k = 0; k < 3; k++) {
    const cal_vbatch_mode_t *bm = cal_vbatch_mode(&v->batch_sweep, order[k]);
    for (size_t i = 0; bm && i < bm->points.n; i++) {
      const cal_vpoint_t *pt = bm->points.p[i];
      if (!ok_point_at(pt, batch))
        continue;
      if (fabs(pt->examples_per_s.v - thr) <= 1e-6 * fabs(thr)) {
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
static void train_optimum(const cal_profile_view_t *v, double *thr,
                          int64_t *batch) {
  const cal_vbatch_mode_t *train = cal_vbatch_mode(&v->batch_sweep, "train");
  if (!train || !train->optimal_batch_size.is_int ||
      train->optimal_batch_size.i < 1)
    return;
  for (size_t i = 0; i < train->points.n; i++) {
    const cal_vpoint_t *pt = train->points.p[i];
    double e = pt->examples_per_s.v;
    if (ok_point_at(pt, train->optimal_batch_size.i) && e > 0 && isfinite(e)) {
      *thr = e;
      *batch = train->optimal_batch_size.i;
      return;
    }
  }
}

static int64_t int_or_0(const cal_vnum_t *n) { return n->is_int ? n->i : 0; }

/* The shapes the batch sweep measured (layers 0). */
static void read_shape(const cal_profile_view_t *v, cal_plan_machine_t *m) {
  const cal_vbatch_model_t *md = &v->batch_sweep.model;
  m->shape = (cal_act_shape_t){
      .hidden = int_or_0(&md->hidden), .heads = int_or_0(&md->heads),
      .kv_heads = int_or_0(&md->kv_heads), .head_dim = int_or_0(&md->head_dim),
      .ffn = int_or_0(&md->ffn), .seq = int_or_0(&md->seq)};
  if (m->shape.head_dim == 0 && m->shape.heads > 0 &&
      m->shape.hidden % m->shape.heads == 0)
    m->shape.head_dim = m->shape.hidden / m->shape.heads;
  /* the LM head's vocabulary: the training step's, else any mode's */
  static const char *const modes[] = {"train", "prefill", "decode"};
  for (size_t i = 0; i < 3 && !m->shape.vocab; i++) {
    const cal_vbatch_mode_t *bm = cal_vbatch_mode(&v->batch_sweep, modes[i]);
    m->shape.vocab = bm && int_or_0(&bm->vocab) > 0 ? int_or_0(&bm->vocab) : 0;
  }
  cal_act_shape_t probe = m->shape;
  probe.layers = 1;
  m->has_shape = cal_lora_params(&probe, 1) > 0;
}

/* The parameters one decoder layer of shape s multiplies per token: the
 * query, key, value and output projections and the three of the MLP. */
static double layer_params(const cal_act_shape_t *s) {
  double h = (double)s->hidden, q = (double)(s->heads * s->head_dim),
         kv = (double)(s->kv_heads * s->head_dim);
  return 2.0 * h * q + 2.0 * h * kv + 3.0 * h * (double)s->ffn;
}

/* The parameters the model a mode measured multiplies per token: its
 * layers and the LM head (vocab x hidden); 0 when it records neither. */
static double mode_params(const cal_profile_view_t *v, const char *mode,
                          const cal_plan_machine_t *m) {
  const cal_vbatch_mode_t *bm = cal_vbatch_mode(&v->batch_sweep, mode);
  if (!bm || !m->has_shape || int_or_0(&bm->layers) < 1 ||
      int_or_0(&bm->vocab) < 1)
    return 0;
  return (double)int_or_0(&bm->layers) * layer_params(&m->shape) +
         (double)int_or_0(&bm->vocab) * (double)m->shape.hidden;
}

/* The model behind the throughput (plan.h): one decoder layer when
 * batch_source.workload says so, or, in a profile older than
 * batch_source, when the figure is a prefill or decode point of a
 * sweep that records its shape (those curves measured one layer then);
 * else the mode's model. */
static void read_model(const cal_profile_view_t *v, const char *found,
                       cal_plan_machine_t *m) {
  const char *w = v->batch_source.workload;
  m->preset = v->batch_source.preset ? v->batch_source.preset
                                     : v->batch_sweep.model.preset;
  m->one_layer = w ? strncmp(w, "one decoder layer", 17) == 0
                   : !v->batch_source.has && found && v->batch_sweep.model.has &&
                         (strcmp(found, "prefill") == 0 ||
                          strcmp(found, "decode") == 0);
  m->flops_params = !m->has_shape ? 0
                    : m->one_layer ? layer_params(&m->shape)
                    : m->mode      ? mode_params(v, m->mode, m)
                                   : 0;
  m->train_flops_params = mode_params(v, "train", m);
}

int cal_plan_read_machine(const cal_profile_t *p, cal_plan_machine_t *m) {
  const cal_profile_view_t *v = cal_profile_view(p);
  memset(m, 0, sizeof *m);
  if (!v)
    return CAL_ENOMEM;
  m->prof = p;
  m->path = p->path;
  m->source = CAL_PLAN_SRC_PROFILE;
  m->name = v->device_name ? v->device_name : p->path;
  m->throughput = v->throughput.v;
  m->optimal_batch = int_or_0(&v->optimal_batch_size);
  m->optimal_is_lower_bound = v->batch_source.optimal_is_lower_bound == 1;
  const cal_vnum_t *avail = &v->machine.memory.available_bytes;
  if (avail->has && avail->v > 0)
    m->available = avail->v;
  else if (v->memory_gb.has && v->memory_gb.v > 0)
    m->available = v->memory_gb.v * 1e9;
  m->price_per_hour = m->ci_low = m->ci_high = m->ci_level = NAN;
  const char *found = NULL;
  const cal_vpoint_t *pt =
      isfinite(m->throughput) && m->optimal_batch
          ? throughput_point(v, m->throughput, m->optimal_batch, &found)
          : NULL;
  m->mode = v->batch_source.mode ? v->batch_source.mode : found;
  m->measured_dtype = v->batch_source.dtype;
  train_optimum(v, &m->train_throughput, &m->train_batch);
  if (pt) {
    m->ci_low = pt->stats.ci_low.v;
    m->ci_high = pt->stats.ci_high.v;
    m->ci_level = pt->stats.ci_level.v;
  }
  read_shape(v, m);
  read_model(v, found, m);
  m->measured_throughput = m->flops_ratio = NAN;
  return 0;
}

/* arr (n elements of `size` bytes, room for *cap) with room for one
 * more: arr itself, or a larger copy (*cap doubled); NULL when out of
 * memory (arr kept). */
static void *grow(void *arr, size_t *cap, size_t n, size_t size) {
  if (arr && n < *cap)
    return arr;
  size_t c = *cap ? 2 * *cap : 4;
  void *v = realloc(arr, c * size);
  if (v)
    *cap = c;
  return v;
}

/* Room for one more machine; NULL when out of memory. */
static cal_plan_machine_t *new_machine(cal_plan_inputs_t *in) {
  void *ms = grow(in->ms, &in->cap, in->n, sizeof *in->ms);
  if (!ms)
    return NULL;
  in->ms = ms;
  cal_plan_machine_t *m = &in->ms[in->n];
  memset(m, 0, sizeof *m);
  m->throughput = m->ci_low = m->ci_high = m->ci_level = NAN;
  m->price_per_hour = m->measured_throughput = m->flops_ratio = NAN;
  return m;
}

/* A copy of s the inputs own; NULL when out of memory. */
static const char *keep(cal_plan_inputs_t *in, const char *s) {
  void *strs = grow(in->strs, &in->capstrs, in->nstrs, sizeof *in->strs);
  if (!strs)
    return NULL;
  in->strs = strs;
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

/* Each curve of a "calibrate-peak/1" document as a machine. */
static int add_peak(cal_plan_inputs_t *in, const char *path,
                    const json_t *doc, char *err, size_t errlen) {
  cal_peak_curve_t *cv = NULL;
  size_t n = 0;
  int rc = cal_peak_doc_read(doc, path, &cv, &n, err, errlen);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const cal_peak_curve_t *c = &cv[i];
    if ((rc = add_curve(in, path, CAL_PLAN_SRC_PEAK, c->machine,
                        c->throughput, c->ci_low, c->ci_high, c->ci_level,
                        c->optimal_batch)) < 0)
      snprintf(err, errlen, "out of memory reading %s", path);
  }
  free(cv);
  return rc;
}

static int add_profile(cal_plan_inputs_t *in, const char *path,
                       const char *buf, size_t len, char *err, size_t errlen) {
  cal_profile_t *p = NULL;
  cal_plan_machine_t *m;
  int rc;
  void *profs = grow(in->profs, &in->capprof, in->nprof, sizeof *in->profs);
  if (!profs)
    goto nomem;
  in->profs = profs;
  if ((rc = cal_profile_parse(buf, len, path, &p, err, errlen)) < 0)
    return rc;
  in->profs[in->nprof++] = p;
  if (!(m = new_machine(in)) || cal_plan_read_machine(p, m) < 0)
    goto nomem;
  in->n++;
  return 0;
nomem:
  snprintf(err, errlen, "out of memory reading %s", path);
  return CAL_ENOMEM;
}

/* The fleet's all-reduce curve (allreduce.points[]) into in->net.  err
 * filled on failure. */
static int read_net(cal_plan_inputs_t *in, const char *path,
                    const cal_fleet_view_t *fv, char *err, size_t errlen) {
  size_t n = fv->allreduce.npoints;
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
  for (size_t i = 0; i < n; i++) {
    b[i] = fv->allreduce.points[i].bytes.v;
    t[i] = fv->allreduce.points[i].time_us.v * 1e-6;
    if (!(b[i] > 0 && t[i] > 0) || (i && !(b[i] > b[i - 1]))) {
      snprintf(err, errlen, "%s: allreduce.points[%zu]: bytes and time_us "
               "must be positive, sizes ascending", path, i);
      return CAL_ESCHEMA;
    }
  }
  if (fv->ranks.has && !(fv->ranks.v >= 1 && fv->ranks.v <= INT_MAX &&
                         fv->ranks.v == floor(fv->ranks.v))) {
    snprintf(err, errlen, "%s: ranks must be a whole number from 1 to %d",
             path, INT_MAX);
    return CAL_ESCHEMA;
  }
  in->net.ranks = fv->ranks.has ? (int)fv->ranks.v : 0;
  in->net.hosts = (int)fv->nhosts;
  in->net.intra_host = fv->links.intra_host == 1;
  return 0;
}

/* A fleet profile: each host's embedded profile as a machine named by its
 * host, and the all-reduce curve. */
static int add_fleet(cal_plan_inputs_t *in, const char *path,
                     const cal_fleet_view_t *fv, char *err, size_t errlen) {
  int rc;
  if (in->has_net) {
    snprintf(err, errlen, "%s: a second fleet profile: give one fleet "
             "(its hosts and their links) per plan", path);
    return CAL_EPARSE;
  }
  if (!fv->has_hosts || fv->nhosts == 0 || !fv->allreduce.has_points) {
    snprintf(err, errlen, "%s: a fleet profile without hosts[] or "
             "allreduce.points[]", path);
    return CAL_ESCHEMA;
  }
  if ((rc = read_net(in, path, fv, err, errlen)) < 0)
    return rc;
  if (!(in->net.source = keep(in, path)))
    goto nomem;
  for (size_t i = 0; i < fv->nhosts; i++) {
    const cal_vfleet_host_t *h = &fv->hosts[i];
    char where[512];
    snprintf(where, sizeof where, "%s:hosts[%zu]", path, i);
    if (h->malformed) {
      snprintf(err, errlen, "%s: not a valid fleet profile: a host that is "
               "no object, or its profile neither an object nor null", where);
      return CAL_ESCHEMA;
    }
    for (size_t j = 0; h->host && j < i; j++)
      if (fv->hosts[j].host && strcmp(fv->hosts[j].host, h->host) == 0) {
        snprintf(err, errlen, "%s: host \"%s\" is hosts[%zu] too: a fleet "
                 "lists each host once", where, h->host, j);
        return CAL_ESCHEMA;
      }
    if (!h->profile)
      continue;
    char *text = json_dumps(h->profile, JSON_COMPACT);
    if (!text)
      goto nomem;
    rc = add_profile(in, where, text, strlen(text), err, errlen);
    free(text);
    if (rc < 0)
      return rc;
    if (h->host && *h->host && !(in->ms[in->n - 1].name = keep(in, h->host)))
      goto nomem;
  }
  return 0;
nomem:
  snprintf(err, errlen, "out of memory reading %s", path);
  return CAL_ENOMEM;
}

/* A JSON input: a peak document, a fleet profile or a profile, told apart
 * by their schema. */
static int add_json(cal_plan_inputs_t *in, const char *path, const char *buf,
                    size_t len, char *err, size_t errlen) {
  json_t *doc = json_loadb(buf, len, 0, NULL);
  cal_fleet_view_t *fv = NULL;
  int rc;
  if (doc && cal_peak_doc_is(doc)) {
    rc = add_peak(in, path, doc, err, errlen);
  } else if (doc && cal_fleet_view_build(doc, &fv) < 0) {
    snprintf(err, errlen, "out of memory reading %s", path);
    rc = CAL_ENOMEM;
  } else if (fv && fv->schema && strcmp(fv->schema, CAL_FLEET_SCHEMA) == 0) {
    rc = add_fleet(in, path, fv, err, errlen);
  } else {
    rc = add_profile(in, path, buf, len, err, errlen);
  }
  cal_fleet_view_free(fv);
  json_decref(doc);
  return rc;
}

/* *s made text every output can carry: a name or path that is not UTF-8
 * (or holds control characters) kept with those bytes escaped (\xNN), as
 * the tables print it, so that no writer drops its machine.  0 or
 * CAL_ENOMEM. */
static int printable(cal_plan_inputs_t *in, const char **s) {
  if (!*s || !cal_esc_needed(*s, strlen(*s), 0))
    return 0;
  size_t n;
  char *e = cal_esc_text(*s, strlen(*s), 0, &n);
  const char *k = e ? keep(in, e) : NULL;
  free(e);
  if (!k)
    return CAL_ENOMEM;
  *s = k;
  return 0;
}

static int add_by_kind(cal_plan_inputs_t *in, const char *path, char *err,
                       size_t errlen);

int cal_plan_inputs_add(cal_plan_inputs_t *in, const char *path, char *err,
                        size_t errlen) {
  size_t n0 = in->n;
  int rc = add_by_kind(in, path, err, errlen);
  for (size_t i = n0; rc == 0 && i < in->n; i++)
    if (printable(in, &in->ms[i].name) < 0 ||
        printable(in, &in->ms[i].path) < 0) {
      snprintf(err, errlen, "out of memory");
      rc = CAL_ENOMEM;
    }
  return rc;
}

static int add_by_kind(cal_plan_inputs_t *in, const char *path, char *err,
                       size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  int rc = cal_profile_read_text(path, "", &buf, &len, err, errlen);
  if (rc < 0)
    return rc;
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
    rc = add_json(in, path, buf, len, err, errlen);
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
