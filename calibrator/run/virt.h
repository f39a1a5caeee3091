/* Whether the machine is a virtual machine, and how much CPU time its
 * hypervisor gives other guests (steal): `calibrate info` shows both,
 * since steal time slows every figure a run measures.
 *
 * The hypervisor is named from CPUID (the hypervisor bit of leaf 1, the
 * vendor signature of leaf 0x40000000, as lscpu does) or, where there is
 * no CPUID, /sys/hypervisor/type (Xen).  Steal is read from /proc/stat:
 * the share of all CPU time since boot, and the share of the usable
 * cores' time over a short watch (bench/load.h). */
#ifndef CAL_VIRT_H
#define CAL_VIRT_H

#include <jansson.h>
#include <stdio.h>

typedef struct cal_virt {
  int cpuid;               /* 1: CPUID was read (x86) */
  int hypervisor_bit;      /* CPUID.1:ECX[31] */
  char signature[13];      /* leaf 0x40000000's vendor, control bytes as
                              '?' ("" when none) */
  char sys_type[32];       /* /sys/hypervisor/type ("" when none) */
  const char *hypervisor;  /* the name ("KVM"); NULL: none found, or an
                              unknown signature (static) */
  double steal_since_boot; /* share of CPU time; NaN: unknown */
  double steal;            /* share over the watch; NaN: unknown */
  double watch_s;          /* how long steal was watched */
} cal_virt_t;

/* Read the facts, watching steal for watch_s seconds (sleeping). */
void cal_virt_read(cal_virt_t *v, double watch_s);

/* The hypervisor a 12-byte CPUID signature names ("KVM", "Microsoft
 * Hyper-V", "VMware", "Xen", ...); NULL when unknown.  Static. */
const char *cal_hypervisor_name(const char *sig12);

/* The share of CPU time stolen since boot from /proc/stat text (its
 * "cpu " line: steal over user + nice + system + idle + iowait + irq +
 * softirq + steal).  0, or CAL_EPARSE. */
int cal_steal_since_boot(const char *stat, double *share);

/* The lines `calibrate info` prints ("Hypervisor    KVM ...",
 * "Steal         ..."). */
void cal_virt_print(FILE *out, const cal_virt_t *v);

/* The object `calibrate info --json` writes under "virtualization":
 * {hypervisor, hypervisor_bit, cpuid_signature, sys_hypervisor_type,
 * steal_share_since_boot, steal_share, steal_watch_s}, null where
 * unknown.  New reference; NULL when out of memory. */
json_t *cal_virt_json(const cal_virt_t *v);

#endif
