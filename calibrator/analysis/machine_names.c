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

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many of the m sorted strings equal key: two binary searches, so
 * many machines stay n log n. */
static size_t count_eq(const char *const *sorted, size_t m, const char *key) {
  size_t lo = 0, hi = m;
  while (lo < hi) { /* first >= key */
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid], key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t first = lo;
  hi = m;
  while (lo < hi) { /* first > key */
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid], key) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - first;
}

/* The named entries of v (n of them, NULL or "" left out), sorted;
 * *m their count.  NULL when out of memory. */
static const char **sorted_names(const char *const *v, size_t n, size_t *m) {
  const char **s = malloc((n ? n : 1) * sizeof *s);
  *m = 0;
  for (size_t i = 0; s && i < n; i++)
    if (named(v[i]))
      s[(*m)++] = v[i];
  if (s)
    qsort(s, *m, sizeof *s, cmp_str);
  return s;
}

int cal_machine_names(const char *const *names, const char *const *paths,
                      size_t n, char ***out) {
  char **res = calloc(n ? n : 1, sizeof *res);
  char **stems = calloc(n ? n : 1, sizeof *stems);
  const char **by_name = NULL, **by_stem = NULL;
  size_t nn = 0, ns = 0;
  int rc = CAL_ENOMEM;
  *out = NULL;
  if (!res || !stems)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (!(stems[i] = file_stem(paths[i] ? paths[i] : "")))
      goto out;
  if (!(by_name = sorted_names(names, n, &nn)) ||
      !(by_stem = sorted_names((const char *const *)stems, n, &ns)))
    goto out;
  for (size_t i = 0; i < n; i++) {
    const char *own = named(names[i]) ? names[i] : NULL;
    const char *path = paths[i] ? paths[i] : "";
    const char *pick = own;
    /* shared: the name missing or another machine's too */
    int shared = !own || count_eq(by_name, nn, own) > 1;
    /* the stem taken: another machine's stem or own name */
    int taken = *stems[i] &&
                (count_eq(by_stem, ns, stems[i]) > 1 ||
                 count_eq(by_name, nn, stems[i]) >
                     (size_t)(own && strcmp(own, stems[i]) == 0));
    if (shared && !(own && strcmp(path, "-") == 0))
      pick = *stems[i] && !taken ? stems[i]
             : *path             ? path
             : own               ? own
                                 : "?";
    if (!(res[i] = strdup(pick)))
      goto out;
  }
  *out = res;
  res = NULL;
  rc = 0;
out:
  free(by_name);
  free(by_stem);
  cal_machine_names_free(res, n);
  cal_machine_names_free(stems, n);
  return rc;
}

void cal_machine_names_free(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++)
    free(names[i]);
  free(names);
}
