/* The option-table parser and help printer (opt_table.h). */
#include "opt_table.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cal_exit.h"
#include "cli.h"

const cal_opt_t cal_opt_help_rows[] = {
    CAL_OPT_HELP_VERSION("show this help"),
    {.type = CAL_OPT_END},
};

/* fmt with "%%" as '%', "%s" as s, "%o" as opt and "%g" / "%d" as num,
 * into out. */
static void expand(const char *fmt, const char *s, const char *opt,
                   double num, char *out, size_t len) {
  size_t n = 0;
  for (const char *p = fmt; *p && n + 1 < len; p++) {
    if (*p != '%' || !p[1]) {
      out[n++] = *p;
      continue;
    }
    p++;
    int w = *p == '%' ? snprintf(out + n, len - n, "%%")
            : *p == 's' ? snprintf(out + n, len - n, "%s", s ? s : "")
            : *p == 'o' ? snprintf(out + n, len - n, "%s", opt ? opt : "")
                        : snprintf(out + n, len - n, "%g", num);
    n += (size_t)w < len - n ? (size_t)w : len - n - 1;
  }
  out[n] = '\0';
}

int cal_opt_takes_value(const cal_opt_t *r) {
  return r->type >= CAL_OPT_LONG && r->type <= CAL_OPT_CALL;
}

/* The value of the choice named name[0..n) or -1 in *v; 0 found. */
static int choice_find(const cal_opt_choice_t *c, const char *name, size_t n,
                       int *v) {
  for (; c && c->name; c++)
    if (strlen(c->name) == n && strncmp(c->name, name, n) == 0) {
      *v = c->value;
      return 0;
    }
  return -1;
}

/* A comma-separated list of choices, or-ed; an empty item is bad. */
static int set_parse(const cal_opt_choice_t *c, const char *s, int *out) {
  int set = 0, v;
  for (;;) {
    size_t n = strcspn(s, ",");
    if (n == 0 || choice_find(c, s, n, &v) < 0)
      return -1;
    set |= v;
    if (!s[n])
      break;
    s += n + 1;
  }
  *out = set;
  return 0;
}

static void bad_line(const cal_opt_t *r, const char *val, char *out,
                     size_t len) {
  char list[256] = "";
  size_t n = 0;
  switch (r->type) {
  case CAL_OPT_LONG:
  case CAL_OPT_COUNT:
    snprintf(out, len, "--%s needs a whole number from %.0f to %.0f, not '%s'",
             r->name, r->min, r->max, val);
    return;
  case CAL_OPT_ENUM:
  case CAL_OPT_SET:
    for (const cal_opt_choice_t *c = r->choices; c && c->name; c++)
      n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0,
                            "%s%s", n ? ", " : "", c->name);
    snprintf(out, len, "--%s is one of %s, not '%s'", r->name, list, val);
    return;
  case CAL_OPT_SIZE:
    snprintf(out, len, "--%s needs a size like 512M or 8G, not '%s'", r->name,
             val);
    return;
  case CAL_OPT_FRACTION:
    snprintf(out, len, "--%s needs a fraction like 5%% or 0.05, not '%s'",
             r->name, val);
    return;
  default:
    snprintf(out, len, "--%s needs a number from %g to %g, not '%s'", r->name,
             r->min, r->max, val);
  }
}

/* Convert val by the row's type and store it at obj + off: 0 or -1. */
static int convert(const cal_opt_t *r, void *obj, const char *val) {
  char *at = (char *)obj + r->off;
  long l;
  int i;
  double d;
  uint64_t u;
  switch (r->type) {
  case CAL_OPT_FLAG: *(int *)at = 1; return 0;
  case CAL_OPT_CLEAR: *(int *)at = 0; return 0;
  case CAL_OPT_STRING:
  case CAL_OPT_CALL:
    if (r->choices && choice_find(r->choices, val, strlen(val), &i) < 0)
      return -1;
    if (r->type == CAL_OPT_STRING)
      *(const char **)at = val;
    return 0;
  case CAL_OPT_COUNT:
    if (*val < '0' || *val > '9')
      return -1;
    /* fall through */
  case CAL_OPT_LONG:
    if (cal_parse_long(val, (long)r->min, (long)r->max, &l) < 0)
      return -1;
    *(long *)at = l;
    return 0;
  case CAL_OPT_U64:
    if (cal_parse_u64(val, &u) < 0)
      return -1;
    *(uint64_t *)at = u;
    return 0;
  case CAL_OPT_DOUBLE:
  case CAL_OPT_FRACTION:
  case CAL_OPT_SIZE:
    if (r->type == CAL_OPT_DOUBLE ? cal_parse_double(val, r->min, r->max, &d)
        : r->type == CAL_OPT_FRACTION ? cal_parse_fraction(val, &d)
                                      : cal_parse_size(val, &d))
      return -1;
    if (r->type == CAL_OPT_SIZE && (d < r->min || d > r->max))
      return -1;
    *(double *)at = d;
    return 0;
  case CAL_OPT_ENUM:
  case CAL_OPT_SET:
    if (r->type == CAL_OPT_ENUM ? choice_find(r->choices, val, strlen(val), &i)
                                : set_parse(r->choices, val, &i))
      return -1;
    *(int *)at = i;
    return 0;
  default:
    return 0;
  }
}

/* The row's line for a bad value; given: the option as written (NULL:
 * "--name"). */
static int bad_as(const char *cmd, const cal_opt_t *row, const char *val,
                  const char *given) {
  char msg[512], opt[128];
  snprintf(opt, sizeof opt, "--%s", row->name);
  if (row->bad)
    expand(row->bad, val, given ? given : opt, 0, msg, sizeof msg);
  else
    bad_line(row, val, msg, sizeof msg);
  return cal_usage(cmd, "%s", msg);
}

int cal_opt_output_file(void *obj, const cal_opt_t *row, const char *val,
                        const char *cmd) {
  (void)obj, (void)row;
  return *val ? -1 : cal_usage(cmd, "-o needs a file name");
}

int cal_opt_bad(const char *cmd, const cal_opt_t *row, const char *val) {
  return bad_as(cmd, row, val, NULL);
}

/* One option met on the command line: -1 to go on, else an exit code. */
int cal_opt_take(const cal_opt_cmd_t *t, const cal_opt_t *r, void *obj,
                 const char *val, const char *given) {
  if (r->type == CAL_OPT_HELP) {
    cal_opt_help(t, stdout);
    return CAL_EXIT_OK;
  }
  if (r->type == CAL_OPT_VERSION)
    return cal_print_version();
  if (r->type == CAL_OPT_VALUES) {
    cal_opt_values(t, stdout);
    return CAL_EXIT_OK;
  }
  if (convert(r, obj, val) < 0)
    return bad_as(t->cmd, r, val, given);
  return r->set ? r->set(obj, r, val, t->cmd) : -1;
}

const cal_opt_t *cal_opt_find(const cal_opt_cmd_t *t, const char *name) {
  int letter = name[0] == '-' && name[1] && name[1] != '-' && !name[2];
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++)
      if (r->name && (letter ? r->letter == name[1]
                             : strncmp(name, "--", 2) == 0 &&
                                   strcmp(name + 2, r->name) == 0))
        return r;
  return NULL;
}

int cal_opt_defaults(const cal_opt_cmd_t *t, void *obj) {
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++)
      if (r->def && convert(r, obj, r->def) < 0)
        return -1;
  return 0;
}

/* The rows of every part that getopt sees (a long name or letter taken
 * by an earlier row is the earlier row's), with getopt's tables:
 * longopts[i].val = 256 + i, optstring of the letters. */
typedef struct opt_index {
  const cal_opt_t **rows;
  struct option *longopts;
  char optstring[128];
  size_t n;
} opt_index_t;

static int seen(const opt_index_t *x, const cal_opt_t *r) {
  for (size_t i = 0; i < x->n; i++)
    if (strcmp(x->rows[i]->name, r->name) == 0)
      return 1;
  return 0;
}

static int index_build(const cal_opt_cmd_t *t, opt_index_t *x) {
  size_t total = 0, s = 1;
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++)
      total++;
  x->n = 0;
  x->rows = calloc(total + 1, sizeof *x->rows);
  x->longopts = calloc(total + 1, sizeof *x->longopts);
  if (!x->rows || !x->longopts)
    return -1;
  memset(x->optstring, 0, sizeof x->optstring);
  x->optstring[0] = ':';
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++) {
      if (!r->name || (t->parts[p].flags & CAL_OPT_NOPARSE) || seen(x, r))
        continue;
      x->longopts[x->n] = (struct option){
          r->name, cal_opt_takes_value(r) ? required_argument : no_argument, NULL,
          256 + (int)x->n};
      x->rows[x->n++] = r;
      if (r->letter && !strchr(x->optstring, r->letter) &&
          s + 3 < sizeof x->optstring) {
        x->optstring[s++] = (char)r->letter;
        if (cal_opt_takes_value(r))
          x->optstring[s++] = ':';
      }
    }
  x->optstring[s] = '\0';
  return 0;
}

/* The row of what getopt_long returned; NULL for '?' and ':'. */
static const cal_opt_t *row_of(const opt_index_t *x, int c) {
  if (c >= 256)
    return x->rows[c - 256];
  for (size_t i = 0; c != '?' && c != ':' && i < x->n; i++)
    if (x->rows[i]->letter == c)
      return x->rows[i];
  return NULL;
}

int cal_opt_parse(const cal_opt_cmd_t *t, void *obj, int argc, char **argv,
                  int *first) {
  opt_index_t x;
  int c, code = -1;
  if (index_build(t, &x) < 0) {
    code = cal_fail(t->cmd, CAL_EXIT_INTERNAL, "out of memory");
    goto out;
  }
  optind = 0; /* glibc: full re-initialisation, also for repeated calls */
  opterr = 0;
  while (code < 0 &&
         (c = getopt_long(argc, argv, x.optstring, x.longopts, NULL)) != -1) {
    const cal_opt_t *r = row_of(&x, c);
    code = r ? cal_opt_take(t, r, obj, optarg, NULL) : cal_bad_option(t->cmd, c, argv);
  }
  *first = optind;
out:
  free(x.rows);
  free(x.longopts);
  return code;
}

/* Head and tail are written like the rows' help ("%%": '%'). */
static void put_text(const char *fmt, FILE *out) {
  char text[8192];
  if (fmt) {
    expand(fmt, NULL, NULL, 0, text, sizeof text);
    fputs(text, out);
  }
}

/* One row of the help: the left column, then the text at width. */
static void help_row(const cal_opt_part_t *part, const cal_opt_t *r,
                     FILE *out) {
  char left[160], text[2048];
  if (r->type == CAL_OPT_TEXT) {
    put_text(r->help, out);
    return;
  }
  expand(r->help, NULL, NULL, r->help_num, text, sizeof text);
  if (r->label)
    snprintf(left, sizeof left, "%s", r->label);
  else if (r->letter)
    snprintf(left, sizeof left, "  -%c, --%s%s%s", r->letter, r->name,
             r->arg ? " " : "", r->arg ? r->arg : "");
  else
    snprintf(left, sizeof left, "%s--%s%s%s", (part->flags & CAL_OPT_FLAT) ? "  " : "      ",
             r->name, r->arg ? " " : "", r->arg ? r->arg : "");
  int w = (int)strlen(left);
  const char *p = text;
  if (*p == '\n')
    fprintf(out, "%s", left);
  else
    fprintf(out, "%s%*s", left, w < part->width ? part->width - w : 2, "");
  while (*p) {
    if (*p == '\n')
      p++;
    size_t n = strcspn(p, "\n");
    if (p != text)
      fprintf(out, "\n%*s", part->width, "");
    fwrite(p, 1, n, out);
    p += n;
  }
  fputc('\n', out);
}

void cal_opt_help(const cal_opt_cmd_t *t, FILE *out) {
  put_text(t->head, out);
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++) {
    if (!t->parts[p].width)
      continue;
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++)
      if (r->help)
        help_row(&t->parts[p], r, out);
  }
  put_text(t->tail, out);
}

/* Whether a row before r (in any part) has r's name: the parser takes
 * the first row of a name, so its values are the ones to complete. */
static int values_seen(const cal_opt_cmd_t *t, const cal_opt_t *r) {
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *q = t->parts[p].rows; q->type != CAL_OPT_END; q++) {
      if (q == r)
        return 0;
      if (q->name && strcmp(q->name, r->name) == 0)
        return 1;
    }
  return 0;
}

/* One line: the option as written (opt) and the row's values. */
static void values_line(const cal_opt_t *r, const char *opt, FILE *out) {
  fputs(opt, out);
  for (const cal_opt_choice_t *c = r->choices; c && c->name; c++)
    fprintf(out, " %s", c->name);
  if (r->values) {
    fputc(' ', out);
    r->values(out);
  }
  fputc('\n', out);
}

void cal_opt_values(const cal_opt_cmd_t *t, FILE *out) {
  char opt[128];
  for (int p = 0; p < CAL_OPT_MAX_PARTS && t->parts[p].rows; p++)
    for (const cal_opt_t *r = t->parts[p].rows; r->type != CAL_OPT_END; r++) {
      if (!r->name || !(r->choices || r->values) || values_seen(t, r))
        continue;
      snprintf(opt, sizeof opt, "--%s", r->name);
      values_line(r, opt, out);
      if (r->letter) {
        snprintf(opt, sizeof opt, "-%c", r->letter);
        values_line(r, opt, out);
      }
    }
}
