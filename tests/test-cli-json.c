// SPDX-License-Identifier: MIT
/* Every --format json (--emit json) document of the CLI: it names its schema first
 * ("schema": {"name", "version"}), docs/formats.md documents that schema and every key the
 * document holds, and numbers are JSON numbers, never numerals in strings. */
#include "config.h"

#include <cjson/cJSON.h>
#include <glib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct {
    const char *name;   /* test path element */
    const char *args;   /* after the binary; {src} is the source root */
    const char *schema; /* the schema every document names */
    gboolean array;     /* the output is an array of documents */
} JsonCase;

static const JsonCase cases[] = {
    { "run", "run --topo dgx-h100x4 -b 8 -e 1K --format json", "collsim-run", FALSE },
    { "run-all", "run --topo dgx-h100x4 -b 1K -e 1K --all --format json", "collsim-run", FALSE },
    { "select", "select --topo dgx-h100x8 --op allreduce,alltoall -e 64K --emit json",
      "collsim-select", FALSE },
    { "select-shapes", "select --topo dgx-h100x8 --op allreduce -e 1K --ranks 4,8 --emit json",
      "collsim-select", TRUE },
    { "select-compare", "select --topo dgx-h100x4 --op allreduce -e 64K --compare nccl --emit json",
      "collsim-select-compare", FALSE },
    { "validate",
      "validate --topo dgx-h100x4 --format json "
      "{src}/traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt",
      "collsim-validate", FALSE },
    { "validate-nccl-model",
      "validate --topo dgx-h100x4 --model nccl --format json "
      "{src}/traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt",
      "collsim-validate", FALSE },
    { "calibrate",
      "calibrate --topo rtx2080ti-x2-pcie3-shm --format json "
      "{src}/traces/rtx2080ti-2gpu-pcie3-nop2p_reduce.txt",
      "collsim-calibrate", FALSE },
    { "calibrate-joint",
      "calibrate --params gpu.launch --format json --topo rtx2080ti-x2-pcie3-shm "
      "{src}/traces/rtx2080ti-2gpu-pcie3-nop2p_reduce.txt --topo dgx-h100x4 "
      "{src}/traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt",
      "collsim-calibrate-joint", FALSE },
    { "plan",
      "plan --workload {src}/examples/workloads/megatron-tp8-dp2.json --topo hgx-h100x8-2n "
      "--format json",
      "collsim-plan", FALSE },
    { "model", "model --format json", "collsim-model", FALSE },
    /* Measures on a real backend: skipped where the build has none (test-crossover-mpi.sh
     * checks it in the MPI build). */
    { "crossover",
      "crossover --backend mpi --topo dgx-h100x8 --between nvls,ring --format json -e 1M",
      "collsim-crossover", FALSE },
};

/* docs/formats.md, read once. */
static char *formats_md;

/* Whether @text is a numeral as printf would print one ("8", "2.5", "1e-06"): such a value
 * belongs in a JSON number. */
static gboolean
is_numeral(const char *text)
{
    if (text[0] == '\0' || g_ascii_isspace(text[0]))
        return FALSE;
    char *end = NULL;
    (void)g_ascii_strtod(text, &end);
    /* "inf", "nan" and hex are words here, not numerals a document should have typed. */
    return end != NULL && *end == '\0' && (g_ascii_isdigit(text[0]) || text[0] == '-')
           && strchr(text, 'x') == NULL;
}

/* Keys whose values are release names, kept as strings because "2.28" and "0.1.0" name
 * releases, they are not quantities (docs/formats.md says which). */
static gboolean
version_key(const char *key)
{
    return key != NULL
           && (g_str_has_suffix(key, "version") || strcmp(key, "collsim") == 0
               || strcmp(key, "nccl_model") == 0);
}

/* The text docs/formats.md gives @schema: the JSON outputs' introduction and the schema's own
 * section ("### `name`" up to the next heading). (transfer full) (nullable) */
static char *
section_of(const char *schema)
{
    const char *intro = strstr(formats_md, "\n## JSON outputs\n");
    g_autofree char *heading = g_strdup_printf("\n### `%s`\n", schema);
    const char *start = strstr(formats_md, heading);
    if (intro == NULL || start == NULL)
        return NULL;
    const char *intro_end = strstr(intro, "\n### ");
    const char *end = strstr(start + strlen(heading), "\n#");
    if (end == NULL)
        end = start + strlen(start);
    g_autofree char *a = g_strndup(intro, (gsize)(intro_end - intro));
    g_autofree char *b = g_strndup(start, (gsize)(end - start));
    return g_strconcat(a, b, NULL);
}

/* Every key under @node documented in docs/formats.md (as `key`), and no numeral in a
 * string; @path names the place for the message. Under run's "headers" the keys are the
 * trace headers, which formats.md lists in their own table. */
static void
check_node(const cJSON *node, const char *path, const char *key, const char *command,
           const char *doc)
{
    if (cJSON_IsString(node) && !version_key(key) && is_numeral(node->valuestring))
        g_error("%s: %s is the string \"%s\", not a JSON number", command, path, node->valuestring);
    if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
        return;
    const gboolean headers = g_str_has_suffix(path, ".headers");
    int i = 0;
    for (const cJSON *c = node->child; c != NULL; c = c->next, i++) {
        g_autofree char *child = cJSON_IsArray(node) ? g_strdup_printf("%s[%d]", path, i)
                                                     : g_strdup_printf("%s.%s", path, c->string);
        if (cJSON_IsObject(node) && !headers) {
            g_autofree char *quoted = g_strdup_printf("`%s`", c->string);
            if (strstr(doc, quoted) == NULL)
                g_error("%s: %s: key \"%s\" is not documented in its section of "
                        "docs/formats.md",
                        command, child, c->string);
        }
        check_node(c, child, cJSON_IsArray(node) ? key : c->string, command, doc);
    }
}

static void
check_document(const cJSON *doc, const JsonCase *c, const char *path)
{
    g_assert_true(cJSON_IsObject(doc));
    /* The schema first, with its name and version. */
    const cJSON *schema = doc->child;
    g_assert_nonnull(schema);
    g_assert_cmpstr(schema->string, ==, "schema");
    g_assert_cmpstr(cJSON_GetStringValue(cJSON_GetObjectItem(schema, "name")), ==, c->schema);
    const cJSON *version = cJSON_GetObjectItem(schema, "version");
    g_assert_true(cJSON_IsNumber(version));
    g_assert_cmpfloat(version->valuedouble, ==, 1.0);
    /* docs/formats.md has the schema's own section. */
    g_autofree char *section = section_of(c->schema);
    if (section == NULL)
        g_error("schema %s has no section (### `%s`) in docs/formats.md", c->schema, c->schema);
    check_node(doc, path, NULL, c->args, section);
}

static void
test_json(gconstpointer data)
{
    const JsonCase *c = data;
    const char *bin = g_getenv("COLLSIM_BIN");
    if (bin == NULL) {
        g_test_skip("COLLSIM_BIN is not set (run under meson test)");
        return;
    }
    g_autofree char *src = g_test_build_filename(G_TEST_DIST, "..", NULL);
    g_auto(GStrv) parts = g_strsplit(c->args, "{src}", -1);
    g_autofree char *args = g_strjoinv(src, parts);
    g_autofree char *cmd = g_strdup_printf("%s %s", bin, args);
    g_auto(GStrv) argv = NULL;
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, &error));
    g_assert_true(
        g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0 && strstr(err, "built without") != NULL) {
        g_test_skip(err);
        return;
    }
    if (WEXITSTATUS(status) != 0)
        g_error("%s: exit %d: %s", c->args, WEXITSTATUS(status), err);
    cJSON *root = cJSON_Parse(out);
    if (root == NULL)
        g_error("%s: the output is not JSON", c->args);
    if (c->array) {
        g_assert_true(cJSON_IsArray(root));
        g_assert_cmpint(cJSON_GetArraySize(root), >=, 2);
        int i = 0;
        for (const cJSON *d = root->child; d != NULL; d = d->next, i++) {
            g_autofree char *path = g_strdup_printf("$[%d]", i);
            check_document(d, c, path);
        }
    }
    else {
        check_document(root, c, "$");
    }
    /* run: the rank count a trace header states is a number (issue 30: "gpus": 8). */
    const cJSON *headers = cJSON_GetObjectItem(root, "headers");
    if (headers != NULL)
        g_assert_true(cJSON_IsNumber(cJSON_GetObjectItem(headers, "gpus")));
    cJSON_Delete(root);
}

/* The checker itself: a numeral in a string and an undocumented key are caught. */
static void
test_checker(void)
{
    g_assert_true(is_numeral("8"));
    g_assert_true(is_numeral("-2.5"));
    g_assert_true(is_numeral("1e-06"));
    g_assert_false(is_numeral("8 GiB"));
    g_assert_false(is_numeral("ring/LL"));
    g_assert_false(is_numeral("nan"));
    g_assert_false(is_numeral(""));
    g_assert_true(version_key("nccl_version"));
    g_assert_false(version_key("gpus"));
    g_assert_false(version_key("versions_seen"));
    g_assert_null(strstr(formats_md, "`no_such_key_in_formats_md`"));
    /* A key documented for one schema is not documented for another. */
    g_autofree char *model = section_of("collsim-model");
    g_autofree char *plan = section_of("collsim-plan");
    g_assert_nonnull(model);
    g_assert_nonnull(strstr(model, "`nbeta_s`"));
    g_assert_null(strstr(plan, "`nbeta_s`"));
    g_assert_null(section_of("collsim-no-such-schema"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autofree char *md = g_test_build_filename(G_TEST_DIST, "..", "docs", "formats.md", NULL);
    g_autoptr(GError) error = NULL;
    if (!g_file_get_contents(md, &formats_md, NULL, &error))
        g_error("%s", error->message);
    g_test_add_func("/cli-json/checker", test_checker);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli-json/%s", cases[i].name);
        g_test_add_data_func(path, &cases[i], test_json);
    }
    const int rc = g_test_run();
    g_free(formats_md);
    return rc;
}
