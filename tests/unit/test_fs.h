/* File helpers shared by tests that write files: a scratch directory whose
 * name holds a space, whole-file reads and writes, recursive removal.
 * Callers free what test_read_file and test_path return. */
#ifndef CAL_TEST_FS_H
#define CAL_TEST_FS_H

#include <sys/stat.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

/* mkdtemp under $TMPDIR or /tmp; the name has a space in it.  NULL on
 * failure. */
static inline char *test_scratch_dir(void) {
  const char *tmp = getenv("TMPDIR");
  char buf[512];
  snprintf(buf, sizeof buf, "%s/cal test XXXXXX", tmp && *tmp ? tmp : "/tmp");
  char *d = mkdtemp(buf);
  return d ? strdup(d) : NULL;
}

static inline char *test_path(const char *dir, const char *name) {
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p)
    snprintf(p, len, "%s/%s", dir, name);
  return p;
}

/* Whole file, NUL-terminated; *len (may be NULL) gets its size. */
static inline char *test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0, k;
  do {
    if (n + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *b = realloc(buf, cap);
      if (!b) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = b;
    }
    k = fread(buf + n, 1, 4096, f);
    n += k;
  } while (k > 0);
  fclose(f);
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

/* Write text to root/rel, creating the directories of rel first.  0, or -1
 * when a directory or the file cannot be made. */
static inline int test_write_file_at(const char *root, const char *rel,
                                     const char *text) {
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/%s", root, rel);
  if (n < 0 || (size_t)n >= sizeof path)
    return -1;
  for (char *p = path + strlen(root) + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int rc = fputs(text, f) < 0 ? -1 : 0;
  return fclose(f) == 0 ? rc : -1;
}

static inline int test_rm_one(const char *p, const struct stat *st, int flag,
                              struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(p);
}

static inline void test_rm_rf(const char *dir) {
  if (dir)
    nftw(dir, test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Load a profile from tests/data, change it with `edit`, write it to
 * dir/name.  Returns the new path (free it) or NULL. */
static inline char *test_profile_variant(const char *data_file,
                                         const char *dir, const char *name,
                                         void (*edit)(json_t *root, void *arg),
                                         void *arg) {
  cal_profile_t *p = NULL;
  char err[256];
  if (cal_profile_load(data_file, &p, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  if (edit)
    edit(p->root, arg);
  char *out = test_path(dir, name);
  if (out && cal_json_write_atomic(p->root, out, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    free(out);
    out = NULL;
  }
  cal_profile_free(p);
  return out;
}

/* free() of each pointer given (NULL ones too). */
#define test_free_each(...)                                                  \
  do {                                                                       \
    void *p_[] = {__VA_ARGS__};                                              \
    for (size_t i_ = 0; i_ < sizeof p_ / sizeof *p_; i_++)                   \
      free(p_[i_]);                                                          \
  } while (0)

#endif
