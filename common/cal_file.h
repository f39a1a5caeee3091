/* Reading input files.
 *
 * Every input file is opened with cal_file_open(): path "-" is standard
 * input; any other path must be a regular file (a directory, a FIFO, a
 * device such as /dev/zero or a socket is refused, without blocking on a
 * FIFO that has no writer).
 *
 * cal_file_read(): the whole file opened so into memory.  On success
 * *buf holds *len bytes plus a terminating NUL (not counted in *len); the
 * caller free()s *buf.  On failure *buf is NULL and err holds the reason
 * alone, e.g. "No such file or directory" or "larger than 1048576 bytes";
 * the caller adds the path.  Returns 0, CAL_EIO (cannot open, or larger
 * than max_bytes; 0 = no limit), CAL_ESYS (opened, but a read failed, as
 * for a directory) or CAL_ENOMEM. */
#ifndef CAL_FILE_H
#define CAL_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Open path for reading as above: a FILE (stdin for "-", not to be
 * closed), or NULL with the reason alone in err ("No such file or
 * directory", "it is a directory", "it is a FIFO, not a regular file"). */
FILE *cal_file_open(const char *path, char *err, size_t errlen);

int cal_file_read(const char *path, size_t max_bytes, char **buf, size_t *len,
                  char *err, size_t errlen);

/* Read a small text file whole into buf (at most len - 1 bytes),
 * NUL-terminated: 0, or -1 when it cannot be opened. */
int cal_slurp(const char *path, char *buf, size_t len);

#endif
