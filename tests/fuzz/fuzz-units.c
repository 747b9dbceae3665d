// SPDX-License-Identifier: MIT
/* libFuzzer target: the units parser (src/base/units.h) on arbitrary bytes: every parser, and
 * the formatter of every value a parser accepts. */
#include <glib.h>
#include <stdint.h>

#include "base/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    double value;
    gint64 count;

    if (cs_units_parse_time(text, &value, NULL))
        g_free(cs_units_format_time(value));
    if (cs_units_parse_bandwidth(text, &value, NULL))
        g_free(cs_units_format_bandwidth(value));
    if (cs_units_parse_size(text, &count, NULL))
        g_free(cs_units_format_size(count));
    (void)cs_units_parse_count(text, &count, NULL);
    (void)cs_units_parse_decimal(text, &value);
    return 0;
}
