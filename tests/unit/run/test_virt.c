/* Virtual machine facts (run/virt.c): hypervisor signatures, steal time
 * from /proc/stat text, and what `calibrate info` prints of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"
#include "test_util.h"
#include "virt.h"

static void signatures_name_the_hypervisor(void **state) {
  (void)state;
  assert_string_equal(cal_hypervisor_name("KVMKVMKVM\0\0\0"), "KVM");
  assert_string_equal(cal_hypervisor_name("Microsoft Hv"), "Microsoft Hyper-V");
  assert_string_equal(cal_hypervisor_name("VMwareVMware"), "VMware");
  assert_string_equal(cal_hypervisor_name("XenVMMXenVMM"), "Xen");
  assert_null(cal_hypervisor_name("GenuineIntel"));
  assert_null(cal_hypervisor_name("\0\0\0\0\0\0\0\0\0\0\0\0"));
}

static void steal_since_boot_from_proc_stat(void **state) {
  (void)state;
  double s = -1;
  /* user nice system idle iowait irq softirq steal guest guest_nice */
  const char *stat = "cpu  600 0 200 1000 0 0 0 200 50 0\n"
                     "cpu0 300 0 100 500 0 0 0 100 25 0\n"
                     "intr 1 2 3\n";
  assert_int_equal(cal_steal_since_boot(stat, &s), 0);
  assert_true(fabs(s - 0.1) < 1e-12); /* 200 of 2000 ticks */
  assert_int_equal(cal_steal_since_boot("cpu0 1 2 3\n", &s), CAL_EPARSE);
  assert_int_equal(cal_steal_since_boot("cpu  0 0 0 0 0 0 0 0\n", &s),
                   CAL_EPARSE);
  assert_int_equal(cal_steal_since_boot("", &s), CAL_EPARSE);
}

static char *printed(const cal_virt_t *v) {
  cal_test_text_t t;
  FILE *f = cal_test_text_open(&t);
  cal_virt_print(f, v);
  return cal_test_text_close(f, &t);
}

static void info_lines_and_json(void **state) {
  (void)state;
  cal_virt_t v = {.cpuid = 1, .hypervisor_bit = 1, .signature = "KVMKVMKVM",
                  .hypervisor = "KVM", .steal_since_boot = 0.0005,
                  .steal = 0.02, .watch_s = 0.25};
  char *t = printed(&v);
  assert_non_null(strstr(t, "Hypervisor    KVM (CPUID signature \"KVMKVMKVM\")\n"));
  assert_non_null(strstr(t, "Steal         2.0% of the usable cores' time over "
                            "0.25 s, 0.05% of all CPU time since boot\n"));
  free(t);
  json_t *j = cal_virt_json(&v);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "hypervisor")), "KVM");
  assert_true(json_is_true(json_object_get(j, "hypervisor_bit")));
  assert_true(json_real_value(json_object_get(j, "steal_share")) == 0.02);
  assert_true(json_is_null(json_object_get(j, "sys_hypervisor_type")));
  json_decref(j);

  /* bare metal, steal unknown: said, and null in the JSON */
  cal_virt_t m = {.cpuid = 1, .steal = NAN, .steal_since_boot = NAN};
  t = printed(&m);
  assert_non_null(strstr(t, "Hypervisor    none (no hypervisor bit in CPUID)\n"));
  assert_non_null(strstr(t, "Steal         unknown now\n"));
  free(t);
  j = cal_virt_json(&m);
  assert_true(json_is_null(json_object_get(j, "hypervisor")));
  assert_true(json_is_false(json_object_get(j, "hypervisor_bit")));
  assert_true(json_is_null(json_object_get(j, "steal_share")));
  assert_true(json_is_null(json_object_get(j, "steal_share_since_boot")));
  json_decref(j);
}

/* This machine: the facts are read and consistent (a VM or not). */
static void this_machine(void **state) {
  (void)state;
  cal_virt_t v;
  cal_virt_read(&v, 0.05);
  if (v.hypervisor)
    assert_true(v.hypervisor_bit || v.sys_type[0]);
  if (isfinite(v.steal))
    assert_true(v.steal >= 0 && v.steal <= 1 && v.watch_s > 0);
  if (isfinite(v.steal_since_boot))
    assert_true(v.steal_since_boot >= 0 && v.steal_since_boot <= 1);
}

CAL_TEST_MAIN(cmocka_unit_test(signatures_name_the_hypervisor),
              cmocka_unit_test(steal_since_boot_from_proc_stat),
              cmocka_unit_test(info_lines_and_json),
              cmocka_unit_test(this_machine))
