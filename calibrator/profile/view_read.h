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

/* A table of members read into a struct: member key of the object goes
 * to the field at offset off, as a number, a string or a boolean. */
enum { CAL_VK_NUM, CAL_VK_STR, CAL_VK_BOOL };
typedef struct cal_vkey {
  const char *key;
  size_t off;
  int kind;
} cal_vkey_t;
/* Entries for field f of struct type T read from the member named key
 * (the _K forms) or named as the field. */
#define CAL_VNUM_K(T, f, key) {key, offsetof(T, f), CAL_VK_NUM}
#define CAL_VSTR_K(T, f, key) {key, offsetof(T, f), CAL_VK_STR}
#define CAL_VBOOL_K(T, f, key) {key, offsetof(T, f), CAL_VK_BOOL}
#define CAL_VNUM(T, f) CAL_VNUM_K(T, f, #f)
#define CAL_VSTR(T, f) CAL_VSTR_K(T, f, #f)
#define CAL_VBOOL(T, f) CAL_VBOOL_K(T, f, #f)
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
};
typedef struct cal_vbuild cal_vbuild_t;

/* Every element of the array under k of o: the view's own entry for a
 * point in its list, else one read here (for section). */
cal_vpoints_t cal_vpoints_of(cal_vbuild_t *b, const char *section,
                             const json_t *o, const char *k);
/* Fill one point from its tree. */
void cal_vpoint_read(cal_varena_t *a, cal_vpoint_t *p, const char *section,
                     const json_t *pt);

#endif
