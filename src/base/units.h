// SPDX-License-Identifier: MIT
/* The one parser and formatter for quantities with units: times, bandwidths and sizes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Simulated time in integer picoseconds: exact comparisons, bit-for-bit reruns. */
typedef gint64 CsTime;

#define CS_TIME_PS_PER_S 1000000000000.0
#define cs_time_from_s(s) ((CsTime)((s)*CS_TIME_PS_PER_S + 0.5))
#define cs_time_from_us(us) ((CsTime)((us)*1e6 + 0.5))
#define cs_time_to_s(t) ((double)(t) / CS_TIME_PS_PER_S)
#define cs_time_to_us(t) ((double)(t) / 1e6)

#define CS_UNITS_ERROR (cs_units_error_quark())
GQuark cs_units_error_quark(void);

typedef enum {
    CS_UNITS_ERROR_SYNTAX,  /* not a number followed by a known unit */
    CS_UNITS_ERROR_MISSING, /* a bare number where a unit is required */
    CS_UNITS_ERROR_RANGE,   /* negative, NaN, infinite or overflowing */
} CsUnitsError;

/* The largest time and the smallest bandwidth the parsers accept. */
#define CS_UNITS_MAX_TIME_S 1e6
#define CS_UNITS_MIN_BANDWIDTH_BPS 1.0
/* The longest amortization period the parser accepts: 100 years, in hours. */
#define CS_UNITS_MAX_PERIOD_H 876000.0

/* "0.8 us", "10ns", "1.5 ms", "2 s" -> seconds. A bare number is an error. */
gboolean cs_units_parse_time(const char *text, double *seconds, GError **error);

/* "4y", "1460 d", "35040h" -> hours (a year is 365 days): an amortization period. */
gboolean cs_units_parse_period(const char *text, double *hours, GError **error);

/* "450 GB/s", "400 Gb/s", "400 Gbps", "12.5 GiB/s", "800 MB/s" -> bytes per second.
 * GB/s and MB/s are decimal (1e9, 1e6), GiB/s binary, Gb/s bits (1e9 / 8). */
gboolean cs_units_parse_bandwidth(const char *text, double *bytes_per_s, GError **error);

/* "8", "8B", "64K", "64KB", "64KiB", "1M", "8G", "1GiB" -> bytes. K/M/G are powers of 1024
 * as in nccl-tests' -b/-e; a bare integer is bytes. Fractions must give whole bytes. */
gboolean cs_units_parse_size(const char *text, gint64 *bytes, GError **error);

/* A positive integer count ("8", "128"), for flags such as --ranks. */
gboolean cs_units_parse_count(const char *text, gint64 *count, GError **error);

/* A non-negative decimal number and nothing else, as printf's %f, %e and %g print one:
 * digits, an optional point and digits, an optional exponent ("12", "0.5", "1.2e+06").
 * FALSE for anything else, hex, "inf" and "nan" included (g_ascii_strtod reads them). */
gboolean cs_units_parse_decimal(const char *text, double *value);

/* Human formats: "10.0 us", "450 GB/s", "64 KiB" (transfer full). */
char *cs_units_format_time(double seconds);
char *cs_units_format_bandwidth(double bytes_per_s);
char *cs_units_format_size(gint64 bytes);

G_END_DECLS
