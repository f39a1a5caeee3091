/* Small helpers shared by the subcommands' option parsing.  Every parse
 * function returns 0 or CAL_EINVAL and never prints. */
#ifndef CAL_CLI_H
#define CAL_CLI_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* A whole decimal integer in [lo, hi]. */
int cal_parse_long(const char *s, long lo, long hi, long *out);
/* An unsigned 64-bit integer (decimal or 0x hex). */
int cal_parse_u64(const char *s, uint64_t *out);
/* A finite number in [lo, hi]. */
int cal_parse_double(const char *s, double lo, double hi, double *out);
/* A fraction written "5%" or "0.05", strictly between 0 and 1 ("5" is
 * ambiguous and refused). */
int cal_parse_fraction(const char *s, double *out);

/* A size in bytes: a number with an optional K, M, G or T suffix (powers
 * of 1024, "B"/"iB" allowed after it). */
int cal_parse_size(const char *s, double *bytes);

/* Every error a command reports is one line on stderr printed by one of
 * these two; the message is escaped (cal_esc.h), so input it echoes (a
 * profile's strings, a flag's value, a file name) neither acts on the
 * terminal nor breaks the line.  A usage or input error (exit 2: a bad flag, a missing or
 * malformed input, an output that cannot be written) reads
 * "calibrate[ CMD]: MESSAGE (see 'calibrate[ CMD] --help')";
 * cal_usage prints it and returns CAL_EXIT_USAGE for
 * `return cal_usage(...)`. */
int cal_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error ending with exit status code: cal_usage's line when code is
 * CAL_EXIT_USAGE, else "calibrate[ CMD]: MESSAGE" (an internal error,
 * which the help cannot fix).  Returns code. */
int cal_fail(const char *cmd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report an unknown option or a missing argument after getopt_long
 * returned '?' or ':' (opterr must be 0; optstring starting with ':'). */
int cal_bad_option(const char *cmd, int c, char **argv);

/* Check that path can be written before any work starts (cal_out_check:
 * the directory of a new or regular file exists and is writable, a
 * special file is writable); "-" is always fine.  Writes a reason. */
int cal_check_writable(const char *path, char *why, size_t whylen);

/* Helpers the commands that read profiles share (commands/cli.c).
 * Each prints its error through cal_usage or cal_fail. */
/* Load a profile; NULL (cal_usage's line printed: exit 2) when it cannot
 * be read.  Free with cal_profile_free(). */
struct cal_profile *cal_cmd_load_profile(const char *cmd, const char *path);
/* Write JSON atomically to path ("-": stdout): CAL_EXIT_OK, or
 * CAL_EXIT_USAGE when the path cannot be written. */
int cal_cmd_write_json(const char *cmd, const json_t *root, const char *path);

/* The exit-status paragraph of a command's --help, one line per code:
 * the lines every command shares after the command's own. */
#define CAL_HELP_EXIT_COMMON                                                   \
  "  2  usage or input error (one line on standard error)\n"                 \
  "  4  internal error (out of memory, a system call failed)\n"

/* Print the version and licence on stdout (every command's --version);
 * returns CAL_EXIT_OK. */
int cal_print_version(void);

/* Whether progress may be a live line rewritten on stderr: a terminal
 * that understands control sequences (cal_term.h: not TERM=dumb). */
int cal_stderr_is_tty(void);

#endif
