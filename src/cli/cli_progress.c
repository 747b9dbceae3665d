// SPDX-License-Identifier: MIT
/* Progress of a long command on stderr: "collsim: 12/31 sizes (64 MiB), 35 s, about 40 s left"
 * (select: "collsim select: 3/9 allreduce candidates (ring/LL), 2.0 s, about 4 s left").
 * On a terminal, once a second has passed, one line rewritten in place and cleared at the end;
 * forced (--progress), a line per step wherever stderr goes; --quiet, nothing. The estimate is
 * the time per step so far times the steps left: sizes cost more as they grow, so it is low
 * early on, and says "about". Where a step has no known count of its own (an iterative fit), a
 * line says where the step under way stands, with no estimate of its own. Standard output never
 * sees it. */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "base/units.h"
#include "cli/cli.h"

/* --progress and --quiet: FORCE, QUIET, else AUTO; both at once is a usage error. */
gboolean
cs_cli_progress_mode(const char *prog, gboolean progress, gboolean quiet, CsCliProgressMode *mode,
                     GError **error)
{
    if (progress && quiet)
        return cs_cli_usage_error(error, prog, "--progress and --quiet contradict each other");
    *mode = quiet ? CS_CLI_PROGRESS_QUIET : progress ? CS_CLI_PROGRESS_FORCE : CS_CLI_PROGRESS_AUTO;
    return TRUE;
}

void
cs_cli_progress_init(CsCliProgress *p, const char *prog, int total, CsCliProgressMode mode)
{
    *p = (CsCliProgress){
        .prog = prog,
        .total = total,
        .mode = mode,
        .tty = isatty(STDERR_FILENO) == 1,
        .t0 = g_get_monotonic_time(),
    };
}

/* A new phase of @total steps counted in @unit ("allreduce candidates"): the count and the
 * clock start again, the line stays. */
void
cs_cli_progress_restart(CsCliProgress *p, int total, const char *unit)
{
    p->total = total;
    p->done = 0;
    p->unit = unit;
    p->t0 = g_get_monotonic_time();
}

void
cs_cli_progress_step_text(CsCliProgress *p, const char *what)
{
    p->done++;
    if (p->mode == CS_CLI_PROGRESS_QUIET || (p->mode == CS_CLI_PROGRESS_AUTO && !p->tty))
        return;
    const double elapsed = (g_get_monotonic_time() - p->t0) / 1e6;
    if (p->mode == CS_CLI_PROGRESS_AUTO && elapsed < 1.0)
        return;
    const double left = elapsed / p->done * (p->total - p->done);
    const gboolean in_place = p->tty && p->mode == CS_CLI_PROGRESS_AUTO;
    fprintf(stderr, "%s%s: %d/%d %s (%s), %.1f s, about %.0f s left%s", in_place ? "\r" : "",
            p->prog, p->done, p->total, p->unit != NULL ? p->unit : "sizes", what, elapsed, left,
            in_place ? "\033[K" : "\n");
    p->shown = in_place;
    fflush(stderr);
}

/* Where the step under way stands, @what, without counting it: "collsim calibrate: 1/4 fits,
 * now leaving out a.txt: evaluation 12 ..., 9.0 s, about 27 s left". The estimate is the time
 * per step ended so far times the steps left, this one included; none before a step has
 * ended (a fit's evaluations have no known total). */
void
cs_cli_progress_within(CsCliProgress *p, const char *what)
{
    if (p->mode == CS_CLI_PROGRESS_QUIET || (p->mode == CS_CLI_PROGRESS_AUTO && !p->tty))
        return;
    const double elapsed = (g_get_monotonic_time() - p->t0) / 1e6;
    if (p->mode == CS_CLI_PROGRESS_AUTO && elapsed < 1.0)
        return;
    g_autofree char *left = p->done > 0 ? g_strdup_printf(", about %.0f s left",
                                                          elapsed / p->done * (p->total - p->done))
                                        : g_strdup("");
    const gboolean in_place = p->tty && p->mode == CS_CLI_PROGRESS_AUTO;
    fprintf(stderr, "%s%s: %d/%d %s, now %s, %.1f s%s%s", in_place ? "\r" : "", p->prog, p->done,
            p->total, p->unit != NULL ? p->unit : "sizes", what, elapsed, left,
            in_place ? "\033[K" : "\n");
    p->shown = in_place;
    fflush(stderr);
}

void
cs_cli_progress_step(CsCliProgress *p, gint64 size_bytes)
{
    g_autofree char *size = cs_units_format_size(size_bytes);
    cs_cli_progress_step_text(p, size);
}

void
cs_cli_progress_finish(CsCliProgress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = FALSE;
}
