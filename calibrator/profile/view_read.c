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

#define CAL_VT cal_vstats_t
static const cal_vkey_t stats_keys[] = {
    CAL_VN(n) CAL_VN(median) CAL_VN(mean) CAL_VN(min) CAL_VN(max) CAL_VN(stddev)
    CAL_VN(mad) CAL_VN(cv) CAL_VN(ci_low) CAL_VN(ci_high) CAL_VN(ci_level)
    CAL_VB(unstable)
};
#undef CAL_VT

cal_vstats_t cal_vstats_of(const json_t *o, const char *k) {
  const json_t *s = json_object_get(o, k);
  cal_vstats_t st = {.has = json_is_object(s)};
  CAL_VREAD(&st, stats_keys, s);
  return st;
}

/* Every element of the array under k of o, through put, into a new array
 * of size-byte elements: *n of them (none when absent or empty). */
typedef void (*put_fn)(void *dst, const json_t *x);
static void *each_of(cal_varena_t *a, const json_t *o, const char *k,
                     size_t size, put_fn put, size_t *n) {
  const json_t *arr = json_object_get(o, k), *x;
  char *r = cal_varena_alloc(a, json_array_size(arr), size);
  size_t i;
  *n = r ? json_array_size(arr) : 0;
  if (r)
    json_array_foreach(arr, i, x) put(r + i * size, x);
  return r;
}

static void put_real(void *d, const json_t *x) {
  *(double *)d = json_is_number(x) ? json_number_value(x) : NAN;
}
static void put_str(void *d, const json_t *x) {
  *(const char **)d = json_string_value(x);
}
static void put_num(void *d, const json_t *x) {
  *(cal_vnum_t *)d = cal_vnum_val(x);
}

cal_vsamples_t cal_vsamples_of(cal_varena_t *a, const json_t *o,
                               const char *k) {
  cal_vsamples_t s = {NULL, 0, json_is_array(json_object_get(o, k))};
  s.v = each_of(a, o, k, sizeof *s.v, put_real, &s.n);
  return s;
}

cal_vstrings_t cal_vstrings_of(cal_varena_t *a, const json_t *o,
                               const char *k) {
  cal_vstrings_t s = {NULL, 0, json_is_array(json_object_get(o, k))};
  s.s = each_of(a, o, k, sizeof *s.s, put_str, &s.n);
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
  return each_of(a, o, k, sizeof(cal_vnum_t), put_num, n);
}

void cal_vread(void *dst, const cal_vkey_t *keys, size_t n, const json_t *o) {
  for (size_t i = 0; i < n; i++) {
    char *at = (char *)dst + keys[i].off;
    const json_t *src = keys[i].in ? json_object_get(o, keys[i].in) : o;
    if (keys[i].kind == CAL_VK_NUM)
      *(cal_vnum_t *)at = cal_vnum_of(src, keys[i].key);
    else if (keys[i].kind == CAL_VK_STR)
      *(const char **)at = cal_vstr_of(src, keys[i].key);
    else if (keys[i].kind == CAL_VK_BOOL)
      *(int *)at = cal_vbool_of(src, keys[i].key);
    else
      *(int *)at = json_is_object(json_object_get(src, keys[i].key));
  }
}

#define CAL_VT cal_vtool_t
static const cal_vkey_t tool_keys[] = {
    CAL_VS(name) CAL_VS(version) CAL_VS(git)
};
#undef CAL_VT

void cal_vtool_read(cal_vtool_t *t, const json_t *o) {
  CAL_VREAD(t, tool_keys, o);
}

static void read_elem(cal_vbuild_t *b, const cal_velems_t *e, char *dst,
                      const char *key, const json_t *x) {
  cal_vread(dst, e->keys, e->nkeys, x);
  if (e->key_off != CAL_VNO_KEY)
    *(const char **)(dst + e->key_off) = key;
  if (e->more)
    e->more(b, dst, x);
}

void *cal_vread_each(cal_vbuild_t *b, const json_t *o, const char *k,
                     const cal_velems_t *e, size_t *count) {
  const json_t *c = json_object_get(o, k), *x;
  int keyed = e->key_off != CAL_VNO_KEY;
  size_t n = keyed ? json_object_size(c) : json_array_size(c);
  char *dst = cal_varena_alloc(b->a, n, e->size);
  const char *key;
  size_t i;
  *count = 0;
  if (!dst)
    return NULL;
  if (keyed)
    json_object_foreach((json_t *)c, key, x)
      read_elem(b, e, dst + e->size * (*count)++, key, x);
  else
    json_array_foreach(c, i, x)
      read_elem(b, e, dst + e->size * (*count)++, NULL, x);
  return dst;
}
