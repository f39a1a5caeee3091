/* A point's memory (memuse.h): /proc/self/status, /proc/self/clear_refs
 * and getrusage. */
#include "memuse.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cal_err.h"

/* "Key:   123 kB" in text: the value in bytes, NAN when absent. */
static double status_kb(const char *text, const char *key) {
  size_t len = strlen(key);
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s) {
    if (strncmp(s, key, len) != 0 || s[len] != ':')
      continue;
    char *end;
    double kb = strtod(s + len + 1, &end);
    if (end == s + len + 1 || kb < 0 || !isfinite(kb))
      return NAN;
    return kb * 1024.0;
  }
  return NAN;
}

int cal_memstat_parse(const char *text, cal_memstat_t *s) {
  s->hwm = status_kb(text, "VmHWM");
  s->rss = status_kb(text, "VmRSS");
  s->swap = status_kb(text, "VmSwap");
  return isnan(s->hwm) && isnan(s->rss) ? CAL_EPARSE : 0;
}

int cal_memstat_read(cal_memstat_t *s) {
  char buf[8192];
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return CAL_EIO;
  size_t n = 0;
  ssize_t got;
  while (n < sizeof buf - 1 &&
         (got = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
    n += (size_t)got;
  close(fd);
  buf[n] = '\0';
  return cal_memstat_parse(buf, s);
}

/* Reset VmHWM to the current resident set: 1 when the kernel took it. */
static int reset_peak(void) {
  int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  int ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}

static long major_faults(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : -1;
}

/* VmHWM's highest value before the last window reset it, since the
 * enclosing point began (bytes; 0: none).  VmHWM is process-wide, and so
 * is this. */
static double folded_peak;

int cal_memuse_window_begin(void) {
  cal_memstat_t s;
  if (cal_memstat_read(&s) == 0 && s.hwm > folded_peak)
    folded_peak = s.hwm;
  return reset_peak();
}

double cal_memuse_window_end(int reset) {
  cal_memstat_t s;
  if (!reset || cal_memstat_read(&s) < 0)
    return NAN;
  if (s.hwm > folded_peak)
    folded_peak = s.hwm;
  return s.hwm;
}

void cal_memuse_begin(cal_memuse_t *u) {
  cal_memstat_t s;
  memset(u, 0, sizeof *u);
  u->peak_reset = reset_peak();
  folded_peak = 0;
  if (cal_memstat_read(&s) < 0)
    return;
  u->known = 1;
  u->rss_before = s.rss;
  u->hwm_before_ = s.hwm;
  u->swap_before = s.swap;
  u->majflt_before_ = major_faults();
}

int cal_memuse_swapped(const cal_memuse_t *u) {
  int faults = u->major_faults > 0;
  if (isnan(u->swap_before) || isnan(u->swap_after))
    return faults;
  return u->swap_after > u->swap_before ||
         (faults && (u->swap_before > 0 || u->swap_after > 0));
}

void cal_memuse_end(cal_memuse_t *u) {
  cal_memstat_t s;
  if (!u->known)
    return;
  long mf = major_faults();
  if (cal_memstat_read(&s) < 0) {
    u->known = 0;
    return;
  }
  u->rss_after = s.rss;
  u->swap_after = s.swap;
  /* without a reset the peak is the point's only where the point raised
   * the process's peak */
  double hwm = s.hwm > folded_peak ? s.hwm : folded_peak;
  u->peak_rss = u->peak_reset || hwm > u->hwm_before_ ? hwm : NAN;
  u->major_faults = mf >= 0 && u->majflt_before_ >= 0 ? mf - u->majflt_before_
                                                      : -1;
  u->swapped = cal_memuse_swapped(u);
}
