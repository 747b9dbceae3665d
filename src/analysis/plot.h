// SPDX-License-Identifier: MIT
/* Pictures of results, drawn with PLplot (built with -Dplots, on by default where PLplot is
 * found): busbw against size for a report, Hockney's T(n) for one link. Plots take what the
 * report already holds; they never run simulations (DESIGN §1). */
#pragma once

#include <glib.h>

#include "analysis/crossover.h"
#include "analysis/report.h"
#include "analysis/validate.h"
#include "predict/select.h"

G_BEGIN_DECLS

#define CS_PLOT_ERROR (cs_plot_error_quark())
GQuark cs_plot_error_quark(void);

typedef enum {
    CS_PLOT_ERROR_UNAVAILABLE, /* built without PLplot, or its driver for the format missing */
    CS_PLOT_ERROR_FORMAT,      /* the file name's extension is not .svg, .png or .pdf */
    CS_PLOT_ERROR_FAILED,      /* PLplot or the file system failed while drawing */
} CsPlotError;

typedef enum {
    CS_PLOT_FORMAT_SVG,
    CS_PLOT_FORMAT_PNG,
    CS_PLOT_FORMAT_PDF,
} CsPlotFormat;

/* Whether this build draws plots (PLplot was found at build time). */
gboolean cs_plot_available(void);

/* Checks, before any work, that @path can be plotted: plots were built, its extension is
 * .svg, .png or .pdf (any case), and PLplot's driver for it is installed. Sets @format when
 * non-NULL. Errors: CS_PLOT_ERROR_UNAVAILABLE or CS_PLOT_ERROR_FORMAT. */
gboolean cs_plot_check_path(const char *path, CsPlotFormat *format, GError **error);

/**
 * cs_plot_report:
 * Draws busbw (GB/s) against size (log2 axis, 8 B ... 8 GiB labels) for every block of
 * @report that has rows: one line per block, coloured by algorithm and dashed by protocol.
 * Blocks marked best are drawn bold, each stretch in the colour of the choice made there;
 * when no block is best (one block per algorithm x protocol), the fastest block at each size
 * is drawn bold there. @title and @subtitle (nullable; the command) head the picture. The file
 * is replaced whole or left as it was; the same input gives the same bytes.
 */
gboolean cs_plot_report(const CsReport *report, const char *title, const char *subtitle,
                        const char *path, GError **error);

/**
 * cs_plot_model:
 * Draws Hockney's T(n) = alpha + n/B for one link from @min_bytes to @max_bytes (log2 size,
 * log10 time): the two terms, their sum, n_1/2 = alpha*B marked, the latency-bound region
 * left of it and the bandwidth-bound region right of it shaded. As cs_plot_report().
 */
gboolean cs_plot_model(double alpha_s, double bw_Bps, gint64 min_bytes, gint64 max_bytes,
                       const char *subtitle, const char *path, GError **error);

/**
 * cs_plot_validate:
 * Draws @n_reports validated traces in one figure: above, each trace's measured busbw as
 * circles over its predicted busbw as a line (one colour per trace, named by its file); below,
 * each row's busbw error (predicted - measured) / measured in percent; the latency (< 64 KiB)
 * and bandwidth (>= 64 MiB) regimes shaded in both. As cs_plot_report().
 */
gboolean cs_plot_validate(CsValidateReport *const *reports, int n_reports, const char *title,
                          const char *subtitle, const char *path, GError **error);

/**
 * cs_plot_calibrate:
 * Draws a calibration, one panel per trace: its measured busbw as circles, the busbw predicted
 * on the datasheet topology (@before, thin) and on the calibrated one (@after, bold), each
 * line's geometric-mean |busbw error| in the key. @before[k] and @after[k] validate the same
 * trace. As cs_plot_report().
 */
gboolean cs_plot_calibrate(CsValidateReport *const *before, CsValidateReport *const *after,
                           int n_reports, const char *title, const char *subtitle, const char *path,
                           GError **error);

/**
 * cs_plot_stacked_times:
 * Draws @n_bars bars side by side, each named under it by @bars[b] and stacked from the
 * bottom with @n_parts parts: part p of bar b is @times_s[b * @n_parts + p] seconds. A part
 * with @compute[p] is grey (one "compute" in the key), the others each in a colour of its
 * own named by @parts[p]. Each bar's total is written on top with its ratio to the first
 * bar's, and above it @notes[b] where @notes (nullable) and it are not NULL (a plan's cost per
 * step). The time axis takes the unit (s, ms, us, ns) the tallest bar reads best in. As
 * cs_plot_report().
 */
gboolean cs_plot_stacked_times(const char *const *bars, int n_bars, const char *const *parts,
                               const gboolean *compute, int n_parts, const double *times_s,
                               const char *const *notes, const char *title, const char *subtitle,
                               const char *path, GError **error);

/**
 * cs_plot_select:
 * Draws @selection along a log2 size axis, one panel per collective: above, the range of each
 * of collsim's choices as a band in the colour of its algorithm x protocol (named inside where
 * it fits); below, NCCL's own pick (its tuning model) the same way; each crossover a vertical
 * line with its size above it; a key of the colours. As cs_plot_report().
 */
gboolean cs_plot_select(const CsSelection *selection, const char *title, const char *subtitle,
                        const char *path, GError **error);

/**
 * cs_plot_crossovers:
 * Draws @n_results measured crossovers (cs_xover_measure()), one panel each, time (log10)
 * against size (log2): each measured size's mean time of both choices, circles for the lower
 * choice and squares for the upper one, with their 95% intervals as error bars and a line
 * through each; the predicted crossover as a dashed vertical line and, where one was
 * measured, the measured crossover as a solid one over the shaded interval [lo, hi]. A panel's
 * heading names the pair and the status; a crossover @backend cannot measure gets a panel
 * with the reason and nothing drawn. As cs_plot_report().
 */
gboolean cs_plot_crossovers(CsXoverResult *const *results, int n_results, const char *backend,
                            const char *title, const char *subtitle, const char *path,
                            GError **error);

G_END_DECLS
