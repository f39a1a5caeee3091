/* The profile view (view.h): the top level, the machine and every
 * measured point; the sections' own views are in view_sections.c. */
#include "view_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

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

void cal_vpoint_read(cal_varena_t *a, cal_vpoint_t *p, const char *section,
                     const json_t *pt) {
  char key[128];
  p->section = section;
  p->id = cal_vstr_of(pt, "id");
  p->status = cal_vstr_of(pt, "status");
  p->reason = cal_vstr_of(pt, "reason");
  p->metric = cal_vstr_of(pt, "metric");
  p->higher_is_better = cal_vbool_of(pt, "higher_is_better");
  p->higher_better = p->higher_is_better;
  if (p->higher_better == CAL_VABSENT) {
    size_t len = p->metric ? strlen(p->metric) : 0;
    p->higher_better = !(p->metric && (strcmp(p->metric, "ms") == 0 ||
                                       (len > 3 && strcmp(p->metric + len - 3, "_ms") == 0)));
  }
  p->value = cal_vnum_val(p->metric ? json_object_get(pt, p->metric) : NULL);
  if (p->metric) {
    snprintf(key, sizeof key, "samples_%s", p->metric);
    p->samples = cal_vsamples_of(a, pt, key);
  }
  p->stats = cal_vstats_of(pt, "stats");
  p->time_ms = cal_vnum_of(pt, "time_ms");
  p->samples_ms = cal_vsamples_of(a, pt, "samples_ms");
  p->contaminated = cal_vbool_of(pt, "contaminated");
  p->remeasured = cal_vbool_of(pt, "remeasured");
  p->throttled = cal_vbool_of(pt, "throttled");
  p->pinned = cal_vbool_of(pt, "pinned");
  p->kernel = cal_vstr_of(pt, "kernel");
  p->variant = cal_vstr_of(pt, "variant");
  p->dtype = cal_vstr_of(pt, "dtype");
  p->engine = cal_vstr_of(pt, "engine");
  p->impl = cal_vstr_of(pt, "impl");
  p->confirms = cal_vstr_of(pt, "confirms");
  p->role_of = cal_vstr_of(pt, "role_of");
  p->level = cal_vstr_of(pt, "level");
  p->causal = cal_vbool_of(pt, "causal");
  static const struct {
    const char *key;
    size_t off;
  } nums[] = {
#define N(f) {#f, offsetof(cal_vpoint_t, f)}
      N(threads), N(iterations_per_sample), N(iters), N(m), N(n), N(k),
      N(batch_size), N(working_set_bytes), N(heads), N(kv_heads),
      N(head_dim), N(nq), N(nk), N(batch), N(gflops), N(gops), N(gbps),
      N(examples_per_s), N(tokens_per_s), N(latency_ms), N(efficiency),
      N(speedup), N(gflops_per_thread), N(ratio_to_gemm),
      N(speedup_vs_reference), N(bytes_per_run), N(flops_per_run),
      N(memory_bytes),
#undef N
  };
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    *(cal_vnum_t *)((char *)p + nums[i].off) = cal_vnum_of(pt, nums[i].key);
  p->params = cal_vfields_members(a, pt);
  read_figure_samples(a, p, pt);
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

static void read_machine(cal_varena_t *a, cal_vmachine_t *m,
                         const json_t *mj) {
  const json_t *cpu = json_object_get(mj, "cpu");
  const json_t *topo = json_object_get(mj, "topology");
  const json_t *mem = json_object_get(mj, "memory");
  const json_t *clk = json_object_get(mj, "clocks");
  const json_t *caches = json_object_get(mj, "caches"), *c;
  size_t i;
  m->has = json_is_object(mj);
  m->hostname = cal_vstr_of(mj, "hostname");
  m->os = cal_vstr_of(mj, "os");
  m->affinity = cal_vstr_of(mj, "affinity");
  m->cpu.arch = cal_vstr_of(cpu, "arch");
  m->cpu.vendor = cal_vstr_of(cpu, "vendor");
  m->cpu.brand = cal_vstr_of(cpu, "brand");
  m->cpu.family = cal_vnum_of(cpu, "family");
  m->cpu.model = cal_vnum_of(cpu, "model");
  m->cpu.stepping = cal_vnum_of(cpu, "stepping");
  m->cpu.isa = cal_vstrings_of(a, cpu, "isa");
  m->topology.packages = cal_vnum_of(topo, "packages");
  m->topology.cores = cal_vnum_of(topo, "cores");
  m->topology.hardware_threads = cal_vnum_of(topo, "hardware_threads");
  m->topology.numa_nodes = cal_vnum_of(topo, "numa_nodes");
  m->usable_cores = cal_vnum_of(mj, "usable_cores");
  m->allowed_cores = cal_vnum_of(mj, "allowed_cores");
  m->allowed_hardware_threads = cal_vnum_of(mj, "allowed_hardware_threads");
  m->cgroup_cpu_quota = cal_vnum_of(mj, "cgroup_cpu_quota");
  m->memory.total_bytes = cal_vnum_of(mem, "total_bytes");
  m->memory.available_bytes = cal_vnum_of(mem, "available_bytes");
  m->memory.cgroup_limit_bytes = cal_vnum_of(mem, "cgroup_limit_bytes");
  m->clocks.base_mhz = cal_vnum_of(clk, "base_mhz");
  m->clocks.max_mhz = cal_vnum_of(clk, "max_mhz");
  m->clocks.governor = cal_vstr_of(clk, "governor");
  m->has_caches = json_is_array(caches);
  m->caches = cal_varena_alloc(a, json_array_size(caches), sizeof *m->caches);
  json_array_foreach(m->caches ? caches : NULL, i, c) {
    cal_vcache_t *x = &m->caches[m->ncaches++];
    x->level = cal_vnum_of(c, "level");
    x->size_bytes = cal_vnum_of(c, "size_bytes");
    x->line_bytes = cal_vnum_of(c, "line_bytes");
    x->instances = cal_vnum_of(c, "instances");
    x->cores_sharing = cal_vnum_of(c, "cores_sharing");
    x->type = cal_vstr_of(c, "type");
  }
}

static void read_blas(cal_vblas_t *b, const json_t *o) {
  b->has = json_is_object(o);
  b->library = cal_vstr_of(o, "library");
  b->version = cal_vstr_of(o, "version");
  b->config = cal_vstr_of(o, "config");
  b->coretype = cal_vstr_of(o, "coretype");
  b->coretype_source = cal_vstr_of(o, "coretype_source");
  b->coretype_library_choice = cal_vstr_of(o, "coretype_library_choice");
  b->parallel = cal_vstr_of(o, "parallel");
  b->threads = cal_vnum_of(o, "threads");
}

static void read_settings(cal_varena_t *a, cal_vsettings_t *s,
                          const json_t *o) {
  s->has = json_is_object(o);
  s->quick = cal_vbool_of(o, "quick");
  s->ci = cal_vbool_of(o, "ci");
  s->threads = cal_vnum_of(o, "threads");
  s->samples = cal_vnum_of(o, "samples");
  s->rounds = cal_vnum_of(o, "rounds");
  s->seed = cal_vnum_of(o, "seed");
  s->min_sample_s = cal_vnum_of(o, "min_sample_s");
  s->warmup_s = cal_vnum_of(o, "warmup_s");
  s->cv_threshold = cal_vnum_of(o, "cv_threshold");
  s->ci_level = cal_vnum_of(o, "ci_level");
  s->timer_resolution_s = cal_vnum_of(o, "timer_resolution_s");
  s->budget_scale = cal_vnum_of(o, "budget_scale");
  s->gemm_engine = cal_vstr_of(o, "gemm_engine");
  s->fields = cal_vfields_members(a, o);
}

static void read_quality(cal_varena_t *a, cal_vquality_t *q,
                         const json_t *o) {
  q->has = json_is_object(o);
  q->noisy = cal_vbool_of(o, "noisy");
  q->allow_busy = cal_vbool_of(o, "allow_busy");
  q->unstable_points = cal_vnum_of(o, "unstable_points");
  q->failed_points = cal_vnum_of(o, "failed_points");
  q->contaminated_points = cal_vnum_of(o, "contaminated_points");
  q->remeasured_points = cal_vnum_of(o, "remeasured_points");
  q->elapsed_s = cal_vnum_of(o, "elapsed_s");
  q->remeasure_s = cal_vnum_of(o, "remeasure_s");
  q->watch_s = cal_vnum_of(o, "watch_s");
  q->warnings = cal_vstrings_of(a, o, "warnings");
  q->section_times_s = cal_vfields_of(a, o, "section_times_s");
}

static void read_top(cal_varena_t *a, cal_profile_view_t *v,
                     const json_t *r) {
  const json_t *tool = json_object_get(r, "tool");
  const json_t *bs = json_object_get(r, "batch_source");
  v->schema = cal_vstr_of(r, "schema");
  v->device_name = cal_vstr_of(r, "device_name");
  v->device = cal_vstr_of(r, "device");
  v->created = cal_vstr_of(r, "created");
  v->headline_status = cal_vstr_of(r, "headline_status");
  v->tool.name = cal_vstr_of(tool, "name");
  v->tool.version = cal_vstr_of(tool, "version");
  v->tool.git = cal_vstr_of(tool, "git");
  v->gflops = cal_vnum_of(r, "gflops");
  v->gflops_per_core = cal_vnum_of(r, "gflops_per_core");
  v->optimal_batch_size = cal_vnum_of(r, "optimal_batch_size");
  v->throughput = cal_vnum_of(r, "throughput");
  v->memory_gb = cal_vnum_of(r, "memory_gb");
  v->latency_ms = cal_vnum_of(r, "latency_ms");
  v->batch_source.has = json_is_object(bs);
  v->batch_source.mode = cal_vstr_of(bs, "mode");
  v->batch_source.dtype = cal_vstr_of(bs, "dtype");
  v->batch_source.engine = cal_vstr_of(bs, "engine");
  v->batch_source.preset = cal_vstr_of(bs, "preset");
  v->batch_source.workload = cal_vstr_of(bs, "workload");
  v->batch_source.hidden = cal_vnum_of(bs, "hidden");
  v->batch_source.seq = cal_vnum_of(bs, "seq");
  v->headline_null_reasons = cal_vfields_of(a, r, "headline_null_reasons");
  read_machine(a, &v->machine, json_object_get(r, "machine"));
  read_blas(&v->blas, json_object_get(r, "blas"));
  read_settings(a, &v->settings, json_object_get(r, "settings"));
  read_quality(a, &v->quality, json_object_get(r, "quality"));
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
  cal_varena_t *a = cal_varena_new();
  cal_profile_view_t *v = a ? cal_varena_alloc(a, 1, sizeof *v) : NULL;
  size_t n = 0;
  *out = NULL;
  if (!v) {
    cal_varena_free(a);
    return CAL_ENOMEM;
  }
  v->arena = a;
  cal_profile_each_point(root, count_point, &n);
  cal_vbuild_t b = {a, v, calloc(n ? n : 1, sizeof *b.nodes)};
  v->points = cal_varena_alloc(a, n, sizeof *v->points);
  if (!b.nodes || (n && !v->points)) {
    free(b.nodes);
    cal_varena_free(a);
    return CAL_ENOMEM;
  }
  cal_profile_each_point(root, add_point, &b);
  order_by_document(a, v, root);
  read_top(a, v, root);
  cal_vsections_read(&b, root);
  free(b.nodes);
  if (a->failed) {
    cal_varena_free(a);
    return CAL_ENOMEM;
  }
  *out = v;
  return 0;
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
  static const struct {
    const char *key;
    size_t off;
  } figs[] = {
#define F(f) {#f, offsetof(cal_profile_view_t, f)}
      F(gflops), F(gflops_per_core), F(optimal_batch_size), F(throughput),
      F(memory_gb), F(latency_ms),
#undef F
  };
  for (size_t i = 0; key && i < sizeof figs / sizeof figs[0]; i++)
    if (strcmp(figs[i].key, key) == 0)
      return (const cal_vnum_t *)((const char *)v + figs[i].off);
  return NULL;
}
