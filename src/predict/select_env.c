// SPDX-License-Identifier: MIT
/* The environment emitter of a selection: NCCL_ALGO and NCCL_PROTO lines for one
 * communicator shape (cs_selection_to_env()) or for several, exported only where they agree. */
#include "config.h"

#include <string.h>

#include "predict/select-private.h"

/* ---- NCCL_ALGO / NCCL_PROTO ---- */

/* The NCCL_ALGO and NCCL_PROTO values of @sel's NCCL tables into @algos and @protos (empty
 * when no collective is tuned by NCCL), and per collective a comment line with its ranges and
 * gains into @out. */
static void
env_settings(const CsSelection *sel, GString *out, GString *algos, GString *protos)
{
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        const CsSelectTable *t = r->nccl;
        if (t == NULL || t->ranges->len == 0)
            continue;
        gboolean used_a[CS_NCCL_N_ALGOS] = { FALSE };
        gboolean used_p[CS_N_PROTOS] = { FALSE };
        g_autoptr(GString) pairs = g_string_new(NULL);
        g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
        for (guint j = 0; j < t->ranges->len; j++) {
            const CsSelectRange *rg = &g_array_index(t->ranges, CsSelectRange, j);
            used_a[rg->choice.nccl_algo] = TRUE;
            used_p[rg->choice.proto] = TRUE;
            const int key = rg->choice.nccl_algo * CS_N_PROTOS + rg->choice.proto + 1;
            g_hash_table_add(seen, GINT_TO_POINTER(key));
            g_autofree char *from = cs_select_size_text(rg->min_bytes);
            g_autofree char *gain = cs_select_gain_text(rg);
            g_string_append_printf(pairs, "%s%s/%s from %s%s%s", pairs->len > 0 ? ", " : "",
                                   cs_nccl_algo_name((CsNcclAlgo)rg->choice.nccl_algo),
                                   cs_nccl_proto_name(rg->choice.proto), from,
                                   rg->min_measured ? " (measured)" : "", gain);
        }
        const char *name = cs_op_name(t->op);
        g_string_append_printf(algos, "%s%s:", algos->len > 0 ? ";" : "", name);
        g_string_append_printf(protos, "%s%s:", protos->len > 0 ? ";" : "", name);
        gboolean first = TRUE;
        for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
            if (!used_a[a])
                continue;
            g_string_append_printf(algos, "%s%s", first ? "" : ",",
                                   cs_nccl_algo_env_name((CsNcclAlgo)a));
            first = FALSE;
        }
        first = TRUE;
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if (!used_p[p])
                continue;
            g_string_append_printf(protos, "%s%s", first ? "" : ",", cs_proto_name((CsProto)p));
            first = FALSE;
        }
        /* Each range with its gain, even when one setting expresses the table. */
        g_string_append_printf(out, "# %s: %s.\n", name, pairs->str);
        if (g_hash_table_size(seen) > 1) {
            g_string_append_printf(out, "#   One global setting cannot express this: NCCL "
                                        "still picks among these by its own model per size.\n");
            g_string_append_printf(out, "#   The tuner plugin applies it exactly "
                                        "(COLLSIM_TUNER_FILE with --emit json).\n");
        }
    }
}

/**
 * cs_selection_to_env:
 * NCCL_ALGO and NCCL_PROTO with NCCL's per-collective lists ("allreduce:ring,nvls;..."):
 * per collective the algorithms and protocols its NCCL table uses. They restrict NCCL's
 * choice but cannot depend on size: a comment says so for each collective whose table uses
 * more than one algorithm/protocol pair, and names the tuner plugin that can.
 */
char *
cs_selection_to_env(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL, NULL);
    GString *out = g_string_new(NULL);
    g_autofree char *what = cs_select_describe(sel);
    g_autoptr(GString) algos = g_string_new(NULL);
    g_autoptr(GString) protos = g_string_new(NULL);

    g_string_append_printf(out, "# collsim %s select --emit env: %s\n", COLLSIM_VERSION, what);
    cs_select_append_notes(out, sel, "# ");
    g_autofree char *margin = cs_select_margin_text(sel);
    g_string_append_printf(out, "# margin: %s\n", margin);
    cs_select_append_restriction(out, sel, "# ");
    g_string_append(out, "# Per-collective lists need an NCCL whose NCCL_ALGO/NCCL_PROTO take "
                         "them (2.28 does, 2.19 does not).\n");
    env_settings(sel, out, algos, protos);
    if (algos->len == 0) {
        g_string_append(out, "# No collective here is tuned by NCCL: nothing to set.\n");
        return g_string_free(out, FALSE);
    }
    g_string_append_printf(out, "export NCCL_ALGO=\"%s\"\n", algos->str);
    g_string_append_printf(out, "export NCCL_PROTO=\"%s\"\n", protos->str);
    return g_string_free(out, FALSE);
}

/* --emit env for several shapes: the environment is one for every communicator of a process,
 * so NCCL_ALGO/NCCL_PROTO are exported only where every shape's table asks the same; each
 * shape's own lines are comments. */
char *
cs_select_env_shapes(CsSelection *const *sels, guint n)
{
    GString *out = g_string_new(NULL);
    g_autofree char *algos0 = NULL;
    g_autofree char *protos0 = NULL;
    gboolean agree = TRUE;

    g_string_append_printf(out, "# collsim %s select --emit env: %u communicator shapes of %s\n",
                           COLLSIM_VERSION, n, cs_topo_name(sels[0]->topo));
    cs_select_append_restriction(out, sels[0], "# ");
    g_string_append(out, "# Per-collective lists need an NCCL whose NCCL_ALGO/NCCL_PROTO take "
                         "them (2.28 does, 2.19 does not).\n"
                         "# The environment holds for every communicator of a process: a "
                         "setting is exported only where\n"
                         "# every shape's table asks for the same; the tuner plugin (--emit "
                         "json) picks a table per shape.\n");
    for (guint i = 0; i < n; i++) {
        g_autofree char *what = cs_select_describe(sels[i]);
        g_autoptr(GString) algos = g_string_new(NULL);
        g_autoptr(GString) protos = g_string_new(NULL);
        g_autofree char *margin = cs_select_margin_text(sels[i]);
        g_string_append_printf(out, "#\n# %s\n# margin: %s\n", what, margin);
        env_settings(sels[i], out, algos, protos);
        if (algos->len > 0) {
            g_string_append_printf(out, "#   NCCL_ALGO=\"%s\"\n", algos->str);
            g_string_append_printf(out, "#   NCCL_PROTO=\"%s\"\n", protos->str);
        }
        if (i == 0) {
            algos0 = g_strdup(algos->str);
            protos0 = g_strdup(protos->str);
        }
        else {
            agree = agree && strcmp(algos0, algos->str) == 0 && strcmp(protos0, protos->str) == 0;
        }
    }
    g_string_append(out, "#\n");
    if (algos0[0] == '\0')
        g_string_append(out, "# No collective here is tuned by NCCL: nothing to set.\n");
    else if (!agree)
        g_string_append(out, "# The shapes ask for different settings: none is exported (use the "
                             "tuner plugin, or the line of your job's shape).\n");
    else {
        g_string_append_printf(out, "export NCCL_ALGO=\"%s\"\n", algos0);
        g_string_append_printf(out, "export NCCL_PROTO=\"%s\"\n", protos0);
    }
    return g_string_free(out, FALSE);
}
