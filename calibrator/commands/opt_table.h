/* One table of options per command: each row is one option (its long
 * name, short letter, value type, range or allowed values, default, help
 * text and where the value goes), and the same rows drive getopt_long,
 * the conversion and checking of every value, and the --help text, so
 * the help cannot drift from the parser.
 *
 * A command's table is a list of parts (arrays of rows ending with a
 * row whose type is CAL_OPT_END): the measuring commands share the parts
 * of run/options.c and add their own.  A part with width 0 is parsed but
 * left out of the help (a paragraph names its options instead). */
#ifndef CAL_OPT_TABLE_H
#define CAL_OPT_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum cal_opt_type {
  CAL_OPT_END = 0,  /* ends a part */
  CAL_OPT_TEXT,     /* no option: its help is printed as it is (a heading) */
  CAL_OPT_FLAG,     /* no value: the int at off becomes 1 */
  CAL_OPT_CLEAR,    /* no value: the int at off becomes 0 */
  CAL_OPT_LONG,     /* a whole number in [min, max] into a long */
  CAL_OPT_COUNT,    /* the same written with digits only (no sign) */
  CAL_OPT_U64,      /* a non-negative integer (decimal or 0x) into uint64_t */
  CAL_OPT_DOUBLE,   /* a finite number in [min, max] into a double */
  CAL_OPT_FRACTION, /* "5%" or "0.05", in (0, 1), into a double */
  CAL_OPT_SIZE,     /* bytes with a K, M, G or T suffix into a double */
  CAL_OPT_ENUM,     /* one of choices (by name) into an int */
  CAL_OPT_SET,      /* comma-separated choices, their values or-ed, int */
  CAL_OPT_STRING,   /* the text itself (argv's storage) into a const char * */
  CAL_OPT_CALL,     /* no storage: only the setter sees the value */
  CAL_OPT_HELP,     /* print the help and stop with exit 0 */
  CAL_OPT_VERSION,  /* print the version and stop with exit 0 */
  CAL_OPT_VALUES,   /* print every option's values (cal_opt_values) and
                       stop with exit 0: what shell completion reads */
} cal_opt_type_t;

/* A value of CAL_OPT_ENUM / CAL_OPT_SET, or one CAL_OPT_STRING /
 * CAL_OPT_CALL accepts (any other is a bad value); a NULL name ends the
 * list. */
typedef struct cal_opt_choice {
  const char *name;
  int value;
} cal_opt_choice_t;

typedef struct cal_opt cal_opt_t;

/* Called after the value was converted and stored (or, for CAL_OPT_CALL,
 * instead): val is the text given (NULL for a flag).  Returns -1 to go on,
 * else the exit code to stop with after printing one line (cal_usage). */
typedef int (*cal_opt_setter_t)(void *obj, const cal_opt_t *row,
                                const char *val, const char *cmd);

struct cal_opt {
  cal_opt_type_t type;
  const char *name;    /* long name without "--" (NULL for CAL_OPT_TEXT) */
  int letter;          /* short option letter, 0: none */
  const char *arg;     /* the value's name in the help ("N", "FILE") */
  size_t off;          /* offset of the value in the command's struct */
  double min, max;     /* LONG, DOUBLE, SIZE: the range allowed */
  const cal_opt_choice_t *choices; /* ENUM, SET; STRING, CALL: the only
                                      values accepted */
  /* The values accepted when they are not fixed choices (presets,
   * sections): printed space-separated; the setter checks them. */
  void (*values)(FILE *out);
  const char *def;     /* default, converted like a given value; NULL: none */
  const char *bad;     /* the error for a bad value: a format whose %s is
                          the value and %o the option as written (NULL: a
                          line from the type) */
  cal_opt_setter_t set;
  const char *label;   /* the help's left column, whole, when not the
                          generated one ("      --hidden N, --heads N") */
  const char *help;    /* text after the left column, lines after the first
                          indented to the column; NULL: not in the help.
                          "%%" is a percent sign, "%g" prints help_num (head, tail
                          and TEXT rows: "%%" too).
                          Starting with '\n': it starts below the label */
  double help_num;
};

/* One part of a command's table and the column its help text starts in
 * (0: the part is parsed but not printed). */
typedef struct cal_opt_part {
  const cal_opt_t *rows;
  int width;
  int flags; /* CAL_OPT_FLAT, CAL_OPT_NOPARSE */
} cal_opt_part_t;

/* A row without a letter starts at 2 spaces, not at 6. */
#define CAL_OPT_FLAT 1
/* Printed in the help only: a scan of the command's own takes it. */
#define CAL_OPT_NOPARSE 2

#define CAL_OPT_MAX_PARTS 6

typedef struct cal_opt_cmd {
  const char *cmd;     /* name in messages ("compare"); NULL: top level */
  const char *head;    /* the help before the options (usage, description) */
  cal_opt_part_t parts[CAL_OPT_MAX_PARTS]; /* ends at a NULL rows */
  const char *tail;    /* the help after them (exit status, ...) */
} cal_opt_cmd_t;

/* Store every row's default (def) in obj. */
int cal_opt_defaults(const cal_opt_cmd_t *t, void *obj);

/* Parse argv (argv[0] the command's name) into obj: every value
 * converted and checked, every bad flag or value reported on one line
 * (cal_usage / cal_bad_option).  A long name in two parts is the
 * first's.  Returns -1 when the command goes on (*first: the index of
 * the first operand, getopt having moved operands to the end), else the
 * exit code to stop with (help or version printed: 0; an error: 2, or a
 * setter's code). */
int cal_opt_parse(const cal_opt_cmd_t *t, void *obj, int argc, char **argv,
                  int *first);

/* For a command that scans argv itself (`calibrate peak`: exact names,
 * options and operands in any order): the row of "--name" or "-x"
 * (NULL: none), and what cal_opt_parse does with it and its value (-1 to
 * go on, else the exit code; given: the option as written, for a bad
 * line's %o). */
const cal_opt_t *cal_opt_find(const cal_opt_cmd_t *t, const char *name);
int cal_opt_take(const cal_opt_cmd_t *t, const cal_opt_t *row, void *obj,
                 const char *val, const char *given);
/* Whether the row's option takes a value. */
int cal_opt_takes_value(const cal_opt_t *row);

/* A setter's report of a bad value: the row's line for val (as the
 * parser prints it); returns CAL_EXIT_USAGE. */
int cal_opt_bad(const char *cmd, const cal_opt_t *row, const char *val);

/* A setter for -o FILE (a STRING row): an empty name is refused with
 * "-o needs a file name". */
int cal_opt_output_file(void *obj, const cal_opt_t *row, const char *val,
                        const char *cmd);

/* The help: head, every printed part's rows, tail. */
void cal_opt_help(const cal_opt_cmd_t *t, FILE *out);

/* For shell completion (`calibrate CMD --complete-values`): a line
 * "--name VALUE..." for every option with choices or a values list, in
 * table order, each name once. */
void cal_opt_values(const cal_opt_cmd_t *t, FILE *out);

/* The help and version rows every command has ("show this help"), as a
 * part, and as rows with the help line's own text; with them the
 * unlisted --complete-values the completion scripts call. */
extern const cal_opt_t cal_opt_help_rows[];
#define CAL_OPT_HELP_VERSION(text)                                             \
  {.type = CAL_OPT_HELP, .name = "help", .letter = 'h', .help = text},       \
  {.type = CAL_OPT_VERSION, .name = "version", .letter = 'V',                \
   .help = "show the version"},                                              \
  {.type = CAL_OPT_VALUES, .name = "complete-values"}
/* The same rows and the end of the table. */
#define CAL_OPT_LAST(text) CAL_OPT_HELP_VERSION(text), {.type = CAL_OPT_END}

#endif
