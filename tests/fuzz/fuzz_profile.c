/* libFuzzer target: the profile reader (cal_profile_parse: JSON, then the
 * schema checks every command relies on).  A profile it accepts must also
 * go through what the reading commands do with it (points walk, export). */
#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "profile.h"

static int count(const char *section, json_t *pt, void *arg) {
  (void)section;
  (void)pt;
  (*(size_t *)arg)++;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cal_profile_t *p = NULL;
  char err[512];
  if (cal_profile_parse((const char *)data, size, "fuzz", &p, err,
                        sizeof err) == 0) {
    size_t n = 0;
    cal_profile_each_point(p->root, count, &n);
    json_decref(cal_export_bmf(p->root));
    json_decref(cal_export_gab(p->root, 1));
    cal_profile_free(p);
  }
  return 0;
}
