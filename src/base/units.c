// SPDX-License-Identifier: MIT
/* The one parser and formatter for quantities with units, used by topology files, traces and
 * every command-line flag, so "0.8 us" or "400 Gb/s" means the same thing everywhere. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/units.h"

G_DEFINE_QUARK(cs_units_error_quark, cs_units_error)

/* ---- Unit tables ---- */

typedef struct {
    const char *name; /* spelling after the number, case-sensitive */
    double factor;    /* seconds, bytes/s or bytes per one of it */
} Unit;

static const Unit time_units[] = {
    { "ps", 1e-12 },       { "ns", 1e-9 }, { "us", 1e-6 },
    { "\xc2\xb5s", 1e-6 }, /* U+00B5 MICRO SIGN */
    { "\xce\xbcs", 1e-6 }, /* U+03BC GREEK SMALL LETTER MU */
    { "ms", 1e-3 },        { "s", 1.0 },   { NULL, 0.0 },
};

/* An amortization period, in hours: a year is 365 days (8760 h), as straight-line
 * depreciation over whole years counts it. */
static const Unit period_units[] = {
    { "h", 1.0 },
    { "d", 24.0 },
    { "y", 8760.0 },
    { NULL, 0.0 },
};

/* Network gear is sold in bits (IB "400 Gb/s"), GPU links in bytes (NVLink "900 GB/s"). */
static const Unit bandwidth_units[] = {
    { "B/s", 1.0 },       { "kB/s", 1e3 },
    { "KB/s", 1e3 },      { "KiB/s", 1024.0 },
    { "MB/s", 1e6 },      { "MiB/s", 1048576.0 },
    { "GB/s", 1e9 },      { "GiB/s", 1073741824.0 },
    { "TB/s", 1e12 },     { "TiB/s", 1099511627776.0 },
    { "Mb/s", 1e6 / 8 },  { "Mbps", 1e6 / 8 },
    { "Gb/s", 1e9 / 8 },  { "Gbps", 1e9 / 8 },
    { "Tb/s", 1e12 / 8 }, { "Tbps", 1e12 / 8 },
    { NULL, 0.0 },
};

/* nccl-tests' -b/-e read K, M and G as powers of 1024; so do we, with or without "B"/"iB". */
typedef struct {
    const char *name;
    gint64 factor;
} SizeUnit;

static const SizeUnit size_units[] = {
    { "B", 1 },
    { "K", G_GINT64_CONSTANT(1) << 10 },
    { "k", G_GINT64_CONSTANT(1) << 10 },
    { "KB", G_GINT64_CONSTANT(1) << 10 },
    { "KiB", G_GINT64_CONSTANT(1) << 10 },
    { "M", G_GINT64_CONSTANT(1) << 20 },
    { "m", G_GINT64_CONSTANT(1) << 20 },
    { "MB", G_GINT64_CONSTANT(1) << 20 },
    { "MiB", G_GINT64_CONSTANT(1) << 20 },
    { "G", G_GINT64_CONSTANT(1) << 30 },
    { "g", G_GINT64_CONSTANT(1) << 30 },
    { "GB", G_GINT64_CONSTANT(1) << 30 },
    { "GiB", G_GINT64_CONSTANT(1) << 30 },
    { "T", G_GINT64_CONSTANT(1) << 40 },
    { "t", G_GINT64_CONSTANT(1) << 40 },
    { "TB", G_GINT64_CONSTANT(1) << 40 },
    { "TiB", G_GINT64_CONSTANT(1) << 40 },
    { "P", G_GINT64_CONSTANT(1) << 50 },
    { "PB", G_GINT64_CONSTANT(1) << 50 },
    { "PiB", G_GINT64_CONSTANT(1) << 50 },
    { "E", G_GINT64_CONSTANT(1) << 60 },
    { "EB", G_GINT64_CONSTANT(1) << 60 },
    { "EiB", G_GINT64_CONSTANT(1) << 60 },
    { NULL, 0 },
};

/* ---- Scanning ---- */

/* A quantity split into its parts; spans point into the caller's text. */
typedef struct {
    const char *text;    /* the whole input, for messages */
    gboolean negative;   /* a leading '-' */
    gboolean not_finite; /* "inf", "nan" (any case) where the number should be */
    const char *num;     /* first digit or '.'; NULL when no number was found */
    gsize num_len;       /* length of the number, exponent included */
    gboolean is_integer; /* only digits: no '.' and no exponent */
    char *unit;          /* what follows, surrounding blanks removed (owned; "" if none) */
} Quantity;

/* Splits @text into sign, number and unit. Never fails: the callers judge the parts. */
static void
scan_quantity(const char *text, Quantity *q)
{
    const char *p = text;

    memset(q, 0, sizeof *q);
    q->text = text;
    while (g_ascii_isspace(*p))
        p++;
    if (*p == '+' || *p == '-') {
        q->negative = *p == '-';
        p++;
    }
    if (g_ascii_strncasecmp(p, "inf", 3) == 0 || g_ascii_strncasecmp(p, "nan", 3) == 0)
        q->not_finite = TRUE;

    const char *start = p;
    gsize digits = 0;
    while (g_ascii_isdigit(*p)) {
        p++;
        digits++;
    }
    q->is_integer = TRUE;
    if (*p == '.') {
        q->is_integer = FALSE;
        p++;
        while (g_ascii_isdigit(*p)) {
            p++;
            digits++;
        }
    }
    if (digits == 0) {
        /* No number: everything after the blanks is "unit", for the message. */
        q->unit = g_strstrip(g_strdup(text));
        return;
    }
    /* An exponent only when digits follow, so "1e" stays a bad unit rather than a number. */
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        if (*e == '+' || *e == '-')
            e++;
        if (g_ascii_isdigit(*e)) {
            while (g_ascii_isdigit(*e))
                e++;
            p = e;
            q->is_integer = FALSE;
        }
    }
    q->num = start;
    q->num_len = (gsize)(p - start);
    q->unit = g_strstrip(g_strdup(p));
}

static void
quantity_clear(Quantity *q)
{
    g_clear_pointer(&q->unit, g_free);
}

/* The number as typed ("0.8"), for examples in messages; @fallback when there is none. */
static char *
example_number(const Quantity *q, const char *fallback)
{
    if (q->num == NULL || q->negative || q->not_finite)
        return g_strdup(fallback);
    return g_strndup(q->num, q->num_len);
}

gboolean
cs_units_parse_decimal(const char *text, double *value)
{
    g_return_val_if_fail(text != NULL && value != NULL, FALSE);
    const char *p = text;
    gsize digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        gsize frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (digits == 0)
        return FALSE;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        gsize exp_digits = strspn(p, "0123456789");
        if (exp_digits == 0)
            return FALSE;
        p += exp_digits;
    }
    if (*p != '\0')
        return FALSE;
    const double v = g_ascii_strtod(text, NULL);
    if (!isfinite(v))
        return FALSE;
    *value = v;
    return TRUE;
}

static double
number_value(const Quantity *q)
{
    g_autofree char *copy = g_strndup(q->num, q->num_len);
    return g_ascii_strtod(copy, NULL);
}

/* The errors every kind shares: no number, not finite, negative. */
static gboolean
check_number(const Quantity *q, const char *what, const char *expected, GError **error)
{
    if (q->not_finite) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a %s: not a finite number", q->text, what);
        return FALSE;
    }
    if (q->num == NULL) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_SYNTAX,
                    "\"%s\" is not a %s (expected e.g. %s)", q->text, what, expected);
        return FALSE;
    }
    if (q->negative) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a %s: it is negative", q->text, what);
        return FALSE;
    }
    return TRUE;
}

/* Shared by times and bandwidths: a finite non-negative number times a required unit. */
static gboolean
parse_real(const char *text, const Unit *units, const char *what, const char *unit_a,
           const char *unit_b, const char *fallback_number, double *result, GError **error)
{
    Quantity q;

    scan_quantity(text, &q);
    g_autofree char *n = example_number(&q, fallback_number);
    g_autofree char *expected = g_strdup_printf("\"%s %s\", \"%s %s\"", n, unit_a, n, unit_b);
    gboolean ok = check_number(&q, what, expected, error);

    if (ok && q.unit[0] == '\0') {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_MISSING,
                    "\"%s\" is not a %s: the unit is missing (expected e.g. %s)", text, what,
                    expected);
        ok = FALSE;
    }
    const Unit *u = units;
    if (ok) {
        while (u->name != NULL && strcmp(u->name, q.unit) != 0)
            u++;
        if (u->name == NULL) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_SYNTAX,
                        "\"%s\" is not a %s (expected e.g. %s)", text, what, expected);
            ok = FALSE;
        }
    }
    if (ok) {
        double v = number_value(&q) * u->factor;
        if (!isfinite(v)) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a %s: out of range", text, what);
            ok = FALSE;
        }
        else {
            *result = v;
        }
    }
    quantity_clear(&q);
    return ok;
}

/* ---- Parsing ---- */

/**
 * cs_units_parse_time:
 * Reads a time with a required unit: ps, ns, us (also µs), ms or s, with or without a blank
 * before it ("0.8 us", "10ns"). Zero is allowed; negative, non-finite, unit-less values and
 * times above CS_UNITS_MAX_TIME_S are errors in CS_UNITS_ERROR whose message quotes @text.
 */
gboolean
cs_units_parse_time(const char *text, double *seconds, GError **error)
{
    g_return_val_if_fail(text != NULL && seconds != NULL, FALSE);
    double v = 0.0;
    if (!parse_real(text, time_units, "time", "us", "ns", "10", &v, error))
        return FALSE;
    /* CsTime (int64 picoseconds) ends at 9.2e6 s; leave room for sums of such times. */
    if (v > CS_UNITS_MAX_TIME_S) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a time: out of range (at most 1e6 s)", text);
        return FALSE;
    }
    *seconds = v;
    return TRUE;
}

/**
 * cs_units_parse_period:
 * Reads an amortization period with a required unit into hours: h, d (24 h) or y (365 d,
 * 8760 h), with or without a blank before it ("4y", "1460 d", "35040h"). It must be more
 * than zero and at most CS_UNITS_MAX_PERIOD_H; errors are CS_UNITS_ERROR quoting @text.
 */
gboolean
cs_units_parse_period(const char *text, double *hours, GError **error)
{
    g_return_val_if_fail(text != NULL && hours != NULL, FALSE);
    double v = 0.0;
    if (!parse_real(text, period_units, "period", "y", "h", "4", &v, error))
        return FALSE;
    if (v <= 0.0 || v > CS_UNITS_MAX_PERIOD_H) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a period: out of range (more than 0, at most 100 y)", text);
        return FALSE;
    }
    *hours = v;
    return TRUE;
}

/**
 * cs_units_parse_bandwidth:
 * Reads a bandwidth with a required unit into bytes per second. Byte units: B/s, kB/s (KB/s),
 * MB/s, GB/s, TB/s are decimal; KiB/s, MiB/s, GiB/s, TiB/s binary. Bit units: Mb/s, Gb/s,
 * Tb/s and Mbps, Gbps, Tbps are decimal bits (divided by 8). Zero is an error: a link that
 * carries nothing would make every time infinite; so is anything below 1 B/s.
 */
gboolean
cs_units_parse_bandwidth(const char *text, double *bytes_per_s, GError **error)
{
    double v = 0.0;

    g_return_val_if_fail(text != NULL && bytes_per_s != NULL, FALSE);
    if (!parse_real(text, bandwidth_units, "bandwidth", "GB/s", "Gb/s", "400", &v, error))
        return FALSE;
    if (v <= 0.0) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a bandwidth: it must be greater than zero", text);
        return FALSE;
    }
    /* Below a byte per second (1e-300 B/s) times overflow into nonsense. */
    if (v < CS_UNITS_MIN_BANDWIDTH_BPS) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                    "\"%s\" is not a bandwidth: out of range (at least 1 B/s)", text);
        return FALSE;
    }
    *bytes_per_s = v;
    return TRUE;
}

/**
 * cs_units_parse_size:
 * Reads a size into bytes: a bare integer is bytes; B, K, KB, KiB, M, MB, MiB, G, GB, GiB,
 * T, TB, TiB, P.., E.. (and k, m, g, t) follow, all powers of 1024 as nccl-tests' -b/-e read
 * them ("64K" = "64KB" = "64KiB" = 65536). Fractions are accepted when they give whole bytes
 * ("1.5G"). Negative, fractional-byte and sizes above G_MAXINT64 are errors.
 */
gboolean
cs_units_parse_size(const char *text, gint64 *bytes, GError **error)
{
    Quantity q;
    gboolean ok;

    g_return_val_if_fail(text != NULL && bytes != NULL, FALSE);
    scan_quantity(text, &q);
    g_autofree char *n = q.is_integer ? example_number(&q, "64") : g_strdup("64");
    g_autofree char *expected = g_strdup_printf("\"%s\", \"%sK\", \"%s MiB\"", n, n, n);
    ok = check_number(&q, "size", expected, error);

    const SizeUnit *u = size_units;
    if (ok && q.unit[0] != '\0') {
        while (u->name != NULL && strcmp(u->name, q.unit) != 0)
            u++;
        if (u->name == NULL) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_SYNTAX,
                        "\"%s\" is not a size (expected e.g. %s)", text, expected);
            ok = FALSE;
        }
    }
    if (ok && q.is_integer) {
        /* Integers stay exact to the last byte, beyond double's 53 bits. */
        g_autofree char *digits = g_strndup(q.num, q.num_len);
        guint64 v = 0;
        if (!g_ascii_string_to_unsigned(digits, 10, 0, G_MAXINT64 / u->factor, &v, NULL)) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a size: larger than %" G_GINT64_FORMAT " bytes", text,
                        G_MAXINT64);
            ok = FALSE;
        }
        else {
            *bytes = (gint64)v * u->factor;
        }
    }
    else if (ok) {
        double v = number_value(&q) * (double)u->factor;
        /* 2^63 is the first double above G_MAXINT64. */
        if (!(v < 9223372036854775808.0)) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a size: larger than %" G_GINT64_FORMAT " bytes", text,
                        G_MAXINT64);
            ok = FALSE;
        }
        else if (floor(v) != v) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a size: not a whole number of bytes", text);
            ok = FALSE;
        }
        else {
            *bytes = (gint64)v;
        }
    }
    quantity_clear(&q);
    return ok;
}

/**
 * cs_units_parse_count:
 * Reads a positive integer ("8", "128") with no unit; zero, negative, fractional and values
 * above G_MAXINT64 are errors.
 */
gboolean
cs_units_parse_count(const char *text, gint64 *count, GError **error)
{
    Quantity q;
    gboolean ok;

    g_return_val_if_fail(text != NULL && count != NULL, FALSE);
    scan_quantity(text, &q);
    ok = check_number(&q, "count", "\"8\"", error);
    if (ok && (!q.is_integer || q.unit[0] != '\0')) {
        g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_SYNTAX,
                    "\"%s\" is not a count (expected a whole number such as \"8\")", text);
        ok = FALSE;
    }
    if (ok) {
        g_autofree char *digits = g_strndup(q.num, q.num_len);
        guint64 v = 0;
        if (!g_ascii_string_to_unsigned(digits, 10, 0, G_MAXINT64, &v, NULL)) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a count: larger than %" G_GINT64_FORMAT, text, G_MAXINT64);
            ok = FALSE;
        }
        else if (v == 0) {
            g_set_error(error, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is not a count: it must be at least 1", text);
            ok = FALSE;
        }
        else {
            *count = (gint64)v;
        }
    }
    quantity_clear(&q);
    return ok;
}

/* ---- Formatting ---- */

/* About three significant digits, never exponent notation for the usual magnitudes. */
static char *
format_3(double v, const char *unit)
{
    double a = fabs(v);

    if (a >= 99.95 || a == 0.0)
        return g_strdup_printf("%.0f %s", v, unit);
    if (a >= 9.995)
        return g_strdup_printf("%.1f %s", v, unit);
    if (a >= 0.9995)
        return g_strdup_printf("%.2f %s", v, unit);
    return g_strdup_printf("%.3g %s", v, unit);
}

/**
 * cs_units_format_time:
 * @seconds in the largest of ps, ns, us, ms, s that keeps the number at least 1, to about
 * three significant digits: "10.0 us", "1.11 ns", "2.35 ms", "8.89 ps". Returns: (transfer full).
 */
char *
cs_units_format_time(double seconds)
{
    static const Unit scale[] = {
        { "s", 1.0 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 }, { "ps", 1e-12 },
    };
    double a = fabs(seconds);

    if (!isfinite(seconds))
        return g_strdup_printf("%f s", seconds);
    if (a == 0.0)
        return g_strdup("0 s");
    for (gsize i = 0; i < G_N_ELEMENTS(scale) - 1; i++) {
        /* 999.96 us would round to "1000 us": show it as "1.00 ms" instead. */
        if (a >= scale[i].factor * 0.9995)
            return format_3(seconds / scale[i].factor, scale[i].name);
    }
    return format_3(seconds / 1e-12, "ps");
}

/**
 * cs_units_format_bandwidth:
 * Always in GB/s (1e9 bytes/s, nccl-tests' unit), so columns compare at a glance: "900 GB/s",
 * "12.5 GB/s", "0.0008 GB/s". Returns: (transfer full).
 */
char *
cs_units_format_bandwidth(double bytes_per_s)
{
    if (!isfinite(bytes_per_s))
        return g_strdup_printf("%f GB/s", bytes_per_s);
    return format_3(bytes_per_s / 1e9, "GB/s");
}

/**
 * cs_units_format_size:
 * Exact binary size: "8 B", "64 KiB", "1.5 GiB", "1.25 MiB"; a size no binary unit shows
 * exactly to three decimals stays in bytes ("1000000 B"). Returns: (transfer full).
 */
char *
cs_units_format_size(gint64 bytes)
{
    static const char *const names[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

    if (bytes < 1024)
        return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
    for (int i = (int)G_N_ELEMENTS(names) - 1; i >= 0; i--) {
        gint64 unit = G_GINT64_CONSTANT(1) << (10 * (i + 1));
        if (bytes < unit)
            continue;
        gint64 whole = bytes / unit;
        gint64 rest = bytes % unit;
        if (rest == 0)
            return g_strdup_printf("%" G_GINT64_FORMAT " %s", whole, names[i]);
        /* rest/unit exact in 3 decimals iff rest*1000 is a multiple of unit (unit is 2^k,
         * so only multiples of unit/8 qualify: .125, .25, .375, ...). */
        if (rest % (unit / 8) == 0) {
            g_autofree char *frac = g_strdup_printf("%.3f", (double)rest / (double)unit);
            /* Trim "0.500" to ".5". */
            char *end = frac + strlen(frac) - 1;
            while (*end == '0')
                *end-- = '\0';
            return g_strdup_printf("%" G_GINT64_FORMAT "%s %s", whole, frac + 1, names[i]);
        }
        break;
    }
    return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
}
