// SPDX-License-Identifier: MIT
/* --plot FILE, shared by the subcommands that draw (run, model, validate): checked before any
 * work, so a build without plots or a name that is no picture fails at once. Kept out of
 * cli_common.c, which the unit tests link without the analysis layer. */
#include "config.h"

#include "cli/cli.h"
#include "analysis/plot.h"

/**
 * cs_cli_check_plot:
 * Plots built, @path ending in .svg, .png or .pdf with PLplot's driver for it installed, and a
 * place where it can be written. Errors are CS_CLI_ERROR_INPUT (exit 2): "PROG: --plot PATH:
 * plots were not built: ...".
 */
gboolean
cs_cli_check_plot(const char *prog, const char *path, GError **error)
{
    g_autoptr(GError) cause = NULL;
    if (!cs_plot_check_path(path, NULL, &cause)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, "%s: --plot %s: %s", prog, path,
                    cause->message);
        return FALSE;
    }
    return cs_cli_check_output(prog, "--plot", path, error);
}
