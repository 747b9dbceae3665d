// SPDX-License-Identifier: MIT
/* cJSON helpers shared by every reader of JSON input (topologies, tables): cJSON's NULL
 * becomes a GError with line:column, and every later complaint names the file and the JSON
 * path, so a typo in a 2,000-line topology is found at once. */
#include "base/json_util.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "base/units.h"

/* ---- Parsing ---- */

/* What the parser stopped at, printable: up to 16 bytes of the offending line. */
static char *
snippet_at(const char *p)
{
    GString *s = g_string_new(NULL);

    for (int i = 0; i < 16 && p[i] != '\0' && p[i] != '\n' && p[i] != '\r'; i++) {
        unsigned char c = (unsigned char)p[i];
        /* A whole UTF-8 character stays as typed; stray bytes (a binary file) are escaped so
         * the message stays one line of valid text. */
        gunichar u = c >= 0x80 ? g_utf8_get_char_validated(p + i, -1) : 0;
        if (c >= 0x80 && u != (gunichar)-1 && u != (gunichar)-2) {
            int len = g_utf8_skip[c];
            g_string_append_len(s, p + i, len);
            i += len - 1;
        }
        else if (c < 0x20 || c >= 0x7f)
            g_string_append_printf(s, "\\x%02x", c);
        else
            g_string_append_c(s, (char)c);
    }
    return g_string_free(s, FALSE);
}

/**
 * cs_json_parse:
 * Parses @text strictly (nothing but blanks may follow the value). On a syntax error sets
 * @error in @domain / @parse_code to "ORIGIN:LINE:COL: not valid JSON near '...'", lines and
 * columns counted from 1. Returns: (transfer full) (nullable): the document.
 */
cJSON *
cs_json_parse(const char *text, const char *origin, GQuark domain, int parse_code, GError **error)
{
    const char *end = NULL;

    g_return_val_if_fail(text != NULL && origin != NULL, NULL);
    /* JSON is UTF-8 (RFC 8259 §8.1); cJSON passes any byte through, so a name with invalid
     * bytes would reach every report and JSON output raw. */
    const char *bad = NULL;
    if (!g_utf8_validate(text, -1, &bad)) {
        int line = 1;
        const char *line_start = text;
        for (const char *q = text; q < bad; q++) {
            if (*q == '\n') {
                line++;
                line_start = q + 1;
            }
        }
        int column = (int)g_utf8_strlen(line_start, bad - line_start) + 1;
        g_set_error(error, domain, parse_code,
                    "%s:%d:%d: not UTF-8 text (byte 0x%02x); JSON files are UTF-8", origin, line,
                    column, (guint)(guchar)*bad);
        return NULL;
    }
    cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
    if (root != NULL)
        return root;

    if (end == NULL || end < text)
        end = text;
    /* cJSON stops one past the culprit when it fails at a line's end ("{\"a\": 1,\n}"):
     * point at the last non-blank character instead. */
    const char *p = end;
    while (*p != '\0' && g_ascii_isspace(*p))
        p++;
    if (*p == '\0') {
        while (end > text && (*end == '\0' || g_ascii_isspace(*end)))
            end--;
    }
    int line = 1;
    const char *line_start = text;
    for (const char *q = text; q < end; q++) {
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    }
    int column = (int)g_utf8_strlen(line_start, end - line_start) + 1;
    if (*end == '\0' || g_ascii_isspace(*end)) {
        g_set_error(error, domain, parse_code, "%s:%d:%d: not valid JSON: unexpected end of input",
                    origin, line, column);
    }
    else {
        g_autofree char *near = snippet_at(end);
        g_set_error(error, domain, parse_code, "%s:%d:%d: not valid JSON near '%s'", origin, line,
                    column, near);
    }
    return NULL;
}

/* ---- Paths and messages ---- */

/**
 * cs_json_path_member:
 * The path of member @key below @path. Returns: (transfer full).
 */
char *
cs_json_path_member(const char *path, const char *key)
{
    if (path == NULL || path[0] == '\0')
        return g_strdup(key);
    return g_strdup_printf("%s.%s", path, key);
}

/**
 * cs_json_path_element:
 * The path of element @index below @path. Returns: (transfer full).
 */
char *
cs_json_path_element(const char *path, int index)
{
    return g_strdup_printf("%s[%d]", path != NULL ? path : "", index);
}

/**
 * cs_json_set_error:
 * Sets @error (in @ctx's domain and content code) to one line naming the origin, the path
 * and the problem.
 */
void
cs_json_set_error(const CsJsonCtx *ctx, GError **error, const char *path, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    if (path == NULL || path[0] == '\0')
        g_set_error(error, ctx->domain, ctx->code, "%s: %s", ctx->origin, msg);
    else
        g_set_error(error, ctx->domain, ctx->code, "%s: %s: %s", ctx->origin, path, msg);
}

/**
 * cs_json_describe:
 * @node as it would appear in the file, shortened: strings quoted, containers elided.
 * Returns: (transfer full).
 */
char *
cs_json_describe(const cJSON *node)
{
    if (node == NULL)
        return g_strdup("nothing");
    if (cJSON_IsString(node)) {
        /* cJSON keeps bytes as they were: a cut-off UTF-8 sequence would walk past the end. */
        g_autofree char *s = g_utf8_make_valid(node->valuestring, -1);
        if (g_utf8_strlen(s, -1) > 40) {
            g_autofree char *head = g_utf8_substring(s, 0, 37);
            return g_strdup_printf("\"%s...\"", head);
        }
        return g_strdup_printf("\"%s\"", s);
    }
    if (cJSON_IsNumber(node))
        return g_strdup_printf("%.15g", node->valuedouble);
    if (cJSON_IsBool(node))
        return g_strdup(cJSON_IsTrue(node) ? "true" : "false");
    if (cJSON_IsNull(node))
        return g_strdup("null");
    if (cJSON_IsArray(node))
        return g_strdup("an array");
    if (cJSON_IsObject(node))
        return g_strdup("an object");
    return g_strdup("an unknown value");
}

/* ---- Objects ---- */

const cJSON *
cs_json_member(const cJSON *object, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(object, key);
}

/**
 * cs_json_check_object:
 * Fails unless @node is an object whose keys are all in @allowed, each at most once: cJSON
 * keeps duplicates silently and returns the first, so "bandwidth" given twice would hide
 * an edit.
 */
gboolean
cs_json_check_object(const CsJsonCtx *ctx, const cJSON *node, const char *path,
                     const char *const *allowed, GError **error)
{
    if (!cJSON_IsObject(node)) {
        g_autofree char *got = cs_json_describe(node);
        cs_json_set_error(ctx, error, path, "expected an object, got %s", got);
        return FALSE;
    }
    for (const cJSON *m = node->child; m != NULL; m = m->next) {
        gboolean known = FALSE;
        for (const char *const *a = allowed; *a != NULL && !known; a++)
            known = strcmp(*a, m->string) == 0;
        if (!known) {
            g_autofree char *list = g_strjoinv(", ", (char **)allowed);
            cs_json_set_error(ctx, error, path, "unknown key \"%s\" (allowed: %s)", m->string,
                              list);
            return FALSE;
        }
        for (const cJSON *o = node->child; o != m; o = o->next) {
            if (strcmp(o->string, m->string) == 0) {
                cs_json_set_error(ctx, error, path, "key \"%s\" appears twice", m->string);
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* ---- Typed getters ---- */

/* The member, or NULL; FALSE with @error when it is required and absent. */
static gboolean
lookup(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
       gboolean required, const cJSON **member, GError **error)
{
    *member = cs_json_member(object, key);
    if (*member == NULL && required) {
        cs_json_set_error(ctx, error, path, "missing key \"%s\"", key);
        return FALSE;
    }
    return TRUE;
}

static gboolean
type_error(const CsJsonCtx *ctx, const cJSON *member, const char *path, const char *key,
           const char *expected, GError **error)
{
    g_autofree char *p = cs_json_path_member(path, key);
    g_autofree char *got = cs_json_describe(member);
    cs_json_set_error(ctx, error, p, "expected %s, got %s", expected, got);
    return FALSE;
}

gboolean
cs_json_get_string(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                   gboolean required, const char **value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    if (!cJSON_IsString(m))
        return type_error(ctx, m, path, key, "a string", error);
    *value = m->valuestring;
    return TRUE;
}

gboolean
cs_json_get_bool(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                 gboolean required, gboolean *value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    if (!cJSON_IsBool(m))
        return type_error(ctx, m, path, key, "true or false", error);
    *value = cJSON_IsTrue(m);
    return TRUE;
}

gboolean
cs_json_get_int(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                gboolean required, int min, int max, int *value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) || m->valuedouble != floor(m->valuedouble))
        return type_error(ctx, m, path, key, "an integer", error);
    if (m->valuedouble < min || m->valuedouble > max) {
        g_autofree char *p = cs_json_path_member(path, key);
        if (max == G_MAXINT)
            cs_json_set_error(ctx, error, p, "%.15g is out of range (must be at least %d)",
                              m->valuedouble, min);
        else
            cs_json_set_error(ctx, error, p, "%.15g is out of range (must be %d to %d)",
                              m->valuedouble, min, max);
        return FALSE;
    }
    *value = (int)m->valuedouble;
    return TRUE;
}

gboolean
cs_json_get_number(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                   gboolean required, double min, gboolean min_exclusive, double max, double *value,
                   GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble))
        return type_error(ctx, m, path, key, "a number", error);
    double v = m->valuedouble;
    if ((min_exclusive ? v <= min : v < min) || v > max) {
        g_autofree char *p = cs_json_path_member(path, key);
        cs_json_set_error(ctx, error, p, "%.15g is out of range (must be %s %g and at most %g)", v,
                          min_exclusive ? "above" : "at least", min, max);
        return FALSE;
    }
    *value = v;
    return TRUE;
}

/* A string quantity handed to units.c; its message ("\"400 GB\" is not a bandwidth
 * (expected e.g. ...)") follows the path. A bare JSON number gets a hint instead. */
typedef gboolean (*ParseReal)(const char *text, double *v, GError **error);

static gboolean
get_quantity(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
             gboolean required, const char *what, const char *example, ParseReal parse,
             double *value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    g_autofree char *p = cs_json_path_member(path, key);
    if (cJSON_IsNumber(m)) {
        cs_json_set_error(ctx, error, p,
                          "%.15g is not a %s: a bare number has no unit (write it as a "
                          "string with its unit, e.g. \"%s\")",
                          m->valuedouble, what, example);
        return FALSE;
    }
    if (!cJSON_IsString(m))
        return type_error(ctx, m, path, key, "a string with a unit", error);
    g_autoptr(GError) local = NULL;
    double v = 0.0;
    if (!parse(m->valuestring, &v, &local)) {
        cs_json_set_error(ctx, error, p, "%s", local->message);
        return FALSE;
    }
    *value = v;
    return TRUE;
}

gboolean
cs_json_get_time(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                 gboolean required, double *seconds, GError **error)
{
    double v = -1.0;
    if (!get_quantity(ctx, object, path, key, required, "time", "0.5 us", cs_units_parse_time, &v,
                      error))
        return FALSE;
    /* Every time in a machine description is a latency or an overhead: one above a second is
     * a unit slip ("1 s" for "1 us"), and would swamp every prediction. */
    if (v > 1.0) {
        g_autofree char *p = cs_json_path_member(path, key);
        cs_json_set_error(ctx, error, p,
                          "\"%s\" is more than 1 s, too long for a latency or an overhead "
                          "(a unit slip?)",
                          cs_json_member(object, key)->valuestring);
        return FALSE;
    }
    if (v >= 0.0)
        *seconds = v;
    return TRUE;
}

gboolean
cs_json_get_bandwidth(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                      gboolean required, double *bytes_per_s, GError **error)
{
    double v = -1.0;
    if (!get_quantity(ctx, object, path, key, required, "bandwidth", "400 GB/s",
                      cs_units_parse_bandwidth, &v, error))
        return FALSE;
    if (v >= 0.0 && v < CS_JSON_MIN_BANDWIDTH_BPS) {
        g_autofree char *p = cs_json_path_member(path, key);
        cs_json_set_error(ctx, error, p,
                          "\"%s\" is less than 1 MB/s, too slow for a link or a GPU (a unit "
                          "slip?)",
                          cs_json_member(object, key)->valuestring);
        return FALSE;
    }
    if (v >= 0.0)
        *bytes_per_s = v;
    return TRUE;
}

gboolean
cs_json_get_size(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                 gboolean required, gint64 *bytes, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m == NULL)
        return TRUE;
    g_autofree char *p = cs_json_path_member(path, key);
    if (!cJSON_IsString(m))
        return type_error(ctx, m, path, key, "a size string such as \"4 MiB\"", error);
    g_autoptr(GError) local = NULL;
    gint64 v = 0;
    if (!cs_units_parse_size(m->valuestring, &v, &local)) {
        cs_json_set_error(ctx, error, p, "%s", local->message);
        return FALSE;
    }
    *bytes = v;
    return TRUE;
}

gboolean
cs_json_get_object(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                   gboolean required, const cJSON **value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m != NULL && !cJSON_IsObject(m))
        return type_error(ctx, m, path, key, "an object", error);
    *value = m;
    return TRUE;
}

gboolean
cs_json_get_array(const CsJsonCtx *ctx, const cJSON *object, const char *path, const char *key,
                  gboolean required, const cJSON **value, GError **error)
{
    const cJSON *m;

    if (!lookup(ctx, object, path, key, required, &m, error))
        return FALSE;
    if (m != NULL && !cJSON_IsArray(m))
        return type_error(ctx, m, path, key, "an array", error);
    *value = m;
    return TRUE;
}

/* A copy of @s that is valid UTF-8 (invalid bytes become U+FFFD), allocated as cJSON frees. */
static char *
utf8_copy_for_cjson(const char *s)
{
    g_autofree char *valid = g_utf8_make_valid(s, -1);
    const size_t n = strlen(valid) + 1;
    char *copy = cJSON_malloc(n);
    g_assert(copy != NULL);
    memcpy(copy, valid, n);
    return copy;
}

static void
make_node_utf8(cJSON *node)
{
    if (node->string != NULL && !g_utf8_validate(node->string, -1, NULL)) {
        char *key = utf8_copy_for_cjson(node->string);
        if ((node->type & cJSON_StringIsConst) == 0)
            cJSON_free(node->string);
        node->type &= ~cJSON_StringIsConst;
        node->string = key;
    }
    if (cJSON_IsString(node) && node->valuestring != NULL
        && !g_utf8_validate(node->valuestring, -1, NULL)) {
        char *value = utf8_copy_for_cjson(node->valuestring);
        if ((node->type & cJSON_IsReference) == 0)
            cJSON_free(node->valuestring);
        node->type &= ~cJSON_IsReference;
        node->valuestring = value;
    }
    for (cJSON *child = node->child; child != NULL; child = child->next)
        make_node_utf8(child);
}

/**
 * cs_json_make_utf8:
 * Replaces every invalid UTF-8 sequence in @root's strings and keys by U+FFFD, so what
 * cJSON_Print() makes of it is valid JSON whatever reached it (a file name, a trace header).
 */
void
cs_json_make_utf8(cJSON *root)
{
    if (root != NULL)
        make_node_utf8(root);
}

/**
 * cs_json_print:
 * cJSON_Print() (@formatted) or cJSON_PrintUnformatted() of @root after
 * cs_json_make_utf8(). Returns: (transfer full): free with cJSON_free() or free().
 */
void
cs_json_add_schema(cJSON *root, const char *name, int version)
{
    g_return_if_fail(root != NULL && name != NULL && version > 0);
    cJSON *schema = cJSON_AddObjectToObject(root, "schema");
    cJSON_AddStringToObject(schema, "name", name);
    cJSON_AddNumberToObject(schema, "version", version);
}

char *
cs_json_print(cJSON *root, gboolean formatted)
{
    cs_json_make_utf8(root);
    return formatted ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
}
