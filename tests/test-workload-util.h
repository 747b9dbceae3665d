// SPDX-License-Identifier: MIT
/* Helpers shared by the tests of `collsim workload import` (test-cli-workload.c for NCCL logs,
 * test-kineto.c for PyTorch profiler traces): run the command, read the workload it writes. */
#pragma once

#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>

#include "test-util.h"

/* Writes @text to @name in the folder @dir. (transfer full) */
static inline char *
cs_test_write_file(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_file_set_contents(path, text, -1, &error);
    g_assert_no_error(error);
    return path;
}

/* `collsim workload ARGS...` that succeeds, its workload parsed; its stderr summary in @err
 * when non-NULL. (transfer full) */
static inline cJSON *
cs_test_import_ok(const char *const *args, char **err)
{
    g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
    if (r.status != 0)
        g_error("workload import exited %d: %s", r.status, r.err);
    cJSON *root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    if (err != NULL)
        *err = g_strdup(r.err);
    return root;
}

/* @o's member @key, which must be there. (transfer none) */
static inline const cJSON *
cs_test_member(const cJSON *o, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    g_assert_nonnull(m);
    return m;
}

/* @array's element @i, which must be there. (transfer none) */
static inline const cJSON *
cs_test_at(const cJSON *array, int i)
{
    const cJSON *item = cJSON_GetArrayItem(array, i);
    g_assert_nonnull(item);
    return item;
}

/* Workload @w's phase @p's collective @c is @op of @bytes, @count times, on @group. */
static inline void
cs_test_assert_coll(const cJSON *w, int p, int c, const char *op, const char *bytes, int count,
                    const char *group)
{
    const cJSON *phases = cs_test_member(w, "phases");
    const cJSON *coll = cs_test_at(cs_test_member(cs_test_at(phases, p), "collectives"), c);
    g_assert_cmpstr(cs_test_member(coll, "op")->valuestring, ==, op);
    g_assert_cmpstr(cs_test_member(coll, "bytes")->valuestring, ==, bytes);
    g_assert_cmpint(cs_test_member(coll, "count")->valueint, ==, count);
    g_assert_cmpstr(cs_test_member(coll, "group")->valuestring, ==, group);
}
