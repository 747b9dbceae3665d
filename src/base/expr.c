// SPDX-License-Identifier: MIT
/* Arithmetic on named numbers: a workload's "bytes": "b * s * h * 2" over its "model"
 * dimensions (docs/workloads.md). Numbers, names, + - * /, unary minus and parentheses, by a
 * recursive descent; an error says the column where the text stops making sense. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/expr.h"

G_DEFINE_QUARK(cs - expr - error - quark, cs_expr_error)

typedef struct {
    const char *text;
    const char *at;
    const CsExprNames *names;
    GError **error;
} Parser;

static gboolean parse_sum(Parser *p, double *out);

static void
skip_space(Parser *p)
{
    while (g_ascii_isspace(*p->at))
        p->at++;
}

static gboolean
fail(Parser *p, const char *what)
{
    g_set_error(p->error, CS_EXPR_ERROR, CS_EXPR_ERROR_SYNTAX, "\"%s\", column %d: %s", p->text,
                (int)(p->at - p->text) + 1, what);
    return FALSE;
}

/* A number, a name, a parenthesized sum, or one of them negated. */
static gboolean
parse_atom(Parser *p, double *out)
{
    skip_space(p);
    if (*p->at == '-') {
        p->at++;
        if (!parse_atom(p, out))
            return FALSE;
        *out = -*out;
        return TRUE;
    }
    if (*p->at == '(') {
        p->at++;
        if (!parse_sum(p, out))
            return FALSE;
        skip_space(p);
        if (*p->at != ')')
            return fail(p, "a ')' is missing");
        p->at++;
        return TRUE;
    }
    if (g_ascii_isdigit(*p->at) || *p->at == '.') {
        char *end = NULL;
        *out = g_ascii_strtod(p->at, &end);
        if (end == p->at || !isfinite(*out))
            return fail(p, "not a number");
        p->at = end;
        return TRUE;
    }
    if (g_ascii_isalpha(*p->at) || *p->at == '_') {
        const char *start = p->at;
        while (g_ascii_isalnum(*p->at) || *p->at == '_')
            p->at++;
        g_autofree char *name = g_strndup(start, (gsize)(p->at - start));
        for (int i = 0; i < p->names->n; i++)
            if (strcmp(p->names->names[i], name) == 0) {
                *out = p->names->values[i];
                return TRUE;
            }
        p->at = start;
        g_autofree char *why
            = g_strdup_printf("\"%s\" is not a number or a dimension of the model", name);
        return fail(p, why);
    }
    return fail(p, *p->at == '\0' ? "the formula ends too early"
                                  : "a number, a name or '(' is expected");
}

static gboolean
parse_product(Parser *p, double *out)
{
    if (!parse_atom(p, out))
        return FALSE;
    for (;;) {
        skip_space(p);
        const char op = *p->at;
        if (op != '*' && op != '/')
            return TRUE;
        p->at++;
        double rhs;
        if (!parse_atom(p, &rhs))
            return FALSE;
        if (op == '/' && rhs == 0)
            return fail(p, "division by zero");
        *out = op == '*' ? *out * rhs : *out / rhs;
    }
}

static gboolean
parse_sum(Parser *p, double *out)
{
    if (!parse_product(p, out))
        return FALSE;
    for (;;) {
        skip_space(p);
        const char op = *p->at;
        if (op != '+' && op != '-')
            return TRUE;
        p->at++;
        double rhs;
        if (!parse_product(p, &rhs))
            return FALSE;
        *out = op == '+' ? *out + rhs : *out - rhs;
    }
}

/**
 * cs_expr_eval:
 * @text: the formula
 * @names: (nullable): the names it may use
 *
 * Evaluates @text; FALSE with CS_EXPR_ERROR_SYNTAX naming the column otherwise, or when the
 * result is not finite.
 */
gboolean
cs_expr_eval(const char *text, const CsExprNames *names, double *value, GError **error)
{
    static const CsExprNames none = { 0 };
    Parser p = { text, text, names != NULL ? names : &none, error };

    g_return_val_if_fail(text != NULL && value != NULL, FALSE);
    if (!parse_sum(&p, value))
        return FALSE;
    skip_space(&p);
    if (*p.at != '\0')
        return fail(&p, "an operator (+ - * /) or the end is expected");
    if (!isfinite(*value))
        return fail(&p, "the result is not a finite number");
    return TRUE;
}
