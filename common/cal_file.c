#include "cal_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"

/* Read f to its end into a growing buffer. */
static int read_all(FILE *f, size_t max_bytes, char **buf, size_t *len,
                    char *err, size_t errlen) {
  size_t cap = 0, n = 0;
  char *b = NULL;
  int rc = 0;
  for (;;) {
    if (n + 1 >= cap) {
      size_t ncap = cap ? 2 * cap : 4096;
      char *nb = realloc(b, ncap);
      if (!nb) {
        snprintf(err, errlen, "out of memory");
        rc = CAL_ENOMEM;
        goto out;
      }
      b = nb;
      cap = ncap;
    }
    size_t got = fread(b + n, 1, cap - n - 1, f);
    n += got;
    if (max_bytes && n > max_bytes) {
      snprintf(err, errlen, "larger than %zu bytes", max_bytes);
      rc = CAL_EIO;
      goto out;
    }
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
    rc = CAL_ESYS;
    goto out;
  }
  b[n] = '\0';
out:
  if (rc < 0) {
    free(b);
    b = NULL;
    n = 0;
  }
  *buf = b;
  *len = n;
  return rc;
}

FILE *cal_file_open(const char *path, char *err, size_t errlen) {
  if (strcmp(path, "-") == 0)
    return stdin;
  /* non-blocking, so a FIFO without a writer is seen, not waited for */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s", strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "it is %s, not a regular file",
             S_ISDIR(st.st_mode)    ? "a directory"
             : S_ISFIFO(st.st_mode) ? "a FIFO"
             : S_ISCHR(st.st_mode)  ? "a character device"
             : S_ISBLK(st.st_mode)  ? "a block device"
             : S_ISSOCK(st.st_mode) ? "a socket"
                                    : "a special file");
    close(fd);
    return NULL;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    snprintf(err, errlen, "%s", strerror(errno));
    close(fd);
  }
  return f;
}

int cal_file_read(const char *path, size_t max_bytes, char **buf, size_t *len,
                  char *err, size_t errlen) {
  int is_stdin = strcmp(path, "-") == 0;
  *buf = NULL;
  *len = 0;
  FILE *f = cal_file_open(path, err, errlen);
  if (!f)
    return CAL_EIO;
  errno = 0;
  int rc = read_all(f, max_bytes, buf, len, err, errlen);
  if (!is_stdin)
    fclose(f);
  return rc;
}

int cal_slurp(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t got = fread(buf, 1, len - 1, f);
  fclose(f);
  buf[got] = '\0';
  return 0;
}
