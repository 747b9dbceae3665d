// SPDX-License-Identifier: MIT
/* `collsim model`: Hockney's T = alpha + n*beta for one link, size by size, showing which term
 * dominates and the half-performance size n_1/2 = alpha*B where the regime changes. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "base/json_util.h"
#include "models/alpha_beta.h"
#include "base/units.h"
#include "analysis/plot.h"

/* ---- Rows ---- */

typedef struct {
    gint64 size_bytes;
    double alpha_s;       /* the start-up term */
    double nbeta_s;       /* the transfer term, n/B */
    double time_s;        /* their sum */
    double bw_Bps;        /* achieved bandwidth n/T */
    const char *dominant; /* "alpha", "n*beta" or "equal" */
    double ratio;         /* larger term / smaller term; infinite when the smaller is zero */
} Row;

static Row
model_row(gint64 size_bytes, double alpha_s, double bw_Bps)
{
    Row r = { .size_bytes = size_bytes, .alpha_s = alpha_s };

    r.nbeta_s = (double)size_bytes / bw_Bps;
    r.time_s = cs_alpha_beta_p2p((double)size_bytes, alpha_s, bw_Bps);
    r.bw_Bps = r.time_s > 0.0 ? (double)size_bytes / r.time_s : bw_Bps;
    if (r.alpha_s == r.nbeta_s) {
        r.dominant = "equal";
        r.ratio = 1.0;
    }
    else if (r.alpha_s > r.nbeta_s) {
        r.dominant = "alpha";
        r.ratio = r.nbeta_s > 0.0 ? r.alpha_s / r.nbeta_s : INFINITY;
    }
    else {
        r.dominant = "n*beta";
        r.ratio = r.alpha_s > 0.0 ? r.nbeta_s / r.alpha_s : INFINITY;
    }
    return r;
}

/* "9091x", "119x", "1.07x"; "only" when the other term is zero. */
static char *
format_ratio(double ratio)
{
    if (isinf(ratio))
        return g_strdup("only");
    if (ratio >= 99.5)
        return g_strdup_printf("%.0fx", ratio);
    if (ratio >= 9.995)
        return g_strdup_printf("%.1fx", ratio);
    return g_strdup_printf("%.2fx", ratio);
}

/* "9000000 B = 8.58 MiB": the exact byte count and a readable approximation. */
static char *
format_size_approx(double bytes)
{
    static const char *const names[] = { "KiB", "MiB", "GiB", "TiB" };
    double v = bytes;
    int u = -1;

    while (v >= 1024.0 && u < (int)G_N_ELEMENTS(names) - 1) {
        v /= 1024.0;
        u++;
    }
    if (u < 0)
        return g_strdup_printf("%.0f B", bytes);
    return g_strdup_printf("%.0f B = %.3g %s", bytes, v, names[u]);
}

/* ---- Output ---- */

static void
print_text(const Row *rows, gsize n_rows, double alpha_s, double bw_Bps)
{
    g_autofree char *alpha = cs_units_format_time(alpha_s);
    g_autofree char *bw = cs_units_format_bandwidth(bw_Bps);
    double n_half = cs_alpha_beta_n_half(alpha_s, bw_Bps);
    g_autofree char *half = format_size_approx(n_half);

    g_autofree char *beta = g_strdup_printf("%.4g ps/byte", 1e12 / bw_Bps);

    printf("# Hockney's model of one link: T(n) = alpha + n * beta, beta = 1/B\n");
    printf("#   alpha = %-14s start-up cost, paid once per message whatever its size\n", alpha);
    printf("#   B     = %-14s link bandwidth\n", bw);
    printf("#   beta  = %-14s time per byte, 1/B\n", beta);
    printf("#   n_1/2 = alpha * B = %s\n", half);
    printf("#   At n_1/2 the two terms are equal, so T = 2 alpha and the message moves at B/2.\n"
           "#   Smaller messages are latency-bound (send fewer, larger ones: fewer rounds);\n"
           "#   larger ones are bandwidth-bound (keep every link busy: pipeline).\n");
    printf("#\n");
    printf("# %10s %10s %10s  %-16s %10s %12s\n", "size", "alpha", "n*beta", "dominant", "T",
           "n/T");

    gboolean marked = n_rows == 0 || (double)rows[0].size_bytes >= n_half;
    for (gsize i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        if (!marked && (double)r->size_bytes >= n_half) {
            printf("# ---- n_1/2 = %s: latency-bound above, bandwidth-bound below ----\n", half);
            marked = TRUE;
        }
        g_autofree char *size = cs_units_format_size(r->size_bytes);
        g_autofree char *a = cs_units_format_time(r->alpha_s);
        g_autofree char *nb = cs_units_format_time(r->nbeta_s);
        g_autofree char *ratio = format_ratio(r->ratio);
        g_autofree char *dom = g_strcmp0(r->dominant, "equal") == 0
                                   ? g_strdup("equal")
                                   : g_strdup_printf("%s %s", r->dominant, ratio);
        g_autofree char *t = cs_units_format_time(r->time_s);
        g_autofree char *ebw = cs_units_format_bandwidth(r->bw_Bps);
        printf("  %10s %10s %10s  %-16s %10s %12s\n", size, a, nb, dom, t, ebw);
    }
}

static void
print_csv(const Row *rows, gsize n_rows)
{
    printf("size_bytes,alpha_s,nbeta_s,dominant,ratio,time_s,bandwidth_GBps\n");
    for (gsize i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        printf("%" G_GINT64_FORMAT ",%.9g,%.9g,%s,%.9g,%.9g,%.9g\n", r->size_bytes, r->alpha_s,
               r->nbeta_s, r->dominant, r->ratio, r->time_s, r->bw_Bps / 1e9);
    }
}

static void
print_json(const Row *rows, gsize n_rows, double alpha_s, double bw_Bps)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();

    cs_json_add_schema(root, "collsim-model", CS_JSON_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "model", "hockney");
    cJSON_AddNumberToObject(root, "alpha_s", alpha_s);
    cJSON_AddNumberToObject(root, "bandwidth_Bps", bw_Bps);
    cJSON_AddNumberToObject(root, "beta_s_per_byte", 1.0 / bw_Bps);
    cJSON_AddNumberToObject(root, "n_half_bytes", cs_alpha_beta_n_half(alpha_s, bw_Bps));
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (gsize i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "size_bytes", (double)r->size_bytes);
        cJSON_AddNumberToObject(o, "alpha_s", r->alpha_s);
        cJSON_AddNumberToObject(o, "nbeta_s", r->nbeta_s);
        cJSON_AddStringToObject(o, "dominant", r->dominant);
        /* JSON has no infinity: a zero smaller term gives null. */
        if (isinf(r->ratio))
            cJSON_AddNullToObject(o, "ratio");
        else
            cJSON_AddNumberToObject(o, "ratio", r->ratio);
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cJSON_AddNumberToObject(o, "bandwidth_Bps", r->bw_Bps);
        cJSON_AddItemToArray(arr, o);
    }
    g_autofree char *text = cs_json_print(root, TRUE);
    printf("%s\n", text);
}

/* ---- Entry point ---- */

static const char summary[]
    = "Tabulate Hockney's alpha-beta model of one link, T(n) = alpha + n/B, for a range of\n"
      "message sizes: the alpha and n*beta terms, which dominates and by how much, the total\n"
      "time and the achieved bandwidth n/T. The defaults are the H100 NVLink example of the\n"
      "alpha-beta tutorials: alpha = 10us, B = 900GB/s.";

static const char description[]
    = "Units: TIME takes ps, ns, us, ms or s (\"0.8us\", \"10 ns\"); BANDWIDTH takes GB/s, GiB/s,\n"
      "MB/s, MiB/s, TB/s (bytes) or Gb/s, Gbps, Mb/s, Tb/s (bits); a bare number is an error.\n"
      "SIZE is bytes, or K/M/G/T (also KB/KiB, MB/MiB, ...) as powers of 1024, like nccl-tests.\n"
      "\n"
      "n_1/2 = alpha * B is the half-performance size: a message of n_1/2 bytes spends as long\n"
      "starting up as moving data and so reaches half the bandwidth.\n"
      "\n"
      "Example:\n"
      "  collsim model --alpha 10us --bandwidth 900GB/s -b 8 -e 8G -f 2\n"
      "  collsim model --alpha 2us --bandwidth 400Gb/s --format csv\n"
      "  collsim model --plot hockney.png";

/**
 * cs_cli_model:
 * `collsim model [--alpha TIME] [--bandwidth BW] [-b SIZE] [-e SIZE] [-f N] [--format F]`:
 * prints the table to stdout. Bad flags are CS_CLI_ERROR_USAGE; nothing is printed then.
 */
gboolean
cs_cli_model(int argc, char **argv, GError **error)
{
    double alpha_s = 10e-6;
    /* Per direction, as every topology states a link: one H100's NVLink4, 18 links x 25 GB/s
     * each way (NVIDIA H100 datasheet: 900 GB/s counts both directions). */
    double bw_Bps = 450e9;
    gint64 min_bytes = 8;
    gint64 max_bytes = G_GINT64_CONSTANT(8) << 30;
    gint64 factor = 2;
    g_autofree char *format = NULL;
    g_autofree char *plot = NULL;
    gboolean textbook = FALSE;
    g_autofree char *cmd = NULL;

    const GOptionEntry entries[] = {
        { "alpha", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_time_arg),
          "Start-up cost of one message (default 10us)", "TIME" },
        { "bandwidth", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_bandwidth_arg),
          "Link bandwidth per direction (default 450GB/s: one H100's NVLink4 each way)",
          "BANDWIDTH" },
        { "minbytes", 'b', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Smallest size (default 8)", "SIZE" },
        { "maxbytes", 'e', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Largest size (default 8G)", "SIZE" },
        { "stepfactor", 'f', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Multiply the size by N between rows (default 2)", "N" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (default), csv or json", "FORMAT" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
          "Also draw T(n), its two terms, n_1/2 and the latency- and bandwidth-bound regions "
          "into FILE (.svg, .png or .pdf)",
          "FILE" },
        { "textbook", 0, 0, G_OPTION_ARG_NONE, &textbook,
          "Hockney's textbook model, which this table always is (accepted as on run, explain "
          "and select)",
          NULL },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "alpha", &alpha_s },      { "bandwidth", &bw_Bps },  { "minbytes", &min_bytes },
        { "maxbytes", &max_bytes }, { "stepfactor", &factor }, { NULL, NULL },
    };

    cmd = cs_cli_command_line(argc, argv);
    if (!cs_cli_parse_units(&argc, &argv, entries, targets, "", summary, description, error))
        return FALSE;
    if (argc > 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim model: unexpected argument '%s'", argv[1]);
        return FALSE;
    }
    if (format != NULL && strcmp(format, "text") != 0 && strcmp(format, "csv") != 0
        && strcmp(format, "json") != 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim model: --format: unknown format '%s' (expected text, csv or json)",
                    format);
        return FALSE;
    }
    if (min_bytes < 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim model: -b: the smallest size must be at least 1 byte");
        return FALSE;
    }
    if (min_bytes > max_bytes) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim model: -b %" G_GINT64_FORMAT " is larger than -e %" G_GINT64_FORMAT,
                    min_bytes, max_bytes);
        return FALSE;
    }
    if (factor < 2) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim model: -f: the step factor must be at least 2");
        return FALSE;
    }

    if (plot != NULL && !cs_cli_check_plot("collsim model", plot, error))
        return FALSE;

    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    for (gint64 s = min_bytes;; s *= factor) {
        Row r = model_row(s, alpha_s, bw_Bps);
        g_array_append_val(rows, r);
        /* Stop before the next size passes -e (or overflows). */
        if (s > max_bytes / factor)
            break;
    }

    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (plot != NULL) {
        gint64 last = g_array_index(rows, Row, rows->len - 1).size_bytes;
        if (!cs_plot_model(alpha_s, bw_Bps, min_bytes, last, cmd, plot, error)) {
            g_prefix_error(error, "collsim model: --plot: ");
            return FALSE;
        }
    }

    const Row *data = (const Row *)(void *)rows->data;
    if (format == NULL || strcmp(format, "text") == 0)
        print_text(data, rows->len, alpha_s, bw_Bps);
    else if (strcmp(format, "csv") == 0)
        print_csv(data, rows->len);
    else
        print_json(data, rows->len, alpha_s, bw_Bps);
    return TRUE;
}
