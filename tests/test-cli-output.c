// SPDX-License-Identifier: MIT
/* Results are never lost silently: a write to stdout that fails (/dev/full) is one error line
 * naming it and exit 1, and an --output file that cannot be written whole keeps what it held.
 * Runs `collsim` ($COLLSIM_BIN) through /bin/sh for the redirections and limits. */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <glib.h>
#include <glib/gstdio.h>

typedef struct {
    int status;
    char *out;
    char *err;
} Run;

static void
run_clear(Run *r)
{
    g_free(r->out);
    g_free(r->err);
}

/* `sh -c SCRIPT` in @dir with $C the collsim binary, $T the traces folder; LC_ALL=C. */
static gboolean
run_sh(const char *dir, const char *script, Run *r)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    const char *src = g_getenv("COLLSIM_SOURCE_ROOT");
    if (bin == NULL || src == NULL) {
        g_test_skip("COLLSIM_BIN or COLLSIM_SOURCE_ROOT not set (run through meson test)");
        return FALSE;
    }
    g_autofree char *traces = g_build_filename(src, "traces", NULL);
    g_auto(GStrv) envp = g_get_environ();
    envp = g_environ_setenv(envp, "LC_ALL", "C", TRUE);
    envp = g_environ_setenv(envp, "C", bin, TRUE);
    envp = g_environ_setenv(envp, "T", traces, TRUE);
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_spawn_sync(dir, (char **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err,
                 &wait_status, &error);
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait_status));
    r->status = WEXITSTATUS(wait_status);
    g_test_message("sh -c '%s': exit %d, stderr: %s", script, r->status, r->err);
    return TRUE;
}

/* Exactly one line on stderr, containing @fragment. */
static void
assert_one_line(const char *err, const char *fragment)
{
    g_auto(GStrv) lines = g_strsplit(err, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 2);
    if (g_strv_length(lines) != 2)
        return; /* assertions are not fatal here: nothing more to look at */
    g_assert_cmpstr(lines[1], ==, "");
    g_assert_nonnull(strstr(lines[0], fragment));
}

/* ---- Standard output ---- */

static const char *const stdout_cases[] = {
    "$C run --topo dgx-h100x4 --op allreduce",
    "$C select --topo dgx-h100x4 --op allreduce -e 64K --emit json",
    "$C select --topo dgx-h100x4 --op allreduce -e 64K --emit nccl-tuner-csv",
    "$C validate --topo dgx-h100x4 $T/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt",
    "$C topo show dgx-h100x4",
    "$C topo show --json dgx-h100x4",
    "$C --help",
};

/* Setup: a command's stdout is /dev/full (every write fails with ENOSPC). Expectation: exit 1
 * and one line naming standard output and the reason, not exit 0 with nothing written. */
static void
test_stdout_full(gconstpointer data)
{
    g_autofree char *script = g_strdup_printf("exec %s > /dev/full", (const char *)data);
    Run r = { 0 };
    if (!run_sh(NULL, script, &r))
        return;
    g_assert_cmpint(r.status, ==, 1);
    assert_one_line(r.err, "standard output: No space left on device");
    run_clear(&r);
}

/* ---- Output files ---- */

/* Setup: --output /dev/full. Expectation: exit 1, one line naming the flag and the file. */
static void
test_output_device_full(void)
{
    Run r = { 0 };
    if (!run_sh(
            NULL,
            "exec $C select --topo dgx-h100x4 --op allreduce -e 64K --emit json --output /dev/full",
            &r))
        return;
    g_assert_cmpint(r.status, ==, 1);
    assert_one_line(r.err, "--output /dev/full: No space left on device");
    g_assert_cmpstr(r.out, ==, "");
    run_clear(&r);
}

static int
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists @dir's entries, sorted, joined by spaces. */
static char *
dir_listing(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        g_ptr_array_add(names, g_strdup(name));
    g_ptr_array_sort(names, compare_names);
    g_ptr_array_add(names, NULL);
    return g_strjoinv(" ", (char **)names->pdata);
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

static const struct {
    const char *name;
    const char *command; /* writes out.txt in the working directory */
} file_cases[] = {
    { "select-output",
      "$C select --topo dgx-h100x4 --op allreduce -e 64K --emit json --output out.txt" },
    { "select-tuner-csv",
      "$C select --topo dgx-h100x4 --op allreduce -e 64K --emit nccl-tuner-csv --output out.txt" },
    { "explain-timeline",
      "$C explain --topo dgx-h100x4 --op allreduce --algo ring --size 1M --timeline out.txt" },
    { "calibrate-output", "$C calibrate --topo dgx-h100x4 -o out.txt "
                          "$T/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt" },
};

/* Setup: out.txt holds a complete old result; the command runs with a 512-byte file size
 * limit (ulimit -f 1; SIGXFSZ ignored, so writes past it fail with EFBIG), which its output
 * exceeds. Expectation: exit 1 naming out.txt, and out.txt still holds the old result whole,
 * with no temporary file left beside it. Written in place, it would hold the first 512 bytes
 * of the new one. */
static void
test_output_keeps_old(gconstpointer data)
{
    const char *command = data;
    g_autofree char *dir = g_dir_make_tmp("collsim-output-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "out.txt", NULL);
    const char *old = "an old, complete result\n";
    g_assert_true(g_file_set_contents(path, old, -1, NULL));

    g_autofree char *script = g_strdup_printf("trap '' XFSZ; ulimit -f 1; exec %s", command);
    Run r = { 0 };
    if (run_sh(dir, script, &r)) {
        g_assert_cmpint(r.status, ==, 1);
        assert_one_line(r.err, "out.txt: File too large");
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_assert_cmpstr(text, ==, old);
        g_autofree char *listing = dir_listing(dir);
        g_assert_cmpstr(listing, ==, "out.txt");
    }
    run_clear(&r);

    /* Without the limit the same command replaces the file whole. */
    if (run_sh(dir, command, &r)) {
        g_assert_cmpint(r.status, ==, 0);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_assert_cmpuint(strlen(text), >, 512);
        g_autofree char *listing = dir_listing(dir);
        g_assert_cmpstr(listing, ==, "out.txt");
    }
    run_clear(&r);
    remove_dir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* Every check of a case runs, so one report shows all that is wrong with it. */
    g_test_set_nonfatal_assertions();
    for (gsize i = 0; i < G_N_ELEMENTS(stdout_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/output/stdout-full/%" G_GSIZE_FORMAT, i);
        g_test_add_data_func(path, stdout_cases[i], test_stdout_full);
    }
    g_test_add_func("/cli/output/device-full", test_output_device_full);
    for (gsize i = 0; i < G_N_ELEMENTS(file_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/output/keeps-old/%s", file_cases[i].name);
        g_test_add_data_func(path, file_cases[i].command, test_output_keeps_old);
    }
    return g_test_run();
}
