/* libFuzzer target: the flag parsers.  The input is split at NUL bytes
 * into arguments for the shared run options (cal_opts_parse), and its
 * first argument also goes through every value parser (numbers, sizes,
 * fractions, batch lists). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "curve.h"
#include "measure.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void values(const char *s) {
  long l;
  uint64_t u;
  double d;
  int64_t *v = NULL;
  size_t n = 0;
  char err[256];
  cal_parse_long(s, -(1L << 40), 1L << 40, &l);
  cal_parse_u64(s, &u);
  cal_parse_double(s, 0, 1e15, &d);
  cal_parse_fraction(s, &d);
  cal_parse_size(s, &d);
  if (cal_batches_parse(s, &v, &n, err, sizeof err) == 0)
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  char *text = malloc(size + 1);
  char *argv[66];
  int argc = 0;
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  argv[argc++] = "run";
  for (char *p = text; argc < 65 && p <= text + size; p += strlen(p) + 1)
    argv[argc++] = p;
  argv[argc] = NULL;
  values(argv[1]);
  cal_opts_t o;
  cal_opts_action_t action;
  /* stderr lines of refused flags are expected; only crashes count */
  cal_opts_parse(&o, argc, argv, &cal_run_opts, &action);
  cal_opts_free(&o);
  free(text);
  return 0;
}
