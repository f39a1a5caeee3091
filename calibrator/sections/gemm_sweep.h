/* The GEMM section's sweeps (gemm_sweep.c): one engine and dtype at one
 * thread count over square sizes, n = 512, 1024, 1536, 2048, 3072, 4096,
 * ..., every size kept as a point of the result.
 *
 * A sweep stops when the curve has flattened: two sizes, from n = 1024
 * on, whose median's confidence interval lies wholly below the best
 * median so far plus 2% (a size whose interval lies wholly above the
 * best's starts the count again; intervals too wide to tell count neither
 * way).  It also stops at the memory limit, at a verification failure, and
 * before a size whose predicted cost (the harness's, from the last size's
 * run time growing as n³), plus that of confirming the best size after
 * it, would not fit its time budget; such a sweep can be continued later
 * with more time.  When the best size (the one whose median's CI starts
 * highest) changed, it is measured once more and the median of both
 * measurements' samples is the sweep's figure (the winner's curse). */
#ifndef CAL_GEMM_SWEEP_H
#define CAL_GEMM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "results.h"
#include "run.h"

/* Where a sweep stands; zero-initialise before its first walk. */
typedef struct cal_gemm_walk {
  size_t next;              /* the next size's index in the ladder */
  int64_t last_n;           /* last size measured, 0: none */
  double last_s, best_s;    /* run time of the last and the best size */
  double best_low;          /* the best size's median less its robust spread */
  size_t best;              /* the best size's index in g->points */
  int have_best, flat, last_trend;
  int more;                 /* 1: stopped only by the time budget */
} cal_gemm_walk_t;

/* How a new size's rate summary x compares with the best size's: 1 when
 * it is clearly higher (its median's CI lies wholly above the best's), -1
 * when it shows no meaningful gain (its CI lies below the best median +
 * 2%: with the CI's confidence it gains less than that), 0 when the CIs
 * are too wide to tell. */
int cal_gemm_trend(const cal_summary_t *best, const cal_summary_t *x);

/* What a size is ranked on for a sweep's best: its median less 1.4826 x
 * its MAD, robust to a lucky or a slow sample alike. */
double cal_gemm_rank(const cal_summary_t *x);

/* Whether a size with rate summary x takes the best place of walk w: the
 * first size measured always does (on a loaded machine its spread can
 * pass its median, a rank below 0), a later one when it ranks higher. */
int cal_gemm_beats(const cal_summary_t *x, const cal_gemm_walk_t *w);

/* Go on with sweep s for at most budget_s seconds from now (the first
 * size of a sweep is measured whatever the budget), then confirm the best
 * size if it changed.  0, or a CAL_E* code on internal errors. */
int cal_gemm_walk(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s,
                  cal_gemm_walk_t *w, double budget_s);
/* The fixed sizes of --ci (256, 1024, 2048) in the run's interleaved
 * rounds; the best is the highest median, unconfirmed. */
int cal_gemm_fixed(cal_run_t *r, cal_gemm_result_t *g, cal_gemm_sweep_t *s);

#endif
