// SPDX-License-Identifier: MIT
/* Validation: what a trace's headers say was forced (algorithm, protocol, GPUs per thread) is
 * what the predictions it is held against use. */
#include "validate.h"

typedef struct {
    const char *name;
    const char *algo_proto; /* '# algo/proto:' header, NULL: none */
    const char *env;        /* '# env:' header, NULL: none */
    const char *command;    /* '# command:' header, NULL: none */
    const char *want_algo;  /* NULL: not forced */
    const char *want_proto; /* NULL: not forced */
    int want_gpus_per_thread;
} SettingsCase;

static const SettingsCase settings_cases[] = {
    { "not-forced", "not forced", NULL, "./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1", NULL, NULL,
      1 },
    /* A shipped 2-node trace says so, and mentions another file's setting in passing. */
    { "not-forced-wins-over-a-mention",
      "not forced (compare with the NCCL_ALGO=Ring file from the same two nodes)", NULL, NULL, NULL,
      NULL, 1 },
    { "not-forced-wins-over-env", "Not forced", "NCCL_PROTO=LL128", NULL, NULL, NULL, 1 },
    { "algo-forced-in-words", "NCCL_ALGO=Ring forced (protocol not forced)", NULL, NULL, "ring",
      NULL, 1 },
    { "env-only", NULL, "NCCL_DEBUG=INFO NCCL_ALGO=Tree NCCL_PROTO=ll128", NULL, "tree", "LL128",
      1 },
    { "gpus-per-thread", "not forced", NULL, "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8", NULL,
      NULL, 8 },
};

static void
test_settings(gconstpointer data)
{
    const SettingsCase *c = data;
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_REDUCE, 8);
    if (c->algo_proto != NULL)
        cs_trace_set_header(trace, "algo/proto", c->algo_proto);
    if (c->env != NULL)
        cs_trace_set_header(trace, "env", c->env);
    if (c->command != NULL)
        cs_trace_set_header(trace, "command", c->command);
    g_autofree char *algo = NULL;
    g_autofree char *proto = NULL;
    int gpus_per_thread = 0;
    cs_validate_trace_settings(trace, &algo, &proto, &gpus_per_thread);
    g_assert_cmpstr(algo, ==, c->want_algo);
    g_assert_cmpstr(proto, ==, c->want_proto);
    g_assert_cmpint(gpus_per_thread, ==, c->want_gpus_per_thread);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(settings_cases); i++) {
        g_autofree char *path = g_strdup_printf("/validate/settings/%s", settings_cases[i].name);
        g_test_add_data_func(path, &settings_cases[i], test_settings);
    }
    return g_test_run();
}
