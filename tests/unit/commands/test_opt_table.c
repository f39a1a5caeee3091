/* The option table (commands/opt_table.c): every value type with good
 * and bad values, ranges, choices, unknown options, missing values, the
 * setter, defaults, and the help printed from the same rows; and the
 * rows every measuring command shares (run/option_rows.c) through
 * cal_opts_parse.
 * covers: calibrator/run/option_rows.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cal_exit.h"
#include "opt_table.h"
#include "options.h"
#include "test_util.h"

typedef struct args {
  int flag, on, mode, fmt, calls;
  long count;
  uint64_t seed;
  double ratio, frac, size;
  const char *out;
} args_t;

static const cal_opt_choice_t modes[] = {
    {"a", 1}, {"b", 2}, {"all", 3}, {NULL, 0}};
static const cal_opt_choice_t formats[] = {
    {"table", 0}, {"json", 1}, {NULL, 0}};

static int count_calls(void *obj, const cal_opt_t *row, const char *val,
                       const char *cmd) {
  args_t *a = obj;
  a->calls++;
  return strcmp(val, "stop") == 0 ? 7 : -1;
}

static const cal_opt_t rows[] = {
    {.type = CAL_OPT_TEXT, .help = "Options:\n"},
    {.type = CAL_OPT_STRING, .name = "output", .letter = 'o', .arg = "FILE",
     .off = offsetof(args_t, out), .help = "write to FILE\n('-': stdout)"},
    {.type = CAL_OPT_FLAG, .name = "flag", .letter = 'f',
     .off = offsetof(args_t, flag), .help = "a flag"},
    {.type = CAL_OPT_CLEAR, .name = "no-on", .off = offsetof(args_t, on),
     .help = "clear on"},
    {.type = CAL_OPT_LONG, .name = "count", .letter = 'n', .arg = "N",
     .off = offsetof(args_t, count), .min = 1, .max = 10, .def = "4",
     .help = "count (default 4)"},
    {.type = CAL_OPT_U64, .name = "seed", .arg = "N",
     .off = offsetof(args_t, seed), .def = "42",
     .bad = "--seed needs a non-negative integer, not '%s'",
     .help = "a seed, %g by default", .help_num = 42},
    {.type = CAL_OPT_DOUBLE, .name = "ratio", .arg = "R",
     .off = offsetof(args_t, ratio), .min = 0.5, .max = 2, .def = "1"},
    {.type = CAL_OPT_FRACTION, .name = "frac", .arg = "F",
     .off = offsetof(args_t, frac), .def = "3%",
     .help = "a fraction (default 3%%)"},
    {.type = CAL_OPT_SIZE, .name = "size", .arg = "SIZE",
     .off = offsetof(args_t, size), .min = 1024, .max = 1e12},
    {.type = CAL_OPT_SET, .name = "mode", .arg = "M", .choices = modes,
     .off = offsetof(args_t, mode), .def = "a"},
    {.type = CAL_OPT_ENUM, .name = "format", .arg = "F", .choices = formats,
     .off = offsetof(args_t, fmt), .bad = "--format %s: use table or json"},
    {.type = CAL_OPT_CALL, .name = "call", .arg = "X", .set = count_calls,
     .label = "  --call X, --call=X", .help = "\ncalled"},
    {.type = CAL_OPT_END},
};

static const cal_opt_cmd_t table = {
    "demo",
    "Usage: demo\n\n",
    {{rows, 14, CAL_OPT_FLAT}, {cal_opt_help_rows, 14, CAL_OPT_FLAT}},
    "\nExit status: 0 (100%%)\n"};

/* Parse a command line given as one string of words; *err receives the
 * stderr line. */
static int parse(const char *line, args_t *a, char *err, size_t errlen,
                 int *first) {
  static char buf[512];
  char *argv[32];
  int argc = 0;
  snprintf(buf, sizeof buf, "demo %s", line);
  for (char *w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " "))
    argv[argc++] = w;
  argv[argc] = NULL;
  memset(a, 0, sizeof *a);
  a->on = 1;
  assert_int_equal(cal_opt_defaults(&table, a), 0);
  fflush(stderr);
  FILE *cap = tmpfile();
  assert_non_null(cap);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(cap), STDERR_FILENO);
  int rc = cal_opt_parse(&table, a, argc, argv, first);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(cap);
  size_t n = fread(err, 1, errlen - 1, cap);
  err[n] = '\0';
  fclose(cap);
  return rc;
}

static void good_values(void **state) {
  (void)state;
  args_t a;
  char err[512];
  int first = 0;
  assert_int_equal(parse("", &a, err, sizeof err, &first), -1);
  assert_int_equal(a.count, 4); /* the defaults */
  assert_int_equal(a.seed, 42);
  assert_int_equal(a.mode, 1);
  assert_true(a.frac > 0.0299 && a.frac < 0.0301);
  assert_int_equal(parse("-o x.json -f --no-on -n 10 --seed 0x10 --ratio 2 "
                         "--frac 0.5 --size 2K --mode b,a --format json "
                         "--call go p1 p2",
                         &a, err, sizeof err, &first),
                   -1);
  assert_string_equal(err, "");
  assert_string_equal(a.out, "x.json");
  assert_int_equal(a.flag, 1);
  assert_int_equal(a.on, 0);
  assert_int_equal(a.count, 10);
  assert_int_equal(a.seed, 16);
  assert_true(a.ratio == 2.0 && a.frac == 0.5 && a.size == 2048.0);
  assert_int_equal(a.mode, 3);
  assert_int_equal(a.fmt, 1);
  assert_int_equal(a.calls, 1);
  assert_int_equal(first, 21); /* the operands follow the options */
  assert_int_equal(parse("--count=3 --cou 5", &a, err, sizeof err, &first),
                   -1);
  assert_int_equal(a.count, 5); /* a unique prefix is the option */
}

/* Every bad value: its line on stderr and exit 2. */
static void bad_values(void **state) {
  (void)state;
  static const struct {
    const char *line, *err;
  } cases[] = {
      {"--count 0", "--count needs a whole number from 1 to 10, not '0'"},
      {"-n 11", "--count needs a whole number from 1 to 10, not '11'"},
      {"--count 2x", "--count needs a whole number from 1 to 10, not '2x'"},
      {"--seed -1", "--seed needs a non-negative integer, not '-1'"},
      {"--ratio 3", "--ratio needs a number from 0.5 to 2, not '3'"},
      {"--ratio nan", "--ratio needs a number from 0.5 to 2, not 'nan'"},
      {"--frac 5", "--frac needs a fraction like 5% or 0.05, not '5'"},
      {"--size 1", "--size needs a size like 512M or 8G, not '1'"},
      {"--size 4Q", "--size needs a size like 512M or 8G, not '4Q'"},
      {"--mode c", "--mode is one of a, b, all, not 'c'"},
      {"--mode a,", "--mode is one of a, b, all, not 'a,'"},
      {"--format xml", "--format xml: use table or json"},
      {"--bogus", "unknown option '--bogus'"},
      {"-x", "unknown option '-x'"},
      {"--count", "option '--count' needs a value"},
      {"-o", "option '-o' needs a value"},
      {"--flag=1", "unknown option '--flag=1'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    args_t a;
    char err[512], want[512];
    int first;
    int rc = parse(cases[i].line, &a, err, sizeof err, &first);
    snprintf(want, sizeof want, "calibrate demo: %s (see 'calibrate demo "
             "--help')\n", cases[i].err);
    if (rc != CAL_EXIT_USAGE || strcmp(err, want) != 0)
      fail_msg("'%s': exit %d, stderr '%s'; expected 2, '%s'", cases[i].line,
               rc, err, want);
  }
}

/* A setter may stop the parse with its own code. */
static void setter_stops(void **state) {
  (void)state;
  args_t a;
  char err[64];
  int first;
  assert_int_equal(parse("--call stop --count 0", &a, err, sizeof err, &first),
                   7);
  assert_string_equal(err, "");
}

/* A command's own scan: rows by exact name or letter, a count written
 * with digits only, the option as written in the bad line (%o). */
static void find_and_take(void **state) {
  (void)state;
  typedef struct {
    long n;
  } count_t;
  static const cal_opt_t own[] = {
      {.type = CAL_OPT_COUNT, .name = "n", .letter = 'n', .min = 1, .max = 9,
       .off = offsetof(count_t, n), .bad = "%o wants a digit, not '%s'"},
      {.type = CAL_OPT_END},
  };
  static const cal_opt_cmd_t t = {"demo", NULL, {{own, 0, CAL_OPT_NOPARSE}},
                                  NULL};
  count_t c = {0};
  assert_ptr_equal(cal_opt_find(&t, "--n"), &own[0]);
  assert_ptr_equal(cal_opt_find(&t, "-n"), &own[0]);
  assert_null(cal_opt_find(&t, "--m"));
  assert_null(cal_opt_find(&t, "-nn"));
  assert_int_equal(cal_opt_take(&t, &own[0], &c, "7", "-n"), -1);
  assert_int_equal(c.n, 7);
  char err[256];
  fflush(stderr);
  FILE *cap = tmpfile();
  assert_non_null(cap);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(cap), STDERR_FILENO);
  int rc = cal_opt_take(&t, &own[0], &c, "+7", "--n=+7");
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(cap);
  err[fread(err, 1, sizeof err - 1, cap)] = '\0';
  fclose(cap);
  assert_int_equal(rc, CAL_EXIT_USAGE);
  assert_string_equal(err, "calibrate demo: --n=+7 wants a digit, not '+7' "
                           "(see 'calibrate demo --help')\n");
  /* a part the command scans itself is not getopt's (its line on stderr:
   * unknown option '--n') */
  int first;
  char *argv[] = {"demo", "--n", "3", NULL};
  assert_int_equal(cal_opt_parse(&t, &c, 3, argv, &first), CAL_EXIT_USAGE);
}

/* What fn (cal_opt_values, cal_opt_help) prints of t. */
static char *text_of(void (*fn)(const cal_opt_cmd_t *, FILE *),
                     const cal_opt_cmd_t *t) {
  cal_test_text_t text;
  FILE *f = cal_test_text_open(&text);
  fn(t, f);
  return cal_test_text_close(f, &text);
}

static void help_from_rows(void **state) {
  (void)state;
  char *text = text_of(cal_opt_help, &table);
  assert_string_equal(text,
                      "Usage: demo\n\n"
                      "Options:\n"
                      "  -o, --output FILE  write to FILE\n"
                      "              ('-': stdout)\n"
                      "  -f, --flag  a flag\n"
                      "  --no-on     clear on\n"
                      "  -n, --count N  count (default 4)\n"
                      "  --seed N    a seed, 42 by default\n"
                      "  --frac F    a fraction (default 3%)\n"
                      "  --call X, --call=X\n"
                      "              called\n"
                      "  -h, --help  show this help\n"
                      "  -V, --version  show the version\n"
                      "\nExit status: 0 (100%)\n");
  free(text);
}

/* The measuring commands' shared rows: values land in cal_opts_t, a value
 * out of its row's range stops with exit 2, --help is done. */
static void measuring_rows(void **state) {
  (void)state;
  static const cal_opt_cmd_t t = {"demo", "Usage: demo\n",
                                  {{cal_opts_run_rows, 25, 0},
                                   {cal_opts_sweep_rows, 25, 0},
                                   {cal_opt_help_rows, 25, 0}},
                                  NULL};
  char *good[] = {"demo", "--samples", "3", "--seed", "7", "--sweep-batch",
                  "--batches", "1,2,4", "--allow-busy", NULL};
  char *bad[] = {"demo", "--samples", "0", NULL};
  char *help[] = {"demo", "--rounds", "2", "--help", NULL};
  cal_opts_t o;
  cal_opts_action_t action;
  assert_int_equal(cal_opts_parse(&o, 9, good, &t, &action), 0);
  assert_int_equal(action, CAL_OPTS_RUN);
  assert_int_equal(o.samples_asked, 3);
  assert_int_equal(o.seed, 7);
  assert_int_equal(o.allow_busy, 1);
  assert_int_equal(o.sweep_asked, 1);
  assert_int_equal(o.sweep.nbatches, 3);
  cal_opts_free(&o);
  assert_int_equal(cal_opts_parse(&o, 3, bad, &t, &action), CAL_EXIT_USAGE);
  cal_opts_free(&o);
  FILE *saved = stdout;
  stdout = tmpfile();
  assert_non_null(stdout);
  int rc = cal_opts_parse(&o, 4, help, &t, &action);
  fclose(stdout);
  stdout = saved;
  assert_int_equal(rc, 0);
  assert_int_equal(action, CAL_OPTS_DONE);
  cal_opts_free(&o);
}

/* cal_opts_parse of argv (NULL-terminated) by the run's rows: its code. */
static int parse_sweep(char **argv) {
  static const cal_opt_cmd_t t = {"demo", NULL,
                                  {{cal_opts_run_rows, 25, 0},
                                   {cal_opts_sweep_rows, 25, 0}},
                                  NULL};
  int argc = 0;
  while (argv[argc])
    argc++;
  cal_opts_t o;
  cal_opts_action_t action;
  int rc = cal_opts_parse(&o, argc, argv, &t, &action);
  cal_opts_free(&o);
  return rc;
}

/* The sweep's flags that only some runs read are refused where they would
 * be ignored, in any order, their defaults never: --gen-len (inference,
 * grpo), --group (grpo), a second --workload, a listed batch above a
 * given --max-batch (the default 4096 only stops the extension). */
static void sweep_flags_where_read(void **state) {
  (void)state;
  char *grpo[] = {"demo", "--group", "2", "--gen-len", "3", "--workload",
                  "grpo", NULL};
  char *infer[] = {"demo", "--workload", "inference", "--gen-len", "8", NULL};
  char *defaults[] = {"demo", "--workload", "sft", "--batches", "8192", NULL};
  char *at_max[] = {"demo", "--batches", "1,4", "--max-batch", "4", NULL};
  assert_int_equal(parse_sweep(grpo), 0);
  assert_int_equal(parse_sweep(infer), 0);
  assert_int_equal(parse_sweep(defaults), 0);
  assert_int_equal(parse_sweep(at_max), 0);
  char *bad[][8] = {
      {"demo", "--workload", "sft", "--group", "8", NULL},
      {"demo", "--group", "8", "--workload", "dpo", NULL},
      {"demo", "--workload", "inference", "--group", "8", NULL},
      {"demo", "--workload", "dpo", "--gen-len", "8", NULL},
      {"demo", "--gen-len", "8", "--workload", "sft", NULL},
      {"demo", "--sweep-batch", "--gen-len", "8", NULL},
      {"demo", "--workload", "sft", "--workload", "dpo", NULL},
      {"demo", "--batches", "8", "--max-batch", "4", NULL},
      {"demo", "--max-batch", "4", "--batches", "1,2,8", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(parse_sweep(bad[i]), CAL_EXIT_USAGE);
}

/* cal_opt_take with its error line sent to /dev/null. */
static int take_silenced(const cal_opt_cmd_t *t, const cal_opt_t *r, void *obj,
                         const char *val) {
  fflush(stderr);
  int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
  assert_true(saved >= 0 && null >= 0);
  dup2(null, STDERR_FILENO);
  close(null);
  int rc = cal_opt_take(t, r, obj, val, NULL);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  return rc;
}

/* What a values callback lists (presets, sections). */
static void two_values(FILE *out) { fputs("x y", out); }

/* Shell completion's values come from the rows: choices of every type
 * that has them, a values list, each option once, letters too; a STRING
 * or CALL row with choices takes only those (checked before its setter),
 * and --complete-values prints them and stops with exit 0. */
static void values_for_completion(void **state) {
  (void)state;
  typedef struct {
    const char *s;
    int calls;
  } v_t;
  static const cal_opt_choice_t kinds[] = {{"png", 0}, {"svg", 0}, {NULL, 0}};
  static const cal_opt_t own[] = {
      {.type = CAL_OPT_STRING, .name = "kind", .letter = 'k', .arg = "K",
       .choices = kinds, .off = offsetof(v_t, s),
       .bad = "--kind must be png or svg: %s"},
      {.type = CAL_OPT_CALL, .name = "pick", .arg = "P", .choices = kinds},
      {.type = CAL_OPT_CALL, .name = "name", .arg = "N", .values = two_values},
      {.type = CAL_OPT_SET, .name = "mode", .arg = "M", .choices = modes},
      {.type = CAL_OPT_LONG, .name = "n", .arg = "N", .min = 1, .max = 9},
      {.type = CAL_OPT_END},
  };
  static const cal_opt_t again[] = {
      {.type = CAL_OPT_STRING, .name = "kind", .choices = formats},
      {.type = CAL_OPT_END},
  };
  static const cal_opt_cmd_t t = {
      "demo", NULL, {{own, 10, 0}, {again, 0, 0}, {cal_opt_help_rows, 10, 0}},
      NULL};
  char *text = text_of(cal_opt_values, &t);
  assert_string_equal(text, "--kind png svg\n-k png svg\n--pick png svg\n"
                            "--name x y\n--mode a b all\n");
  free(text);
  v_t v = {NULL, 0};
  assert_int_equal(cal_opt_take(&t, &own[0], &v, "svg", NULL), -1);
  assert_string_equal(v.s, "svg");
  assert_int_equal(cal_opt_take(&t, &own[1], &v, "png", NULL), -1);
  assert_int_equal(take_silenced(&t, &own[0], &v, "gif"), CAL_EXIT_USAGE);
  assert_int_equal(take_silenced(&t, &own[1], &v, "gif"), CAL_EXIT_USAGE);
  assert_string_equal(v.s, "svg"); /* a bad value stores nothing */
  /* --complete-values: in every command's table, not in its help */
  assert_int_equal(cal_opt_find(&t, "--complete-values")->type, CAL_OPT_VALUES);
  text = text_of(cal_opt_help, &t);
  assert_null(strstr(text, "complete-values"));
  free(text);
  /* the measuring commands' rows offer their names */
  static const cal_opt_cmd_t m = {"demo", NULL,
                                  {{cal_opts_run_rows, 25, 0},
                                   {cal_opts_sweep_rows, 25, 0}},
                                  NULL};
  text = text_of(cal_opt_values, &m);
  assert_non_null(strstr(text, "\n--workload sft dpo grpo inference\n"));
  assert_non_null(strstr(text, "\n--dtype fp32 bf16 auto\n"));
  assert_non_null(strstr(text, " qwen2-0.5b "));
  assert_non_null(strstr(text, "--sections gemm "));
  assert_non_null(strstr(text, "--gemm-engine auto openblas"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(good_values),
      cmocka_unit_test(bad_values),
      cmocka_unit_test(setter_stops),
      cmocka_unit_test(find_and_take),
      cmocka_unit_test(help_from_rows),
      cmocka_unit_test(values_for_completion),
      cmocka_unit_test(measuring_rows),
      cmocka_unit_test(sweep_flags_where_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
