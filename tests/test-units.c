// SPDX-License-Identifier: MIT
/* Tests of units.c: every unit and error class from tests/data/units/cases.tests (one test case
 * per line), exact messages, formatters, and parse(format(x)) round trips. */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <string.h>

#include "base/expr.h"
#include "base/units.h"

/* ---- Data-driven cases ---- */

typedef struct {
    char *kind;     /* time, bandwidth, size, count */
    gboolean valid; /* P or N */
    char *expected; /* value, or error code name */
    char *text;     /* the input, verbatim */
    int line;       /* in cases.tests, for messages */
} Case;

static void
case_free(gpointer data)
{
    Case *c = data;

    g_free(c->kind);
    g_free(c->expected);
    g_free(c->text);
    g_free(c);
}

static int
code_from_name(const char *name)
{
    if (strcmp(name, "syntax") == 0)
        return CS_UNITS_ERROR_SYNTAX;
    if (strcmp(name, "missing") == 0)
        return CS_UNITS_ERROR_MISSING;
    if (strcmp(name, "range") == 0)
        return CS_UNITS_ERROR_RANGE;
    g_error("cases.tests: unknown error code '%s'", name);
    return -1;
}

/* Parses @c->text with the parser of its kind; doubles and integers both come back. */
static gboolean
parse_case(const Case *c, double *real, gint64 *integer, GError **error)
{
    if (strcmp(c->kind, "time") == 0)
        return cs_units_parse_time(c->text, real, error);
    if (strcmp(c->kind, "bandwidth") == 0)
        return cs_units_parse_bandwidth(c->text, real, error);
    if (strcmp(c->kind, "size") == 0)
        return cs_units_parse_size(c->text, integer, error);
    if (strcmp(c->kind, "count") == 0)
        return cs_units_parse_count(c->text, integer, error);
    g_error("cases.tests:%d: unknown kind '%s'", c->line, c->kind);
    return FALSE;
}

static void
test_case(gconstpointer data)
{
    const Case *c = data;
    double real = -1.0;
    gint64 integer = -1;
    g_autoptr(GError) error = NULL;
    gboolean is_real = strcmp(c->kind, "time") == 0 || strcmp(c->kind, "bandwidth") == 0;

    gboolean ok = parse_case(c, &real, &integer, &error);
    if (c->valid) {
        g_assert_no_error(error);
        g_assert_true(ok);
        if (is_real) {
            double want = g_ascii_strtod(c->expected, NULL);
            /* Relative: the same decimal computed two ways may differ in the last bit. */
            g_assert_cmpfloat_with_epsilon(real, want, fabs(want) * 1e-12 + 1e-30);
        }
        else {
            g_assert_cmpint(integer, ==, g_ascii_strtoll(c->expected, NULL, 10));
        }
        return;
    }
    g_assert_false(ok);
    g_assert_error(error, CS_UNITS_ERROR, code_from_name(c->expected));
    /* Every message quotes the input and names what was expected. */
    g_autofree char *quoted = g_strdup_printf("\"%s\"", c->text);
    g_autofree char *what = g_strdup_printf("is not a %s", c->kind);
    g_assert_nonnull(strstr(error->message, quoted));
    g_assert_nonnull(strstr(error->message, what));
    /* The outputs must be left alone on failure. */
    g_assert_cmpfloat(real, ==, -1.0);
    g_assert_cmpint(integer, ==, -1);
}

/* Decimal numbers as printf prints them, and what g_ascii_strtod would read but no table
 * holds. */
static void
test_decimal(void)
{
    static const struct {
        const char *text;
        gboolean ok;
        double value;
    } cases[] = {
        { "12", TRUE, 12.0 },  { "0.5", TRUE, 0.5 },       { ".5", TRUE, 0.5 },
        { "5.", TRUE, 5.0 },   { "1.2e+06", TRUE, 1.2e6 }, { "3E-2", TRUE, 0.03 },
        { "0", TRUE, 0.0 },    { "", FALSE, 0 },           { ".", FALSE, 0 },
        { "0x10", FALSE, 0 },  { "inf", FALSE, 0 },        { "nan", FALSE, 0 },
        { "-1", FALSE, 0 },    { "+1", FALSE, 0 },         { "1e", FALSE, 0 },
        { "1e+", FALSE, 0 },   { " 1", FALSE, 0 },         { "1 ", FALSE, 0 },
        { "1e999", FALSE, 0 }, { "1,5", FALSE, 0 },        { "0x1p4", FALSE, 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        double v = -1.0;
        gboolean ok = cs_units_parse_decimal(cases[i].text, &v);
        if (ok != cases[i].ok)
            g_error("\"%s\": parsed %s, expected %s", cases[i].text, ok ? "yes" : "no",
                    cases[i].ok ? "yes" : "no");
        g_assert_cmpfloat(v, ==, ok ? cases[i].value : -1.0);
    }
}

/* "400 GB/s" -> "400_GB_s": test paths take no '/' or blanks inside a component. */
static char *
path_component(const char *text)
{
    GString *s = g_string_new(NULL);

    for (const char *p = text; *p != '\0'; p++)
        g_string_append_c(s, g_ascii_isalnum(*p) || *p == '.' || *p == '-' ? *p : '_');
    if (s->len == 0)
        g_string_append(s, "empty");
    return g_string_free(s, FALSE);
}

/* Registers one test per case line; the cases live as long as the process. */
static void
add_data_cases(GPtrArray *keep)
{
    g_autofree char *path
        = g_test_build_filename(G_TEST_DIST, "data", "units", "cases.tests", NULL);
    g_autofree char *contents = NULL;
    g_autoptr(GError) error = NULL;

    if (!g_file_get_contents(path, &contents, NULL, &error))
        g_error("%s", error->message);
    g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        if (line[0] == '\0' || line[0] == '#')
            continue;
        g_auto(GStrv) f = g_strsplit(line, ",", 4);
        if (g_strv_length(f) != 4 || (strcmp(f[1], "P") != 0 && strcmp(f[1], "N") != 0))
            g_error("%s:%d: expected KIND,P|N,EXPECTED,TEXT", path, i + 1);
        Case *c = g_new0(Case, 1);
        c->kind = g_strdup(f[0]);
        c->valid = strcmp(f[1], "P") == 0;
        c->expected = g_strdup(f[2]);
        c->text = g_strdup(f[3]);
        c->line = i + 1;
        g_ptr_array_add(keep, c);

        g_autofree char *name = path_component(c->text);
        g_autofree char *test_path = g_strdup_printf("/units/data/%s/%s/line%03d-%s", c->kind,
                                                     c->valid ? "valid" : "invalid", c->line, name);
        g_test_add_data_func(test_path, c, test_case);
    }
}

/* ---- Messages ---- */

static void
assert_message(gboolean (*parse)(const char *, double *, GError **), const char *text,
               const char *message)
{
    double v = 0.0;
    g_autoptr(GError) error = NULL;

    g_assert_false(parse(text, &v, &error));
    g_assert_nonnull(error);
    g_assert_cmpstr(error->message, ==, message);
}

static void
test_message_bandwidth(void)
{
    g_test_summary("The message names the text and shows the units that would have worked, "
                   "with the user's own number.");
    assert_message(cs_units_parse_bandwidth, "400 GB",
                   "\"400 GB\" is not a bandwidth (expected e.g. \"400 GB/s\", \"400 Gb/s\")");
    assert_message(cs_units_parse_bandwidth, "400",
                   "\"400\" is not a bandwidth: the unit is missing "
                   "(expected e.g. \"400 GB/s\", \"400 Gb/s\")");
    assert_message(cs_units_parse_bandwidth, "0 Gb/s",
                   "\"0 Gb/s\" is not a bandwidth: it must be greater than zero");
}

static void
test_message_time(void)
{
    assert_message(cs_units_parse_time, "0.8",
                   "\"0.8\" is not a time: the unit is missing "
                   "(expected e.g. \"0.8 us\", \"0.8 ns\")");
    assert_message(cs_units_parse_time, "",
                   "\"\" is not a time (expected e.g. \"10 us\", "
                   "\"10 ns\")");
    assert_message(cs_units_parse_time, "-1 us", "\"-1 us\" is not a time: it is negative");
    assert_message(cs_units_parse_time, "nan us", "\"nan us\" is not a time: not a finite number");
    assert_message(cs_units_parse_time, "1e999 s", "\"1e999 s\" is not a time: out of range");
}

/* Amortization periods: h, d = 24 h, y = 365 d = 8760 h; zero, negative, unit-less, unknown
 * units and more than 100 years are errors. */
static void
test_period(void)
{
    double h = 0;
    g_assert_true(cs_units_parse_period("4y", &h, NULL));
    g_assert_cmpfloat(h, ==, 4 * 8760);
    g_assert_true(cs_units_parse_period("1460 d", &h, NULL));
    g_assert_cmpfloat(h, ==, 1460 * 24);
    g_assert_true(cs_units_parse_period("35040h", &h, NULL));
    g_assert_cmpfloat(h, ==, 35040);
    g_assert_true(cs_units_parse_period("0.5y", &h, NULL));
    g_assert_cmpfloat(h, ==, 4380);
    assert_message(cs_units_parse_period, "4",
                   "\"4\" is not a period: the unit is missing (expected e.g. \"4 y\", \"4 h\")");
    assert_message(cs_units_parse_period, "4 weeks",
                   "\"4 weeks\" is not a period (expected e.g. \"4 y\", \"4 h\")");
    assert_message(cs_units_parse_period, "0y",
                   "\"0y\" is not a period: out of range (more than 0, at most 100 y)");
    assert_message(cs_units_parse_period, "101y",
                   "\"101y\" is not a period: out of range (more than 0, at most 100 y)");
    assert_message(cs_units_parse_period, "-1y", "\"-1y\" is not a period: it is negative");
}

static void
test_message_size(void)
{
    gint64 v = 0;
    g_autoptr(GError) error = NULL;

    g_assert_false(cs_units_parse_size("9223372036854775808", &v, &error));
    g_assert_cmpstr(error->message, ==,
                    "\"9223372036854775808\" is not a size: larger than 9223372036854775807 "
                    "bytes");
    g_clear_error(&error);
    g_assert_false(cs_units_parse_size("8X", &v, &error));
    g_assert_cmpstr(error->message, ==,
                    "\"8X\" is not a size (expected e.g. \"8\", \"8K\", \"8 MiB\")");
    g_clear_error(&error);
    g_assert_false(cs_units_parse_size("0.5", &v, &error));
    g_assert_cmpstr(error->message, ==, "\"0.5\" is not a size: not a whole number of bytes");
}

/* ---- Formatters ---- */

typedef struct {
    double value;
    const char *text;
} RealFormat;

static void
test_format_time(void)
{
    static const RealFormat cases[] = {
        { 10e-6, "10.0 us" },                               /* the seed's alpha */
        { 1.1377e-9, "1.14 ns" },                           /* 1 KiB at 900 GB/s: 1024 / 9e11 */
        { 2.3456e-3, "2.35 ms" }, { 8.889e-12, "8.89 ps" }, /* 8 B at 900 GB/s */
        { 0.0, "0 s" },           { 999.96e-6, "1.00 ms" }, /* would round to "1000 us" */
        { 1.5, "1.50 s" },        { 150.0, "150 s" },       { 123.4e-9, "123 ns" },
        { 5e-16, "0.0005 ps" },   { -10e-6, "-10.0 us" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *s = cs_units_format_time(cases[i].value);
        g_assert_cmpstr(s, ==, cases[i].text);
    }
}

static void
test_format_bandwidth(void)
{
    static const RealFormat cases[] = {
        { 900e9, "900 GB/s" },  { 12.5e9, "12.5 GB/s" }, { 50e9, "50.0 GB/s" },
        { 8e5, "0.0008 GB/s" }, { 1.5e9, "1.50 GB/s" },  { 93.9e9, "93.9 GB/s" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *s = cs_units_format_bandwidth(cases[i].value);
        g_assert_cmpstr(s, ==, cases[i].text);
    }
}

static void
test_format_size(void)
{
    static const struct {
        gint64 bytes;
        const char *text;
    } cases[] = {
        { 0, "0 B" },
        { 8, "8 B" },
        { 1023, "1023 B" },
        { 1024, "1 KiB" },
        { 1025, "1025 B" }, /* 1.0009765625 KiB: not exact in three decimals */
        { 1152, "1.125 KiB" },
        { 1536, "1.5 KiB" },
        { 65536, "64 KiB" },
        { 1310720, "1.25 MiB" },
        { 1000000, "1000000 B" },
        { G_GINT64_CONSTANT(1610612736), "1.5 GiB" },
        { G_GINT64_CONSTANT(8) << 30, "8 GiB" },
        { G_GINT64_CONSTANT(1) << 62, "4 EiB" },
        { G_MAXINT64, "9223372036854775807 B" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *s = cs_units_format_size(cases[i].bytes);
        g_assert_cmpstr(s, ==, cases[i].text);
    }
}

static void
test_format_size_round_trip(void)
{
    g_test_summary("What the size formatter writes, the size parser reads back exactly.");
    for (int shift = 0; shift < 62; shift++) {
        gint64 base = G_GINT64_CONSTANT(1) << shift;
        const gint64 sizes[] = { base, base + base / 2, base + base / 8, 3 * base, base - 1 };
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            g_autofree char *s = cs_units_format_size(sizes[i]);
            gint64 back = -1;
            g_autoptr(GError) error = NULL;
            g_assert_true(cs_units_parse_size(s, &back, &error));
            g_assert_no_error(error);
            g_assert_cmpint(back, ==, sizes[i]);
        }
    }
}

static void
test_time_macros(void)
{
    /* 0.8 us = 800000 ps; 1.5 s = 1.5e12 ps; the macros round to the nearest picosecond. */
    g_assert_cmpint(cs_time_from_us(0.8), ==, 800000);
    g_assert_cmpint(cs_time_from_s(1.5), ==, G_GINT64_CONSTANT(1500000000000));
    g_assert_cmpfloat_with_epsilon(cs_time_to_s(2500000), 2.5e-6, 1e-20);
}

/* ---- Locale ---- */

static void
test_locale_independent(void)
{
    g_test_summary("A decimal comma locale must not change how \"0.8 us\" reads.");
    const char *old = setlocale(LC_NUMERIC, NULL);
    g_autofree char *saved = g_strdup(old);
    const char *locales[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", NULL };
    const char *set = NULL;

    for (int i = 0; locales[i] != NULL && set == NULL; i++)
        set = setlocale(LC_NUMERIC, locales[i]);
    if (set == NULL) {
        g_test_skip("no decimal-comma locale installed");
        return;
    }
    double s = 0.0;
    g_autoptr(GError) error = NULL;
    gboolean ok = cs_units_parse_time("0.8 us", &s, &error);
    setlocale(LC_NUMERIC, saved);
    g_assert_no_error(error);
    g_assert_true(ok);
    g_assert_cmpfloat_with_epsilon(s, 0.8e-6, 1e-18);
}

/* cs_expr_eval(): precedence, parentheses, unary minus, names; errors name the column. */
static void
test_expr(void)
{
    const char *const names[] = { "b", "s", "h", "layers" };
    const double values[] = { 8, 1024, 3072, 72 };
    const CsExprNames dims = { 4, names, values };
    static const struct {
        const char *text;
        double value;
    } good[] = { { "2 + 3 * 4", 14 },
                 { "(2 + 3) * 4", 20 },
                 { "-2 * 3", -6 },
                 { "1 / 4", 0.25 },
                 { "b * s * h * 2", 50331648 },
                 { "2*layers", 144 },
                 { "8.3e9 / 8 * 2", 2075000000 },
                 { "10 - 4 - 3", 3 },
                 { "  7  ", 7 } };
    for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
        g_autoptr(GError) error = NULL;
        double v = 0;
        g_assert_true(cs_expr_eval(good[i].text, &dims, &v, &error));
        g_assert_no_error(error);
        g_assert_cmpfloat_with_epsilon(v, good[i].value, 1e-9 * fabs(good[i].value));
    }
    static const struct {
        const char *text;
        const char *message;
    } bad[] = {
        { "2 +", "\"2 +\", column 4: the formula ends too early" },
        { "b * x", "\"b * x\", column 5: \"x\" is not a number or a dimension of the model" },
        { "1 / (b - 8)", "\"1 / (b - 8)\", column 12: division by zero" },
        { "2 3", "\"2 3\", column 3: an operator (+ - * /) or the end is expected" },
        { "(1 + 2", "\"(1 + 2\", column 7: a ')' is missing" },
        { "", "\"\", column 1: the formula ends too early" },
        { "1e999", "\"1e999\", column 1: not a number" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        double v = 0;
        g_assert_false(cs_expr_eval(bad[i].text, &dims, &v, &error));
        g_assert_error(error, CS_EXPR_ERROR, CS_EXPR_ERROR_SYNTAX);
        g_assert_cmpstr(error->message, ==, bad[i].message);
    }
}

int
main(int argc, char **argv)
{
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(case_free);

    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    g_test_init(&argc, &argv, NULL);

    add_data_cases(keep);
    g_test_add_func("/units/message/bandwidth", test_message_bandwidth);
    g_test_add_func("/units/message/time", test_message_time);
    g_test_add_func("/units/period", test_period);
    g_test_add_func("/units/message/size", test_message_size);
    g_test_add_func("/units/format/time", test_format_time);
    g_test_add_func("/units/format/bandwidth", test_format_bandwidth);
    g_test_add_func("/units/format/size", test_format_size);
    g_test_add_func("/units/format/size-round-trip", test_format_size_round_trip);
    g_test_add_func("/units/time/macros", test_time_macros);
    g_test_add_func("/units/locale/decimal-comma", test_locale_independent);
    g_test_add_func("/units/decimal", test_decimal);
    g_test_add_func("/units/expr", test_expr);
    return g_test_run();
}
