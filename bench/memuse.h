/* A point's memory as the kernel counts it, read before and after the
 * point: this process's resident set and swap (/proc/self/status) and its
 * major page faults (getrusage).
 *
 * - rss_before: VmRSS when the point starts (what the process held
 *   already: the program, the thread team, earlier results).
 * - peak_rss: the process's resident peak while the point ran (VmHWM,
 *   with the peaks of the windows inside it, which reset VmHWM).
 *   cal_memuse_begin resets the peak to the current resident set by
 *   writing "5" to /proc/self/clear_refs (Linux 4.0 and later, allowed
 *   to the process's owner; some containers and security modules refuse
 *   it).  Where it cannot be reset, VmHWM is the peak since the process
 *   started: it is the point's peak only when the point raised it, and
 *   unknown (NAN) otherwise.
 * - swap_before, swap_after: VmSwap, this process's pages in swap; NAN
 *   where the kernel does not report it.
 * - major_faults: page faults during the point that read from disk (swap
 *   or file pages not in the page cache); -1 when getrusage failed.
 * - swapped: the point met swap: VmSwap grew, or major faults happened
 *   while part of the process was in swap (then they are swap-ins; with
 *   nothing in swap they are file pages read back, recorded but not
 *   swapping).  Where VmSwap is not reported, any major fault counts.
 * Nothing is known (known 0) without /proc/self/status (not Linux, or
 * /proc not mounted). */
#ifndef CAL_MEMUSE_H
#define CAL_MEMUSE_H

typedef struct cal_memuse {
  int known;           /* 0: no figures (the fields below are unset) */
  int peak_reset;      /* the peak was reset when the point started */
  double rss_before;   /* bytes */
  double peak_rss;     /* bytes; NAN: unknown */
  double rss_after;    /* bytes */
  double swap_before, swap_after; /* bytes; NAN: not reported */
  long major_faults;   /* during the point; -1: unknown */
  int swapped;         /* boolean, see above */
  double hwm_before_;  /* internal: VmHWM at begin */
  long majflt_before_; /* internal: major faults at begin; -1 unknown */
} cal_memuse_t;

/* The figures of /proc/self/status, in bytes; NAN where a line is absent. */
typedef struct cal_memstat {
  double hwm, rss, swap;
} cal_memstat_t;

/* Parse /proc/self/status text (NUL-terminated): 0, or CAL_EPARSE when it
 * has neither VmRSS nor VmHWM. */
int cal_memstat_parse(const char *text, cal_memstat_t *s);
/* Read this process's: 0, CAL_EIO (no /proc/self/status) or CAL_EPARSE. */
int cal_memstat_read(cal_memstat_t *s);

/* Before a point: reset the peak where permitted and read the figures. */
void cal_memuse_begin(cal_memuse_t *u);
/* After it: the peak, the swap, the major faults and whether it swapped. */
void cal_memuse_end(cal_memuse_t *u);
/* A window inside a point (the harness's timed runs): the peak resident
 * set over it alone.  cal_memuse_window_begin folds the process's peak so
 * far into what the enclosing point's cal_memuse_end reports, then resets
 * it; 1 when the reset was taken.  cal_memuse_window_end returns the peak
 * since (bytes), NAN when the reset was not taken or /proc cannot be
 * read. */
int cal_memuse_window_begin(void);
double cal_memuse_window_end(int reset);
/* The swapped rule on figures already read (u's other fields set). */
int cal_memuse_swapped(const cal_memuse_t *u);

#endif
