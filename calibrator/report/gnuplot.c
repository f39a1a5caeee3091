/* gnuplot I/O: series, data files, scripts, directories, running gnuplot. */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_vec.h"

/* Template directory configured at build time (build_info.c). */
extern const char cal_plots_dir[];

/* ---- series ---- */

static cal_gp_series_t *set_get(cal_gp_set_t *set, size_t profile,
                                const char *key) {
  for (size_t i = 0; i < set->n; i++)
    if (set->s[i].profile == profile && strcmp(set->s[i].key, key) == 0)
      return &set->s[i];
  if (cal_grow(&set->s, set->n, &set->cap, sizeof *set->s, 8) < 0)
    return NULL;
  cal_gp_series_t *s = &set->s[set->n++];
  memset(s, 0, sizeof *s);
  snprintf(s->key, sizeof s->key, "%s", key);
  s->profile = profile;
  return s;
}

int cal_gp_set_add(cal_gp_set_t *set, size_t profile, const char *key,
                   const cal_gp_row_t *r) {
  cal_gp_series_t *s = set_get(set, profile, key);
  if (!s || cal_grow(&s->rows, s->n, &s->cap, sizeof *s->rows, 16) < 0)
    return CAL_ENOMEM;
  s->rows[s->n++] = *r;
  return 0;
}

static int row_cmp(const void *a, const void *b) {
  double x = ((const cal_gp_row_t *)a)->x, y = ((const cal_gp_row_t *)b)->x;
  return (x > y) - (x < y);
}

void cal_gp_set_sort(cal_gp_set_t *set) {
  for (size_t i = 0; i < set->n; i++)
    qsort(set->s[i].rows, set->s[i].n, sizeof *set->s[i].rows, row_cmp);
}

void cal_gp_set_free(cal_gp_set_t *set) {
  if (!set)
    return;
  for (size_t i = 0; i < set->n; i++)
    free(set->s[i].rows);
  free(set->s);
  memset(set, 0, sizeof *set);
}

/* ---- strings ---- */

void cal_gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\'')
      fputs("''", f);
    else if (c < 0x20 || c == 0x7f)
      fputc(' ', f);
    else
      fputc(c, f);
  }
  fputc('\'', f);
}

/* A comment line in a .dat or .gp file: no newlines. */
static void comment(FILE *f, const char *s) {
  for (; s && *s; s++)
    fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

/* gnuplot data-file string: double quotes, which cannot be escaped there. */
static void dat_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++)
    fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
  fputc('"', f);
}

/* ---- files ---- */

/* Open dir/NAME.EXT; *path is malloc'd (also on failure, when memory
 * allows).  On failure err reads "WHAT PATH: REASON". */
static FILE *open_at(const char *dir, const char *name, const char *ext,
                     const char *mode, const char *what, char **path,
                     char *err, size_t errlen) {
  char file[64];
  snprintf(file, sizeof file, "%s.%s", name, ext);
  size_t len = strlen(dir) + strlen(file) + 2;
  FILE *f = NULL;
  if ((*path = malloc(len)) != NULL) {
    snprintf(*path, len, "%s/%s", dir, file);
    f = fopen(*path, mode);
  }
  if (!f)
    snprintf(err, errlen, "%s %s: %s", what, *path ? *path : file,
             strerror(errno));
  return f;
}

/* Close f written to path; CAL_EIO when anything failed. */
static int close_out(FILE *f, const char *path, char *err, size_t errlen) {
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    snprintf(err, errlen, "cannot write %s", path);
    return CAL_EIO;
  }
  return 0;
}

int cal_gp_make_dirs(const char *dir, char *err, size_t errlen) {
  char *p = strdup(dir);
  int rc = 0;
  if (!p) {
    snprintf(err, errlen, "out of memory");
    return CAL_ENOMEM;
  }
  for (char *q = p + 1;; q++) {
    if (*q != '/' && *q != '\0')
      continue;
    char c = *q;
    *q = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "cannot create directory %s: %s", p,
               strerror(errno));
      rc = CAL_EIO;
      goto out;
    }
    *q = c;
    if (c == '\0')
      break;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s is not a directory", dir);
    rc = CAL_EIO;
  }
out:
  free(p);
  return rc;
}

const char *cal_gp_template_dir(const char *templates) {
  const char *t = templates;
  if (!t || !*t)
    t = getenv("CALIBRATE_PLOTS_DIR");
  if (!t || !*t)
    t = cal_plots_dir;
  return t;
}

/* ---- the data file ---- */

static void write_series(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_series_t *s) {
  comment(f, c->labels[s->profile]);
  fputc(' ', f);
  comment(f, s->key);
  fputc('\n', f);
  for (size_t r = 0; r < s->n; r++) {
    fprintf(f, "%.10g", s->rows[r].x);
    for (int j = 1; j < c->ncols - c->with_text; j++)
      fprintf(f, " %.10g", s->rows[r].v[j - 1]);
    if (c->with_text) {
      fputc(' ', f);
      dat_string(f, s->rows[r].text);
    }
    fputc('\n', f);
  }
}

/* Body of a file written by write_file; 0 or CAL_E* with err. */
typedef int (*body_fn)(FILE *f, const cal_gp_chart_t *c,
                       const cal_gp_set_t *set, char *err, size_t errlen);

/* dir/NAME.EXT written by body, then closed. */
static int write_file(const cal_gp_chart_t *c, const char *ext, body_fn body,
                      const cal_gp_set_t *set, char *err, size_t errlen) {
  char *path = NULL;
  int rc = CAL_EIO;
  FILE *f = open_at(c->dir, c->name, ext, "w", "cannot write", &path, err,
                    errlen);
  if (!f)
    goto out;
  rc = body(f, c, set, err, errlen);
  if (rc == 0)
    rc = close_out(f, path, err, errlen);
  else
    fclose(f);
out:
  free(path);
  return rc;
}

static int dat_body(FILE *f, const cal_gp_chart_t *c, const cal_gp_set_t *set,
                    char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  fprintf(f, "# calibrate plot: %s; one block per series (gnuplot index "
             "0, 1, ...)\n# columns:", c->name);
  for (int j = 0; j < c->ncols; j++)
    fprintf(f, " %s", c->cols[j]);
  fputc('\n', f);
  for (size_t i = 0; i < set->n; i++) {
    fprintf(f, "%s# series %zu: ", i ? "\n\n" : "", i + 1);
    write_series(f, c, &set->s[i]);
  }
  return 0;
}

int cal_gp_write_dat(const cal_gp_chart_t *c, cal_gp_set_t *set, char *err,
                     size_t errlen) {
  cal_gp_set_sort(set);
  return write_file(c, "dat", dat_body, set, err, errlen);
}

/* ---- the script ---- */

static int copy_template(FILE *out, const cal_gp_chart_t *c, char *err,
                         size_t errlen) {
  char *path = NULL;
  int rc = CAL_EIO;
  FILE *in = open_at(c->templates, c->name, "gp", "r",
                     "cannot read gnuplot template", &path, err, errlen);
  if (!in)
    goto out;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, in)) > 0)
    fwrite(buf, 1, k, out);
  int bad = ferror(in);
  fclose(in);
  if (bad)
    snprintf(err, errlen, "cannot read gnuplot template %s.gp", c->name);
  else
    rc = 0;
out:
  free(path);
  return rc;
}

/* label[i] = 'PROFILE KEY' for every series */
static void write_labels(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_set_t *set) {
  fprintf(f, "\nnseries = %zu\n", set->n);
  if (!set->n)
    return;
  fprintf(f, "array label[%zu]\n", set->n);
  for (size_t i = 0; i < set->n; i++) {
    const char *pl = c->labels[set->s[i].profile], *key = set->s[i].key;
    size_t ll = strlen(pl) + strlen(key) + 2;
    char *l = malloc(ll);
    if (!l)
      continue;
    snprintf(l, ll, "%s%s%s", pl, key[0] ? " " : "", key);
    fprintf(f, "label[%zu] = ", i + 1);
    cal_gp_quote(f, l);
    fputc('\n', f);
    free(l);
  }
}

static void write_header(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_set_t *set) {
  fprintf(f, "# Generated by calibrate plot from the template %s.gp.\n"
             "# Re-run from this directory: gnuplot %s.gp\n", c->name,
          c->name);
  for (size_t i = 0; i < c->n; i++) {
    fputs("# profile: ", f);
    comment(f, c->paths[i]);
    fputc('\n', f);
  }
  fprintf(f, "fmt = '%s'\n", c->format);
  fprintf(f, "datafile = '%s.dat'\n", c->name);
  fprintf(f, "outfile = '%s.%s'\n", c->name, c->format);
  fputs("title = ", f);
  cal_gp_quote(f, c->title);
  write_labels(f, c, set);
  if (c->header)
    c->header(f, c->header_arg);
  /* the terminal: pngcairo where built in, else libgd png; or svg */
  fputs("if (fmt eq 'svg') {\n"
        "  set terminal svg noenhanced size 1000,640 dynamic\n"
        "} else {\n"
        "  if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
        "    set terminal pngcairo noenhanced size 1000,640\n"
        "  } else {\n"
        "    set terminal png noenhanced size 1000,640\n"
        "  }\n"
        "}\n"
        "set output outfile\n",
        f);
  fprintf(f, "# ---- template %s.gp ----\n", c->name);
}

static int script_body(FILE *f, const cal_gp_chart_t *c,
                       const cal_gp_set_t *set, char *err, size_t errlen) {
  write_header(f, c, set);
  return copy_template(f, c, err, errlen);
}

int cal_gp_write_script(const cal_gp_chart_t *c, const cal_gp_set_t *set,
                        char *err, size_t errlen) {
  return write_file(c, "gp", script_body, set, err, errlen);
}

/* ---- running gnuplot ---- */

/* In the child: stdin from /dev/null, cd dir, exec; on failure the errno
 * goes up the close-on-exec pipe. */
static void exec_child(int fd, const char *dir, const char *prog,
                       char *script) {
  int e = 0;
  int nul = open("/dev/null", O_RDONLY);
  if (nul >= 0)
    dup2(nul, STDIN_FILENO);
  if (chdir(dir) != 0)
    e = errno;
  else {
    char *const args[] = {(char *)prog, script, NULL};
    execvp(prog, args);
    e = errno;
  }
  if (write(fd, &e, sizeof e) < 0)
    _exit(126);
  _exit(127);
}

/* The outcome of the child: its exec errno, else its exit status. */
static int child_result(const char *dir, const char *prog, const char *script,
                        int child_errno, int status, char *err,
                        size_t errlen) {
  if (child_errno == ENOENT || child_errno == EACCES ||
      child_errno == ENOTDIR) {
    snprintf(err, errlen,
             "gnuplot not found (%s): install it with "
             "`apt-get install gnuplot-nox`; scripts and data are in %s",
             prog, dir);
    return CAL_ENOTFOUND;
  }
  if (child_errno) {
    snprintf(err, errlen, "cannot run %s in %s: %s", prog, dir,
             strerror(child_errno));
    return CAL_ESYS;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, errlen, "gnuplot failed on %s/%s (%s %d)", dir, script,
             WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return CAL_ESYS;
  }
  return 0;
}

int cal_gp_run(const char *dir, const char *name, char *err, size_t errlen) {
  const char *prog = getenv("CALIBRATE_GNUPLOT");
  if (!prog || !*prog)
    prog = "gnuplot";
  char script[64];
  snprintf(script, sizeof script, "%s.gp", name);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
    return CAL_ESYS;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
    return CAL_ESYS;
  }
  if (pid == 0)
    exec_child(fds[1], dir, prog, script);
  close(fds[1]);
  int child_errno = 0;
  ssize_t got;
  do
    got = read(fds[0], &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got != (ssize_t)sizeof child_errno)
    child_errno = 0;
  return child_result(dir, prog, script, child_errno, status, err, errlen);
}
