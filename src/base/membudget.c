// SPDX-License-Identifier: MIT
/* The memory budget (membudget.h): the environment, physical memory and the process's
 * resource limits, read once. */
#include "config.h"

#include <sys/resource.h>
#include <unistd.h>

#include "base/membudget.h"
#include "base/units.h"

/* The smallest budget COLLSIM_MEMORY_LIMIT may set: less cannot hold a topology. */
#define MIN_BUDGET ((guint64)1 << 20)

typedef struct {
    guint64 bytes;
    char *source;
} Budget;

static Budget budget;      /* the answer, once known */
static gboolean known;     /* budget holds it */
static GMutex budget_lock; /* guards budget and known */
static GError *init_error; /* what cs_membudget_init() reported, kept for a second call */

static guint64
physical_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return (guint64)8 << 30; /* unknown: assume a small machine */
    return (guint64)pages * (guint64)page;
}

/* The default: half of physical memory, or 3/4 of a finite soft limit on the address space
 * or the data segment (what malloc can get: the rest holds code, stacks and libraries). */
static void
default_budget(Budget *b)
{
    guint64 phys = physical_bytes();
    g_autofree char *phys_text = cs_membudget_format(phys);
    b->bytes = phys / 2;
    b->source = g_strdup_printf("half of the %s of physical memory; %s sets another", phys_text,
                                CS_MEMBUDGET_ENV);
    const int resources[] = { RLIMIT_AS, RLIMIT_DATA };
    const char *names[] = { "ulimit -v", "ulimit -d" };
    for (gsize i = 0; i < G_N_ELEMENTS(resources); i++) {
        struct rlimit lim;
        if (getrlimit(resources[i], &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
            continue;
        guint64 cap = (guint64)lim.rlim_cur / 4 * 3;
        if (cap >= b->bytes)
            continue;
        g_autofree char *lim_text = cs_membudget_format((guint64)lim.rlim_cur);
        b->bytes = cap;
        g_free(b->source);
        b->source = g_strdup_printf("3/4 of the %s limit of %s; %s sets another", names[i],
                                    lim_text, CS_MEMBUDGET_ENV);
    }
}

gboolean
cs_membudget_init(GError **error)
{
    g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
    g_mutex_lock(&budget_lock);
    if (!known) {
        const char *env = g_getenv(CS_MEMBUDGET_ENV);
        gint64 bytes = 0;
        g_autoptr(GError) local = NULL;
        if (env != NULL && cs_units_parse_size(env, &bytes, &local) && (guint64)bytes < MIN_BUDGET)
            g_set_error(&local, CS_UNITS_ERROR, CS_UNITS_ERROR_RANGE,
                        "\"%s\" is below the smallest budget, 1 MiB", env);
        if (local != NULL) {
            init_error = g_error_new(CS_UNITS_ERROR, local->code, "%s=%s: %s", CS_MEMBUDGET_ENV,
                                     env, local->message);
            default_budget(&budget);
        }
        else if (env != NULL) {
            budget.bytes = (guint64)bytes;
            budget.source = g_strdup_printf("%s=%s", CS_MEMBUDGET_ENV, env);
        }
        else {
            default_budget(&budget);
        }
        known = TRUE;
    }
    gboolean ok = init_error == NULL;
    if (!ok)
        g_propagate_error(error, g_error_copy(init_error));
    g_mutex_unlock(&budget_lock);
    return ok;
}

guint64
cs_membudget_bytes(void)
{
    cs_membudget_init(NULL);
    g_mutex_lock(&budget_lock);
    guint64 bytes = budget.bytes;
    g_mutex_unlock(&budget_lock);
    return bytes;
}

const char *
cs_membudget_source(void)
{
    cs_membudget_init(NULL);
    g_mutex_lock(&budget_lock);
    const char *source = budget.source;
    g_mutex_unlock(&budget_lock);
    return source;
}

char *
cs_membudget_format(guint64 bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    gsize u = 0;
    while (v >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
    return g_strdup_printf("%.3g %s", v, units[u]);
}

void
cs_membudget_set_for_testing(guint64 bytes)
{
    g_mutex_lock(&budget_lock);
    g_clear_pointer(&budget.source, g_free);
    g_clear_error(&init_error);
    if (bytes > 0) {
        budget.bytes = bytes;
        budget.source = g_strdup("set by the test");
        known = TRUE;
    }
    else {
        known = FALSE;
    }
    g_mutex_unlock(&budget_lock);
}
