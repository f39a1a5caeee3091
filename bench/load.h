/* Who else uses the cores: what the kernel already counts.
 *
 * A snapshot reads /proc/stat (the busy, idle and steal time of every CPU
 * this process may run on, and the run queue) and this process's own CPU
 * time (getrusage).  Between two snapshots, the share of the usable cores'
 * time that others took is their busy time minus ours, over the cores
 * times the wall time; the steal share is the time the hypervisor gave
 * other guests.  /proc/stat counts in clock ticks (usually 10 ms), so a
 * share over a short interval is coarse: 0.1 s on 2 cores resolves 5%. */
#ifndef CAL_LOAD_H
#define CAL_LOAD_H

#include <stddef.h>

#define CAL_LOAD_MAX_CPUS 1024

typedef struct cal_load {
  int ncpus;                /* usable CPUs (affinity), 0: no /proc/stat */
  unsigned short cpus[CAL_LOAD_MAX_CPUS];
  double tick_s;            /* seconds per /proc/stat tick */
} cal_load_t;

typedef struct cal_load_snap {
  int ok;                   /* 0: could not be read */
  double wall_s;            /* monotonic time */
  double busy_s, steal_s;   /* summed over the usable CPUs */
  double self_s;            /* this process's user + system time */
  int procs_running;        /* run queue of the whole machine */
} cal_load_snap_t;

typedef struct cal_load_share {
  int known;                /* 0: no figures (either snapshot failed) */
  double others;            /* share of the usable cores' time others took */
  double steal;             /* share stolen by the hypervisor */
  int procs_running;        /* at the second snapshot */
  double seconds;           /* wall time between the snapshots */
} cal_load_share_t;

/* The CPUs this process may use.  0, or CAL_EUNSUPP without /proc/stat
 * (then every snapshot is unknown and nothing is ever called busy). */
int cal_load_open(cal_load_t *l);
/* Read a snapshot (s->ok says whether it worked). */
void cal_load_read(const cal_load_t *l, cal_load_snap_t *s);
/* The shares between a and b (a first). */
void cal_load_between(const cal_load_t *l, const cal_load_snap_t *a,
                      const cal_load_snap_t *b, cal_load_share_t *out);
/* Watch the machine for `seconds` (sleeping) and return the shares. */
void cal_load_watch(const cal_load_t *l, double seconds, cal_load_share_t *out);

/* For tests: parse /proc/stat text (NUL-terminated) for the CPUs of l.
 * 0, or CAL_EPARSE. */
int cal_load_parse(const cal_load_t *l, const char *text, cal_load_snap_t *s);

#endif
