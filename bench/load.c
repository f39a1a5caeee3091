/* Who else uses the cores (load.h): /proc/stat and getrusage. */
#include "load.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cal_err.h"
#include "threads.h"
#include "timer.h"

int cal_load_open(cal_load_t *l) {
  memset(l, 0, sizeof *l);
  long hz = sysconf(_SC_CLK_TCK);
  l->tick_s = hz > 0 ? 1.0 / (double)hz : 0.01;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cal_usable_cpu_set(&set) != 0)
    return CAL_EUNSUPP;
  for (int c = 0; c < CPU_SETSIZE && l->ncpus < CAL_LOAD_MAX_CPUS; c++)
    if (CPU_ISSET(c, &set))
      l->cpus[l->ncpus++] = (unsigned short)c;
  cal_load_snap_t s;
  cal_load_read(l, &s);
  if (!s.ok) {
    l->ncpus = 0;
    return CAL_EUNSUPP;
  }
  return 0;
}

static int usable(const cal_load_t *l, long cpu) {
  for (int i = 0; i < l->ncpus; i++)
    if (l->cpus[i] == cpu)
      return 1;
  return 0;
}

int cal_load_parse(const cal_load_t *l, const char *text, cal_load_snap_t *s) {
  unsigned long long busy = 0, steal = 0;
  int seen = 0;
  s->procs_running = -1;
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    long cpu;
    int used = 0;
    unsigned long long v[10] = {0};
    /* cpuN user nice system idle iowait irq softirq steal guest guest_nice */
    if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9' &&
        sscanf(line + 3, "%ld %llu %llu %llu %llu %llu %llu %llu %llu%n", &cpu,
               &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
               &used) >= 9) {
      if (usable(l, cpu)) {
        /* guest time is already inside user and nice */
        busy += v[0] + v[1] + v[2] + v[5] + v[6];
        steal += v[7];
        seen++;
      }
    } else if (strncmp(line, "procs_running ", 14) == 0) {
      s->procs_running = atoi(line + 14);
    }
    line = end ? end + 1 : NULL;
  }
  if (seen == 0)
    return CAL_EPARSE;
  s->busy_s = (double)busy * l->tick_s;
  s->steal_s = (double)steal * l->tick_s;
  return 0;
}

void cal_load_read(const cal_load_t *l, cal_load_snap_t *s) {
  memset(s, 0, sizeof *s);
  s->wall_s = cal_now();
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    s->self_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
  FILE *f = fopen("/proc/stat", "re");
  if (!f)
    return;
  /* a line per CPU of at most ~120 bytes: 1024 CPUs fit in 160 KiB */
  static char buf[CAL_LOAD_MAX_CPUS * 160 + 4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  s->ok = cal_load_parse(l, buf, s) == 0;
}

void cal_load_between(const cal_load_t *l, const cal_load_snap_t *a,
                      const cal_load_snap_t *b, cal_load_share_t *out) {
  memset(out, 0, sizeof *out);
  out->seconds = b->wall_s - a->wall_s;
  out->procs_running = b->procs_running;
  if (!a->ok || !b->ok || l->ncpus < 1 || !(out->seconds > 0))
    return;
  double cap = (double)l->ncpus * out->seconds;
  double others = (b->busy_s - a->busy_s) - (b->self_s - a->self_s);
  out->others = others > 0 ? others / cap : 0.0;
  if (out->others > 1.0)
    out->others = 1.0;
  double st = b->steal_s - a->steal_s;
  out->steal = st > 0 ? st / cap : 0.0;
  if (out->steal > 1.0)
    out->steal = 1.0;
  out->known = 1;
}

void cal_load_watch(const cal_load_t *l, double seconds, cal_load_share_t *out) {
  cal_load_snap_t a, b;
  cal_load_read(l, &a);
  cal_sleep(seconds);
  cal_load_read(l, &b);
  cal_load_between(l, &a, &b, out);
}
