/* `calibrate compare BASE NEW` and `calibrate compare --base A... --new
 * B...`: parse the options, load both sides (files, directories of
 * profiles, or stdin once), compare them once into a typed result
 * (analysis/compare.c) and hand it to the reporter of --format (the table
 * and markdown of report/compare_render.c, the JSON of compare_json.c,
 * the page of html_compare.c). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "subcommands.h"
#include "cal_err.h"
#include "cli.h"
#include "cal_exit.h"
#include "compare.h"
#include "compare_json.h"
#include "compare_render.h"
#include "html.h"
#include "opt_table.h"
#include "profile.h"
#include "reporter.h"
#include "view.h"

#define CMD "compare"
#define MAX_RUNS 64 /* profiles per side */

typedef struct compare_args {
  cal_compare_opts_t o;
  cal_report_format_t fmt;
  const char *out_path;
  int warn_only, allow_diff, only_changed;
  int html; /* --format html: the report page (report/html.c) */
  const char *paths[2][MAX_RUNS]; /* [0] base, [1] new, as given */
  size_t npaths[2];
} compare_args_t;

#define OFF(field) offsetof(compare_args_t, field)

/* --format: the format, html being the table's page (report/html.c). */
static int format_opt(void *obj, const cal_opt_t *row, const char *val,
                      const char *cmd) {
  compare_args_t *a = obj;
  a->html = a->fmt == (cal_report_format_t)-1;
  if (a->html)
    a->fmt = CAL_REPORT_TABLE;
  return -1;
}

static int filter_opt(void *obj, const cal_opt_t *row, const char *val,
                      const char *cmd) {
  return *val ? -1 : cal_usage(cmd, "--filter needs at least one id glob");
}

static const cal_opt_choice_t formats[] = {{"table", CAL_REPORT_TABLE},
                                           {"md", CAL_REPORT_MD},
                                           {"json", CAL_REPORT_JSON},
                                           {"html", -1},
                                           {NULL, 0}};

static const cal_opt_t compare_rows[] = {
    {.type = CAL_OPT_FRACTION, .name = "threshold", .arg = "T",
     .off = OFF(o.threshold),
     .bad = "--threshold %s: give a fraction like 5%% or 0.05",
     .help = "change that matters, \"5%%\" or \"0.05\" (default 5%%)"},
    {.type = CAL_OPT_FRACTION, .name = "alpha", .arg = "A", .off = OFF(o.alpha),
     .bad = "--alpha %s: give a level in (0, 1) like 0.01",
     .help = "false-discovery level across points (default 0.01)"},
    {.type = CAL_OPT_FRACTION, .name = "run-allowance", .arg = "R",
     .off = OFF(o.run_allowance),
     .bad = "--run-allowance %s: give a fraction like 50%% or 0.5",
     .help = "one run a side: run-to-run change of unchanged\n"
             "code (default %g%%; see docs/ci.md)",
     .help_num = 100 * CAL_COMPARE_RUN_ALLOWANCE},
    {.type = CAL_OPT_STRING, .name = "filter", .arg = "GLOBS",
     .off = OFF(o.filter), .set = filter_opt,
     .help = "compare only ids matching one of the comma-separated\n"
             "globs, e.g. 'gemm/*/best/*,attention/*'"},
    {.type = CAL_OPT_FLAG, .name = "only-changed", .off = OFF(only_changed),
     .help = "list only regressed and improved points"},
    {.type = CAL_OPT_ENUM, .name = "format", .arg = "F", .choices = formats,
     .off = OFF(fmt), .set = format_opt,
     .bad = "--format %s: use table, md, json or html",
     .help = "table (default), md, json or html (one\n"
             "self-contained page with the ratio chart; needs\n"
             "gnuplot)"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = OFF(out_path),
     .help = "write the report to FILE atomically ('-' or\n"
             "no -o: standard output)"},
    {.type = CAL_OPT_FLAG, .name = "warn-only", .off = OFF(warn_only),
     .help = "report regressions but exit 0"},
    {.type = CAL_OPT_FLAG, .name = "allow-different-machines",
     .off = OFF(allow_diff),
     .help = "compare profiles of different machines"},
    CAL_OPT_LAST("this help"),
};

static const cal_opt_cmd_t compare_opts = {
    CMD,
    "Usage: calibrate compare [options] BASE NEW\n"
    "  or:  calibrate compare [options] --base A1 [A2...] --new B1 [B2...]\n\n"
    "Compare two sides point by point.  A side is one or more profiles\n"
    "or directories of profiles (every *.json in it); '-' reads one\n"
    "profile from stdin.  With several runs a side, each point is tested\n"
    "on its per-run medians (Welch t on the logs: the run-to-run spread\n"
    "is in the test); with one run a side, on the samples (Mann-Whitney\n"
    "U), and a change is called only past the run-to-run allowance\n"
    "and while the machine's own speed (the fp32 FMA loop) held.\n"
    "p-values are adjusted across points (Benjamini-Hochberg).\n"
    "Profiles of different machines (CPU, caches, usable cores, memory)\n"
    "are refused; another environment (tool version and build, BLAS,\n"
    "oneDNN) is listed beside the verdict and the points are judged.\n",
    {{compare_rows, 18, CAL_OPT_FLAT}},
    "\nExit status:\n"
    "  0  no regression\n"
    "  1  a regression (exit 0 with --warn-only)\n" CAL_HELP_EXIT_COMMON,
};

static int add_path(compare_args_t *a, int side, const char *p) {
  if (a->npaths[side] == MAX_RUNS)
    return cal_usage(CMD, "more than %d profiles on the %s side", MAX_RUNS,
                     side ? "new" : "base");
  a->paths[side][a->npaths[side]++] = p;
  return -1;
}

/* Take the --base/--new lists out of argv (they hold any number of
 * paths, up to the next option) into a->paths; the rest into rest[].
 * -1 to go on, else the exit code. */
static int split_sides(int argc, char **argv, compare_args_t *a, char **rest,
                       int *nrest) {
  int side = -1, code;
  *nrest = 0;
  rest[(*nrest)++] = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (strcmp(s, "--base") == 0 || strcmp(s, "--new") == 0) {
      side = s[2] == 'n';
      if (i + 1 == argc || (argv[i + 1][0] == '-' && argv[i + 1][1]))
        return cal_usage(CMD, "%s needs at least one profile or directory", s);
    } else if (strncmp(s, "--base=", 7) == 0 || strncmp(s, "--new=", 6) == 0) {
      side = s[2] == 'n';
      if ((code = add_path(a, side, strchr(s, '=') + 1)) >= 0)
        return code;
    } else if (side >= 0 && (s[0] != '-' || !s[1])) {
      if ((code = add_path(a, side, s)) >= 0)
        return code;
    } else {
      side = -1;
      rest[(*nrest)++] = argv[i];
    }
  }
  rest[*nrest] = NULL;
  return -1;
}

/* -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, compare_args_t *a, char **rest) {
  int code, nrest;
  memset(a, 0, sizeof *a);
  a->o = cal_compare_defaults();
  a->fmt = CAL_REPORT_TABLE;
  a->out_path = "-";
  if ((code = split_sides(argc, argv, a, rest, &nrest)) >= 0)
    return code;
  int first;
  if ((code = cal_opt_parse(&compare_opts, a, nrest, rest, &first)) >= 0)
    return code;
  int npos = nrest - first, lists = a->npaths[0] || a->npaths[1];
  if (lists && (npos || !a->npaths[0] || !a->npaths[1]))
    return cal_usage(CMD, "give both --base and --new, and no other profile");
  if (!lists && npos != 2)
    return cal_usage(CMD, "need two profiles, BASE NEW, or --base A... --new "
                          "B...");
  if (!lists) {
    a->paths[0][a->npaths[0]++] = rest[first];
    a->paths[1][a->npaths[1]++] = rest[first + 1];
  }
  int stdin_uses = 0;
  for (int s = 0; s < 2; s++)
    for (size_t i = 0; i < a->npaths[s]; i++)
      stdin_uses += strcmp(a->paths[s][i], "-") == 0;
  if (stdin_uses > 1)
    return cal_usage(CMD, "'-' (stdin) can be read only once: give at most "
                          "one profile as '-'");
  return -1;
}

/* A loaded side: its profiles, their names (owned copies) and label. */
typedef struct side {
  cal_profile_t *p[MAX_RUNS];
  const json_t *roots[MAX_RUNS];
  const cal_profile_view_t *views[MAX_RUNS];
  char *names[MAX_RUNS];
  size_t n;
  char label[512];
} side_t;

static void side_free(side_t *s) {
  for (size_t i = 0; i < s->n; i++) {
    cal_profile_free(s->p[i]);
    free(s->names[i]);
  }
  s->n = 0;
}

static int load_one(side_t *s, const char *path) {
  if (s->n == MAX_RUNS) {
    cal_usage(CMD, "more than %d profiles on one side", MAX_RUNS);
    return -1;
  }
  if (!(s->p[s->n] = cal_cmd_load_profile(CMD, path)))
    return -1;
  s->roots[s->n] = s->p[s->n]->root;
  s->views[s->n] = cal_profile_view(s->p[s->n]);
  if (!(s->names[s->n] = strdup(path))) {
    cal_profile_free(s->p[s->n]);
    cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
    return -1;
  }
  s->n++;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json of a directory, in name order. */
static int load_dir(side_t *s, const char *dir) {
  DIR *d = opendir(dir);
  char *names[MAX_RUNS + 1];
  size_t n = 0;
  int rc = 0;
  struct dirent *e;
  if (!d) {
    cal_usage(CMD, "cannot read directory %s", dir);
    return -1;
  }
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
      continue;
    if (n == MAX_RUNS) {
      cal_usage(CMD, "%s: more than %d profiles", dir, MAX_RUNS);
      rc = -1;
      break;
    }
    size_t sz = strlen(dir) + len + 2;
    if (!(names[n] = malloc(sz))) {
      cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
      rc = -1;
      break;
    }
    snprintf(names[n++], sz, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (rc == 0 && n == 0) {
    cal_usage(CMD, "directory %s holds no *.json profile", dir);
    rc = -1;
  }
  qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && load_one(s, names[i]) < 0)
      rc = -1;
    free(names[i]);
  }
  return rc;
}

/* Load a side's paths (files, directories, '-'): 0, or -1 after one line
 * on stderr. */
static int load_side(side_t *s, const char *const *paths, size_t n) {
  struct stat st;
  for (size_t i = 0; i < n; i++) {
    int isdir = strcmp(paths[i], "-") && stat(paths[i], &st) == 0 &&
                S_ISDIR(st.st_mode);
    if ((isdir ? load_dir(s, paths[i]) : load_one(s, paths[i])) < 0)
      return -1;
  }
  snprintf(s->label, sizeof s->label, "%s%s", paths[0], n > 1 ? " ..." : "");
  return 0;
}

static void one_diff(FILE *f, const char *key, const char *x, const char *y) {
  fprintf(f, "; %s: %s in base, %s in new", key, x, y);
}

/* Profiles of different machines: one line listing what differs. */
static int different_machines(const cal_comparison_t *c) {
  char *list = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&list, &len);
  if (!mem)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  cal_compare_each_diff(mem, c, 0, one_diff);
  if (fclose(mem) != 0) {
    free(list);
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  }
  int rc = cal_usage(CMD, "the profiles come from different machines "
                          "(--allow-different-machines to compare anyway): %s",
                     len > 2 ? list + 2 : "");
  free(list);
  return rc;
}

/* The outputs of compare, by --format value: each renders the typed
 * comparison only. */
static const cal_reporter_t compare_reporters[] = {
    {"table", "a terminal table", cal_compare_render_text, CAL_REPORT_TABLE},
    {"md", "GitHub markdown", cal_compare_render_text, CAL_REPORT_MD},
    {"json", "the calibrate-compare/1 tree", cal_compare_render_json, 0},
    {"html", "one self-contained page with the ratio chart",
     cal_compare_render_html, 0},
};

/* The --format name of the parsed choice, as the reporter table has it. */
static const char *format_of(const compare_args_t *a) {
  if (a->html)
    return "html";
  return a->fmt == CAL_REPORT_MD     ? "md"
         : a->fmt == CAL_REPORT_JSON ? "json"
                                     : "table";
}

/* Render the comparison with the reporter of --format and write it
 * atomically to -o: an exit code; a missing gnuplot (html) is exit 2
 * with the install hint. */
static int write_report(const cal_comparison_t *c, const compare_args_t *a) {
  const cal_reporter_t *r = cal_reporter_find(
      compare_reporters, CAL_NREPORTERS(compare_reporters),
      format_of(a));
  char *buf = NULL, err[512] = "out of memory";
  size_t len = 0;
  int code = CAL_EXIT_OK;
  int rc = cal_reporter_render_mem(r, c, &buf, &len, err, sizeof err);
  if (rc < 0)
    code = cal_fail(CMD, rc == CAL_ENOMEM || rc == CAL_ESYS
                             ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE,
                    "%s", err);
  else if (cal_write_atomic(a->out_path, buf, len, err, sizeof err) < 0)
    code = cal_usage(CMD, "%s", err);
  free(buf);
  return code;
}

/* The views of a side's profiles; NULL when one could not be built (the
 * comparison then builds them). */
static const cal_profile_view_t *const *side_views(const side_t *s) {
  for (size_t i = 0; i < s->n; i++)
    if (!s->views[i])
      return NULL;
  return s->views;
}

/* Compare the loaded sides and write the report: an exit code. */
static int compare_and_report(const side_t *sb, const side_t *sn,
                              const compare_args_t *a) {
  cal_comparison_t c;
  char err[512];
  cal_compare_side_t b = {sb->roots, (const char *const *)sb->names, sb->n,
                          sb->label, side_views(sb)};
  cal_compare_side_t n = {sn->roots, (const char *const *)sn->names, sn->n,
                          sn->label, side_views(sn)};
  int rc = cal_compare_sides(&b, &n, &a->o, &c, err, sizeof err), code;
  if (rc < 0) {
    code = cal_fail(CMD, rc == CAL_ENOMEM ? CAL_EXIT_INTERNAL : CAL_EXIT_USAGE,
                    "%s", err);
  } else if (c.ndiffs && !a->allow_diff) {
    code = different_machines(&c);
  } else if (c.summary.compared == 0 && a->o.filter) {
    code = cal_usage(CMD, "--filter %s matches no point both sides hold",
                     a->o.filter);
  } else {
    c.allow_different_machines = a->allow_diff;
    c.only_changed = a->only_changed;
    if (a->only_changed)
      cal_compare_keep_changed(&c);
    code = write_report(&c, a);
    if (code == CAL_EXIT_OK && c.summary.regression) {
      if (a->warn_only)
        fprintf(stderr, "calibrate compare: regressions found; --warn-only, "
                        "exit status 0\n");
      else
        code = CAL_EXIT_REGRESSION;
    }
  }
  cal_compare_free(&c);
  return code;
}

int cal_cmd_compare(int argc, char **argv) {
  compare_args_t a;
  side_t sb = {0}, sn = {0};
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  if (!rest)
    return cal_fail(CMD, CAL_EXIT_INTERNAL, "out of memory");
  int code = parse_args(argc, argv, &a, rest);
  if (code >= 0)
    goto out;
  code = CAL_EXIT_USAGE;
  if (load_side(&sb, a.paths[0], a.npaths[0]) < 0 ||
      load_side(&sn, a.paths[1], a.npaths[1]) < 0)
    goto out;
  code = compare_and_report(&sb, &sn, &a);
out:
  side_free(&sb);
  side_free(&sn);
  free(rest);
  return code;
}
