// SPDX-License-Identifier: MIT
/* Arithmetic on named numbers (expr.c): a workload's sizes as formulas of its model's
 * dimensions. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CS_EXPR_ERROR (cs_expr_error_quark())
GQuark cs_expr_error_quark(void);

typedef enum {
    CS_EXPR_ERROR_SYNTAX, /* not a formula, an unknown name, a division by zero */
} CsExprError;

/* The names a formula may use and their values (borrowed). */
typedef struct {
    int n;
    const char *const *names;
    const double *values;
} CsExprNames;

/* Evaluates @text: numbers, @names, + - * /, unary minus, parentheses. */
gboolean cs_expr_eval(const char *text, const CsExprNames *names, double *value, GError **error);

G_END_DECLS
