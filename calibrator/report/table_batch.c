/* The batch sweep's part of the table (the model's step in every mode):
 * per mode, the points with their
 * share of the peak (decode: and the GB/s a step reads with its share of
 * the memory read bandwidth), then peak, knee, optimal, shape and
 * advice. */
#include <math.h>
#include <string.h>

#include "results.h"
#include "table.h"

/* A figure the profile states only when positive, printed as 0 otherwise. */
static long long positive(int64_t v) { return v > 0 ? (long long)v : 0; }

static void print_point(const cal_batch_point_t *bp, int decode,
                        const cal_curve_result_t *c, double peak, FILE *out) {
  long long b = (long long)bp->batch;
  if (bp->status != CAL_POINT_OK) {
    fprintf(out, "  %12lld   %s: %s\n", b,
            cal_point_status_name(bp->status), bp->reason);
    return;
  }
  long long pb = positive(c->peak_batch_size), kb = positive(c->knee_batch_size),
            ob = positive(c->optimal_batch_size);
  double ex = bp->examples.median;
  char mark[64] = "";
  if (b == pb)
    strcat(mark, " <- peak");
  if (b == kb)
    strcat(mark, b == pb ? ", knee" : " <- knee");
  if (b == ob && ob != pb && ob != kb)
    strcat(mark, " <- optimal");
  if (bp->mem.swapped)
    strcat(mark, " (swapped: not a headline)");
  else if (bp->measured && bp->pt.not_parallel[0])
    strcat(mark, " (threads not side by side)");
  char bw[48] = "";
  /* %bw: of the read measured beside the points where it was */
  double eff = isnan(bp->bw_beside) ? bp->bw_efficiency : bp->bw_beside;
  if (decode && isnan(eff))
    snprintf(bw, sizeof bw, " %7.1f     - %-4s", bp->read_gbps, bp->matrix_path);
  else if (decode)
    snprintf(bw, sizeof bw, " %7.1f %5.0f%% %-4s", bp->read_gbps, 100.0 * eff,
             bp->matrix_path);
  char tr[96] = "";
  if (bp->step_ms > 0)
    snprintf(tr, sizeof tr, " %9.2f %9.2f %7.1f %8.0f %-3s", bp->layer_ms,
             bp->head_ms, bp->step_gflops, bp->act_bytes / 1048576.0,
             bp->model_fits ? "yes" : "no");
  fprintf(out, "  %12lld %12.2f %13.1f %9.2f %5.0f%%%s%s%s%s\n", b, ex,
          bp->tokens.median,
          bp->step_ms > 0 ? bp->step_ms : bp->pt.m.time.median * 1e3,
          peak > 0 ? 100.0 * ex / peak : 0.0, bw, tr,
          cal_table_unstable_mark(&bp->pt), mark);
}

/* "%.1f" of a measured bandwidth, else "none" (NAN: not measured). */
static const char *gbps_text(double gbps, char buf[16]) {
  if (gbps > 0)
    snprintf(buf, 16, "%.1f", gbps);
  else
    snprintf(buf, 16, "none");
  return buf;
}

/* Decode: what a step reads and the bandwidth %bw is a share of. */
static void print_bandwidth(const cal_batch_result_t *res,
                            const cal_batch_mode_t *m, FILE *out) {
  char before[16], after[16];
  const cal_batch_point_t *first = m->npoints ? &m->points[0] : NULL;
  if (first)
    fprintf(out, "    GB/s: %.1f MB a step at batch %lld (every layer's weights "
                 "and KV cache and the LM head's weights read once), over the "
                 "step time\n",
            first->read_bytes / 1e6, (long long)first->batch);
  const char *s = res->mem_read_threads == 1 ? "" : "s";
  if (isnan(res->mem_read_gbps))
    fprintf(out, "    %%bw: not known: %s\n", res->mem_read_why);
  else if (m->read_beside_gbps > 0)
    fprintf(out, "    %%bw: share of the memory read bandwidth measured beside "
                 "these points, %.1f GB/s on %d thread%s (stream_read, the "
                 "higher of %s before and %s after them; the bandwidth "
                 "section read %.1f)\n",
            m->read_beside_gbps, res->mem_read_threads, s,
            gbps_text(m->read_before_gbps, before),
            gbps_text(m->read_after_gbps, after), res->mem_read_gbps);
  else
    fprintf(out, "    %%bw: share of the memory read bandwidth, %.1f GB/s on "
                 "%d thread%s (bandwidth section, stream_read; not measured "
                 "again: %s)\n",
            res->mem_read_gbps, res->mem_read_threads, s, m->read_beside_why);
}

/* The curve's verdict: peak, knee, optimal and shape, or that no point
 * could be the peak (each measured one flagged, or none measured). */
static void print_curve(const cal_curve_result_t *c, double peak,
                        const char *stop, FILE *out) {
  if (c->peak_batch_size < 1) {
    fprintf(out, "    no peak batch: no point could be one (each is marked "
                 "above); sweep ended: %s\n", stop);
    return;
  }
  fprintf(out, "    peak batch %lld (%.2f examples/s), knee %lld, optimal %lld; "
               "shape %s",
          positive(c->peak_batch_size), peak, positive(c->knee_batch_size),
          positive(c->optimal_batch_size), cal_curve_shape_name(c->shape));
  if (c->shape == CAL_SHAPE_PEAKED && isfinite(c->degradation_pct))
    fprintf(out, " (%.1f%% lower at the largest batch)", c->degradation_pct);
  fprintf(out, "; sweep ended: %s\n", stop);
}

static void print_mode(const cal_batch_result_t *res, int mi, FILE *out) {
  const cal_batch_mode_t *m = &res->modes[mi];
  const int decode = mi == 1;
  if (strcmp(m->status, "measured") != 0) {
    fprintf(out, "  %s: %s: %s\n", m->name, m->status, m->reason);
    return;
  }
  const cal_curve_result_t *c = m->curve;
  double peak = c->n_ok > 0 ? c->peak_median : 0.0;
  fprintf(out, "  %s    batch   examples/s      tokens/s   step ms  %%peak%s\n",
          m->name, decode ? "    GB/s   %bw path"
                   : mi == 2 || mi >= 4 ? " layers ms   head ms  GFLOPS  act MiB fits"
                                        : "");
  int64_t fewest = m->layers_measured;
  if (mi == 3)
    fprintf(out, "    one example: a sequence of seq prompt and %lld generated "
                 "tokens: prefill, then %lld decode steps, the KV cache "
                 "growing token by token, in one timed run\n",
            (long long)res->gen_len, (long long)res->gen_len);
  if (mi == 4)
    fprintf(out, "    one example: a preference pair: the training step over "
                 "2 x batch sequences (chosen and rejected) + a frozen "
                 "reference's forward over them (its LM head on the last "
                 "positions), measured apart and summed\n");
  if (mi == 5)
    fprintf(out, "    one example: a prompt: %lld completions of %lld tokens "
                 "generated (prefill, decode), then the training step over "
                 "them, measured apart and summed\n",
            (long long)res->group, (long long)res->gen_len);
  if (mi == 0 || mi == 1 || mi == 3) {
    char cyc[96] = "";
    if (fewest && fewest < res->layers)
      snprintf(cyc, sizeof cyc, ", run in turn over %lld distinct layers' "
               "weights", (long long)fewest);
    fprintf(out, "    the model's step: %lld layers%s + the LM head (vocab "
                 "%lld) on %s\n",
            (long long)res->layers, cyc, (long long)res->vocab,
            decode ? "the new tokens"
            : mi == 3 ? "the last prompt position, then each new token"
                      : "the last position of each sequence");
  } else {
    fprintf(out, "    the model's step: %lld layers (%s) + the measured LM "
                 "head (vocab %lld, %s); GFLOPS at 3 x "
                 "forward; act MiB: the model's activations without "
                 "checkpointing; fits: training state (%.0f MiB) and "
                 "activations within the memory budget\n",
            (long long)res->layers,
            fewest && fewest < res->layers ? "the measured layer step, scaled"
                                           : "the whole stack measured",
            (long long)res->vocab, cal_kdtype_name(res->head->dtype),
            res->model_state_bytes / 1048576.0);
    /* a head in another dtype than the layers' says why */
    if (res->head->dtype != res->dtype)
      fprintf(out, "    LM head: %s\n", res->head_why);
    if (res->lora_rank)
      fprintf(out, "    LoRA: rank %lld adapters on every layer's projections "
                   "trained, the base frozen (the LM head's step a full "
                   "one); GFLOPS at the work done\n",
              (long long)res->lora_rank);
  }
  for (size_t i = 0; i < m->npoints; i++)
    print_point(&m->points[i], decode, c, peak, out);
  if (decode)
    print_bandwidth(res, m, out);
  print_curve(c, peak, m->stop, out);
  if (cal_batch_open_ended(m))
    fprintf(out, "    optimal batch %lld is a lower bound: the best point "
                 "is the largest batch measured, and a larger one may be "
                 "faster still%s\n",
            (long long)c->optimal_batch_size,
            m->stop && strcmp(m->stop, CAL_STOP_TIME) == 0
                ? " (--budget-scale gives the sweep more time)"
                : "");
  if (m->have_rec)
    fprintf(out, "    target effective batch %lld: batch %lld x %lld accumulation "
                 "steps (%s)\n",
            (long long)m->rec.target_effective_batch,
            positive(m->rec.batch_size), positive(m->rec.accumulation_steps),
            m->rec.note);
}

void cal_batch_print(const cal_run_result_t *r, const void *result, FILE *out) {
  const cal_batch_result_t *res = result;
  const cal_sweep_opts_t *o = &r->opt->sweep;
  int threads = r->opt->threads;
  fprintf(out, "\nBatch sweep: the %s model (%lld layers: hidden %lld, %lld "
               "heads, %lld kv heads, ffn %lld; vocab %lld), seq %lld, %s, %d "
               "thread%s\n",
          o->preset, (long long)res->layers, (long long)o->hidden,
          (long long)o->heads, (long long)o->kv_heads, (long long)o->ffn,
          (long long)res->vocab, (long long)o->seq,
          cal_kdtype_name(res->dtype), threads, threads == 1 ? "" : "s");
  fprintf(out, "  dtype %s (%s); products on %s (%s)\n", cal_kdtype_name(res->dtype),
          o->dtype_why, cal_engine_name(res->engine), res->engine_why);
  if (res->workload)
    fprintf(out, "  workload %s (--workload)\n", res->workload);
  for (int m = 0; m < CAL_BATCH_NMODES; m++)
    if (res->ran[m])
      print_mode(res, m, out);
  /* which mode the top-level figures are, and why */
  if (res->top_why[0])
    fprintf(out, "  top level (optimal batch, throughput, latency): %s%s\n",
            res->top_why,
            res->top_mode >= 0 && cal_batch_open_ended(&res->modes[res->top_mode])
                ? "; its optimal batch a lower bound (above)"
                : "");
}
