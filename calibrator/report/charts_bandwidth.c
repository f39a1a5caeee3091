/* The bandwidth chart's marks: each profile's cache sizes as reported
 * (per core) and where its measured bandwidth drops, as vertical lines in
 * the profile's dash, each tagged at the top of the plot ("L2 1 MiB",
 * "drop 16 MiB-32 MiB") on a row of its own where it would print over a
 * neighbour's, each kind named in one key entry per profile; and the
 * spacing of the x axis' tics. */
#include "charts_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"

static void human_bytes(double b, char *buf, size_t len) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  snprintf(buf, len, "%.3g %s", b, unit[u]);
}

static void level_name(const cal_vbw_level_t *cc, char *buf, size_t len) {
  if (cc->level.is_int)
    snprintf(buf, len, "L%lld", (long long)cc->level.i);
  else if (cc->level_str)
    snprintf(buf, len, "%.8s", cc->level_str);
  else
    snprintf(buf, len, "?");
}

/* One vertical mark: where, its tag, its profile, its row. */
typedef struct bw_mark {
  double x;
  char tag[48];
  size_t profile;
  int row;
} bw_mark_t;

#define MARKS_MAX 64 /* per kind, over all profiles */
#define ROWS 6       /* rows of tags before one is shared */

typedef struct bw_marks {
  bw_mark_t m[MARKS_MAX];
  size_t n;
  size_t left_out; /* sizes that cannot be drawn */
} bw_marks_t;

/* A cache's size per core as a mark of profile p: "L3 16 MiB" (a shared
 * cache's share). */
static void cache_mark(const cal_vbw_level_t *cc, size_t p, bw_marks_t *ms) {
  double total = cc->size_bytes.v;
  double sharing = cal_chart_num(cc->cores_sharing, 1);
  /* the axis is the working set per core: a shared cache's share */
  double sz = sharing > 1 ? total / sharing : total;
  if (!cal_chart_pos(total) || !cal_chart_pos(sz)) {
    ms->left_out++;
    return;
  }
  char lv[16], hb[16];
  level_name(cc, lv, sizeof lv);
  for (size_t j = 0; j < ms->n; j++) /* a profile's caches listed twice */
    if (ms->m[j].profile == p && ms->m[j].x == sz &&
        strncmp(ms->m[j].tag, lv, strlen(lv)) == 0)
      return;
  if (ms->n == MARKS_MAX)
    return;
  ms->m[ms->n++] = (bw_mark_t){.x = sz, .profile = p};
  human_bytes(sz, hb, sizeof hb);
  snprintf(ms->m[ms->n - 1].tag, sizeof ms->m->tag, "%s %s", lv, hb);
}

typedef struct ws_pt {
  double ws, gbps;
} ws_pt_t;

static int ws_cmp(const void *a, const void *b) {
  double x = ((const ws_pt_t *)a)->ws, y = ((const ws_pt_t *)b)->ws;
  return (x > y) - (x < y);
}

/* The one-thread staircase of the first staircase kernel of a profile,
 * sorted by working set, into w (room for 128); how many. */
static size_t staircase(const cal_vpoints_t *pts, ws_pt_t *w) {
  size_t nw = 0;
  const char *kernel = NULL;
  for (size_t i = 0; i < pts->n && nw < 128; i++) {
    const cal_vpoint_t *pt = pts->p[i];
    const char *k = pt->kernel;
    if (!cal_chart_point_ok(pt) || pt->level || !k ||
        cal_chart_num(pt->threads, 1) != 1)
      continue;
    if (!kernel)
      kernel = k;
    if (strcmp(k, kernel) != 0)
      continue;
    w[nw] = (ws_pt_t){pt->working_set_bytes.v, pt->gbps.v};
    if (cal_chart_pos(w[nw].ws) && cal_chart_pos(w[nw].gbps))
      nw++;
  }
  qsort(w, nw, sizeof *w, ws_cmp);
  return nw;
}

/* Where the measured bandwidth of profile p falls: between two
 * neighbouring sizes of its one-thread staircase where it drops by more
 * than a quarter (a fall over neighbouring steps is one).  A cache's
 * reported size can differ from where it ends in practice (a VM reports
 * the host's L3), so the chart shows both. */
static void drops(const cal_vpoints_t *pts, size_t p, bw_marks_t *ms) {
  ws_pt_t w[128];
  size_t nw = staircase(pts, w), from = 0, last = (size_t)-1;
  for (size_t i = 1; i < nw; i++) {
    if (!(w[i].gbps < 0.75 * w[i - 1].gbps))
      continue;
    if (last == i - 1 && ms->n && ms->m[ms->n - 1].profile == p)
      ms->n--; /* this profile's previous drop, extended */
    else
      from = i - 1;
    last = i;
    if (ms->n == MARKS_MAX)
      return;
    ms->m[ms->n++] = (bw_mark_t){.x = sqrt(w[from].ws * w[i].ws),
                                 .profile = p};
    char ha[16], hb[16];
    human_bytes(w[from].ws, ha, sizeof ha);
    human_bytes(w[i].ws, hb, sizeof hb);
    snprintf(ms->m[ms->n - 1].tag, sizeof ms->m->tag, "drop %s-%s", ha, hb);
  }
}

static int mark_cmp(const void *a, const void *b) {
  double x = (*(bw_mark_t *const *)a)->x, y = (*(bw_mark_t *const *)b)->x;
  return (x > y) - (x < y);
}

/* The tags of both kinds of mark, all at the top of the plot: each on the
 * first row where it clears the tags before it (a tag centred on its
 * mark, about 6.5 pixels a character; per_px: octaves per pixel), past
 * the last row the row that ends first.  Returns how many rows. */
static int stagger(bw_marks_t *a, bw_marks_t *b, double per_px) {
  bw_mark_t *all[2 * MARKS_MAX];
  size_t n = 0;
  int rows = 0;
  for (size_t j = 0; j < a->n; j++)
    all[n++] = &a->m[j];
  for (size_t j = 0; j < b->n; j++)
    all[n++] = &b->m[j];
  qsort(all, n, sizeof *all, mark_cmp);
  double end[ROWS];
  for (int r = 0; r < ROWS; r++)
    end[r] = -INFINITY;
  for (size_t j = 0; j < n; j++) {
    double half = (6.5 * (double)strlen(all[j]->tag) + 10) / 2 * per_px;
    double x = log2(all[j]->x);
    int best = 0;
    for (int r = 0; r < ROWS; r++) {
      if (end[r] <= x - half) {
        best = r;
        break;
      }
      if (end[r] < end[best])
        best = r;
    }
    all[j]->row = best;
    end[best] = x + half;
    rows = best + 1 > rows ? best + 1 : rows;
  }
  return rows;
}

/* The x range of the chart in octaves, *lo to *hi: its points and
 * marks. */
static void octaves(const cal_chart_in_t *in, const bw_marks_t *a,
                    const bw_marks_t *b, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (size_t p = 0; p < in->n; p++) {
    const cal_vpoints_t *pts = &in->views[p]->bandwidth.points;
    for (size_t i = 0; i < pts->n; i++) {
      double t = cal_chart_num(pts->p[i]->threads, 1);
      double x = pts->p[i]->working_set_bytes.v / (t >= 1 ? t : 1);
      if (cal_chart_point_ok(pts->p[i]) && cal_chart_pos(x) &&
          cal_chart_pos(pts->p[i]->gbps.v)) {
        *lo = fmin(*lo, log2(x));
        *hi = fmax(*hi, log2(x));
      }
    }
  }
  for (size_t j = 0; j < a->n + b->n; j++) {
    double x = log2(j < a->n ? a->m[j].x : b->m[j - a->n].x);
    *lo = fmin(*lo, x);
    *hi = fmax(*hi, x);
  }
  if (!(*hi >= *lo)) {
    *lo = 10;
    *hi = 30;
  }
}

/* The x axis' tics, whole powers of two named in bytes ("32 KiB"), one
 * every few octaves so that labels of about 60 pixels never touch on a
 * plot plot_px wide; the range from tic to tic. */
static void write_tics(FILE *f, double lo, double hi, int plot_px) {
  int from = (int)floor(lo), to = (int)ceil(hi), step = 1;
  if (to == from)
    to++;
  while ((double)(to - from) / step > plot_px / 75.0)
    step++;
  from -= from % step ? (from % step + step) % step : 0;
  while ((to - from) % step)
    to++;
  fprintf(f, "set xrange [%.10g:%.10g]\nset xtics (", ldexp(1, from),
          ldexp(1, to));
  for (int e = from; e <= to; e += step) {
    char b[16];
    human_bytes(ldexp(1, e), b, sizeof b);
    fprintf(f, "%s\"%s\" %.10g", e == from ? "" : ", ", b, ldexp(1, e));
  }
  fputs(")\n", f);
}

static void write_marks(FILE *f, const char *name, const bw_marks_t *ms) {
  size_t a = ms->n ? ms->n : 1;
  fprintf(f, "n%ss = %zu\narray %s_bytes[%zu]\narray %s_tag[%zu]\n"
             "array %s_dt[%zu]\narray %s_row[%zu]\n%s_tag[1] = ''; "
             "%s_bytes[1] = 1; %s_dt[1] = 1; %s_row[1] = 0\n",
          name, ms->n, name, a, name, a, name, a, name, a, name, name, name,
          name);
  for (size_t j = 0; j < ms->n; j++) {
    fprintf(f, "%s_bytes[%zu] = %.10g; %s_dt[%zu] = %d; %s_row[%zu] = %d\n"
               "%s_tag[%zu] = ", name, j + 1, ms->m[j].x, name, j + 1,
            cal_chart_mark_dt(ms->m[j].profile), name, j + 1, ms->m[j].row,
            name, j + 1);
    cal_gp_quote(f, ms->m[j].tag);
    fputc('\n', f);
  }
}

/* Whether profile p has marks in ms. */
static int has_marks(const bw_marks_t *ms, size_t p) {
  for (size_t j = 0; j < ms->n; j++)
    if (ms->m[j].profile == p)
      return 1;
  return 0;
}

/* The key entries: one per profile and kind of mark it has. */
static void write_keys(FILE *f, const cal_chart_in_t *in,
                       const bw_marks_t *caches, const bw_marks_t *dr) {
  size_t n = 0;
  for (size_t p = 0; p < in->n; p++)
    n += (size_t)has_marks(caches, p) + (size_t)has_marks(dr, p);
  fprintf(f, "nmarkkeys = %zu\narray markkey[%zu]\narray markkey_dt[%zu]\n"
             "array markkey_drop[%zu]\nmarkkey[1] = ''; markkey_dt[1] = 1; "
             "markkey_drop[1] = 0\n",
          n, n ? n : 1, n ? n : 1, n ? n : 1);
  n = 0;
  for (size_t p = 0; p < in->n; p++)
    for (int d = 0; d < 2; d++) {
      if (!has_marks(d ? dr : caches, p))
        continue;
      char l[160];
      snprintf(l, sizeof l, "%.30s%s%s", in->n > 1 ? in->labels[p] : "",
               in->n > 1 ? " " : "",
               d ? "bandwidth drops (measured)"
                 : "cache sizes per core (reported)");
      n++;
      fprintf(f, "markkey_dt[%zu] = %d; markkey_drop[%zu] = %d\n"
                 "markkey[%zu] = ", n, cal_chart_mark_dt(p), n, d, n);
      cal_gp_quote(f, l);
      fputc('\n', f);
    }
}

/* Both kinds of mark of every profile. */
static void collect_marks(const cal_chart_in_t *in, bw_marks_t *caches,
                          bw_marks_t *dr) {
  for (size_t p = 0; p < in->n; p++) {
    const cal_vbandwidth_t *bw = &in->views[p]->bandwidth;
    for (size_t c = 0; c < bw->ncaches; c++)
      cache_mark(&bw->caches[c], p, caches);
    drops(&bw->points, p, dr);
  }
}

void cal_chart_bandwidth_header(FILE *f, const void *arg) {
  const cal_chart_in_t *in = arg;
  bw_marks_t *caches = calloc(1, sizeof *caches);
  bw_marks_t *dr = calloc(1, sizeof *dr);
  if (caches && dr) {
    collect_marks(in, caches, dr);
    double lo, hi;
    int px = in->plot_px > 100 ? in->plot_px : 700;
    octaves(in, caches, dr, &lo, &hi);
    write_tics(f, lo, hi, px);
    /* the plot spans the tics: octaves per pixel */
    double span = ceil(hi) - floor(lo) + 2;
    fprintf(f, "mark_rows = %d\n", stagger(caches, dr, span / px));
    write_marks(f, "cache", caches);
    write_marks(f, "drop", dr);
    write_keys(f, in, caches, dr);
  } else {
    fputs("ncaches = 0\nndrops = 0\nnmarkkeys = 0\nmark_rows = 0\n"
          "array markkey[1] = ['']\narray markkey_dt[1] = [1]\n"
          "array markkey_drop[1] = [0]\narray cache_bytes[1] = [1]\n"
          "array cache_tag[1] = ['']\narray cache_dt[1] = [1]\n"
          "array cache_row[1] = [0]\narray drop_bytes[1] = [1]\n"
          "array drop_tag[1] = ['']\narray drop_dt[1] = [1]\n"
          "array drop_row[1] = [0]\n", f);
  }
  free(caches);
  free(dr);
}

size_t cal_chart_bandwidth_left_out(const cal_chart_in_t *in) {
  bw_marks_t *caches = calloc(1, sizeof *caches);
  size_t n = 0;
  for (size_t p = 0; caches && p < in->n; p++) {
    const cal_vbandwidth_t *bw = &in->views[p]->bandwidth;
    for (size_t c = 0; c < bw->ncaches; c++)
      cache_mark(&bw->caches[c], p, caches);
  }
  if (caches)
    n = caches->left_out;
  free(caches);
  return n;
}
