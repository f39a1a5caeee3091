/* gnuplot I/O: series, data files, scripts, directories, running gnuplot. */
#include "gnuplot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cal_err.h"
#include "cal_file.h"
#include "cal_out.h"
#include "cal_paths.h"
#include "cal_vec.h"

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
  if (s->n == 0) {
    s->lt = r->lt;
    s->pt = r->pt;
    s->dt = r->dt;
    s->tag = r->tag;
    s->marker = r->marker;
    memcpy(s->mark, r->mark, sizeof s->mark);
    s->mark[sizeof s->mark - 1] = '\0';
  }
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
  /* gnuplot's single-quoted strings break on a doubled quote at the start
   * or two doubled quotes in a row (issue 14); in double quotes every byte
   * but letters, digits and plain marks is written as an octal escape, so
   * no quote, backslash, backquote (command substitution) or @ (macro)
   * reaches gnuplot's parser as itself. */
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f)
      fputc(' ', f);
    else if (isalnum(c) || strchr(" .,:;-_+=/()[]%#!?&*<>{}|~^", c))
      fputc(c, f);
    else
      fprintf(f, "\\%03o", c);
  }
  fputc('"', f);
}

void cal_gp_comment(FILE *f, const char *s) {
  char last = '\0';
  for (; s && *s; s++)
    fputc(last = (unsigned char)*s < 0x20 ? ' ' : *s, f);
  if (last == '\\')
    fputc(' ', f);
}

/* gnuplot data-file string: double quotes, which cannot be escaped there. */
static void dat_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++)
    fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
  fputc('"', f);
}

/* ---- files ---- */

/* "dir/NAME.EXT", malloc'd; NULL when out of memory. */
static char *path_at(const char *dir, const char *name, const char *ext) {
  size_t len = strlen(dir) + strlen(name) + strlen(ext) + 3;
  char *p = malloc(len);
  if (p)
    snprintf(p, len, "%s/%s.%s", dir, name, ext);
  return p;
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
  static char dir[4096];
  char err[256];
  if ((!t || !*t) && cal_data_path(CAL_DATA_PLOTS, dir, sizeof dir, err,
                                   sizeof err) == 0)
    t = dir;
  return t && *t ? t : "plots";
}

/* ---- the data file ---- */

static void write_series(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_series_t *s) {
  cal_gp_comment(f, c->labels[s->profile]);
  fputc(' ', f);
  cal_gp_comment(f, s->key);
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

/* dir/NAME.EXT: the body rendered whole, then written through the one
 * writer without following anything planted at that name (a symlink to
 * another user's file is replaced, never written through). */
static int write_file(const cal_gp_chart_t *c, const char *ext, body_fn body,
                      const cal_gp_set_t *set, char *err, size_t errlen) {
  char *path = path_at(c->dir, c->name, ext), *text = NULL;
  size_t len = 0;
  FILE *mem = path ? open_memstream(&text, &len) : NULL;
  int rc = CAL_ENOMEM;
  if (!mem) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  rc = body(mem, c, set, err, errlen);
  if (fclose(mem) != 0 && rc == 0) {
    snprintf(err, errlen, "out of memory");
    rc = CAL_ENOMEM;
  }
  if (rc == 0)
    rc = cal_out_file(path, text, len, CAL_OUT_NOFOLLOW, err, errlen);
out:
  free(text);
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

/* The template dir/NAME.gp whole (a regular file), malloc'd; NULL with
 * err filled. */
static char *read_template(const char *dir, const char *name, size_t *len,
                           char *err, size_t errlen) {
  char *path = path_at(dir, name, "gp"), *text = NULL, why[128];
  if (!path) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (cal_file_read(path, 1 << 20, &text, len, why, sizeof why) < 0)
    snprintf(err, errlen, "cannot read gnuplot template %s: %s", path, why);
  free(path);
  return text;
}

int cal_gp_check_template(const char *templates, const char *name, char *err,
                          size_t errlen) {
  size_t len;
  char *text = read_template(templates, name, &len, err, errlen);
  free(text);
  return text ? 0 : CAL_EIO;
}

static int copy_template(FILE *out, const cal_gp_chart_t *c, char *err,
                         size_t errlen) {
  size_t len;
  char *text = read_template(c->templates,
                             c->template_name ? c->template_name : c->name,
                             &len, err, errlen);
  if (!text)
    return CAL_EIO;
  fwrite(text, 1, len, out);
  free(text);
  return 0;
}


/* label[i] = 'PROFILE KEY' for every series, and its style */
static void write_labels(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_set_t *set) {
  fprintf(f, "\nnseries = %zu\n", set->n);
  /* at least one: gnuplot parses a loop it never runs */
  size_t a = set->n ? set->n : 1;
  fprintf(f, "array label[%zu]\narray series_lt[%zu]\narray series_pt[%zu]\n"
             "array series_dt[%zu]\narray series_tag[%zu]\nlabel[1] = ''\n",
          a, a, a, a, a);
  if (!set->n) /* gnuplot evaluates the styles of a loop it never runs */
    fputs("series_lt[1] = 1; series_pt[1] = 7; series_dt[1] = 1; "
          "series_tag[1] = 0\n", f);
  for (size_t i = 0; i < set->n; i++) {
    /* the chart gave every series its style (charts_style.c) */
    const cal_gp_series_t *s = &set->s[i];
    fprintf(f, "series_lt[%zu] = %d; series_pt[%zu] = %d; "
               "series_dt[%zu] = %d; series_tag[%zu] = %d\n",
            i + 1, s->lt ? s->lt : (int)i + 1, i + 1, s->pt ? s->pt : 7,
            i + 1, s->dt ? s->dt : 1, i + 1, s->tag);
  }
  for (size_t i = 0; i < set->n; i++) {
    /* one profile: the title names it, the key says what the series is */
    const char *pl = c->n == 1 && set->s[i].key[0] ? ""
                     : c->labels[set->s[i].profile],
               *key = set->s[i].key;
    size_t ll = strlen(pl) + strlen(key) + 2;
    char *l = malloc(ll);
    if (!l)
      continue;
    /* the profile's part is cut first: the key says what the series is */
    int room = CAL_GP_LABEL_MAX - (int)strlen(key) - 1;
    if (room < 12)
      room = 12;
    if ((int)strlen(pl) > room)
      snprintf(l, ll, "%.*s...%s%s", room - 3, pl, key[0] ? " " : "", key);
    else
      snprintf(l, ll, "%s%s%s", pl, key[0] && pl[0] ? " " : "", key);
    if (strlen(l) > CAL_GP_LABEL_MAX + 8)
      memcpy(l + CAL_GP_LABEL_MAX + 5, "...", 4);
    fprintf(f, "label[%zu] = ", i + 1);
    cal_gp_quote(f, l);
    fputc('\n', f);
    free(l);
  }
}

/* The title, its lines joined by gnuplot's newline: each line quoted. */
static void write_title(FILE *f, const char *title) {
  const char *t = title ? title : "";
  for (;;) {
    const char *nl = strchr(t, '\n');
    size_t len = nl ? (size_t)(nl - t) : strlen(t);
    char *line = strndup(t, len);
    cal_gp_quote(f, line ? line : "");
    free(line);
    if (!nl)
      break;
    fputs(" . \"\\n\" . ", f);
    t = nl + 1;
  }
}

static void write_header(FILE *f, const cal_gp_chart_t *c,
                         const cal_gp_set_t *set) {
  fprintf(f, "# Generated by calibrate plot from the template %s.gp.\n"
             "# Re-run from this directory: gnuplot %s.gp\n", c->name,
          c->name);
  for (size_t i = 0; i < c->n; i++) {
    fputs("# profile: ", f);
    cal_gp_comment(f, c->paths[i]);
    fputc('\n', f);
  }
  fprintf(f, "fmt = '%s'\n", c->format);
  fprintf(f, "datafile = '%s.dat'\n", c->name);
  fprintf(f, "outfile = '%s.%s'\n", c->name, c->format);
  fputs("title = ", f);
  write_title(f, c->title);
  write_labels(f, c, set);
  if (c->header)
    c->header(f, c->header_arg);
  if (c->extra)
    fputs(c->extra, f);
  int w = c->width > 0 ? c->width : 1000, h = c->height > 0 ? c->height : 640;
  /* the terminal: pngcairo where built in, else libgd png; or svg */
  fprintf(f, "if (fmt eq 'svg') {\n"
             "  set terminal svg noenhanced size %d,%d dynamic "
             "font 'sans,12'\n"
             "} else {\n"
             "  if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
             "    set terminal pngcairo noenhanced size %d,%d font 'sans,11'\n"
             "  } else {\n"
             "    set terminal png noenhanced size %d,%d\n"
             "  }\n"
             "}\n"
             "# calibrate runs gnuplot with the image on its standard output\n"
             "if (!exists('calibrate_stdout')) set output outfile\n",
          w, h, w, h, w, h);
  /* One palette for every chart of the tool: the Okabe-Ito colours (told
   * apart with the common colour blindnesses), each with its own dash
   * pattern and point shape so the series survive greyscale printing. */
  fputs("set linetype 1 lc rgb '#0072B2' lw 2 dt 1 pt 7 ps 1.2\n"
        "set linetype 2 lc rgb '#D55E00' lw 2 dt 2 pt 5 ps 1.2\n"
        "set linetype 3 lc rgb '#009E73' lw 2 dt 3 pt 9 ps 1.3\n"
        "set linetype 4 lc rgb '#CC79A7' lw 2 dt 4 pt 13 ps 1.4\n"
        "set linetype 5 lc rgb '#E69F00' lw 2 dt 5 pt 11 ps 1.3\n"
        "set linetype 6 lc rgb '#56B4E9' lw 2 dt (8,4,2,4) pt 3 ps 1.2\n"
        "set linetype 7 lc rgb '#000000' lw 2 dt (2,3) pt 2 ps 1.2\n"
        "set linetype 8 lc rgb '#888888' lw 2 dt (12,4) pt 6 ps 1.2\n"
        "set linetype cycle 8\n"
        /* the dashes of marks (peaks, cache sizes), one per profile */
        "set dashtype 11 (1,3)\n"
        "set dashtype 12 (8,3,1,3)\n"
        "set dashtype 13 (14,3,1,3,1,3)\n"
        "set border lc rgb '#444444'\n"
        "set grid lc rgb '#dddddd' lw 1 dt 1\n"
        "set key box lc rgb '#bbbbbb' opaque\n",
        f);
  fprintf(f, "# ---- template %s.gp ----\n",
          c->template_name ? c->template_name : c->name);
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

/* In the child: its own process group, stdin from /dev/null, cd dir,
 * exec; on failure the errno
 * goes up the close-on-exec pipe. */
static void exec_child(int fd, int img, const char *dir, const char *prog,
                       char *script) {
  int e = 0;
  (void)setpgid(0, 0); /* its own group: a time-out kills what it started */
  int nul = open("/dev/null", O_RDONLY);
  if (nul >= 0)
    dup2(nul, STDIN_FILENO);
  if (dup2(img, STDOUT_FILENO) < 0 || chdir(dir) != 0)
    e = errno;
  else {
    char *const args[] = {(char *)prog, "-e", "calibrate_stdout = 1", script,
                          NULL};
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
  /* a program the user named by its path: not "gnuplot not found" when
   * it is there but cannot run (not executable, its #! interpreter
   * missing) */
  const char *env = getenv("CALIBRATE_GNUPLOT");
  if (child_errno && env && strchr(env, '/')) {
    snprintf(err, errlen, "cannot run CALIBRATE_GNUPLOT=%s: %s%s", prog,
             strerror(child_errno),
             child_errno == ENOENT ? " (the file or its #! interpreter)" : "");
    return child_errno == ENOENT ? CAL_ENOTFOUND : CAL_ESYS;
  }
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

/* Seconds gnuplot may take for one chart: CALIBRATE_GNUPLOT_TIMEOUT, else
 * 60. */
static double gp_time_limit(void) {
  const char *s = getenv("CALIBRATE_GNUPLOT_TIMEOUT");
  char *end;
  double t = s && *s ? strtod(s, &end) : 0;
  return s && *s && *end == '\0' && t > 0 && t <= 86400 ? t : 60;
}

/* Reap the child within the time limit; past it, kill it.  0 when it
 * ended by itself, -1 when it was killed. */
static int wait_child(pid_t pid, int *status) {
  struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
  const double limit = gp_time_limit();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR))
      return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) +
            1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > limit) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
      return -1;
    }
    nanosleep(&nap, NULL);
  }
}

/* gnuplot's image goes to its standard output, a temporary file made
 * in dir with O_EXCL and renamed to NAME.FMT when gnuplot succeeds:
 * gnuplot itself never opens a name in dir that might be a planted
 * link. */
static int run_child(const char *dir, const char *prog, char *script,
                     int img, char *err, size_t errlen) {
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
    exec_child(fds[1], img, dir, prog, script);
  (void)setpgid(pid, pid); /* as the child does: whichever runs first */
  int watch = cal_out_watch_child(pid); /* killed if a signal ends us */
  close(fds[1]);
  int child_errno = 0;
  ssize_t got;
  do
    got = read(fds[0], &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0, ended = wait_child(pid, &status);
  cal_out_unwatch_child(watch);
  if (ended != 0) {
    snprintf(err, errlen, "gnuplot did not finish %s/%s in %.0f s: killed "
                          "(CALIBRATE_GNUPLOT_TIMEOUT sets the limit)",
             dir, script, gp_time_limit());
    return CAL_ETIMEOUT;
  }
  if (got != (ssize_t)sizeof child_errno)
    child_errno = 0;
  return child_result(dir, prog, script, child_errno, status, err, errlen);
}

int cal_gp_run(const char *dir, const char *name, const char *format,
               char *err, size_t errlen) {
  const char *prog = getenv("CALIBRATE_GNUPLOT");
  if (!prog || !*prog)
    prog = "gnuplot";
  char script[64];
  snprintf(script, sizeof script, "%s.gp", name);
  char *img = path_at(dir, name, format);
  cal_out_t out;
  int rc = CAL_ENOMEM;
  if (!img) {
    snprintf(err, errlen, "out of memory");
    return rc;
  }
  if ((rc = cal_out_open(&out, img, CAL_OUT_NOFOLLOW, err, errlen)) == 0) {
    rc = run_child(dir, prog, script, cal_out_fd(&out), err, errlen);
    struct stat st;
    if (rc == 0 && (fstat(cal_out_fd(&out), &st) != 0 || st.st_size == 0)) {
      snprintf(err, errlen, "gnuplot (%s) exited 0 but drew no image for "
                            "%s.%s in %s", prog, name, format, dir);
      rc = CAL_ESYS;
    }
    if (rc == 0)
      rc = cal_out_commit(&out, err, errlen);
    else
      cal_out_abort(&out);
  }
  free(img);
  return rc;
}
