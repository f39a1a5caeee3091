/* Virtual machine and steal time (virt.h). */
#include "virt.h"

#include <math.h>
#include <string.h>

#include "cal_err.h"
#include "cal_file.h"
#include "load.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* The vendor signatures of CPUID leaf 0x40000000 (EBX, ECX, EDX). */
static const struct {
  const char *sig, *name;
} hypervisors[] = {
    {"KVMKVMKVM\0\0\0", "KVM"},
    {"Microsoft Hv", "Microsoft Hyper-V"},
    {"VMwareVMware", "VMware"},
    {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU (TCG)"},
    {"VBoxVBoxVBox", "VirtualBox"},
    {" lrpepyh  vr", "Parallels"},
    {"prl hyperv  ", "Parallels"},
    {"bhyve bhyve ", "bhyve"},
    {"ACRNACRNACRN", "ACRN"},
    {"QNXQVMBSQG\0\0", "QNX"},
    {"Linux KVM Hv", "KVM (Hyper-V emulation)"},
    {"EVMMEVMMEVMM", "Intel EVMM"},
    {"UnisysSpar64", "Unisys s-Par"},
};

const char *cal_hypervisor_name(const char *sig12) {
  for (size_t i = 0; i < sizeof hypervisors / sizeof hypervisors[0]; i++)
    if (memcmp(sig12, hypervisors[i].sig, 12) == 0)
      return hypervisors[i].name;
  return NULL;
}

int cal_steal_since_boot(const char *stat, double *share) {
  unsigned long long v[8];
  const char *line = stat;
  while (line && strncmp(line, "cpu ", 4) != 0) {
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  if (!line || sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
                      &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                      &v[7]) != 8)
    return CAL_EPARSE;
  /* guest time is already inside user and nice */
  double total = 0;
  for (int i = 0; i < 8; i++)
    total += (double)v[i];
  if (!(total > 0))
    return CAL_EPARSE;
  *share = (double)v[7] / total;
  return 0;
}

/* CPUID's hypervisor bit and signature, where there is CPUID. */
static void read_cpuid(cal_virt_t *v) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return;
  v->cpuid = 1;
  v->hypervisor_bit = (c >> 31) & 1;
  if (!v->hypervisor_bit)
    return;
  /* leaf 0x40000000 is the hypervisor's, beyond __get_cpuid's range */
  __cpuid(0x40000000, a, b, c, d);
  char sig[12];
  memcpy(sig, &b, 4);
  memcpy(sig + 4, &c, 4);
  memcpy(sig + 8, &d, 4);
  v->hypervisor = cal_hypervisor_name(sig);
  size_t n = 0;
  for (; n < 12 && sig[n]; n++)
    v->signature[n] = sig[n] >= 0x20 && sig[n] < 0x7f ? sig[n] : '?';
  v->signature[n] = '\0';
#else
  (void)v;
#endif
}

/* The first line of a small file into buf, control bytes as '?'; "" when
 * it cannot be read. */
static void read_line(const char *path, char *buf, size_t len) {
  if (cal_slurp(path, buf, len) < 0)
    buf[0] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  for (char *p = buf; *p; p++)
    if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
      *p = '?';
}

static void read_steal(cal_virt_t *v, double watch_s) {
  char text[4096]; /* the "cpu " line is the first */
  v->steal_since_boot = v->steal = NAN;
  v->watch_s = 0;
  if (cal_slurp("/proc/stat", text, sizeof text) < 0 ||
      cal_steal_since_boot(text, &v->steal_since_boot) < 0)
    v->steal_since_boot = NAN;
  cal_load_t l;
  cal_load_share_t sh;
  if (watch_s > 0 && cal_load_open(&l) == 0) {
    cal_load_watch(&l, watch_s, &sh);
    if (sh.known) {
      v->steal = sh.steal;
      v->watch_s = sh.seconds;
    }
  }
}

void cal_virt_read(cal_virt_t *v, double watch_s) {
  memset(v, 0, sizeof *v);
  read_cpuid(v);
  read_line("/sys/hypervisor/type", v->sys_type, sizeof v->sys_type);
  if (!v->hypervisor && strcmp(v->sys_type, "xen") == 0)
    v->hypervisor = "Xen";
  read_steal(v, watch_s);
}

void cal_virt_print(FILE *out, const cal_virt_t *v) {
  fprintf(out, "Hypervisor    ");
  if (v->hypervisor)
    fprintf(out, "%s", v->hypervisor);
  else if (v->hypervisor_bit)
    fprintf(out, "unknown");
  else if (v->cpuid)
    fprintf(out, "none (no hypervisor bit in CPUID)");
  else
    fprintf(out, "none found");
  if (v->signature[0])
    fprintf(out, " (CPUID signature \"%s\")", v->signature);
  else if (v->sys_type[0])
    fprintf(out, " (/sys/hypervisor/type %s)", v->sys_type);
  fprintf(out, "\nSteal         ");
  if (isfinite(v->steal))
    fprintf(out, "%.1f%% of the usable cores' time over %.2f s", 100 * v->steal,
            v->watch_s);
  else
    fprintf(out, "unknown now");
  if (isfinite(v->steal_since_boot))
    fprintf(out, ", %.2f%% of all CPU time since boot",
            100 * v->steal_since_boot);
  fprintf(out, "\n");
}

static json_t *num_or_null(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

static json_t *str_or_null(const char *s) {
  return s && *s ? json_string(s) : json_null();
}

json_t *cal_virt_json(const cal_virt_t *v) {
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "hypervisor",
                   str_or_null(v->hypervisor), "hypervisor_bit",
                   v->cpuid ? json_boolean(v->hypervisor_bit) : json_null(),
                   "cpuid_signature", str_or_null(v->signature),
                   "sys_hypervisor_type", str_or_null(v->sys_type),
                   "steal_share_since_boot", num_or_null(v->steal_since_boot),
                   "steal_share", num_or_null(v->steal), "steal_watch_s",
                   v->watch_s > 0 ? json_real(v->watch_s) : json_null());
}
