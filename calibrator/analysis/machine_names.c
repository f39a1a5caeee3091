/* Names that tell machines apart (machine_names.h). */
#include "machine_names.h"

#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

/* The file's name without its folder and extension, malloc'd. */
static char *file_stem(const char *path) {
  if (strcmp(path, "-") == 0)
    return strdup("<stdin>");
  const char *b = strrchr(path, '/');
  char *s = strdup(b && b[1] ? b + 1 : path);
  char *dot = s ? strrchr(s, '.') : NULL;
  if (dot && dot != s)
    *dot = '\0';
  return s;
}

static int named(const char *s) { return s && *s; }

/* Whether name i is shared with another machine (or missing). */
static int shared(const char *const *names, size_t n, size_t i) {
  if (!named(names[i]))
    return 1;
  for (size_t j = 0; j < n; j++)
    if (j != i && named(names[j]) && strcmp(names[i], names[j]) == 0)
      return 1;
  return 0;
}

/* Whether stem (machine i's file name) is another machine's file name or
 * own name. */
static int stem_taken(const char *stem, const char *const *names,
                      char *const *stems, size_t n, size_t i) {
  for (size_t j = 0; j < n; j++)
    if (j != i && (strcmp(stem, stems[j]) == 0 ||
                   (named(names[j]) && strcmp(stem, names[j]) == 0)))
      return 1;
  return 0;
}

int cal_machine_names(const char *const *names, const char *const *paths,
                      size_t n, char ***out) {
  char **res = calloc(n ? n : 1, sizeof *res);
  char **stems = calloc(n ? n : 1, sizeof *stems);
  int rc = CAL_ENOMEM;
  *out = NULL;
  if (!res || !stems)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (!(stems[i] = file_stem(paths[i] ? paths[i] : "")))
      goto out;
  for (size_t i = 0; i < n; i++) {
    const char *own = named(names[i]) ? names[i] : NULL;
    const char *path = paths[i] ? paths[i] : "";
    const char *pick = own;
    if (shared(names, n, i) && !(own && strcmp(path, "-") == 0))
      pick = *stems[i] && !stem_taken(stems[i], names, stems, n, i)
                 ? stems[i]
                 : *path ? path : own ? own : "?";
    if (!(res[i] = strdup(pick)))
      goto out;
  }
  *out = res;
  res = NULL;
  rc = 0;
out:
  cal_machine_names_free(res, n);
  cal_machine_names_free(stems, n);
  return rc;
}

void cal_machine_names_free(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++)
    free(names[i]);
  free(names);
}
