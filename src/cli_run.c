/* PLACEHOLDER-UNWRITTEN: cli_run.c is written by its owner; delete this file's contents. */
#include "cli.h"
gboolean
cs_cli_run (int argc, char **argv, GError **error)
{
    (void) argc;
    (void) argv;
    g_set_error (error, CS_CLI_ERROR, CS_CLI_ERROR_UNAVAILABLE, "collsim run: PLACEHOLDER-UNWRITTEN");
    return FALSE;
}
