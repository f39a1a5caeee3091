/* A plan in a trainer's words (plan_trainer.h). */
#include "plan_trainer.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cal_err.h"

/* Whether the machine measured its throughput in bf16. */
static int bf16_of(const cal_plan_entry_t *e) {
  return e->m->measured_dtype && strcmp(e->m->measured_dtype, "bf16") == 0;
}

int cal_plan_render_hf(const void *in, int variant, FILE *out, char *err,
                       size_t errlen) {
  const cal_plan_t *p = in;
  (void)variant;
  json_t *root = json_object();
  int rc = root ? 0 : CAL_ENOMEM;
  for (size_t i = 0; rc == 0 && i < p->nmachines; i++) {
    const cal_plan_entry_t *e = &p->machines[i];
    if (!e->in_split)
      continue;
    json_t *m = json_pack("{s:I, s:I, s:b}", "per_device_train_batch_size",
                          (json_int_t)e->batch.micro_batch,
                          "gradient_accumulation_steps",
                          (json_int_t)e->batch.accum_steps, "bf16",
                          bf16_of(e));
    if (!m)
      rc = CAL_ENOMEM;
    else if (json_object_set_new(root, e->m->name, m) < 0)
      rc = CAL_EINVAL;
  }
  char *text = rc == 0 ? json_dumps(root, JSON_INDENT(2)) : NULL;
  if (rc == 0 && !text)
    rc = CAL_ENOMEM;
  json_decref(root);
  if (rc < 0) {
    snprintf(err, errlen, "%s", rc == CAL_ENOMEM
                                    ? "out of memory"
                                    : "--format hf: a machine's name is not "
                                      "UTF-8 text");
    return rc;
  }
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}

size_t cal_env_ident(char *dst, size_t len, const char *name) {
  size_t at = 0, alnum = 0;
  if (!len)
    return 0;
  for (const char *s = name; s && *s && at + 1 < len; s++) {
    char c = *s;
    int ok = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c >= 'a' && c <= 'z') {
      c = (char)(c - 'a' + 'A');
      ok = 1;
    }
    alnum += ok;
    dst[at++] = ok ? c : '_';
  }
  dst[at] = '\0';
  if (!alnum)
    at = (size_t)snprintf(dst, len, "MACHINE");
  return at < len ? at : len - 1;
}

void cal_shell_quote(FILE *out, const char *name) {
  fputc('\'', out);
  for (const unsigned char *s = (const unsigned char *)name; s && *s; s++) {
    if (*s == '\'')
      fputs("'\\''", out);
    else if (*s < 0x20 || *s == 0x7f)
      fprintf(out, "\\x%02X", *s);
    else
      fputc(*s, out);
  }
  fputc('\'', out);
}

/* A machine's <M> and its place in the plan. */
typedef struct ident {
  char s[96];
  size_t at;
} ident_t;

static int by_ident(const void *a, const void *b) {
  const ident_t *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

static int by_place(const void *a, const void *b) {
  const ident_t *x = a, *y = b;
  return (x->at > y->at) - (x->at < y->at);
}

/* Whether two neighbours of a sorted list share an <M>. */
static int any_shared(const ident_t *id, size_t n) {
  for (size_t k = 0; k + 1 < n; k++)
    if (strcmp(id[k].s, id[k + 1].s) == 0)
      return 1;
  return 0;
}

/* Every member of a group sharing an <M> (id sorted) takes its position
 * in the plan. */
static void append_places(ident_t *id, size_t n) {
  for (size_t k = 0; k < n;) {
    size_t j = k + 1;
    while (j < n && strcmp(id[j].s, id[k].s) == 0)
      j++;
    for (size_t m = k; j - k > 1 && m < j; m++) {
      size_t len = strlen(id[m].s);
      snprintf(id[m].s + len, sizeof id[m].s - len, "_%zu", id[m].at + 1);
    }
    k = j;
  }
}

/* The <M> of every machine in the split, told apart (sorted, so n log n),
 * into *out in plan order.  0, CAL_ENOMEM, or CAL_EINVAL when two still
 * share one with their positions appended. */
static int idents(const cal_plan_t *p, ident_t **out, size_t *n) {
  ident_t *id = calloc(p->nmachines ? p->nmachines : 1, sizeof *id);
  *n = 0;
  *out = id;
  if (!id)
    return CAL_ENOMEM;
  for (size_t i = 0; i < p->nmachines; i++)
    if (p->machines[i].in_split) {
      /* room left for "_<position>" */
      cal_env_ident(id[*n].s, sizeof id[*n].s - 24, p->machines[i].m->name);
      id[(*n)++].at = i;
    }
  qsort(id, *n, sizeof *id, by_ident);
  if (any_shared(id, *n)) {
    append_places(id, *n);
    qsort(id, *n, sizeof *id, by_ident);
    if (any_shared(id, *n))
      return CAL_EINVAL;
  }
  qsort(id, *n, sizeof *id, by_place);
  return 0;
}

int cal_plan_render_env(const void *in, int variant, FILE *out, char *err,
                        size_t errlen) {
  const cal_plan_t *p = in;
  (void)variant;
  ident_t *id = NULL;
  size_t n = 0;
  int rc = idents(p, &id, &n);
  if (rc < 0) {
    snprintf(err, errlen, "%s", rc == CAL_ENOMEM
                                    ? "out of memory"
                                    : "--format env: two machines' names "
                                      "make the same variable");
    free(id);
    return rc;
  }
  for (size_t k = 0; k < n; k++) {
    const cal_plan_entry_t *e = &p->machines[id[k].at];
    fprintf(out, "CALIBRATE_%s_NAME=", id[k].s);
    cal_shell_quote(out, e->m->name);
    fprintf(out, "\nCALIBRATE_%s_BATCH_SIZE=%" PRId64 "\n", id[k].s,
            e->batch.micro_batch);
    fprintf(out, "CALIBRATE_%s_GRAD_ACCUM=%" PRId64 "\n", id[k].s,
            e->batch.accum_steps);
    fprintf(out, "CALIBRATE_%s_BF16=%d\n", id[k].s, bf16_of(e));
  }
  free(id);
  return 0;
}
