/* Reading a tree into views (view.h): the helpers the view builders
 * share, and the arena a view's memory lives in.  Private to profile/. */
#ifndef CAL_VIEW_READ_H
#define CAL_VIEW_READ_H

#include <jansson.h>
#include <stddef.h>

#include "view.h"

/* Every block a view owns, freed at once; failed once an allocation
 * failed (the builders go on and the caller reports CAL_ENOMEM). */
typedef struct cal_varena {
  struct cal_vblock *head;
  int failed;
} cal_varena_t;

cal_varena_t *cal_varena_new(void);
/* n zeroed elements of size bytes (NULL for n 0 or on failure). */
void *cal_varena_alloc(cal_varena_t *a, size_t n, size_t size);
void cal_varena_free(cal_varena_t *a);
/* A new arena into *a and its first object (the view), zeroed; NULL with
 * nothing left allocated on failure. */
void *cal_varena_first(size_t size, cal_varena_t **a);
/* The end of a build: view, or NULL with the arena freed when an
 * allocation failed on the way. */
void *cal_varena_finish(cal_varena_t *a, void *view);

cal_vnum_t cal_vnum_val(const json_t *v);
cal_vnum_t cal_vnum_of(const json_t *o, const char *k);
const char *cal_vstr_of(const json_t *o, const char *k);
int cal_vbool_of(const json_t *o, const char *k);
cal_vstats_t cal_vstats_of(const json_t *o, const char *k);
cal_vsamples_t cal_vsamples_of(cal_varena_t *a, const json_t *o,
                               const char *k);
cal_vstrings_t cal_vstrings_of(cal_varena_t *a, const json_t *o,
                               const char *k);
/* The members of the object under k of o. */
cal_vfields_t cal_vfields_of(cal_varena_t *a, const json_t *o, const char *k);
/* The scalar members of obj itself. */
cal_vfields_t cal_vfields_members(cal_varena_t *a, const json_t *obj);
/* One number per element of the array under k. */
cal_vnum_t *cal_vnums_of(cal_varena_t *a, const json_t *o, const char *k,
                         size_t *n);

/* A table of members read into a struct of type CAL_VT (#define CAL_VT
 * before a table, #undef it after): the member key of the object, or of
 * its member object `in` (NULL: the object itself), goes to the field at
 * offset off, as a number, a string or a boolean. */
enum { CAL_VK_NUM, CAL_VK_STR, CAL_VK_BOOL, CAL_VK_HAS };
typedef struct cal_vkey {
  const char *in, *key;
  size_t off;
  int kind;
} cal_vkey_t;
/* The entry of field f of the member object in, read from its key `key`. */
#define CAL_VKEY(in, key, f, kind) {in, key, offsetof(CAL_VT, f), kind},
/* The entries of field f read from the key named as the field: a number,
 * a string, a boolean. */
#define CAL_VN(f) CAL_VKEY(NULL, #f, f, CAL_VK_NUM)
#define CAL_VS(f) CAL_VKEY(NULL, #f, f, CAL_VK_STR)
#define CAL_VB(f) CAL_VKEY(NULL, #f, f, CAL_VK_BOOL)
/* The same for a nested object: between "#define CAL_VIN s" and "#undef
 * CAL_VIN" in a table, the field f of the struct member s read from the
 * key f of the object under key s. */
#define CAL_VKEY_IN_(s, f, kind) CAL_VKEY(#s, #f, s.f, kind)
#define CAL_VKEY_IN(s, f, kind) CAL_VKEY_IN_(s, f, kind)
#define CAL_VNI(f) CAL_VKEY_IN(CAL_VIN, f, CAL_VK_NUM)
#define CAL_VSI(f) CAL_VKEY_IN(CAL_VIN, f, CAL_VK_STR)
#define CAL_VBI(f) CAL_VKEY_IN(CAL_VIN, f, CAL_VK_BOOL)
/* The int s.has: whether the key s holds an object. */
#define CAL_VHAS(s) CAL_VKEY(NULL, #s, s.has, CAL_VK_HAS)
void cal_vread(void *dst, const cal_vkey_t *keys, size_t n, const json_t *o);
#define CAL_VREAD(dst, keys, o) \
  cal_vread(dst, keys, sizeof(keys) / sizeof((keys)[0]), o)

/* tool{name, version, git} of a profile or a fleet profile. */
void cal_vtool_read(cal_vtool_t *t, const json_t *o);

/* Building one profile view: the points found so far and their trees. */
struct cal_vbuild {
  cal_varena_t *a;
  cal_profile_view_t *v;
  const json_t **nodes; /* nodes[i] is the tree of v->points[i] */
  struct cal_vnode_at *sorted; /* nodes by address, made when needed */
};
typedef struct cal_vbuild cal_vbuild_t;

/* How the elements of a list are read (cal_vread_each): each element, of
 * size bytes, by its key table; in an object whose keys are data (dtype,
 * level, mode), the member's key into the string at key_off
 * (CAL_VNO_KEY: the list is an array); then what more (NULL: nothing). */
#define CAL_VNO_KEY ((size_t)-1)
typedef struct cal_velems {
  size_t size;
  const cal_vkey_t *keys;
  size_t nkeys, key_off;
  void (*more)(cal_vbuild_t *b, void *dst, const json_t *o);
} cal_velems_t;
#define CAL_VELEMS(T, keys, key_off, more) \
  {sizeof(T), keys, sizeof keys / sizeof keys[0], key_off, more}
/* The members of the object (keyed) or the elements of the array under k
 * of o, read as e says into a new array; *count of them (none when the
 * key holds something else). */
void *cal_vread_each(cal_vbuild_t *b, const json_t *o, const char *k,
                     const cal_velems_t *e, size_t *count);

/* Every element of the array under k of o: the view's own entry for a
 * point in its list, else one read here (for section). */
cal_vpoints_t cal_vpoints_of(cal_vbuild_t *b, const char *section,
                             const json_t *o, const char *k);
/* Fill one point from its tree. */
void cal_vpoint_read(cal_varena_t *a, cal_vpoint_t *p, const char *section,
                     const json_t *pt);

#endif
