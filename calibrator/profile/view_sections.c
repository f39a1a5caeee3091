/* The section views of a profile (view.h): gemm, scaling, peak,
 * bandwidth, attention, roofline and the batch sweep. */
#include "section_view.h"
#include "view_read.h"

#include <string.h>

#define CAL_VT cal_vgemm_dtype_t
static const cal_vkey_t dtype_keys[] = {
    CAL_VS(kernel) CAL_VS(status) CAL_VS(reason) CAL_VS(metric)
    CAL_VN(best_gflops_1_thread) CAL_VN(best_gflops_all_threads)
    CAL_VN(best_gops_1_thread) CAL_VN(best_gops_all_threads)
};
#undef CAL_VT
#define CAL_VT cal_vgemm_engine_t
static const cal_vkey_t engine_keys[] = {
    CAL_VS(kernel) CAL_VS(status) CAL_VS(reason)
};
#undef CAL_VT
#define CAL_VT cal_vgemm_sweep_t
static const cal_vkey_t sweep_keys[] = {
    CAL_VS(kernel) CAL_VS(engine) CAL_VS(dtype) CAL_VS(stop_reason)
    CAL_VS(best_id) CAL_VS(impl) CAL_VN(threads) CAL_VN(best_n)
    CAL_VN(best_gflops) CAL_VN(best_gops) CAL_VN(best_gflops_in_sweep)
    CAL_VN(best_gops_in_sweep) CAL_VN(budget_s) CAL_VN(time_s)
};
#undef CAL_VT
#define CAL_VT cal_vgemm_t
static const cal_vkey_t gemm_keys[] = {
    CAL_VS(operation) CAL_VS(engine_choice)
#define CAL_VIN onednn
    CAL_VSI(version) CAL_VSI(threading) CAL_VSI(max_isa)
#undef CAL_VIN
};
#undef CAL_VT

static const cal_velems_t engines = CAL_VELEMS(
    cal_vgemm_engine_t, engine_keys, offsetof(cal_vgemm_engine_t, engine),
    NULL);
static const cal_velems_t sweeps =
    CAL_VELEMS(cal_vgemm_sweep_t, sweep_keys, CAL_VNO_KEY, NULL);

static void read_dtype(cal_vbuild_t *b, void *dst, const json_t *o) {
  cal_vgemm_dtype_t *d = dst;
  d->engines = cal_vread_each(b, o, "engines", &engines, &d->nengines);
}
static const cal_velems_t dtypes = CAL_VELEMS(
    cal_vgemm_dtype_t, dtype_keys, offsetof(cal_vgemm_dtype_t, dtype),
    read_dtype);

void cal_gemm_read(cal_vbuild_t *b, const json_t *o) {
  cal_vgemm_t *g = &b->v->gemm;
  g->has = json_is_object(o);
  CAL_VREAD(g, gemm_keys, o);
  g->dtypes = cal_vread_each(b, o, "dtypes", &dtypes, &g->ndtypes);
  g->sweeps = cal_vread_each(b, o, "sweeps", &sweeps, &g->nsweeps);
  g->points = cal_vpoints_of(b, "gemm", o, "points");
}

#define CAL_VT cal_vtheoretical_t
static const cal_vkey_t theoretical_keys[] = {
    CAL_VN(gflops) CAL_VN(gflops_per_core) CAL_VN(gops) CAL_VN(gops_per_core)
};
#undef CAL_VT
#define CAL_VT cal_vpeak_t
static const cal_vkey_t peak_keys[] = {
#define CAL_VIN clock
    CAL_VNI(ghz) CAL_VSI(method) CAL_VSI(variant)
#undef CAL_VIN
#define CAL_VIN model
    CAL_VNI(vector_bits) CAL_VNI(usable_cores) CAL_VNI(ghz) CAL_VSI(assumption)
#undef CAL_VIN
};
#undef CAL_VT

static const cal_velems_t theoretical = CAL_VELEMS(
    cal_vtheoretical_t, theoretical_keys, offsetof(cal_vtheoretical_t, dtype),
    NULL);

void cal_compute_peak_read(cal_vbuild_t *b, const json_t *o) {
  cal_vpeak_t *p = &b->v->peak;
  const json_t *model = json_object_get(o, "model");
  p->has = json_is_object(o);
  CAL_VREAD(p, peak_keys, o);
  p->model.ipc = cal_vfields_of(b->a, model, "ipc");
  p->theoretical = cal_vread_each(b, o, "theoretical", &theoretical,
                             &p->ntheoretical);
  p->points = cal_vpoints_of(b, "peak", o, "points");
}

#define CAL_VT cal_vbw_level_t
static const cal_vkey_t level_keys[] = {
    CAL_VN(level) CAL_VN(size_bytes) CAL_VN(cores_sharing)
    CAL_VKEY(NULL, "level", level_str, CAL_VK_STR)
};
#undef CAL_VT
#define CAL_VT cal_vbandwidth_t
static const cal_vkey_t bandwidth_keys[] = {
    CAL_VS(convention) CAL_VS(working_sets)
};
#undef CAL_VT

static const cal_velems_t levels =
    CAL_VELEMS(cal_vbw_level_t, level_keys, CAL_VNO_KEY, NULL);

void cal_bandwidth_read(cal_vbuild_t *b, const json_t *o) {
  cal_vbandwidth_t *w = &b->v->bandwidth;
  w->has = json_is_object(o);
  CAL_VREAD(w, bandwidth_keys, o);
  w->caches = cal_vread_each(b, o, "caches", &levels, &w->ncaches);
  w->points = cal_vpoints_of(b, "bandwidth", o, "points");
}

#define CAL_VT cal_vattn_ref_t
static const cal_vkey_t ref_keys[] = {
    CAL_VN(gflops) CAL_VS(source)
};
#undef CAL_VT

static const cal_velems_t refs =
    CAL_VELEMS(cal_vattn_ref_t, ref_keys, offsetof(cal_vattn_ref_t, key), NULL);

void cal_attention_read(cal_vbuild_t *b, const json_t *o) {
  cal_vattention_t *t = &b->v->attention;
  t->has = json_is_object(o);
  t->flops_note = cal_vstr_of(o, "flops_note");
  t->refs = cal_vread_each(b, o, "gemm_reference", &refs, &t->nrefs);
  t->refs_bf16 = cal_vread_each(b, o, "gemm_reference_bf16", &refs,
                                &t->nrefs_bf16);
  t->points = cal_vpoints_of(b, "attention", o, "points");
}

#define CAL_VT cal_vroof_kernel_t
static const cal_vkey_t roof_kernel_keys[] = {
    CAL_VS(kernel) CAL_VS(dtype) CAL_VS(variant) CAL_VS(level) CAL_VS(bound)
    CAL_VN(threads) CAL_VN(intensity_flop_per_byte) CAL_VN(gflops)
    CAL_VN(attainable_gflops) CAL_VN(ceiling_gbps) CAL_VN(ceiling_gflops)
    CAL_VN(efficiency)
};
#undef CAL_VT
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

static const cal_velems_t roof_kernels =
    CAL_VELEMS(cal_vroof_kernel_t, roof_kernel_keys, CAL_VNO_KEY, NULL);

static void read_ridge(cal_vbuild_t *b, void *dst, const json_t *o) {
  ((cal_vridge_t *)dst)->level = cal_vfields_members(b->a, o);
}
static const cal_velems_t ridges = {sizeof(cal_vridge_t), NULL, 0,
                               offsetof(cal_vridge_t, dtype), read_ridge};

void cal_roofline_read(cal_vbuild_t *b, const json_t *o) {
  cal_vroofline_t *r = &b->v->roofline;
  r->has = json_is_object(o);
  r->threads = cal_vnum_of(o, "threads");
  for (size_t i = 0; i < sizeof roof_maps / sizeof roof_maps[0]; i++)
    *(cal_vfields_t *)((char *)r + roof_maps[i].off) =
        cal_vfields_of(b->a, o, roof_maps[i].key);
  r->ridge = cal_vread_each(b, o, "ridge_flop_per_byte", &ridges, &r->nridge);
  r->kernels = cal_vread_each(b, o, "kernels", &roof_kernels, &r->nkernels);
}

#define CAL_VT cal_vbatch_mode_t
static const cal_vkey_t mode_keys[] = {
    CAL_VS(status) CAL_VS(stop_reason) CAL_VS(shape) CAL_VS(workload)
    CAL_VS(optimizer) CAL_VN(peak_batch_size) CAL_VN(peak_examples_per_s)
    CAL_VN(knee_batch_size) CAL_VN(optimal_batch_size)
    CAL_VN(latency_ms_batch_1) CAL_VN(degradation_pct) CAL_VN(rise_pct)
    CAL_VN(worst_batch_size) CAL_VN(worst_drop_pct) CAL_VN(time_s)
    CAL_VN(layers) CAL_VN(layers_measured) CAL_VN(scaled_from_layers)
    CAL_VN(vocab) CAL_VN(model_params) CAL_VN(model_state_bytes)
    CAL_VN(memory_read_gbps) CAL_VN(activation_bytes_per_example)
    CAL_VN(activation_bytes_per_example_checkpointed) CAL_VHAS(recommendation)
#define CAL_VIN recommendation
    CAL_VNI(batch_size) CAL_VNI(accumulation_steps) CAL_VNI(effective_batch)
    CAL_VNI(target_effective_batch) CAL_VBI(exact) CAL_VSI(note)
#undef CAL_VIN
};
#undef CAL_VT
#define CAL_VT cal_vbatch_sweep_t
static const cal_vkey_t batch_keys[] = {
    CAL_VS(dtype) CAL_VS(engine) CAL_VS(optimize) CAL_VS(top_level_mode)
    CAL_VS(flops_note) CAL_VN(tolerance_pct) CAL_VN(target_effective_batch)
    CAL_VN(time_budget_s) CAL_VN(memory_budget_bytes) CAL_VHAS(model)
#define CAL_VIN model
    CAL_VSI(preset) CAL_VNI(hidden) CAL_VNI(heads) CAL_VNI(kv_heads)
    CAL_VNI(head_dim) CAL_VNI(ffn) CAL_VNI(seq) CAL_VNI(weights_bytes)
#undef CAL_VIN
};
#undef CAL_VT

static void read_mode(cal_vbuild_t *b, void *dst, const json_t *o) {
  cal_vbatch_mode_t *m = dst;
  m->tied_batch_sizes = cal_vnums_of(b->a, o, "tied_batch_sizes", &m->ntied);
  m->points = cal_vpoints_of(b, "batch_sweep", o, "points");
  m->fields = cal_vfields_members(b->a, o);
}

static const cal_velems_t modes = CAL_VELEMS(
    cal_vbatch_mode_t, mode_keys, offsetof(cal_vbatch_mode_t, name), read_mode);

void cal_batch_read(cal_vbuild_t *b, const json_t *o) {
  cal_vbatch_sweep_t *s = &b->v->batch_sweep;
  s->has = json_is_object(o);
  CAL_VREAD(s, batch_keys, o);
  s->modes = cal_vread_each(b, o, "modes", &modes, &s->nmodes);
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
