// SPDX-License-Identifier: MIT
/* src/base/fileio.c: outputs replaced whole or not at all, stream errors caught, inputs read
 * only when regular and bounded. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "base/fileio.h"

static char *
make_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("collsim-fileio-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void
remove_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_remove(p);
    }
    g_rmdir(dir);
}

static guint
count_entries(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    guint n = 0;
    while (g_dir_read_name(d) != NULL)
        n++;
    return n;
}

static char *
contents(const char *path)
{
    char *text = NULL;
    g_autoptr(GError) error = NULL;
    g_file_get_contents(path, &text, NULL, &error);
    g_assert_no_error(error);
    return text;
}

/* Setup: a file with mode 0600 reached through a symbolic link. Expectation: after the
 * replace, the link is still a link, the file holds the new text and keeps mode 0600, and
 * nothing else is in the folder. */
static void
test_replace_keeps_mode_and_link(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *file = g_build_filename(dir, "real.txt", NULL);
    g_autofree char *link = g_build_filename(dir, "link.txt", NULL);
    g_assert_true(g_file_set_contents(file, "old", -1, NULL));
    g_assert_cmpint(g_chmod(file, 0600), ==, 0);
    g_assert_cmpint(symlink("real.txt", link), ==, 0);

    g_autoptr(GError) error = NULL;
    g_assert_true(cs_file_replace_contents(link, "new text", 8, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
    g_autofree char *text = contents(file);
    g_assert_cmpstr(text, ==, "new text");
    GStatBuf st;
    g_assert_cmpint(g_stat(file, &st), ==, 0);
    g_assert_cmpint(st.st_mode & 07777, ==, 0600);
    g_assert_cmpuint(count_entries(dir), ==, 2);
    remove_dir(dir);
}

/* Setup: a 4 KiB file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) and 64 KiB to write over a
 * file holding "old". Expectation: EFBIG, the file still holds "old", no temporary file. */
static void
test_replace_failure_keeps_old(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *file = g_build_filename(dir, "out.txt", NULL);
    g_assert_true(g_file_set_contents(file, "old", -1, NULL));
    g_autofree char *big = g_malloc(65536);
    memset(big, 'x', 65536);

    struct rlimit saved;
    g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &saved), ==, 0);
    struct rlimit small = { .rlim_cur = 4096, .rlim_max = saved.rlim_max };
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
    g_autoptr(GError) error = NULL;
    gboolean ok = cs_file_replace_contents(file, big, 65536, &error);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old_handler);

    g_assert_false(ok);
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
    g_assert_cmpstr(error->message, ==, g_strerror(EFBIG));
    g_autofree char *text = contents(file);
    g_assert_cmpstr(text, ==, "old");
    g_assert_cmpuint(count_entries(dir), ==, 1);
    remove_dir(dir);
}

/* Setup: /dev/full and /dev/null as destinations. Expectation: a device is written in place
 * (never renamed over): /dev/full fails with ENOSPC, /dev/null takes the bytes and stays a
 * character device. */
static void
test_replace_device(void)
{
    g_autoptr(GError) error = NULL;
    if (!g_file_test("/dev/full", G_FILE_TEST_EXISTS)) {
        g_test_skip("no /dev/full");
        return;
    }
    g_assert_false(cs_file_replace_contents("/dev/full", "abc", 3, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC);
    g_clear_error(&error);
    g_assert_true(cs_file_replace_contents("/dev/null", "abc", 3, &error));
    g_assert_no_error(error);
    GStatBuf st;
    g_assert_cmpint(g_stat("/dev/null", &st), ==, 0);
    g_assert_true(S_ISCHR(st.st_mode));
}

/* Setup: a stream on /dev/full with a buffered line. Expectation: the flush reports ENOSPC. */
static void
test_flush_stream_full(void)
{
    FILE *f = fopen("/dev/full", "w");
    if (f == NULL) {
        g_test_skip("no /dev/full");
        return;
    }
    fputs("a line\n", f);
    g_autoptr(GError) error = NULL;
    g_assert_false(cs_file_flush_stream(f, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSPC);
    fclose(f);
}

/* ---- Bounded reading ---- */

/* Setup: /dev/zero (endless), a FIFO with no writer, a folder. Expectation: each refused at
 * once, without reading (the FIFO would block, /dev/zero would grow without bound). */
static void
test_read_not_regular(void)
{
    char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) error = NULL;
    g_assert_false(cs_file_read_bounded("/dev/zero", 1 << 20, &text, &len, &error));
    g_assert_nonnull(strstr(error->message, "not a regular file"));
    g_clear_error(&error);

    g_autofree char *dir = make_dir();
    g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    g_assert_false(cs_file_read_bounded(fifo, 1 << 20, &text, &len, &error));
    g_assert_nonnull(strstr(error->message, "not a regular file"));
    g_clear_error(&error);

    g_assert_false(cs_file_read_bounded(dir, 1 << 20, &text, &len, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR);
    g_clear_error(&error);
    g_autofree char *missing = g_build_filename(dir, "missing", NULL);
    g_assert_false(cs_file_read_bounded(missing, 1 << 20, &text, &len, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
    g_assert_null(text);
    remove_dir(dir);
}

/* Setup: a 100-byte file. Expectation: read whole (NUL-terminated) under a 100-byte cap,
 * refused under a 99-byte cap with the size in the message. */
static void
test_read_cap(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *file = g_build_filename(dir, "f.txt", NULL);
    char data[100];
    memset(data, 'a', sizeof data);
    g_assert_true(g_file_set_contents(file, data, sizeof data, NULL));

    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_file_read_bounded(file, 100, &text, &len, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(len, ==, 100);
    g_assert_cmpint(text[100], ==, '\0');
    g_clear_pointer(&text, g_free);
    g_assert_false(cs_file_read_bounded(file, 99, &text, &len, &error));
    g_assert_cmpstr(error->message, ==, "100 bytes, larger than the 99 bytes allowed");
    remove_dir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/fileio/replace/keeps-mode-and-link", test_replace_keeps_mode_and_link);
    g_test_add_func("/fileio/replace/failure-keeps-old", test_replace_failure_keeps_old);
    g_test_add_func("/fileio/replace/device-in-place", test_replace_device);
    g_test_add_func("/fileio/stream/full", test_flush_stream_full);
    g_test_add_func("/fileio/read/not-regular", test_read_not_regular);
    g_test_add_func("/fileio/read/cap", test_read_cap);
    return g_test_run();
}
