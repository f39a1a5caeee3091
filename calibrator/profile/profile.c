#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_file.h"

const cal_top_figure_t cal_top_figures[CAL_NTOP_FIGURES] = {
    {"gflops", 1},
    {"gflops_per_core", 1},
    {"throughput", 1},
    {"latency_ms", 0},
};

void cal_profile_free(cal_profile_t *p) {
  if (!p)
    return;
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

/* A point: id string, status, and for "ok" points a metric whose median and
 * finite samples are present. */
static int check_point(const char *where, const json_t *pt, char *err,
                       size_t errlen) {
  const char *id = json_string_value(json_object_get(pt, "id"));
  const char *status = json_string_value(json_object_get(pt, "status"));
  const char *metric = json_string_value(json_object_get(pt, "metric"));
  if (!id || !*id) {
    snprintf(err, errlen, "%s: a point has no \"id\" string", where);
    return CAL_ESCHEMA;
  }
  if (!status || (strcmp(status, "ok") && strcmp(status, "skipped") &&
                  strcmp(status, "failed") && strcmp(status, "contaminated"))) {
    snprintf(err, errlen, "point %s: \"status\" must be ok, skipped, failed "
             "or contaminated", id);
    return CAL_ESCHEMA;
  }
  if (strcmp(status, "ok") != 0)
    return 0;
  if (!metric || !*metric) {
    snprintf(err, errlen, "point %s: no \"metric\" string", id);
    return CAL_ESCHEMA;
  }
  char key[96];
  snprintf(key, sizeof key, "samples_%s", metric);
  const json_t *samples = json_object_get(pt, key);
  if (!json_is_array(samples) || json_array_size(samples) == 0) {
    snprintf(err, errlen, "point %s: \"%s\" must be a non-empty array", id, key);
    return CAL_ESCHEMA;
  }
  size_t i;
  const json_t *v;
  json_array_foreach(samples, i, v) {
    if (!json_is_number(v) || !(json_number_value(v) >= 0)) {
      snprintf(err, errlen, "point %s: %s[%zu] is not a non-negative number",
               id, key, i);
      return CAL_ESCHEMA;
    }
  }
  if (!json_is_number(json_object_get(pt, metric))) {
    snprintf(err, errlen, "point %s: \"%s\" must be a number", id, metric);
    return CAL_ESCHEMA;
  }
  if (!json_is_object(json_object_get(pt, "stats"))) {
    snprintf(err, errlen, "point %s: \"stats\" must be an object", id);
    return CAL_ESCHEMA;
  }
  return 0;
}

/* Recursively validate every object that looks like a point ("id"). */
static int check_tree(const char *where, const json_t *node, char *err,
                      size_t errlen) {
  int rc;
  if (json_is_object(node)) {
    if (json_object_get(node, "id"))
      if ((rc = check_point(where, node, err, errlen)) < 0)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)node, k, v) {
      if (strcmp(k, "id") && (rc = check_tree(where, v, err, errlen)) < 0)
        return rc;
    }
  } else if (json_is_array(node)) {
    size_t i;
    json_t *v;
    json_array_foreach(node, i, v) {
      if ((rc = check_tree(where, v, err, errlen)) < 0)
        return rc;
    }
  }
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
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
    const json_t *s = json_object_get(root, sections[i]);
    if (!s || json_is_null(s))
      continue;
    if (!json_is_object(s)) {
      snprintf(err, errlen, "section \"%s\" must be an object", sections[i]);
      return CAL_ESCHEMA;
    }
    int rc = check_tree(sections[i], s, err, errlen);
    if (rc < 0)
      return rc;
  }
  return 0;
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

int cal_profile_load(const char *path, cal_profile_t **out, char *err,
                     size_t errlen) {
  char *buf = NULL, *copy = NULL, why[256];
  size_t len = 0;
  json_t *root = NULL;
  cal_profile_t *p = NULL;
  int rc = cal_file_read(path, 0, &buf, &len, why, sizeof why);
  if (rc == CAL_EIO) {
    snprintf(err, errlen, "cannot open profile %s: %s", path, why);
    goto out;
  }
  if (rc == CAL_ENOMEM) {
    snprintf(err, errlen, "out of memory reading %s", path);
    goto out;
  }
  /* a file that opens but cannot be read (a directory) reads as empty */
  rc = CAL_EPARSE;
  if (!(root = parse_text(path, buf ? buf : "", len, err, errlen)))
    goto out;
  if ((rc = cal_profile_validate(root, why, sizeof why)) < 0) {
    snprintf(err, errlen, "%s: not a valid profile: %s", path, why);
    goto out;
  }
  rc = CAL_ENOMEM;
  p = calloc(1, sizeof *p);
  copy = strdup(path);
  if (!p || !copy) {
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
  free(buf);
  free(copy);
  free(p);
  json_decref(root);
  return rc;
}

int cal_write_atomic(const char *path, const char *buf, size_t len,
                     char *err, size_t errlen) {
  if (strcmp(path, "-") == 0) {
    if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
      snprintf(err, errlen, "cannot write to standard output");
      return CAL_EIO;
    }
    return 0;
  }
  size_t tlen = strlen(path) + 16;
  char *tmp = malloc(tlen);
  FILE *f = NULL;
  int fd = -1;
  if (!tmp) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  snprintf(tmp, tlen, "%s.tmp.XXXXXX", path);
  fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    free(tmp);
    return CAL_EIO;
  }
  fchmod(fd, 0644);
  f = fdopen(fd, "w");
  if (!f)
    goto fail;
  fd = -1; /* owned by f from here */
  if (fwrite(buf, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0)
    goto fail;
  int closed = fclose(f);
  f = NULL;
  if (closed != 0 || rename(tmp, path) != 0)
    goto fail;
  free(tmp);
  return 0;
fail:
  snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
  if (f)
    fclose(f);
  if (fd >= 0)
    close(fd);
  unlink(tmp);
  free(tmp);
  return CAL_EIO;
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
  int rc = cal_write_atomic(path, withnl, len + 1, err, errlen);
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
