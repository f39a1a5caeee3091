/* What the machine is: CPU, ISA, topology, caches, memory, BLAS, clocks,
 * and the cores this process may really use. */
#ifndef CAL_HWINFO_H
#define CAL_HWINFO_H

#include <hwloc.h>
#include <stdint.h>
#include <stdio.h>

#define CAL_HW_MAX_CACHES 8

typedef struct cal_cache_info {
  int level;          /* 1, 2, 3 */
  char type[16];      /* "data", "instruction", "unified" */
  uint64_t size_bytes;/* one instance */
  int line_bytes;
  int instances;      /* how many in the machine */
  int cores_sharing;  /* physical cores sharing one instance */
} cal_cache_info_t;

typedef struct cal_hwinfo {
  char hostname[128];
  char os[256];             /* "Linux 6.1.0 x86_64" */
  /* CPU */
  char arch[72];
  char vendor[32];
  char brand[128];
  int family, model, stepping; /* CPUID display family and model */
  char codename[64];        /* libcpuid's name for the core, "" unknown */
  uint32_t isa;             /* CAL_ISA_* bits */
  /* topology of the whole machine */
  int packages, cores, pus, numa_nodes;
  /* what this process may use */
  int allowed_cores, allowed_pus, usable_cores;
  double cgroup_quota_cpus; /* 0: none */
  char affinity[256];       /* e.g. "0-1" */
  cal_cache_info_t caches[CAL_HW_MAX_CACHES];
  int ncaches;
  /* memory */
  uint64_t mem_total_bytes, mem_available_bytes;
  uint64_t cgroup_mem_limit_bytes; /* 0: none */
  /* clocks */
  char governor[64];        /* "" when unreadable */
  double max_mhz, base_mhz; /* 0 when unknown */
  /* BLAS */
  char blas_library[32];
  char blas_version[32];
  char blas_config[256];
  char blas_coretype[32];
  char blas_coretype_source[32];   /* "library", "environment", "calibrate" */
  char blas_coretype_library[32];  /* what the library chose on its own */
  char blas_parallel[16];          /* "sequential", "pthreads", "openmp" */
  int blas_threads;
} cal_hwinfo_t;

/* Fill everything that can be read; unknown fields stay 0/"".
 * Returns 0, or a CAL_E* code when even the basics fail. */
int cal_hwinfo_read(cal_hwinfo_t *hw);
/* The same on a topology the caller loaded with cal_topology_load()
 * (threads.h) and still owns, so one load serves a whole run. */
int cal_hwinfo_read_topology(cal_hwinfo_t *hw, hwloc_topology_t topo);

/* The i-th ISA feature the machine record names ("avx2") and its
 * CAL_ISA_* bit; NULL past the last. */
const char *cal_isa_name_at(size_t i, uint32_t *bit);
/* Names of the ISA bits set in `isa`, e.g. "avx2", joined by ' '. */
void cal_isa_string(uint32_t isa, char *buf, size_t len);

/* Human-readable report. */
void cal_hwinfo_print(FILE *out, const cal_hwinfo_t *hw);

/* Parse "MemTotal:  123 kB" style /proc/meminfo text: bytes of the key,
 * CAL_ENOTFOUND when absent. */
int cal_meminfo_value(const char *text, const char *key, uint64_t *bytes);

/* OpenBLAS with DYNAMIC_ARCH sometimes picks an old kernel set for a CPU it
 * does not know.  When that happened and the user did not choose a core
 * type, re-execute this program with OPENBLAS_CORETYPE set from the CPU's
 * feature bits.  Returns only when no re-exec was needed or it failed. */
void cal_blas_fix_coretype(char **argv);
/* The best OpenBLAS core type for these feature bits, NULL when unknown. */
const char *cal_blas_coretype_for(uint32_t isa);
/* Rank of an OpenBLAS core name by the widest ISA its kernels use
 * (1 SSE, 2 AVX, 3 AVX2, 4 AVX-512, 5 AVX-512+BF16); 0 when unknown. */
int cal_blas_coretype_rank(const char *core);

#endif
