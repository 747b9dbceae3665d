// SPDX-License-Identifier: MIT
/* Subcommand entry points: main.c dispatches, each cli_<name>.c implements one. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CS_CLI_ERROR (cs_cli_error_quark ())
GQuark cs_cli_error_quark (void);

typedef enum {
    CS_CLI_ERROR_USAGE,      /* bad flags or arguments: exit 2 and "Try 'collsim --help'" */
    CS_CLI_ERROR_INPUT,      /* a bad input file or value: exit 2 */
    CS_CLI_ERROR_FAILED,     /* the command ran and failed (a gate, a wrong result): exit 1 */
    CS_CLI_ERROR_UNAVAILABLE,/* built without the feature it needs: exit 1 */
} CsCliError;

/**
 * CsCliFunc:
 * A subcommand. @argv[0] is "collsim <name>". Prints its results to stdout and returns
 * TRUE, or returns FALSE with @error set and prints nothing: main() prints the one line and
 * picks the exit status from the error's domain and code.
 */
typedef gboolean (*CsCliFunc) (int argc, char **argv, GError **error);

gboolean cs_cli_run (int argc, char **argv, GError **error);        /* the main job */
gboolean cs_cli_model (int argc, char **argv, GError **error);
gboolean cs_cli_topo (int argc, char **argv, GError **error);
gboolean cs_cli_algos (int argc, char **argv, GError **error);
gboolean cs_cli_verify (int argc, char **argv, GError **error);
gboolean cs_cli_explain (int argc, char **argv, GError **error);
gboolean cs_cli_select (int argc, char **argv, GError **error);
gboolean cs_cli_validate (int argc, char **argv, GError **error);
gboolean cs_cli_calibrate (int argc, char **argv, GError **error);
gboolean cs_cli_measure (int argc, char **argv, GError **error);

/* Shared option helpers (cli_common.c). */

/* A GOptionArgFunc-compatible parser target: fills *(gint64 *) from a size with units. */
gboolean cs_cli_parse_size_arg (const char *option_name, const char *value, gpointer data,
                                GError **error);
/* Parses @argv with @entries; on failure sets CS_CLI_ERROR_USAGE. @summary for --help. */
gboolean cs_cli_parse (int *argc, char ***argv, const GOptionEntry *entries,
                       const char *parameter_string, const char *summary,
                       const char *description, GError **error);

G_END_DECLS
