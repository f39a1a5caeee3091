/* Reading a whole file into memory.
 *
 * cal_file_read(): path "-" reads standard input (left open).  On success
 * *buf holds *len bytes plus a terminating NUL (not counted in *len); the
 * caller free()s *buf.  On failure *buf is NULL and err holds the reason
 * alone, e.g. "No such file or directory" or "larger than 1048576 bytes";
 * the caller adds the path.  Returns 0, CAL_EIO (cannot open, or larger
 * than max_bytes; 0 = no limit), CAL_ESYS (opened, but a read failed, as
 * for a directory) or CAL_ENOMEM. */
#ifndef CAL_FILE_H
#define CAL_FILE_H

#include <stddef.h>

int cal_file_read(const char *path, size_t max_bytes, char **buf, size_t *len,
                  char *err, size_t errlen);

/* Read a small text file whole into buf (at most len - 1 bytes),
 * NUL-terminated: 0, or -1 when it cannot be opened. */
int cal_slurp(const char *path, char *buf, size_t len);

#endif
