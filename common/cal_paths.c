/* The data directory lookup (see cal_paths.h). */
#include "cal_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cal_err.h"

/* The way from the installed binary's directory to its data: relative
 * (the installed tree can move) or absolute, set by the build from its
 * install directories (GNUInstallDirs' BINDIR and DATADIR). */
#ifndef CAL_DATA_FROM_BIN
#define CAL_DATA_FROM_BIN "../share/calibrate"
#endif

/* Resolved once, on first use (before any thread team starts). */
static int resolved, env_data;
static char exe_dir[PATH_MAX];   /* "" when /proc/self/exe is unreadable */
static char source[PATH_MAX];    /* "" when installed */
static char data[PATH_MAX];      /* "" when none found */
static char results[PATH_MAX];

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The source tree named by the build's marker next to the binary. */
static void read_marker(void) {
  char path[PATH_MAX + sizeof CAL_PATHS_MARKER + 1];
  if (!exe_dir[0])
    return;
  snprintf(path, sizeof path, "%s/%s", exe_dir, CAL_PATHS_MARKER);
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  if (fgets(source, sizeof source, f)) {
    source[strcspn(source, "\n")] = '\0';
    if (!is_dir(source))
      source[0] = '\0';
  } else {
    source[0] = '\0';
  }
  fclose(f);
}

static void resolve(void) {
  if (resolved)
    return;
  resolved = 1;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      snprintf(exe_dir, sizeof exe_dir, "%s", exe[0] ? exe : "/");
    }
  }
  const char *env = getenv("CALIBRATE_DATA_DIR");
  read_marker();
  env_data = env && *env;
  if (env_data) {
    snprintf(data, sizeof data, "%s", env);
  } else if (source[0]) {
    snprintf(data, sizeof data, "%s", source);
  } else if (exe_dir[0]) {
    char p[PATH_MAX + sizeof CAL_DATA_FROM_BIN + 1];
    if (CAL_DATA_FROM_BIN[0] == '/')
      snprintf(p, sizeof p, "%s", CAL_DATA_FROM_BIN);
    else
      snprintf(p, sizeof p, "%s/%s", exe_dir, CAL_DATA_FROM_BIN);
    char real[PATH_MAX];
    if (realpath(p, real) && is_dir(real))
      snprintf(data, sizeof data, "%s", real);
  }
  const char *rd = getenv("CALIBRATE_RESULTS_DIR");
  if (rd && *rd) {
    snprintf(results, sizeof results, "%s", rd);
  } else if (source[0]) {
    if ((size_t)snprintf(results, sizeof results, "%s/results", source) >=
            sizeof results ||
        !is_dir(results))
      results[0] = '\0';
  }
  if (!results[0])
    snprintf(results, sizeof results, ".");
}

const char *cal_data_dir(void) {
  resolve();
  return data[0] ? data : NULL;
}

const char *cal_source_dir(void) {
  resolve();
  return source[0] && !env_data ? source : NULL;
}

int cal_data_path(cal_data_t what, char *out, size_t len, char *err,
                  size_t errlen) {
  const char *dir = cal_data_dir();
  if (!dir) {
    snprintf(err, errlen,
             "cannot find the data directory (" CAL_DATA_FROM_BIN
             " from the installed binary's directory); set "
             "CALIBRATE_DATA_DIR");
    return CAL_ENOTFOUND;
  }
  const char *sub = what == CAL_DATA_PLOTS    ? "plots"
                    : cal_source_dir() != NULL ? "results/schema"
                                               : "schema";
  if ((size_t)snprintf(out, len, "%s/%s", dir, sub) >= len) {
    snprintf(err, errlen, "the data directory's path is too long");
    return CAL_ENOTFOUND;
  }
  return 0;
}

const char *cal_results_default_dir(void) {
  resolve();
  return results;
}
