/* The profile's "machine" and "blas" objects (also `calibrate info
 * --json`), from what hwinfo read. */
#include <jansson.h>

#include "machine_json.h"

static json_t *str_or_null(const char *s) {
  return s && *s ? json_string(s) : json_null();
}

static json_t *num_or_null(double v) {
  return v > 0 ? json_real(v) : json_null();
}

json_t *cal_hwinfo_machine_json(const cal_hwinfo_t *hw) {
  json_t *isa = json_array();
  const char *name;
  uint32_t bit;
  for (size_t i = 0; (name = cal_isa_name_at(i, &bit)) != NULL; i++)
    if (hw->isa & bit)
      json_array_append_new(isa, json_string(name));
  json_t *caches = json_array();
  for (int i = 0; i < hw->ncaches; i++) {
    const cal_cache_info_t *c = &hw->caches[i];
    json_array_append_new(
        caches, json_pack("{s:i, s:s, s:I, s:i, s:i, s:i}", "level", c->level,
                          "type", c->type, "size_bytes", (json_int_t)c->size_bytes,
                          "line_bytes", c->line_bytes, "instances", c->instances,
                          "cores_sharing", c->cores_sharing));
  }
  json_t *m = json_pack(
      "{s:s, s:s, s:{s:s, s:o, s:s, s:i, s:i, s:i, s:o},"
      " s:{s:i, s:i, s:i, s:i},"
      " s:i, s:i, s:i, s:o, s:s, s:o,"
      " s:{s:I, s:I, s:o}, s:{s:o, s:o, s:o}}",
      "hostname", hw->hostname, "os", hw->os,
      "cpu", "arch", hw->arch, "vendor", str_or_null(hw->vendor), "brand",
      hw->brand[0] ? hw->brand : "unknown", "family", hw->family, "model", hw->model,
      "stepping", hw->stepping, "isa", isa,
      "topology", "packages", hw->packages, "cores", hw->cores,
      "hardware_threads", hw->pus, "numa_nodes", hw->numa_nodes,
      "usable_cores", hw->usable_cores, "allowed_cores", hw->allowed_cores,
      "allowed_hardware_threads", hw->allowed_pus, "cgroup_cpu_quota",
      hw->cgroup_quota_cpus > 0 ? json_real(hw->cgroup_quota_cpus) : json_null(),
      "affinity", hw->affinity, "caches", caches,
      "memory", "total_bytes", (json_int_t)hw->mem_total_bytes,
      "available_bytes", (json_int_t)hw->mem_available_bytes,
      "cgroup_limit_bytes",
      hw->cgroup_mem_limit_bytes ? json_integer((json_int_t)hw->cgroup_mem_limit_bytes)
                                 : json_null(),
      "clocks", "governor", str_or_null(hw->governor), "max_mhz",
      num_or_null(hw->max_mhz), "base_mhz", num_or_null(hw->base_mhz));
  if (m && json_object_set_new(json_object_get(m, "memory"),
                               "transparent_hugepage", str_or_null(hw->thp)) < 0) {
    json_decref(m);
    return NULL;
  }
  return m;
}

json_t *cal_hwinfo_blas_json(const cal_hwinfo_t *hw) {
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:i}", "library",
                   hw->blas_library, "version", hw->blas_version, "config",
                   hw->blas_config, "coretype", hw->blas_coretype,
                   "coretype_source", hw->blas_coretype_source,
                   "coretype_library_choice", str_or_null(hw->blas_coretype_library),
                   "parallel", hw->blas_parallel, "threads", hw->blas_threads);
}
