/* Cross-section sanity: figures of one run that cannot all be true of a
 * quiet machine.  Each finding is said on stderr and kept in the quality
 * notes.  None withholds a figure on its own: on a quiet machine two short
 * measurements of one 2-thread GEMM came out 16% apart with disjoint
 * intervals, so a finding is a question to the reader; what withholds a
 * figure is the load others put on the cores (run.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_vec.h"
#include "pipes.h"
#include "results.h"
#include "run.h"

/* A confirmation this far from the first measurement of the same size
 * in the same process, with confidence intervals that do not overlap, was
 * disturbed: one process's samples agree within 1%. */
#define CAL_CONFIRM_DROP 0.15

static void finding(cal_run_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void finding(cal_run_t *r, const char *fmt, ...) {
  cal_quality_t *q = &r->res->quality;
  va_list ap;
  va_start(ap, fmt);
  cal_run_notev(r, &q->sanity, &q->nsanity, 1, "check", fmt, ap);
  va_end(ap);
}

static const cal_gemm_point_t *point_by_id(const cal_gemm_result_t *g,
                                           const char *id) {
  for (size_t i = 0; i < g->npoints; i++)
    if (strcmp(g->points[i].id, id) == 0)
      return &g->points[i];
  return NULL;
}

static void gemm_checks(cal_run_t *r, const cal_gemm_result_t *g) {
  for (size_t i = 0; i < g->npoints; i++) {
    const cal_gemm_point_t *c = &g->points[i], *first;
    if (!c->confirms[0] || c->pt.status != CAL_POINT_OK ||
        !(first = point_by_id(g, c->confirms)) || first->pt.status != CAL_POINT_OK)
      continue;
    const cal_summary_t *sa = &first->pt.gflops_sum, *sb = &c->pt.gflops_sum;
    double a = sa->median, b = sb->median;
    /* far apart, and each outside the other's confidence interval: the
     * noise of short samples alone does not make a finding */
    int apart = b < a * (1.0 - CAL_CONFIRM_DROP) || a < b * (1.0 - CAL_CONFIRM_DROP);
    if (apart && (sa->ci_high < sb->ci_low || sb->ci_high < sa->ci_low)) {
      finding(r, "%s measured %.1f, its confirmation %.1f in the same run "
                 "(%.0f%% apart): the machine was disturbed during one of "
                 "them, or the size is too short to time steadily",
              first->id, a, b, 100.0 * (a > b ? 1 - b / a : 1 - a / b));
    }
  }
  if (r->opt->threads > 1 && g->sgemm_best[0] > 0 && g->sgemm_best[1] > 0 &&
      g->sgemm_best[1] < g->sgemm_best[0]) {
    finding(r, "fp32 GEMM on %d threads (%.1f GFLOPS) is slower than on one "
               "(%.1f): a thread waited on a core another process held",
            r->opt->threads, g->sgemm_best[1], g->sgemm_best[0]);
  }
}

void cal_sanity_check(cal_run_t *r) {
  const cal_quality_t *q = &r->res->quality;
  if (q->rtt_points > 1 && q->rtt_max_ns > CAL_TEAM_RTT_APART * q->rtt_min_ns)
    finding(r, "the threads' cache-line round trip went from %.0f to %.0f ns "
               "between points: the hypervisor moved them apart during the "
               "run, and a product whose threads share data (OpenBLAS's) "
               "runs slower while they are (each point's team_rtt_ns)",
            q->rtt_min_ns, q->rtt_max_ns);
  const cal_gemm_result_t *g = cal_results_get(r->res, CAL_SEC_ID_GEMM);
  const cal_roofline_result_t *rf = cal_results_get(r->res, CAL_SEC_ID_ROOFLINE);
  if (g)
    gemm_checks(r, g);
  if (rf && rf->efficiency[CAL_EFF_ATTENTION_OF_GEMM] > 1.0)
    finding(r, "the fused attention ran at %.0f%% of the best fp32 GEMM's "
               "rate, which it cannot beat on a quiet machine: one of them "
               "was disturbed",
            100.0 * rf->efficiency[CAL_EFF_ATTENTION_OF_GEMM]);
}
