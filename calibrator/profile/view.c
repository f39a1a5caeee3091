/* The profile view (view.h): the top level, the machine and every
 * measured point; the sections' own views are in view_sections.c. */
#include "view_read.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "section_view.h"

/* Every "samples_<figure>" array of pt. */
static void read_figure_samples(cal_varena_t *a, cal_vpoint_t *p,
                                const json_t *pt) {
  static const char pre[] = "samples_";
  const char *key;
  json_t *x;
  size_t n = 0;
  json_object_foreach((json_t *)pt, key, x) n += json_is_array(x) &&
                                                  strncmp(key, pre, sizeof pre - 1) == 0;
  if (!(p->figure_samples = cal_varena_alloc(a, n, sizeof *p->figure_samples)))
    return;
  json_object_foreach((json_t *)pt, key, x) {
    if (!json_is_array(x) || strncmp(key, pre, sizeof pre - 1))
      continue;
    cal_vfigure_samples_t *f = &p->figure_samples[p->nfigure_samples++];
    f->figure = key + sizeof pre - 1;
    f->s = cal_vsamples_of(a, pt, key);
  }
}

#define CAL_VT cal_vpoint_t
static const cal_vkey_t point_keys[] = {
    CAL_VS(id) CAL_VS(status) CAL_VS(reason) CAL_VS(metric)
    CAL_VB(higher_is_better) CAL_VN(time_ms) CAL_VB(contaminated)
    CAL_VB(remeasured) CAL_VB(throttled) CAL_VB(pinned) CAL_VS(kernel)
    CAL_VS(variant) CAL_VS(dtype) CAL_VS(engine) CAL_VS(impl) CAL_VS(confirms)
    CAL_VS(role_of) CAL_VS(level) CAL_VB(causal) CAL_VN(threads)
    CAL_VN(iterations_per_sample) CAL_VN(iters) CAL_VN(m) CAL_VN(n) CAL_VN(k)
    CAL_VN(batch_size) CAL_VN(working_set_bytes) CAL_VN(heads) CAL_VN(kv_heads)
    CAL_VN(head_dim) CAL_VN(nq) CAL_VN(nk) CAL_VN(batch) CAL_VN(gflops)
    CAL_VN(gops) CAL_VN(gbps) CAL_VN(examples_per_s) CAL_VN(tokens_per_s)
    CAL_VN(latency_ms) CAL_VN(efficiency) CAL_VN(speedup)
    CAL_VN(gflops_per_thread) CAL_VN(ratio_to_gemm) CAL_VN(speedup_vs_reference)
    CAL_VN(bytes_per_run) CAL_VN(flops_per_run) CAL_VN(memory_bytes)
    CAL_VN(rss_before_bytes) CAL_VN(peak_rss_bytes) CAL_VN(swap_bytes)
    CAL_VN(major_faults) CAL_VB(swapped) CAL_VS(threads_not_parallel)
};
#undef CAL_VT

void cal_vpoint_read(cal_varena_t *a, cal_vpoint_t *p, const char *section,
                     const json_t *pt) {
  p->section = section;
  CAL_VREAD(p, point_keys, pt);
  p->higher_better = p->higher_is_better;
  if (p->higher_better == CAL_VABSENT) {
    size_t len = p->metric ? strlen(p->metric) : 0;
    p->higher_better =
        !(p->metric && (strcmp(p->metric, "ms") == 0 ||
                        (len > 3 && strcmp(p->metric + len - 3, "_ms") == 0)));
  }
  p->value = cal_vnum_val(p->metric ? json_object_get(pt, p->metric) : NULL);
  p->stats = cal_vstats_of(pt, "stats");
  p->params = cal_vfields_members(a, pt);
  read_figure_samples(a, p, pt);
  /* samples_<metric> and samples_ms: the same arrays, not copies */
  const cal_vsamples_t *s = cal_vpoint_samples(p, p->metric);
  if (s)
    p->samples = *s;
  if ((s = cal_vpoint_samples(p, "ms")))
    p->samples_ms = *s;
}

const cal_vsamples_t *cal_vpoint_samples(const cal_vpoint_t *p,
                                         const char *figure) {
  for (size_t i = 0; figure && i < p->nfigure_samples; i++)
    if (strcmp(p->figure_samples[i].figure, figure) == 0)
      return &p->figure_samples[i].s;
  return NULL;
}

/* The walk of cal_profile_each_point, twice: count, then fill. */
static int count_point(const char *section, json_t *pt, void *arg) {
  (void)section;
  (void)pt;
  ++*(size_t *)arg;
  return 0;
}

static int add_point(const char *section, json_t *pt, void *arg) {
  cal_vbuild_t *b = arg;
  size_t i = b->v->npoints++;
  b->nodes[i] = pt;
  cal_vpoint_read(b->a, &b->v->points[i], section, pt);
  return 0;
}

/* A point's node and its index in v->points, sorted by node. */
struct cal_vnode_at {
  uintptr_t node;
  size_t i;
};

static int cmp_node(const void *a, const void *b) {
  uintptr_t x = ((const struct cal_vnode_at *)a)->node;
  uintptr_t y = ((const struct cal_vnode_at *)b)->node;
  return (x > y) - (x < y);
}

/* The index in v->points of the point read from node x, -1 when none:
 * through b->sorted, built on first use. */
static long node_index(cal_vbuild_t *b, const json_t *x) {
  size_t n = b->v->npoints;
  if (!b->sorted && n) {
    if (!(b->sorted = malloc(n * sizeof *b->sorted)))
      return -1; /* then read where it is, as a point outside the list */
    for (size_t i = 0; i < n; i++)
      b->sorted[i] = (struct cal_vnode_at){(uintptr_t)b->nodes[i], i};
    qsort(b->sorted, n, sizeof *b->sorted, cmp_node);
  }
  struct cal_vnode_at key = {(uintptr_t)x, 0};
  const struct cal_vnode_at *hit =
      n ? bsearch(&key, b->sorted, n, sizeof *b->sorted, cmp_node) : NULL;
  return hit ? (long)hit->i : -1;
}

cal_vpoints_t cal_vpoints_of(cal_vbuild_t *b, const char *section,
                             const json_t *o, const char *k) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vpoints_t r = {NULL, 0};
  size_t i, at = 0, n = b->v->npoints;
  if (!(r.p = cal_varena_alloc(b->a, json_array_size(arr), sizeof *r.p)))
    return r;
  json_array_foreach(arr, i, x) {
    const cal_vpoint_t *found = NULL;
    /* points come in document order: the one after the last found, else
     * the sorted index */
    long idx = at < n && b->nodes[at] == x ? (long)at : node_index(b, x);
    if (idx >= 0) {
      found = &b->v->points[idx];
      at = (size_t)idx + 1;
    }
    if (!found) { /* no id or no status: read here, not in the list */
      cal_vpoint_t *p = cal_varena_alloc(b->a, 1, sizeof *p);
      if (p)
        cal_vpoint_read(b->a, p, section, x);
      found = p;
    }
    if (found)
      r.p[r.n++] = found;
  }
  return r;
}

#define CAL_VT cal_vmachine_t
static const cal_vkey_t machine_keys[] = {
    CAL_VS(hostname) CAL_VS(os) CAL_VS(affinity) CAL_VN(usable_cores)
    CAL_VN(allowed_cores) CAL_VN(allowed_hardware_threads)
    CAL_VN(cgroup_cpu_quota)
#define CAL_VIN cpu
    CAL_VSI(arch) CAL_VSI(vendor) CAL_VSI(brand) CAL_VNI(family) CAL_VNI(model)
    CAL_VNI(stepping)
#undef CAL_VIN
#define CAL_VIN topology
    CAL_VNI(packages) CAL_VNI(cores) CAL_VNI(hardware_threads)
    CAL_VNI(numa_nodes)
#undef CAL_VIN
#define CAL_VIN memory
    CAL_VNI(total_bytes) CAL_VNI(available_bytes) CAL_VNI(cgroup_limit_bytes)
#undef CAL_VIN
#define CAL_VIN clocks
    CAL_VNI(base_mhz) CAL_VNI(max_mhz) CAL_VSI(governor)
#undef CAL_VIN
};
#undef CAL_VT
#define CAL_VT cal_vcache_t
static const cal_vkey_t cache_keys[] = {
    CAL_VN(level) CAL_VN(size_bytes) CAL_VN(line_bytes) CAL_VN(instances)
    CAL_VN(cores_sharing) CAL_VS(type)
};
#undef CAL_VT

static void read_machine(cal_varena_t *a, cal_vmachine_t *m,
                         const json_t *mj) {
  static const cal_velems_t caches =
      CAL_VELEMS(cal_vcache_t, cache_keys, CAL_VNO_KEY, NULL);
  cal_vbuild_t b = {a, NULL, NULL, NULL};
  m->has = json_is_object(mj);
  CAL_VREAD(m, machine_keys, mj);
  m->cpu.isa = cal_vstrings_of(a, json_object_get(mj, "cpu"), "isa");
  m->has_caches = json_is_array(json_object_get(mj, "caches"));
  m->caches = cal_vread_each(&b, mj, "caches", &caches, &m->ncaches);
}

#define CAL_VT cal_profile_view_t
static const cal_vkey_t top_keys[] = {
    CAL_VS(schema) CAL_VS(device_name) CAL_VS(device) CAL_VS(created)
    CAL_VS(headline_status) CAL_VN(gflops) CAL_VN(gflops_per_core)
    CAL_VN(optimal_batch_size) CAL_VN(throughput) CAL_VN(memory_gb)
    CAL_VN(latency_ms) CAL_VHAS(batch_source) CAL_VHAS(blas) CAL_VHAS(settings)
    CAL_VHAS(quality)
#define CAL_VIN batch_source
    CAL_VSI(mode) CAL_VSI(dtype) CAL_VSI(engine) CAL_VSI(preset)
    CAL_VSI(workload) CAL_VNI(hidden) CAL_VNI(seq)
    CAL_VBI(optimal_is_lower_bound)
#undef CAL_VIN
#define CAL_VIN blas
    CAL_VSI(library) CAL_VSI(version) CAL_VSI(config) CAL_VSI(coretype)
    CAL_VSI(coretype_source) CAL_VSI(coretype_library_choice) CAL_VSI(parallel)
    CAL_VNI(threads)
#undef CAL_VIN
#define CAL_VIN settings
    CAL_VBI(quick) CAL_VBI(ci) CAL_VNI(threads) CAL_VNI(samples) CAL_VNI(rounds)
    CAL_VNI(seed) CAL_VNI(min_sample_s) CAL_VNI(warmup_s) CAL_VNI(cv_threshold)
    CAL_VNI(ci_level) CAL_VNI(timer_resolution_s) CAL_VNI(budget_scale)
    CAL_VSI(gemm_engine)
#undef CAL_VIN
#define CAL_VIN quality
    CAL_VBI(noisy) CAL_VBI(allow_busy) CAL_VNI(unstable_points)
    CAL_VNI(failed_points) CAL_VNI(contaminated_points)
    CAL_VNI(remeasured_points) CAL_VNI(elapsed_s) CAL_VNI(remeasure_s)
    CAL_VNI(watch_s)
#undef CAL_VIN
};
#undef CAL_VT

static void read_top(cal_varena_t *a, cal_profile_view_t *v,
                     const json_t *r) {
  const json_t *settings = json_object_get(r, "settings");
  const json_t *quality = json_object_get(r, "quality");
  CAL_VREAD(v, top_keys, r);
  cal_vtool_read(&v->tool, json_object_get(r, "tool"));
  v->headline_null_reasons = cal_vfields_of(a, r, "headline_null_reasons");
  read_machine(a, &v->machine, json_object_get(r, "machine"));
  v->settings.fields = cal_vfields_members(a, settings);
  v->quality.warnings = cal_vstrings_of(a, quality, "warnings");
  v->quality.section_times_s = cal_vfields_of(a, quality, "section_times_s");
}

/* doc_points: the sections' runs of points in the file's order of keys. */
static void order_by_document(cal_varena_t *a, cal_profile_view_t *v,
                              const json_t *root) {
  const char *key;
  json_t *x;
  size_t n = 0;
  if (!(v->doc_points = cal_varena_alloc(a, v->npoints, sizeof *v->doc_points)))
    return;
  json_object_foreach((json_t *)root, key, x) {
    for (size_t i = 0; i < v->npoints; i++)
      if (strcmp(v->points[i].section, key) == 0)
        v->doc_points[n++] = &v->points[i];
  }
}

int cal_profile_view_build(const json_t *root, cal_profile_view_t **out) {
  return cal_profile_view_build_with(root, cal_section_readers,
                                     cal_nsection_readers, out);
}

int cal_profile_view_build_with(const json_t *root,
                                const cal_section_reader_t *readers,
                                size_t nreaders, cal_profile_view_t **out) {
  cal_varena_t *a = NULL;
  cal_profile_view_t *v = cal_varena_first(sizeof *v, &a);
  size_t n = 0;
  *out = NULL;
  if (!v)
    return CAL_ENOMEM;
  v->arena = a;
  cal_profile_each_point(root, count_point, &n);
  cal_vbuild_t b = {a, v, calloc(n ? n : 1, sizeof *b.nodes), NULL};
  v->points = cal_varena_alloc(a, n, sizeof *v->points);
  if (b.nodes && !a->failed) {
    cal_profile_each_point(root, add_point, &b);
    order_by_document(a, v, root);
    read_top(a, v, root);
    for (size_t i = 0; i < nreaders; i++)
      readers[i].read(&b, json_object_get(root, readers[i].key));
  } else {
    a->failed = 1;
  }
  free(b.nodes);
  free(b.sorted);
  *out = cal_varena_finish(a, v);
  return *out ? 0 : CAL_ENOMEM;
}

void cal_profile_view_free(cal_profile_view_t *v) {
  if (v)
    cal_varena_free(v->arena);
}

const cal_profile_view_t *cal_profile_view(const cal_profile_t *p) {
  cal_profile_t *mut = (cal_profile_t *)p;
  if (!p)
    return NULL;
  if (!mut->view && cal_profile_view_build(p->root, &mut->view) < 0)
    return NULL;
  return mut->view;
}

const cal_vnum_t *cal_profile_view_figure(const cal_profile_view_t *v,
                                          const char *key) {
  for (size_t i = 0; key && i < sizeof top_keys / sizeof top_keys[0]; i++)
    if (top_keys[i].kind == CAL_VK_NUM && !top_keys[i].in &&
        strcmp(top_keys[i].key, key) == 0)
      return (const cal_vnum_t *)((const char *)v + top_keys[i].off);
  return NULL;
}
