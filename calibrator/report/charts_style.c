/* How the series of a chart are told apart: a marker per (mark, profile),
 * open or filled, a dash per profile, and no two series of a chart with
 * the same colour and marker; and the shared x positions of the charts
 * whose x axis is a list of names (attention shapes, peak kernels). */
#include "charts_internal.h"

#include <stdlib.h>
#include <string.h>

/* gnuplot point types with an open (even) and a filled (odd, +1) form:
 * circle, square, triangle, diamond, triangle down, pentagon; then the
 * plus and the cross, which have no filled form.  The star (3) is kept
 * for the roofline's ridge points. */
static const int shapes[] = {6, 4, 8, 12, 10, 14};
#define NSHAPES (sizeof shapes / sizeof shapes[0])
static const int every_pt[] = {7, 5, 9, 13, 11, 15, 6, 4, 8, 12, 10, 14,
                               1, 2};
#define NPT (sizeof every_pt / sizeof every_pt[0])
#define NCOLOURS 8 /* the palette of gnuplot.c */

int cal_chart_profile_dt(size_t profile) {
  static const int dashes[] = {1, 2, 4, 5, 3};
  return dashes[profile % (sizeof dashes / sizeof dashes[0])];
}

int cal_chart_mark_dt(size_t profile) {
  return 11 + (int)(profile % 3);
}

/* Whether a series before i has the colour and marker of series i. */
static int taken(const cal_gp_set_t *set, size_t i, int lt, int pt) {
  for (size_t j = 0; j < i; j++)
    if (set->s[j].lt == lt && set->s[j].pt == pt)
      return 1;
  return 0;
}

/* Series i, which chose no marker, moved off a colour and marker an
 * earlier series has: the next free marker of its colour, else the
 * next colour. */
static void resolve(cal_gp_set_t *set, size_t i) {
  cal_gp_series_t *s = &set->s[i];
  for (int tries = 0; tries < NCOLOURS && taken(set, i, s->lt, s->pt);
       tries++) {
    for (size_t k = 0; k < NPT; k++)
      if (!taken(set, i, s->lt, every_pt[k])) {
        s->pt = every_pt[k];
        return;
      }
    s->lt = s->lt % NCOLOURS + 1;
  }
}

void cal_chart_style(cal_gp_set_t *set) {
  /* group[i]: the (mark, profile) group of series i, numbered in order of
   * appearance among the series that choose no marker of their own */
  size_t *group = malloc((set->n ? set->n : 1) * sizeof *group), ngroups = 0;
  for (size_t i = 0; i < set->n; i++) {
    cal_gp_series_t *s = &set->s[i];
    if (!s->dt)
      s->dt = cal_chart_profile_dt(s->profile);
    if (!s->lt)
      s->lt = (int)(i % NCOLOURS) + 1;
    if (s->marker == CAL_GP_OWN_PT || !group)
      continue;
    size_t j, g = ngroups;
    for (j = 0; j < i; j++)
      if (set->s[j].marker != CAL_GP_OWN_PT &&
          set->s[j].profile == s->profile && !strcmp(set->s[j].mark, s->mark))
        break;
    if (j < i)
      g = group[j];
    else
      ngroups++;
    group[i] = g;
    if (g < NSHAPES)
      s->pt = shapes[g] + (s->marker == CAL_GP_FILLED);
    else
      s->pt = every_pt[NSHAPES * 2 + (g - NSHAPES) % (NPT - NSHAPES * 2)];
    resolve(set, i);
  }
  free(group);
}

/* ---- names on the x axis ---- */

typedef struct slot_ref {
  cal_gp_row_t *row;
  size_t order; /* the row's place over all series */
} slot_ref_t;

static int by_text(const void *a, const void *b) {
  const slot_ref_t *x = a, *y = b;
  int c = strcmp(x->row->text, y->row->text);
  return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_order(const void *a, const void *b) {
  const slot_ref_t *x = a, *y = b;
  return (x->order > y->order) - (x->order < y->order);
}

size_t cal_chart_slots(cal_gp_set_t *set, double spread, int width_col) {
  size_t n = 0, at = 0, nslots = 0;
  for (size_t i = 0; i < set->n; i++)
    n += set->s[i].n;
  slot_ref_t *ref = malloc((n ? n : 1) * sizeof *ref);
  if (!ref)
    return 0;
  for (size_t i = 0; i < set->n; i++)
    for (size_t r = 0; r < set->s[i].n; r++, at++)
      ref[at] = (slot_ref_t){&set->s[i].rows[r], at};
  /* each name's first appearance: the first of its run once sorted */
  qsort(ref, n, sizeof *ref, by_text);
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(ref[i].row->text, ref[i - 1].row->text) != 0)
      ref[i].row->x = -(double)ref[i].order - 1; /* a first: its order */
    else
      ref[i].row->x = ref[i - 1].row->x;
  /* the names numbered in order of first appearance */
  for (size_t i = 0; i < n; i++)
    ref[i].order = (size_t)(-ref[i].row->x - 1);
  qsort(ref, n, sizeof *ref, by_order);
  double last = 1;
  for (size_t i = 0; i < n; i++) {
    if (ref[i].row->x != last) {
      last = ref[i].row->x;
      nslots++;
    }
    ref[i].row->x = (double)nslots;
  }
  free(ref);
  /* series j of ns within its name's place: spread over the slot */
  size_t ns = set->n;
  double w = ns > 1 ? spread / (double)ns : spread;
  for (size_t i = 0; i < ns; i++)
    for (size_t r = 0; r < set->s[i].n; r++) {
      cal_gp_row_t *row = &set->s[i].rows[r];
      row->x += ((double)i - (double)(ns - 1) / 2) * w;
      if (width_col >= 0)
        row->v[width_col] = w * 0.9;
    }
  return nslots;
}
