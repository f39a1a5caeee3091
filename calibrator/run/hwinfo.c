#include "hwinfo.h"

#include <cblas.h>
#include <ctype.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_file.h"
#include "cal_isa.h"
#include "threads.h"

#if defined(__x86_64__) || defined(__i386__)
#include <libcpuid.h>
#endif

int cal_meminfo_value(const char *text, const char *key, uint64_t *bytes) {
  size_t klen = strlen(key);
  for (const char *line = text; line && *line;) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
      unsigned long long kb;
      if (sscanf(line + klen + 1, "%llu", &kb) == 1) {
        *bytes = (uint64_t)kb * 1024u;
        return 0;
      }
      return CAL_EPARSE;
    }
    line = strchr(line, '\n');
    if (line)
      line++;
  }
  return CAL_ENOTFOUND;
}

static void chomp(char *s) {
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
}

/* A cgroup file's number ("max" and absurd figures: none). */
static int cg_number(const char *path, unsigned long long *v) {
  char buf[64];
  return cal_slurp(path, buf, sizeof buf) == 0 && sscanf(buf, "%llu", v) == 1 &&
                 *v < (1ULL << 60)
             ? 0
             : CAL_ENOTFOUND;
}

/* The cgroup directory under root of this process's memory controller
 * (v2: the "0::" line of /proc/self/cgroup; v1: its "memory" line), into
 * dir; whether it is v1 in *v1. */
static int cg_dir(const char *root, char *dir, size_t len, int *v1) {
  static char text[4096];
  char path[4096];
  snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
  if (cal_slurp(path, text, sizeof text) < 0)
    return CAL_ENOTFOUND;
  for (char *line = text; line && *line;) {
    char *end = strchr(line, '\n'), *mem = strstr(line, ":memory:");
    if (end)
      *end = '\0';
    *v1 = strncmp(line, "0::", 3) != 0;
    const char *at = !*v1 ? line + 3 : mem && (!end || mem < end) ? mem + 8 : NULL;
    if (at && (size_t)snprintf(dir, len, "%s/sys/fs/cgroup%s%s", root,
                               *v1 ? "/memory" : "", at) < len)
      return 0;
    line = end ? end + 1 : NULL;
  }
  return CAL_ENOTFOUND;
}

int cal_cgroup_mem_room(const char *root, uint64_t *limit, uint64_t *room) {
  char dir[4096], f[4160], top[4096];
  int v1 = 0;
  *limit = *room = 0;
  if (cg_dir(root, dir, sizeof dir, &v1) < 0)
    return CAL_ENOTFOUND;
  snprintf(top, sizeof top, "%s/sys/fs/cgroup%s", root, v1 ? "/memory" : "");
  const char *lim_f = v1 ? "memory.limit_in_bytes" : "memory.max";
  const char *use_f = v1 ? "memory.usage_in_bytes" : "memory.current";
  int found = 0;
  for (;;) { /* from the process's cgroup up to the root, the tightest */
    unsigned long long l, u = 0;
    snprintf(f, sizeof f, "%s/%s", dir, lim_f);
    if (cg_number(f, &l) == 0) {
      snprintf(f, sizeof f, "%s/%s", dir, use_f);
      cg_number(f, &u);
      uint64_t r = l > u ? l - u : 0;
      if (!found || r < *room) {
        *limit = l;
        *room = r;
      }
      found = 1;
    }
    char *slash = strrchr(dir, '/');
    if (strlen(dir) <= strlen(top) || !slash)
      break;
    *slash = '\0';
  }
  return found ? 0 : CAL_ENOTFOUND;
}

int cal_as_room(uint64_t *room) {
  struct rlimit rl;
  static char text[8192];
  uint64_t size = 0;
  *room = 0;
  if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
    return CAL_ENOTFOUND;
  if (cal_slurp("/proc/self/status", text, sizeof text) == 0)
    cal_meminfo_value(text, "VmSize", &size);
  /* what the libraries will map beyond what a point touches (malloc's
   * arenas of 64 MiB a thread, thread stacks, BLAS and oneDNN buffers):
   * a fifth of the room and 256 MiB kept back */
  const uint64_t lim = (uint64_t)rl.rlim_cur, keep = (uint64_t)256 << 20;
  uint64_t r = lim > size ? (lim - size) / 5 * 4 : 0;
  *room = r > keep ? r - keep : 0;
  return 0;
}

static void read_memory(cal_hwinfo_t *hw) {
  static char text[8192];
  if (cal_slurp("/proc/meminfo", text, sizeof text) == 0) {
    cal_meminfo_value(text, "MemTotal", &hw->mem_total_bytes);
    if (cal_meminfo_value(text, "MemAvailable", &hw->mem_available_bytes) < 0)
      cal_meminfo_value(text, "MemFree", &hw->mem_available_bytes);
  }
  /* the process's own cgroup's memory limit (the tightest on its way up
   * to the root) caps what we may allocate, and so does an address-space
   * limit (RLIMIT_AS: what is mapped already counts against it) */
  uint64_t lim, room;
  if (cal_cgroup_mem_room("/", &lim, &room) == 0) {
    hw->cgroup_mem_limit_bytes = lim;
    if (room < hw->mem_available_bytes)
      hw->mem_available_bytes = room;
  }
  if (cal_as_room(&room) == 0 && room < hw->mem_available_bytes)
    hw->mem_available_bytes = room;
  /* "always [madvise] never": the bracketed word is the policy */
  char thp[128];
  const char *a, *b;
  if (cal_slurp("/sys/kernel/mm/transparent_hugepage/enabled", thp,
                sizeof thp) == 0 &&
      (a = strchr(thp, '[')) && (b = strchr(a, ']')) &&
      (size_t)(b - a - 1) < sizeof hw->thp)
    snprintf(hw->thp, sizeof hw->thp, "%.*s", (int)(b - a - 1), a + 1);
}

static void read_cpu(cal_hwinfo_t *hw) {
  struct utsname u;
  if (uname(&u) == 0) {
    snprintf(hw->os, sizeof hw->os, "%s %s %s", u.sysname, u.release, u.machine);
    snprintf(hw->arch, sizeof hw->arch, "%s", u.machine);
  }
  hw->isa = cal_isa_features();
#if defined(__x86_64__) || defined(__i386__)
  struct cpu_raw_data_t raw;
  struct cpu_id_t id;
  if (cpuid_get_raw_data(&raw) == 0 && cpu_identify(&raw, &id) == 0) {
    snprintf(hw->vendor, sizeof hw->vendor, "%s", id.vendor_str);
    snprintf(hw->brand, sizeof hw->brand, "%s", id.brand_str);
    hw->family = id.ext_family;
    hw->model = id.ext_model;
    hw->stepping = id.stepping;
    snprintf(hw->codename, sizeof hw->codename, "%s", id.cpu_codename);
    chomp(hw->brand);
  }
#endif
  if (!hw->brand[0]) { /* other architectures: /proc/cpuinfo */
    static char text[16384];
    if (cal_slurp("/proc/cpuinfo", text, sizeof text) == 0) {
      const char *keys[] = {"model name", "Hardware", "CPU part"};
      for (size_t i = 0; i < 3 && !hw->brand[0]; i++) {
        char *p = strstr(text, keys[i]);
        char *colon = p ? strchr(p, ':') : NULL;
        if (colon) {
          colon++;
          while (*colon == ' ' || *colon == '\t')
            colon++;
          size_t n = strcspn(colon, "\n");
          snprintf(hw->brand, sizeof hw->brand, "%.*s", (int)n, colon);
        }
      }
    }
  }
  char buf[64];
  if (cal_slurp("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf,
            sizeof buf) == 0) {
    chomp(buf);
    snprintf(hw->governor, sizeof hw->governor, "%s", buf);
  }
  if (cal_slurp("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", buf,
            sizeof buf) == 0)
    hw->max_mhz = atof(buf) / 1000.0;
  if (cal_slurp("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", buf,
            sizeof buf) == 0)
    hw->base_mhz = atof(buf) / 1000.0;
}

static const char *cache_type(hwloc_obj_cache_type_t t) {
  switch (t) {
  case HWLOC_OBJ_CACHE_DATA: return "data";
  case HWLOC_OBJ_CACHE_INSTRUCTION: return "instruction";
  default: return "unified";
  }
}

/* Counts and caches of the whole machine, and this process's binding. */
static void read_topology(cal_hwinfo_t *hw, hwloc_topology_t topo) {
  hw->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  hw->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hw->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hw->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  static const hwloc_obj_type_t levels[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE,
      HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    int n = hwloc_get_nbobjs_by_type(topo, levels[i]);
    if (n <= 0 || hw->ncaches >= CAL_HW_MAX_CACHES)
      continue;
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, levels[i], 0);
    cal_cache_info_t *c = &hw->caches[hw->ncaches++];
    c->level = (int)o->attr->cache.depth;
    snprintf(c->type, sizeof c->type, "%s", cache_type(o->attr->cache.type));
    c->size_bytes = o->attr->cache.size;
    c->line_bytes = (int)o->attr->cache.linesize;
    c->instances = n;
    c->cores_sharing = hwloc_get_nbobjs_inside_cpuset_by_type(
        topo, o->cpuset, HWLOC_OBJ_CORE);
  }

  /* the CPUs this process may use (cal_usable_cpu_set: with the OpenMP
   * runtime's places, which OMP_PROC_BIND narrows the mask to one of) */
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && cal_usable_cpuset(topo, set) == 0)
    hwloc_bitmap_list_snprintf(hw->affinity, sizeof hw->affinity, set);
  hwloc_bitmap_free(set);
}

static void read_blas(cal_hwinfo_t *hw) {
  const char *cfg = openblas_get_config();
  snprintf(hw->blas_library, sizeof hw->blas_library, "OpenBLAS");
  snprintf(hw->blas_config, sizeof hw->blas_config, "%s", cfg ? cfg : "");
  chomp(hw->blas_config);
  const char *v = cfg ? strstr(cfg, "OpenBLAS ") : NULL;
  if (v)
    sscanf(v + 9, "%31s", hw->blas_version);
  const char *core = openblas_get_corename();
  snprintf(hw->blas_coretype, sizeof hw->blas_coretype, "%s", core ? core : "");
  const char *from = getenv("CALIBRATE_BLAS_CORETYPE_FROM");
  if (from && *from) {
    snprintf(hw->blas_coretype_source, sizeof hw->blas_coretype_source,
             "calibrate");
    snprintf(hw->blas_coretype_library, sizeof hw->blas_coretype_library, "%s",
             from);
  } else if (getenv("OPENBLAS_CORETYPE") && *getenv("OPENBLAS_CORETYPE")) {
    snprintf(hw->blas_coretype_source, sizeof hw->blas_coretype_source,
             "environment");
  } else {
    snprintf(hw->blas_coretype_source, sizeof hw->blas_coretype_source,
             "library");
    snprintf(hw->blas_coretype_library, sizeof hw->blas_coretype_library, "%s",
             hw->blas_coretype);
  }
  static const char *const par[] = {"sequential", "pthreads", "openmp"};
  int p = openblas_get_parallel();
  snprintf(hw->blas_parallel, sizeof hw->blas_parallel, "%s",
           p >= 0 && p <= 2 ? par[p] : "unknown");
  hw->blas_threads = openblas_get_num_threads();
}

/* Everything that needs no topology. */
static void read_untopological(cal_hwinfo_t *hw) {
  memset(hw, 0, sizeof *hw);
  if (gethostname(hw->hostname, sizeof hw->hostname) != 0)
    snprintf(hw->hostname, sizeof hw->hostname, "unknown");
  hw->hostname[sizeof hw->hostname - 1] = '\0';
  read_cpu(hw);
  read_memory(hw);
  read_blas(hw);
}

int cal_hwinfo_read_topology(cal_hwinfo_t *hw, hwloc_topology_t topo) {
  read_untopological(hw);
  read_topology(hw, topo);
  cal_threads_t *t = NULL;
  int rc = cal_threads_init_topology(&t, topo);
  if (rc < 0)
    return rc;
  hw->allowed_cores = cal_threads_allowed_cores(t);
  hw->allowed_pus = cal_threads_allowed_pus(t);
  hw->usable_cores = cal_threads_usable(t);
  hw->cgroup_quota_cpus = cal_threads_quota(t);
  cal_threads_free(t);
  return 0;
}

int cal_hwinfo_read(cal_hwinfo_t *hw) {
  hwloc_topology_t topo;
  int rc = cal_topology_load(&topo);
  if (rc < 0) {
    read_untopological(hw);
    return rc;
  }
  rc = cal_hwinfo_read_topology(hw, topo);
  hwloc_topology_destroy(topo);
  return rc;
}

static void print_size(FILE *out, uint64_t b) {
  if (b >= (1ULL << 30))
    fprintf(out, "%.1f GiB", (double)b / (1ULL << 30));
  else if (b >= (1ULL << 20))
    fprintf(out, "%.1f MiB", (double)b / (1ULL << 20));
  else
    fprintf(out, "%.0f KiB", (double)b / 1024.0);
}

void cal_hwinfo_print(FILE *out, const cal_hwinfo_t *hw) {
  char isa[512];
  cal_isa_string(hw->isa, isa, sizeof isa);
  fprintf(out, "Host          %s (%s)\n", hw->hostname, hw->os);
  fprintf(out, "CPU           %s\n", hw->brand[0] ? hw->brand : "unknown");
  fprintf(out, "              vendor %s, family %d, model %d, stepping %d\n",
          hw->vendor[0] ? hw->vendor : "?", hw->family, hw->model, hw->stepping);
  fprintf(out, "ISA           %s\n", isa[0] ? isa : "(none detected)");
  fprintf(out, "Topology      %d package(s), %d core(s), %d hardware thread(s), "
               "%d NUMA node(s)\n",
          hw->packages, hw->cores, hw->pus, hw->numa_nodes);
  fprintf(out, "Usable cores  %d", hw->usable_cores);
  fprintf(out, "  (affinity %s: %d core(s), %d thread(s)", hw->affinity,
          hw->allowed_cores, hw->allowed_pus);
  if (hw->cgroup_quota_cpus > 0)
    fprintf(out, "; cgroup quota %.2f CPUs", hw->cgroup_quota_cpus);
  else
    fprintf(out, "; no cgroup CPU quota");
  fprintf(out, ")\n");
  for (int i = 0; i < hw->ncaches; i++) {
    const cal_cache_info_t *c = &hw->caches[i];
    fprintf(out, "%-14s", i == 0 ? "Caches" : "");
    fprintf(out, "L%d %-11s ", c->level, c->type);
    print_size(out, c->size_bytes);
    fprintf(out, " x %d, shared by %d core(s), %d-byte lines\n", c->instances,
            c->cores_sharing, c->line_bytes);
  }
  fprintf(out, "Memory        ");
  print_size(out, hw->mem_total_bytes);
  fprintf(out, " total, ");
  print_size(out, hw->mem_available_bytes);
  fprintf(out, " available");
  if (hw->cgroup_mem_limit_bytes) {
    fprintf(out, " (cgroup limit ");
    print_size(out, hw->cgroup_mem_limit_bytes);
    fprintf(out, ")");
  }
  if (hw->thp[0])
    fprintf(out, "; transparent huge pages: %s", hw->thp);
  fprintf(out, "\n");
  fprintf(out, "BLAS          %s %s, %s threads, %d thread(s), kernels %s (%s)\n",
          hw->blas_library, hw->blas_version, hw->blas_parallel,
          hw->blas_threads, hw->blas_coretype,
          strcmp(hw->blas_coretype_source, "calibrate") == 0
              ? "set by calibrate from CPU features"
              : strcmp(hw->blas_coretype_source, "environment") == 0
                    ? "from OPENBLAS_CORETYPE"
                    : "chosen by the library");
  if (strcmp(hw->blas_coretype_source, "calibrate") == 0)
    fprintf(out, "              the library alone chose %s\n",
            hw->blas_coretype_library);
  fprintf(out, "              %s\n", hw->blas_config);
  fprintf(out, "Clock         governor %s",
          hw->governor[0] ? hw->governor : "unreadable");
  if (hw->max_mhz > 0)
    fprintf(out, ", max %.0f MHz", hw->max_mhz);
  if (hw->base_mhz > 0)
    fprintf(out, ", base %.0f MHz", hw->base_mhz);
  fprintf(out, "\n");
}

/* OpenBLAS x86 core names by the widest vector ISA their kernels use. */
static const struct {
  const char *name;
  int rank;
} core_ranks[] = {
    {"Katmai", 1}, {"Coppermine", 1}, {"Northwood", 1}, {"Prescott", 1},
    {"Banias", 1}, {"Core2", 1}, {"Penryn", 1}, {"Dunnington", 1},
    {"Nehalem", 1}, {"Atom", 1}, {"Athlon", 1}, {"Opteron", 1},
    {"Opteron_SSE3", 1}, {"Barcelona", 1}, {"Nano", 1}, {"Bobcat", 1},
    {"SandyBridge", 2}, {"Bulldozer", 2}, {"Piledriver", 2},
    {"Steamroller", 2}, {"Excavator", 3}, {"Haswell", 3}, {"Zen", 3},
    {"SkylakeX", 4}, {"Cooperlake", 5}, {"SapphireRapids", 5},
};

int cal_blas_coretype_rank(const char *core) {
  if (!core)
    return 0;
  for (size_t i = 0; i < sizeof core_ranks / sizeof core_ranks[0]; i++)
    if (strcasecmp(core, core_ranks[i].name) == 0)
      return core_ranks[i].rank;
  return 0;
}

const char *cal_blas_coretype_for(uint32_t isa) {
  const uint32_t avx512 =
      CAL_ISA_AVX512F | CAL_ISA_AVX512BW | CAL_ISA_AVX512VL | CAL_ISA_AVX512DQ;
  if ((isa & avx512) == avx512)
    return (isa & CAL_ISA_AVX512BF16) ? "Cooperlake" : "SkylakeX";
  if ((isa & (CAL_ISA_AVX2 | CAL_ISA_FMA3)) == (CAL_ISA_AVX2 | CAL_ISA_FMA3))
    return "Haswell";
  if (isa & CAL_ISA_AVX)
    return "SandyBridge";
  return NULL;
}

void cal_blas_fix_coretype(char **argv) {
#if defined(__x86_64__)
  const char *user = getenv("OPENBLAS_CORETYPE");
  if ((user && *user) || getenv("CALIBRATE_BLAS_CORETYPE_FROM") ||
      getenv("CALIBRATE_KEEP_BLAS_CORETYPE"))
    return;
  const char *cfg = openblas_get_config();
  if (!cfg || !strstr(cfg, "DYNAMIC_ARCH"))
    return; /* a build for one target cannot switch */
  const char *have = openblas_get_corename();
  const char *want = cal_blas_coretype_for(cal_isa_features());
  int rh = cal_blas_coretype_rank(have), rw = cal_blas_coretype_rank(want);
  if (!want || rh == 0 || rh >= rw)
    return;
  /* Record what the library chose, then start again with the kernels the
   * CPU can run; the library reads OPENBLAS_CORETYPE only when it loads. */
  if (setenv("CALIBRATE_BLAS_CORETYPE_FROM", have, 1) != 0 ||
      setenv("OPENBLAS_CORETYPE", want, 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  /* exec failed: carry on with the library's choice, and say so */
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("CALIBRATE_BLAS_CORETYPE_FROM");
#else
  (void)argv;
#endif
}
