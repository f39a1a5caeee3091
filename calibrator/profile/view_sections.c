/* The section views of a profile (view.h): gemm, scaling, peak,
 * bandwidth, attention, roofline and the batch sweep. */
#include "section_view.h"
#include "view_read.h"

#include <string.h>

/* The members of an object (keyed, fn gets each key) or the elements of
 * an array (fn gets NULL) read by fn into an array of elements of size
 * bytes; *count of them.  Anything else reads as none. */
typedef void (*read_fn)(cal_vbuild_t *b, void *dst, const char *key,
                        const json_t *o);

static void *read_each(cal_vbuild_t *b, const json_t *c, int keyed,
                       size_t size, read_fn fn, size_t *count) {
  size_t n = keyed ? json_object_size(c) : json_array_size(c);
  char *dst = cal_varena_alloc(b->a, n, size);
  const char *key;
  json_t *x;
  size_t i;
  *count = 0;
  if (!dst)
    return NULL;
  if (keyed)
    json_object_foreach((json_t *)c, key, x) fn(b, dst + size * (*count)++, key, x);
  else
    json_array_foreach(c, i, x) fn(b, dst + size * (*count)++, NULL, x);
  return dst;
}

#define D cal_vgemm_dtype_t
static const cal_vkey_t dtype_keys[] = {
    CAL_VSTR(D, kernel), CAL_VSTR(D, status), CAL_VSTR(D, reason),
    CAL_VSTR(D, metric), CAL_VNUM(D, best_gflops_1_thread),
    CAL_VNUM(D, best_gflops_all_threads), CAL_VNUM(D, best_gops_1_thread),
    CAL_VNUM(D, best_gops_all_threads),
};
#undef D
#define E cal_vgemm_engine_t
static const cal_vkey_t engine_keys[] = {
    CAL_VSTR(E, kernel), CAL_VSTR(E, status), CAL_VSTR(E, reason),
};
#undef E
#define S cal_vgemm_sweep_t
static const cal_vkey_t sweep_keys[] = {
    CAL_VSTR(S, kernel),      CAL_VSTR(S, engine),
    CAL_VSTR(S, dtype),       CAL_VSTR(S, stop_reason),
    CAL_VSTR(S, best_id),     CAL_VSTR(S, impl),
    CAL_VNUM(S, threads),     CAL_VNUM(S, best_n),
    CAL_VNUM(S, best_gflops), CAL_VNUM(S, best_gops),
    CAL_VNUM(S, best_gflops_in_sweep), CAL_VNUM(S, best_gops_in_sweep),
    CAL_VNUM(S, budget_s),    CAL_VNUM(S, time_s),
};
#undef S
#define G cal_vgemm_t
static const cal_vkey_t gemm_keys[] = {
    CAL_VSTR(G, operation), CAL_VSTR(G, engine_choice),
};
static const cal_vkey_t onednn_keys[] = {
    CAL_VSTR_K(G, onednn.version, "version"),
    CAL_VSTR_K(G, onednn.threading, "threading"),
    CAL_VSTR_K(G, onednn.max_isa, "max_isa"),
};
#undef G

static void read_engine(cal_vbuild_t *b, void *dst, const char *key,
                        const json_t *o) {
  (void)b;
  cal_vgemm_engine_t *e = dst;
  e->engine = key;
  CAL_VREAD(e, engine_keys, o);
}

static void read_dtype(cal_vbuild_t *b, void *dst, const char *key,
                       const json_t *o) {
  cal_vgemm_dtype_t *d = dst;
  d->dtype = key;
  CAL_VREAD(d, dtype_keys, o);
  d->engines = read_each(b, json_object_get(o, "engines"), 1, sizeof *d->engines,
                         read_engine, &d->nengines);
}

static void read_sweep(cal_vbuild_t *b, void *dst, const char *key,
                       const json_t *o) {
  (void)b;
  (void)key;
  CAL_VREAD(dst, sweep_keys, o);
}

void cal_gemm_read(cal_vbuild_t *b, const json_t *o) {
  cal_vgemm_t *g = &b->v->gemm;
  g->has = json_is_object(o);
  CAL_VREAD(g, gemm_keys, o);
  CAL_VREAD(g, onednn_keys, json_object_get(o, "onednn"));
  g->dtypes = read_each(b, json_object_get(o, "dtypes"), 1, sizeof *g->dtypes,
                        read_dtype, &g->ndtypes);
  g->sweeps = read_each(b, json_object_get(o, "sweeps"), 0, sizeof *g->sweeps,
                        read_sweep, &g->nsweeps);
  g->points = cal_vpoints_of(b, "gemm", o, "points");
}

#define T cal_vtheoretical_t
static const cal_vkey_t theoretical_keys[] = {
    CAL_VNUM(T, gflops), CAL_VNUM(T, gflops_per_core), CAL_VNUM(T, gops),
    CAL_VNUM(T, gops_per_core),
};
#undef T
#define P cal_vpeak_t
static const cal_vkey_t clock_keys[] = {
    CAL_VNUM_K(P, clock.ghz, "ghz"), CAL_VSTR_K(P, clock.method, "method"),
    CAL_VSTR_K(P, clock.variant, "variant"),
};
static const cal_vkey_t model_keys[] = {
    CAL_VNUM_K(P, model.vector_bits, "vector_bits"),
    CAL_VNUM_K(P, model.usable_cores, "usable_cores"),
    CAL_VNUM_K(P, model.ghz, "ghz"),
    CAL_VSTR_K(P, model.assumption, "assumption"),
};
#undef P

static void read_theoretical(cal_vbuild_t *b, void *dst, const char *key,
                             const json_t *o) {
  (void)b;
  cal_vtheoretical_t *t = dst;
  t->dtype = key;
  CAL_VREAD(t, theoretical_keys, o);
}

void cal_compute_peak_read(cal_vbuild_t *b, const json_t *o) {
  cal_vpeak_t *p = &b->v->peak;
  const json_t *model = json_object_get(o, "model");
  p->has = json_is_object(o);
  CAL_VREAD(p, clock_keys, json_object_get(o, "clock"));
  CAL_VREAD(p, model_keys, model);
  p->model.ipc = cal_vfields_of(b->a, model, "ipc");
  p->theoretical = read_each(b, json_object_get(o, "theoretical"), 1,
                             sizeof *p->theoretical, read_theoretical,
                             &p->ntheoretical);
  p->points = cal_vpoints_of(b, "peak", o, "points");
}

#define L cal_vbw_level_t
static const cal_vkey_t level_keys[] = {
    CAL_VNUM(L, level), CAL_VNUM(L, size_bytes), CAL_VNUM(L, cores_sharing),
    CAL_VSTR_K(L, level_str, "level"),
};
#undef L
#define W cal_vbandwidth_t
static const cal_vkey_t bandwidth_keys[] = {
    CAL_VSTR(W, convention), CAL_VSTR(W, working_sets),
};
#undef W

static void read_level(cal_vbuild_t *b, void *dst, const char *key,
                       const json_t *o) {
  (void)b;
  (void)key;
  CAL_VREAD(dst, level_keys, o);
}

void cal_bandwidth_read(cal_vbuild_t *b, const json_t *o) {
  cal_vbandwidth_t *w = &b->v->bandwidth;
  w->has = json_is_object(o);
  CAL_VREAD(w, bandwidth_keys, o);
  w->caches = read_each(b, json_object_get(o, "caches"), 0, sizeof *w->caches,
                        read_level, &w->ncaches);
  w->points = cal_vpoints_of(b, "bandwidth", o, "points");
}

#define R cal_vattn_ref_t
static const cal_vkey_t ref_keys[] = {
    CAL_VNUM(R, gflops), CAL_VSTR(R, source),
};
#undef R

static void read_ref(cal_vbuild_t *b, void *dst, const char *key,
                     const json_t *o) {
  (void)b;
  cal_vattn_ref_t *r = dst;
  r->key = key;
  CAL_VREAD(r, ref_keys, o);
}

void cal_attention_read(cal_vbuild_t *b, const json_t *o) {
  cal_vattention_t *t = &b->v->attention;
  t->has = json_is_object(o);
  t->flops_note = cal_vstr_of(o, "flops_note");
  t->refs = read_each(b, json_object_get(o, "gemm_reference"), 1, sizeof *t->refs,
                      read_ref, &t->nrefs);
  t->points = cal_vpoints_of(b, "attention", o, "points");
}

#define K cal_vroof_kernel_t
static const cal_vkey_t roof_kernel_keys[] = {
    CAL_VSTR(K, kernel),         CAL_VSTR(K, dtype),
    CAL_VSTR(K, variant),        CAL_VSTR(K, level),
    CAL_VSTR(K, bound),          CAL_VNUM(K, threads),
    CAL_VNUM(K, intensity_flop_per_byte), CAL_VNUM(K, gflops),
    CAL_VNUM(K, attainable_gflops), CAL_VNUM(K, ceiling_gbps),
    CAL_VNUM(K, ceiling_gflops), CAL_VNUM(K, efficiency),
};
#undef K
/* The roofline's objects keyed by dtype or level. */
static const struct {
  const char *key;
  size_t off;
} roof_maps[] = {
#define F(f) {#f, offsetof(cal_vroofline_t, f)}
    F(compute_gflops), F(compute_kernel), F(theoretical_gflops),
    F(matrix_gflops), F(matrix_kernel), F(theoretical_matrix_gflops),
    F(bandwidth_gbps), F(bandwidth_kernel), F(efficiencies),
#undef F
};

static void read_roof_kernel(cal_vbuild_t *b, void *dst, const char *key,
                             const json_t *o) {
  (void)b;
  (void)key;
  CAL_VREAD(dst, roof_kernel_keys, o);
}

static void read_ridge(cal_vbuild_t *b, void *dst, const char *key,
                       const json_t *o) {
  cal_vridge_t *r = dst;
  r->dtype = key;
  r->level = cal_vfields_members(b->a, o);
}

void cal_roofline_read(cal_vbuild_t *b, const json_t *o) {
  cal_vroofline_t *r = &b->v->roofline;
  r->has = json_is_object(o);
  r->threads = cal_vnum_of(o, "threads");
  for (size_t i = 0; i < sizeof roof_maps / sizeof roof_maps[0]; i++)
    *(cal_vfields_t *)((char *)r + roof_maps[i].off) =
        cal_vfields_of(b->a, o, roof_maps[i].key);
  r->ridge = read_each(b, json_object_get(o, "ridge_flop_per_byte"), 1,
                       sizeof *r->ridge, read_ridge, &r->nridge);
  r->kernels = read_each(b, json_object_get(o, "kernels"), 0, sizeof *r->kernels,
                         read_roof_kernel, &r->nkernels);
}

#define R cal_vrecommend_t
static const cal_vkey_t recommend_keys[] = {
    CAL_VNUM(R, batch_size), CAL_VNUM(R, accumulation_steps),
    CAL_VNUM(R, effective_batch), CAL_VNUM(R, target_effective_batch),
    CAL_VBOOL(R, exact), CAL_VSTR(R, note),
};
#undef R
#define M cal_vbatch_mode_t
static const cal_vkey_t mode_keys[] = {
    CAL_VSTR(M, status),       CAL_VSTR(M, stop_reason),
    CAL_VSTR(M, shape),        CAL_VSTR(M, workload),
    CAL_VSTR(M, optimizer),    CAL_VNUM(M, peak_batch_size),
    CAL_VNUM(M, peak_examples_per_s), CAL_VNUM(M, knee_batch_size),
    CAL_VNUM(M, optimal_batch_size), CAL_VNUM(M, latency_ms_batch_1),
    CAL_VNUM(M, degradation_pct), CAL_VNUM(M, rise_pct),
    CAL_VNUM(M, worst_batch_size), CAL_VNUM(M, worst_drop_pct),
    CAL_VNUM(M, time_s),       CAL_VNUM(M, layers),
    CAL_VNUM(M, layers_measured), CAL_VNUM(M, scaled_from_layers),
    CAL_VNUM(M, vocab),        CAL_VNUM(M, model_params),
    CAL_VNUM(M, model_state_bytes), CAL_VNUM(M, memory_read_gbps),
    CAL_VNUM(M, activation_bytes_per_example),
    CAL_VNUM(M, activation_bytes_per_example_checkpointed),
};
#undef M
#define S cal_vbatch_sweep_t
static const cal_vkey_t batch_keys[] = {
    CAL_VSTR(S, dtype),          CAL_VSTR(S, engine),
    CAL_VSTR(S, optimize),       CAL_VSTR(S, top_level_mode),
    CAL_VSTR(S, flops_note),     CAL_VNUM(S, tolerance_pct),
    CAL_VNUM(S, target_effective_batch), CAL_VNUM(S, time_budget_s),
    CAL_VNUM(S, memory_budget_bytes),
};
static const cal_vkey_t batch_model_keys[] = {
    CAL_VSTR_K(S, model.preset, "preset"),
    CAL_VNUM_K(S, model.hidden, "hidden"),
    CAL_VNUM_K(S, model.heads, "heads"),
    CAL_VNUM_K(S, model.kv_heads, "kv_heads"),
    CAL_VNUM_K(S, model.head_dim, "head_dim"),
    CAL_VNUM_K(S, model.ffn, "ffn"),
    CAL_VNUM_K(S, model.seq, "seq"),
    CAL_VNUM_K(S, model.weights_bytes, "weights_bytes"),
};
#undef S

static void read_mode(cal_vbuild_t *b, void *dst, const char *key,
                      const json_t *o) {
  cal_vbatch_mode_t *m = dst;
  const json_t *rec = json_object_get(o, "recommendation");
  m->name = key;
  CAL_VREAD(m, mode_keys, o);
  m->tied_batch_sizes = cal_vnums_of(b->a, o, "tied_batch_sizes", &m->ntied);
  m->recommendation.has = json_is_object(rec);
  CAL_VREAD(&m->recommendation, recommend_keys, rec);
  m->points = cal_vpoints_of(b, "batch_sweep", o, "points");
  m->fields = cal_vfields_members(b->a, o);
}

void cal_batch_read(cal_vbuild_t *b, const json_t *o) {
  cal_vbatch_sweep_t *s = &b->v->batch_sweep;
  const json_t *model = json_object_get(o, "model");
  s->has = json_is_object(o);
  CAL_VREAD(s, batch_keys, o);
  s->model.has = json_is_object(model);
  CAL_VREAD(s, batch_model_keys, model);
  s->modes = read_each(b, json_object_get(o, "modes"), 1, sizeof *s->modes,
                       read_mode, &s->nmodes);
}

void cal_scaling_read(cal_vbuild_t *b, const json_t *o) {
  cal_vscaling_t *s = &b->v->scaling;
  s->has = json_is_object(o);
  s->n = cal_vnum_of(o, "n");
  s->points = cal_vpoints_of(b, "scaling", o, "points");
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
