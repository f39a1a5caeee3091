/* The points of one side of a comparison: every selected id of its runs,
 * in the order first seen, with its point in each run (see
 * compare_internal.h). */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "compare_internal.h"
#include "view.h"

/* Whether id matches one of the comma-separated globs (all when NULL). */
static int id_selected(const char *filter, const char *id) {
  if (!filter || !*filter)
    return 1;
  char glob[256];
  for (const char *p = filter; *p;) {
    size_t len = strcspn(p, ",");
    if (len && len < sizeof glob) {
      memcpy(glob, p, len);
      glob[len] = '\0';
      if (fnmatch(glob, id, 0) == 0)
        return 1;
    }
    p += len + (p[len] == ',');
  }
  return 0;
}

/* FNV-1a of a string. */
static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of id in the map: where it is, or the empty slot it would go
 * to. */
static size_t slot(const cal_side_points_t *s, const char *id) {
  size_t i = (size_t)hash(id) & (s->nslots - 1);
  while (s->slots[i] && strcmp(s->ids[s->slots[i] - 1], id))
    i = (i + 1) & (s->nslots - 1);
  return i;
}

long cal_side_points_find(const cal_side_points_t *s, const char *id) {
  size_t k = s->slots[slot(s, id)];
  return k ? (long)k - 1 : -1;
}

/* First pass: every selected id into the map and ids[], in the order
 * first seen.  CAL_ENOMEM. */
static int index_ids(cal_side_points_t *s, const char *filter) {
  size_t total = 0;
  for (size_t r = 0; r < s->nruns; r++)
    total += s->views[r]->npoints;
  for (s->nslots = 16; s->nslots < 2 * total; s->nslots *= 2)
    ;
  s->slots = calloc(s->nslots, sizeof *s->slots);
  s->ids = calloc(total + 1, sizeof *s->ids);
  if (!s->slots || !s->ids)
    return CAL_ENOMEM;
  for (size_t r = 0; r < s->nruns; r++)
    for (size_t k = 0; k < s->views[r]->npoints; k++) {
      const char *id = s->views[r]->points[k].id;
      if (!id || !id_selected(filter, id))
        continue;
      size_t i = slot(s, id);
      if (!s->slots[i]) {
        s->ids[s->nids++] = id;
        s->slots[i] = s->nids;
      }
    }
  return 0;
}

/* Second pass: each run's points into at[]; *dup gets the first id a run
 * repeats, *run that run.  CAL_ENOMEM. */
static int place_points(cal_side_points_t *s, const char *filter,
                        const char **dup, size_t *run) {
  s->at = calloc(s->nids * s->nruns + 1, sizeof *s->at);
  if (!s->at)
    return CAL_ENOMEM;
  for (size_t r = 0; r < s->nruns; r++)
    for (size_t k = 0; k < s->views[r]->npoints; k++) {
      const cal_vpoint_t *pt = &s->views[r]->points[k];
      if (!pt->id || !id_selected(filter, pt->id))
        continue;
      const cal_vpoint_t **at =
          &s->at[(size_t)cal_side_points_find(s, pt->id) * s->nruns + r];
      if (*at) {
        *dup = pt->id;
        *run = r;
        return 0;
      }
      *at = pt;
    }
  return 0;
}

/* The views of a side's runs: given, or built from the trees. */
static int side_views(const cal_compare_side_t *side, cal_side_points_t *s) {
  s->views = calloc(side->n, sizeof *s->views);
  s->built = side->views ? NULL : calloc(side->n, sizeof *s->built);
  if (!s->views || (!side->views && !s->built))
    return CAL_ENOMEM;
  for (size_t r = 0; r < side->n; r++) {
    if (side->views)
      s->views[r] = side->views[r];
    else if (cal_profile_view_build(side->runs[r], &s->built[r]) < 0)
      return CAL_ENOMEM;
    else
      s->views[r] = s->built[r];
  }
  return 0;
}

int cal_side_points_load(const cal_compare_side_t *side, const char *filter,
                         cal_side_points_t *s, char *err, size_t errlen) {
  const char *dup = NULL;
  size_t r = 0;
  int rc;
  s->nruns = side->n;
  if ((rc = side_views(side, s)) < 0 || (rc = index_ids(s, filter)) < 0 ||
      (rc = place_points(s, filter, &dup, &r)) < 0)
    return rc;
  if (dup) {
    snprintf(err, errlen, "%s: point id \"%s\" appears twice",
             side->names && side->names[r] ? side->names[r] : side->label,
             dup);
    return CAL_EINVAL;
  }
  return 0;
}

void cal_side_points_clear(cal_side_points_t *s) {
  for (size_t r = 0; s->built && r < s->nruns; r++)
    cal_profile_view_free(s->built[r]);
  free(s->built);
  free(s->views);
  free(s->slots);
  free(s->ids);
  free(s->at);
  *s = (cal_side_points_t){0};
}
