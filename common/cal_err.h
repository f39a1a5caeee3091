/* Error codes shared by every layer of calibrate.
 *
 * Convention (everywhere): functions return 0 on success and a negative
 * CAL_E* code on failure; functions returning pointers return NULL on
 * failure.  cal_strerror() gives a short message for a code; the string
 * belongs to the library, do not free it. */
#ifndef CAL_ERR_H
#define CAL_ERR_H

#define CAL_ERRNO_MAP(X)                                                     \
  X(NOMEM,     -1, "out of memory")                                           \
  X(INVAL,     -2, "invalid argument")                                        \
  X(VERIFY,    -3, "result failed verification")                              \
  X(IO,        -4, "input/output error")                                      \
  X(PARSE,     -5, "malformed input")                                         \
  X(SCHEMA,    -6, "profile does not match the schema")                       \
  X(UNSUPP,    -7, "not supported on this machine")                           \
  X(TOOBIG,    -8, "does not fit in available memory")                        \
  X(TIMEOUT,   -9, "time budget exhausted")                                   \
  X(SYS,      -10, "system call failed")                                      \
  X(NOTFOUND, -11, "not found")                                           \
  X(INTR,     -12, "interrupted by a signal")

typedef enum {
  CAL_OK = 0,
#define CAL_ERR_ENUM_(name, code, msg) CAL_E##name = (code),
  CAL_ERRNO_MAP(CAL_ERR_ENUM_)
#undef CAL_ERR_ENUM_
} cal_err_t;

/* Message for a code; static storage, never NULL. */
const char *cal_strerror(int code);
/* Symbolic name ("CAL_EVERIFY"); static storage, never NULL. */
const char *cal_err_name(int code);

#endif
