// SPDX-License-Identifier: MIT
/* cJSON helpers for strict input files: parse errors with line:column, unknown keys rejected,
 * typed getters whose errors name the file and the JSON path ("links[3].bandwidth"). */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

/**
 * CsJsonCtx:
 * Where a document came from and which GError every complaint about it is raised in; the
 * reader's module owns the domain (CS_TOPO_ERROR for topologies).
 */
typedef struct {
    const char *origin; /* file name (or a label for in-memory data) in messages */
    GQuark domain;      /* error domain of every error raised */
    int code;           /* error code for content errors (bad key, type, value) */
} CsJsonCtx;

/* Parses @text; a syntax error becomes "ORIGIN:LINE:COL: not valid JSON: ..." in @domain with
 * @parse_code. Returns: (transfer full) (nullable). */
cJSON *cs_json_parse(const char *text, const char *origin, GQuark domain, int parse_code,
                     GError **error);

/* Makes every string and key under @root valid UTF-8 (invalid bytes become U+FFFD); call it
 * before printing a document built from outside text, so the output is valid JSON. */
void cs_json_make_utf8(cJSON *root);

/* Adds "schema": {"name": @name, "version": @version} to @root: every document collsim
 * prints with --format json (--emit json) names its schema this way, first, and
 * docs/formats.md documents each one's fields. A version changes when a field is removed,
 * renamed or changes meaning or unit; added fields keep it. */
#define CS_JSON_SCHEMA_VERSION 1
void cs_json_add_schema(cJSON *root, const char *name, int version);

/* cJSON_Print() (@formatted) or cJSON_PrintUnformatted() after cs_json_make_utf8(): every
 * JSON output goes through it. Returns: (transfer full): free with cJSON_free(). */
char *cs_json_print(cJSON *root, gboolean formatted);

/* "links" + 3 -> "links[3]"; "" + "name" -> "name"; "links[3]" + "kind" -> "links[3].kind".
 * Returns: (transfer full). */
char *cs_json_path_member(const char *path, const char *key);
char *cs_json_path_element(const char *path, int index);

/* Sets @error to "ORIGIN: PATH: MESSAGE" (or "ORIGIN: MESSAGE" when @path is empty). */
void cs_json_set_error(const CsJsonCtx *ctx, GError **error, const char *path, const char *format,
                       ...) G_GNUC_PRINTF(4, 5);

/* A short, quoted rendering of @node for messages: "\"400 GB\"", "400", "{...}". (transfer full) */
char *cs_json_describe(const cJSON *node);

/* Checks that @node is an object, that every key is in the NULL-terminated @allowed list, and
 * that no key appears twice. The unknown-key message lists the keys allowed there. */
gboolean cs_json_check_object(const CsJsonCtx *ctx, const cJSON *node, const char *path,
                              const char *const *allowed, GError **error);

/* The member @key of @object (case-sensitive), or NULL. (transfer none) */
const cJSON *cs_json_member(const cJSON *object, const char *key);

/* ---- Typed getters ----
 * Each reads member @key of @object (at @path). If the key is absent, a @required getter
 * fails with "PATH: missing key \"KEY\"", an optional one returns TRUE and leaves @value as
 * it was (so the caller presets the default). A present value of the wrong type or range
 * fails with a message naming PATH.KEY and what was found. */

/* The slowest rate a machine description may hold, bytes/s: below 1 MB/s (slower than
 * 10 Mb/s Ethernet) a rate is a unit slip, and sizes of a few GiB would take longer than the
 * engine's picosecond clock can count. */
#define CS_JSON_MIN_BANDWIDTH_BPS 1e6

gboolean cs_json_get_string(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                            const char *key, gboolean required, const char **value, GError **error);
gboolean cs_json_get_bool(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                          const char *key, gboolean required, gboolean *value, GError **error);
/* An integral number in [@min, @max]. */
gboolean cs_json_get_int(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                         const char *key, gboolean required, int min, int max, int *value,
                         GError **error);
/* A finite number in [@min, @max]; @min_exclusive makes the lower bound strict. */
gboolean cs_json_get_number(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                            const char *key, gboolean required, double min, gboolean min_exclusive,
                            double max, double *value, GError **error);
/* A string with units, parsed by units.c: seconds (>= 0), bytes/s (> 0), bytes. */
gboolean cs_json_get_time(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                          const char *key, gboolean required, double *seconds, GError **error);
gboolean cs_json_get_bandwidth(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                               const char *key, gboolean required, double *bytes_per_s,
                               GError **error);
gboolean cs_json_get_size(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                          const char *key, gboolean required, gint64 *bytes, GError **error);
/* An object or array member (transfer none); *@value is NULL when absent and optional. */
gboolean cs_json_get_object(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                            const char *key, gboolean required, const cJSON **value,
                            GError **error);
gboolean cs_json_get_array(const CsJsonCtx *ctx, const cJSON *object, const char *path,
                           const char *key, gboolean required, const cJSON **value, GError **error);

G_END_DECLS
