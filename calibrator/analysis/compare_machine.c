/* What a comparison states besides its points: the identity keys that
 * differ between the profiles, the machine's and the environment's apart
 * (profile/identity.h: compared and written as the JSON values they are),
 * and the top-level figures of both sides, from their views (see
 * compare.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_vec.h"
#include "compare.h"
#include "compare_internal.h"
#include "identity.h"
#include "profile.h"
#include "view.h"

typedef struct diffs {
  cal_compare_diff_t *v;
  size_t n, cap;
} diffs_t;

/* Append {key, base, new} unless an equal entry is there. */
static int add_diff(diffs_t *d, const char *key, const json_t *a,
                    const json_t *b, const char *where) {
  for (size_t i = 0; i < d->n; i++)
    if (strcmp(d->v[i].key, key) == 0 &&
        json_equal((json_t *)d->v[i].base, (json_t *)a) &&
        json_equal((json_t *)d->v[i].newv, (json_t *)b))
      return 0;
  if (cal_grow(&d->v, d->n, &d->cap, sizeof *d->v, 16) < 0)
    return CAL_ENOMEM;
  d->v[d->n++] = (cal_compare_diff_t){key, a, b, where};
  return 0;
}

/* Differences of one profile against the reference into d[0] (the
 * machine) and d[1] (the environment). */
static int diff_into(diffs_t d[2], const json_t *ref, const json_t *p,
                     const char *where) {
  for (size_t i = 0; i < CAL_NIDENTITY_KEYS; i++) {
    const json_t *a = cal_profile_identity(ref, i);
    const json_t *b = cal_profile_identity(p, i);
    if (!a && !b)
      continue;
    if (!a || !b) {
      /* a machine key one side lacks: not known to be the same machine;
       * an environment key one side lacks came with a newer tool */
      if (cal_identity_is_environment(i))
        continue;
      a = a ? a : json_null();
      b = b ? b : json_null();
    } else if (cal_identity_same(i, a, b)) {
      continue;
    }
    if (add_diff(&d[cal_identity_is_environment(i)], cal_identity_keys[i], a,
                 b, where))
      return CAL_ENOMEM;
  }
  return 0;
}

/* Hand d's lists to the caller, or free them on failure. */
static int diffs_out(int rc, diffs_t d[2], cal_compare_diff_t **m, size_t *nm,
                     cal_compare_diff_t **e, size_t *ne) {
  if (rc < 0) {
    free(d[0].v);
    free(d[1].v);
    d[0] = d[1] = (diffs_t){0};
  }
  *m = d[0].v;
  *nm = d[0].n;
  if (e) {
    *e = d[1].v;
    *ne = d[1].n;
  } else {
    free(d[1].v);
  }
  return rc;
}

int cal_compare_machine_diff(const json_t *base, const json_t *newp,
                             cal_compare_diff_t **out, size_t *n) {
  diffs_t d[2] = {{0}};
  return diffs_out(diff_into(d, base, newp, NULL), d, out, n, NULL, NULL);
}

int cal_compare_environment_diff(const json_t *base, const json_t *newp,
                                 cal_compare_diff_t **out, size_t *n) {
  diffs_t d[2] = {{0}};
  cal_compare_diff_t *m;
  size_t nm;
  int rc = diffs_out(diff_into(d, base, newp, NULL), d, &m, &nm, out, n);
  free(m);
  return rc;
}

int cal_compare_sides_diff(const cal_compare_side_t *b,
                           const cal_compare_side_t *n, cal_comparison_t *c) {
  diffs_t d[2] = {{0}};
  const json_t *ref = b->runs[0];
  int rc = 0;
  for (size_t s = 0; s < 2 && !rc; s++) {
    const cal_compare_side_t *side = s ? n : b;
    for (size_t i = s ? 0 : 1; i < side->n && !rc; i++)
      rc = diff_into(d, ref, side->runs[i],
                     side->names ? side->names[i] : NULL);
  }
  return diffs_out(rc, d, &c->diffs, &c->ndiffs, &c->env_diffs,
                   &c->nenv_diffs);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cal_compare_median(double *v, size_t k) {
  if (!k)
    return NAN;
  qsort(v, k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* Median of a top-level figure over the runs of a side; NAN when none. */
static double side_figure(const cal_profile_view_t *const *runs, size_t n,
                          const char *key) {
  double v[64];
  size_t k = 0;
  for (size_t i = 0; i < n && k < 64; i++) {
    const cal_vnum_t *x = cal_profile_view_figure(runs[i], key);
    if (x && isfinite(x->v))
      v[k++] = x->v;
  }
  return cal_compare_median(v, k);
}

int cal_compare_top_level(const cal_profile_view_t *const *b, size_t nb,
                          const cal_profile_view_t *const *n, size_t nn,
                          cal_comparison_t *c) {
  c->tops = calloc(CAL_NTOP_FIGURES, sizeof *c->tops);
  if (!c->tops)
    return CAL_ENOMEM;
  for (size_t i = 0; i < CAL_NTOP_FIGURES; i++) {
    double x = side_figure(b, nb, cal_top_figures[i].key);
    double y = side_figure(n, nn, cal_top_figures[i].key);
    if (!isfinite(x) || !isfinite(y))
      continue;
    double r = x != 0 ? y / x : NAN;
    c->tops[c->ntops++] = (cal_compare_top_t){
        cal_top_figures[i].key, x, y, isfinite(r) ? r : NAN,
        cal_top_figures[i].higher_is_better};
  }
  return 0;
}
