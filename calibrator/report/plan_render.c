/* Table and markdown of a plan, rendered from its typed result only.  One
 * layout serves both: markdown adds pipes, headings and separator rows. */
#include "plan_render.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* The punctuation that tells the two formats apart. */
typedef struct layout {
  const char *h, *sep, *lead, *tail, *li;
  int md;
} layout_t;

static const layout_t table_layout = {"", "  ", "", "", "  ", 0};
static const layout_t md_layout = {"## ", " | ", "| ", " |", "- ", 1};

static double gb(double bytes) { return bytes / 1e9; }

size_t cal_text_cell(char *dst, size_t len, const char *s, int md) {
  size_t at = 0;
  if (!len)
    return 0;
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    int esc = md && strchr("\\|*_`[]<>#~&", c) != NULL;
    if (at + (size_t)esc + 2 > len)
      break;
    if (esc)
      dst[at++] = '\\';
    dst[at++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  dst[at] = '\0';
  return at;
}

/* A name from the plan, safe for the layout (static buffer per slot). */
static const char *cell(const layout_t *l, const char *s, int slot) {
  static char buf[2][512];
  cal_text_cell(buf[slot], sizeof buf[slot], s, l->md);
  return buf[slot];
}

/* " a, b, c" from the plan's machines at the indices idx (all machines
 * flagged as stragglers when idx is NULL), then a newline. */
static void name_list(FILE *f, const cal_plan_t *p, const size_t *idx,
                      size_t n, const layout_t *l) {
  size_t at = 0;
  for (size_t k = 0; k < n; k++) {
    if (!idx && !p->machines[k].straggler)
      continue;
    fprintf(f, "%s %s", at++ ? "," : "",
            cell(l, p->machines[idx ? idx[k] : k].m->name, 0));
  }
  fprintf(f, "\n");
}

/* Seconds as people read them: "42.0 s", "12 min 05 s", "3 h 12 min",
 * "2 d 04 h". */
static const char *duration(char *buf, size_t len, double s) {
  if (!isfinite(s))
    snprintf(buf, len, "-");
  else if (s < 60)
    snprintf(buf, len, "%.1f s", s);
  else if (s < 3600)
    snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
  else if (s < 86400)
    snprintf(buf, len, "%d h %02d min", (int)(s / 3600),
             (int)fmod(s / 60, 60));
  else if (s < 1e9)
    snprintf(buf, len, "%d d %02d h", (int)(s / 86400),
             (int)fmod(s / 3600, 24));
  else
    snprintf(buf, len, "%.3g s", s);
  return buf;
}

/* "lo-hi" of a machine's throughput CI, or "-". */
static const char *ci_cell(char *buf, size_t len, const cal_plan_machine_t *m) {
  if (isfinite(m->ci_low) && isfinite(m->ci_high))
    snprintf(buf, len, "%.4g-%.4g", m->ci_low, m->ci_high);
  else
    snprintf(buf, len, "-");
  return buf;
}

static void split_rows(FILE *f, const cal_plan_t *p, const layout_t *l) {
  fprintf(f, "%sWork split (proportional to throughput at each machine's "
             "optimal batch)\n\n", l->h);
  fprintf(f, "%s%-24s%s%12s%s%15s%s%7s%s%10s%s%14s%s%s%s\n", l->lead,
          "machine", l->sep, "examples/s", l->sep, "CI", l->sep, "share",
          l->sep, "examples", l->sep, "finish", l->sep, "flag", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_entry_t *e = &p->machines[k];
    char cnt[32] = "-", fin[32] = "-", ci[48];
    if (p->examples) {
      snprintf(cnt, sizeof cnt, "%" PRIu64, e->examples);
      duration(fin, sizeof fin, e->finish_s);
    }
    const char *flag = !e->in_split    ? "no share: no fit"
                       : e->straggler ? "straggler"
                                      : "";
    fprintf(f, "%s%-24s%s%12.3f%s%15s%s%6.2f%%%s%10s%s%14s%s%s%s\n", l->lead,
            cell(l, e->m->name, 0), l->sep, e->m->throughput, l->sep,
            ci_cell(ci, sizeof ci, e->m), l->sep, 100 * e->share, l->sep, cnt,
            l->sep, fin, l->sep, flag, l->tail);
  }
}

/* What the work is, in the unit it was given. */
static void work_words(FILE *f, const cal_plan_t *p) {
  const cal_work_t *w = &p->work;
  fprintf(f, "%" PRIu64 " examples", p->examples);
  if (w->unit == CAL_WORK_EPOCHS)
    fprintf(f, " (%g epochs of %.0f)", w->epochs,
            (double)w->dataset_examples);
  else if (w->unit == CAL_WORK_STEPS)
    fprintf(f, " (%.0f steps of %.0f)", (double)w->steps,
            (double)w->global_batch);
}

/* A price or cost cell: "%.4g", or "-" when it does not apply. */
static const char *usd_cell(char *buf, size_t len, double x) {
  if (isfinite(x))
    snprintf(buf, len, "%.4g", x);
  else
    snprintf(buf, len, "-");
  return buf;
}

/* Time per machine alone and in the split, and what it costs. */
static void time_cost_section(FILE *f, const cal_plan_t *p,
                              const layout_t *l) {
  char a[32], b[32];
  const int priced = isfinite(p->cost_usd);
  fprintf(f, "\n%sTime%s\n\n", l->h, priced ? " and cost" : "");
  fprintf(f, "%s%-24s%s%14s%s%14s", l->lead, "machine", l->sep,
          "in the split", l->sep, "alone");
  if (priced)
    fprintf(f, "%s%8s%s%10s%s%10s", l->sep, "USD/h", l->sep, "split USD",
            l->sep, "alone USD");
  fprintf(f, "%s\n", l->tail);
  if (l->md)
    fprintf(f, priced ? "|---|---:|---:|---:|---:|---:|\n"
                      : "|---|---:|---:|\n");
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_entry_t *e = &p->machines[k];
    fprintf(f, "%s%-24s%s%14s%s%14s", l->lead, cell(l, e->m->name, 0), l->sep,
            duration(a, sizeof a, e->finish_s), l->sep,
            duration(b, sizeof b, e->alone_s));
    if (priced) {
      char pc[24], cc[24], acc[24];
      fprintf(f, "%s%8s%s%10s%s%10s", l->sep,
              usd_cell(pc, sizeof pc, e->m->price_per_hour), l->sep,
              usd_cell(cc, sizeof cc, e->cost_usd), l->sep,
              usd_cell(acc, sizeof acc, e->alone_cost_usd));
    }
    fprintf(f, "%s\n", l->tail);
  }
  fprintf(f, "\n");
  if (priced)
    fprintf(f, "Cost of the split: %.4g USD (every machine in the split "
               "held for the split's wall-clock time %s).\n",
            p->cost_usd, duration(a, sizeof a, p->sp.makespan_s));
}

/* Who has no share and why, then the inputs left out. */
static void left_out_lines(FILE *f, const cal_plan_t *p, const layout_t *l) {
  for (size_t k = 0; k < p->nmachines; k++)
    if (p->machines[k].left_out_reason[0])
      fprintf(f, "No share: %s: %s.\n", cell(l, p->machines[k].m->name, 0),
              p->machines[k].left_out_reason);
  for (size_t k = 0; k < p->nexcluded; k++)
    fprintf(f, "Left out: %s (%s): %s\n", cell(l, p->excluded[k]->name, 0),
            cell(l, p->excluded[k]->path, 1),
            cal_plan_excluded_reason(p->excluded[k]));
}

/* What each throughput rests on: scaled by FLOPs per token to the plan's
 * model (the method once, then the factor a machine), or what it is. */
static void basis_lines(FILE *f, const cal_plan_t *p, const layout_t *l) {
  int method = 0, lines = 0;
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_machine_t *m = p->machines[k].m;
    if (!m->basis)
      continue;
    lines++;
    if (isfinite(m->flops_ratio) && !method++)
      fprintf(f, "Scaled by FLOPs per token (2 x the parameters a step "
                 "multiplies per token, the same factor in a training "
                 "step; attention's term that grows with the sequence not "
                 "counted): measured model's / the plan's model's.\n");
    fprintf(f, "%sThroughput of %s: %s", l->li, cell(l, m->name, 0), m->basis);
    if (isfinite(m->flops_ratio))
      fprintf(f, ": %.4g examples/s measured (%s, %.4g parameters a token) "
                 "x %.4g = %.4g", m->measured_throughput,
              cell(l, m->preset ? m->preset : "preset not recorded", 1),
              m->flops_params, m->flops_ratio, m->throughput);
    fprintf(f, ".\n");
  }
  if (lines)
    fprintf(f, "\n");
}

/* The work split: one row a machine, then what it means. */
static void split_section(FILE *f, const cal_plan_t *p, const layout_t *l) {
  const cal_split_t *sp = &p->sp;
  char d[32];
  split_rows(f, p, l);
  fprintf(f, "\n");
  basis_lines(f, p, l);
  if (p->split_note) {
    fprintf(f, "No split: %s.\n", p->split_note);
  } else if (p->examples) {
    work_words(f, p);
    fprintf(f, " finish in %s (%.4g s); an even split would take %.4g s: "
               "proportional split is %.2fx faster.\n",
            duration(d, sizeof d, sp->makespan_s), sp->makespan_s,
            sp->even_makespan_s, sp->speedup);
  } else {
    fprintf(f, "Proportional split is %.2fx faster than an even split "
               "(give --examples, --epochs or --steps for time).\n",
            sp->speedup);
  }
  if (sp->heterogeneous)
    fprintf(f, "Heterogeneous set: fastest/slowest throughput = %.2fx "
               "(more than 10%% apart, confidence intervals apart).\n",
            sp->ratio);
  else if (p->hetero_note[0])
    fprintf(f, "Not heterogeneous: %s.\n", p->hetero_note);
  int strag = 0;
  for (size_t k = 0; k < p->nmachines; k++)
    strag |= p->machines[k].straggler;
  if (strag) {
    fprintf(f, "Stragglers (whole confidence interval more than 20%% below "
               "the mean %.3f examples/s):", p->nsplit ? sp->mean_throughput : NAN);
    name_list(f, p, NULL, p->nmachines, l);
  }
  left_out_lines(f, p, l);
  if (p->examples)
    time_cost_section(f, p, l);
}

/* Micro-batch and accumulation per machine for the target batch. */
static void batch_section(FILE *f, const cal_plan_t *p, const layout_t *l) {
  fprintf(f, "\n%sBatch for effective batch %" PRId64 "\n\n", l->h,
          p->target);
  fprintf(f, "%s%-24s%s%8s%s%6s%s%6s%s%s%s\n", l->lead, "machine", l->sep,
          "optimal", l->sep, "micro", l->sep, "accum", l->sep, "note", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---|\n");
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_entry_t *e = &p->machines[k];
    char obs[32] = "-";
    if (e->m->optimal_batch)
      snprintf(obs, sizeof obs, "%" PRId64, e->m->optimal_batch);
    fprintf(f, "%s%-24s%s%8s%s%6.0f%s%6.0f%s%s%s\n", l->lead,
            cell(l, e->m->name, 0), l->sep, obs, l->sep,
            (double)e->batch.micro_batch, l->sep,
            (double)e->batch.accum_steps, l->sep, e->batch_note, l->tail);
  }
}

/* The activations line(s) of the memory: modelled or assumed. */
static void activation_lines(FILE *f, const cal_plan_model_t *md,
                             const layout_t *l) {
  const char *li = l->li;
  const int infer = md->training == CAL_TRAIN_INFERENCE;
  if (md->has_act) {
    const cal_plan_act_t *a = &md->act;
    fprintf(f, "%sactivations    %9.2f GB per example, modelled from the "
               "shapes, not measured: %.0f layers x seq %.0f, hidden %.0f, "
               "heads %.0f (kv %.0f), ffn %.0f, %g B per element%s; times "
               "the micro-batch\n", li,
            gb(md->base.activations_bytes), (double)a->layers,
            (double)a->seq, (double)a->shape.hidden, (double)a->shape.heads,
            (double)a->shape.kv_heads, (double)a->shape.ffn,
            a->bytes_per_element,
            infer              ? " (KV cache and one layer)"
            : a->checkpointing ? " (with activation checkpointing)"
                               : " (no activation checkpointing)");
    if (!infer)
      fprintf(f, "%s               %9.2f GB per example without "
                 "checkpointing, %.2f GB with\n", li,
              gb(a->est.full_bytes), gb(a->est.checkpointed_bytes));
  } else {
    fprintf(f, "%sactivations    %9.2f GB per example = %g x weights "
               "(assumed); times the micro-batch\n", li,
            gb(md->base.activations_bytes), md->assume.activation_fraction);
  }
}

/* How the model's memory adds up, one line per part. */
static void model_lines(FILE *f, const cal_plan_model_t *md,
                        const layout_t *l) {
  const char *tr = cal_training_name(md->training), *li = l->li;
  const double params = md->params, bpp = cal_dtype_bytes(md->dtype);
  const double trainable = md->base.trainable_params;
  fprintf(f, "\n%sMemory: %.3g parameters, %s, %s%s\n\n", l->h, params,
          cal_dtype_name(md->dtype), tr,
          md->training != CAL_TRAIN_INFERENCE ? " training with Adam" : "");
  fprintf(f, "%sweights        %9.2f GB = %.3g params x %g B\n", li,
          gb(md->base.weights_bytes), params, bpp);
  if (md->training == CAL_TRAIN_LORA && md->lora_rank)
    fprintf(f, "%strainable      %.3g params (LoRA rank %.0f on the seven "
               "projections of every layer)\n", li, trainable,
            (double)md->lora_rank);
  else if (md->training == CAL_TRAIN_LORA)
    fprintf(f, "%strainable      %.3g params (LoRA: assumed %g%% of "
               "params)\n", li, trainable, 100 * md->lora_fraction);
  fprintf(f, "%sgradients      %9.2f GB = %.3g trainable x %g B\n", li,
          gb(md->base.gradients_bytes), trainable, bpp);
  fprintf(f, "%soptimizer      %9.2f GB = %.3g trainable x 2 states x 4 B "
             "(Adam m, v in fp32)\n", li,
          gb(md->base.optimizer_bytes), trainable);
  fprintf(f, "%smaster weights %9.2f GB = %.3g trainable x 4 B (fp32 copy "
             "when dtype is narrower than fp32)\n", li,
          gb(md->base.master_bytes), trainable);
  activation_lines(f, md, l);
  fprintf(f, "%sbudget         available memory less %g%% headroom\n\n",
          li, 100 * md->assume.headroom);
}

/* Whether the model fits each machine, then where it goes. */
static void memory_section(FILE *f, const cal_plan_t *p, const layout_t *l) {
  const cal_plan_placement_t *pl = p->placement;
  model_lines(f, p->model, l);
  fprintf(f, "%s%-24s%s%6s%s%9s%s%9s%s%9s%s%9s%s%5s%s\n", l->lead, "machine",
          l->sep, "batch", l->sep, "act GB", l->sep, "need GB", l->sep,
          "budget GB", l->sep, "max batch", l->sep, "fits", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
  for (size_t k = 0; k < p->nmachines; k++) {
    const cal_plan_entry_t *e = &p->machines[k];
    char bud[32] = "?", mb[32] = "?";
    if (isfinite(e->mem.budget))
      snprintf(bud, sizeof bud, "%.2f", gb(e->mem.budget));
    if (e->mem.max_batch >= 0)
      snprintf(mb, sizeof mb, "%" PRId64, e->mem.max_batch);
    fprintf(f, "%s%-24s%s%6.0f%s%9.2f%s%9.2f%s%9s%s%9s%s%5s%s\n", l->lead,
            cell(l, e->m->name, 0), l->sep, (double)e->mem.batch_size, l->sep,
            gb(e->mem.activations), l->sep, gb(e->mem.need), l->sep, bud,
            l->sep, mb, l->sep,
            e->mem.fits < 0 ? "?" : e->mem.fits ? "yes" : "no", l->tail);
  }
  fprintf(f, "\nPlacement: %s: %s.\n", cal_place_name(pl->strategy), pl->note);
  if (pl->ngroup) {
    fprintf(f, "Shard group (%.2f GB):", gb(pl->shard_need));
    name_list(f, p, pl->group, pl->ngroup, l);
  }
}

/* The data-parallel step with the fleet's all-reduce, and its arithmetic. */
static void network_section(FILE *f, const cal_plan_network_t *nw,
                            const layout_t *l) {
  const cal_net_step_t *st = &nw->st;
  fprintf(f, "\n%sNetwork (data-parallel step with the all-reduce of the "
             "gradients, from %s)\n\n", l->h, nw->net->source);
  if (nw->note)
    fprintf(f, "%sNote: %s.\n", l->li, nw->note);
  if (nw->compute_note)
    fprintf(f, "%sNote on the throughput: %s.\n", l->li, nw->compute_note);
  for (size_t k = 0; k < nw->narith; k++)
    fprintf(f, "%s%s\n", l->li, nw->arith[k]);
  fprintf(f, "\n%s: %s.\n", l->md ? "**Verdict**" : "Verdict", nw->verdict);
  fprintf(f, "Gradient accumulation: %" PRId64 " step%s "
             "(all-reduce <= %.0f%% of a step%s): %.4g s for %.0f examples, "
             "%.4g examples/s over the fleet against %.4g alone.\n",
          st->accum, st->accum == 1 ? "" : "s", 100 * CAL_NET_AR_FRACTION,
          st->crossover_accum
              ? ", and past the crossover with the fastest machine alone"
              : "",
          st->accum_step_s, nw->global_batch * (double)st->accum,
          st->accum_throughput, st->fastest_throughput);
}

void cal_plan_render(FILE *f, const cal_plan_t *p, int md) {
  const layout_t *l = md ? &md_layout : &table_layout;
  split_section(f, p, l);
  if (p->target)
    batch_section(f, p, l);
  if (p->model)
    memory_section(f, p, l);
  if (p->network)
    network_section(f, p->network, l);
}

int cal_plan_render_text(const void *in, int md, FILE *out, char *err,
                         size_t errlen) {
  (void)err;
  (void)errlen;
  cal_plan_render(out, in, md);
  return 0;
}
