// SPDX-License-Identifier: MIT
/* NCCL's names: the spellings of its algorithms, protocols, collectives and GPU generations
 * (the tuner CSV's, NCCL_ALGO's and collsim's), and NCCL_ALGO / NCCL_PROTO values read as NCCL
 * reads them (NCCL's parseList, per-collective lists) for nccl.c's pick. */
#include "models/nccl-private.h"

#include <string.h>

static const char *const algo_names[CS_NCCL_N_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};

/* NCCL's ncclAlgoStr, the spelling NCCL_ALGO accepts. */
static const char *const algo_env_names[CS_NCCL_N_ALGOS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};

static const char *const algo_collsim_names[CS_NCCL_N_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};

static const char *const proto_names[CS_N_PROTOS] = { "ll", "ll128", "simple" };

/* NCCL's ncclProtoStr, the spelling NCCL_PROTO accepts. */
const char *const cs_nccl_proto_env_names[CS_N_PROTOS] = { "LL", "LL128", "Simple" };

static const char *const func_names[CS_NCCL_N_FUNCS] = {
    "broadcast", "reduce", "allgather", "reducescatter", "allreduce",
};

static const char *const arch_names[CS_NCCL_N_ARCHS] = {
    "Volta",
    "Ampere",
    "Hopper",
    "Blackwell",
};

const char *
cs_nccl_algo_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_names[algo];
}

const char *
cs_nccl_algo_env_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_env_names[algo];
}

const char *
cs_nccl_algo_collsim_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_collsim_names[algo];
}

/* Lower-case without '_' and '-': "NVLSTree", "nvls_tree" and "nvls-tree" agree. */
static gboolean
same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (*a == '\0' || *b == '\0')
            return *a == *b;
        if (g_ascii_tolower(*a) != g_ascii_tolower(*b))
            return FALSE;
        a++;
        b++;
    }
}

gboolean
cs_nccl_algo_from_name(const char *name, CsNcclAlgo *algo)
{
    g_return_val_if_fail(name != NULL && algo != NULL, FALSE);
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        if (same_name(name, algo_names[a])) {
            *algo = (CsNcclAlgo)a;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
cs_nccl_algo_from_collsim(const char *collsim_name, CsNcclAlgo *algo)
{
    g_return_val_if_fail(collsim_name != NULL && algo != NULL, FALSE);
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        if (algo_collsim_names[a] != NULL && strcmp(collsim_name, algo_collsim_names[a]) == 0) {
            *algo = (CsNcclAlgo)a;
            return TRUE;
        }
    }
    /* Spellings an algorithm file may use for the same NCCL algorithm. */
    if (strcmp(collsim_name, "nvls-tree") == 0 || strcmp(collsim_name, "nvlstree") == 0) {
        *algo = CS_NCCL_ALGO_NVLS_TREE;
        return TRUE;
    }
    if (strcmp(collsim_name, "collnet-direct") == 0 || strcmp(collsim_name, "collnet") == 0) {
        *algo = CS_NCCL_ALGO_COLLNET_DIRECT;
        return TRUE;
    }
    if (strcmp(collsim_name, "collnet-chain") == 0) {
        *algo = CS_NCCL_ALGO_COLLNET_CHAIN;
        return TRUE;
    }
    return FALSE;
}

/* The collective a group of a per-collective list names ("allreduce:tree": the all-reduce,
 * @list then at "tree"); -1 when @group has no prefix (@list = @group), -2 when its prefix
 * is no collective NCCL names. */
static int
group_func(const char *group, const char **list)
{
    const char *colon = strchr(group, ':');
    *list = group;
    if (colon == NULL)
        return -1;
    g_autofree char *prefix = g_strndup(group, (gsize)(colon - group));
    *list = colon + 1;
    for (int f = 0; f < CS_NCCL_N_FUNCS; f++)
        if (g_ascii_strcasecmp(prefix, func_names[f]) == 0)
            return f;
    return -2;
}

/* @name's bit in an NCCL_PROTO (CsProto) or NCCL_ALGO (CsNcclAlgo) mask; -1: NCCL has none. */
static int
list_name_bit(const char *name, gboolean is_proto)
{
    CsNcclAlgo algo;
    CsProto proto;
    if (is_proto)
        return cs_proto_from_name(name, &proto, NULL) ? (int)proto : -1;
    return cs_nccl_algo_from_name(name, &algo) ? (int)algo : -1;
}

/**
 * cs_nccl_env_list:
 * @value: an NCCL_ALGO (@is_proto FALSE) or NCCL_PROTO value as NCCL reads it: a comma list,
 *   '^' for everything but the list, or per-collective lists ("allreduce:tree,ring;broadcast:
 *   ring", every group prefixed when there are several). Empty names are skipped, as NCCL
 *   skips them; a group must still name one.
 * Returns: (transfer full) the value with NCCL's own spellings (nvls_tree -> NVLSTree,
 *   AllReduce -> allreduce), or NULL with CS_NCCL_ERROR_UNSUPPORTED naming the first name
 *   NCCL does not know (NCCL compares without case and skips such a name silently).
 */
char *
cs_nccl_env_list(const char *value, gboolean is_proto, GError **error)
{
    const char *known = is_proto ? "LL, LL128, Simple"
                                 : "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT";
    const char *what = is_proto ? "protocol" : "algorithm";
    g_auto(GStrv) groups = g_strsplit(value, ";", -1);
    g_autoptr(GString) env = g_string_new(NULL);
    const guint n_groups = g_strv_length(groups);

    if (n_groups == 0) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED, "empty (%s)", known);
        return NULL;
    }
    for (guint g = 0; g < n_groups; g++) {
        const char *list;
        const int f = group_func(groups[g], &list);
        if (g > 0)
            g_string_append_c(env, ';');
        if (f == -1 && n_groups > 1) {
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                        "\"%s\" in \"%s\" names no collective (each of several groups starts "
                        "with one, e.g. allreduce:)",
                        groups[g], value);
            return NULL;
        }
        if (f == -2) {
            g_autofree char *func = g_strndup(groups[g], (gsize)(list - 1 - groups[g]));
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                        "\"%s\" in \"%s\" is not a collective NCCL names (broadcast, "
                        "reduce, allgather, reducescatter, allreduce)",
                        func, value);
            return NULL;
        }
        if (f >= 0)
            g_string_append_printf(env, "%s:", func_names[f]);
        if (list[0] == '^') {
            g_string_append_c(env, '^');
            list++;
        }
        g_auto(GStrv) names = g_strsplit(list, ",", -1);
        int n_named = 0;
        for (int i = 0; names[i] != NULL; i++) {
            if (names[i][0] == '\0')
                continue;
            const int bit = list_name_bit(names[i], is_proto);
            if (bit < 0) {
                g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                            "\"%s\" is not an NCCL %s (%s)", names[i], what, known);
                return NULL;
            }
            g_string_append_printf(env, "%s%s", n_named > 0 ? "," : "",
                                   is_proto ? cs_nccl_proto_env_names[bit] : algo_env_names[bit]);
            n_named++;
        }
        if (n_named == 0) {
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED, "no %s in \"%s\" (%s)",
                        what, value, known);
            return NULL;
        }
    }
    return g_string_free(g_steal_pointer(&env), FALSE);
}

/**
 * cs_nccl_list_mask:
 * What an NCCL_ALGO (@is_proto FALSE) or NCCL_PROTO @value allows collective @func (a
 * CsNcclFunc, -1: unknown), read leniently as NCCL reads it (names it does not know are
 * skipped): a comma list, or with a leading '^' everything but the list (NCCL's parseList);
 * with per-collective lists, the first group without a prefix or with @func's.
 * Returns: a mask (1 << CsNcclAlgo, 1 << CsProto); 0 when the group names nothing or @func
 *   has no group.
 */
guint
cs_nccl_list_mask(const char *value, gboolean is_proto, int func)
{
    const guint all = is_proto ? CS_NCCL_ALL_PROTOS : CS_NCCL_ALL_ALGOS;
    const char *list = NULL;
    g_auto(GStrv) groups = g_strsplit(value, ";", -1);
    for (int g = 0; groups[g] != NULL && list == NULL; g++) {
        const char *rest;
        const int f = group_func(groups[g], &rest);
        if (f == -1 || (func >= 0 && f == func))
            list = rest;
    }
    if (list == NULL)
        return 0;
    const gboolean exclude = list[0] == '^';
    guint listed = 0;
    g_auto(GStrv) names = g_strsplit(list + (exclude ? 1 : 0), ",", -1);
    for (int i = 0; names[i] != NULL; i++) {
        const int bit = list_name_bit(names[i], is_proto);
        if (bit >= 0)
            listed |= 1u << bit;
    }
    if (listed == 0)
        return 0;
    return exclude ? all & ~listed : listed;
}

const char *
cs_nccl_proto_name(CsProto proto)
{
    g_return_val_if_fail(proto < CS_N_PROTOS, NULL);
    return proto_names[proto];
}

int
cs_nccl_func_from_op(CsOp op)
{
    switch (op) {
    case CS_OP_BROADCAST:
        return CS_NCCL_FUNC_BROADCAST;
    case CS_OP_REDUCE:
        return CS_NCCL_FUNC_REDUCE;
    case CS_OP_ALL_GATHER:
        return CS_NCCL_FUNC_ALL_GATHER;
    case CS_OP_REDUCE_SCATTER:
        return CS_NCCL_FUNC_REDUCE_SCATTER;
    case CS_OP_ALL_REDUCE:
        return CS_NCCL_FUNC_ALL_REDUCE;
    case CS_OP_SCATTER:
    case CS_OP_GATHER:
    case CS_OP_ALL_TO_ALL:
    case CS_OP_SEND_RECV:
    case CS_N_OPS:
    default:
        return -1;
    }
}

const char *
cs_nccl_func_name(CsNcclFunc func)
{
    g_return_val_if_fail(func < CS_NCCL_N_FUNCS, NULL);
    return func_names[func];
}

const char *
cs_nccl_arch_name(CsNcclArch arch)
{
    g_return_val_if_fail(arch < CS_NCCL_N_ARCHS, NULL);
    return arch_names[arch];
}
