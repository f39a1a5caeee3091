/* The shared readers of the view builders (view_read.h). */
#include "view_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cal_vblock {
  struct cal_vblock *next;
  max_align_t data[];
};

cal_varena_t *cal_varena_new(void) { return calloc(1, sizeof(cal_varena_t)); }

void *cal_varena_alloc(cal_varena_t *a, size_t n, size_t size) {
  if (n == 0 || size == 0)
    return NULL;
  if (n > (SIZE_MAX - sizeof(struct cal_vblock)) / size) {
    a->failed = 1;
    return NULL;
  }
  struct cal_vblock *b = calloc(1, sizeof *b + n * size);
  if (!b) {
    a->failed = 1;
    return NULL;
  }
  b->next = a->head;
  a->head = b;
  return b->data;
}

void *cal_varena_first(size_t size, cal_varena_t **a) {
  void *v = (*a = cal_varena_new()) ? cal_varena_alloc(*a, 1, size) : NULL;
  if (!v) {
    cal_varena_free(*a);
    *a = NULL;
  }
  return v;
}

void *cal_varena_finish(cal_varena_t *a, void *view) {
  if (!a->failed)
    return view;
  cal_varena_free(a);
  return NULL;
}

void cal_varena_free(cal_varena_t *a) {
  if (!a)
    return;
  for (struct cal_vblock *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}

json_t *cal_vnum_json(const cal_vnum_t *n) {
  if (!n->has)
    return json_null();
  return n->is_int ? json_integer((json_int_t)n->i) : json_real(n->v);
}

cal_vnum_t cal_vnum_val(const json_t *v) {
  cal_vnum_t n = {NAN, 0, 0, 0};
  if (json_is_number(v)) {
    n.v = json_number_value(v);
    n.has = 1;
  }
  if (json_is_integer(v)) {
    n.i = (int64_t)json_integer_value(v);
    n.is_int = 1;
  }
  return n;
}

cal_vnum_t cal_vnum_of(const json_t *o, const char *k) {
  return cal_vnum_val(json_object_get(o, k));
}

const char *cal_vstr_of(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

int cal_vbool_of(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_boolean(v) ? json_is_true(v) : CAL_VABSENT;
}

#define S cal_vstats_t
static const cal_vkey_t stats_keys[] = {
    CAL_VNUM(S, n),      CAL_VNUM(S, median),  CAL_VNUM(S, mean),
    CAL_VNUM(S, min),    CAL_VNUM(S, max),     CAL_VNUM(S, stddev),
    CAL_VNUM(S, mad),    CAL_VNUM(S, cv),      CAL_VNUM(S, ci_low),
    CAL_VNUM(S, ci_high), CAL_VNUM(S, ci_level), CAL_VBOOL(S, unstable),
};
#undef S

cal_vstats_t cal_vstats_of(const json_t *o, const char *k) {
  const json_t *s = json_object_get(o, k);
  cal_vstats_t st = {.has = json_is_object(s)};
  CAL_VREAD(&st, stats_keys, s);
  return st;
}

cal_vsamples_t cal_vsamples_of(cal_varena_t *a, const json_t *o,
                               const char *k) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vsamples_t s = {NULL, 0, json_is_array(arr)};
  size_t i;
  if (!s.has || !(s.v = cal_varena_alloc(a, json_array_size(arr), sizeof *s.v)))
    return s;
  s.n = json_array_size(arr);
  json_array_foreach(arr, i, x) s.v[i] = json_is_number(x) ? json_number_value(x) : NAN;
  return s;
}

cal_vstrings_t cal_vstrings_of(cal_varena_t *a, const json_t *o,
                               const char *k) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vstrings_t s = {NULL, 0, json_is_array(arr)};
  size_t i;
  if (!s.has || !(s.s = cal_varena_alloc(a, json_array_size(arr), sizeof *s.s)))
    return s;
  s.n = json_array_size(arr);
  json_array_foreach(arr, i, x) s.s[i] = json_string_value(x);
  return s;
}

static void field_set(cal_vfield_t *f, const char *key, const json_t *v) {
  f->key = key;
  f->num = cal_vnum_val(v);
  f->str = json_string_value(v);
  f->boolean = json_is_boolean(v) ? json_is_true(v) : CAL_VABSENT;
  f->is_null = json_is_null(v);
}

cal_vfields_t cal_vfields_members(cal_varena_t *a, const json_t *obj) {
  cal_vfields_t fs = {NULL, 0};
  const char *key;
  json_t *v;
  if (!json_is_object(obj) ||
      !(fs.f = cal_varena_alloc(a, json_object_size(obj), sizeof *fs.f)))
    return fs;
  json_object_foreach((json_t *)obj, key, v) field_set(&fs.f[fs.n++], key, v);
  return fs;
}

cal_vfields_t cal_vfields_of(cal_varena_t *a, const json_t *o, const char *k) {
  return cal_vfields_members(a, json_object_get(o, k));
}

const cal_vfield_t *cal_vfields_get(const cal_vfields_t *fs, const char *key) {
  for (size_t i = 0; key && i < fs->n; i++)
    if (strcmp(fs->f[i].key, key) == 0)
      return &fs->f[i];
  return NULL;
}

cal_vnum_t *cal_vnums_of(cal_varena_t *a, const json_t *o, const char *k,
                         size_t *n) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vnum_t *r = cal_varena_alloc(a, json_array_size(arr), sizeof *r);
  size_t i;
  *n = r ? json_array_size(arr) : 0;
  if (r)
    json_array_foreach(arr, i, x) r[i] = cal_vnum_val(x);
  return r;
}

void cal_vread(void *dst, const cal_vkey_t *keys, size_t n, const json_t *o) {
  for (size_t i = 0; i < n; i++) {
    char *at = (char *)dst + keys[i].off;
    if (keys[i].kind == CAL_VK_NUM)
      *(cal_vnum_t *)at = cal_vnum_of(o, keys[i].key);
    else if (keys[i].kind == CAL_VK_STR)
      *(const char **)at = cal_vstr_of(o, keys[i].key);
    else
      *(int *)at = cal_vbool_of(o, keys[i].key);
  }
}

#define T cal_vtool_t
static const cal_vkey_t tool_keys[] = {
    CAL_VSTR(T, name), CAL_VSTR(T, version), CAL_VSTR(T, git),
};
#undef T

void cal_vtool_read(cal_vtool_t *t, const json_t *o) {
  CAL_VREAD(t, tool_keys, o);
}
