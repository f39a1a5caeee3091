/* The profile view (view.h): the top level, the machine and every
 * measured point; the sections' own views are in view_sections.c. */
#include "view_read.h"

#include <math.h>
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

#define P cal_vpoint_t
static const cal_vkey_t point_keys[] = {
    CAL_VSTR(P, id), CAL_VSTR(P, status), CAL_VSTR(P, reason),
    CAL_VSTR(P, metric), CAL_VBOOL(P, higher_is_better), CAL_VNUM(P, time_ms),
    CAL_VBOOL(P, contaminated), CAL_VBOOL(P, remeasured),
    CAL_VBOOL(P, throttled), CAL_VBOOL(P, pinned), CAL_VSTR(P, kernel),
    CAL_VSTR(P, variant), CAL_VSTR(P, dtype), CAL_VSTR(P, engine),
    CAL_VSTR(P, impl), CAL_VSTR(P, confirms), CAL_VSTR(P, role_of),
    CAL_VSTR(P, level), CAL_VBOOL(P, causal), CAL_VNUM(P, threads),
    CAL_VNUM(P, iterations_per_sample), CAL_VNUM(P, iters), CAL_VNUM(P, m),
    CAL_VNUM(P, n), CAL_VNUM(P, k), CAL_VNUM(P, batch_size),
    CAL_VNUM(P, working_set_bytes), CAL_VNUM(P, heads), CAL_VNUM(P, kv_heads),
    CAL_VNUM(P, head_dim), CAL_VNUM(P, nq), CAL_VNUM(P, nk),
    CAL_VNUM(P, batch), CAL_VNUM(P, gflops), CAL_VNUM(P, gops),
    CAL_VNUM(P, gbps), CAL_VNUM(P, examples_per_s), CAL_VNUM(P, tokens_per_s),
    CAL_VNUM(P, latency_ms), CAL_VNUM(P, efficiency), CAL_VNUM(P, speedup),
    CAL_VNUM(P, gflops_per_thread), CAL_VNUM(P, ratio_to_gemm),
    CAL_VNUM(P, speedup_vs_reference), CAL_VNUM(P, bytes_per_run),
    CAL_VNUM(P, flops_per_run), CAL_VNUM(P, memory_bytes),
};
#undef P

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

cal_vpoints_t cal_vpoints_of(cal_vbuild_t *b, const char *section,
                             const json_t *o, const char *k) {
  const json_t *arr = json_object_get(o, k), *x;
  cal_vpoints_t r = {NULL, 0};
  size_t i, at = 0, n = b->v->npoints;
  if (!(r.p = cal_varena_alloc(b->a, json_array_size(arr), sizeof *r.p)))
    return r;
  json_array_foreach(arr, i, x) {
    const cal_vpoint_t *found = NULL;
    /* points come in document order: search on from the last one found */
    for (size_t j = 0; j < n && !found; j++)
      if (b->nodes[(at + j) % n] == x) {
        at = (at + j) % n;
        found = &b->v->points[at++];
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

#define M cal_vmachine_t
static const cal_vkey_t machine_keys[] = {
    CAL_VSTR(M, hostname), CAL_VSTR(M, os), CAL_VSTR(M, affinity),
    CAL_VNUM(M, usable_cores), CAL_VNUM(M, allowed_cores),
    CAL_VNUM(M, allowed_hardware_threads), CAL_VNUM(M, cgroup_cpu_quota),
};
static const cal_vkey_t cpu_keys[] = {
    CAL_VSTR_K(M, cpu.arch, "arch"),     CAL_VSTR_K(M, cpu.vendor, "vendor"),
    CAL_VSTR_K(M, cpu.brand, "brand"),   CAL_VNUM_K(M, cpu.family, "family"),
    CAL_VNUM_K(M, cpu.model, "model"),   CAL_VNUM_K(M, cpu.stepping, "stepping"),
};
static const cal_vkey_t topology_keys[] = {
    CAL_VNUM_K(M, topology.packages, "packages"),
    CAL_VNUM_K(M, topology.cores, "cores"),
    CAL_VNUM_K(M, topology.hardware_threads, "hardware_threads"),
    CAL_VNUM_K(M, topology.numa_nodes, "numa_nodes"),
};
static const cal_vkey_t memory_keys[] = {
    CAL_VNUM_K(M, memory.total_bytes, "total_bytes"),
    CAL_VNUM_K(M, memory.available_bytes, "available_bytes"),
    CAL_VNUM_K(M, memory.cgroup_limit_bytes, "cgroup_limit_bytes"),
};
static const cal_vkey_t clock_keys[] = {
    CAL_VNUM_K(M, clocks.base_mhz, "base_mhz"),
    CAL_VNUM_K(M, clocks.max_mhz, "max_mhz"),
    CAL_VSTR_K(M, clocks.governor, "governor"),
};
#undef M
#define C cal_vcache_t
static const cal_vkey_t cache_keys[] = {
    CAL_VNUM(C, level), CAL_VNUM(C, size_bytes), CAL_VNUM(C, line_bytes),
    CAL_VNUM(C, instances), CAL_VNUM(C, cores_sharing), CAL_VSTR(C, type),
};
#undef C

static void read_machine(cal_varena_t *a, cal_vmachine_t *m,
                         const json_t *mj) {
  const json_t *cpu = json_object_get(mj, "cpu");
  const json_t *caches = json_object_get(mj, "caches"), *c;
  size_t i;
  m->has = json_is_object(mj);
  CAL_VREAD(m, machine_keys, mj);
  CAL_VREAD(m, cpu_keys, cpu);
  CAL_VREAD(m, topology_keys, json_object_get(mj, "topology"));
  CAL_VREAD(m, memory_keys, json_object_get(mj, "memory"));
  CAL_VREAD(m, clock_keys, json_object_get(mj, "clocks"));
  m->cpu.isa = cal_vstrings_of(a, cpu, "isa");
  m->has_caches = json_is_array(caches);
  m->caches = cal_varena_alloc(a, json_array_size(caches), sizeof *m->caches);
  json_array_foreach(m->caches ? caches : NULL, i, c)
    CAL_VREAD(&m->caches[m->ncaches++], cache_keys, c);
}

#define B cal_vblas_t
static const cal_vkey_t blas_keys[] = {
    CAL_VSTR(B, library),  CAL_VSTR(B, version),
    CAL_VSTR(B, config),   CAL_VSTR(B, coretype),
    CAL_VSTR(B, coretype_source), CAL_VSTR(B, coretype_library_choice),
    CAL_VSTR(B, parallel), CAL_VNUM(B, threads),
};
#undef B
#define S cal_vsettings_t
static const cal_vkey_t settings_keys[] = {
    CAL_VBOOL(S, quick),         CAL_VBOOL(S, ci),
    CAL_VNUM(S, threads),        CAL_VNUM(S, samples),
    CAL_VNUM(S, rounds),         CAL_VNUM(S, seed),
    CAL_VNUM(S, min_sample_s),   CAL_VNUM(S, warmup_s),
    CAL_VNUM(S, cv_threshold),   CAL_VNUM(S, ci_level),
    CAL_VNUM(S, timer_resolution_s), CAL_VNUM(S, budget_scale),
    CAL_VSTR(S, gemm_engine),
};
#undef S
#define Q cal_vquality_t
static const cal_vkey_t quality_keys[] = {
    CAL_VBOOL(Q, noisy),           CAL_VBOOL(Q, allow_busy),
    CAL_VNUM(Q, unstable_points),  CAL_VNUM(Q, failed_points),
    CAL_VNUM(Q, contaminated_points), CAL_VNUM(Q, remeasured_points),
    CAL_VNUM(Q, elapsed_s),        CAL_VNUM(Q, remeasure_s),
    CAL_VNUM(Q, watch_s),
};
#undef Q
#define V cal_profile_view_t
static const cal_vkey_t top_keys[] = {
    CAL_VSTR(V, schema),          CAL_VSTR(V, device_name),
    CAL_VSTR(V, device),          CAL_VSTR(V, created),
    CAL_VSTR(V, headline_status), CAL_VNUM(V, gflops),
    CAL_VNUM(V, gflops_per_core), CAL_VNUM(V, optimal_batch_size),
    CAL_VNUM(V, throughput),      CAL_VNUM(V, memory_gb),
    CAL_VNUM(V, latency_ms),
};
static const cal_vkey_t batch_source_keys[] = {
    CAL_VSTR_K(V, batch_source.mode, "mode"),
    CAL_VSTR_K(V, batch_source.dtype, "dtype"),
    CAL_VSTR_K(V, batch_source.engine, "engine"),
    CAL_VSTR_K(V, batch_source.preset, "preset"),
    CAL_VSTR_K(V, batch_source.workload, "workload"),
    CAL_VNUM_K(V, batch_source.hidden, "hidden"),
    CAL_VNUM_K(V, batch_source.seq, "seq"),
};
#undef V

static void read_top(cal_varena_t *a, cal_profile_view_t *v,
                     const json_t *r) {
  const json_t *bs = json_object_get(r, "batch_source");
  const json_t *settings = json_object_get(r, "settings");
  const json_t *quality = json_object_get(r, "quality");
  CAL_VREAD(v, top_keys, r);
  cal_vtool_read(&v->tool, json_object_get(r, "tool"));
  v->batch_source.has = json_is_object(bs);
  CAL_VREAD(v, batch_source_keys, bs);
  v->headline_null_reasons = cal_vfields_of(a, r, "headline_null_reasons");
  read_machine(a, &v->machine, json_object_get(r, "machine"));
  v->blas.has = json_is_object(json_object_get(r, "blas"));
  CAL_VREAD(&v->blas, blas_keys, json_object_get(r, "blas"));
  v->settings.has = json_is_object(settings);
  CAL_VREAD(&v->settings, settings_keys, settings);
  v->settings.fields = cal_vfields_members(a, settings);
  v->quality.has = json_is_object(quality);
  CAL_VREAD(&v->quality, quality_keys, quality);
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
  cal_vbuild_t b = {a, v, calloc(n ? n : 1, sizeof *b.nodes)};
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
    if (top_keys[i].kind == CAL_VK_NUM && strcmp(top_keys[i].key, key) == 0)
      return (const cal_vnum_t *)((const char *)v + top_keys[i].off);
  return NULL;
}
