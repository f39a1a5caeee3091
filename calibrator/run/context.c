/* The machine and thread team a run measures with. */
#include "context.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_exit.h"

int cal_ctx_open(cal_ctx_t *c) {
  memset(c, 0, sizeof *c);
  c->sec_current = -1;
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

int cal_ctx_lock(cal_ctx_t *c, int no_wait) {
  const char *path = lock_path();
  /* O_NOFOLLOW: a link planted at the path is refused, not followed */
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    fprintf(stderr, "calibrate: cannot open the lock file %s: %s\n", path,
            strerror(errno));
    return CAL_EXIT_INTERNAL;
  }
  (void)fchmod(fd, 0666); /* every user's runs share it (umask aside) */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = "";
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = '\0';
    pid[strcspn(pid, "\n")] = '\0';
    if (errno != EWOULDBLOCK) {
      fprintf(stderr, "calibrate: cannot lock %s: %s\n", path, strerror(errno));
      close(fd);
      return CAL_EXIT_INTERNAL;
    }
    if (no_wait) {
      fprintf(stderr, "calibrate: another calibrate run%s%s%s is measuring "
                      "this machine (lock %s); --no-wait refuses to wait\n",
              pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", path);
      close(fd);
      return CAL_EXIT_BUSY;
    }
    fprintf(stderr, "calibrate: another calibrate run%s%s%s is measuring this "
                    "machine; waiting for it (--no-wait refuses instead)\n",
            pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "");
    while (flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        fprintf(stderr, "calibrate: cannot lock %s: %s\n", path, strerror(errno));
        close(fd);
        return CAL_EXIT_INTERNAL;
      }
    }
  }
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)len, 0) < 0) {
    /* the pid is only for the message of a run that waits */
  }
  c->lock_fd = fd;
  c->locked = 1;
  return 0;
}

int cal_ctx_start_threads(cal_ctx_t *c) {
  int rc = c->topo ? cal_threads_init_topology(&c->thr, c->topo)
                   : cal_threads_init(&c->thr);
  if (rc < 0) {
    fprintf(stderr, "calibrate: cannot read the topology: %s\n", cal_strerror(rc));
    return CAL_EXIT_INTERNAL;
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
