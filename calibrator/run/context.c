/* The machine and thread team a run measures with. */
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_esc.h"
#include "pipes.h"
#include "cal_exit.h"
#include "cal_isa.h"

int cal_ctx_open(cal_ctx_t *c) {
  memset(c, 0, sizeof *c);
  c->sec_current = -1;
  /* an unknown cap would skip every kernel of ours one by one */
  int variant;
  if (cal_variant_best(&variant) == CAL_EINVAL) {
    fprintf(stderr, "calibrate: CALIBRATE_ISA is not one of scalar, avx2, "
                    "avx512, auto\n");
    return CAL_EXIT_USAGE;
  }
  /* Every point's buffers placed alike, whatever ran before: a fixed
   * threshold turns off glibc's dynamic one, which after a large buffer
   * is freed serves later ones of that size from the heap instead of
   * fresh mappings, so a GEMM's matrices (their alignment to each other
   * and huge-page coverage) would depend on the sizes measured before. */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  /* one topology for the machine facts and the thread team */
  int rc = cal_topology_load(&c->topo);
  if (rc < 0)
    c->topo = NULL;
  rc = c->topo ? cal_hwinfo_read_topology(&c->hw, c->topo) : cal_hwinfo_read(&c->hw);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the machine: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  c->load_ok = cal_load_open(&c->load) == 0;
  return 0;
}

static const char *lock_path(void) {
  const char *env = getenv("CALIBRATE_LOCK");
  if (env && *env)
    return env;
  return access("/run/lock", W_OK) == 0 ? "/run/lock/calibrate.lock"
                                        : "/tmp/calibrate.lock";
}

/* Whether an existing lock file's first bytes are what a run writes
 * there: nothing, or a pid and a newline. */
static int lock_content_ok(int fd) {
  char b[32];
  ssize_t n = pread(fd, b, sizeof b, 0);
  if (n < 0 || n == (ssize_t)sizeof b)
    return 0;
  if (n == 0)
    return 1;
  ssize_t i = 0;
  while (i < n && b[i] >= '0' && b[i] <= '9')
    i++;
  return i > 0 && i == n - 1 && b[i] == '\n';
}

/* Open the lock file without harming a file the lock did not make: a new
 * file is created (and opened to every user); an existing one is used
 * only when it is a regular file with one link whose content is empty or
 * a pid, and is never truncated or chmodded otherwise.
 * Returns the descriptor, or after printing one line -1 (the system
 * failed) or -2 (the path is refused). */
static int lock_open(const char *path) {
  /* O_NOFOLLOW: a link planted at the path is refused, not followed */
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd >= 0) {
    (void)fchmod(fd, 0666); /* every user's runs share it (umask aside) */
    return fd;
  }
  if (errno == EEXIST)
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == EACCES)
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  const char *why = NULL;
  if (fd < 0 && (errno == EISDIR || errno == ELOOP || errno == ENXIO))
    why = "is not a regular file";
  else if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
    why = "is in a directory that does not exist"; /* the user's path */
  else if (fd < 0) {
    cal_esc_line(stderr, "calibrate: cannot open the lock file %s: %s", path,
                 strerror(errno));
    return -1;
  }
  struct stat st;
  if (why)
    ;
  else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    why = "is not a regular file";
  else if (st.st_nlink != 1)
    why = "has other hard links";
  else if (!lock_content_ok(fd))
    why = "holds something other than a pid";
  if (why) {
    cal_esc_line(stderr, "calibrate: the lock file %s %s; refusing to use it "
                         "(name a new file in CALIBRATE_LOCK)", path, why);
    if (fd >= 0)
      close(fd);
    return -2;
  }
  return fd;
}

int cal_ctx_lock(cal_ctx_t *c, int no_wait) {
  const char *path = lock_path();
  int fd = lock_open(path);
  if (fd < 0)
    return fd == -2 ? CAL_EXIT_USAGE : CAL_EXIT_INTERNAL;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char pid[32] = "";
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    if (err != EWOULDBLOCK) {
      cal_esc_line(stderr, "calibrate: cannot lock %s: %s", path,
                   strerror(err));
      close(fd);
      return CAL_EXIT_INTERNAL;
    }
    if (no_wait) {
      cal_esc_line(stderr, "calibrate: another calibrate run%s%s%s is "
                           "measuring this machine (lock %s); --no-wait "
                           "refuses to wait",
                   pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", path);
      close(fd);
      return CAL_EXIT_BUSY;
    }
    cal_esc_line(stderr, "calibrate: another calibrate run%s%s%s is measuring "
                         "this machine; waiting for it (--no-wait refuses "
                         "instead)", pid[0] ? " (pid " : "", pid,
                 pid[0] ? ")" : "");
    while (flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        cal_esc_line(stderr, "calibrate: cannot lock %s: %s", path,
                     strerror(errno));
        close(fd);
        return CAL_EXIT_INTERNAL;
      }
    }
  }
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
  /* the pid is only for the message of a run that waits; the content
   * was checked to be a pid (or the file is new), so rewriting it
   * harms nothing */
  if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)len, 0) < 0) {
  }
  c->lock_fd = fd;
  c->locked = 1;
  return 0;
}

int cal_ctx_start_threads(cal_ctx_t *c, int threads) {
  int rc = c->topo ? cal_threads_init_topology(&c->thr, c->topo)
                   : cal_threads_init(&c->thr);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the topology: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
  }
  /* An OpenMP runtime held below the team (OMP_THREAD_LIMIT, or
   * OMP_MAX_ACTIVE_LEVELS=0 making every region serial, as containers and
   * batch jobs set) would run our kernels with fewer threads than
   * counted, and OpenBLAS waits forever for threads it never gets: only
   * the threads the run measures with (--threads) must fit the limit. */
  int want = cal_threads_usable(c->thr);
  int limit = omp_get_max_active_levels() < 1 ? 1 : omp_get_thread_limit();
  if (threads > 1 && limit < threads) {
    fprintf(stderr, "calibrate: the OpenMP runtime allows %d of the %d threads "
                    "the run measures with (OMP_THREAD_LIMIT or "
                    "OMP_MAX_ACTIVE_LEVELS); unset it, give the run fewer "
                    "CPUs (taskset) or --threads %d\n", limit, threads, limit);
    return CAL_EXIT_USAGE;
  }
  /* the team probes below start every usable thread where the runtime
   * allows them, else only the run's */
  if (limit < want)
    want = threads;
  /* whether the usable cores compute side by side at all (a machine of
   * hardware-thread siblings does not, and that is the machine) */
  if (want > 1 && cal_threads_use(c->thr, want) == 0) {
    c->team_best = cal_pipes_probe(want, 0.01, 3);
    /* how close the threads can be, before any point: a run whose first
     * points all find them apart is measured again like any other */
    double rtt = cal_team_rtt_least(want, 5, CAL_TEAM_RTT_GAP_S);
    c->rtt_least_ns = rtt > 0 ? rtt : 0;
  }
  return 0;
}

void cal_ctx_close(cal_ctx_t *c) {
  if (c->locked) {
    close(c->lock_fd); /* releases the flock */
    c->locked = 0;
  }
  cal_threads_free(c->thr);
  c->thr = NULL;
  if (c->topo)
    hwloc_topology_destroy(c->topo);
  c->topo = NULL;
}
