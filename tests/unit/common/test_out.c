/* The one writer (common/cal_out.c) and the input opener (cal_file_open):
 * atomic replacement, symlinks, special files, no temporary file left
 * behind on a failure or a signal. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cal_err.h"
#include "cal_file.h"
#include "cal_out.h"
#include "test_fs.h"

static char *dir;

static int setup(void **state) {
  (void)state;
  dir = test_scratch_dir();
  return dir ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  test_rm_rf(dir);
  free(dir);
  return 0;
}

/* Files in dir whose name holds ".tmp." */
static int count_tmp(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  assert_non_null(d);
  while ((e = readdir(d)))
    n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void expect_text(const char *path, const char *text) {
  char *got = test_read_file(path, NULL);
  assert_non_null(got);
  assert_string_equal(got, text);
  free(got);
}

static void regular_replaced_atomically(void **state) {
  (void)state;
  char err[256], *p = test_path(dir, "a.json");
  put(p, "old");
  chmod(p, 0640);
  struct stat before, after;
  stat(p, &before);
  assert_int_equal(cal_out_file(p, "new", 3, 0, err, sizeof err), 0);
  expect_text(p, "new");
  stat(p, &after);
  assert_int_not_equal(before.st_ino, after.st_ino); /* renamed over */
  assert_int_equal(after.st_mode & 07777, 0640);     /* mode kept */
  assert_int_equal(count_tmp(), 0);
  free(p);
}

static void symlink_target_replaced(void **state) {
  (void)state;
  char err[256], *link = test_path(dir, "link"), *victim = test_path(dir, "t");
  put(victim, "old");
  assert_int_equal(symlink("t", link), 0);
  assert_int_equal(cal_out_file(link, "new", 3, 0, err, sizeof err), 0);
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode)); /* the link stays a link */
  expect_text(victim, "new");
  /* a dangling link creates its target */
  unlink(victim);
  assert_int_equal(cal_out_file(link, "x", 1, 0, err, sizeof err), 0);
  expect_text(victim, "x");
  assert_int_equal(count_tmp(), 0);
  free(link);
  free(victim);
}

static void nofollow_replaces_planted_link(void **state) {
  (void)state;
  char err[256], *link = test_path(dir, "chart.dat"),
                 *victim = test_path(dir, "victim");
  put(victim, "precious");
  assert_int_equal(symlink(victim, link), 0);
  assert_int_equal(
      cal_out_file(link, "data", 4, CAL_OUT_NOFOLLOW, err, sizeof err), 0);
  expect_text(victim, "precious");
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  expect_text(link, "data");
  free(link);
  free(victim);
}

static void special_files_written_through(void **state) {
  (void)state;
  char err[256];
  struct stat before, after;
  stat("/dev/null", &before);
  assert_int_equal(cal_out_file("/dev/null", "x", 1, 0, err, sizeof err), 0);
  stat("/dev/null", &after);
  assert_true(S_ISCHR(after.st_mode));
  assert_int_equal(before.st_rdev, after.st_rdev);
  /* a FIFO nobody reads: an error at once, not a hang */
  char *fifo = test_path(dir, "fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(cal_out_file(fifo, "x", 1, 0, err, sizeof err), CAL_EIO);
  assert_non_null(strstr(err, "no process is reading"));
  /* with a reader it is written through and stays a FIFO */
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  assert_true(rd >= 0);
  assert_int_equal(cal_out_file(fifo, "hey", 3, 0, err, sizeof err), 0);
  char buf[8] = "";
  assert_int_equal(read(rd, buf, sizeof buf), 3);
  assert_memory_equal(buf, "hey", 3);
  close(rd);
  struct stat st;
  stat(fifo, &st);
  assert_true(S_ISFIFO(st.st_mode));
  /* a directory is refused */
  assert_int_equal(cal_out_file(dir, "x", 1, 0, err, sizeof err), CAL_EIO);
  assert_non_null(strstr(err, "directory"));
  assert_int_equal(count_tmp(), 0);
  free(fifo);
}

/* In a child: write 100 kB to path under a 4 kB file-size limit. */
static void write_over_limit(const char *path) {
  struct rlimit rl = {4096, 4096};
  setrlimit(RLIMIT_FSIZE, &rl);
  static char big[100000];
  char err[256];
  int rc = cal_out_file(path, big, sizeof big, 0, err, sizeof err);
  _exit(rc == CAL_EIO && strstr(err, "too large") ? 0 : 1);
}

/* In a child: open path, write half of it, and die of SIGTERM. */
static void write_half_and_die(const char *path) {
  cal_out_t o;
  char err[256];
  if (cal_out_open(&o, path, 0, err, sizeof err) != 0 ||
      cal_out_write(&o, "half", 4, err, sizeof err) != 0)
    _exit(1);
  raise(SIGTERM); /* ends the process with the file half-written */
  _exit(2);
}

/* child(arg) in a child process: its wait status. */
static int in_child(const char *arg, void (*child)(const char *)) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    child(arg);
  int status;
  waitpid(pid, &status, 0);
  return status;
}

/* path holds "old"; then child(path) runs in a child process: its wait
 * status. */
static int old_file_in_child(const char *path, void (*child)(const char *)) {
  put(path, "old");
  return in_child(path, child);
}

static void failed_write_leaves_nothing(void **state) {
  (void)state;
  char *p = test_path(dir, "limited.json");
  int status = old_file_in_child(p, write_over_limit);
  /* SIGXFSZ did not kill it: the write failed with "File too large" */
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  expect_text(p, "old");
  assert_int_equal(count_tmp(), 0);
  free(p);
}

static void signal_removes_temporary(void **state) {
  (void)state;
  char *p = test_path(dir, "sig.json");
  int status = old_file_in_child(p, write_half_and_die);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGTERM);
  expect_text(p, "old");
  assert_int_equal(count_tmp(), 0);
  /* abort: the same without a signal */
  cal_out_t o;
  char err[256];
  assert_int_equal(cal_out_open(&o, p, 0, err, sizeof err), 0);
  assert_int_equal(count_tmp(), 1);
  cal_out_abort(&o);
  assert_int_equal(count_tmp(), 0);
  expect_text(p, "old");
  free(p);
}

static void inputs_must_be_regular(void **state) {
  (void)state;
  char err[256], *fifo = test_path(dir, "in.fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_null(cal_file_open(fifo, err, sizeof err)); /* no hang */
  assert_non_null(strstr(err, "FIFO"));
  assert_null(cal_file_open(dir, err, sizeof err));
  assert_non_null(strstr(err, "directory"));
  assert_null(cal_file_open("/dev/zero", err, sizeof err));
  assert_non_null(strstr(err, "character device"));
  assert_true(cal_file_open("-", err, sizeof err) == stdin);
  free(fifo);
}

/* A name as long as a name can be: its temporary file still fits. */
static void longest_name_written(void **state) {
  (void)state;
  char err[512], name[256];
  for (size_t len = 240; len <= 255; len++) {
    memset(name, 'n', len);
    name[len] = '\0';
    char *p = test_path(dir, name);
    assert_int_equal(cal_out_file(p, "x", 1, 0, err, sizeof err), 0);
    expect_text(p, "x");
    unlink(p);
    free(p);
  }
  assert_int_equal(count_tmp(), 0);
}

/* In a child: a temporary directory with a file in it, then SIGTERM. */
static void tmpdir_and_die(const char *parent) {
  char *d = NULL, err[256];
  int slot;
  if (cal_out_tmpdir(parent, "t", &d, &slot) != 0)
    _exit(1);
  char *f = test_path(d, "chart.svg");
  if (cal_out_file(f, "<svg/>", 6, CAL_OUT_NOFOLLOW, err, sizeof err) != 0)
    _exit(1);
  raise(SIGTERM);
  _exit(2);
}

/* Entries of dir: how many. */
static int count_entries(const char *d) {
  DIR *h = opendir(d);
  struct dirent *e;
  int n = 0;
  assert_non_null(h);
  while ((e = readdir(h)))
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(h);
  return n;
}

static void tmpdir_removed(void **state) {
  (void)state;
  char *sub = test_path(dir, "tmpdirs"), *d = NULL, err[256];
  int slot;
  assert_int_equal(mkdir(sub, 0700), 0);
  assert_int_equal(cal_out_tmpdir(sub, "t", &d, &slot), 0);
  char *f = test_path(d, "a.svg");
  assert_int_equal(cal_out_file(f, "x", 1, 0, err, sizeof err), 0);
  assert_int_equal(count_entries(sub), 1);
  cal_out_tmpdir_remove(d, slot); /* frees d */
  assert_int_equal(count_entries(sub), 0);
  free(f);
  /* a signal removes it too, with its files */
  int status = in_child(sub, tmpdir_and_die);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGTERM);
  assert_int_equal(count_entries(sub), 0);
  free(sub);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(regular_replaced_atomically),
      cmocka_unit_test(symlink_target_replaced),
      cmocka_unit_test(nofollow_replaces_planted_link),
      cmocka_unit_test(special_files_written_through),
      cmocka_unit_test(failed_write_leaves_nothing),
      cmocka_unit_test(signal_removes_temporary),
      cmocka_unit_test(inputs_must_be_regular),
      cmocka_unit_test(longest_name_written),
      cmocka_unit_test(tmpdir_removed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
