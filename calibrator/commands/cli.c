/* Option parsing helpers and what the profile-reading commands share. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_info.h"
#include "cal_err.h"
#include "cal_esc.h"
#include "cal_exit.h"
#include "cal_out.h"
#include "cal_term.h"
#include "profile.h"

int cal_parse_long(const char *s, long lo, long hi, long *out) {
  if (!s || !*s || isspace((unsigned char)*s))
    return CAL_EINVAL;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi)
    return CAL_EINVAL;
  *out = v;
  return 0;
}

int cal_parse_u64(const char *s, uint64_t *out) {
  /* digits first: strtoull would take " -1" as 2^64 - 1 */
  if (!s || !isdigit((unsigned char)*s))
    return CAL_EINVAL;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end)
    return CAL_EINVAL;
  *out = v;
  return 0;
}

int cal_parse_double(const char *s, double lo, double hi, double *out) {
  if (!s || !*s || isspace((unsigned char)*s))
    return CAL_EINVAL;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v < lo || v > hi)
    return CAL_EINVAL;
  *out = v;
  return 0;
}

int cal_parse_fraction(const char *s, double *out) {
  if (!s || !*s)
    return CAL_EINVAL;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno)
    return CAL_EINVAL;
  if (*end == '%') {
    v /= 100.0;
    end++;
  } else if (v >= 1.0) {
    return CAL_EINVAL; /* "5" is ambiguous: ask for 5% or 0.05 */
  }
  if (*end != '\0' || !(v > 0.0 && v < 1.0))
    return CAL_EINVAL;
  *out = v;
  return 0;
}

int cal_parse_size(const char *s, double *bytes) {
  if (!s || !*s)
    return CAL_EINVAL;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0)
    return CAL_EINVAL;
  static const char units[] = "KMGT";
  double scale = 1.0;
  if (*end) {
    const char *u = strchr(units, *end >= 'a' ? *end - 32 : *end);
    if (!u)
      return CAL_EINVAL;
    scale = pow(1024.0, (double)(u - units + 1));
    end++;
    if (*end == 'i')
      end++;
    if (*end == 'B')
      end++;
  }
  if (*end)
    return CAL_EINVAL;
  *bytes = v * scale;
  return 0;
}

/* The one error line: "calibrate[ CMD]: MSG", with the pointer to the
 * help when the user can fix it. */
__attribute__((format(printf, 3, 0))) static int
error_line(const char *cmd, int code, const char *fmt, va_list ap) {
  char raw[4096], msg[4096 * 4];
  vsnprintf(raw, sizeof raw, fmt, ap);
  cal_esc(msg, sizeof msg, raw); /* echoed input never acts on the terminal */
  const char *sp = cmd ? " " : "", *name = cmd ? cmd : "";
  if (code == CAL_EXIT_USAGE)
    fprintf(stderr, "calibrate%s%s: %s (see 'calibrate%s%s --help')\n", sp,
            name, msg, sp, name);
  else
    fprintf(stderr, "calibrate%s%s: %s\n", sp, name, msg);
  return code;
}

int cal_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = error_line(cmd, CAL_EXIT_USAGE, fmt, ap);
  va_end(ap);
  return rc;
}

int cal_fail(const char *cmd, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = error_line(cmd, code, fmt, ap);
  va_end(ap);
  return rc;
}

int cal_bad_option(const char *cmd, int c, char **argv) {
  const char *arg = optind > 0 ? argv[optind - 1] : "?";
  if (c == ':')
    return cal_usage(cmd, "option '%s' needs a value", arg);
  if (optopt && arg[0] == '-' && arg[1] != '-')
    return cal_usage(cmd, "unknown option '-%c'", optopt);
  return cal_usage(cmd, "unknown option '%s'", arg);
}

int cal_check_writable(const char *path, char *why, size_t whylen) {
  return cal_out_check(path, why, whylen) < 0 ? CAL_EINVAL : 0;
}

int cal_print_version(void) {
  printf("calibrate %s (%s)\n"
         "License: %s (the LICENSE file of the sources)\n",
         cal_version, cal_git, cal_license);
  return CAL_EXIT_OK;
}

int cal_stderr_is_tty(void) { return cal_term_controls(STDERR_FILENO); }

cal_profile_t *cal_cmd_load_profile(const char *cmd, const char *path) {
  cal_profile_t *p = NULL;
  char err[512];
  if (cal_profile_load(path, &p, err, sizeof err) < 0) {
    cal_usage(cmd, "%s", err); /* the caller exits 2 */
    return NULL;
  }
  return p;
}

int cal_cmd_write_json(const char *cmd, const json_t *root, const char *path) {
  char err[512];
  if (cal_json_write_atomic(root, path, err, sizeof err) < 0)
    return cal_usage(cmd, "%s", err); /* an -o path that cannot be written */
  return CAL_EXIT_OK;
}
