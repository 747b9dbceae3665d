// SPDX-License-Identifier: MIT
/* `collsim algos`: the registry as a table, algorithm x collective, then each algorithm's
 * summary and reference. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "algos/registry.h"
#include "cli/cli.h"

static void
print_table(void)
{
    const CsAlgo *const *algos = cs_algo_registry();
    int width = (int)strlen("algorithm");
    for (const CsAlgo *const *a = algos; *a != NULL; a++)
        width = MAX(width, (int)strlen((*a)->name));

    printf("%-*s", width, "algorithm");
    for (int op = 0; op < CS_N_OPS; op++)
        printf("  %s", cs_op_name((CsOp)op));
    printf("\n");
    for (const CsAlgo *const *a = algos; *a != NULL; a++) {
        printf("%-*s", width, (*a)->name);
        for (int op = 0; op < CS_N_OPS; op++) {
            /* Centre the mark under its column's name. */
            int w = (int)strlen(cs_op_name((CsOp)op));
            int left = (w - 1) / 2;
            printf("  %*s%s%*s", left, "", ((*a)->ops & CS_OP_BIT(op)) ? "x" : "-", w - 1 - left,
                   "");
        }
        printf("\n");
    }
    printf("\n");
    for (const CsAlgo *const *a = algos; *a != NULL; a++) {
        printf("%s: %s\n", (*a)->name, (*a)->summary != NULL ? (*a)->summary : "");
        if ((*a)->reference != NULL)
            printf("%*s  reference: %s\n", (int)strlen((*a)->name), "", (*a)->reference);
    }
}

static const char summary[]
    = "List the algorithms collsim can build schedules with: which collective each one\n"
      "implements (x), a one-line summary and where it comes from (paper, or NCCL source).";

static const char description[]
    = "Every algorithm listed is proven on its collectives by 'collsim verify'.\n"
      "\n"
      "Example:\n"
      "  collsim algos";

/**
 * cs_cli_algos:
 * `collsim algos`: prints the table to stdout. Arguments are CS_CLI_ERROR_USAGE.
 */
gboolean
cs_cli_algos(int argc, char **argv, GError **error)
{
    const GOptionEntry entries[] = { G_OPTION_ENTRY_NULL };
    if (!cs_cli_parse(&argc, &argv, entries, "", summary, description, error))
        return FALSE;
    if (argc > 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim algos: unexpected argument '%s'", argv[1]);
        return FALSE;
    }
    print_table();
    return TRUE;
}
