/* The attention part of the run's table: one row per point; bf16 rows
 * marked, each row's "of GEMM" against the GEMM of its dtype; points not
 * measured for one reason (bf16 on a CPU without it) on one row. */
#include <stdio.h>
#include <string.h>

#include "results.h"
#include "run_result.h"
#include "table.h"

/* Whether two points were not measured, of one kind, for one reason. */
static int same_skip(const cal_attn_point_t *a, const cal_attn_point_t *b) {
  return a->pt.status != CAL_POINT_OK && a->pt.status == b->pt.status &&
         a->bf16 == b->bf16 && a->reference == b->reference &&
         strcmp(a->pt.reason, b->pt.reason) == 0;
}

/* A point not measured, with the others like it (n in all) on its row. */
static void print_skipped(const cal_attn_point_t *ap, size_t n, FILE *out) {
  char what[48];
  snprintf(what, sizeof what, "%s%zu points",
           ap->reference ? "ref, " : ap->bf16 ? "bf16, " : "", n);
  fprintf(out, "  %-37s %s: %s\n", what, cal_point_status_name(ap->pt.status),
          ap->pt.reason);
}

static void print_point(const cal_attn_point_t *ap, FILE *out) {
  const cal_attn_shape_t *s = &ap->shape;
  const cal_point_t *pt = &ap->pt;
  char shape[96];
  snprintf(shape, sizeof shape, "%s b%lld h%lld/%lld q%lld k%lld d%lld%s",
           ap->reference ? "ref" : ap->bf16 ? "bf16" : "",
           (long long)s->batch,
           (long long)s->heads, (long long)s->kv_heads, (long long)s->nq,
           (long long)s->nk, (long long)s->head_dim,
           s->causal ? " causal" : "");
  if (pt->status != CAL_POINT_OK) {
    fprintf(out, "  %-37s %s: %s\n", shape,
            cal_point_status_name(pt->status), pt->reason);
    return;
  }
  fprintf(out, "  %-37s %7d  %-11s %7.1f %7.1f %7.0f%%", shape,
          pt->params.threads > 0 ? pt->params.threads : 1, pt->variant,
          pt->gflops_sum.median, pt->gbps ? pt->gbps_sum.median : 0.0,
          100.0 * ap->ratio_to_gemm);
  if (ap->speedup_vs_reference > 0)
    fprintf(out, "  %5.1fx", ap->speedup_vs_reference);
  fprintf(out, "%s\n", cal_table_unstable_mark(pt));
}

void cal_attention_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_attention_result_t *a = result;
  (void)r;
  fprintf(out, "\nAttention (fused fp32 unless marked)    threads  "
               "variant      GFLOPS    GB/s  of GEMM  vs ref\n");
  for (size_t i = 0; i < a->npoints; i++) {
    const cal_attn_point_t *ap = &a->points[i];
    size_t before = 0, like = 0;
    for (size_t j = 0; j < a->npoints; j++)
      if (same_skip(ap, &a->points[j]))
        j < i ? before++ : like++;
    if (before > 0)
      continue; /* on the row of the first like it */
    if (like > 1)
      print_skipped(ap, like, out);
    else
      print_point(ap, out);
  }
}
