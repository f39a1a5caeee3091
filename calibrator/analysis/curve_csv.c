#include "curve_csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cal_err.h"
#include "cal_file.h"
#include "cal_vec.h"

enum { COL_BATCH, COL_THROUGHPUT, COL_MACHINE, COL_STATUS, COL_COUNT };

static const char *const col_batch[] = {"batch_size", "batch", "batchsize",
                                        "bs", NULL};
static const char *const col_throughput[] = {
    "throughput",     "throughput_ex_per_s", "examples_per_s",
    "ex_per_s",       "throughput_examples_per_s", "samples_per_s", NULL};
static const char *const col_machine[] = {"machine", "device", "device_name",
                                          "host", NULL};
static const char *const col_status[] = {"status", NULL};
static const char *const *const col_aliases[COL_COUNT] = {
    [COL_BATCH] = col_batch,
    [COL_THROUGHPUT] = col_throughput,
    [COL_MACHINE] = col_machine,
    [COL_STATUS] = col_status,
};

typedef struct row {
  size_t machine; /* index into the machine names */
  int64_t batch;
  double value;
  int ok;
  size_t line;
} row_t;

typedef struct reader {
  const char *name;
  char *err;
  size_t errlen;
  size_t line;
  char **fields; /* pointers into the current line */
  size_t nf, fcap;
  row_t *rows;
  size_t nrows, rcap;
  char **machines;
  size_t nmach, mcap;
  size_t *slots; /* hash of the machine names: index + 1, 0 empty */
  size_t nslots; /* a power of two, or 0 */
} reader_t;

static int fail_at(reader_t *r, size_t line, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(reader_t *r, size_t line, int rc, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->err, r->errlen, "%s:%zu: %s", r->name, line, msg);
  return rc;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

static int push_field(reader_t *r, char *f) {
  if (cal_grow(&r->fields, r->nf, &r->fcap, sizeof *r->fields, 8) < 0)
    return CAL_ENOMEM;
  r->fields[r->nf++] = f;
  return 0;
}

/* Split `line` in place into r->fields; quoted fields are unquoted, every
 * field is trimmed. */
static int split_fields(reader_t *r, char *line) {
  r->nf = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t')
      p++;
    char *start = p;
    if (*p == '"') {
      char *w = p;
      p++;
      for (;;) {
        if (*p == '\0')
          return fail_at(r, r->line, CAL_EPARSE, "unterminated quoted field");
        if (*p == '"') {
          if (p[1] == '"') {
            *w++ = '"';
            p += 2;
            continue;
          }
          p++;
          break;
        }
        *w++ = *p++;
      }
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p != ',' && *p != '\0')
        return fail_at(r, r->line, CAL_EPARSE,
                       "unexpected text after a quoted field");
      char sep = *p;
      *w = '\0';
      if (push_field(r, start) < 0)
        return CAL_ENOMEM;
      if (sep == '\0')
        return 0;
      p++;
    } else {
      char *comma = strchr(p, ',');
      if (comma)
        *comma = '\0';
      if (push_field(r, trim(start)) < 0)
        return CAL_ENOMEM;
      if (!comma)
        return 0;
      p = comma + 1;
    }
  }
}

static int is_blank_or_comment(const char *s) {
  while (isspace((unsigned char)*s))
    s++;
  return *s == '\0' || *s == '#';
}

/* A decimal number (no hex, no words such as "inf"): 0, CAL_EPARSE. */
static int parse_decimal(const char *s, double *v) {
  if (*s == '\0')
    return CAL_EPARSE;
  for (const char *p = s; *p; p++)
    if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
      return CAL_EPARSE;
  char *end = NULL;
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || *end != '\0')
    return CAL_EPARSE;
  return 0;
}

static size_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (size_t)h;
}

/* The slot of name in the hash: its machine's, or the empty one where it
 * would go. */
static size_t *name_slot(const reader_t *r, const char *name) {
  size_t mask = r->nslots - 1, i = name_hash(name) & mask;
  while (r->slots[i] && strcmp(r->machines[r->slots[i] - 1], name) != 0)
    i = (i + 1) & mask;
  return &r->slots[i];
}

/* Keep the hash at most half full: machine names are looked up once a
 * row, so a curve of many machines stays linear. */
static int names_rehash(reader_t *r) {
  if (2 * (r->nmach + 1) <= r->nslots)
    return 0;
  size_t n = r->nslots ? 2 * r->nslots : 64;
  size_t *slots = calloc(n, sizeof *slots);
  if (!slots)
    return CAL_ENOMEM;
  free(r->slots);
  r->slots = slots;
  r->nslots = n;
  for (size_t k = 0; k < r->nmach; k++)
    *name_slot(r, r->machines[k]) = k + 1;
  return 0;
}

static int machine_index(reader_t *r, const char *name, size_t *idx) {
  if (names_rehash(r) < 0)
    return CAL_ENOMEM;
  size_t *slot = name_slot(r, name);
  if (*slot) {
    *idx = *slot - 1;
    return 0;
  }
  if (cal_grow(&r->machines, r->nmach, &r->mcap, sizeof *r->machines, 4) < 0)
    return CAL_ENOMEM;
  char *copy = strdup(name);
  if (!copy)
    return CAL_ENOMEM;
  r->machines[r->nmach] = copy;
  *slot = r->nmach + 1;
  *idx = r->nmach++;
  return 0;
}

static int push_row(reader_t *r, const row_t *row) {
  if (cal_grow(&r->rows, r->nrows, &r->rcap, sizeof *r->rows, 64) < 0)
    return CAL_ENOMEM;
  r->rows[r->nrows++] = *row;
  return 0;
}

/* Map header fields to columns; cols[k] = field index or -1. */
static int read_header(reader_t *r, long cols[COL_COUNT]) {
  for (int k = 0; k < COL_COUNT; k++)
    cols[k] = -1;
  for (size_t i = 0; i < r->nf; i++) {
    const char *h = r->fields[i];
    for (int k = 0; k < COL_COUNT; k++)
      for (const char *const *a = col_aliases[k]; *a; a++)
        if (strcasecmp(h, *a) == 0) {
          if (cols[k] >= 0)
            return fail_at(r, r->line, CAL_EPARSE,
                           "columns \"%s\" and \"%s\" both give the %s",
                           r->fields[cols[k]], h,
                           k == COL_BATCH        ? "batch size"
                           : k == COL_THROUGHPUT ? "throughput"
                           : k == COL_MACHINE    ? "machine"
                                                 : "status");
          cols[k] = (long)i;
        }
  }
  if (cols[COL_BATCH] < 0)
    return fail_at(r, r->line, CAL_EPARSE,
                   "missing column batch_size (the first line must be a "
                   "header such as batch_size,throughput)");
  if (cols[COL_THROUGHPUT] < 0)
    return fail_at(r, r->line, CAL_EPARSE,
                   "missing column throughput (also accepted: "
                   "throughput_ex_per_s, examples_per_s, ex_per_s)");
  return 0;
}

static int read_row(reader_t *r, const long cols[COL_COUNT], size_t nhead) {
  if (r->nf != nhead)
    return fail_at(r, r->line, CAL_EPARSE, "expected %zu fields, found %zu",
                   nhead, r->nf);
  row_t row = {0, 0, 0.0, 1, r->line};

  if (cols[COL_STATUS] >= 0) {
    const char *st = r->fields[cols[COL_STATUS]];
    if (strcasecmp(st, "ok") == 0)
      row.ok = 1;
    else if (strcasecmp(st, "skipped") == 0 || strcasecmp(st, "failed") == 0)
      row.ok = 0;
    else
      return fail_at(r, r->line, CAL_EPARSE,
                     "status \"%s\" is not ok, skipped or failed", st);
  }

  const char *b = r->fields[cols[COL_BATCH]];
  double bv;
  if (parse_decimal(b, &bv) < 0)
    return fail_at(r, r->line, CAL_EPARSE, "batch size \"%s\" is not a number",
                   b);
  if (!(bv >= 1 && bv <= (double)CAL_BATCH_MAX) || bv != floor(bv))
    return fail_at(r, r->line, CAL_EPARSE,
                   "batch size \"%s\" is not a positive integer (1 to %lld)",
                   b, (long long)CAL_BATCH_MAX);
  row.batch = (int64_t)bv;

  if (row.ok) {
    const char *t = r->fields[cols[COL_THROUGHPUT]];
    if (parse_decimal(t, &row.value) < 0)
      return fail_at(r, r->line, CAL_EPARSE,
                     "throughput \"%s\" is not a number", t);
    if (!isfinite(row.value))
      return fail_at(r, r->line, CAL_EPARSE, "throughput \"%s\" is not finite",
                     t);
    if (row.value < 0)
      return fail_at(r, r->line, CAL_EPARSE, "throughput \"%s\" is negative",
                     t);
  }

  const char *m = cols[COL_MACHINE] >= 0 ? r->fields[cols[COL_MACHINE]] : "";
  if (cols[COL_MACHINE] >= 0 && *m == '\0')
    return fail_at(r, r->line, CAL_EPARSE, "empty machine name");
  int rc = machine_index(r, m, &row.machine);
  if (rc == 0)
    rc = push_row(r, &row);
  return rc;
}

/* One line of f into *buf (grown up to CAL_CSV_MAX_LINE bytes), without
 * its "\n" or "\r\n": 1, 0 at the end of the file, CAL_EPARSE when too
 * long, CAL_EIO on a read error (errno kept), CAL_ENOMEM. */
static int next_line(FILE *f, char **buf, size_t *cap, size_t *len) {
  size_t n = 0;
  int ch;
  errno = 0;
  while ((ch = getc(f)) != EOF && ch != '\n') {
    if (n + 2 > *cap) {
      if (*cap > CAL_CSV_MAX_LINE)
        return CAL_EPARSE;
      size_t ncap = *cap ? 2 * *cap : 256;
      char *nb = realloc(*buf, ncap);
      if (!nb)
        return CAL_ENOMEM;
      *buf = nb;
      *cap = ncap;
    }
    (*buf)[n++] = (char)ch;
  }
  if (ch == EOF && ferror(f))
    return CAL_EIO;
  if (ch == EOF && n == 0)
    return 0;
  if (n > CAL_CSV_MAX_LINE)
    return CAL_EPARSE;
  if (n && (*buf)[n - 1] == '\r')
    n--;
  if (!*buf && !(*buf = malloc(*cap = 1)))
    return CAL_ENOMEM;
  (*buf)[n] = '\0';
  *len = n;
  return 1;
}

static int cmp_row(const void *a, const void *b) {
  const row_t *x = a, *y = b;
  if (x->machine != y->machine)
    return x->machine < y->machine ? -1 : 1;
  if (x->batch != y->batch)
    return x->batch < y->batch ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

void cal_curve_set_free(cal_curve_set_t *set) {
  if (!set)
    return;
  for (size_t i = 0; i < set->n; i++) {
    cal_curve_t *c = &set->curves[i];
    for (size_t k = 0; k < c->n; k++)
      free((double *)c->points[k].samples);
    free(c->points);
    free(c->machine);
  }
  free(set->curves);
  free(set);
}

/* Group the sorted rows into curves and points. */
static int build_set(reader_t *r, int has_machine, cal_curve_set_t **out) {
  cal_curve_set_t *set = calloc(1, sizeof *set);
  if (!set)
    return CAL_ENOMEM;
  set->curves = calloc(r->nmach, sizeof *set->curves);
  if (!set->curves)
    goto nomem;
  set->n = r->nmach;
  qsort(r->rows, r->nrows, sizeof *r->rows, cmp_row);
  size_t i = 0;
  for (size_t m = 0; m < r->nmach; m++) {
    cal_curve_t *c = &set->curves[m];
    if (has_machine) {
      c->machine = strdup(r->machines[m]);
      if (!c->machine)
        goto nomem;
    }
    size_t first = i, npts = 0;
    for (size_t j = i; j < r->nrows && r->rows[j].machine == m; j++)
      if (j == first || r->rows[j].batch != r->rows[j - 1].batch)
        npts++;
    c->points = calloc(npts, sizeof *c->points);
    if (!c->points)
      goto nomem;
    while (i < r->nrows && r->rows[i].machine == m) {
      size_t j = i, nok = 0;
      for (; j < r->nrows && r->rows[j].machine == m &&
             r->rows[j].batch == r->rows[i].batch;
           j++)
        nok += (size_t)r->rows[j].ok;
      cal_curve_point_t *p = &c->points[c->n++];
      p->batch_size = r->rows[i].batch;
      p->status = nok ? CAL_POINT_OK : CAL_POINT_SKIPPED;
      if (nok) {
        double *s = malloc(nok * sizeof *s);
        if (!s)
          goto nomem;
        for (size_t k = i; k < j; k++)
          if (r->rows[k].ok)
            s[p->n++] = r->rows[k].value;
        p->samples = s;
      }
      i = j;
    }
  }
  *out = set;
  return 0;
nomem:
  cal_curve_set_free(set);
  return CAL_ENOMEM;
}

int cal_curves_read(FILE *f, const char *name, cal_curve_set_t **out,
                    char *err, size_t errlen) {
  reader_t r;
  memset(&r, 0, sizeof r);
  r.name = name;
  r.err = err;
  r.errlen = errlen;
  char *line = NULL;
  size_t cap = 0;
  long cols[COL_COUNT];
  size_t nhead = 0, header_line = 0;
  int rc = 0;
  *out = NULL;

  for (;;) {
    size_t len = 0;
    int got = next_line(f, &line, &cap, &len);
    if (got == 0)
      break;
    r.line++;
    if (got == CAL_EIO) {
      rc = fail_at(&r, r.line, CAL_EIO, "read error: %s",
                   strerror(errno ? errno : EIO));
      goto out;
    }
    if (got == CAL_EPARSE) {
      rc = fail_at(&r, r.line, CAL_EPARSE, "line longer than %d bytes",
                   CAL_CSV_MAX_LINE);
      goto out;
    }
    if (got < 0) {
      rc = got;
      goto out;
    }
    char *s = line;
    if (r.line == 1 && (unsigned char)s[0] == 0xEF &&
        (unsigned char)s[1] == 0xBB && (unsigned char)s[2] == 0xBF)
      s += 3;
    if (strlen(s) != len - (size_t)(s - line)) {
      rc = fail_at(&r, r.line, CAL_EPARSE, "NUL byte in line");
      goto out;
    }
    if (strchr(s, '\r')) {
      rc = fail_at(&r, r.line, CAL_EPARSE,
                   "carriage return inside a line (old Mac line ends?): "
                   "lines must end in LF or CRLF");
      goto out;
    }
    if (is_blank_or_comment(s))
      continue;
    if (r.nrows >= CAL_CSV_MAX_ROWS) {
      rc = fail_at(&r, r.line, CAL_EPARSE, "more than %d data rows",
                   CAL_CSV_MAX_ROWS);
      goto out;
    }
    if ((rc = split_fields(&r, s)) < 0)
      goto out;
    if (!header_line) {
      if ((rc = read_header(&r, cols)) < 0)
        goto out;
      header_line = r.line;
      nhead = r.nf;
      continue;
    }
    if ((rc = read_row(&r, cols, nhead)) < 0)
      goto out;
  }
  if (!header_line) {
    rc = r.line == 0
             ? fail_at(&r, 1, CAL_EPARSE, "empty file (no header row)")
             : fail_at(&r, r.line, CAL_EPARSE,
                       "no header row (only comments or blank lines)");
    goto out;
  }
  if (r.nrows == 0) {
    rc = fail_at(&r, header_line, CAL_EPARSE, "no data rows after the header");
    goto out;
  }
  rc = build_set(&r, cols[COL_MACHINE] >= 0, out);
out:
  if (rc == CAL_ENOMEM)
    fail_at(&r, r.line, CAL_ENOMEM, "out of memory");
  free(line);
  free(r.fields);
  free(r.rows);
  for (size_t i = 0; i < r.nmach; i++)
    free(r.machines[i]);
  free(r.machines);
  free(r.slots);
  return rc;
}

int cal_curves_load(const char *path, cal_curve_set_t **out, char *err,
                    size_t errlen) {
  *out = NULL;
  if (strcmp(path, "-") == 0)
    return cal_curves_read(stdin, "<stdin>", out, err, errlen);
  char why[128];
  FILE *f = cal_file_open(path, why, sizeof why);
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, why);
    return CAL_EIO;
  }
  int rc = cal_curves_read(f, path, out, err, errlen);
  fclose(f);
  return rc;
}
