// SPDX-License-Identifier: MIT
/* `collsim calibrate` with several --topo: one joint fit whose shared parameters come out the
 * same in every machine's fitted topology, and a leave-one-machine-out error per trace of each
 * machine. Runs `collsim` ($COLLSIM_BIN) on a trace of traces/ ($COLLSIM_SOURCE_ROOT). */
#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* The fitted value of parameter @name in a `calibration` or `parameters` array @params, NAN
 * when it is not there. */
static double
fitted(const cJSON *params, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, params)
    {
        if (g_strcmp0(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), name) == 0)
            return cJSON_GetNumberValue(cJSON_GetObjectItem(p, "fitted"));
    }
    return NAN;
}

/* Setup: the 4 x H100 all-reduce trace given to two machines with the same GPU model
 * (dgx-h100x4, and dgx-h100x8 on its first 4 ranks), fitting the launch only.
 * Expectation: exit 0; each machine's launch is shared by 2 machines and fitted to one value,
 * which both files written by --output-dir carry; each machine's trace has a
 * leave-one-machine-out error (the other machine's launch carried over: 1 parameter), below
 * 15% on this trace. */
static void
test_joint_cli(void)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    const char *src = g_getenv("COLLSIM_SOURCE_ROOT");
    if (bin == NULL || src == NULL) {
        g_test_skip("COLLSIM_BIN or COLLSIM_SOURCE_ROOT not set (run through meson test)");
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("collsim-calibrate-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *trace
        = g_build_filename(src, "traces", "h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt", NULL);
    const char *argv[]
        = { bin,          "calibrate", "--params",     "gpu.launch", "--leave-one-machine-out",
            "--format",   "json",      "--output-dir", dir,          "--topo",
            "dgx-h100x4", trace,       "--topo",       "dgx-h100x8", trace,
            NULL };
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int status = 0;
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                 &error);
    g_assert_no_error(error);
    g_test_message("stderr: %s", err);
    g_assert_true(g_spawn_check_wait_status(status, NULL));

    cJSON *root = cJSON_Parse(out);
    g_assert_nonnull(root);
    const cJSON *machines = cJSON_GetObjectItem(root, "machines");
    g_assert_cmpint(cJSON_GetArraySize(machines), ==, 2);
    double launch[2];
    const char *names[2] = { "dgx-h100x4", "dgx-h100x8" };
    for (int m = 0; m < 2; m++) {
        const cJSON *mach = cJSON_GetArrayItem(machines, m);
        g_assert_cmpstr(cJSON_GetStringValue(cJSON_GetObjectItem(mach, "topology")), ==, names[m]);
        const cJSON *params = cJSON_GetObjectItem(mach, "parameters");
        launch[m] = fitted(params, "gpu.launch");
        const cJSON *p;
        cJSON_ArrayForEach(p, params)
        {
            if (g_strcmp0(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), "gpu.launch") != 0)
                continue;
            g_assert_cmpfloat(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "shared_by_machines")),
                              ==, 2);
            g_assert_cmpstr(cJSON_GetStringValue(cJSON_GetObjectItem(p, "component")), ==,
                            "gpu H100 SXM5 80GB");
        }
        g_assert_cmpfloat(cJSON_GetNumberValue(
                              cJSON_GetObjectItem(mach, "leave_one_machine_out_parameters_learnt")),
                          ==, 1);
        const cJSON *traces = cJSON_GetObjectItem(mach, "traces");
        g_assert_cmpint(cJSON_GetArraySize(traces), ==, 1);
        const cJSON *lomo = cJSON_GetObjectItem(cJSON_GetArrayItem(traces, 0),
                                                "leave_one_machine_out_geomean_abs_busbw_error");
        g_assert_nonnull(lomo);
        g_assert_cmpfloat(cJSON_GetNumberValue(lomo), >, 0);
        g_assert_cmpfloat(cJSON_GetNumberValue(lomo), <, 0.15);

        /* The machine's fitted file carries the same launch. */
        g_autofree char *base = g_strdup_printf("%s-calibrated.json", names[m]);
        g_autofree char *path = g_build_filename(dir, base, NULL);
        g_autofree char *text = NULL;
        g_file_get_contents(path, &text, NULL, &error);
        g_assert_no_error(error);
        cJSON *doc = cJSON_Parse(text);
        g_assert_nonnull(doc);
        const cJSON *cal = cJSON_GetObjectItem(doc, "calibration");
        g_assert_cmpfloat(fitted(cJSON_GetObjectItem(cal, "parameters"), "gpu.launch"), ==,
                          launch[m]);
        cJSON_Delete(doc);
        g_remove(path);
    }
    g_assert_false(isnan(launch[0]));
    g_assert_cmpfloat(launch[0], ==, launch[1]);
    cJSON_Delete(root);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/calibrate/joint", test_joint_cli);
    return g_test_run();
}
