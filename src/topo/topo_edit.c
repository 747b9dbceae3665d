// SPDX-License-Identifier: MIT
/* What-ifs without editing files: "PATH=VALUE" edits set in a topology's JSON document before
 * the loader reads it, so the loader's own checks and units parser judge every value
 * (`--set network.nic_bandwidth=800Gb/s` on every command that takes a topology). */
#include "config.h"

#include <string.h>

#include "topo/topo-private.h"

/* An edit's path holds at most this many steps (a topology nests four or five deep). */
#define MAX_STEPS 32
/* Element indices beyond this are no array of a topology file. */
#define MAX_INDEX 100000000

/* One step of a path: a key ("network", or "3" written .3, which indexes an array too), or an
 * index written [i]. */
typedef struct {
    char *key;      /* NULL for [i] */
    int index;      /* [i], or the value of an all-digit key; -1 for other keys */
    gboolean brack; /* written [i] */
} Step;

typedef struct {
    char *text;  /* the whole edit, for messages */
    int n_steps; /* >= 1 */
    Step steps[MAX_STEPS];
    const char *value; /* into @text, after '=' */
} Edit;

static void
edit_clear(Edit *e)
{
    for (int i = 0; i < e->n_steps; i++)
        g_free(e->steps[i].key);
    g_free(e->text);
}

static gboolean edit_error(GError **error, const char *edit, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

/* Sets CS_TOPO_ERROR_EDIT "EDIT: message"; returns FALSE. */
static gboolean
edit_error(GError **error, const char *edit, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_EDIT, "%s: %s", edit, msg);
    return FALSE;
}

/* The value of an all-digit @s of @len characters, or -1 (empty, other characters, too big). */
static int
digits_value(const char *s, gsize len)
{
    if (len == 0 || len > 9)
        return -1;
    int v = 0;
    for (gsize i = 0; i < len; i++) {
        if (!g_ascii_isdigit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= MAX_INDEX ? v : -1;
}

/* Parses the PATH of @text ("a.b[2].c=VALUE") into @e. */
static gboolean
edit_parse(const char *text, Edit *e, GError **error)
{
    memset(e, 0, sizeof *e);
    const char *eq = strchr(text, '=');
    if (eq == NULL)
        return edit_error(error, text,
                          "expected PATH=VALUE, e.g. network.nic_bandwidth=800Gb/s (no '=')");
    if (eq == text)
        return edit_error(error, text, "expected PATH=VALUE: the path before '=' is empty");
    const char *p = text;
    while (p < eq) {
        if (e->n_steps == MAX_STEPS)
            return edit_error(error, text, "a path of more than %d steps is no topology's",
                              MAX_STEPS);
        Step *s = &e->steps[e->n_steps];
        if (*p == '[') {
            const char *close = memchr(p, ']', eq - p);
            if (close == NULL)
                return edit_error(error, text, "'[' without its ']' in the path");
            s->index = digits_value(p + 1, close - p - 1);
            if (s->index < 0)
                return edit_error(error, text,
                                  "[%.*s]: an array index is a number from 0 to %d in brackets",
                                  (int)(close - p - 1), p + 1, MAX_INDEX);
            s->brack = TRUE;
            p = close + 1;
        }
        else {
            gsize len = strcspn(p, ".[]=");
            if (len == 0)
                return edit_error(error, text, "an empty key in the path (at character %d)",
                                  (int)(p - text) + 1);
            s->key = g_strndup(p, len);
            s->index = digits_value(p, len);
            p += len;
        }
        e->n_steps++;
        if (p == eq)
            break;
        if (*p == '.') {
            p++;
            if (p == eq || *p == '.' || *p == '[')
                return edit_error(error, text, "an empty key in the path (at character %d)",
                                  (int)(p - text) + 1);
        }
        else if (*p != '[')
            return edit_error(error, text, "unexpected '%c' in the path (at character %d)", *p,
                              (int)(p - text) + 1);
    }
    e->text = g_strdup(text);
    e->value = e->text + (eq - text) + 1;
    if (e->value[0] == '\0')
        return edit_error(error, text,
                          "an empty value (an empty string is the JSON string \"\", "
                          "e.g. --set 'name=\"\"')");
    return TRUE;
}

/* ---- Splitting a list of values ---- */

char **
cs_topo_edit_split(const char *edit, GError **error)
{
    g_return_val_if_fail(edit != NULL, NULL);
    Edit e;
    gboolean ok = edit_parse(edit, &e, error);
    if (!ok) {
        edit_clear(&e);
        return NULL;
    }
    const gsize path_len = e.value - e.text; /* with the '=' */
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    int depth = 0;
    gboolean quoted = FALSE;
    const char *start = e.value;
    for (const char *p = e.value;; p++) {
        const char c = *p;
        if (quoted && c != '\0') {
            if (c == '\\' && p[1] != '\0')
                p++;
            else if (c == '"')
                quoted = FALSE;
            continue;
        }
        if (c == '"')
            quoted = TRUE;
        else if (c == '[' || c == '{')
            depth++;
        else if ((c == ']' || c == '}') && depth > 0)
            depth--;
        else if ((c == ',' && depth == 0) || c == '\0') {
            if (p == start) {
                g_ptr_array_free(out, TRUE);
                edit_error(error, edit, "an empty value in the list of values");
                edit_clear(&e);
                return NULL;
            }
            g_ptr_array_add(
                out, g_strdup_printf("%.*s%.*s", (int)path_len, e.text, (int)(p - start), start));
            if (c == '\0')
                break;
            start = p + 1;
        }
    }
    edit_clear(&e);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

/* ---- Setting ---- */

/* What @node is, for "is a string, not an object". */
static const char *
kind_of(const cJSON *node)
{
    if (cJSON_IsObject(node))
        return "an object";
    if (cJSON_IsArray(node))
        return "an array";
    if (cJSON_IsString(node))
        return "a string";
    if (cJSON_IsNumber(node))
        return "a number";
    if (cJSON_IsBool(node))
        return "a boolean";
    return "null";
}

/* The keys of object @obj, for an unknown key's message. (transfer full) */
static char *
keys_of(const cJSON *obj)
{
    GString *s = g_string_new(NULL);
    for (const cJSON *c = obj->child; c != NULL; c = c->next)
        g_string_append_printf(s, "%s%s", s->len > 0 ? ", " : "", c->string);
    return g_string_free(s, FALSE);
}

/* The path of @e's first @n steps, as the loader's messages write it ("links[3].alpha"). */
static char *
path_of(const Edit *e, int n)
{
    char *path = g_strdup("");
    for (int i = 0; i < n; i++) {
        const Step *s = &e->steps[i];
        char *next
            = s->brack ? cs_json_path_element(path, s->index) : cs_json_path_member(path, s->key);
        g_free(path);
        path = next;
    }
    return path;
}

/* The JSON value @e sets. Text starting with '{', '[' or '"' is JSON; other text is a string
 * where the value it replaces is one (a name stays a name), else a JSON number, true, false
 * or null when it reads as one, else a string ("800Gb/s"). (transfer full) (nullable) */
static cJSON *
make_value(const Edit *e, const cJSON *old, GError **error)
{
    const char *v = e->value;
    if (v[0] == '{' || v[0] == '[' || v[0] == '"') {
        const char *end = NULL;
        cJSON *json = cJSON_ParseWithOpts(v, &end, TRUE);
        if (json == NULL) {
            edit_error(error, e->text, "the value is not valid JSON (near character %d of it)",
                       end != NULL ? (int)(end - v) + 1 : 1);
            return NULL;
        }
        return json;
    }
    if (old == NULL || !cJSON_IsString(old)) {
        cJSON *json = cJSON_ParseWithOpts(v, NULL, TRUE);
        if (json != NULL && !cJSON_IsObject(json) && !cJSON_IsArray(json) && !cJSON_IsString(json))
            return json;
        cJSON_Delete(json);
    }
    return cJSON_CreateString(v);
}

/* A template's node named by a string ("node": "dgx-h100x8"), read in so that a path can go
 * into it (node.gpu.launch): the same node, inline. */
static gboolean
inline_named_node(cJSON *root, cJSON *node, const char *base_dir, const Edit *e, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autofree char *path = cs_topo_resolve(node->valuestring, base_dir, &local);
    g_autofree char *text = path != NULL ? cs_topo_read_file(path, &local) : NULL;
    if (text == NULL)
        return edit_error(error, e->text, "node: %s", local->message);
    cJSON *doc = cs_json_parse(text, path, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &local);
    if (doc == NULL)
        return edit_error(error, e->text, "node: %s", local->message);
    cJSON_ReplaceItemInObjectCaseSensitive(root, "node", doc);
    return TRUE;
}

/* Sets @e in @root; @base_dir is where a template's named node is looked up first. */
static gboolean
edit_apply(cJSON *root, const Edit *e, const char *base_dir, GError **error)
{
    cJSON *cur = root;
    for (int i = 0; i < e->n_steps; i++) {
        const Step *s = &e->steps[i];
        const gboolean last = i == e->n_steps - 1;
        g_autofree char *here = path_of(e, i);
        g_autofree char *there = path_of(e, i + 1);
        const char *where = i == 0 ? "the top level" : here;
        cJSON *child = NULL;
        if (cJSON_IsObject(cur)) {
            if (s->brack)
                return edit_error(error, e->text, "%s is an object: name a key, not [%d]", where,
                                  s->index);
            child = cJSON_GetObjectItemCaseSensitive(cur, s->key);
            if (child == NULL && !last) {
                g_autofree char *keys = keys_of(cur);
                return edit_error(error, e->text, "no key \"%s\" in %s (it has: %s)", s->key, where,
                                  keys);
            }
            /* A template's named node: read it in to go inside it. */
            if (i == 0 && !last && strcmp(s->key, "node") == 0 && cJSON_IsString(child)
                && (cJSON_GetObjectItemCaseSensitive(root, "nodes") != NULL
                    || cJSON_GetObjectItemCaseSensitive(root, "domains") != NULL)) {
                if (!inline_named_node(root, child, base_dir, e, error))
                    return FALSE;
                child = cJSON_GetObjectItemCaseSensitive(root, "node");
            }
        }
        else if (cJSON_IsArray(cur)) {
            const int n = cJSON_GetArraySize(cur);
            if (s->index < 0)
                return edit_error(error, e->text,
                                  "%s is an array: index it as %s[i] or %s.i, not .%s", here, here,
                                  here, s->key);
            if (s->index >= n)
                return edit_error(error, e->text, "%s has %d element%s, no [%d]", here, n,
                                  n == 1 ? "" : "s", s->index);
            child = cJSON_GetArrayItem(cur, s->index);
        }
        else {
            g_autofree char *got = cs_json_describe(cur);
            return edit_error(error, e->text,
                              "%s is %s (%s), not an object or array: there is no %s in it", here,
                              kind_of(cur), got, there);
        }
        if (!last) {
            cur = child;
            continue;
        }
        cJSON *value = make_value(e, child, error);
        if (value == NULL)
            return FALSE;
        if (cJSON_IsArray(cur))
            cJSON_ReplaceItemInArray(cur, s->index, value);
        else if (child != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive(cur, s->key, value);
        else
            cJSON_AddItemToObject(cur, s->key, value);
    }
    return TRUE;
}

/* @doc (not modified) with the first @n of @edits set, loaded; messages name @origin. */
static CsTopo *
load_with(const cJSON *doc, const Edit *edits, int n, const char *origin, const char *base_dir,
          GError **error)
{
    g_autoptr(cJSON) root = cJSON_Duplicate(doc, TRUE);
    for (int i = 0; i < n; i++)
        if (!edit_apply(root, &edits[i], base_dir, error))
            return NULL;
    return cs_topo_load_json(root, origin, origin, base_dir, error);
}

CsTopo *
cs_topo_load_edited(const char *name_or_path, char **edits, GError **error)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);
    const int n = edits != NULL ? (int)g_strv_length(edits) : 0;
    if (n == 0)
        return cs_topo_load(name_or_path, error);

    g_autofree char *path = cs_topo_resolve(name_or_path, NULL, error);
    if (path == NULL)
        return NULL;
    g_autofree char *text = cs_topo_read_file(path, error);
    if (text == NULL)
        return NULL;
    g_autoptr(cJSON) doc = cs_json_parse(text, path, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, error);
    if (doc == NULL)
        return NULL;
    g_autofree char *dir = g_path_get_dirname(path);
    Edit *parsed = g_new0(Edit, n);
    CsTopo *topo = NULL;
    int n_parsed = 0;
    for (; n_parsed < n; n_parsed++)
        if (!edit_parse(edits[n_parsed], &parsed[n_parsed], error))
            break;
    g_autoptr(GError) local = NULL;
    if (n_parsed == n)
        topo = load_with(doc, parsed, n, path, dir, &local);
    if (topo != NULL) {
        g_autofree char *list = g_strjoinv(", ", edits);
        char *name = g_strdup_printf("%s [%s]", topo->name, list);
        g_free(topo->name);
        topo->name = name;
    }
    else if (local != NULL && local->domain == CS_TOPO_ERROR && local->code == CS_TOPO_ERROR_EDIT)
        g_propagate_error(error, g_steal_pointer(&local));
    else if (local != NULL) {
        /* The loader refused the result: blame the first edit that makes it fail, or the file
         * when it fails with none (its own error, as plain loading reports it). */
        for (int k = 0; k <= n; k++) {
            g_autoptr(GError) why = NULL;
            g_autoptr(CsTopo) t = load_with(doc, parsed, k, path, dir, &why);
            if (t != NULL)
                continue;
            if (k == 0 || (why->domain == CS_TOPO_ERROR && why->code == CS_TOPO_ERROR_EDIT))
                g_propagate_error(error, g_steal_pointer(&why));
            else
                edit_error(error, edits[k - 1], "%s", why->message);
            break;
        }
        /* Loading is deterministic: with all n edits it fails, so some k above did. */
        g_assert(error == NULL || *error != NULL);
    }
    for (int i = 0; i < n_parsed + (n_parsed < n); i++)
        edit_clear(&parsed[i]);
    g_free(parsed);
    return topo;
}
