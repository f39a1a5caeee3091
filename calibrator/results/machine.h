/* What the machine is, as a run's outputs need it: CPU, ISA, topology,
 * caches, memory, BLAS, clocks and the cores this process may use.
 * run/hwinfo.c fills it; profile/ and report/ read it. */
#ifndef CAL_MACHINE_H
#define CAL_MACHINE_H

#include <stddef.h>
#include <stdint.h>

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
  /* the kernel's transparent huge page policy: "always" (large buffers
   * over 2 MiB pages), "madvise" or "never" (4 KiB pages: calibrate asks
   * for none); "" unknown */
  char thp[16];
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

/* The i-th ISA feature the machine record names ("avx2") and its
 * CAL_ISA_* bit; NULL past the last. */
const char *cal_isa_name_at(size_t i, uint32_t *bit);
/* Names of the ISA bits set in `isa`, e.g. "avx2", joined by ' '. */
void cal_isa_string(uint32_t isa, char *buf, size_t len);

#endif
