/* The one writer (cal_out.h): atomic replacement, write-through for
 * special files, symlinks resolved, temporary files never left behind. */
#include "cal_out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cal_err.h"

/* ---- temporary files removed when a signal ends the process ---- */

#define NSLOTS 8
static char tmp_paths[NSLOTS][PATH_MAX];
/* what a slot holds: 0 nothing, else one of these */
enum { SLOT_FILE = 1, SLOT_DIR = 2, SLOT_CHILD = 3 };
static volatile sig_atomic_t tmp_used[NSLOTS];
static volatile pid_t child_group[NSLOTS]; /* SLOT_CHILD: its process group */
static int nregistered;

static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int soft_signals[] = {SIGXFSZ, SIGPIPE};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
#define NSOFT (sizeof soft_signals / sizeof soft_signals[0])
static struct sigaction old_fatal[NFATAL], old_soft[NSOFT];

/* The entries of the directory open at fd as getdents64 gives them. */
struct cal_dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

/* Remove the plain files in dir, then dir: system calls only, so a
 * signal handler may call it. */
static void remove_dir_files(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    union {
      char b[4096];
      uint64_t align;
    } buf;
    int removed = 1;
    /* entries removed while reading can hide others: read again */
    for (int pass = 0; removed && pass < 8; pass++) {
      long n;
      removed = 0;
      lseek(fd, 0, SEEK_SET);
      while ((n = syscall(SYS_getdents64, fd, buf.b, sizeof buf.b)) > 0)
        for (long at = 0; at < n;) {
          const struct cal_dirent64 *e = (const void *)(buf.b + at);
          at += e->reclen;
          if (strcmp(e->name, ".") && strcmp(e->name, "..") &&
              unlinkat(fd, e->name, 0) == 0)
            removed = 1;
        }
    }
    close(fd);
  }
  rmdir(dir);
}

static void on_fatal(int sig) {
  /* the children that write files first, then the files, then their
   * directories */
  static const int order[] = {SLOT_CHILD, SLOT_FILE, SLOT_DIR};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < NSLOTS; i++) {
      if (tmp_used[i] != order[k])
        continue;
      if (order[k] == SLOT_CHILD)
        kill(-child_group[i], SIGKILL);
      else if (order[k] == SLOT_FILE)
        unlink(tmp_paths[i]);
      else
        remove_dir_files(tmp_paths[i]);
    }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* SIGXFSZ, SIGPIPE: the write that caused it fails with EFBIG / EPIPE and
 * the normal failure path removes the file. */
static void on_soft(int sig) { (void)sig; }

static void install_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NFATAL; i++) {
    sigaction(fatal_signals[i], NULL, &old_fatal[i]);
    if (old_fatal[i].sa_handler == SIG_IGN)
      continue; /* nohup and the like: keep ignoring it */
    sa.sa_handler = on_fatal;
    sigaction(fatal_signals[i], &sa, NULL);
  }
  for (size_t i = 0; i < NSOFT; i++) {
    sa.sa_handler = on_soft;
    sigaction(soft_signals[i], &sa, &old_soft[i]);
  }
}

static void restore_handlers(void) {
  for (size_t i = 0; i < NFATAL; i++)
    if (old_fatal[i].sa_handler != SIG_IGN)
      sigaction(fatal_signals[i], &old_fatal[i], NULL);
  for (size_t i = 0; i < NSOFT; i++)
    sigaction(soft_signals[i], &old_soft[i], NULL);
}

/* Register path (SLOT_FILE, SLOT_DIR: a directory and its files) for
 * removal on a fatal signal, or a child's process group (SLOT_CHILD,
 * path NULL) to be killed then: the slot, or -1 when it does not fit (too
 * long, or too many at once: then only the normal paths clean up). */
static int register_tmp(const char *path, int kind, pid_t group) {
  if (path && strlen(path) >= PATH_MAX)
    return -1;
  for (int i = 0; i < NSLOTS; i++) {
    if (tmp_used[i])
      continue;
    if (nregistered++ == 0)
      install_handlers();
    if (path)
      memcpy(tmp_paths[i], path, strlen(path) + 1);
    child_group[i] = group;
    tmp_used[i] = kind;
    return i;
  }
  return -1;
}

static void unregister_tmp(int slot) {
  if (slot < 0)
    return;
  tmp_used[slot] = 0;
  if (--nregistered == 0)
    restore_handlers();
}

/* ---- resolving the path ---- */

/* The descriptor a path names by itself: "-", /dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N; -1 for any other path. */
static int named_fd(const char *path) {
  if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
    return STDOUT_FILENO;
  if (strcmp(path, "/dev/stderr") == 0)
    return STDERR_FILENO;
  const char *num = NULL;
  if (strncmp(path, "/dev/fd/", 8) == 0)
    num = path + 8;
  else if (strncmp(path, "/proc/self/fd/", 14) == 0)
    num = path + 14;
  if (!num || *num < '0' || *num > '9')
    return -1;
  char *end;
  long fd = strtol(num, &end, 10);
  if (*end || fd > INT_MAX)
    return -1;
  return (int)fd;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return strdup(".");
  if (slash == path)
    return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

/* Follow symlinks at path to the final name (which may not exist yet):
 * malloc'd, NULL with errno set (ELOOP after 40 links, ENOMEM). */
static char *resolve_links(const char *path) {
  char *p = strdup(path);
  for (int hops = 0; p; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
      return p; /* missing (to be created) or not a link */
    if (hops == 40) {
      free(p);
      errno = ELOOP;
      return NULL;
    }
    char link[PATH_MAX];
    ssize_t n = readlink(p, link, sizeof link - 1);
    if (n < 0) {
      free(p);
      return NULL;
    }
    link[n] = '\0';
    char *next;
    if (link[0] == '/') {
      next = strdup(link);
    } else {
      char *dir = dir_of(p);
      size_t len = dir ? strlen(dir) + (size_t)n + 2 : 0;
      next = dir ? malloc(len) : NULL;
      if (next)
        snprintf(next, len, "%s/%s", dir, link);
      free(dir);
    }
    free(p);
    p = next;
  }
  errno = ENOMEM;
  return NULL;
}

static const char *kind_of(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
                       : "not a regular file";
}

static int mode_for_new(void) {
  mode_t m = umask(022);
  umask(m);
  return (int)(0666 & ~m);
}

/* ---- writing ---- */

static int fail(cal_out_t *o, int rc, char *err, size_t errlen,
                const char *why) {
  snprintf(err, errlen, "cannot write %s: %s", o->name ? o->name : "?", why);
  cal_out_abort(o);
  return rc;
}

/* Write through to a special file: opened without blocking (a FIFO that
 * nobody reads is ENXIO), then made blocking for the writes. */
static int open_through(cal_out_t *o, const char *target, char *err,
                        size_t errlen) {
  int fd = open(target, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return fail(o, CAL_EIO, err, errlen,
                e == ENXIO ? "no process is reading the FIFO" : strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
      S_ISBLK(st.st_mode)) {
    close(fd); /* replaced between the check and the open */
    return fail(o, CAL_EIO, err, errlen, "the file changed while opening it");
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  o->fd = fd;
  o->own_fd = 1;
  o->through = 1;
  return 0;
}

/* A temporary file beside target, to be renamed over it: a short name of
 * its own (CAL_OUT_TMP_NAME), so a target name of any allowed length
 * still has room for it. */
static int open_tmp(cal_out_t *o, const char *target, int mode, char *err,
                    size_t errlen) {
  char *dir = dir_of(target);
  size_t len = dir ? strlen(dir) + sizeof CAL_OUT_TMP_NAME + 2 : 0;
  if (!dir || !(o->target = strdup(target)) || !(o->tmp = malloc(len))) {
    free(dir);
    return fail(o, CAL_ENOMEM, err, errlen, "out of memory");
  }
  snprintf(o->tmp, len, "%s/%s", dir, CAL_OUT_TMP_NAME);
  free(dir);
  sigset_t all, old;
  sigfillset(&all);
  /* no signal between creating the file and registering it */
  sigprocmask(SIG_BLOCK, &all, &old);
  int fd = mkostemp(o->tmp, O_CLOEXEC);
  int e = errno;
  if (fd >= 0)
    o->slot = register_tmp(o->tmp, SLOT_FILE, 0);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) {
    free(o->tmp);
    o->tmp = NULL;
    return fail(o, CAL_EIO, err, errlen, strerror(e));
  }
  o->fd = fd;
  o->own_fd = 1;
  o->mode = mode;
  if (fchmod(fd, (mode_t)mode) != 0)
    return fail(o, CAL_EIO, err, errlen, strerror(errno));
  return 0;
}

int cal_out_open(cal_out_t *o, const char *path, int flags, char *err,
                 size_t errlen) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->slot = -1;
  if (!(o->name = strdup(strcmp(path, "-") == 0 ? "standard output" : path)))
    return fail(o, CAL_ENOMEM, err, errlen, "out of memory");
  if (!*path)
    return fail(o, CAL_EIO, err, errlen, "empty file name");
  struct stat st;
  if (!(flags & CAL_OUT_NOFOLLOW)) {
    int fd = named_fd(path);
    if (fd >= 0) {
      if (fcntl(fd, F_GETFL) < 0)
        return fail(o, CAL_EIO, err, errlen, "the descriptor is not open");
      o->fd = fd;
      o->through = 1;
      return 0;
    }
    char *target = resolve_links(path);
    if (!target)
      return fail(o, errno == ENOMEM ? CAL_ENOMEM : CAL_EIO, err, errlen,
                  strerror(errno));
    int rc = 0, exists = stat(target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
      if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        rc = open_through(o, target, err, errlen);
      else {
        char why[64];
        snprintf(why, sizeof why, "it is %s", kind_of(st.st_mode));
        rc = fail(o, CAL_EIO, err, errlen, why);
      }
    } else {
      rc = open_tmp(o, target,
                    exists ? (int)(st.st_mode & 07777) : mode_for_new(), err,
                    errlen);
    }
    free(target);
    return rc;
  }
  if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return fail(o, CAL_EIO, err, errlen, "it is a directory");
  return open_tmp(o, path, mode_for_new(), err, errlen);
}

int cal_out_fd(const cal_out_t *o) { return o->fd; }

int cal_out_write(cal_out_t *o, const void *buf, size_t len, char *err,
                  size_t errlen) {
  const char *p = buf;
  if (o->fd < 0)
    return fail(o, CAL_EIO, err, errlen, "not open");
  while (len > 0) {
    ssize_t n = write(o->fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail(o, CAL_EIO, err, errlen,
                  n < 0 ? strerror(errno) : "nothing written");
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* fsync the directory holding path, so the rename survives a crash. */
static void sync_dir(const char *path) {
  char *dir = dir_of(path);
  int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

int cal_out_commit(cal_out_t *o, char *err, size_t errlen) {
  if (o->fd < 0)
    return fail(o, CAL_EIO, err, errlen, "not open");
  if (o->through) {
    int rc = 0;
    if (o->own_fd && close(o->fd) != 0)
      rc = fail(o, CAL_EIO, err, errlen, strerror(errno));
    o->fd = -1;
    cal_out_abort(o);
    return rc;
  }
  if (fsync(o->fd) != 0)
    return fail(o, CAL_EIO, err, errlen, strerror(errno));
  int closed = close(o->fd);
  o->fd = -1;
  if (closed != 0)
    return fail(o, CAL_EIO, err, errlen, strerror(errno));
  if (rename(o->tmp, o->target) != 0)
    return fail(o, CAL_EIO, err, errlen, strerror(errno));
  sync_dir(o->target);
  free(o->tmp); /* renamed: nothing left to remove */
  o->tmp = NULL;
  cal_out_abort(o);
  return 0;
}

void cal_out_abort(cal_out_t *o) {
  if (o->fd >= 0 && o->own_fd)
    close(o->fd);
  o->fd = -1;
  if (o->tmp)
    unlink(o->tmp);
  unregister_tmp(o->slot);
  o->slot = -1;
  free(o->tmp);
  free(o->target);
  free(o->name);
  o->tmp = o->target = o->name = NULL;
}

int cal_out_file(const char *path, const void *buf, size_t len, int flags,
                 char *err, size_t errlen) {
  cal_out_t o;
  int rc = cal_out_open(&o, path, flags, err, errlen);
  if (rc == 0)
    rc = cal_out_write(&o, buf, len, err, errlen);
  if (rc == 0)
    rc = cal_out_commit(&o, err, errlen);
  return rc;
}

int cal_out_check(const char *path, char *why, size_t whylen) {
  struct stat st;
  int rc = CAL_EIO;
  if (!*path) {
    snprintf(why, whylen, "empty file name");
    return CAL_EIO;
  }
  if (named_fd(path) >= 0)
    return fcntl(named_fd(path), F_GETFL) >= 0
               ? 0
               : (snprintf(why, whylen, "%s is not open", path), CAL_EIO);
  char *target = resolve_links(path), *dir = NULL;
  if (!target) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
    return CAL_EIO;
  }
  if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISFIFO(st.st_mode))
      rc = 0; /* its reader may start later; the write says when none */
    else if (S_ISCHR(st.st_mode) && access(target, W_OK) == 0)
      rc = 0;
    else if (S_ISCHR(st.st_mode))
      snprintf(why, whylen, "%s is not writable", path);
    else
      snprintf(why, whylen, "%s is %s, not a file", path, kind_of(st.st_mode));
    goto out;
  }
  if (!(dir = dir_of(target))) {
    snprintf(why, whylen, "out of memory");
    goto out;
  }
  if (stat(dir, &st) != 0)
    snprintf(why, whylen, "directory %s does not exist", dir);
  else if (!S_ISDIR(st.st_mode))
    snprintf(why, whylen, "%s is %s, not a directory", dir,
             S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode));
  else if (access(dir, W_OK | X_OK) != 0)
    snprintf(why, whylen, "directory %s is not writable", dir);
  else
    rc = 0;
out:
  free(dir);
  free(target);
  return rc;
}

int cal_out_tmpdir(const char *parent, const char *prefix, char **out,
                   int *slot) {
  size_t len = strlen(parent) + strlen(prefix) + 16;
  char *d = malloc(len);
  *out = NULL;
  *slot = -1;
  if (!d)
    return CAL_ENOMEM;
  snprintf(d, len, "%s/%s.XXXXXX", parent, prefix);
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old); /* made and registered as one step */
  int ok = mkdtemp(d) != NULL, e = errno;
  if (ok)
    *slot = register_tmp(d, SLOT_DIR, 0);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (!ok) {
    free(d);
    errno = e;
    return CAL_EIO;
  }
  *out = d;
  return 0;
}

void cal_out_tmpdir_remove(char *dir, int slot) {
  if (!dir)
    return;
  remove_dir_files(dir);
  unregister_tmp(slot);
  free(dir);
}

int cal_out_watch_child(pid_t group) {
  return group > 0 ? register_tmp(NULL, SLOT_CHILD, group) : -1;
}

void cal_out_unwatch_child(int slot) { unregister_tmp(slot); }
