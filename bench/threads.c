#include "threads.h"

#include <cblas.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "cal_file.h"

struct cal_threads {
  hwloc_topology_t topo;
  int owns_topo; /* cal_threads_free() destroys topo */
  hwloc_bitmap_t *core_sets; /* one PU of each allowed core, in order */
  int ncores, npus, usable;
  double quota;
  int pinned;
};

int cal_cgroup_v2_quota(const char *text, double *cpus) {
  char q[32];
  double period;
  if (!text || sscanf(text, "%31s %lf", q, &period) != 2 || period <= 0)
    return CAL_EPARSE;
  if (strcmp(q, "max") == 0) {
    *cpus = 0.0;
    return 0;
  }
  char *end;
  double quota = strtod(q, &end);
  if (*end || quota <= 0)
    return CAL_EPARSE;
  *cpus = quota / period;
  return 0;
}

int cal_cgroup_v1_quota(const char *quota_us, const char *period_us,
                        double *cpus) {
  char *end;
  if (!quota_us || !period_us)
    return CAL_EPARSE;
  double q = strtod(quota_us, &end);
  if (end == quota_us)
    return CAL_EPARSE;
  double p = strtod(period_us, &end);
  if (end == period_us || p <= 0)
    return CAL_EPARSE;
  *cpus = q <= 0 ? 0.0 : q / p;
  return 0;
}

int cal_usable_cores(int allowed_cores, double quota_cpus) {
  int n = allowed_cores < 1 ? 1 : allowed_cores;
  if (quota_cpus > 0.0) {
    int q = (int)ceil(quota_cpus - 1e-9);
    if (q < 1)
      q = 1;
    if (q < n)
      n = q;
  }
  return n;
}

/* The cgroup path of this process: v2 line "0::/path", or the v1 line whose
 * controllers include "cpu". */
static int own_cgroup(const char *root, int v2, char *out, size_t len) {
  char path[4096], line[4096];
  snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  int found = -1;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c2 = '\0';
    const char *ctrls = c1 + 1;
    int match = 0;
    if (v2) {
      match = *ctrls == '\0';
    } else {
      char tmp[256];
      snprintf(tmp, sizeof tmp, ",%s,", ctrls);
      match = strstr(tmp, ",cpu,") != NULL;
    }
    if (match) {
      snprintf(out, len, "%s", c2 + 1);
      found = 0;
      break;
    }
  }
  fclose(f);
  return found;
}

double cal_cgroup_quota_cpus(const char *root) {
  char cg[2048], path[8192], a[128], b[128];
  double best = 0.0, cpus;
  if (!root)
    root = "";
  if (strcmp(root, "/") == 0)
    root = "";
  /* v2: the quota of any ancestor applies; take the tightest. */
  if (own_cgroup(root, 1, cg, sizeof cg) == 0) {
    for (;;) {
      snprintf(path, sizeof path, "%s/sys/fs/cgroup%s/cpu.max", root,
               strcmp(cg, "/") == 0 ? "" : cg);
      if (cal_slurp(path, a, sizeof a) == 0 &&
          cal_cgroup_v2_quota(a, &cpus) == 0 && cpus > 0 &&
          (best == 0.0 || cpus < best))
        best = cpus;
      char *slash = strrchr(cg, '/');
      if (!slash || strcmp(cg, "/") == 0)
        break;
      if (slash == cg)
        strcpy(cg, "/");
      else
        *slash = '\0';
    }
    if (best > 0.0)
      return best;
  }
  /* v1: the cpu controller's directory (inside a container it is usually
   * mounted at the root of the hierarchy). */
  const char *v1dirs[2] = {NULL, ""};
  char own[2048];
  if (own_cgroup(root, 0, own, sizeof own) == 0)
    v1dirs[0] = own;
  for (int i = 0; i < 2; i++) {
    if (!v1dirs[i])
      continue;
    char qp[8192], pp[8192];
    snprintf(qp, sizeof qp, "%s/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", root,
             v1dirs[i]);
    snprintf(pp, sizeof pp, "%s/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", root,
             v1dirs[i]);
    if (cal_slurp(qp, a, sizeof a) == 0 && cal_slurp(pp, b, sizeof b) == 0 &&
        cal_cgroup_v1_quota(a, b, &cpus) == 0 && cpus > 0)
      return cpus;
  }
  return 0.0;
}

int cal_topology_load(hwloc_topology_t *topo) {
  if (hwloc_topology_init(topo) < 0)
    return CAL_ESYS;
  hwloc_topology_set_flags(*topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  hwloc_topology_set_cache_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(*topo) < 0) {
    hwloc_topology_destroy(*topo);
    return CAL_ESYS;
  }
  return 0;
}

int cal_threads_init(cal_threads_t **out) {
  hwloc_topology_t topo;
  int rc = cal_topology_load(&topo);
  if (rc < 0)
    return rc;
  if ((rc = cal_threads_init_topology(out, topo)) < 0) {
    hwloc_topology_destroy(topo);
    return rc;
  }
  (*out)->owns_topo = 1;
  return 0;
}

int cal_usable_cpu_set(cpu_set_t *set) {
  int rc = sched_getaffinity(0, sizeof *set, set) == 0 ? 0 : -1;
  if (rc < 0)
    CPU_ZERO(set);
  for (int p = 0; p < omp_get_num_places(); p++) {
    int n = omp_get_place_num_procs(p), ids[CPU_SETSIZE];
    if (n <= 0 || n > CPU_SETSIZE)
      continue;
    omp_get_place_proc_ids(p, ids);
    for (int i = 0; i < n; i++)
      if (ids[i] >= 0 && ids[i] < CPU_SETSIZE) {
        CPU_SET(ids[i], set);
        rc = 0;
      }
  }
  return rc;
}

int cal_usable_cpuset(hwloc_topology_t topo, hwloc_bitmap_t set) {
  cpu_set_t cpus;
  if (cal_usable_cpu_set(&cpus) < 0 ||
      hwloc_cpuset_from_glibc_sched_affinity(topo, set, &cpus, sizeof cpus) < 0)
    return -1;
  return 0;
}

int cal_threads_init_topology(cal_threads_t **out, hwloc_topology_t topo) {
  cal_threads_t *t = calloc(1, sizeof *t);
  if (!t)
    return CAL_ENOMEM;
  t->topo = topo;
  /* the topology may include disallowed PUs: keep only the bound ones */
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  if (!allowed)
    goto nomem;
  if (cal_usable_cpuset(t->topo, allowed) < 0)
    hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(t->topo));
  int ncores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  t->core_sets = calloc(ncores > 0 ? (size_t)ncores : 1, sizeof *t->core_sets);
  if (!t->core_sets) {
    hwloc_bitmap_free(allowed);
    goto nomem;
  }
  for (int i = 0; i < ncores; i++) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, i);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
      continue;
    hwloc_bitmap_and(set, core->cpuset, allowed);
    if (hwloc_bitmap_iszero(set)) {
      hwloc_bitmap_free(set);
      continue;
    }
    hwloc_bitmap_singlify(set);
    t->core_sets[t->ncores++] = set;
  }
  t->npus = hwloc_bitmap_weight(allowed);
  if (t->ncores == 0) { /* no core objects (odd platform): use the PUs */
    t->ncores = t->npus > 0 ? t->npus : 1;
  }
  hwloc_bitmap_free(allowed);
  t->quota = cal_cgroup_quota_cpus("/");
  t->usable = cal_usable_cores(t->ncores, t->quota);
  *out = t;
  return 0;
nomem:
  cal_threads_free(t);
  return CAL_ENOMEM;
}

void cal_threads_free(cal_threads_t *t) {
  if (!t)
    return;
  if (t->core_sets) {
    for (int i = 0; i < t->ncores; i++)
      hwloc_bitmap_free(t->core_sets[i]);
    free(t->core_sets);
  }
  if (t->owns_topo)
    hwloc_topology_destroy(t->topo);
  free(t);
}

int cal_threads_allowed_cores(const cal_threads_t *t) { return t->ncores; }
int cal_threads_allowed_pus(const cal_threads_t *t) { return t->npus; }
int cal_threads_usable(const cal_threads_t *t) { return t->usable; }
double cal_threads_quota(const cal_threads_t *t) { return t->quota; }
int cal_threads_pinned(const cal_threads_t *t) { return t->pinned; }

int cal_threads_use(cal_threads_t *t, int n) {
  if (n < 1 || n > t->usable)
    return CAL_EINVAL;
  omp_set_dynamic(0);
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  int failures = 0;
  /* Bind every thread of the team; libgomp keeps the same pool threads for
   * later regions of the same size, which BLAS then runs on. */
#pragma omp parallel num_threads(n) reduction(+ : failures)
  {
    int i = omp_get_thread_num();
    hwloc_bitmap_t set = i < t->ncores ? t->core_sets[i] : NULL;
    if (!set || hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD) < 0)
      failures++;
  }
  t->pinned = failures == 0;
  return 0;
}

int cal_threads_cpus(int n, int *cpus) {
  if (n < 1)
    return 0;
  for (int i = 0; i < n; i++)
    cpus[i] = -1;
#pragma omp parallel num_threads(n)
  {
    int i = omp_get_thread_num();
    if (i < n)
      cpus[i] = sched_getcpu();
  }
  return n;
}
