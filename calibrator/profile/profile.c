#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "cal_file.h"
#include "cal_out.h"
#include "curve.h"
#include "view.h"

const cal_top_figure_t cal_top_figures[CAL_NTOP_FIGURES] = {
    {"gflops", 1},
    {"gflops_per_core", 1},
    {"throughput", 1},
    {"latency_ms", 0},
};

void cal_profile_free(cal_profile_t *p) {
  if (!p)
    return;
  cal_profile_view_free(p->view);
  json_decref(p->root);
  free(p->path);
  free(p);
}

/* Top-level keys planners read: name, whether null is allowed, json type. */
static const struct {
  const char *key;
  json_type type;
  int nullable;
} top_keys[] = {
    {"schema", JSON_STRING, 0},
    {"device_name", JSON_STRING, 0},
    {"device", JSON_STRING, 0},
    {"gflops", JSON_REAL, 1},
    {"gflops_per_core", JSON_REAL, 1},
    {"optimal_batch_size", JSON_INTEGER, 1},
    {"throughput", JSON_REAL, 1},
    {"memory_gb", JSON_REAL, 1},
    {"latency_ms", JSON_REAL, 1},
    {"created", JSON_STRING, 0},
    {"tool", JSON_OBJECT, 0},
    {"machine", JSON_OBJECT, 0},
    {"settings", JSON_OBJECT, 0},
    {"quality", JSON_OBJECT, 0},
};

static const char *const sections[] = {
    "gemm", "scaling", "peak", "bandwidth", "attention", "batch_sweep",
    "roofline",
};

static const char *type_name(json_type t) {
  switch (t) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

static int type_ok(const json_t *v, json_type want) {
  if (want == JSON_REAL)
    return json_is_number(v);
  return json_typeof(v) == want;
}

/* Equal within the rounding of a profile written with ten significant
 * digits (and of hand-written ones with six). */
static int near(double a, double b) {
  return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)) + 1e-12;
}
/* a <= b within the same rounding. */
static int below(double a, double b) { return a <= b || near(a, b); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* What validation carries through the tree: the ids seen so far. */
typedef struct check_ctx {
  json_t *ids; /* object used as a set */
  char *err;
  size_t errlen;
} check_ctx_t;

#define BAD(...) (snprintf(c->err, c->errlen, __VA_ARGS__), CAL_ESCHEMA)

/* stats of an ok point against its samples (sorted copy in v[n]).  Every
 * key is checked where present: profiles written by calibrate have them
 * all (the schema lists them), hand-made ones may give only some. */
static int check_stats(check_ctx_t *c, const char *id, const json_t *st,
                       const double *v, size_t n, double value) {
  enum { MED, MEAN, MIN, MAX, SD, MAD, CV, LO, HI, LEVEL, NNUM };
  static const char *const nums[NNUM] = {"median", "mean", "min", "max",
                                         "stddev", "mad", "cv", "ci_low",
                                         "ci_high", "ci_level"};
  double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  /* absent keys take the value that passes every test below */
  double x[NNUM] = {med, med, v[0], v[n - 1], 0, 0, 0, med, med, 0.5};
  for (size_t i = 0; i < NNUM; i++) {
    const json_t *e = json_object_get(st, nums[i]);
    if (e && !json_is_number(e))
      return BAD("point %s: stats.%s must be a number", id, nums[i]);
    if (e)
      x[i] = json_number_value(e);
  }
  const json_t *jn = json_object_get(st, "n");
  if (jn && (!json_is_integer(jn) || json_integer_value(jn) != (json_int_t)n))
    return BAD("point %s: stats.n must be %zu, the number of samples", id, n);
  const json_t *un = json_object_get(st, "unstable");
  if (un && !json_is_boolean(un))
    return BAD("point %s: stats.unstable must be true or false", id);
  if (!near(x[MIN], v[0]) || !near(x[MAX], v[n - 1]))
    return BAD("point %s: stats min/max (%g, %g) are not those of the "
               "samples (%g, %g)", id, x[MIN], x[MAX], v[0], v[n - 1]);
  if (!near(x[MED], med))
    return BAD("point %s: stats.median %g is not the samples' median %g", id,
               x[MED], med);
  if (!near(value, med))
    return BAD("point %s: its figure %g is not the samples' median %g", id,
               value, med);
  if (!below(v[0], x[MEAN]) || !below(x[MEAN], v[n - 1]))
    return BAD("point %s: stats.mean %g lies outside the samples", id,
               x[MEAN]);
  if (!below(v[0], x[LO]) || !below(x[LO], med) || !below(med, x[HI]) ||
      !below(x[HI], v[n - 1]))
    return BAD("point %s: confidence interval [%g, %g] does not hold the "
               "median %g within the samples", id, x[LO], x[HI], med);
  if (x[SD] < 0 || x[MAD] < 0 || x[CV] < 0 || x[LEVEL] < 0 || x[LEVEL] > 1)
    return BAD("point %s: stats stddev, mad, cv must be >= 0 and ci_level "
               "in [0, 1]", id);
  return 0;
}

/* The figures of an ok point: metric, samples, median, stats. */
static int check_ok_point(check_ctx_t *c, const char *id, const json_t *pt) {
  const char *metric = json_string_value(json_object_get(pt, "metric"));
  if (!metric || !*metric || strlen(metric) > 64)
    return BAD("point %s: no \"metric\" string", id);
  char key[96];
  snprintf(key, sizeof key, "samples_%s", metric);
  const json_t *samples = json_object_get(pt, key);
  size_t n = json_array_size(samples);
  if (!json_is_array(samples) || n == 0)
    return BAD("point %s: \"%s\" must be a non-empty array", id, key);
  const json_t *val = json_object_get(pt, metric);
  if (!json_is_number(val) || !(json_number_value(val) >= 0))
    return BAD("point %s: \"%s\" must be a number >= 0", id, metric);
  if (!json_is_boolean(json_object_get(pt, "higher_is_better")))
    return BAD("point %s: \"higher_is_better\" must be true or false", id);
  const json_t *st = json_object_get(pt, "stats");
  if (!json_is_object(st))
    return BAD("point %s: \"stats\" must be an object", id);
  double *v = malloc(n * sizeof *v);
  if (!v) {
    snprintf(c->err, c->errlen, "out of memory");
    return CAL_ENOMEM;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const json_t *e = json_array_get(samples, i);
    if (!json_is_number(e) || !((v[i] = json_number_value(e)) >= 0))
      rc = BAD("point %s: %s[%zu] is not a number >= 0", id, key, i);
  }
  if (rc == 0) {
    qsort(v, n, sizeof *v, cmp_double);
    rc = check_stats(c, id, st, v, n, json_number_value(val));
  }
  free(v);
  return rc;
}

/* A point: a unique id, its status, integer parameters in range, and for
 * "ok" points figures that agree with their samples. */
static int check_point(check_ctx_t *c, const char *where, const json_t *pt) {
  const char *id = json_string_value(json_object_get(pt, "id"));
  const char *status = json_string_value(json_object_get(pt, "status"));
  if (!id || !*id)
    return BAD("%s: a point has no \"id\" string", where);
  if (json_object_get(c->ids, id))
    return BAD("point id %s appears twice", id);
  if (json_object_set_new(c->ids, id, json_true()) != 0) {
    snprintf(c->err, c->errlen, "out of memory");
    return CAL_ENOMEM;
  }
  if (!status || (strcmp(status, "ok") && strcmp(status, "skipped") &&
                  strcmp(status, "failed") && strcmp(status, "contaminated")))
    return BAD("point %s: \"status\" must be ok, skipped, failed or "
               "contaminated", id);
  const json_t *reason = json_object_get(pt, "reason");
  if (reason && !json_is_string(reason))
    return BAD("point %s: \"reason\" must be a string", id);
  static const struct {
    const char *key;
    json_int_t hi;
  } ints[] = {{"batch_size", CAL_BATCH_MAX}, {"threads", 1 << 20}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    const json_t *e = json_object_get(pt, ints[i].key);
    if (e && (!json_is_integer(e) || json_integer_value(e) < 1 ||
              json_integer_value(e) > ints[i].hi))
      return BAD("point %s: \"%s\" must be an integer from 1 to %lld", id,
                 ints[i].key, (long long)ints[i].hi);
  }
  const json_t *ms = json_object_get(pt, "samples_ms");
  size_t i;
  const json_t *e;
  if (ms && !json_is_array(ms))
    return BAD("point %s: \"samples_ms\" must be an array", id);
  json_array_foreach(ms, i, e) if (!json_is_number(e) ||
                                   !(json_number_value(e) >= 0)) return BAD(
      "point %s: samples_ms[%zu] is not a number >= 0", id, i);
  /* a contaminated point keeps its samples as evidence: the same checks */
  return strcmp(status, "ok") == 0 || strcmp(status, "contaminated") == 0
             ? check_ok_point(c, id, pt)
             : 0;
}

/* Keys whose shape every section shares: "points" is an array of
 * objects, "modes" an object of objects. */
static int check_shape(check_ctx_t *c, const char *where, const char *k,
                       const json_t *v) {
  size_t i;
  const char *mk;
  json_t *e;
  if (strcmp(k, "points") == 0) {
    if (!json_is_array(v))
      return BAD("%s: \"points\" must be an array", where);
    json_array_foreach((json_t *)v, i, e) if (!json_is_object(e)) return BAD(
        "%s: points[%zu] must be an object", where, i);
  } else if (strcmp(k, "modes") == 0) {
    if (!json_is_object(v))
      return BAD("%s: \"modes\" must be an object", where);
    json_object_foreach((json_t *)v, mk, e) if (!json_is_object(e)) return BAD(
        "%s: mode \"%s\" must be an object", where, mk);
  }
  return 0;
}

/* Recursively validate every object that looks like a point ("id"). */
static int check_tree(check_ctx_t *c, const char *where, const json_t *node) {
  int rc;
  if (json_is_object(node)) {
    if (json_object_get(node, "id"))
      if ((rc = check_point(c, where, node)) < 0)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)node, k, v) {
      if ((rc = check_shape(c, where, k, v)) < 0)
        return rc;
      if (strcmp(k, "id") && (rc = check_tree(c, where, v)) < 0)
        return rc;
    }
  } else if (json_is_array(node)) {
    size_t i;
    json_t *v;
    json_array_foreach(node, i, v) {
      if ((rc = check_tree(c, where, v)) < 0)
        return rc;
    }
  }
  return 0;
}

/* The top-level figures: numbers >= 0, the optimal batch a batch size. */
static int check_top_ranges(check_ctx_t *c, const json_t *root) {
  static const char *const figures[] = {"gflops", "gflops_per_core",
                                        "throughput", "memory_gb",
                                        "latency_ms"};
  for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
    const json_t *v = json_object_get(root, figures[i]);
    if (json_is_number(v) && !(json_number_value(v) >= 0))
      return BAD("\"%s\" must be >= 0, found %g", figures[i],
                 json_number_value(v));
  }
  const json_t *b = json_object_get(root, "optimal_batch_size");
  if (json_is_integer(b) &&
      (json_integer_value(b) < 1 || json_integer_value(b) > CAL_BATCH_MAX))
    return BAD("\"optimal_batch_size\" must be from 1 to %lld, found %lld",
               (long long)CAL_BATCH_MAX, (long long)json_integer_value(b));
  return 0;
}

int cal_profile_validate(const json_t *root, char *err, size_t errlen) {
  if (!json_is_object(root)) {
    snprintf(err, errlen, "the top level is not a JSON object");
    return CAL_ESCHEMA;
  }
  const char *schema = json_string_value(json_object_get(root, "schema"));
  if (!schema) {
    snprintf(err, errlen, "no \"schema\" key: not a calibrate profile");
    return CAL_ESCHEMA;
  }
  if (strcmp(schema, CAL_PROFILE_SCHEMA) != 0) {
    snprintf(err, errlen, "schema is \"%s\", this version reads \"%s\"",
             schema, CAL_PROFILE_SCHEMA);
    return CAL_ESCHEMA;
  }
  for (size_t i = 0; i < sizeof top_keys / sizeof top_keys[0]; i++) {
    const json_t *v = json_object_get(root, top_keys[i].key);
    if (!v) {
      snprintf(err, errlen, "missing top-level key \"%s\"", top_keys[i].key);
      return CAL_ESCHEMA;
    }
    if (json_is_null(v) && top_keys[i].nullable)
      continue;
    if (!type_ok(v, top_keys[i].type)) {
      snprintf(err, errlen, "\"%s\" must be %s%s, found %s", top_keys[i].key,
               type_name(top_keys[i].type), top_keys[i].nullable ? " or null" : "",
               type_name(json_typeof(v)));
      return CAL_ESCHEMA;
    }
  }
  check_ctx_t cx = {json_object(), err, errlen}, *c = &cx;
  int rc = cx.ids ? check_top_ranges(c, root) : BAD("out of memory");
  for (size_t i = 0; rc == 0 && i < sizeof sections / sizeof sections[0];
       i++) {
    const json_t *s = json_object_get(root, sections[i]);
    if (!s || json_is_null(s))
      continue;
    if (!json_is_object(s))
      rc = BAD("section \"%s\" must be an object", sections[i]);
    else
      rc = check_tree(c, sections[i], s);
  }
  json_decref(cx.ids);
  return rc;
}

/* Parse the text of a profile; NULL with err filled when it is not JSON. */
static json_t *parse_text(const char *path, const char *buf, size_t len,
                          char *err, size_t errlen) {
  json_error_t jerr;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root)
    snprintf(err, errlen, "%s: not valid JSON (line %d, column %d: %s)", path,
             jerr.line, jerr.column, jerr.text);
  return root;
}

/* Every string value of x made one line that acts on no terminal
 * (cal_esc.h: newlines, tabs and other controls as escapes), so that
 * what a reader prints from a profile, a table's cell or a verdict's
 * line, stays in its place.  0, or CAL_ENOMEM. */
static int one_line_strings(json_t *x) {
  const char *key;
  json_t *v;
  size_t i;
  if (json_is_object(x)) {
    json_object_foreach(x, key, v) if (one_line_strings(v) < 0) return CAL_ENOMEM;
  } else if (json_is_array(x)) {
    json_array_foreach(x, i, v) if (one_line_strings(v) < 0) return CAL_ENOMEM;
  } else if (json_is_string(x) &&
             cal_esc_needed(json_string_value(x), json_string_length(x), 0)) {
    size_t n = 0;
    char *e = cal_esc_text(json_string_value(x), json_string_length(x), 0, &n);
    int rc = e && json_string_setn(x, e, n) == 0 ? 0 : CAL_ENOMEM;
    free(e);
    return rc;
  }
  return 0;
}

int cal_profile_parse(const char *buf, size_t len, const char *path,
                      cal_profile_t **out, char *err, size_t errlen) {
  char *copy = NULL, why[256];
  json_t *root = NULL;
  cal_profile_t *p = NULL;
  int rc = CAL_EPARSE;
  if (!(root = parse_text(path, buf, len, err, errlen)))
    goto out;
  if ((rc = cal_profile_validate(root, why, sizeof why)) < 0) {
    snprintf(err, errlen, "%s: not a valid profile: %s", path, why);
    goto out;
  }
  rc = CAL_ENOMEM;
  p = calloc(1, sizeof *p);
  copy = strdup(path);
  if (!p || !copy || one_line_strings(root) < 0 ||
      cal_profile_view_build(root, &p->view) < 0) {
    snprintf(err, errlen, "out of memory reading %s", path);
    goto out;
  }
  p->root = root;
  p->path = copy;
  *out = p;
  root = NULL;
  p = NULL;
  copy = NULL;
  rc = 0;
out:
  free(copy);
  free(p);
  json_decref(root);
  return rc;
}

int cal_profile_read_text(const char *path, const char *what, char **buf,
                          size_t *len, char *err, size_t errlen) {
  char why[256];
  int rc = cal_file_read(path, CAL_PROFILE_MAX_BYTES, buf, len, why,
                         sizeof why);
  if (rc == CAL_EIO || rc == CAL_ESYS) {
    snprintf(err, errlen, "cannot %s %s%s: %s",
             rc == CAL_EIO ? "open" : "read", what, path, why);
    rc = CAL_EIO;
  } else if (rc < 0) {
    snprintf(err, errlen, "out of memory reading %s", path);
  }
  if (rc < 0) {
    free(*buf);
    *buf = NULL;
  }
  return rc;
}

int cal_profile_load(const char *path, cal_profile_t **out, char *err,
                     size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  int rc = cal_profile_read_text(path, "profile ", &buf, &len, err, errlen);
  if (rc == 0)
    rc = cal_profile_parse(buf ? buf : "", len, path, out, err, errlen);
  free(buf);
  return rc;
}

int cal_write_atomic(const char *path, const char *buf, size_t len,
                     char *err, size_t errlen) {
  return cal_out_file(path, buf, len, 0, err, errlen);
}

int cal_json_write_atomic(const json_t *root, const char *path, char *err,
                          size_t errlen) {
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  if (!text) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  size_t len = strlen(text);
  text[len] = '\0';
  /* one trailing newline, like a text file */
  char *withnl = realloc(text, len + 2);
  if (!withnl) {
    free(text);
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  withnl[len] = '\n';
  withnl[len + 1] = '\0';
  len++;
  /* jansson escapes control characters, not bidi overrides or C1 codes:
   * their \u escapes read the same and cannot act on a terminal */
  if (cal_esc_needed(withnl, len, CAL_ESC_KEEP_LINES)) {
    char *safe = cal_esc_text(withnl, len, CAL_ESC_KEEP_LINES, &len);
    free(withnl);
    if (!(withnl = safe)) {
      snprintf(err, errlen, "out of memory");
      return CAL_ENOMEM;
    }
  }
  int rc = cal_write_atomic(path, withnl, len, err, errlen);
  free(withnl);
  return rc;
}

static int each_point(const char *section, json_t *node, cal_point_visit_fn fn,
                      void *arg) {
  int rc;
  if (json_is_object(node)) {
    if (json_object_get(node, "id") && json_object_get(node, "status"))
      return fn(section, node, arg);
    const char *k;
    json_t *v;
    json_object_foreach(node, k, v) {
      if ((rc = each_point(section, v, fn, arg)) != 0)
        return rc;
    }
  } else if (json_is_array(node)) {
    size_t i;
    json_t *v;
    json_array_foreach(node, i, v) {
      if ((rc = each_point(section, v, fn, arg)) != 0)
        return rc;
    }
  }
  return 0;
}

int cal_profile_each_point(const json_t *root, cal_point_visit_fn fn,
                           void *arg) {
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
    json_t *s = json_object_get(root, sections[i]);
    if (s) {
      int rc = each_point(sections[i], s, fn, arg);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

json_t *cal_stats_json(const cal_summary_t *s, int unstable) {
  return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b}",
                   "n", (json_int_t)s->n, "median", s->median, "mean", s->mean,
                   "min", s->min, "max", s->max, "stddev", s->stddev, "mad",
                   s->mad, "cv", s->cv, "ci_low", s->ci_low, "ci_high",
                   s->ci_high, "ci_level", s->ci_level, "unstable", unstable);
}

double cal_json_num(const json_t *o, const char *k, double dflt) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *cal_json_str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}
