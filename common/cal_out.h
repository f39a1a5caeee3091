/* The one writer: every file calibrate writes goes through here.
 *
 * What a path becomes:
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *       written through to that open descriptor (never reopened);
 *   a regular file, or a name that does not exist yet
 *       replaced atomically: a temporary file DIR/.calibrate.tmp.XXXXXX
 *       in the same directory (created O_EXCL; a short name, so a PATH
 *       whose last part is as long as a name can be still has room for
 *       it), written, fsync'ed, renamed over PATH;
 *       the temporary file is removed on every failure, also when a signal
 *       (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ends the process while it
 *       exists; SIGXFSZ and SIGPIPE make the write fail (EFBIG, EPIPE)
 *       instead of killing the process;
 *   a symlink
 *       resolved (a chain of them too) and its final target replaced
 *       atomically as above, the link left as it is;
 *   a character device or a FIFO (/dev/null, a named pipe)
 *       written through, never replaced; a FIFO is opened non-blocking
 *       first, so one that no process reads is an error, not a hang;
 *   a directory, a block device or a socket
 *       refused.
 * With CAL_OUT_NOFOLLOW (files a command creates inside an output
 * directory, such as chart files) nothing at PATH is followed or written
 * through: whatever is there (a planted symlink, a FIFO) is replaced by
 * the new regular file.
 *
 * Every function returns 0 or a negative CAL_E* code (CAL_EIO: the file
 * cannot be written, CAL_ENOMEM) and then writes one line into err
 * ("cannot write PATH: reason"). */
#ifndef CAL_OUT_H
#define CAL_OUT_H

#include <stddef.h>
#include <sys/types.h>

#define CAL_OUT_NOFOLLOW 1
/* The name of the temporary files, beside their target. */
#define CAL_OUT_TMP_NAME ".calibrate.tmp.XXXXXX"

typedef struct cal_out {
  int fd;         /* -1 when nothing is open */
  int own_fd;     /* fd is ours to close */
  int through;    /* writing through (no temporary file) */
  int mode;       /* permissions of the new file */
  int slot;       /* index in the signal cleanup list; -1 none */
  char *tmp;      /* the temporary file; owned */
  char *target;   /* the file it replaces; owned */
  char *name;     /* the path as given, for messages; owned */
} cal_out_t;

/* Start writing path (flags: 0 or CAL_OUT_NOFOLLOW).  On success o must
 * be finished with cal_out_commit() or cal_out_abort(). */
int cal_out_open(cal_out_t *o, const char *path, int flags, char *err,
                 size_t errlen);
/* Append len bytes. */
int cal_out_write(cal_out_t *o, const void *buf, size_t len, char *err,
                  size_t errlen);
/* The descriptor being written (e.g. for a child process's stdout). */
int cal_out_fd(const cal_out_t *o);
/* Finish: fsync and rename (or nothing more when writing through).  On
 * failure the temporary file is removed.  o is closed either way. */
int cal_out_commit(cal_out_t *o, char *err, size_t errlen);
/* Give up: the temporary file is removed, the target untouched.  Accepts
 * an o that is already closed. */
void cal_out_abort(cal_out_t *o);

/* open + write + commit of one buffer. */
int cal_out_file(const char *path, const void *buf, size_t len, int flags,
                 char *err, size_t errlen);

/* Whether path could be written before any work starts (the directory of
 * a new or regular file exists and is writable; a special file can be
 * opened for writing, a FIFO exists).  0, or CAL_EIO with the reason
 * alone in why ("directory D does not exist"). */
int cal_out_check(const char *path, char *why, size_t whylen);

/* A new private directory PARENT/PREFIX.XXXXXX (mkdtemp, mode 0700) for
 * files a command writes and reads back (charts to inline): a fatal
 * signal removes it and the files in it, as it removes the temporary
 * files.  *out is malloc'd; *slot is for cal_out_tmpdir_remove.  0,
 * CAL_ENOMEM or CAL_EIO (errno set). */
int cal_out_tmpdir(const char *parent, const char *prefix, char **out,
                   int *slot);
/* Remove dir's plain files and dir, stop watching it and free dir
 * (NULL: nothing). */
void cal_out_tmpdir_remove(char *dir, int slot);

/* A child process writing into those files (gnuplot), in its own process
 * group: a fatal signal kills the group before the files are removed.
 * Returns the slot for cal_out_unwatch_child (-1: not watched), called
 * once the child is reaped. */
int cal_out_watch_child(pid_t group);
void cal_out_unwatch_child(int slot);

#endif
