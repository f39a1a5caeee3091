#include "curve_render.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cal_glyph.h"

#define BAR_CELLS 24

/* A bar of pct/100 * BAR_CELLS cells in eighths (in ASCII: '#' a cell,
 * '+' a part of one); pad: fill to BAR_CELLS. */
static void put_bar(FILE *f, double pct, int pad) {
  static const char *const eighths[] = {"",   "▏", "▎", "▍",
                                        "▌", "▋", "▊", "▉"};
  const int utf8 = cal_utf8();
  if (!isfinite(pct) || pct < 0)
    pct = 0;
  if (pct > 100)
    pct = 100;
  int units = (int)lround(pct / 100.0 * BAR_CELLS * 8);
  int cells = 0;
  for (; units >= 8; units -= 8, cells++)
    fputs(utf8 ? "█" : "#", f);
  if (units > 0) {
    fputs(utf8 ? eighths[units] : "+", f);
    cells++;
  }
  for (; pad && cells < BAR_CELLS; cells++)
    fputc(' ', f);
}

static void fmt_ci(char *buf, size_t len, const cal_curve_row_t *p) {
  if (p->status != CAL_POINT_OK || p->n < 2)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "[%.1f, %.1f] %.0f%%", p->stats.ci_low,
             p->stats.ci_high, p->stats.ci_level * 100.0);
}

/* Column widths: batch, median, n, CI. */
typedef struct widths {
  int b, m, n, c;
} widths_t;

static int wider(int w, int have) { return have > w ? have : w; }

static widths_t column_widths(const cal_curve_result_t *r) {
  widths_t w = {5, 11, 1, 14};
  char buf[128];
  for (size_t i = 0; i < r->n; i++) {
    const cal_curve_row_t *p = &r->points[i];
    w.b = wider(w.b, snprintf(buf, sizeof buf, "%lld", (long long)p->batch_size));
    if (p->status != CAL_POINT_OK)
      continue;
    w.m = wider(w.m, snprintf(buf, sizeof buf, "%.1f", p->stats.median));
    w.n = wider(w.n, snprintf(buf, sizeof buf, "%zu", p->n));
    fmt_ci(buf, sizeof buf, p);
    w.c = wider(w.c, (int)strlen(buf));
  }
  return w;
}

/* "◀ peak, knee, optimal" as they apply to point p. */
static void point_marks(const cal_curve_result_t *r, const cal_curve_row_t *p,
                        char *marks, size_t len) {
  size_t ml = 0;
  marks[0] = '\0';
  if (p->is_peak)
    ml += (size_t)snprintf(marks + ml, len - ml, "%s peak", cal_glyph("◀", "<"));
  else if (p->tied)
    ml += (size_t)snprintf(marks + ml, len - ml, "%s tied with peak", cal_glyph("≈", "~"));
  if (p->is_knee)
    ml += (size_t)snprintf(marks + ml, len - ml, "%sknee", ml ? ", " : "");
  if (p->is_optimal && !(p->is_peak && r->policy == CAL_OPTIMIZE_THROUGHPUT))
    snprintf(marks + ml, len - ml, "%soptimal", ml ? ", " : "");
}

static void point_rows(FILE *f, const char *label, const cal_curve_result_t *r) {
  widths_t w = column_widths(r);
  char buf[128], marks[96];
  fprintf(f, "%s: %zu point%s, %s\n", label, r->n, r->n == 1 ? "" : "s",
          cal_curve_shape_name(r->shape));
  fprintf(f, "  %*s  %*s  %*s  %-*s  %6s\n", w.b, "batch", w.m, "median ex/s",
          w.n, "n", w.c, "CI of median", "%peak");
  for (size_t i = 0; i < r->n; i++) {
    const cal_curve_row_t *p = &r->points[i];
    if (p->status != CAL_POINT_OK) {
      fprintf(f, "  %*lld  %*s\n", w.b, (long long)p->batch_size, w.m,
              "skipped");
      continue;
    }
    fmt_ci(buf, sizeof buf, p);
    fprintf(f, "  %*lld  %*.1f  %*zu  %-*s  %5.1f%%  ", w.b,
            (long long)p->batch_size, w.m, p->stats.median, w.n, p->n, w.c,
            buf, p->pct_of_peak);
    point_marks(r, p, marks, sizeof marks);
    put_bar(f, p->pct_of_peak, marks[0] != '\0');
    if (marks[0])
      fprintf(f, "  %s", marks);
    fputc('\n', f);
  }
}

static void peak_lines(FILE *f, const cal_curve_result_t *r) {
  fprintf(f, "  peak:      batch %lld, %.1f examples/s\n",
          (long long)r->peak_batch_size, r->peak_median);
  fprintf(f, "  tied:      ");
  if (r->n_tied <= 1) {
    fprintf(f, "none (no other point's CI overlaps the peak's)\n");
  } else {
    for (size_t i = 0; i < r->n_tied; i++)
      fprintf(f, "%s%lld", i ? ", " : "", (long long)r->tied_batch_sizes[i]);
    fprintf(f, " (CIs overlap the peak's: indistinguishable)\n");
  }
  fprintf(f, "  knee:      batch %lld (smallest batch within %g%% of the "
             "peak)\n",
          (long long)r->knee_batch_size, r->tolerance * 100.0);
  fprintf(f, "  optimal:   batch %lld (optimize %s)\n",
          (long long)r->optimal_batch_size, cal_curve_policy_name(r->policy));
}

static void shape_line(FILE *f, const cal_curve_result_t *r) {
  const cal_curve_row_t *last = NULL, *prev = NULL;
  for (size_t i = 0; i < r->n; i++)
    if (r->points[i].status == CAL_POINT_OK) {
      prev = last;
      last = &r->points[i];
    }
  fprintf(f, "  shape:     %s: ", cal_curve_shape_name(r->shape));
  switch (r->shape) {
  case CAL_SHAPE_SINGLE:
    fprintf(f, "one point measured, nothing to compare it with\n");
    break;
  case CAL_SHAPE_RISING:
    fprintf(f, "%+.1f%% from batch %lld to batch %lld; try larger batches\n",
            r->rise_pct, (long long)prev->batch_size,
            (long long)last->batch_size);
    break;
  case CAL_SHAPE_PLATEAU:
    if (last->is_peak)
      fprintf(f, "%+.1f%% from batch %lld to batch %lld (within %g%% or "
                 "noise)\n",
              r->rise_pct, (long long)prev->batch_size,
              (long long)last->batch_size, r->tolerance * 100.0);
    else
      fprintf(f, "past the peak within %g%% or noise (batch %lld: %.1f%% "
                 "below the peak)\n",
              r->tolerance * 100.0, (long long)last->batch_size,
              r->degradation_pct);
    break;
  case CAL_SHAPE_PEAKED:
    fprintf(f, "degradation %.1f%% at batch %lld (worst %.1f%% at batch "
               "%lld)\n",
            r->degradation_pct, (long long)last->batch_size,
            r->worst_drop_pct, (long long)r->worst_batch_size);
    break;
  default:
    fputc('\n', f);
    break;
  }
}

static void recommend_line(FILE *f, const cal_curve_result_t *r,
                           const cal_curve_rec_t *rec) {
  if (!rec)
    fprintf(f, "  recommend: batch %lld (--target-effective-batch N plans "
               "gradient accumulation)\n",
            (long long)r->optimal_batch_size);
  else if (rec->batch_size == 0)
    fprintf(f, "  recommend: none for effective batch %lld: %s\n",
            (long long)rec->target_effective_batch, rec->note);
  else
    fprintf(f, "  recommend: effective batch %lld = batch %lld x %lld "
               "accumulation step%s (%s)\n",
            (long long)rec->effective_batch, (long long)rec->batch_size,
            (long long)rec->accumulation_steps,
            rec->accumulation_steps == 1 ? "" : "s", rec->note);
}

void cal_curve_render(FILE *f, const char *label, const cal_curve_result_t *r,
                      const cal_curve_rec_t *rec) {
  point_rows(f, label, r);
  if (r->shape == CAL_SHAPE_EMPTY) {
    fprintf(f, "  shape:     empty: no point was measured\n\n");
    return;
  }
  peak_lines(f, r);
  shape_line(f, r);
  recommend_line(f, r, rec);
  fputc('\n', f);
}
