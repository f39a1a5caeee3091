/* Table and markdown of a plan, read from its JSON tree only.  One layout
 * serves both: markdown adds pipes, headings and separator rows. */
#include "plan_render.h"

#include <math.h>
#include <string.h>

#include "profile.h"

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

/* " a, b, c" from an array of strings, then a newline. */
static void name_list(FILE *f, const json_t *arr, const layout_t *l) {
  size_t i;
  const json_t *m;
  json_array_foreach(arr, i, m) fprintf(f, "%s %s", i ? "," : "",
                                        cell(l, json_string_value(m), 0));
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
static const char *ci_cell(char *buf, size_t len, const json_t *m) {
  double lo = cal_json_num(m, "throughput_ci_low", NAN),
         hi = cal_json_num(m, "throughput_ci_high", NAN);
  if (isfinite(lo) && isfinite(hi))
    snprintf(buf, len, "%.4g-%.4g", lo, hi);
  else
    snprintf(buf, len, "-");
  return buf;
}

static void split_rows(FILE *f, const json_t *p, const layout_t *l) {
  const json_t *ex = json_object_get(p, "examples");
  size_t i;
  const json_t *m;
  fprintf(f, "%sWork split (proportional to throughput at each machine's "
             "optimal batch)\n\n", l->h);
  fprintf(f, "%s%-24s%s%12s%s%15s%s%7s%s%10s%s%14s%s%s%s\n", l->lead,
          "machine", l->sep, "examples/s", l->sep, "CI", l->sep, "share",
          l->sep, "examples", l->sep, "finish", l->sep, "flag", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
  json_array_foreach(json_object_get(p, "machines"), i, m) {
    char cnt[32] = "-", fin[32] = "-", ci[48];
    if (json_is_integer(ex)) {
      snprintf(cnt, sizeof cnt, "%" JSON_INTEGER_FORMAT,
               json_integer_value(json_object_get(m, "examples")));
      duration(fin, sizeof fin, cal_json_num(m, "finish_s", NAN));
    }
    const char *flag =
        !json_is_true(json_object_get(m, "in_split")) ? "no share: no fit"
        : json_is_true(json_object_get(m, "straggler")) ? "straggler"
                                                        : "";
    fprintf(f, "%s%-24s%s%12.3f%s%15s%s%6.2f%%%s%10s%s%14s%s%s%s\n", l->lead,
            cell(l, cal_json_str(m, "name"), 0), l->sep,
            cal_json_num(m, "throughput", NAN), l->sep,
            ci_cell(ci, sizeof ci, m), l->sep,
            100 * cal_json_num(m, "share", NAN), l->sep, cnt, l->sep, fin,
            l->sep, flag, l->tail);
  }
}

/* What the work is, in the unit it was given. */
static void work_words(FILE *f, const json_t *p) {
  const json_t *w = json_object_get(p, "work");
  const char *unit = cal_json_str(w, "unit");
  fprintf(f, "%" JSON_INTEGER_FORMAT " examples",
          json_integer_value(json_object_get(p, "examples")));
  if (strcmp(unit, "epochs") == 0)
    fprintf(f, " (%g epochs of %.0f)", cal_json_num(w, "epochs", NAN),
            cal_json_num(w, "dataset_examples", NAN));
  else if (strcmp(unit, "steps") == 0)
    fprintf(f, " (%.0f steps of %.0f)", cal_json_num(w, "steps", NAN),
            cal_json_num(w, "global_batch", NAN));
}

/* Time per machine alone and in the split, and what it costs. */
static void time_cost_section(FILE *f, const json_t *p, const layout_t *l) {
  size_t i;
  const json_t *m;
  char a[32], b[32];
  const int priced = json_is_number(json_object_get(p, "cost_usd"));
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
  json_array_foreach(json_object_get(p, "machines"), i, m) {
    fprintf(f, "%s%-24s%s%14s%s%14s", l->lead,
            cell(l, cal_json_str(m, "name"), 0), l->sep,
            duration(a, sizeof a, cal_json_num(m, "finish_s", NAN)), l->sep,
            duration(b, sizeof b, cal_json_num(m, "alone_s", NAN)));
    if (priced) {
      double pr = cal_json_num(m, "price_per_hour_usd", NAN),
             c = cal_json_num(m, "cost_usd", NAN),
             ac = cal_json_num(m, "alone_cost_usd", NAN);
      char pc[24] = "-", cc[24] = "-", acc[24] = "-";
      if (isfinite(pr))
        snprintf(pc, sizeof pc, "%.4g", pr);
      if (isfinite(c))
        snprintf(cc, sizeof cc, "%.4g", c);
      if (isfinite(ac))
        snprintf(acc, sizeof acc, "%.4g", ac);
      fprintf(f, "%s%8s%s%10s%s%10s", l->sep, pc, l->sep, cc, l->sep, acc);
    }
    fprintf(f, "%s\n", l->tail);
  }
  fprintf(f, "\n");
  if (priced)
    fprintf(f, "Cost of the split: %.4g USD (every machine in the split "
               "held for the split's wall-clock time %s).\n",
            cal_json_num(p, "cost_usd", NAN),
            duration(a, sizeof a, cal_json_num(p, "makespan_s", NAN)));
}

/* The work split: one row a machine, then what it means. */
static void split_section(FILE *f, const json_t *p, const layout_t *l) {
  const json_t *ex = json_object_get(p, "examples");
  const json_t *note = json_object_get(p, "split_note");
  size_t i;
  const json_t *m;
  char d[32];
  split_rows(f, p, l);
  fprintf(f, "\n");
  if (json_is_string(note)) {
    fprintf(f, "No split: %s.\n", json_string_value(note));
  } else if (json_is_integer(ex)) {
    work_words(f, p);
    fprintf(f, " finish in %s (%.4g s); an even split would take %.4g s: "
               "proportional split is %.2fx faster.\n",
            duration(d, sizeof d, cal_json_num(p, "makespan_s", NAN)),
            cal_json_num(p, "makespan_s", NAN),
            cal_json_num(p, "even_split_makespan_s", NAN),
            cal_json_num(p, "speedup_vs_even_split", NAN));
  } else {
    fprintf(f, "Proportional split is %.2fx faster than an even split "
               "(give --examples, --epochs or --steps for time).\n",
            cal_json_num(p, "speedup_vs_even_split", NAN));
  }
  if (json_is_true(json_object_get(p, "heterogeneous")))
    fprintf(f, "Heterogeneous set: fastest/slowest throughput = %.2fx "
               "(more than 10%% apart, confidence intervals apart).\n",
            cal_json_num(p, "throughput_ratio", NAN));
  else if (json_is_string(json_object_get(p, "heterogeneous_note")))
    fprintf(f, "Not heterogeneous: %s.\n",
            cal_json_str(p, "heterogeneous_note"));
  const json_t *st = json_object_get(p, "stragglers");
  if (json_array_size(st)) {
    fprintf(f, "Stragglers (whole confidence interval more than 20%% below "
               "the mean %.3f examples/s):",
            cal_json_num(p, "mean_throughput", NAN));
    name_list(f, st, l);
  }
  json_array_foreach(json_object_get(p, "machines"), i, m)
      if (json_is_string(json_object_get(m, "left_out_reason")))
          fprintf(f, "No share: %s: %s.\n", cell(l, cal_json_str(m, "name"), 0),
                  cal_json_str(m, "left_out_reason"));
  json_array_foreach(json_object_get(p, "excluded"), i, m)
      fprintf(f, "Left out: %s (%s): %s\n", cell(l, cal_json_str(m, "name"), 0), cell(l, cal_json_str(m, "profile"), 1),
              cal_json_str(m, "reason"));
  if (json_is_integer(ex))
    time_cost_section(f, p, l);
}

/* Micro-batch and accumulation per machine for the target batch. */
static void batch_section(FILE *f, const json_t *p, const json_t *T,
                          const layout_t *l) {
  size_t i;
  const json_t *m;
  fprintf(f, "\n%sBatch for effective batch %" JSON_INTEGER_FORMAT "\n\n",
          l->h, json_integer_value(T));
  fprintf(f, "%s%-24s%s%8s%s%6s%s%6s%s%s%s\n", l->lead, "machine", l->sep,
          "optimal", l->sep, "micro", l->sep, "accum", l->sep, "note", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---|\n");
  json_array_foreach(json_object_get(p, "machines"), i, m) {
    const json_t *ob = json_object_get(m, "optimal_batch_size");
    char obs[32] = "-";
    if (json_is_integer(ob))
      snprintf(obs, sizeof obs, "%" JSON_INTEGER_FORMAT, json_integer_value(ob));
    fprintf(f, "%s%-24s%s%8s%s%6.0f%s%6.0f%s%s%s\n", l->lead, cell(l, cal_json_str(m, "name"), 0),
            l->sep, obs, l->sep, cal_json_num(m, "micro_batch_size", NAN), l->sep,
            cal_json_num(m, "grad_accum_steps", NAN), l->sep, cal_json_str(m, "batch_note"), l->tail);
  }
}

/* How the model's memory adds up, one line per part. */
static void model_lines(FILE *f, const json_t *model, const layout_t *l) {
  const char *tr = cal_json_str(model, "training"), *li = l->li;
  double params = cal_json_num(model, "params", NAN), bpp = cal_json_num(model, "bytes_per_param", NAN);
  double trainable = cal_json_num(model, "trainable_params", NAN);
  fprintf(f, "\n%sMemory: %.3g parameters, %s, %s%s\n\n", l->h, params,
          cal_json_str(model, "dtype"), tr,
          strcmp(tr, "inference") ? " training with Adam" : "");
  fprintf(f, "%sweights        %9.2f GB = %.3g params x %g B\n", li,
          gb(cal_json_num(model, "weights_bytes", NAN)), params, bpp);
  if (strcmp(tr, "lora") == 0 &&
      json_is_integer(json_object_get(model, "lora_rank")))
    fprintf(f, "%strainable      %.3g params (LoRA rank %.0f on the seven "
               "projections of every layer)\n", li, trainable,
            cal_json_num(model, "lora_rank", NAN));
  else if (strcmp(tr, "lora") == 0)
    fprintf(f, "%strainable      %.3g params (LoRA: assumed %g%% of "
               "params)\n", li, trainable, 100 * cal_json_num(model, "lora_fraction", NAN));
  fprintf(f, "%sgradients      %9.2f GB = %.3g trainable x %g B\n", li,
          gb(cal_json_num(model, "gradients_bytes", NAN)), trainable, bpp);
  fprintf(f, "%soptimizer      %9.2f GB = %.3g trainable x 2 states x 4 B "
             "(Adam m, v in fp32)\n", li,
          gb(cal_json_num(model, "optimizer_bytes", NAN)), trainable);
  fprintf(f, "%smaster weights %9.2f GB = %.3g trainable x 4 B (fp32 copy "
             "when dtype is narrower than fp32)\n", li,
          gb(cal_json_num(model, "master_weights_bytes", NAN)), trainable);
  const json_t *am = json_object_get(model, "activation_model");
  if (json_is_object(am)) {
    fprintf(f, "%sactivations    %9.2f GB per example, modelled from the "
               "shapes, not measured: %.0f layers x seq %.0f, hidden %.0f, "
               "heads %.0f (kv %.0f), ffn %.0f, %g B per element%s; times "
               "the micro-batch\n", li,
            gb(cal_json_num(model, "activations_bytes_per_example", NAN)),
            cal_json_num(am, "layers", NAN), cal_json_num(am, "seq", NAN),
            cal_json_num(am, "hidden", NAN), cal_json_num(am, "heads", NAN),
            cal_json_num(am, "kv_heads", NAN), cal_json_num(am, "ffn", NAN),
            cal_json_num(am, "bytes_per_element", NAN),
            strcmp(tr, "inference") == 0 ? " (KV cache and one layer)"
            : json_is_true(json_object_get(am, "checkpointing"))
                ? " (with activation checkpointing)"
                : " (no activation checkpointing)");
    if (strcmp(tr, "inference"))
      fprintf(f, "%s               %9.2f GB per example without "
                 "checkpointing, %.2f GB with\n", li,
              gb(cal_json_num(am, "without_checkpointing_bytes_per_example",
                              NAN)),
              gb(cal_json_num(am, "with_checkpointing_bytes_per_example",
                              NAN)));
  } else {
    fprintf(f, "%sactivations    %9.2f GB per example = %g x weights "
               "(assumed); times the micro-batch\n", li,
            gb(cal_json_num(model, "activations_bytes_per_example", NAN)),
            cal_json_num(model, "activation_fraction", NAN));
  }
  fprintf(f, "%sbudget         available memory less %g%% headroom\n\n",
          li, 100 * cal_json_num(model, "headroom", NAN));
}

/* Whether the model fits each machine, then where it goes. */
static void memory_section(FILE *f, const json_t *p, const layout_t *l) {
  size_t i;
  const json_t *m;
  model_lines(f, json_object_get(p, "model"), l);
  fprintf(f, "%s%-24s%s%6s%s%9s%s%9s%s%9s%s%9s%s%5s%s\n", l->lead, "machine",
          l->sep, "batch", l->sep, "act GB", l->sep, "need GB", l->sep,
          "budget GB", l->sep, "max batch", l->sep, "fits", l->tail);
  if (l->md)
    fprintf(f, "|---|---:|---:|---:|---:|---:|---|\n");
  json_array_foreach(json_object_get(p, "machines"), i, m) {
    const json_t *mem = json_object_get(m, "memory");
    const json_t *fits = json_object_get(mem, "fits");
    char bud[32] = "?", mb[32] = "?";
    if (json_is_number(json_object_get(mem, "budget_bytes")))
      snprintf(bud, sizeof bud, "%.2f", gb(cal_json_num(mem, "budget_bytes", NAN)));
    if (json_is_integer(json_object_get(mem, "max_batch_size")))
      snprintf(mb, sizeof mb, "%" JSON_INTEGER_FORMAT,
               json_integer_value(json_object_get(mem, "max_batch_size")));
    fprintf(f, "%s%-24s%s%6.0f%s%9.2f%s%9.2f%s%9s%s%9s%s%5s%s\n", l->lead,
            cell(l, cal_json_str(m, "name"), 0), l->sep, cal_json_num(mem, "batch_size", NAN), l->sep,
            gb(cal_json_num(mem, "activations_bytes", NAN)), l->sep,
            gb(cal_json_num(mem, "need_bytes", NAN)), l->sep, bud, l->sep, mb, l->sep,
            json_is_null(fits) ? "?" : json_is_true(fits) ? "yes" : "no",
            l->tail);
  }
  const json_t *pl = json_object_get(p, "placement");
  fprintf(f, "\nPlacement: %s: %s.\n", cal_json_str(pl, "strategy"), cal_json_str(pl, "note"));
  const json_t *g = json_object_get(pl, "shard_group");
  if (json_array_size(g)) {
    fprintf(f, "Shard group (%.2f GB):", gb(cal_json_num(pl, "shard_need_bytes", NAN)));
    name_list(f, g, l);
  }
}

/* The data-parallel step with the fleet's all-reduce, and its arithmetic. */
static void network_section(FILE *f, const json_t *net, const layout_t *l) {
  const json_t *ga = json_object_get(net, "grad_accum");
  const json_t *line;
  size_t i;
  fprintf(f, "\n%sNetwork (data-parallel step with the all-reduce of the "
             "gradients, from %s)\n\n", l->h, cal_json_str(net, "source"));
  if (json_is_string(json_object_get(net, "note")))
    fprintf(f, "%sNote: %s.\n", l->li, cal_json_str(net, "note"));
  if (json_is_string(json_object_get(net, "compute_note")))
    fprintf(f, "%sNote on the throughput: %s.\n", l->li,
            cal_json_str(net, "compute_note"));
  json_array_foreach(json_object_get(net, "arithmetic"), i, line)
      fprintf(f, "%s%s\n", l->li, json_string_value(line));
  fprintf(f, "\n%s: %s.\n", l->md ? "**Verdict**" : "Verdict",
          cal_json_str(net, "verdict"));
  fprintf(f, "Gradient accumulation: %" JSON_INTEGER_FORMAT " step%s "
             "(all-reduce <= %.0f%% of a step%s): %.4g s for %.0f examples, "
             "%.4g examples/s over the fleet against %.4g alone.\n",
          json_integer_value(json_object_get(ga, "recommended")),
          json_integer_value(json_object_get(ga, "recommended")) == 1 ? "" : "s",
          100 * cal_json_num(ga, "allreduce_fraction_target", NAN),
          json_is_integer(json_object_get(ga, "crossover"))
              ? ", and past the crossover with the fastest machine alone"
              : "",
          cal_json_num(ga, "step_s", NAN),
          cal_json_num(net, "global_batch", NAN) *
              (double)json_integer_value(json_object_get(ga, "recommended")),
          cal_json_num(ga, "fleet_throughput", NAN),
          cal_json_num(json_object_get(net, "fastest"), "throughput", NAN));
}

void cal_plan_render(FILE *f, const json_t *p, int md) {
  const layout_t *l = md ? &md_layout : &table_layout;
  const json_t *T = json_object_get(p, "target_effective_batch");
  split_section(f, p, l);
  if (json_is_integer(T))
    batch_section(f, p, T, l);
  if (json_is_object(json_object_get(p, "model")))
    memory_section(f, p, l);
  if (json_is_object(json_object_get(p, "network")))
    network_section(f, json_object_get(p, "network"), l);
}
