/* The section views of a profile (view.h): gemm, scaling, peak,
 * bandwidth, attention, roofline and the batch sweep. */
#include "view_read.h"

#include <string.h>

static void read_gemm_dtype(cal_varena_t *a, cal_vgemm_dtype_t *d,
                            const char *key, const json_t *o) {
  const json_t *engines = json_object_get(o, "engines"), *e;
  const char *ek;
  d->dtype = key;
  d->kernel = cal_vstr_of(o, "kernel");
  d->status = cal_vstr_of(o, "status");
  d->reason = cal_vstr_of(o, "reason");
  d->metric = cal_vstr_of(o, "metric");
  d->best_gflops_1_thread = cal_vnum_of(o, "best_gflops_1_thread");
  d->best_gflops_all_threads = cal_vnum_of(o, "best_gflops_all_threads");
  d->best_gops_1_thread = cal_vnum_of(o, "best_gops_1_thread");
  d->best_gops_all_threads = cal_vnum_of(o, "best_gops_all_threads");
  d->engines = cal_varena_alloc(a, json_object_size(engines), sizeof *d->engines);
  if (!d->engines)
    return;
  json_object_foreach((json_t *)engines, ek, e) {
    cal_vgemm_engine_t *x = &d->engines[d->nengines++];
    x->engine = ek;
    x->kernel = cal_vstr_of(e, "kernel");
    x->status = cal_vstr_of(e, "status");
    x->reason = cal_vstr_of(e, "reason");
  }
}

static void read_gemm_sweep(cal_vgemm_sweep_t *s, const json_t *o) {
  s->kernel = cal_vstr_of(o, "kernel");
  s->engine = cal_vstr_of(o, "engine");
  s->dtype = cal_vstr_of(o, "dtype");
  s->stop_reason = cal_vstr_of(o, "stop_reason");
  s->best_id = cal_vstr_of(o, "best_id");
  s->impl = cal_vstr_of(o, "impl");
  s->threads = cal_vnum_of(o, "threads");
  s->best_n = cal_vnum_of(o, "best_n");
  s->best_gflops = cal_vnum_of(o, "best_gflops");
  s->best_gops = cal_vnum_of(o, "best_gops");
  s->best_gflops_in_sweep = cal_vnum_of(o, "best_gflops_in_sweep");
  s->best_gops_in_sweep = cal_vnum_of(o, "best_gops_in_sweep");
  s->budget_s = cal_vnum_of(o, "budget_s");
  s->time_s = cal_vnum_of(o, "time_s");
}

static void read_gemm(cal_vbuild_t *b, cal_vgemm_t *g, const json_t *o) {
  const json_t *dtypes = json_object_get(o, "dtypes");
  const json_t *sweeps = json_object_get(o, "sweeps");
  const json_t *onednn = json_object_get(o, "onednn"), *x;
  const char *k;
  size_t i;
  g->has = json_is_object(o);
  g->operation = cal_vstr_of(o, "operation");
  g->engine_choice = cal_vstr_of(o, "engine_choice");
  g->onednn.version = cal_vstr_of(onednn, "version");
  g->onednn.threading = cal_vstr_of(onednn, "threading");
  g->onednn.max_isa = cal_vstr_of(onednn, "max_isa");
  g->dtypes = cal_varena_alloc(b->a, json_object_size(dtypes), sizeof *g->dtypes);
  if (g->dtypes)
    json_object_foreach((json_t *)dtypes, k, x)
      read_gemm_dtype(b->a, &g->dtypes[g->ndtypes++], k, x);
  g->sweeps = cal_varena_alloc(b->a, json_array_size(sweeps), sizeof *g->sweeps);
  if (g->sweeps)
    json_array_foreach(sweeps, i, x) read_gemm_sweep(&g->sweeps[g->nsweeps++], x);
  g->points = cal_vpoints_of(b, "gemm", o, "points");
}

static void read_peak(cal_vbuild_t *b, cal_vpeak_t *p, const json_t *o) {
  const json_t *clock = json_object_get(o, "clock");
  const json_t *model = json_object_get(o, "model");
  const json_t *theo = json_object_get(o, "theoretical"), *x;
  const char *k;
  p->has = json_is_object(o);
  p->clock.ghz = cal_vnum_of(clock, "ghz");
  p->clock.method = cal_vstr_of(clock, "method");
  p->clock.variant = cal_vstr_of(clock, "variant");
  p->model.vector_bits = cal_vnum_of(model, "vector_bits");
  p->model.usable_cores = cal_vnum_of(model, "usable_cores");
  p->model.ghz = cal_vnum_of(model, "ghz");
  p->model.assumption = cal_vstr_of(model, "assumption");
  p->model.ipc = cal_vfields_of(b->a, model, "ipc");
  p->theoretical = cal_varena_alloc(b->a, json_object_size(theo),
                                    sizeof *p->theoretical);
  if (p->theoretical)
    json_object_foreach((json_t *)theo, k, x) {
      cal_vtheoretical_t *t = &p->theoretical[p->ntheoretical++];
      t->dtype = k;
      t->gflops = cal_vnum_of(x, "gflops");
      t->gflops_per_core = cal_vnum_of(x, "gflops_per_core");
      t->gops = cal_vnum_of(x, "gops");
      t->gops_per_core = cal_vnum_of(x, "gops_per_core");
    }
  p->points = cal_vpoints_of(b, "peak", o, "points");
}

static void read_bandwidth(cal_vbuild_t *b, cal_vbandwidth_t *w,
                           const json_t *o) {
  const json_t *caches = json_object_get(o, "caches"), *x;
  size_t i;
  w->has = json_is_object(o);
  w->convention = cal_vstr_of(o, "convention");
  w->working_sets = cal_vstr_of(o, "working_sets");
  w->caches = cal_varena_alloc(b->a, json_array_size(caches), sizeof *w->caches);
  if (w->caches)
    json_array_foreach(caches, i, x) {
      cal_vbw_level_t *c = &w->caches[w->ncaches++];
      c->level = cal_vnum_of(x, "level");
      c->level_str = cal_vstr_of(x, "level");
      c->size_bytes = cal_vnum_of(x, "size_bytes");
      c->cores_sharing = cal_vnum_of(x, "cores_sharing");
    }
  w->points = cal_vpoints_of(b, "bandwidth", o, "points");
}

static void read_attention(cal_vbuild_t *b, cal_vattention_t *t,
                           const json_t *o) {
  const json_t *refs = json_object_get(o, "gemm_reference"), *x;
  const char *k;
  t->has = json_is_object(o);
  t->flops_note = cal_vstr_of(o, "flops_note");
  t->refs = cal_varena_alloc(b->a, json_object_size(refs), sizeof *t->refs);
  if (t->refs)
    json_object_foreach((json_t *)refs, k, x) {
      cal_vattn_ref_t *r = &t->refs[t->nrefs++];
      r->key = k;
      r->gflops = cal_vnum_of(x, "gflops");
      r->source = cal_vstr_of(x, "source");
    }
  t->points = cal_vpoints_of(b, "attention", o, "points");
}

static void read_roof_kernel(cal_vroof_kernel_t *k, const json_t *o) {
  k->kernel = cal_vstr_of(o, "kernel");
  k->dtype = cal_vstr_of(o, "dtype");
  k->variant = cal_vstr_of(o, "variant");
  k->level = cal_vstr_of(o, "level");
  k->bound = cal_vstr_of(o, "bound");
  k->threads = cal_vnum_of(o, "threads");
  k->intensity_flop_per_byte = cal_vnum_of(o, "intensity_flop_per_byte");
  k->gflops = cal_vnum_of(o, "gflops");
  k->attainable_gflops = cal_vnum_of(o, "attainable_gflops");
  k->ceiling_gbps = cal_vnum_of(o, "ceiling_gbps");
  k->ceiling_gflops = cal_vnum_of(o, "ceiling_gflops");
  k->efficiency = cal_vnum_of(o, "efficiency");
}

static void read_roofline(cal_varena_t *a, cal_vroofline_t *r,
                          const json_t *o) {
  const json_t *ridge = json_object_get(o, "ridge_flop_per_byte");
  const json_t *kernels = json_object_get(o, "kernels"), *x;
  const char *k;
  size_t i;
  r->has = json_is_object(o);
  r->threads = cal_vnum_of(o, "threads");
  r->compute_gflops = cal_vfields_of(a, o, "compute_gflops");
  r->compute_kernel = cal_vfields_of(a, o, "compute_kernel");
  r->theoretical_gflops = cal_vfields_of(a, o, "theoretical_gflops");
  r->matrix_gflops = cal_vfields_of(a, o, "matrix_gflops");
  r->matrix_kernel = cal_vfields_of(a, o, "matrix_kernel");
  r->theoretical_matrix_gflops = cal_vfields_of(a, o, "theoretical_matrix_gflops");
  r->bandwidth_gbps = cal_vfields_of(a, o, "bandwidth_gbps");
  r->bandwidth_kernel = cal_vfields_of(a, o, "bandwidth_kernel");
  r->efficiencies = cal_vfields_of(a, o, "efficiencies");
  r->ridge = cal_varena_alloc(a, json_object_size(ridge), sizeof *r->ridge);
  if (r->ridge)
    json_object_foreach((json_t *)ridge, k, x) {
      r->ridge[r->nridge].dtype = k;
      r->ridge[r->nridge++].level = cal_vfields_members(a, x);
    }
  r->kernels = cal_varena_alloc(a, json_array_size(kernels), sizeof *r->kernels);
  if (r->kernels)
    json_array_foreach(kernels, i, x) read_roof_kernel(&r->kernels[r->nkernels++], x);
}

static void read_recommend(cal_vrecommend_t *r, const json_t *o) {
  r->has = json_is_object(o);
  r->batch_size = cal_vnum_of(o, "batch_size");
  r->accumulation_steps = cal_vnum_of(o, "accumulation_steps");
  r->effective_batch = cal_vnum_of(o, "effective_batch");
  r->target_effective_batch = cal_vnum_of(o, "target_effective_batch");
  r->exact = cal_vbool_of(o, "exact");
  r->note = cal_vstr_of(o, "note");
}

static void read_mode(cal_vbuild_t *b, cal_vbatch_mode_t *m, const char *key,
                      const json_t *o) {
  static const struct {
    const char *key;
    size_t off;
  } nums[] = {
#define N(f) {#f, offsetof(cal_vbatch_mode_t, f)}
      N(peak_batch_size), N(peak_examples_per_s), N(knee_batch_size),
      N(optimal_batch_size), N(latency_ms_batch_1), N(degradation_pct),
      N(rise_pct), N(worst_batch_size), N(worst_drop_pct), N(time_s),
      N(layers), N(layers_measured), N(scaled_from_layers), N(vocab),
      N(model_params), N(model_state_bytes), N(memory_read_gbps),
      N(activation_bytes_per_example),
      N(activation_bytes_per_example_checkpointed),
#undef N
  };
  m->name = key;
  m->status = cal_vstr_of(o, "status");
  m->stop_reason = cal_vstr_of(o, "stop_reason");
  m->shape = cal_vstr_of(o, "shape");
  m->workload = cal_vstr_of(o, "workload");
  m->optimizer = cal_vstr_of(o, "optimizer");
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    *(cal_vnum_t *)((char *)m + nums[i].off) = cal_vnum_of(o, nums[i].key);
  m->tied_batch_sizes = cal_vnums_of(b->a, o, "tied_batch_sizes", &m->ntied);
  read_recommend(&m->recommendation, json_object_get(o, "recommendation"));
  m->points = cal_vpoints_of(b, "batch_sweep", o, "points");
  m->fields = cal_vfields_members(b->a, o);
}

static void read_batch(cal_vbuild_t *b, cal_vbatch_sweep_t *s,
                       const json_t *o) {
  const json_t *model = json_object_get(o, "model");
  const json_t *modes = json_object_get(o, "modes"), *x;
  const char *k;
  s->has = json_is_object(o);
  s->dtype = cal_vstr_of(o, "dtype");
  s->engine = cal_vstr_of(o, "engine");
  s->optimize = cal_vstr_of(o, "optimize");
  s->top_level_mode = cal_vstr_of(o, "top_level_mode");
  s->flops_note = cal_vstr_of(o, "flops_note");
  s->tolerance_pct = cal_vnum_of(o, "tolerance_pct");
  s->target_effective_batch = cal_vnum_of(o, "target_effective_batch");
  s->time_budget_s = cal_vnum_of(o, "time_budget_s");
  s->memory_budget_bytes = cal_vnum_of(o, "memory_budget_bytes");
  s->model.has = json_is_object(model);
  s->model.preset = cal_vstr_of(model, "preset");
  s->model.hidden = cal_vnum_of(model, "hidden");
  s->model.heads = cal_vnum_of(model, "heads");
  s->model.kv_heads = cal_vnum_of(model, "kv_heads");
  s->model.head_dim = cal_vnum_of(model, "head_dim");
  s->model.ffn = cal_vnum_of(model, "ffn");
  s->model.seq = cal_vnum_of(model, "seq");
  s->model.weights_bytes = cal_vnum_of(model, "weights_bytes");
  s->modes = cal_varena_alloc(b->a, json_object_size(modes), sizeof *s->modes);
  if (s->modes)
    json_object_foreach((json_t *)modes, k, x)
      read_mode(b, &s->modes[s->nmodes++], k, x);
}

void cal_vsections_read(cal_vbuild_t *b, const json_t *root) {
  cal_profile_view_t *v = b->v;
  const json_t *scaling = json_object_get(root, "scaling");
  read_gemm(b, &v->gemm, json_object_get(root, "gemm"));
  v->scaling.has = json_is_object(scaling);
  v->scaling.n = cal_vnum_of(scaling, "n");
  v->scaling.points = cal_vpoints_of(b, "scaling", scaling, "points");
  read_peak(b, &v->peak, json_object_get(root, "peak"));
  read_bandwidth(b, &v->bandwidth, json_object_get(root, "bandwidth"));
  read_attention(b, &v->attention, json_object_get(root, "attention"));
  read_roofline(b->a, &v->roofline, json_object_get(root, "roofline"));
  read_batch(b, &v->batch_sweep, json_object_get(root, "batch_sweep"));
}

const cal_vgemm_dtype_t *cal_vgemm_dtype(const cal_vgemm_t *g,
                                         const char *dtype) {
  for (size_t i = 0; dtype && i < g->ndtypes; i++)
    if (strcmp(g->dtypes[i].dtype, dtype) == 0)
      return &g->dtypes[i];
  return NULL;
}

const cal_vbatch_mode_t *cal_vbatch_mode(const cal_vbatch_sweep_t *b,
                                         const char *name) {
  for (size_t i = 0; name && i < b->nmodes; i++)
    if (strcmp(b->modes[i].name, name) == 0)
      return &b->modes[i];
  return NULL;
}
