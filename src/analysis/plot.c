// SPDX-License-Identifier: MIT
/* Pictures of results through PLplot (https://plplot.sourceforge.net, 5.15): its own SVG
 * driver (text stays text, so a test can read the labels) and its cairo drivers for PNG and
 * PDF. Takes a finished CsReport or the two numbers of Hockney's model; runs nothing. */
#include "config.h"

#include "analysis/plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_PLOTS
#include <plplot.h>
#endif

#include "base/parallel.h"
#include "base/units.h"
#include "models/nccl.h"

G_DEFINE_QUARK(cs_plot_error_quark, cs_plot_error)

static const struct {
    const char *ext;
    CsPlotFormat format;
    const char *device; /* PLplot's driver */
} formats[] = {
    { ".svg", CS_PLOT_FORMAT_SVG, "svg" },
    { ".png", CS_PLOT_FORMAT_PNG, "pngcairo" },
    { ".pdf", CS_PLOT_FORMAT_PDF, "pdfcairo" },
};

gboolean
cs_plot_available(void)
{
#ifdef HAVE_PLOTS
    return TRUE;
#else
    return FALSE;
#endif
}

#ifdef HAVE_PLOTS

/* ---- PLplot set-up ---- */

/* The page, in pixels for the cairo drivers and points for the SVG one. */
#define PAGE_W 1200
#define PAGE_H 720

/* Colour map 0: 0 background, 1 axes and text, 2 grid, 3 and 4 the model's regions, then one
 * colour per algorithm (Okabe and Ito's colour-blind-safe palette, then darker shades). */
enum { COL_BG, COL_FG, COL_GRID, COL_LATENCY, COL_BANDWIDTH, COL_SERIES };
static const guint8 palette[][3] = {
    { 255, 255, 255 }, { 0, 0, 0 },     { 215, 215, 215 }, { 252, 236, 214 },
    { 216, 232, 248 }, { 0, 114, 178 }, { 213, 94, 0 },    { 0, 158, 115 },
    { 204, 121, 167 }, { 230, 159, 0 }, { 86, 180, 233 },  { 120, 120, 120 },
    { 140, 60, 20 },   { 40, 40, 140 }, { 90, 130, 20 },   { 160, 20, 80 },
};
#define N_SERIES_COLOURS ((int)G_N_ELEMENTS(palette) - COL_SERIES)
/* Then a light tint of each series colour (set in canvas_begin_sized()). */
#define COL_TINT ((int)G_N_ELEMENTS(palette))
#define COL_N (COL_TINT + N_SERIES_COLOURS)

/* The first message PLplot's abort handler got while drawing (plabort() returns; its default
 * handler only prints). */
static char *plplot_failure;

static void
on_plplot_abort(PLCHAR_VECTOR message)
{
    if (plplot_failure == NULL)
        plplot_failure = g_strdup(message);
}

static const char *
device_for(CsPlotFormat format)
{
    for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
        if (formats[i].format == format)
            return formats[i].device;
    }
    g_assert_not_reached();
}

/* PLplot asks on stdin for a device it does not know: look first. */
static gboolean
device_installed(const char *device)
{
    const char *menu_array[64];
    const char *name_array[64];
    const char **menus = menu_array;
    const char **names = name_array;
    int n = (int)G_N_ELEMENTS(name_array);
    plgDevs(&menus, &names, &n);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], device) == 0)
            return TRUE;
    }
    return FALSE;
}

#endif

gboolean
cs_plot_check_path(const char *path, CsPlotFormat *format, GError **error)
{
    g_return_val_if_fail(path != NULL, FALSE);
    if (!cs_plot_available()) {
        g_set_error_literal(error, CS_PLOT_ERROR, CS_PLOT_ERROR_UNAVAILABLE,
                            "plots were not built: this collsim was built without PLplot "
                            "(install libplplot-dev and plplot-driver-cairo, then rebuild; "
                            "-Dplots=enabled makes it required)");
        return FALSE;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
        if (!g_str_has_suffix(path, formats[i].ext)) {
            g_autofree char *lower = g_ascii_strdown(path, -1);
            if (!g_str_has_suffix(lower, formats[i].ext))
                continue;
        }
#ifdef HAVE_PLOTS
        if (!device_installed(formats[i].device)) {
            g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_UNAVAILABLE,
                        "PLplot's %s driver is not installed (Debian: plplot-driver-cairo); "
                        ".svg needs no driver",
                        formats[i].device);
            return FALSE;
        }
#endif
        if (format != NULL)
            *format = formats[i].format;
        return TRUE;
    }
    g_set_error_literal(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FORMAT,
                        "the file name must end in .svg, .png or .pdf (the format)");
    return FALSE;
}

#ifdef HAVE_PLOTS

/* A drawing in progress: PLplot writes @tmp_path, renamed to @path when it is complete. */
typedef struct {
    char *path;
    char *tmp_path;
    CsPlotFormat format;
} Canvas;

/* A page of PAGE_W x @height. */
static gboolean
canvas_begin_sized(Canvas *c, const char *path, double height, GError **error)
{
    memset(c, 0, sizeof(*c));
    if (!cs_plot_check_path(path, &c->format, error))
        return FALSE;
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *base = g_path_get_basename(path);
    c->tmp_path = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
    int fd = g_mkstemp(c->tmp_path);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED, "%s: %s", path, g_strerror(e));
        g_clear_pointer(&c->tmp_path, g_free);
        return FALSE;
    }
    close(fd);
    c->path = g_strdup(path);

    g_clear_pointer(&plplot_failure, g_free);
    plsabort(on_plplot_abort);
    plsdev(device_for(c->format));
    plsfnam(c->tmp_path);
    plspage(0.0, 0.0, PAGE_W, (PLINT)height, 0, 0);
    plscmap0n(COL_N);
    for (gsize i = 0; i < G_N_ELEMENTS(palette); i++)
        plscol0((PLINT)i, palette[i][0], palette[i][1], palette[i][2]);
    /* Each series colour mixed 45:55 with white, for filled areas under text. */
    for (int i = 0; i < N_SERIES_COLOURS; i++) {
        const guint8 *rgb = palette[COL_SERIES + i];
        plscol0(COL_TINT + i, (255 * 55 + rgb[0] * 45) / 100, (255 * 55 + rgb[1] * 45) / 100,
                (255 * 55 + rgb[2] * 45) / 100);
    }
    plinit();
    pladv(0);
    plfontld(1);
    /* PLplot scales characters with the page's width + height: a taller page keeps the
     * letters of the standard one. */
    if (height != PAGE_H) {
        PLFLT def, ht;
        plgchr(&def, &ht);
        plschr(def * (PAGE_W + PAGE_H) / (PAGE_W + height), 1.0);
    }
    return TRUE;
}

static gboolean
canvas_begin(Canvas *c, const char *path, GError **error)
{
    return canvas_begin_sized(c, path, PAGE_H, error);
}

/* cairo 1.16 (Debian 12) writes the current time as the PDF's /CreationDate, and PLplot's
 * pdfcairo driver has no way to set it: the date is replaced with the epoch, byte for byte
 * the same length, so the cross-reference offsets stay valid and the same input gives the
 * same file. */
static gboolean
pdf_fix_date(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, error))
        return FALSE;
    static const char key[] = "/CreationDate (D:";
    /* memmem, not g_strstr_len(): the compressed streams before the info hold NUL bytes. */
    char *p = memmem(data, len, key, strlen(key));
    if (p == NULL)
        return TRUE;
    p += strlen(key);
    static const char epoch[] = "19700101000000";
    gsize room = len - (gsize)(p - data);
    for (gsize i = 0; i < strlen(epoch) && i < room && g_ascii_isdigit(p[i]); i++)
        p[i] = epoch[i];
    return g_file_set_contents(path, data, (gssize)len, error);
}

static gboolean
canvas_end(Canvas *c, GError **error)
{
    plend();
    gboolean ok = TRUE;
    if (plplot_failure != NULL) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED, "%s: PLplot: %s", c->path,
                    plplot_failure);
        ok = FALSE;
    }
    if (ok && c->format == CS_PLOT_FORMAT_PDF) {
        GError *local = NULL;
        if (!pdf_fix_date(c->tmp_path, &local)) {
            g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED, "%s: %s", c->path,
                        local->message);
            g_error_free(local);
            ok = FALSE;
        }
    }
    GStatBuf st;
    if (ok && (g_stat(c->tmp_path, &st) != 0 || st.st_size == 0)) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED,
                    "%s: PLplot wrote nothing (disk full?)", c->path);
        ok = FALSE;
    }
    /* mkstemp made the file 0600; a picture is as readable as any file the user writes. */
    if (ok) {
        mode_t mask = umask(0);
        umask(mask);
        g_chmod(c->tmp_path, 0666 & ~mask);
    }
    if (ok && g_rename(c->tmp_path, c->path) != 0) {
        int e = errno;
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED, "%s: %s", c->path, g_strerror(e));
        ok = FALSE;
    }
    if (!ok)
        g_unlink(c->tmp_path);
    g_free(c->tmp_path);
    g_free(c->path);
    g_clear_pointer(&plplot_failure, g_free);
    return ok;
}

/* ---- Axes ---- */

/* Custom tick labels: x is log2 bytes ("8 B", "64 KiB", "8 GiB"), y of the model log10
 * seconds ("10 us"); busbw's y is PLplot's own. */
static void
label_axis(PLINT axis, PLFLT value, PLCHAR_NC_VECTOR label, PLINT length, PLPointer data)
{
    gboolean model = GPOINTER_TO_INT(data);
    g_autofree char *text = NULL;
    if (axis == PL_X_AXIS)
        text = cs_units_format_size((gint64)llround(exp2(value)));
    else if (model)
        text = cs_units_format_time(pow(10.0, value));
    else
        text = g_strdup_printf("%g", value);
    g_strlcpy(label, text, (gsize)length);
}

/* A tick every 1, 2, 3, 5 or 10 doublings, at most 11 labels; the range widened to at
 * least two doublings about its middle, then to whole ticks so both ends are labelled.
 * Returns the tick. */
static double
log2_range(double *xmin, double *xmax)
{
    if (*xmax - *xmin < 2.0) {
        *xmin -= 1.0;
        *xmax += 1.0;
    }
    static const double steps[] = { 1, 2, 3, 5, 10 };
    double step = 10.0;
    for (gsize i = 0; i < G_N_ELEMENTS(steps); i++) {
        double lo = floor(*xmin / steps[i]) * steps[i];
        double hi = ceil(*xmax / steps[i]) * steps[i];
        if ((hi - lo) / steps[i] <= 10.0) {
            step = steps[i];
            break;
        }
    }
    *xmin = floor(*xmin / step) * step;
    *xmax = ceil(*xmax / step) * step;
    return step;
}

/* The window, a light grid, then the box with labels over it. */
static void
draw_axes_opts(double xmin, double xmax, double xtick, const char *xopt, double ymin, double ymax,
               const char *yopt, double ytick, gboolean model)
{
    plwind(xmin, xmax, ymin, ymax);
    plslabelfunc(label_axis, GINT_TO_POINTER(model));
    plwidth(1.0);
    plcol0(COL_GRID);
    plbox("g", xtick, 0, "g", ytick, 0);
    plcol0(COL_FG);
    plschr(0.0, 0.7);
    plbox(xopt, xtick, (PLINT)xtick, yopt, ytick, 0);
}

static void
draw_axes(double xmin, double xmax, double xtick, double ymin, double ymax, const char *yopt,
          double ytick, gboolean model)
{
    draw_axes_opts(xmin, xmax, xtick, "bcnsto", ymin, ymax, yopt, ytick, model);
}

/* The command under the title, cut to what the page holds ("..." at the end). */
#define SUBTITLE_MAX_CHARS 120

static char *
fit_subtitle(const char *subtitle)
{
    if (g_utf8_strlen(subtitle, -1) <= SUBTITLE_MAX_CHARS)
        return g_strdup(subtitle);
    g_autofree char *head = g_utf8_substring(subtitle, 0, SUBTITLE_MAX_CHARS - 3);
    return g_strconcat(head, "...", NULL);
}

/* The title and, under it, the command, above the current viewport; @disp (character
 * heights) lifts both over what lies between them and the viewport. */
static void
draw_heading(const char *title, const char *subtitle, double disp)
{
    plcol0(COL_FG);
    plschr(0.0, 0.95);
    plmtex("t", disp + (subtitle != NULL ? 3.0 : 1.5), 0.5, 0.5, title);
    if (subtitle != NULL) {
        g_autofree char *line = fit_subtitle(subtitle);
        plschr(0.0, 0.65);
        plmtex("t", disp + 1.5, 0.5, 0.5, line);
    }
}

static void
draw_titles(const char *title, const char *subtitle, const char *xlabel, const char *ylabel,
            double ylabel_disp)
{
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("b", 3.0, 0.5, 0.5, xlabel);
    plmtex("l", ylabel_disp, 0.5, 0.5, ylabel);
    draw_heading(title, subtitle, 0.0);
    plschr(0.0, 0.8);
}

/* ---- busbw against size ---- */

/* One line of the picture: points in size order, each with its choice. */
typedef struct {
    char *label;
    gboolean best;
    GArray *x;       /* double, log2 bytes */
    GArray *y;       /* double, busbw GB/s */
    GArray *time_us; /* double */
    GPtrArray *keys; /* const char *, "algo/proto" of each point (interned) */
} Series;

static void
series_free(Series *s)
{
    g_free(s->label);
    g_array_unref(s->x);
    g_array_unref(s->y);
    g_array_unref(s->time_us);
    g_ptr_array_unref(s->keys);
    g_free(s);
}

static Series *
series_new(const char *label, gboolean best)
{
    Series *s = g_new0(Series, 1);
    s->label = g_strdup(label);
    s->best = best;
    s->x = g_array_new(FALSE, FALSE, sizeof(double));
    s->y = g_array_new(FALSE, FALSE, sizeof(double));
    s->time_us = g_array_new(FALSE, FALSE, sizeof(double));
    s->keys = g_ptr_array_new();
    return s;
}

static const char *
choice_key(const CsPrediction *p)
{
    g_autofree char *key = g_strdup_printf("%s/%s", p->algo->name, cs_proto_name(p->proto));
    return g_intern_string(key);
}

static void
series_add(Series *s, const CsPrediction *p)
{
    double x = log2((double)p->size.size_bytes);
    g_array_append_val(s->x, x);
    g_array_append_val(s->y, p->busbw_GBps);
    g_array_append_val(s->time_us, p->time_us);
    g_ptr_array_add(s->keys, (gpointer)choice_key(p));
}

#define SX(s, i) g_array_index((s)->x, double, (i))
#define SY(s, i) g_array_index((s)->y, double, (i))

/* Colour by algorithm, dash by protocol: "ring/LL128" -> a colour and a PLplot line style. */
typedef struct {
    GPtrArray *algos; /* const char * (interned), in order of first appearance */
    guint protos;     /* line styles used: bit 1 << style */
} Styles;

static void
style_of(Styles *st, const char *key, PLINT *colour, PLINT *line_style)
{
    const char *slash = strrchr(key, '/');
    g_autofree char *algo = slash != NULL ? g_strndup(key, (gsize)(slash - key)) : g_strdup(key);
    const char *a = g_intern_string(algo);
    guint i;
    if (!g_ptr_array_find(st->algos, a, &i)) {
        g_ptr_array_add(st->algos, (gpointer)a);
        i = st->algos->len - 1;
    }
    *colour = COL_SERIES + (PLINT)(i % N_SERIES_COLOURS);
    const char *proto = slash != NULL ? slash + 1 : "";
    /* PLplot styles: 1 solid, 2 short dashes, 3 long dashes. */
    *line_style = strcmp(proto, "LL") == 0 ? 2 : strcmp(proto, "LL128") == 0 ? 3 : 1;
    st->protos |= 1u << *line_style;
}

static void
segment(double x0, double y0, double x1, double y1)
{
    PLFLT xs[2] = { x0, x1 };
    PLFLT ys[2] = { y0, y1 };
    plline(2, xs, ys);
}

static void
set_pen(PLINT colour, PLINT line_style, double width)
{
    plcol0(colour);
    pllsty(line_style);
    plwidth(width);
}

/* Series @s bold around point @i: halfway to each neighbour (a lone point as a dot). */
static void
draw_bold_point(const Series *s, guint i)
{
    if (i > 0)
        segment((SX(s, i - 1) + SX(s, i)) / 2, (SY(s, i - 1) + SY(s, i)) / 2, SX(s, i), SY(s, i));
    if (i + 1 < s->x->len)
        segment(SX(s, i), SY(s, i), (SX(s, i) + SX(s, i + 1)) / 2, (SY(s, i) + SY(s, i + 1)) / 2);
    if (s->x->len == 1) {
        PLFLT x = SX(s, i), y = SY(s, i);
        plpoin(1, &x, &y, 17);
    }
}

/* The key, right of the plot: a colour per algorithm, a dash per protocol, and what bold
 * means. */
static void
draw_legend(const Styles *st, const char *bold)
{
    static const struct {
        PLINT style;
        const char *text;
    } protos[] = { { 1, "Simple" }, { 3, "LL128" }, { 2, "LL" } };
    PLINT n = (PLINT)st->algos->len + (PLINT)G_N_ELEMENTS(protos) + 1;
    g_autofree PLINT *opts = g_new0(PLINT, n);
    g_autofree PLINT *text_colours = g_new0(PLINT, n);
    g_autofree PLINT *line_colours = g_new0(PLINT, n);
    g_autofree PLINT *line_styles = g_new0(PLINT, n);
    g_autofree PLFLT *line_widths = g_new0(PLFLT, n);
    g_autofree const char **texts = g_new0(const char *, n);
    PLINT k = 0;
    for (guint i = 0; i < st->algos->len; i++, k++) {
        texts[k] = g_ptr_array_index(st->algos, i);
        line_colours[k] = COL_SERIES + (PLINT)(i % N_SERIES_COLOURS);
        line_styles[k] = 1;
        line_widths[k] = 2.0;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(protos); i++) {
        if ((st->protos & (1u << protos[i].style)) == 0)
            continue;
        texts[k] = protos[i].text;
        line_colours[k] = COL_FG;
        line_styles[k] = protos[i].style;
        line_widths[k] = 1.2;
        k++;
    }
    texts[k] = bold;
    line_colours[k] = COL_FG;
    line_styles[k] = 1;
    line_widths[k] = 3.5;
    k++;
    for (PLINT i = 0; i < k; i++) {
        opts[i] = PL_LEGEND_LINE;
        text_colours[i] = COL_FG;
    }
    PLFLT w, h;
    plschr(0.0, 0.7);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.015, 0.0, 0.06, COL_BG, COL_FG, 1, 0, 1, k,
             opts, 1.0, 0.6, 1.8, 0.0, text_colours, texts, NULL, NULL, NULL, NULL, line_colours,
             line_styles, line_widths, NULL, NULL, NULL, NULL);
}

/* The fastest series at x (NULL where none has a point there). */
static const Series *
fastest_at(const GPtrArray *series, double x)
{
    const Series *best = NULL;
    double best_t = INFINITY;
    for (guint k = 0; k < series->len; k++) {
        const Series *s = g_ptr_array_index(series, k);
        for (guint i = 0; i < s->x->len; i++) {
            double t = g_array_index(s->time_us, double, i);
            if (SX(s, i) == x && t < best_t) {
                best = s;
                best_t = t;
            }
        }
    }
    return best;
}

gboolean
cs_plot_report(const CsReport *report, const char *title, const char *subtitle, const char *path,
               GError **error)
{
    g_return_val_if_fail(report != NULL && title != NULL && path != NULL, FALSE);
    /* Under mpirun, rank 0 alone writes files (every rank holds the same results). */
    if (cs_parallel_rank() > 0)
        return TRUE;

    /* The best blocks make one line in size order (NCCL's pick comes in several blocks). */
    g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func((GDestroyNotify)series_free);
    g_autoptr(GArray) best_rows = g_array_new(FALSE, FALSE, sizeof(CsPrediction));
    for (gsize b = 0; b < cs_report_n_blocks(report); b++) {
        gboolean best = cs_report_block_is_best(report, b);
        Series *s = best ? NULL : series_new(cs_report_block_label(report, b), FALSE);
        for (gsize r = 0; r < cs_report_block_n_rows(report, b); r++) {
            const CsPrediction *p = cs_report_block_row(report, b, r);
            if (p->size.size_bytes <= 0 || p->algo == NULL)
                continue; /* no place on a log axis */
            if (best)
                g_array_append_val(best_rows, *p);
            else
                series_add(s, p);
        }
        if (s != NULL && s->x->len > 0)
            g_ptr_array_add(series, s);
        else if (s != NULL)
            series_free(s);
    }
    Series *chosen = NULL;
    if (best_rows->len > 0) {
        chosen = series_new("best", TRUE);
        /* Stable: rows of equal size keep their order. */
        for (guint i = 1; i < best_rows->len; i++) {
            CsPrediction p = g_array_index(best_rows, CsPrediction, i);
            guint j = i;
            while (j > 0
                   && g_array_index(best_rows, CsPrediction, j - 1).size.size_bytes
                          > p.size.size_bytes) {
                g_array_index(best_rows, CsPrediction, j)
                    = g_array_index(best_rows, CsPrediction, j - 1);
                j--;
            }
            g_array_index(best_rows, CsPrediction, j) = p;
        }
        for (guint i = 0; i < best_rows->len; i++)
            series_add(chosen, &g_array_index(best_rows, CsPrediction, i));
        g_ptr_array_add(series, chosen);
    }
    if (series->len == 0) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED,
                    "%s: nothing to plot (no prediction at a size above 0 bytes)", path);
        return FALSE;
    }

    double xmin = INFINITY, xmax = -INFINITY, ymax = 0.0;
    for (guint k = 0; k < series->len; k++) {
        const Series *s = g_ptr_array_index(series, k);
        for (guint i = 0; i < s->x->len; i++) {
            xmin = MIN(xmin, SX(s, i));
            xmax = MAX(xmax, SX(s, i));
            ymax = MAX(ymax, SY(s, i));
        }
    }
    double xtick = log2_range(&xmin, &xmax);
    ymax = ymax > 0.0 ? ymax * 1.08 : 1.0;

    Canvas c;
    if (!canvas_begin(&c, path, error))
        return FALSE;
    plvpor(0.08, 0.74, 0.11, 0.86);
    draw_axes(xmin, xmax, xtick, 0.0, ymax, "bcnstv", 0.0, FALSE);
    draw_titles(title, subtitle, "message size (bytes, log2 axis)", "busbw (GB/s)", 4.6);

    Styles st = { g_ptr_array_new(), 0 };
    for (guint k = 0; k < series->len; k++) {
        const Series *s = g_ptr_array_index(series, k);
        if (s->best)
            continue;
        PLINT colour, line_style;
        style_of(&st, s->label, &colour, &line_style);
        set_pen(colour, line_style, 1.2);
        plline((PLINT)s->x->len, (PLFLT *)(void *)s->x->data, (PLFLT *)(void *)s->y->data);
        /* With no best block, the fastest line at each size is the chosen one: bold from each
         * of its points halfway to its neighbours. */
        if (chosen == NULL) {
            set_pen(colour, line_style, 3.5);
            for (guint i = 0; i < s->x->len; i++) {
                if (fastest_at(series, SX(s, i)) == s)
                    draw_bold_point(s, i);
            }
        }
    }
    if (chosen != NULL) {
        for (guint i = 0; i < chosen->x->len; i++) {
            PLINT colour, line_style;
            style_of(&st, g_ptr_array_index(chosen->keys, i), &colour, &line_style);
            set_pen(colour, line_style, 3.5);
            draw_bold_point(chosen, i);
        }
    }
    pllsty(1);
    plwidth(1.0);
    draw_legend(&st, chosen != NULL ? "bold: the choice per size" : "bold: the fastest");
    g_ptr_array_unref(st.algos);
    return canvas_end(&c, error);
}

/* ---- Hockney's model ---- */

/* "8.58 MiB"; whole bytes below 1 KiB. */
static char *
format_bytes(double bytes)
{
    static const char *const names[] = { "KiB", "MiB", "GiB", "TiB" };
    double v = bytes;
    int u = -1;
    while (v >= 1024.0 && u < (int)G_N_ELEMENTS(names) - 1) {
        v /= 1024.0;
        u++;
    }
    return u < 0 ? g_strdup_printf("%.0f B", bytes) : g_strdup_printf("%.3g %s", v, names[u]);
}

gboolean
cs_plot_model(double alpha_s, double bw_Bps, gint64 min_bytes, gint64 max_bytes,
              const char *subtitle, const char *path, GError **error)
{
    g_return_val_if_fail(min_bytes > 0 && max_bytes >= min_bytes && bw_Bps > 0.0, FALSE);
    double xmin = log2((double)min_bytes);
    double xmax = log2((double)max_bytes);
    if (xmax - xmin < 2.0)
        xmax = xmin + 2.0;
    double xtick = log2_range(&xmin, &xmax);
    double n_half = alpha_s * bw_Bps;

    /* The curves on 400 points evenly spaced in log2 size. */
    enum { N = 400 };
    PLFLT xs[N], total[N], alpha_term[N], beta_term[N];
    double tmin = INFINITY, tmax = 0.0;
    for (int i = 0; i < N; i++) {
        xs[i] = xmin + (xmax - xmin) * i / (N - 1);
        double n = exp2(xs[i]);
        double a = alpha_s;
        double b = n / bw_Bps;
        total[i] = log10(a + b);
        alpha_term[i] = a > 0.0 ? log10(a) : -INFINITY;
        beta_term[i] = log10(b);
        tmin = MIN(tmin, MIN(b, a > 0.0 ? a : b));
        tmax = MAX(tmax, a + b);
    }
    /* Two decades under the smallest T(n): the n/B line below it is clipped. */
    double ymin = MAX(floor(log10(tmin)), floor(log10(alpha_s + exp2(xmin) / bw_Bps)) - 2.0);
    double ymax = ceil(log10(tmax));
    if (ymax - ymin < 1.0)
        ymax = ymin + 1.0;
    for (int i = 0; i < N; i++)
        alpha_term[i] = MAX(alpha_term[i], ymin);

    g_autofree char *alpha = cs_units_format_time(alpha_s);
    g_autofree char *bw = cs_units_format_bandwidth(bw_Bps);
    g_autofree char *title
        = g_strdup_printf("One link, Hockney: T(n) = alpha + n/B, alpha = %s, B = %s", alpha, bw);

    Canvas c;
    if (!canvas_begin(&c, path, error))
        return FALSE;
    plvpor(0.1, 0.76, 0.11, 0.86);
    plwind(xmin, xmax, ymin, ymax);

    /* The regions first, under everything. */
    double xh = n_half > 0.0 ? log2(n_half) : xmin;
    double xh_clamped = CLAMP(xh, xmin, xmax);
    if (xh_clamped > xmin) {
        PLFLT rx[4] = { xmin, xh_clamped, xh_clamped, xmin };
        PLFLT ry[4] = { ymin, ymin, ymax, ymax };
        plcol0(COL_LATENCY);
        plfill(4, rx, ry);
    }
    if (xh_clamped < xmax) {
        PLFLT rx[4] = { xh_clamped, xmax, xmax, xh_clamped };
        PLFLT ry[4] = { ymin, ymin, ymax, ymax };
        plcol0(COL_BANDWIDTH);
        plfill(4, rx, ry);
    }
    draw_axes(xmin, xmax, xtick, ymin, ymax, "bcnstvo", 1.0, TRUE);
    draw_titles(title, subtitle, "message size n (bytes, log2 axis)", "time (log10 axis)", 6.2);

    plschr(0.0, 0.7);
    plcol0(COL_FG);
    double ytop = ymax - 0.06 * (ymax - ymin);
    double ynext = ymax - 0.11 * (ymax - ymin);
    if (xh_clamped > xmin) {
        plptex((xmin + xh_clamped) / 2, ytop, 1.0, 0.0, 0.5, "latency-bound");
        plptex((xmin + xh_clamped) / 2, ynext, 1.0, 0.0, 0.5, "(alpha > n/B)");
    }
    if (xh_clamped < xmax) {
        plptex((xh_clamped + xmax) / 2, ytop, 1.0, 0.0, 0.5, "bandwidth-bound");
        plptex((xh_clamped + xmax) / 2, ynext, 1.0, 0.0, 0.5, "(n/B > alpha)");
    }

    set_pen(COL_SERIES + 0, 2, 1.5);
    plline(N, xs, alpha_term);
    set_pen(COL_SERIES + 1, 3, 1.5);
    plline(N, xs, beta_term);
    set_pen(COL_FG, 1, 3.0);
    plline(N, xs, total);

    if (xh > xmin && xh < xmax) {
        set_pen(COL_FG, 2, 1.0);
        segment(xh, ymin, xh, ymax);
        double yh = log10(2.0 * alpha_s);
        PLFLT px = xh, py = yh;
        plcol0(COL_FG);
        plpoin(1, &px, &py, 17);
        g_autofree char *size = format_bytes(n_half);
        g_autofree char *label = g_strdup_printf("n#d1/2#u = alpha*B = %s, T = 2 alpha  ", size);
        plschr(0.0, 0.7);
        plptex(xh, yh + 0.04 * (ymax - ymin), 1.0, 0.0, 1.0, label);
    }
    pllsty(1);
    plwidth(1.0);

    const char *texts[3] = { "T(n) = alpha + n/B", "alpha", "n/B" };
    PLINT opts[3] = { PL_LEGEND_LINE, PL_LEGEND_LINE, PL_LEGEND_LINE };
    PLINT text_colours[3] = { COL_FG, COL_FG, COL_FG };
    PLINT line_colours[3] = { COL_FG, COL_SERIES + 0, COL_SERIES + 1 };
    PLINT line_styles[3] = { 1, 2, 3 };
    PLFLT line_widths[3] = { 3.0, 1.5, 1.5 };
    PLFLT legend_w, legend_h;
    plschr(0.0, 0.8);
    pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.015, 0.0, 0.06, COL_BG, COL_FG, 1, 0, 1, 3,
             opts, 1.0, 0.6, 1.8, 0.0, text_colours, texts, NULL, NULL, NULL, NULL, line_colours,
             line_styles, line_widths, NULL, NULL, NULL, NULL);
    return canvas_end(&c, error);
}

/* ---- Validation ---- */

/* The size regimes of the validation summary, shaded in both panels. */
static void
shade_regimes(double xmin, double xmax, double ymin, double ymax)
{
    double lat = log2((double)CS_VALIDATE_LATENCY_MAX_BYTES);
    double bw = log2((double)CS_VALIDATE_BANDWIDTH_MIN_BYTES);
    if (xmin < lat) {
        PLFLT rx[4] = { xmin, MIN(lat, xmax), MIN(lat, xmax), xmin };
        PLFLT ry[4] = { ymin, ymin, ymax, ymax };
        plcol0(COL_LATENCY);
        plfill(4, rx, ry);
    }
    if (xmax > bw) {
        PLFLT rx[4] = { MAX(bw, xmin), xmax, xmax, MAX(bw, xmin) };
        PLFLT ry[4] = { ymin, ymin, ymax, ymax };
        plcol0(COL_BANDWIDTH);
        plfill(4, rx, ry);
    }
}

/* The rows of @r above 0 bytes as x (log2 bytes), measured and predicted busbw (GB/s). */
static void
report_series(const CsValidateReport *r, GArray *xs, GArray *meas, GArray *pred)
{
    for (guint i = 0; i < r->rows->len; i++) {
        const CsValidateRow *row = &g_array_index(r->rows, CsValidateRow, i);
        if (row->size_bytes <= 0)
            continue;
        double x = log2((double)row->size_bytes);
        g_array_append_val(xs, x);
        g_array_append_val(meas, row->measured_busbw_GBps);
        g_array_append_val(pred, row->predicted_busbw_GBps);
    }
}

gboolean
cs_plot_validate(CsValidateReport *const *reports, int n_reports, const char *title,
                 const char *subtitle, const char *path, GError **error)
{
    g_return_val_if_fail(reports != NULL && title != NULL && path != NULL, FALSE);
    /* Under mpirun, rank 0 alone writes files (every rank holds the same results). */
    if (cs_parallel_rank() > 0)
        return TRUE;
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0.0, emax = 0.0;
    for (int k = 0; k < n_reports; k++) {
        const GArray *rows = reports[k]->rows;
        for (guint i = 0; i < rows->len; i++) {
            const CsValidateRow *r = &g_array_index(rows, CsValidateRow, i);
            if (r->size_bytes <= 0)
                continue;
            double x = log2((double)r->size_bytes);
            xmin = MIN(xmin, x);
            xmax = MAX(xmax, x);
            ymax = MAX(ymax, MAX(r->measured_busbw_GBps, r->predicted_busbw_GBps));
            if (isfinite(r->busbw_error))
                emax = MAX(emax, fabs(r->busbw_error) * 100.0);
        }
    }
    if (!isfinite(xmin)) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED,
                    "%s: nothing to plot (no row above 0 bytes was predicted)", path);
        return FALSE;
    }
    double xtick = log2_range(&xmin, &xmax);
    ymax = ymax > 0.0 ? ymax * 1.08 : 1.0;
    /* The error panel: symmetric about 0, at least +-10%, in steps of 10, 20 or 50%. */
    emax = MAX(10.0, emax * 1.1);
    double etick = emax <= 40.0 ? 10.0 : emax <= 100.0 ? 20.0 : 50.0;
    emax = ceil(emax / etick) * etick;

    Canvas c;
    if (!canvas_begin(&c, path, error))
        return FALSE;

    /* Top: busbw, measured points over predicted lines. */
    plvpor(0.08, 0.94, 0.40, 0.86);
    plwind(xmin, xmax, 0.0, ymax);
    shade_regimes(xmin, xmax, 0.0, ymax);
    draw_axes_opts(xmin, xmax, xtick, "bcsto", 0.0, ymax, "bcnstv", 0.0, FALSE);
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("l", 4.6, 0.5, 0.5, "busbw (GB/s)");
    draw_heading(title, subtitle, 0.0);
    plssym(0.0, 0.7);
    for (int k = 0; k < n_reports; k++) {
        g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) pred = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) meas = g_array_new(FALSE, FALSE, sizeof(double));
        report_series(reports[k], xs, meas, pred);
        PLINT colour = COL_SERIES + (PLINT)(k % N_SERIES_COLOURS);
        set_pen(colour, 1, 2.0);
        plline((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)pred->data);
        plwidth(1.5);
        plpoin((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)meas->data, 4);
    }
    plwidth(1.0);

    /* The key, inside the top panel's upper left (small sizes have small busbw). */
    PLINT n = n_reports + 1;
    g_autofree PLINT *opts = g_new0(PLINT, n);
    g_autofree PLINT *text_colours = g_new0(PLINT, n);
    g_autofree PLINT *line_colours = g_new0(PLINT, n);
    g_autofree PLINT *line_styles = g_new0(PLINT, n);
    g_autofree PLFLT *line_widths = g_new0(PLFLT, n);
    g_autofree const char **texts = g_new0(const char *, n);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (int k = 0; k < n_reports; k++) {
        char *base = g_path_get_basename(reports[k]->origin);
        g_ptr_array_add(names, base);
        opts[k] = PL_LEGEND_LINE;
        texts[k] = base;
        line_colours[k] = COL_SERIES + (PLINT)(k % N_SERIES_COLOURS);
        line_styles[k] = 1;
        line_widths[k] = 2.0;
    }
    opts[n - 1] = PL_LEGEND_NONE;
    texts[n - 1] = "circles measured, lines predicted; shaded: < 64 KiB, >= 64 MiB";
    for (PLINT i = 0; i < n; i++)
        text_colours[i] = COL_FG;
    PLFLT w, h;
    plschr(0.0, 0.7);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 0.02, 0.03, 0.06, COL_BG,
             COL_FG, 1, 0, 1, n, opts, 1.0, 0.6, 1.8, 0.0, text_colours, texts, NULL, NULL, NULL,
             NULL, line_colours, line_styles, line_widths, NULL, NULL, NULL, NULL);

    /* Bottom: the busbw error of each row, (predicted - measured) / measured. */
    plvpor(0.08, 0.94, 0.11, 0.36);
    plwind(xmin, xmax, -emax, emax);
    shade_regimes(xmin, xmax, -emax, emax);
    draw_axes_opts(xmin, xmax, xtick, "bcnsto", -emax, emax, "bcnstv", etick, FALSE);
    set_pen(COL_FG, 1, 1.0);
    segment(xmin, 0.0, xmax, 0.0);
    for (int k = 0; k < n_reports; k++) {
        const GArray *rows = reports[k]->rows;
        g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) err = g_array_new(FALSE, FALSE, sizeof(double));
        for (guint i = 0; i < rows->len; i++) {
            const CsValidateRow *r = &g_array_index(rows, CsValidateRow, i);
            if (r->size_bytes <= 0 || !isfinite(r->busbw_error))
                continue;
            double x = log2((double)r->size_bytes);
            double e = CLAMP(r->busbw_error * 100.0, -emax, emax);
            g_array_append_val(xs, x);
            g_array_append_val(err, e);
        }
        set_pen(COL_SERIES + (PLINT)(k % N_SERIES_COLOURS), 1, 1.0);
        plline((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)err->data);
        plpoin((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)err->data, 4);
    }
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("l", 4.6, 0.5, 0.5, "busbw error (%)");
    plmtex("b", 3.0, 0.5, 0.5, "message size (bytes, log2 axis)");
    return canvas_end(&c, error);
}

/* ---- Bands: a choice per stretch of sizes ---- */

/* Colour keys in order of first appearance: "ring/LL128" -> a colour index. */
static PLINT
key_colour(GPtrArray *keys, const char *key)
{
    const char *k = g_intern_string(key);
    guint i;
    if (!g_ptr_array_find(keys, k, &i)) {
        g_ptr_array_add(keys, (gpointer)k);
        i = keys->len - 1;
    }
    return (PLINT)(i % N_SERIES_COLOURS);
}

/* Millimetres per world unit along x in the current viewport and window. */
static double
mm_per_x(void)
{
    PLFLT sx0, sx1, sy0, sy1, vx0, vx1, vy0, vy1, wx0, wx1, wy0, wy1;
    plgspa(&sx0, &sx1, &sy0, &sy1);
    plgvpd(&vx0, &vx1, &vy0, &vy1);
    plgvpw(&wx0, &wx1, &wy0, &wy1);
    return (vx1 - vx0) * (sx1 - sx0) / (wx1 - wx0);
}

/* About how wide @text is in millimetres at the current character height. */
static double
text_mm(const char *text)
{
    PLFLT def, ht;
    plgchr(&def, &ht);
    return 0.62 * ht * (double)g_utf8_strlen(text, -1);
}

/* One stretch [@x0, @x1] of a band [@y0, @y1] filled in the tint of @colour, edged, and
 * named inside when the name fits. */
static void
draw_band(double x0, double x1, double y0, double y1, PLINT colour, const char *name)
{
    PLFLT rx[4] = { x0, x1, x1, x0 };
    PLFLT ry[4] = { y0, y0, y1, y1 };
    plcol0(COL_TINT + colour);
    plfill(4, rx, ry);
    set_pen(COL_FG, 1, 0.6);
    segment(x0, y0, x0, y1);
    segment(x1, y0, x1, y1);
    plschr(0.0, 0.6);
    if (name != NULL && text_mm(name) + 2.0 < (x1 - x0) * mm_per_x()) {
        plcol0(COL_FG);
        plptex((x0 + x1) / 2, (y0 + y1) / 2 - 0.08 * (y1 - y0), 1.0, 0.0, 0.5, name);
    }
}

/* "ring/LL128": a choice's algorithm (collsim's name, NCCL's mapped to it) and protocol. */
static char *
select_key(const CsSelectChoice *c)
{
    const char *algo = c->algo != NULL     ? c->algo->name
                       : c->nccl_algo >= 0 ? cs_nccl_algo_collsim_name((CsNcclAlgo)c->nccl_algo)
                                           : NULL;
    if (algo == NULL)
        return g_strdup("none");
    return g_strdup_printf("%s/%s", algo, cs_proto_name(c->proto));
}

/* The ranges of @ranges as one band [@y0, @y1], clipped to [@lo, @hi] (log2 bytes). */
static void
draw_ranges(const GArray *ranges, double lo, double hi, double y0, double y1, GPtrArray *keys)
{
    for (guint i = 0; i < ranges->len; i++) {
        const CsSelectRange *r = &g_array_index(ranges, CsSelectRange, i);
        double x0 = r->min_bytes > 0 ? log2((double)r->min_bytes) : lo;
        /* A range ends where the next one starts. */
        double x1 = i + 1 < ranges->len
                        ? log2((double)g_array_index(ranges, CsSelectRange, i + 1).min_bytes)
                        : hi;
        x0 = CLAMP(x0, lo, hi);
        x1 = CLAMP(x1, lo, hi);
        if (x1 <= x0)
            continue;
        g_autofree char *key = select_key(&r->choice);
        draw_band(x0, x1, y0, y1, key_colour(keys, key), key);
    }
}

/* Crossover labels above a panel: up to three rows, each label in the first row where it
 * clears the one before. */
#define LABEL_ROWS 3

static void
draw_crossover_label(double x, double xmin, double xmax, const char *label, double *row_end)
{
    double mm = mm_per_x();
    double half = (text_mm(label) / 2 + 2.0) / mm;
    int row = LABEL_ROWS - 1;
    for (int k = 0; k < LABEL_ROWS; k++) {
        if (x - half > row_end[k]) {
            row = k;
            break;
        }
    }
    row_end[row] = x + half;
    plcol0(COL_FG);
    plmtex("t", 0.6 + 1.3 * row, (x - xmin) / (xmax - xmin), 0.5, label);
}

/* The key of a banded figure, under the current viewport's top edge in @n_columns columns,
 * row by row: a colour box per choice, then @lines (a line each, none where the width is 0). */
static void
draw_band_legend(const GPtrArray *keys, const char *const *lines, const PLFLT *line_widths_in,
                 int n_lines, int n_columns)
{
    PLINT n = (PLINT)keys->len + n_lines;
    g_autofree PLINT *opts = g_new0(PLINT, n);
    g_autofree PLINT *text_colours = g_new0(PLINT, n);
    g_autofree PLINT *box_colours = g_new0(PLINT, n);
    g_autofree PLINT *box_patterns = g_new0(PLINT, n);
    g_autofree PLFLT *box_scales = g_new0(PLFLT, n);
    g_autofree PLFLT *box_widths = g_new0(PLFLT, n);
    g_autofree PLINT *line_colours = g_new0(PLINT, n);
    g_autofree PLINT *line_styles = g_new0(PLINT, n);
    g_autofree PLFLT *line_widths = g_new0(PLFLT, n);
    g_autofree const char **texts = g_new0(const char *, n);
    for (PLINT k = 0; k < n; k++) {
        text_colours[k] = COL_FG;
        line_styles[k] = 1;
        if (k < (PLINT)keys->len) {
            opts[k] = PL_LEGEND_COLOR_BOX;
            texts[k] = g_ptr_array_index(keys, k);
            box_colours[k] = COL_TINT + (PLINT)(k % N_SERIES_COLOURS);
            box_scales[k] = 0.8;
            box_widths[k] = 0.5;
        }
        else {
            opts[k] = line_widths_in[k - keys->len] > 0.0 ? PL_LEGEND_LINE : PL_LEGEND_NONE;
            texts[k] = lines[k - keys->len];
            line_colours[k] = COL_FG;
            line_widths[k] = line_widths_in[k - keys->len];
        }
    }
    PLFLT w, h;
    plschr(0.0, 0.6);
    set_pen(COL_FG, 1, 1.0);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX | PL_LEGEND_ROW_MAJOR,
             PL_POSITION_TOP | PL_POSITION_INSIDE, 0.0, 0.0, 0.04, COL_BG, COL_FG, 1,
             (n + n_columns - 1) / n_columns, n_columns, n, opts, 0.6, 0.6, 1.8, 0.0, text_colours,
             texts, box_colours, box_patterns, box_scales, box_widths, line_colours, line_styles,
             line_widths, NULL, NULL, NULL, NULL);
}

/* ---- Selection ---- */

/* Page geometry of the selection, in points: heading, per collective the crossover labels
 * and two bands, the size axis. */
#define SEL_TOP 100.0
#define SEL_LABELS 54.0
#define SEL_BANDS 84.0
#define SEL_GAP 16.0
#define SEL_BOTTOM 68.0
/* A row of the key, and its rows of lines. */
#define SEL_LEGEND_ROW 21.0
#define SEL_LEGEND_LINES 3
#define SEL_LEGEND_COLUMNS 3
/* The crossover lines' width: no other line has it (tests count them by it). */
#define CROSSOVER_WIDTH 1.7

gboolean
cs_plot_select(const CsSelection *selection, const char *title, const char *subtitle,
               const char *path, GError **error)
{
    g_return_val_if_fail(selection != NULL && title != NULL && path != NULL, FALSE);
    /* Under mpirun, rank 0 alone writes files (every rank holds the same results). */
    if (cs_parallel_rank() > 0)
        return TRUE;
    guint n = cs_selection_n_tables(selection);
    double xmin = INFINITY, xmax = -INFINITY;
    for (guint t = 0; t < n; t++) {
        const CsSelectTable *tab = cs_selection_table(selection, t);
        if (tab->points->len == 0)
            continue;
        xmin = MIN(xmin, log2((double)g_array_index(tab->points, CsSelectPoint, 0).size_bytes));
        xmax
            = MAX(xmax, log2((double)g_array_index(tab->points, CsSelectPoint, tab->points->len - 1)
                                 .size_bytes));
    }
    if (!isfinite(xmin)) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED,
                    "%s: nothing to plot (no collective has a choice)", path);
        return FALSE;
    }
    /* Each collective's bands cover its own grid; the axis widens to whole ticks. */
    double xtick = log2_range(&xmin, &xmax);

    /* Tall enough for the panels and for the key beside them. */
    g_autoptr(GPtrArray) keys = g_ptr_array_new();
    for (guint t = 0; t < n; t++) {
        const CsSelectTable *tab = cs_selection_table(selection, t);
        for (guint i = 0; i < tab->ranges->len; i++) {
            g_autofree char *key = select_key(&g_array_index(tab->ranges, CsSelectRange, i).choice);
            key_colour(keys, key);
        }
        g_autoptr(GArray) picks = cs_selection_nccl_picks(selection, tab->op);
        for (guint i = 0; picks != NULL && i < picks->len; i++) {
            g_autofree char *key = select_key(&g_array_index(picks, CsSelectRange, i).choice);
            key_colour(keys, key);
        }
    }
    const double panel = SEL_LABELS + SEL_BANDS + SEL_GAP;
    const int legend_rows
        = ((int)keys->len + SEL_LEGEND_LINES + SEL_LEGEND_COLUMNS - 1) / SEL_LEGEND_COLUMNS;
    const double panels_end = SEL_TOP + n * panel - SEL_GAP + SEL_BOTTOM;
    const double height = panels_end + SEL_LEGEND_ROW * (legend_rows + 1);
    Canvas c;
    if (!canvas_begin_sized(&c, path, height, error))
        return FALSE;

    /* The heading over the whole width, above the crossover labels of the first panel. */
    plvpor(0.05, 0.95, 1.0 - (SEL_TOP + 1.0) / height, 1.0 - SEL_TOP / height);
    draw_heading(title, subtitle, 0.0);
    g_autofree char *nccl_name = g_strdup_printf("NCCL %s", cs_selection_nccl_version(selection));
    for (guint t = 0; t < n; t++) {
        const CsSelectTable *tab = cs_selection_table(selection, t);
        double top = SEL_TOP + t * panel + SEL_LABELS;
        plvpor(0.15, 0.97, 1.0 - (top + SEL_BANDS) / height, 1.0 - top / height);
        plwind(xmin, xmax, 0.0, 2.0);
        /* Above: collsim's choice; below: NCCL's own pick. */
        double lo = xmin, hi = xmax;
        if (tab->points->len > 0) {
            lo = log2((double)g_array_index(tab->points, CsSelectPoint, 0).size_bytes);
            hi = log2(
                (double)g_array_index(tab->points, CsSelectPoint, tab->points->len - 1).size_bytes);
        }
        draw_ranges(tab->ranges, lo, hi, 1.08, 2.0, keys);
        g_autoptr(GArray) picks = cs_selection_nccl_picks(selection, tab->op);
        if (picks != NULL)
            draw_ranges(picks, lo, hi, 0.0, 0.92, keys);
        plslabelfunc(label_axis, GINT_TO_POINTER(FALSE));
        set_pen(COL_FG, 1, 1.0);
        plschr(0.0, 0.7);
        plbox(t + 1 == n ? "bcnsto" : "bcsto", xtick, (PLINT)xtick, "bc", 0.0, 0);

        double row_end[LABEL_ROWS] = { -INFINITY, -INFINITY, -INFINITY };
        for (guint i = 0; i < tab->crossovers->len; i++) {
            const CsSelectCrossover *x = &g_array_index(tab->crossovers, CsSelectCrossover, i);
            double xs = log2((double)x->size_bytes);
            set_pen(COL_FG, 1, CROSSOVER_WIDTH);
            segment(xs, 0.0, xs, 2.0);
            g_autofree char *label = format_bytes((double)x->size_bytes);
            plschr(0.0, 0.62);
            draw_crossover_label(xs, xmin, xmax, label, row_end);
        }
        plcol0(COL_FG);
        plschr(0.0, 0.7);
        plmtex("lv", 0.8, 0.75, 1.0, "collsim");
        plmtex("lv", 0.8, 0.25, 1.0, picks != NULL ? nccl_name : "NCCL: none");
        plschr(0.0, 0.85);
        plmtex("l", 9.0, 0.5, 0.5, cs_op_name(tab->op));
        if (tab->points->len == 0 && tab->note != NULL) {
            plschr(0.0, 0.7);
            plptex((xmin + xmax) / 2, 1.5, 1.0, 0.0, 0.5, tab->note);
        }
    }
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("b", 3.0, 0.5, 0.5, "message size (bytes, log2 axis)");

    /* The key under the size axis. */
    plvpor(0.15, 0.97, 1.0 - (height - 4.0) / height, 1.0 - panels_end / height);
    plwind(0.0, 1.0, 0.0, 1.0);
    static const char *const lines[SEL_LEGEND_LINES]
        = { "crossover, its size above", "top band: collsim", "bottom band: NCCL's pick" };
    static const PLFLT widths[SEL_LEGEND_LINES] = { CROSSOVER_WIDTH, 0.0, 0.0 };
    draw_band_legend(keys, lines, widths, G_N_ELEMENTS(lines), SEL_LEGEND_COLUMNS);
    pllsty(1);
    plwidth(1.0);
    return canvas_end(&c, error);
}

/* ---- Calibration ---- */

#define CAL_TOP 128.0
#define CAL_PANEL 250.0
#define CAL_GAP 76.0
#define CAL_BOTTOM 60.0

#define DA(a, i) g_array_index((a), double, (i))

gboolean
cs_plot_calibrate(CsValidateReport *const *before, CsValidateReport *const *after, int n_reports,
                  const char *title, const char *subtitle, const char *path, GError **error)
{
    g_return_val_if_fail(before != NULL && after != NULL && title != NULL && path != NULL, FALSE);
    double xmin = INFINITY, xmax = -INFINITY;
    for (int k = 0; k < n_reports; k++) {
        g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) meas = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) pred = g_array_new(FALSE, FALSE, sizeof(double));
        report_series(before[k], xs, meas, pred);
        report_series(after[k], xs, meas, pred);
        for (guint i = 0; i < xs->len; i++) {
            xmin = MIN(xmin, DA(xs, i));
            xmax = MAX(xmax, DA(xs, i));
        }
    }
    if (!isfinite(xmin)) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED,
                    "%s: nothing to plot (no row above 0 bytes was predicted)", path);
        return FALSE;
    }
    double xtick = log2_range(&xmin, &xmax);

    /* One panel per trace; one trace fills the standard page. */
    const double height
        = MAX((double)PAGE_H, CAL_TOP + n_reports * (CAL_PANEL + CAL_GAP) - CAL_GAP + CAL_BOTTOM);
    const double panel = (height - CAL_TOP - CAL_BOTTOM + CAL_GAP) / n_reports - CAL_GAP;
    Canvas c;
    if (!canvas_begin_sized(&c, path, height, error))
        return FALSE;
    for (int k = 0; k < n_reports; k++) {
        g_autoptr(GArray) xs = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) meas = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) pred0 = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) xs1 = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) meas1 = g_array_new(FALSE, FALSE, sizeof(double));
        g_autoptr(GArray) pred1 = g_array_new(FALSE, FALSE, sizeof(double));
        report_series(before[k], xs, meas, pred0);
        report_series(after[k], xs1, meas1, pred1);
        double ymax = 0.0;
        for (guint i = 0; i < xs->len; i++)
            ymax = MAX(ymax, MAX(DA(meas, i), DA(pred0, i)));
        for (guint i = 0; i < xs1->len; i++)
            ymax = MAX(ymax, DA(pred1, i));
        ymax = ymax > 0.0 ? ymax * 1.08 : 1.0;

        double top = CAL_TOP + k * (panel + CAL_GAP);
        plvpor(0.08, 0.94, 1.0 - (top + panel) / height, 1.0 - top / height);
        draw_axes_opts(xmin, xmax, xtick, "bcnsto", 0.0, ymax, "bcnstv", 0.0, FALSE);
        plcol0(COL_FG);
        plschr(0.0, 0.8);
        plmtex("l", 4.6, 0.5, 0.5, "busbw (GB/s)");
        if (k == 0)
            draw_heading(title, subtitle, 2.6);
        g_autofree char *name = g_path_get_basename(before[k]->origin);
        plschr(0.0, 0.75);
        plmtex("t", 0.6, 0.0, 0.0, name);

        /* The datasheet prediction thin, the calibrated one bold, the measurement as circles
         * over both. */
        set_pen(COL_SERIES + 1, 1, 1.3);
        plline((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)pred0->data);
        set_pen(COL_SERIES + 0, 1, 2.6);
        plline((PLINT)xs1->len, (PLFLT *)(void *)xs1->data, (PLFLT *)(void *)pred1->data);
        set_pen(COL_FG, 1, 1.5);
        plssym(0.0, 0.7);
        plpoin((PLINT)xs->len, (PLFLT *)(void *)xs->data, (PLFLT *)(void *)meas->data, 4);
        plwidth(1.0);

        g_autofree char *t0 = g_strdup_printf("predicted, datasheet topology: %.1f%%",
                                              100.0 * before[k]->all.geomean_abs);
        g_autofree char *t1 = g_strdup_printf("predicted, calibrated topology: %.1f%%",
                                              100.0 * after[k]->all.geomean_abs);
        const char *texts[4] = { "measured", t0, t1, "(geomean |busbw error| per line)" };
        PLINT opts[4] = { PL_LEGEND_SYMBOL, PL_LEGEND_LINE, PL_LEGEND_LINE, PL_LEGEND_NONE };
        PLINT text_colours[4] = { COL_FG, COL_FG, COL_FG, COL_FG };
        PLINT line_colours[4] = { COL_FG, COL_SERIES + 1, COL_SERIES + 0, COL_FG };
        PLINT line_styles[4] = { 1, 1, 1, 1 };
        PLFLT line_widths[4] = { 1.0, 1.3, 2.6, 1.0 };
        PLINT symbol_colours[4] = { COL_FG, COL_FG, COL_FG, COL_FG };
        PLFLT symbol_scales[4] = { 0.7, 0.7, 0.7, 0.7 };
        PLINT symbol_numbers[4] = { 1, 1, 1, 1 };
        const char *symbols[4] = { "#(840)", "", "", "" };
        PLFLT w, h;
        plschr(0.0, 0.7);
        pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 0.02, 0.03, 0.06, COL_BG,
                 COL_FG, 1, 0, 1, 4, opts, 1.0, 0.6, 1.8, 0.0, text_colours, texts, NULL, NULL,
                 NULL, NULL, line_colours, line_styles, line_widths, symbol_colours, symbol_scales,
                 symbol_numbers, symbols);
    }
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("b", 3.0, 0.5, 0.5, "message size (bytes, log2 axis)");
    return canvas_end(&c, error);
}

/* ---- Measured crossovers ---- */

#define XO_TOP 128.0
#define XO_PANEL 250.0
#define XO_GAP 96.0
#define XO_BOTTOM 60.0

/* log10 seconds of @us, or -INFINITY for none. */
static double
log10_s(double us)
{
    return us > 0.0 && isfinite(us) ? log10(us * 1e-6) : -INFINITY;
}

/* One choice's means, and its 95% interval as error bars where the interval is known. */
static void
draw_xover_side(const GArray *points, gboolean from, double ymin, PLINT colour, PLINT symbol)
{
    const guint n = points->len;
    g_autofree PLFLT *xs = g_new(PLFLT, n);
    g_autofree PLFLT *ys = g_new(PLFLT, n);
    for (guint i = 0; i < n; i++) {
        const CsXoverPoint *p = &g_array_index(points, CsXoverPoint, i);
        const double t = from ? p->from_us : p->to_us;
        const double ci = from ? p->from_ci_us : p->to_ci_us;
        xs[i] = log2((double)p->size_bytes);
        ys[i] = MAX(log10_s(t), ymin);
        if (isfinite(ci) && ci > 0.0) {
            PLFLT x = xs[i];
            PLFLT lo = MAX(log10_s(t - ci), ymin);
            PLFLT hi = log10_s(t + ci);
            set_pen(colour, 1, 1.2);
            plerry(1, &x, &lo, &hi);
        }
    }
    set_pen(colour, 1, 1.7);
    plline((PLINT)n, xs, ys);
    plssym(0.0, 0.8);
    plpoin((PLINT)n, xs, ys, symbol);
}

gboolean
cs_plot_crossovers(CsXoverResult *const *results, int n_results, const char *backend,
                   const char *title, const char *subtitle, const char *path, GError **error)
{
    g_return_val_if_fail(results != NULL && backend != NULL && title != NULL && path != NULL,
                         FALSE);
    if (n_results < 1) {
        g_set_error(error, CS_PLOT_ERROR, CS_PLOT_ERROR_FAILED, "%s: nothing to plot", path);
        return FALSE;
    }
    const double height
        = MAX((double)PAGE_H, XO_TOP + n_results * (XO_PANEL + XO_GAP) - XO_GAP + XO_BOTTOM);
    const double panel = (height - XO_TOP - XO_BOTTOM + XO_GAP) / n_results - XO_GAP;
    Canvas c;
    if (!canvas_begin_sized(&c, path, height, error))
        return FALSE;
    for (int k = 0; k < n_results; k++) {
        const CsXoverResult *r = results[k];
        const gboolean measured = r->status == CS_XOVER_MEASURED;
        /* The window: every size measured and the predicted one, a doubling either side. */
        double xmin = log2((double)r->predicted.size_bytes);
        double xmax = xmin;
        double tmin = INFINITY, tmax = 0.0;
        for (guint i = 0; r->points != NULL && i < r->points->len; i++) {
            const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, i);
            xmin = MIN(xmin, log2((double)p->size_bytes));
            xmax = MAX(xmax, log2((double)p->size_bytes));
            const double lo[2] = { p->from_us - p->from_ci_us, p->to_us - p->to_ci_us };
            const double hi[2] = { p->from_us + p->from_ci_us, p->to_us + p->to_ci_us };
            const double mid[2] = { p->from_us, p->to_us };
            for (int s = 0; s < 2; s++) {
                if (mid[s] > 0.0 && isfinite(mid[s])) {
                    tmin = MIN(tmin, mid[s]);
                    tmax = MAX(tmax, mid[s]);
                }
                if (lo[s] > 0.0 && isfinite(lo[s]))
                    tmin = MIN(tmin, lo[s]);
                if (isfinite(hi[s]))
                    tmax = MAX(tmax, hi[s]);
            }
        }
        if (measured) {
            xmin = MIN(xmin, log2((double)MAX(r->lo_bytes, 1)));
            xmax = MAX(xmax, log2((double)MAX(r->hi_bytes, 1)));
        }
        xmin -= 1.0;
        xmax += 1.0;
        const double xtick = log2_range(&xmin, &xmax);
        if (!(tmax > 0.0)) {
            tmin = 1.0;
            tmax = 10.0;
        }
        double ymin = floor(log10(tmin * 1e-6) * 4.0) / 4.0;
        double ymax = ceil(log10(tmax * 1e-6) * 4.0) / 4.0;
        if (ymax - ymin < 0.5) {
            ymin -= 0.25;
            ymax += 0.25;
        }

        const double top = XO_TOP + k * (panel + XO_GAP);
        plvpor(0.11, 0.68, 1.0 - (top + panel) / height, 1.0 - top / height);
        plwind(xmin, xmax, ymin, ymax);
        if (measured) {
            /* The interval the crossover lies in, under everything. */
            const double a = log2((double)MAX(r->lo_bytes, 1));
            const double b = log2((double)MAX(r->hi_bytes, 1));
            PLFLT rx[4] = { a, b, b, a };
            PLFLT ry[4] = { ymin, ymin, ymax, ymax };
            plcol0(COL_LATENCY);
            plfill(4, rx, ry);
        }
        const gboolean unmeasurable = r->status == CS_XOVER_UNMEASURABLE;
        /* Nothing measured: no time axis. */
        draw_axes(xmin, xmax, xtick, ymin, ymax, unmeasurable ? "bc" : "bcnstvo",
                  ymax - ymin > 2.0 ? 1.0 : 0.25, TRUE);
        plcol0(COL_FG);
        plschr(0.0, 0.8);
        if (!unmeasurable)
            plmtex("l", 5.6, 0.5, 0.5, "time (log10 axis)");
        if (k == 0) {
            /* Centred on the page, not on the panel the key leaves. */
            plvpor(0.04, 0.96, 1.0 - (top + panel) / height, 1.0 - top / height);
            draw_heading(title, subtitle, 3.4);
            plvpor(0.11, 0.68, 1.0 - (top + panel) / height, 1.0 - top / height);
            plwind(xmin, xmax, ymin, ymax);
        }

        g_autofree char *from = cs_select_choice_label(&r->predicted.from);
        g_autofree char *to = cs_select_choice_label(&r->predicted.to);
        g_autofree char *pred = cs_units_format_size(r->predicted.size_bytes);
        g_autofree char *status = NULL;
        switch (r->status) {
        case CS_XOVER_MEASURED: {
            g_autofree char *m = cs_units_format_size(r->measured_bytes);
            g_autofree char *lo = cs_units_format_size(r->lo_bytes);
            g_autofree char *hi = cs_units_format_size(r->hi_bytes);
            status = g_strdup_printf("measured %s in [%s, %s], predicted %s", m, lo, hi, pred);
            break;
        }
        case CS_XOVER_TIE:
            status = g_strdup_printf("tie: within noise at every size, predicted %s", pred);
            break;
        case CS_XOVER_FROM_THROUGHOUT:
            status
                = g_strdup_printf("no crossover measured: %s never lost, predicted %s", from, pred);
            break;
        case CS_XOVER_TO_THROUGHOUT:
            status
                = g_strdup_printf("no crossover measured: %s never lost, predicted %s", to, pred);
            break;
        case CS_XOVER_UNMEASURABLE:
            status = g_strdup_printf("cannot be measured on %s, predicted %s", backend, pred);
            break;
        }
        g_autofree char *pair = g_strdup_printf("%s -> %s", from, to);
        plschr(0.0, 0.75);
        plmtex("t", 2.5, 0.0, 0.0, pair);
        plschr(0.0, 0.7);
        plmtex("t", 0.8, 0.0, 0.0, status);

        if (unmeasurable) {
            /* The reason, in lines of at most ~60 characters from the middle down. */
            g_auto(GStrv) words = g_strsplit(r->why != NULL ? r->why : "", " ", -1);
            g_autoptr(GString) line = g_string_new(NULL);
            double y = ymin + 0.7 * (ymax - ymin);
            plschr(0.0, 0.7);
            plcol0(COL_FG);
            for (guint i = 0; words[i] != NULL; i++) {
                if (line->len > 0 && line->len + strlen(words[i]) > 60) {
                    plptex((xmin + xmax) / 2, y, 1.0, 0.0, 0.5, line->str);
                    y -= 0.12 * (ymax - ymin);
                    g_string_truncate(line, 0);
                }
                g_string_append_printf(line, "%s%s", line->len > 0 ? " " : "", words[i]);
            }
            if (line->len > 0)
                plptex((xmin + xmax) / 2, y, 1.0, 0.0, 0.5, line->str);
        }
        else {
            draw_xover_side(r->points, TRUE, ymin, COL_SERIES + 0, 4);
            draw_xover_side(r->points, FALSE, ymin, COL_SERIES + 1, 6);
        }
        const double xp = log2((double)r->predicted.size_bytes);
        set_pen(COL_FG, 2, 1.5);
        segment(xp, ymin, xp, ymax);
        if (measured) {
            const double xm = log2((double)r->measured_bytes);
            set_pen(COL_SERIES + 2, 1, 2.4);
            segment(xm, ymin, xm, ymax);
        }
        pllsty(1);
        plwidth(1.0);

        const char *texts[5] = { from, to, "predicted crossover", "measured crossover",
                                 "95% interval of the crossover" };
        PLINT opts[5] = { PL_LEGEND_LINE | PL_LEGEND_SYMBOL, PL_LEGEND_LINE | PL_LEGEND_SYMBOL,
                          PL_LEGEND_LINE, PL_LEGEND_LINE, PL_LEGEND_COLOR_BOX };
        PLINT text_colours[5] = { COL_FG, COL_FG, COL_FG, COL_FG, COL_FG };
        PLINT box_colours[5] = { COL_BG, COL_BG, COL_BG, COL_BG, COL_LATENCY };
        PLINT box_patterns[5] = { 0, 0, 0, 0, 0 };
        PLFLT box_scales[5] = { 0.8, 0.8, 0.8, 0.8, 0.8 };
        PLFLT box_widths[5] = { 1.0, 1.0, 1.0, 1.0, 1.0 };
        PLINT line_colours[5] = { COL_SERIES + 0, COL_SERIES + 1, COL_FG, COL_SERIES + 2, COL_FG };
        PLINT line_styles[5] = { 1, 1, 2, 1, 1 };
        PLFLT line_widths[5] = { 1.7, 1.7, 1.5, 2.4, 1.0 };
        PLINT symbol_colours[5] = { COL_SERIES + 0, COL_SERIES + 1, COL_FG, COL_FG, COL_FG };
        PLFLT symbol_scales[5] = { 0.8, 0.8, 0.8, 0.8, 0.8 };
        PLINT symbol_numbers[5] = { 1, 1, 1, 1, 1 };
        const char *symbols[5] = { "#(840)", "#(841)", "", "", "" };
        /* Keys first .. first + n: both sides unless unmeasurable, the predicted line, and
         * the measured one with its interval where there is one. */
        const int first = unmeasurable ? 2 : 0;
        const int n_keys = (measured ? 5 : 3) - first;
        PLFLT w, h;
        plschr(0.0, 0.7);
        pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.015, 0.0, 0.06, COL_BG, COL_FG, 1, 0, 1,
                 n_keys, opts + first, 1.0, 0.6, 1.8, 0.0, text_colours + first, texts + first,
                 box_colours + first, box_patterns + first, box_scales + first, box_widths + first,
                 line_colours + first, line_styles + first, line_widths + first,
                 symbol_colours + first, symbol_scales + first, symbol_numbers + first,
                 symbols + first);
    }
    plcol0(COL_FG);
    plschr(0.0, 0.8);
    plmtex("b", 3.0, 0.5, 0.5, "message size (bytes, log2 axis)");
    return canvas_end(&c, error);
}

/* ---- Stacked times (plan) ---- */

#define BAR_WIDTH 0.56

gboolean
cs_plot_stacked_times(const char *const *bars, int n_bars, const char *const *parts,
                      const gboolean *compute, int n_parts, const double *times_s,
                      const char *const *notes, const char *title, const char *subtitle,
                      const char *path, GError **error)
{
    g_return_val_if_fail(bars != NULL && parts != NULL && compute != NULL && times_s != NULL
                             && title != NULL && path != NULL && n_bars > 0,
                         FALSE);
    /* Under mpirun, rank 0 alone writes files (every rank holds the same results). */
    if (cs_parallel_rank() > 0)
        return TRUE;
    g_autofree double *totals = g_new0(double, n_bars);
    double tmax = 0.0;
    for (int b = 0; b < n_bars; b++) {
        for (int p = 0; p < n_parts; p++)
            totals[b] += MAX(0.0, times_s[b * n_parts + p]);
        tmax = MAX(tmax, totals[b]);
    }
    /* One unit for the axis: the one the largest bar reads best in. */
    static const struct {
        const char *name;
        double s;
    } units[] = { { "s", 1.0 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 } };
    gsize u = 0;
    while (u + 1 < G_N_ELEMENTS(units) && tmax < units[u].s)
        u++;
    const double scale = 1.0 / units[u].s;
    /* Room above the tallest bar for its label, and its note. */
    gboolean any_note = FALSE;
    for (int b = 0; notes != NULL && b < n_bars; b++)
        any_note |= notes[b] != NULL;
    double ymax = tmax > 0.0 ? tmax * scale * (any_note ? 1.18 : 1.12) : 1.0;

    Canvas c;
    if (!canvas_begin(&c, path, error))
        return FALSE;
    /* The heading over the whole width, the bars on the left, the key on the right. */
    plvpor(0.05, 0.95, 0.14, 0.86);
    draw_heading(title, subtitle, 0.0);
    plvpor(0.08, 0.56, 0.14, 0.86);
    plwind(-0.5, n_bars - 0.5, 0.0, ymax);
    set_pen(COL_GRID, 1, 1.0);
    plbox("", 0.0, 0, "g", 0.0, 0);
    plcol0(COL_FG);
    plschr(0.0, 0.7);
    plbox("bc", 0.0, 0, "bcnstv", 0.0, 0);
    g_autofree char *ylabel = g_strdup_printf("step time (%s)", units[u].name);
    plschr(0.0, 0.8);
    plmtex("l", 4.6, 0.5, 0.5, ylabel);

    /* The colour of each part: compute grey, the rest in turn. */
    g_autofree PLINT *colours = g_new0(PLINT, MAX(1, n_parts));
    int n_comm = 0;
    gboolean any_compute = FALSE;
    for (int p = 0; p < n_parts; p++) {
        colours[p] = compute[p] ? COL_GRID : COL_TINT + (n_comm++ % N_SERIES_COLOURS);
        any_compute |= compute[p];
    }
    for (int b = 0; b < n_bars; b++) {
        double y = 0.0;
        for (int p = 0; p < n_parts; p++) {
            double h = MAX(0.0, times_s[b * n_parts + p]) * scale;
            if (h <= 0.0)
                continue;
            PLFLT rx[4]
                = { b - BAR_WIDTH / 2, b + BAR_WIDTH / 2, b + BAR_WIDTH / 2, b - BAR_WIDTH / 2 };
            PLFLT ry[4] = { y, y, y + h, y + h };
            plcol0(colours[p]);
            plfill(4, rx, ry);
            set_pen(COL_FG, 1, 0.5);
            plline(4, rx, ry);
            y += h;
        }
        /* The step on top, and its ratio to the first bar. */
        g_autofree char *step = cs_units_format_time(totals[b]);
        g_autofree char *label = b > 0 && totals[0] > 0.0
                                     ? g_strdup_printf("%s (%.3fx)", step, totals[b] / totals[0])
                                     : g_strdup(step);
        plcol0(COL_FG);
        plschr(0.0, 0.7);
        plptex(b, y + 0.02 * ymax, 1.0, 0.0, 0.5, label);
        if (notes != NULL && notes[b] != NULL)
            plptex(b, y + 0.055 * ymax, 1.0, 0.0, 0.5, notes[b]);
        plmtex("b", 1.4, (b + 0.5) / n_bars, 0.5, bars[b]);
    }

    /* The key: compute once, then each collective in stacking order (the top of a bar is the
     * last). */
    PLINT n = n_comm + (any_compute ? 1 : 0) + 2;
    g_autofree PLINT *opts = g_new0(PLINT, n);
    g_autofree PLINT *text_colours = g_new0(PLINT, n);
    g_autofree PLINT *box_colours = g_new0(PLINT, n);
    g_autofree PLINT *box_patterns = g_new0(PLINT, n);
    g_autofree PLFLT *box_scales = g_new0(PLFLT, n);
    g_autofree PLFLT *box_widths = g_new0(PLFLT, n);
    g_autofree const char **texts = g_new0(const char *, n);
    PLINT k = 0;
    for (int p = n_parts - 1; p >= 0; p--) {
        if (compute[p])
            continue;
        texts[k] = parts[p];
        box_colours[k++] = colours[p];
    }
    if (any_compute) {
        texts[k] = "compute";
        box_colours[k++] = COL_GRID;
    }
    texts[k++] = "an overlapped phase's exposed time is shared";
    texts[k++] = "among its collectives by their times";
    for (PLINT i = 0; i < n; i++) {
        opts[i] = i + 2 < n ? PL_LEGEND_COLOR_BOX : PL_LEGEND_NONE;
        text_colours[i] = COL_FG;
        box_scales[i] = 0.8;
        box_widths[i] = 0.5;
    }
    PLFLT w, h;
    plvpor(0.58, 0.99, 0.14, 0.86);
    plwind(0.0, 1.0, 0.0, 1.0);
    plschr(0.0, 0.6);
    set_pen(COL_FG, 1, 1.0);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 0.0, 0.0, 0.08, COL_BG,
             COL_FG, 1, 0, 1, n, opts, 0.6, 0.6, 1.8, 0.0, text_colours, texts, box_colours,
             box_patterns, box_scales, box_widths, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    return canvas_end(&c, error);
}

#else /* !HAVE_PLOTS */

gboolean
cs_plot_report(const CsReport *report, const char *title, const char *subtitle, const char *path,
               GError **error)
{
    (void)report;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_model(double alpha_s, double bw_Bps, gint64 min_bytes, gint64 max_bytes,
              const char *subtitle, const char *path, GError **error)
{
    (void)alpha_s;
    (void)bw_Bps;
    (void)min_bytes;
    (void)max_bytes;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_validate(CsValidateReport *const *reports, int n_reports, const char *title,
                 const char *subtitle, const char *path, GError **error)
{
    (void)reports;
    (void)n_reports;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_select(const CsSelection *selection, const char *title, const char *subtitle,
               const char *path, GError **error)
{
    (void)selection;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_calibrate(CsValidateReport *const *before, CsValidateReport *const *after, int n_reports,
                  const char *title, const char *subtitle, const char *path, GError **error)
{
    (void)before;
    (void)after;
    (void)n_reports;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_stacked_times(const char *const *bars, int n_bars, const char *const *parts,
                      const gboolean *compute, int n_parts, const double *times_s,
                      const char *const *notes, const char *title, const char *subtitle,
                      const char *path, GError **error)
{
    (void)bars;
    (void)n_bars;
    (void)parts;
    (void)compute;
    (void)n_parts;
    (void)times_s;
    (void)notes;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

gboolean
cs_plot_crossovers(CsXoverResult *const *results, int n_results, const char *backend,
                   const char *title, const char *subtitle, const char *path, GError **error)
{
    (void)results;
    (void)n_results;
    (void)backend;
    (void)title;
    (void)subtitle;
    return cs_plot_check_path(path, NULL, error);
}

#endif
