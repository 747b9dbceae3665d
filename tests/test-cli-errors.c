// SPDX-License-Identifier: MIT
/* The CLI's error contract, data-driven: every line of tests/data/cli-errors/cases runs
 * `collsim ARGS` ($COLLSIM_BIN) and checks the exit status, that standard error is exactly one
 * line holding the expected fragment (plus "Try '... --help'" after a usage error), and that
 * nothing reached standard output (no table that looks valid before a failure). And every
 * long option a command's --help lists is in the man page. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

typedef struct {
    int line;       /* in the index file */
    char *feature;  /* (nullable) "mpi", "nocuda", ...: the build the case is for */
    int status;     /* expected exit status */
    char *fragment; /* expected in the error line; empty for status 0 */
    char *args;     /* shell words, @DATA@ / @SRC@ / @TMP@ not yet replaced */
} Case;

/* A scratch directory of inputs that are awkward to keep in git (@TMP@). */
static char *scratch;

static void
case_free(gpointer p)
{
    Case *c = p;
    g_free(c->feature);
    g_free(c->fragment);
    g_free(c->args);
    g_free(c);
}

static void
make_scratch(void)
{
    g_autoptr(GError) error = NULL;
    scratch = g_dir_make_tmp("collsim-cli-errors-XXXXXX", &error);
    g_assert_no_error(error);
    /* Binary garbage: bytes that are neither JSON nor UTF-8, a NUL among them. */
    static const char garbage[]
        = { 'u', (char)0xff, 'Q', (char)0x81, 0x13, 0, '^', (char)0xfe, 'L', 0x01, (char)0xc3 };
    static const struct {
        const char *name;
        const char *text;
        gssize len;
    } files[] = {
        { "empty.txt", "", 0 },
        { "garbage.bin", garbage, sizeof garbage },
        { "truncated.json", "{\n  \"name\": \"cut\",\n  \"description\": \"a file cut sho", -1 },
        { "blank.txt", "\n  \n\t\n", -1 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(scratch, files[i].name, NULL);
        g_file_set_contents(path, files[i].text, files[i].len, &error);
        g_assert_no_error(error);
    }
    g_autofree char *dir = g_build_filename(scratch, "dir.json", NULL);
    g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
    g_autofree char *fifo = g_build_filename(scratch, "fifo.txt", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    g_autofree char *big = g_build_filename(scratch, "big.txt", NULL);
    FILE *f = fopen(big, "w");
    g_assert_nonnull(f);
    g_assert_cmpint(ftruncate(fileno(f), ((off_t)64 << 20) + 1), ==, 0);
    fclose(f);
}

static void
remove_scratch(void)
{
    g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(scratch, name, NULL);
        g_remove(path);
    }
    g_rmdir(scratch);
    g_clear_pointer(&scratch, g_free);
}

static char *
expand(const char *text)
{
    g_autofree char *data = g_test_build_filename(G_TEST_DIST, "data", NULL);
    const char *src = g_getenv("COLLSIM_SOURCE_ROOT");
    g_autoptr(GString) s = g_string_new(text);
    g_string_replace(s, "@DATA@", data, 0);
    g_string_replace(s, "@SRC@", src != NULL ? src : ".", 0);
    g_string_replace(s, "@TMP@", scratch, 0);
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Whether this build has @feature ("mpi"), or lacks it ("nompi"). */
static gboolean
build_has(const char *feature)
{
#ifdef HAVE_MPI
    const gboolean mpi = TRUE;
#else
    const gboolean mpi = FALSE;
#endif
#ifdef HAVE_CUDA
    const gboolean cuda = TRUE;
#else
    const gboolean cuda = FALSE;
#endif
#ifdef HAVE_NCCL
    const gboolean nccl = TRUE;
#else
    const gboolean nccl = FALSE;
#endif
    const gboolean negate = g_str_has_prefix(feature, "no");
    const char *name = negate ? feature + 2 : feature;
    gboolean has = FALSE;
    if (strcmp(name, "mpi") == 0)
        has = mpi;
    else if (strcmp(name, "cuda") == 0)
        has = cuda;
    else if (strcmp(name, "nccl") == 0)
        has = nccl;
    else
        g_error("unknown feature '%s' in the cases file", feature);
    return negate ? !has : has;
}

static void
test_case(gconstpointer data)
{
    const Case *c = data;
    const char *bin = g_getenv("COLLSIM_BIN");
    if (bin == NULL) {
        g_test_skip("COLLSIM_BIN not set (run through meson test)");
        return;
    }
    if (c->feature != NULL && !build_has(c->feature)) {
        g_test_skip("not for this build");
        return;
    }
    /* Every check of a case runs, so one report shows all that is wrong with it. */
    g_test_set_nonfatal_assertions();
    g_autofree char *args = expand(c->args);
    g_autofree char *fragment = expand(c->fragment);
    g_test_message("cases:%d: collsim %s", c->line, args);

    g_auto(GStrv) words = NULL;
    g_autoptr(GError) error = NULL;
    int n_words = 0;
    /* An empty argument list ("collsim" alone) is allowed. */
    if (strspn(args, " \t") != strlen(args)) {
        g_shell_parse_argv(args, &n_words, &words, &error);
        g_assert_no_error(error);
    }
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)bin);
    for (int i = 0; i < n_words; i++)
        g_ptr_array_add(argv, words[i]);
    g_ptr_array_add(argv, NULL);

    g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int wait_status = 0;
    g_spawn_sync(scratch, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                 &wait_status, &error);
    g_assert_no_error(error);
    if (!WIFEXITED(wait_status))
        g_test_message("killed: stderr: %s", err);
    g_assert_true(WIFEXITED(wait_status));
    int status = WEXITSTATUS(wait_status);
    if (status != c->status)
        g_test_message("stderr: %s", err);
    g_assert_cmpint(status, ==, c->status);

    if (c->status == 0) {
        g_assert_cmpstr(err, ==, "");
        return;
    }
    /* One line; a usage error adds the --help hint, and nothing else may follow. */
    g_auto(GStrv) lines = g_strsplit(err, "\n", -1);
    guint n = g_strv_length(lines);
    g_assert_cmpuint(n, >=, 2);
    g_assert_cmpstr(lines[n - 1], ==, "");
    if (n == 3) {
        g_assert_true(g_str_has_prefix(lines[1], "Try '"));
        g_assert_true(g_str_has_suffix(lines[1], " --help'"));
    }
    else {
        g_assert_cmpuint(n, ==, 2);
    }
    if (strstr(lines[0], fragment) == NULL)
        g_test_message("error line: %s\nexpected to contain: %s", lines[0], fragment);
    g_assert_nonnull(strstr(lines[0], fragment));
    g_assert_cmpstr(out, ==, "");
}

/* "[FEATURE:]STATUS | FRAGMENT | ARGS"; blank lines and '#' comments are skipped. */
static GPtrArray *
read_cases(void)
{
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "cli-errors", "cases", NULL);
    g_autofree char *text = NULL;
    g_autoptr(GError) error = NULL;
    g_file_get_contents(path, &text, NULL, &error);
    g_assert_no_error(error);

    GPtrArray *cases = g_ptr_array_new_with_free_func(case_free);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        if (line[strspn(line, " \t")] == '\0' || line[0] == '#')
            continue;
        g_auto(GStrv) parts = g_strsplit(line, " | ", 3);
        if (g_strv_length(parts) != 3)
            g_error("%s:%d: expected 'STATUS | FRAGMENT | ARGS'", path, i + 1);
        Case *c = g_new0(Case, 1);
        c->line = i + 1;
        const char *colon = strchr(parts[0], ':');
        if (colon != NULL)
            c->feature = g_strndup(parts[0], colon - parts[0]);
        c->status = atoi(colon != NULL ? colon + 1 : parts[0]);
        c->fragment = g_strdup(parts[1]);
        c->args = g_strdup(g_strstrip(parts[2]));
        g_ptr_array_add(cases, c);
    }
    return cases;
}

/* "/cli-errors/L12-select-output" from the command words that are not paths. */
static char *
case_path(const Case *c)
{
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append_printf(s, "/cli-errors/L%d", c->line);
    g_auto(GStrv) words = g_strsplit(c->args, " ", 3);
    for (int i = 0; words[i] != NULL && i < 2; i++) {
        if (strchr(words[i], '@') != NULL || strchr(words[i], '/') != NULL)
            break;
        g_string_append_c(s, '-');
        for (const char *p = words[i]; *p != '\0'; p++)
            g_string_append_c(s, g_ascii_isalnum(*p) ? *p : '_');
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---- The man page documents every flag ---- */

static const char *const commands[]
    = { "run",        "select",    "explain",   "model",           "algos",
        "verify",     "validate",  "calibrate", "measure",         "topo show",
        "topo check", "topo list", "plan",      "workload import", NULL };

/* Setup: `collsim CMD --help` and man/collsim.1 (its "\-" read as "-"). Expectation: every
 * long option the help lists appears in the man page, so neither drifts from the code. */
static void
test_man_options(gconstpointer data)
{
    const char *cmd = data;
    const char *bin = g_getenv("COLLSIM_BIN");
    const char *src = g_getenv("COLLSIM_SOURCE_ROOT");
    if (bin == NULL || src == NULL) {
        g_test_skip("COLLSIM_BIN or COLLSIM_SOURCE_ROOT not set (run through meson test)");
        return;
    }
    g_autofree char *man_path = g_build_filename(src, "man", "collsim.1", NULL);
    g_autofree char *man_text = NULL;
    g_autoptr(GError) error = NULL;
    g_file_get_contents(man_path, &man_text, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(GString) man = g_string_new(man_text);
    g_string_replace(man, "\\-", "-", 0);

    g_autofree char *line = g_strdup_printf("%s %s --help", bin, cmd);
    g_autofree char *out = NULL;
    int wait_status = 0;
    g_spawn_command_line_sync(line, &out, NULL, &wait_status, &error);
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);

    g_autoptr(GRegex) re
        = g_regex_new("^  (?:-[a-zA-Z], )?(--[a-z0-9_-]+)", G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    g_regex_match(re, out, 0, &match);
    for (; g_match_info_matches(match); g_match_info_next(match, NULL)) {
        g_autofree char *flag = g_match_info_fetch(match, 1);
        if (strcmp(flag, "--help") == 0)
            continue;
        if (strstr(man->str, flag) == NULL)
            g_test_message("collsim %s %s is not in man/collsim.1", cmd, flag);
        g_assert_nonnull(strstr(man->str, flag));
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    make_scratch();
    g_autoptr(GPtrArray) cases = read_cases();
    /* COLLSIM_CLI_ERRORS_BACKENDS_ONLY=1: only the cases bound to a backend (tests/meson.build
     * runs them again in a build that has the backends). */
    const gboolean backends_only
        = g_strcmp0(g_getenv("COLLSIM_CLI_ERRORS_BACKENDS_ONLY"), "1") == 0;
    for (guint i = 0; i < cases->len; i++) {
        const Case *c = g_ptr_array_index(cases, i);
        if (backends_only && c->feature == NULL)
            continue;
        g_autofree char *path = case_path(c);
        g_test_add_data_func(path, c, test_case);
    }
    for (int i = 0; commands[i] != NULL && !backends_only; i++) {
        g_autofree char *name = g_strdelimit(g_strdup(commands[i]), " ", '-');
        g_autofree char *path = g_strdup_printf("/cli/man/options/%s", name);
        g_test_add_data_func(path, commands[i], test_man_options);
    }
    int status = g_test_run();
    remove_scratch();
    return status;
}
