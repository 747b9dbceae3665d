// SPDX-License-Identifier: MIT
/* --plot (src/analysis/plot.c) as users run it: every picture is drawn, SVG text is read back
 * (axis labels, legend, one polyline per series), the SVG is turned into PNG by rsvg-convert
 * where installed, PNG and PDF files are checked for their structure, and two runs give the
 * same bytes. In a build without PLplot the drawing cases skip and --plot must say plainly
 * that plots were not built (exit 2). `topo show --dot` (Graphviz text, no PLplot) too. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "algos/registry.h"
#include "analysis/plot.h"
#include "base/json_util.h"
#include "base/units.h"
#include "test-util.h"

/* ---- Helpers ---- */

static gboolean
need_plots(void)
{
    if (!cs_plot_available()) {
        g_test_skip("plots were not built (no PLplot at build time)");
        return FALSE;
    }
    return TRUE;
}

/* A fresh folder for one case's files (removed by the caller with rm_dir). */
static char *
make_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("collsim-plot-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void
rm_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
    }
    g_rmdir(dir);
}

/* Runs collsim with @args, expecting exit 0, and returns the file at @path. */
static GBytes *
run_and_read(const char *subcommand, const char *const *args, const char *path)
{
    g_auto(CsTestRun) r = cs_test_run_collsim(subcommand, args);
    g_test_message("stderr: %s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.err, ==, "");
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) error = NULL;
    g_file_get_contents(path, &data, &len, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(len, >, 0);
    return g_bytes_new_take(g_steal_pointer(&data), len);
}

/* The same command twice gives the same bytes (the path is the same: it is in the subtitle). */
static GBytes *
run_twice(const char *subcommand, const char *const *args, const char *path)
{
    GBytes *first = run_and_read(subcommand, args, path);
    g_unlink(path);
    g_autoptr(GBytes) second = run_and_read(subcommand, args, path);
    g_assert_true(g_bytes_equal(first, second));
    return first;
}

/* Every <text> element of PLplot's SVG, tags dropped and character references decoded, each
 * on a line of its own (the first too: "\n8 B\n" finds a whole label). */
static char *
svg_texts(const char *svg)
{
    GString *out = g_string_new("\n");
    const char *p = svg;
    while ((p = strstr(p, "<text")) != NULL) {
        const char *end = strstr(p, "</text>");
        g_assert_nonnull(end);
        const char *q = strchr(p, '>') + 1;
        while (q < end) {
            if (*q == '<') {
                q = strchr(q, '>') + 1;
            }
            else if (g_str_has_prefix(q, "&#x")) {
                char *stop = NULL;
                gunichar c = (gunichar)g_ascii_strtoull(q + 3, &stop, 16);
                g_string_append_unichar(out, c);
                q = stop + 1;
            }
            else if (g_str_has_prefix(q, "&amp;")) {
                g_string_append_c(out, '&');
                q += 5;
            }
            else {
                g_string_append_c(out, *q++);
            }
        }
        g_string_append_c(out, '\n');
        p = end;
    }
    return g_string_free(out, FALSE);
}

/* How many <polyline>s have exactly @n points. */
static guint
count_polylines(const char *svg, guint n)
{
    guint count = 0;
    const char *p = svg;
    while ((p = strstr(p, "points=\"")) != NULL) {
        p += strlen("points=\"");
        const char *end = strchr(p, '"');
        g_autofree char *pts = g_strndup(p, (gsize)(end - p));
        g_auto(GStrv) v = g_strsplit_set(pts, " \t\n", -1);
        guint n_points = 0;
        for (guint i = 0; v[i] != NULL; i++)
            n_points += v[i][0] != '\0';
        if (n_points == n)
            count++;
        p = end;
    }
    return count;
}

/* How many <polyline>s are vertical segments (two points, one x) drawn @width wide (PLplot
 * writes widths as "%e": 1.7 is "1.700000e+00"). */
static guint
count_vertical_lines(const char *svg, const char *width)
{
    g_autofree char *attr = g_strdup_printf("stroke-width=\"%s\"", width);
    guint count = 0;
    const char *p = svg;
    while ((p = strstr(p, "<polyline")) != NULL) {
        const char *end = strstr(p, "/>");
        g_assert_nonnull(end);
        g_autofree char *element = g_strndup(p, (gsize)(end - p));
        p = end;
        const char *pts = strstr(element, "points=\"");
        if (strstr(element, attr) == NULL || pts == NULL)
            continue;
        pts += strlen("points=\"");
        g_autofree char *value = g_strndup(pts, (gsize)(strchr(pts, '"') - pts));
        g_auto(GStrv) v = g_strsplit(g_strstrip(value), " ", -1);
        double x0, y0, x1, y1;
        if (g_strv_length(v) == 2 && sscanf(v[0], "%lf,%lf", &x0, &y0) == 2
            && sscanf(v[1], "%lf,%lf", &x1, &y1) == 2 && x0 == x1)
            count++;
    }
    return count;
}

/* The number of points of each <polyline> drawn @width wide, in document order. */
static GArray *
polyline_lengths(const char *svg, const char *width)
{
    g_autofree char *attr = g_strdup_printf("stroke-width=\"%s\"", width);
    GArray *lengths = g_array_new(FALSE, FALSE, sizeof(guint));
    const char *p = svg;
    while ((p = strstr(p, "<polyline")) != NULL) {
        const char *end = strstr(p, "/>");
        g_assert_nonnull(end);
        g_autofree char *element = g_strndup(p, (gsize)(end - p));
        p = end;
        const char *pts = strstr(element, "points=\"");
        if (strstr(element, attr) == NULL || pts == NULL)
            continue;
        pts += strlen("points=\"");
        g_autofree char *value = g_strndup(pts, (gsize)(strchr(pts, '"') - pts));
        g_auto(GStrv) v = g_strsplit_set(value, " \t\n", -1);
        guint n = 0;
        for (guint i = 0; v[i] != NULL; i++)
            n += v[i][0] != '\0';
        g_array_append_val(lengths, n);
    }
    return lengths;
}

/* A filled <polyline> (PLplot's fills): its colour and bounding box, in the SVG's own
 * coordinates (y up). */
typedef struct {
    char fill[8];
    double x0, x1, y0, y1;
} Fill;

static GArray *
svg_fills(const char *svg)
{
    GArray *fills = g_array_new(FALSE, FALSE, sizeof(Fill));
    const char *p = svg;
    while ((p = strstr(p, "<polyline")) != NULL) {
        const char *end = strstr(p, "/>");
        g_assert_nonnull(end);
        g_autofree char *element = g_strndup(p, (gsize)(end - p));
        p = end;
        const char *colour = strstr(element, " fill=\"#");
        const char *pts = strstr(element, "points=\"");
        if (colour == NULL || pts == NULL || strstr(element, "fill-rule") == NULL)
            continue;
        Fill f = { .x0 = G_MAXDOUBLE, .x1 = -G_MAXDOUBLE, .y0 = G_MAXDOUBLE, .y1 = -G_MAXDOUBLE };
        g_strlcpy(f.fill, colour + strlen(" fill=\""), sizeof(f.fill));
        pts += strlen("points=\"");
        g_autofree char *value = g_strndup(pts, (gsize)(strchr(pts, '"') - pts));
        g_auto(GStrv) v = g_strsplit(g_strstrip(value), " ", -1);
        for (guint i = 0; v[i] != NULL; i++) {
            double x, y;
            g_assert_cmpint(sscanf(v[i], "%lf,%lf", &x, &y), ==, 2);
            f.x0 = MIN(f.x0, x);
            f.x1 = MAX(f.x1, x);
            f.y0 = MIN(f.y0, y);
            f.y1 = MAX(f.y1, y);
        }
        g_array_append_val(fills, f);
    }
    return fills;
}

/* Counts the lines of @text containing @what. */
static guint
count_lines(const char *text, const char *what)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    guint n = 0;
    for (guint i = 0; lines[i] != NULL; i++)
        n += strstr(lines[i], what) != NULL;
    return n;
}

/* Counts the lines of @text that are @what. */
static guint
count_equal_lines(const char *text, const char *what)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    guint n = 0;
    for (guint i = 0; lines[i] != NULL; i++)
        n += strcmp(lines[i], what) == 0;
    return n;
}

static void
assert_contains(const char *text, const char *what)
{
    if (strstr(text, what) == NULL)
        g_test_message("not found: \"%s\" in:\n%s", what, text);
    g_assert_nonnull(strstr(text, what));
}

static guint32
be32(const guint8 *p)
{
    return ((guint32)p[0] << 24) | ((guint32)p[1] << 16) | ((guint32)p[2] << 8) | p[3];
}

/* A PNG: the signature, an IHDR of @width x @height (0: any), chunks that walk to IEND. */
static void
assert_png(GBytes *bytes, guint32 width, guint32 height)
{
    gsize len;
    const guint8 *d = g_bytes_get_data(bytes, &len);
    static const guint8 sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    g_assert_cmpuint(len, >, 8 + 25);
    g_assert_cmpmem(d, 8, sig, 8);
    g_assert_cmpmem(d + 12, 4, "IHDR", 4);
    g_assert_cmpuint(be32(d + 16), >, 0);
    g_assert_cmpuint(be32(d + 20), >, 0);
    if (width > 0) {
        g_assert_cmpuint(be32(d + 16), ==, width);
        g_assert_cmpuint(be32(d + 20), ==, height);
    }
    gsize off = 8;
    gboolean iend = FALSE;
    guint n_idat = 0;
    while (off + 12 <= len && !iend) {
        guint32 chunk = be32(d + off);
        g_assert_cmpuint(off + 12 + chunk, <=, len);
        iend = memcmp(d + off + 4, "IEND", 4) == 0;
        n_idat += memcmp(d + off + 4, "IDAT", 4) == 0;
        off += 12 + chunk;
    }
    g_assert_true(iend);
    g_assert_cmpuint(off, ==, len);
    g_assert_cmpuint(n_idat, >, 0);
}

/* rsvg-convert (librsvg2-bin), when installed, renders @svg_path to PNG. */
static void
assert_svg_renders(const char *dir, const char *svg_path)
{
    g_autofree char *rsvg = g_find_program_in_path("rsvg-convert");
    if (rsvg == NULL) {
        g_test_message("rsvg-convert not installed: the SVG is not rendered");
        return;
    }
    g_autofree char *png = g_build_filename(dir, "rendered.png", NULL);
    const char *argv[] = { rsvg, "-o", png, svg_path, NULL };
    g_autofree char *err = NULL;
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                 &wait_status, &error);
    g_assert_no_error(error);
    g_test_message("rsvg-convert: %s", err);
    g_assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    g_autofree char *data = NULL;
    gsize len = 0;
    g_file_get_contents(png, &data, &len, &error);
    g_assert_no_error(error);
    g_autoptr(GBytes) bytes = g_bytes_new_take(g_steal_pointer(&data), len);
    assert_png(bytes, 0, 0);
}

/* ---- run ---- */

/* Setup: --all over 8 B .. 128 MiB (25 sizes) on the 4 x H100 box, Simple only, so every line
 * is solid: PLplot draws a solid line as one polyline, a dashed one in pieces.
 * Expectation: one 25-point polyline per algorithm that ran (the CSV's blocks), the axis
 * labels, 8 B and 128 MiB as tick labels, each algorithm in the legend, the title naming the
 * topology and the command. */
static void
test_run_all_svg(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "run.svg", NULL);
    const char *args[]
        = { "--topo", "dgx-h100x4", "--op", "allreduce", "--all",  "--proto", "Simple",
            "-b",     "8",          "-e",   "128M",      "--plot", svg,       NULL };
    g_autoptr(GBytes) bytes = run_twice(NULL, args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));

    /* The series the table has: its CSV's distinct blocks. */
    const char *csv_args[]
        = { "--topo", "dgx-h100x4", "--op", "allreduce", "--all",    "--proto", "Simple",
            "-b",     "8",          "-e",   "128M",      "--format", "csv",     NULL };
    g_auto(CsTestRun) csv = cs_test_run_collsim(NULL, csv_args);
    g_assert_cmpint(csv.status, ==, 0);
    g_autoptr(GHashTable) blocks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_auto(GStrv) lines = g_strsplit(csv.out, "\n", -1);
    for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", 2);
        g_hash_table_add(blocks, g_strdup(f[0]));
    }
    g_assert_cmpuint(g_hash_table_size(blocks), >=, 3);
    g_assert_cmpuint(count_polylines(text, 25), ==, g_hash_table_size(blocks));

    g_autofree char *texts = svg_texts(text);
    assert_contains(texts, "busbw (GB/s)");
    assert_contains(texts, "message size (bytes, log2 axis)");
    assert_contains(texts, "\n8 B\n");
    assert_contains(texts, "\n128 MiB\n");
    assert_contains(texts, "allreduce on dgx-h100x4, 4 ranks");
    assert_contains(texts, "--all --proto Simple");
    assert_contains(texts, "bold: the fastest");
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, blocks);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        g_autofree char *algo = g_strndup(key, (gsize)(strchr(key, '/') - (char *)key));
        g_autofree char *entry = g_strdup_printf("\n%s\n", algo);
        assert_contains(texts, entry);
    }
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* Setup: the best choice per size on 2 x 8 H100 nodes, as PNG.
 * Expectation: a 1200 x 720 PNG, the same bytes twice, the table still printed. */
static void
test_run_best_png(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *png = g_build_filename(dir, "best.png", NULL);
    const char *args[]
        = { "--topo", "hgx-h100x8-2n", "--op", "allreduce", "-e", "1G", "--plot", png, NULL };
    g_autoptr(GBytes) bytes = run_twice(NULL, args, png);
    assert_png(bytes, 1200, 720);
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    assert_contains(r.out, "# NCCL's pick per size");
    rm_dir(dir);
}

/* Setup: the best choice per size as SVG. Expectation: each winner of the table's winners
 * comment appears in the legend; the chosen line is bold, said in the legend. */
static void
test_run_best_svg_legend(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "best.svg", NULL);
    const char *args[] = { "--topo",   "hgx-h100x8-2n", "--op",   "allreduce", "-e", "1G",
                           "--format", "csv",           "--plot", svg,         NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_autofree char *data = NULL;
    g_file_get_contents(svg, &data, NULL, NULL);
    g_assert_nonnull(data);
    g_autofree char *texts = svg_texts(data);
    assert_contains(texts, "bold: the choice per size");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    guint n = 0;
    for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++, n++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
        g_autofree char *entry = g_strdup_printf("\n%s\n", f[6]); /* algo */
        assert_contains(texts, entry);
    }
    g_assert_cmpuint(n, ==, 28);
    rm_dir(dir);
}

/* ---- model ---- */

/* Setup: the seed article's link (alpha = 10 us, B = 900 GB/s: n_1/2 = 9e6 B = 8.58 MiB).
 * Expectation: the n_1/2 label, both regions, time tick labels, the same bytes twice, and
 * rsvg-convert renders it. */
static void
test_model_svg(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "model.svg", NULL);
    const char *args[] = { "--alpha", "10us", "--bandwidth", "900GB/s", "--plot", svg, NULL };
    g_autoptr(GBytes) bytes = run_twice("model", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_autofree char *texts = svg_texts(text);
    assert_contains(texts, "= alpha*B = 8.58 MiB, T = 2 alpha");
    assert_contains(texts, "latency-bound");
    assert_contains(texts, "bandwidth-bound");
    assert_contains(texts, "\n10.0 us\n");
    assert_contains(texts, "\n8 GiB\n");
    assert_contains(texts, "time (log10 axis)");
    assert_contains(texts, "alpha = 10.0 us, B = 900 GB/s");
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* Setup: the model as PDF, twice. Expectation: a whole PDF whose creation date (cairo writes
 * the current time) is pinned to the epoch, so the two files are the same bytes. */
static void
test_model_pdf(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *pdf = g_build_filename(dir, "model.pdf", NULL);
    const char *args[] = { "--alpha", "2us", "--bandwidth", "400Gb/s", "--plot", pdf, NULL };
    g_autoptr(GBytes) bytes = run_twice("model", args, pdf);
    gsize len;
    const char *d = g_bytes_get_data(bytes, &len);
    g_assert_cmpmem(d, 5, "%PDF-", 5);
    static const char pinned[] = "/CreationDate (D:19700101000000";
    g_assert_nonnull(memmem(d, len, pinned, strlen(pinned)));
    g_assert_nonnull(memmem(d + len - MIN(len, 16), MIN(len, 16), "%%EOF", 5));
    rm_dir(dir);
}

/* ---- Errors ---- */

/* Setup: --plot with a name that is no picture, and into a folder that does not exist.
 * Expectation: exit 2, one line naming --plot and the file, nothing left behind, nothing
 * printed on stdout. */
static void
test_errors(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *txt = g_build_filename(dir, "plot.txt", NULL);
    g_autofree char *missing = g_build_filename(dir, "no", "plot.svg", NULL);
    const char *const *cases[] = {
        (const char *const[]){ "--topo", "dgx-h100x4", "-e", "1K", "--plot", txt, NULL },
        (const char *const[]){ "--topo", "dgx-h100x4", "-e", "1K", "--plot", missing, NULL },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, cases[i]);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        assert_contains(r.err, "--plot");
        g_assert_cmpuint(strchr(r.err, '\n') - r.err + 1, ==, strlen(r.err));
    }
    const char *model_args[] = { "--plot", txt, NULL };
    g_auto(CsTestRun) m = cs_test_run_collsim("model", model_args);
    g_assert_cmpint(m.status, ==, 2);
    assert_contains(m.err, ".svg, .png or .pdf");
    const char *select_args[] = { "--topo", "dgx-h100x4", "--plot", missing, NULL };
    g_auto(CsTestRun) s = cs_test_run_collsim("select", select_args);
    g_assert_cmpint(s.status, ==, 2);
    g_assert_cmpstr(s.out, ==, "");
    assert_contains(s.err, "collsim select: --plot");
    g_assert_cmpuint(strchr(s.err, '\n') - s.err + 1, ==, strlen(s.err));
    /* Refused before any backend starts. */
    const char *xo_args[] = { "--backend", "mpi", "--topo", "cpu-host-shm", "--plot", txt, NULL };
    g_auto(CsTestRun) x = cs_test_run_collsim("crossover", xo_args);
    g_assert_cmpint(x.status, ==, 2);
    g_assert_cmpstr(x.out, ==, "");
    assert_contains(x.err, "collsim crossover: --plot");
    assert_contains(x.err, ".svg, .png or .pdf");
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_assert_null(g_dir_read_name(d));
    rm_dir(dir);
}

/* Setup: a build without PLplot. Expectation: --plot is refused before any work with one line
 * saying plots were not built, exit 2, on run, model, validate and calibrate (before their
 * traces are read), select (before the selection runs) and plan (before its workload is
 * read). */
static void
test_not_built(void)
{
    if (cs_plot_available()) {
        g_test_skip("plots were built");
        return;
    }
    const char *run_args[] = { "--topo", "dgx-h100x4", "--plot", "x.svg", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, run_args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    assert_contains(r.err, "plots were not built");
    const char *model_args[] = { "--plot", "x.png", NULL };
    g_auto(CsTestRun) m = cs_test_run_collsim("model", model_args);
    g_assert_cmpint(m.status, ==, 2);
    assert_contains(m.err, "plots were not built");
    const char *validate_args[] = { "--topo", "dgx-h100x4", "--plot", "x.pdf", "t.txt", NULL };
    g_auto(CsTestRun) v = cs_test_run_collsim("validate", validate_args);
    g_assert_cmpint(v.status, ==, 2);
    assert_contains(v.err, "plots were not built");
    const char *select_args[] = { "--topo", "dgx-h100x4", "--plot", "x.svg", NULL };
    g_auto(CsTestRun) s = cs_test_run_collsim("select", select_args);
    g_assert_cmpint(s.status, ==, 2);
    g_assert_cmpstr(s.out, ==, "");
    assert_contains(s.err, "plots were not built");
    const char *calibrate_args[] = { "--topo", "dgx-h100x4", "--plot", "x.svg", "t.txt", NULL };
    g_auto(CsTestRun) c = cs_test_run_collsim("calibrate", calibrate_args);
    g_assert_cmpint(c.status, ==, 2);
    g_assert_cmpstr(c.out, ==, "");
    assert_contains(c.err, "plots were not built");
    const char *plan_args[]
        = { "--workload", "w.json", "--topo", "dgx-h100x4", "--plot", "x.svg", NULL };
    g_auto(CsTestRun) p = cs_test_run_collsim("plan", plan_args);
    g_assert_cmpint(p.status, ==, 2);
    g_assert_cmpstr(p.out, ==, "");
    assert_contains(p.err, "plots were not built");
    g_assert_false(g_file_test("x.svg", G_FILE_TEST_EXISTS));
}

/* ---- validate ---- */

/* Setup: two measured 8 x H100 all-reduce traces (NCCL's default pick, and ring forced)
 * against dgx-h100x8, as SVG. Expectation: per trace one line of predicted busbw and one of
 * errors, each through every row (the JSON report's rows), both panels' labels, each trace
 * named in the key, the same bytes twice, and rsvg-convert renders it. */
static void
test_validate_svg(void)
{
    if (!need_plots())
        return;
    const char *root = g_getenv("COLLSIM_SOURCE_ROOT");
    g_assert_nonnull(root);
    g_autofree char *a = g_build_filename(
        root, "traces", "h100-sxm-8gpu-nvswitch_allreduce_default-nvls_nccl2.26.2.txt", NULL);
    g_autofree char *b = g_build_filename(
        root, "traces", "h100-sxm-8gpu-nvswitch_allreduce_ring_nccl2.26.2.txt", NULL);
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "validate.svg", NULL);
    const char *args[] = { "--topo", "dgx-h100x8", a, b, "--plot", svg, NULL };
    g_autoptr(GBytes) bytes = run_twice("validate", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));

    const char *json_args[] = { "--topo", "dgx-h100x8", a, b, "--format", "json", NULL };
    g_auto(CsTestRun) j = cs_test_run_collsim("validate", json_args);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) doc = cJSON_Parse(j.out);
    g_assert_nonnull(doc);
    cJSON *traces = cJSON_GetObjectItem(doc, "traces");
    g_assert_cmpint(cJSON_GetArraySize(traces), ==, 2);
    int n0 = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(traces, 0), "rows"));
    int n1 = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(traces, 1), "rows"));
    g_assert_cmpint(n0, >, 10);
    if (n0 == n1) {
        g_assert_cmpuint(count_polylines(text, (guint)n0), ==, 4);
    }
    else {
        g_assert_cmpuint(count_polylines(text, (guint)n0), ==, 2);
        g_assert_cmpuint(count_polylines(text, (guint)n1), ==, 2);
    }

    g_autofree char *texts = svg_texts(text);
    assert_contains(texts, "busbw (GB/s)");
    assert_contains(texts, "busbw error (%)");
    assert_contains(texts, "message size (bytes, log2 axis)");
    assert_contains(texts, "allreduce on dgx-h100x8: measured against predicted");
    assert_contains(texts, "\nh100-sxm-8gpu-nvswitch_allreduce_default-nvls_nccl2.26.2.txt\n");
    assert_contains(texts, "\nh100-sxm-8gpu-nvswitch_allreduce_ring_nccl2.26.2.txt\n");
    assert_contains(texts, "\n8 B\n");
    assert_contains(texts, "\n8 GiB\n");
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* ---- select ---- */

/* A size as the crossover labels write it: three significant digits in binary units. */
static char *
size_label(gint64 bytes)
{
    static const char *const names[] = { "KiB", "MiB", "GiB" };
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024.0 && u < 2) {
        v /= 1024.0;
        u++;
    }
    return u < 0 ? g_strdup_printf("%" G_GINT64_FORMAT " B", bytes)
                 : g_strdup_printf("%.3g %s", v, names[u]);
}

/* Setup: the best choice for allreduce and allgather on the 4 x H100 box, 8 B .. 64 MiB, as
 * SVG, and the same selection as JSON.
 * Expectation: one vertical 1.7-wide line per crossover of the JSON (both collectives), each
 * labelled with its size; every range's algorithm/protocol in the key; a panel per collective
 * with collsim's band and NCCL 2.28's; the title naming both collectives and the topology;
 * the same bytes twice; rsvg-convert renders it. */
static void
test_select_svg(void)
{
    if (!need_plots())
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "select.svg", NULL);
    const char *args[]
        = { "--topo", "dgx-h100x4", "--op", "allreduce,allgather", "-b", "8", "-e", "64M",
            "--plot", svg,          NULL };
    g_autoptr(GBytes) bytes = run_twice("select", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_autofree char *texts = svg_texts(text);

    const char *json_args[]
        = { "--topo", "dgx-h100x4", "--op", "allreduce,allgather", "-b", "8", "-e", "64M",
            "--emit", "json",       NULL };
    g_auto(CsTestRun) j = cs_test_run_collsim("select", json_args);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) doc = cJSON_Parse(j.out);
    g_assert_nonnull(doc);
    cJSON *collectives = cJSON_GetObjectItem(doc, "collectives");
    g_assert_cmpint(cJSON_GetArraySize(collectives), ==, 2);
    int n_crossovers = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, collectives)
    {
        cJSON *x;
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(c, "crossovers"))
        {
            g_autofree char *label
                = size_label((gint64)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "size_bytes")));
            g_autofree char *line = g_strdup_printf("\n%s\n", label);
            assert_contains(texts, line);
            n_crossovers++;
        }
        cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(c, "ranges"))
        {
            g_autofree char *key = g_strdup_printf(
                "\n%s/%s\n", cJSON_GetStringValue(cJSON_GetObjectItem(r, "algorithm")),
                cJSON_GetStringValue(cJSON_GetObjectItem(r, "protocol")));
            assert_contains(texts, key);
        }
        g_autofree char *op
            = g_strdup_printf("\n%s\n", cJSON_GetStringValue(cJSON_GetObjectItem(c, "collective")));
        assert_contains(texts, op);
    }
    g_assert_cmpint(n_crossovers, >=, 4);
    g_assert_cmpuint(count_vertical_lines(text, "1.700000e+00"), ==, (guint)n_crossovers);
    g_assert_cmpuint(count_equal_lines(texts, "NCCL 2.28"), ==, 2);
    g_assert_cmpuint(count_equal_lines(texts, "collsim"), ==, 2);
    assert_contains(texts, "collsim select: allreduce, allgather on dgx-h100x4, 4 ranks");
    assert_contains(texts, "--op allreduce,allgather -b 8 -e 64M");
    assert_contains(texts, "crossover, its size above");
    assert_contains(texts, "message size (bytes, log2 axis)");
    assert_contains(texts, "\n8 B\n");
    assert_contains(texts, "\n128 MiB\n"); /* the axis widened to whole ticks of 3 doublings */
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* ---- calibrate ---- */

/* Setup: two measured RTX 2080 Ti traces (all-reduce 23 rows, all-gather 22) fitted to
 * rtx2080ti-x2-pcie3-shm, as SVG; the same fit as JSON; each trace validated alone for its
 * rows.
 * Expectation: per trace, one line through every row for the datasheet prediction (1.3 wide)
 * and one for the calibrated (2.6 wide), in trace order; the key of each panel carries the
 * JSON's errors before and after; each trace named; the same bytes twice; rsvg-convert
 * renders it. */
static void
test_calibrate_svg(void)
{
    if (!need_plots())
        return;
    const char *root = g_getenv("COLLSIM_SOURCE_ROOT");
    g_assert_nonnull(root);
    g_autofree char *a
        = g_build_filename(root, "traces", "rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt", NULL);
    g_autofree char *b
        = g_build_filename(root, "traces", "rtx2080ti-2gpu-pcie3-nop2p_allgather.txt", NULL);
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "calibrate.svg", NULL);
    const char *args[] = { "--topo", "rtx2080ti-x2-pcie3-shm", a, b, "--plot", svg, NULL };
    g_autoptr(GBytes) bytes = run_twice("calibrate", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_autofree char *texts = svg_texts(text);

    const char *json_args[]
        = { "--topo", "rtx2080ti-x2-pcie3-shm", a, b, "--format", "json", NULL };
    g_auto(CsTestRun) j = cs_test_run_collsim("calibrate", json_args);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) doc = cJSON_Parse(j.out);
    g_assert_nonnull(doc);
    cJSON *traces = cJSON_GetObjectItem(doc, "traces");
    g_assert_cmpint(cJSON_GetArraySize(traces), ==, 2);

    g_autoptr(GArray) thin = polyline_lengths(text, "1.300000e+00");
    g_autoptr(GArray) bold = polyline_lengths(text, "2.600000e+00");
    guint k_thin = 0, k_bold = 0;
    const char *paths[] = { a, b };
    for (int k = 0; k < 2; k++) {
        const char *v_args[]
            = { "--topo", "rtx2080ti-x2-pcie3-shm", paths[k], "--format", "json", NULL };
        g_auto(CsTestRun) v = cs_test_run_collsim("validate", v_args);
        g_assert_cmpint(v.status, ==, 0);
        g_autoptr(cJSON) vdoc = cJSON_Parse(v.out);
        g_assert_nonnull(vdoc);
        int n_rows = cJSON_GetArraySize(cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(vdoc, "traces"), 0), "rows"));
        g_assert_cmpint(n_rows, >, 20);
        /* The data lines, skipping the key's two-point samples. */
        while (k_thin < thin->len && g_array_index(thin, guint, k_thin) == 2)
            k_thin++;
        while (k_bold < bold->len && g_array_index(bold, guint, k_bold) == 2)
            k_bold++;
        g_assert_cmpuint(k_thin, <, thin->len);
        g_assert_cmpuint(k_bold, <, bold->len);
        g_assert_cmpuint(g_array_index(thin, guint, k_thin++), ==, (guint)n_rows);
        g_assert_cmpuint(g_array_index(bold, guint, k_bold++), ==, (guint)n_rows);

        cJSON *t = cJSON_GetArrayItem(traces, k);
        g_autofree char *before = g_strdup_printf("predicted, datasheet topology: %.1f%%",
                                                  100.0
                                                      * cJSON_GetNumberValue(cJSON_GetObjectItem(
                                                          t, "datasheet_geomean_abs_busbw_error")));
        g_autofree char *after = g_strdup_printf("predicted, calibrated topology: %.1f%%",
                                                 100.0
                                                     * cJSON_GetNumberValue(cJSON_GetObjectItem(
                                                         t, "calibrated_geomean_abs_busbw_error")));
        assert_contains(texts, before);
        assert_contains(texts, after);
        g_autofree char *name = g_path_get_basename(paths[k]);
        g_autofree char *line = g_strdup_printf("\n%s\n", name);
        assert_contains(texts, line);
    }
    /* No third data line. */
    for (; k_thin < thin->len; k_thin++)
        g_assert_cmpuint(g_array_index(thin, guint, k_thin), ==, 2);
    for (; k_bold < bold->len; k_bold++)
        g_assert_cmpuint(g_array_index(bold, guint, k_bold), ==, 2);
    g_assert_cmpuint(count_equal_lines(texts, "measured"), ==, 2);
    g_assert_cmpuint(count_equal_lines(texts, "busbw (GB/s)"), ==, 2);
    assert_contains(texts, "collsim calibrate on rtx2080ti-x2-pcie3-shm: 2 traces before and "
                           "after the fit");
    assert_contains(texts, "message size (bytes, log2 axis)");
    assert_contains(texts, "\n8 B\n");
    assert_contains(texts, "\n1 GiB\n");
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* ---- crossover ---- */

/* A machine of two alpha-beta lines (the lower choice 2 us + 1 ns/B, the upper 10 us +
 * 0.5 ns/B: equal at 16000 B), 2% noise from a fixed seed; the upper choice refused when
 * @refuse. */
typedef struct {
    const CsSelectChoice *upper;
    gboolean refuse;
    GRand *rand;
} TwoLines;

static gboolean
two_lines_can_measure(const CsSelectChoice *choice, char **why, gpointer data)
{
    TwoLines *l = data;
    if (l->refuse && cs_select_choice_equal(choice, l->upper)) {
        *why = g_strdup("needs NVSwitch multicast and in-switch reduction (NVLS), which the mpi "
                        "backend's point-to-point copies do not have");
        return FALSE;
    }
    return TRUE;
}

static gboolean
two_lines_measure(const CsSelectChoice *choice, gint64 size, gboolean first, double *time_us,
                  gpointer data, GError **error)
{
    TwoLines *l = data;
    (void)first;
    (void)error;
    const gboolean up = cs_select_choice_equal(choice, l->upper);
    const double t = up ? 10.0 + 0.5e-3 * (double)size : 2.0 + 1e-3 * (double)size;
    *time_us = t * (1.0 + 0.02 * (2.0 * g_rand_double(l->rand) - 1.0));
    return TRUE;
}

static CsXoverResult *
measure_two_lines(const CsSelectCrossover *predicted, gboolean refuse)
{
    TwoLines l = { &predicted->to, refuse, g_rand_new_with_seed(20261127) };
    CsXoverSource source
        = { .can_measure = two_lines_can_measure, .measure = two_lines_measure, .user_data = &l };
    CsXoverOptions o;
    cs_xover_options_init(&o);
    o.granularity = 4;
    o.min_bytes = 4;
    CsXoverResult *r = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_xover_measure(CS_OP_ALL_REDUCE, predicted, &o, &source, &r, &error));
    g_assert_no_error(error);
    g_rand_free(l.rand);
    return r;
}

/* GMarkup reads the whole file as XML. */
static void
assert_xml(const char *text)
{
    static const GMarkupParser none = { NULL, NULL, NULL, NULL, NULL };
    g_autoptr(GMarkupParseContext) ctx = g_markup_parse_context_new(&none, 0, NULL, NULL);
    g_autoptr(GError) error = NULL;
    g_markup_parse_context_parse(ctx, text, -1, &error);
    g_assert_no_error(error);
    g_markup_parse_context_end_parse(ctx, &error);
    g_assert_no_error(error);
}

/* Setup: a crossover predicted at 4000 B on a machine where it lies at 16000 B, measured by
 * the search, and one whose upper choice cannot run (NVLS on CPU processes).
 * Expectation: the SVG is XML and the same bytes twice; the measured panel names the pair
 * and the measured size with its interval as the result holds them, draws both sides through
 * every measured size (1.7 wide, one point per size) and the measured crossover as one
 * vertical line (2.4 wide); the unmeasurable panel says so with the reason and draws no
 * sides; the key names both lines. */
static void
test_crossover_svg(void)
{
    if (!need_plots())
        return;
    CsSelectCrossover predicted = { 0 };
    predicted.size_bytes = 4000;
    predicted.below_bytes = 3996;
    predicted.from
        = (CsSelectChoice){ cs_algo_lookup("recursive_doubling", NULL), -1, CS_PROTO_SIMPLE, 1 };
    predicted.to = (CsSelectChoice){ cs_algo_lookup("ring", NULL), -1, CS_PROTO_SIMPLE, 1 };
    g_autoptr(CsXoverResult) measured = measure_two_lines(&predicted, FALSE);
    g_autoptr(CsXoverResult) refused = measure_two_lines(&predicted, TRUE);
    g_assert_cmpint(measured->status, ==, CS_XOVER_MEASURED);
    g_assert_cmpint(refused->status, ==, CS_XOVER_UNMEASURABLE);
    /* The search found the lines' crossover within its interval. */
    g_assert_cmpint(measured->lo_bytes, <, 16000);
    g_assert_cmpint(measured->hi_bytes, >=, 16000);

    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "crossover.svg", NULL);
    CsXoverResult *results[2] = { measured, refused };
    GBytes *runs[2];
    for (int i = 0; i < 2; i++) {
        g_autoptr(GError) error = NULL;
        g_assert_true(cs_plot_crossovers(results, 2, "mpi", "collsim crossover: test",
                                         "collsim crossover --plot crossover.svg", svg, &error));
        g_assert_no_error(error);
        g_autofree char *data = NULL;
        gsize len = 0;
        g_file_get_contents(svg, &data, &len, &error);
        g_assert_no_error(error);
        runs[i] = g_bytes_new_take(g_steal_pointer(&data), len);
    }
    g_assert_true(g_bytes_equal(runs[0], runs[1]));
    g_autofree char *text = g_strndup(g_bytes_get_data(runs[0], NULL), g_bytes_get_size(runs[0]));
    g_bytes_unref(runs[0]);
    g_bytes_unref(runs[1]);
    assert_xml(text);
    g_autofree char *texts = svg_texts(text);

    g_assert_cmpuint(count_equal_lines(texts, "recursive_doubling/Simple/1ch -> ring/Simple/1ch"),
                     ==, 2);
    g_autofree char *m = cs_units_format_size(measured->measured_bytes);
    g_autofree char *lo = cs_units_format_size(measured->lo_bytes);
    g_autofree char *hi = cs_units_format_size(measured->hi_bytes);
    g_autofree char *status
        = g_strdup_printf("\nmeasured %s in [%s, %s], predicted 4000 B\n", m, lo, hi);
    assert_contains(texts, status);
    assert_contains(texts, "\ncannot be measured on mpi, predicted 4000 B\n");
    assert_contains(texts, "\nring/Simple/1ch: needs NVSwitch multicast and in-switch\n");
    g_assert_cmpuint(count_equal_lines(texts, "predicted crossover"), ==, 2);
    g_assert_cmpuint(count_equal_lines(texts, "measured crossover"), ==, 1);
    g_assert_cmpuint(count_equal_lines(texts, "recursive_doubling/Simple/1ch"), ==, 1);
    g_assert_cmpuint(count_equal_lines(texts, "time (log10 axis)"), ==, 1);
    assert_contains(texts, "message size (bytes, log2 axis)");

    g_autoptr(GArray) sides = polyline_lengths(text, "1.700000e+00");
    guint n_data = 0;
    for (guint i = 0; i < sides->len; i++)
        if (g_array_index(sides, guint, i) > 2) {
            g_assert_cmpuint(g_array_index(sides, guint, i), ==, measured->points->len);
            n_data++;
        }
    g_assert_cmpuint(n_data, ==, 2);
    g_assert_cmpuint(count_vertical_lines(text, "2.400000e+00"), ==, 1);
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* ---- plan ---- */

static gint
fill_by_y(gconstpointer a, gconstpointer b)
{
    const Fill *fa = a, *fb = b;
    return fa->y0 < fb->y0 ? -1 : fa->y0 > fb->y0;
}

/* Setup: tests/data/plan-plot.json (forward: 300 us compute, allreduce 8 MiB x2 on tp, no
 * overlap; backward: 100 us compute overlapping allreduce 64 MiB on dp and allgather 4 MiB x3
 * on tp) on hgx-h100x8-2n and aws-p5-h100x8-2n-efa, as SVG, and the same plan as JSON.
 * Expectation: per candidate one bar of five filled segments stacked without gap, bottom up:
 * forward's compute, its allreduce x2, backward's compute, then backward's exposed time
 * (exposed_us of the JSON) shared by its two collectives in proportion to time x count; each
 * segment's share of its bar and the bars' ratio as the JSON's numbers say (0.5%); the same
 * colour for a part in both bars; each step written on its bar (the second with its ratio to
 * the first); each collective in the key; the same bytes twice; rsvg-convert renders it. */
static void
test_plan_svg(void)
{
    if (!need_plots())
        return;
    const char *root = g_getenv("COLLSIM_SOURCE_ROOT");
    g_assert_nonnull(root);
    g_autofree char *workload = g_build_filename(root, "tests", "data", "plan-plot.json", NULL);
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "plan.svg", NULL);
    const char *args[]
        = { "--workload", workload, "--topo", "hgx-h100x8-2n", "--topo", "aws-p5-h100x8-2n-efa",
            "--plot",     svg,      NULL };
    g_autoptr(GBytes) bytes = run_twice("plan", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_autofree char *texts = svg_texts(text);

    const char *json_args[]
        = { "--workload", workload, "--topo", "hgx-h100x8-2n", "--topo", "aws-p5-h100x8-2n-efa",
            "--format",   "json",   NULL };
    g_auto(CsTestRun) j = cs_test_run_collsim("plan", json_args);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) doc = cJSON_Parse(j.out);
    g_assert_nonnull(doc);
    cJSON *cands = cJSON_GetObjectItem(doc, "candidates");
    g_assert_cmpint(cJSON_GetArraySize(cands), ==, 2);

    /* The bars: groups of fills sharing their left edge that tile a column. */
    g_autoptr(GArray) fills = svg_fills(text);
    g_autoptr(GPtrArray) bars = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; i < fills->len; i++) {
        const Fill *f = &g_array_index(fills, Fill, i);
        GArray *bar = NULL;
        for (guint b = 0; b < bars->len && bar == NULL; b++) {
            GArray *cand = g_ptr_array_index(bars, b);
            if (fabs(g_array_index(cand, Fill, 0).x0 - f->x0) < 0.01
                && fabs(g_array_index(cand, Fill, 0).x1 - f->x1) < 0.01)
                bar = cand;
        }
        if (bar == NULL) {
            bar = g_array_new(FALSE, FALSE, sizeof(Fill));
            g_ptr_array_add(bars, bar);
        }
        g_array_append_val(bar, *f);
    }
    guint n_bars = 0;
    double first_total = 0.0, first_step = 0.0;
    GArray *first_bar = NULL;
    for (guint b = 0; b < bars->len; b++) {
        GArray *bar = g_ptr_array_index(bars, b);
        if (bar->len != 5)
            continue; /* the key's boxes, backgrounds */
        g_array_sort(bar, fill_by_y);
        gboolean tiled = TRUE;
        for (guint i = 1; i < bar->len; i++)
            tiled = tiled
                    && fabs(g_array_index(bar, Fill, i).y0 - g_array_index(bar, Fill, i - 1).y1)
                           < 0.02;
        if (!tiled)
            continue;
        g_assert_cmpuint(n_bars, <, 2);
        cJSON *cand = cJSON_GetArrayItem(cands, (int)n_bars);
        cJSON *phases = cJSON_GetObjectItem(cand, "phases");
        /* The parts the JSON says, in stacking order. */
        double expect[5];
        int k = 0;
        cJSON *ph;
        cJSON_ArrayForEach(ph, phases)
        {
            double comm = cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "comm_us"));
            double exposed = cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "exposed_us"));
            expect[k++] = cJSON_GetNumberValue(cJSON_GetObjectItem(ph, "compute_us"));
            cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItem(ph, "collectives"))
            {
                double t = cJSON_GetNumberValue(cJSON_GetObjectItem(c, "time_us"))
                           * cJSON_GetNumberValue(cJSON_GetObjectItem(c, "count"));
                expect[k++] = t * exposed / comm;
            }
        }
        g_assert_cmpint(k, ==, 5);
        double step = cJSON_GetNumberValue(cJSON_GetObjectItem(cand, "step_us"));
        double total = 0.0;
        for (guint i = 0; i < bar->len; i++)
            total += g_array_index(bar, Fill, i).y1 - g_array_index(bar, Fill, i).y0;
        for (guint i = 0; i < bar->len; i++) {
            const Fill *f = &g_array_index(bar, Fill, i);
            g_assert_cmpfloat_with_epsilon((f->y1 - f->y0) / total, expect[i] / step, 0.005);
            if (first_bar != NULL)
                g_assert_cmpstr(f->fill, ==, g_array_index(first_bar, Fill, i).fill);
        }
        /* The two compute parts are grey alike. */
        g_assert_cmpstr(g_array_index(bar, Fill, 0).fill, ==, g_array_index(bar, Fill, 2).fill);
        g_autofree char *label = cs_units_format_time(step * 1e-6);
        if (first_bar == NULL) {
            first_bar = bar;
            first_total = total;
            first_step = step;
            g_autofree char *line = g_strdup_printf("\n%s\n", label);
            assert_contains(texts, line);
        }
        else {
            g_assert_cmpfloat_with_epsilon(total / first_total, step / first_step, 0.005);
            g_autofree char *line = g_strdup_printf("\n%s (%.3fx)\n", label, step / first_step);
            assert_contains(texts, line);
        }
        n_bars++;
    }
    g_assert_cmpuint(n_bars, ==, 2);
    assert_contains(texts, "\nforward: allreduce 8 MiB x2 (tp)\n");
    assert_contains(texts, "\nbackward: allreduce 64 MiB x1 (dp)\n");
    assert_contains(texts, "\nbackward: allgather 4 MiB x3 (tp)\n");
    assert_contains(texts, "\ncompute\n");
    assert_contains(texts, "\nhgx-h100x8-2n\n");
    assert_contains(texts, "\naws-p5-h100x8-2n-efa\n");
    assert_contains(texts, "\nstep time (ms)\n");
    assert_contains(texts, "collsim plan: test-plot: two phases on tp 8 x dp 2");
    /* No price, no cost. */
    g_assert_null(strstr(texts, "per step"));
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* Setup: the same workload on hgx-h100x8-2n with 8 and 4 NICs per node, priced 3 and 2 per
 * GPU-hour, drawn and printed as JSON. Expectation: each bar carries the JSON's cost per step
 * (4 significant digits), the second with its ratio to the first's. */
static void
test_plan_svg_prices(void)
{
    if (!need_plots())
        return;
    const char *root = g_getenv("COLLSIM_SOURCE_ROOT");
    g_assert_nonnull(root);
    g_autofree char *workload = g_build_filename(root, "tests", "data", "plan-plot.json", NULL);
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "plan.svg", NULL);
    const char *args[] = { "--workload", workload,
                           "--topo",     "hgx-h100x8-2n",
                           "--set",      "network.nics_per_node=8,4",
                           "--price",    "3/gpu-hour",
                           "--price",    "2/gpu-hour",
                           "--plot",     svg,
                           NULL };
    g_autoptr(GBytes) bytes = run_twice("plan", args, svg);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_autofree char *texts = svg_texts(text);
    const char *json_args[] = { "--workload", workload,
                                "--topo",     "hgx-h100x8-2n",
                                "--set",      "network.nics_per_node=8,4",
                                "--price",    "3/gpu-hour",
                                "--price",    "2/gpu-hour",
                                "--format",   "json",
                                NULL };
    g_auto(CsTestRun) j = cs_test_run_collsim("plan", json_args);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) doc = cJSON_Parse(j.out);
    g_assert_nonnull(doc);
    cJSON *cands = cJSON_GetObjectItem(doc, "candidates");
    double per_step[2];
    for (int k = 0; k < 2; k++)
        per_step[k] = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cands, k), "cost"),
                                          "per_step")
                          ->valuedouble;
    g_autofree char *first = g_strdup_printf("\n%.4g per step\n", per_step[0]);
    g_autofree char *second
        = g_strdup_printf("\n%.4g per step (%.3fx)\n", per_step[1], per_step[1] / per_step[0]);
    assert_contains(texts, first);
    assert_contains(texts, second);
    assert_svg_renders(dir, svg);
    rm_dir(dir);
}

/* ---- topo show --dot ---- */

/* Setup: the 4 x H100 box: 4 GPUs, one NVSwitch, each GPU bonded to it by 18 NVLink lanes
 * (450 GB/s datasheet, 371 GB/s usable per direction, alpha 100 ns), both directions alike.
 * Expectation: 5 devices, 4 edges without arrows, each labelled with kind x lanes, both
 * bandwidths and alpha; ranks on the GPUs; the graph closes. Needs no Graphviz (rendered with
 * `dot` where installed). */
static void
test_dot_box(void)
{
    const char *args[] = { "show", "--dot", "dgx-h100x4", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("topo", args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_true(g_str_has_prefix(r.out, "// collsim topo show --dot dgx-h100x4\ndigraph "));
    g_assert_true(g_str_has_suffix(r.out, "}\n"));
    g_assert_cmpuint(count_lines(r.out, " [label=\"gpu"), ==, 4);
    g_assert_cmpuint(count_lines(r.out, "shape=hexagon"), ==, 1);
    g_assert_cmpuint(count_lines(r.out, " -> "), ==, 4);
    g_assert_cmpuint(count_lines(r.out, "dir=none"), ==, 4);
    g_assert_cmpuint(
        count_lines(r.out, "[label=\"nvswitch x18\\n450 GB/s (371 GB/s usable)\\n100 ns\""), ==, 4);
    for (int rank = 0; rank < 4; rank++) {
        g_autofree char *label = g_strdup_printf("\\nrank %d\"", rank);
        g_assert_cmpuint(count_lines(r.out, label), ==, 1);
    }
    g_autofree char *dot = g_find_program_in_path("dot");
    if (dot == NULL)
        return;
    g_autofree char *dir = make_dir();
    g_autofree char *in = g_build_filename(dir, "box.dot", NULL);
    g_file_set_contents(in, r.out, -1, NULL);
    const char *argv[] = { dot, "-Tsvg", "-o/dev/null", in, NULL };
    int wait_status = 0;
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &wait_status,
                 NULL);
    g_assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    rm_dir(dir);
}

/* Setup: 2 x 8 H100 nodes over 8 rails; a NIC's uplink has another alpha each way.
 * Expectation: every directed link is drawn once: edges without arrows count two, the rest
 * one, and they add up to the links `topo show` counts; each node is a cluster. */
static void
test_dot_cluster(void)
{
    const char *args[] = { "show", "--dot", "hgx-h100x8-2n", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("topo", args);
    g_assert_cmpint(r.status, ==, 0);
    const char *show_args[] = { "show", "hgx-h100x8-2n", NULL };
    g_auto(CsTestRun) show = cs_test_run_collsim("topo", show_args);
    g_assert_cmpint(show.status, ==, 0);
    const char *links = strstr(show.out, "\nlinks: ");
    g_assert_nonnull(links);
    guint n_links = (guint)g_ascii_strtoull(links + strlen("\nlinks: "), NULL, 10);
    guint both = count_lines(r.out, "dir=none");
    guint edges = count_lines(r.out, " -> ");
    g_assert_cmpuint(2 * both + (edges - both), ==, n_links);
    g_assert_cmpuint(edges - both, >, 0);
    g_assert_cmpuint(count_lines(r.out, "subgraph cluster_node"), ==, 2);
    g_assert_cmpuint(count_lines(r.out, "\\nrank "), ==, 16);
}

/* Setup: `topo show --plot` of the 4 x H100 box into SVG and PNG, twice; a .gif; no dot on
 * the PATH. Expectation: with Graphviz's dot installed, an SVG naming each rank that
 * rsvg-convert renders, the same bytes twice, and a PNG; a .gif is exit 2 naming the
 * extensions; without dot, exit 1 saying how to install it and nothing written. */
static void
test_dot_plot(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *svg = g_build_filename(dir, "box.svg", NULL);
    g_autofree char *gif = g_build_filename(dir, "box.gif", NULL);
    const char *gif_args[] = { "show", "dgx-h100x4", "--plot", gif, NULL };
    g_auto(CsTestRun) bad = cs_test_run_collsim("topo", gif_args);
    g_assert_cmpint(bad.status, ==, 2);
    g_assert_nonnull(strstr(bad.err, "ends in .svg, .png or .pdf"));

    g_autofree char *path = g_strdup(g_getenv("PATH"));
    g_setenv("PATH", dir, TRUE);
    const char *svg_args[] = { "show", "dgx-h100x4", "--plot", svg, NULL };
    g_auto(CsTestRun) none = cs_test_run_collsim("topo", svg_args);
    g_setenv("PATH", path, TRUE);
    g_assert_cmpint(none.status, ==, 1);
    g_assert_nonnull(strstr(none.err, "Graphviz's dot is not installed"));
    g_assert_false(g_file_test(svg, G_FILE_TEST_EXISTS));

    g_autofree char *dot = g_find_program_in_path("dot");
    if (dot == NULL) {
        g_test_message("Graphviz's dot not installed: nothing drawn");
        rm_dir(dir);
        return;
    }
    g_autofree char *first = NULL;
    g_autofree char *second = NULL;
    for (int k = 0; k < 2; k++) {
        g_auto(CsTestRun) r = cs_test_run_collsim("topo", svg_args);
        g_assert_cmpint(r.status, ==, 0);
        g_assert_true(g_str_has_prefix(r.out, "dgx-h100x4"));
        g_assert_true(g_file_get_contents(svg, k == 0 ? &first : &second, NULL, NULL));
    }
    g_assert_cmpstr(first, ==, second);
    g_assert_nonnull(strstr(first, "<svg"));
    for (int rank = 0; rank < 4; rank++) {
        g_autofree char *label = g_strdup_printf(">rank %d<", rank);
        g_assert_nonnull(strstr(first, label));
    }
    assert_svg_renders(dir, svg);
    g_autofree char *png = g_build_filename(dir, "box.png", NULL);
    const char *png_args[] = { "show", "dgx-h100x4", "--plot", png, NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("topo", png_args);
    g_assert_cmpint(r.status, ==, 0);
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(png, &data, &len, NULL));
    g_autoptr(GBytes) bytes = g_bytes_new_take(g_steal_pointer(&data), len);
    assert_png(bytes, 0, 0);
    rm_dir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/plot/run/all-svg", test_run_all_svg);
    g_test_add_func("/plot/run/best-png", test_run_best_png);
    g_test_add_func("/plot/run/best-svg-legend", test_run_best_svg_legend);
    g_test_add_func("/plot/model/svg", test_model_svg);
    g_test_add_func("/plot/model/pdf", test_model_pdf);
    g_test_add_func("/plot/validate/svg", test_validate_svg);
    g_test_add_func("/plot/select/svg", test_select_svg);
    g_test_add_func("/plot/calibrate/svg", test_calibrate_svg);
    g_test_add_func("/plot/plan/svg", test_plan_svg);
    g_test_add_func("/plot/plan/svg-prices", test_plan_svg_prices);
    g_test_add_func("/plot/crossover/svg", test_crossover_svg);
    g_test_add_func("/plot/errors", test_errors);
    g_test_add_func("/plot/not-built", test_not_built);
    g_test_add_func("/topo/dot/box", test_dot_box);
    g_test_add_func("/topo/dot/cluster", test_dot_cluster);
    g_test_add_func("/topo/dot/plot", test_dot_plot);
    return g_test_run();
}
