/* The block compiler's statements (parse.h): the header, the body's lines and their forms
 * (assignments to locals, to act and to storage, masked writes, the SSA commit under
 * `if unmasked:` / `else:`, calls of X, `if t.any(): X.undefined(...)`, return), and the
 * lifetimes of locals (the last statement reading each value).
 */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "vm.h"

static const char SSA_HEADER[] = "def block(V, U, C, act, cf, unmasked, X, TID):";
static const char WAVE_HEADER[] = "def block(V, H, U, C, here, act, LB, X, TID):";

/* Names a local may not take: both headers' parameters, the helpers, Python's keywords. */
static const char *const RESERVED[] = {
    "V", "H", "U", "C", "act", "here", "cf", "LB", "unmasked", "X", "TID",
    "where", "isnan", "f32", "f16", "bits32", "bits16", "ffma", "fconvert", "int_to_float",
    "float_to_int", "ashr",
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
    "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
    "try", "while", "with", "yield",
};

#define NODE(i) (ps->nodes[i])
#define RESERVE(ps, field, count, need) \
    lv_reserve((ps), (void **)&(ps)->field, &(ps)->count, (need), sizeof *(ps)->field)

typedef struct {
    const char *text, *end;  /* from the first non-space character */
    int indent, number;
} src_line;

/* The next line that is not blank into *line; 0 at the end of the source. */
static int
read_line(lv_parser *ps, size_t *pos, src_line *line)
{
    while (*pos < ps->len) {
        const char *start = ps->src + *pos;
        const char *newline = memchr(start, '\n', ps->len - *pos);
        const char *end = newline ? newline : ps->src + ps->len;
        *pos = (size_t)(end - ps->src) + (newline != NULL);
        ps->line_count++;
        const char *p = start;
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            continue;
        line->text = p;
        line->end = end;
        line->indent = (int)(p - start);
        line->number = ps->line_count;
        return 1;
    }
    return 0;
}

static void
begin_line(cursor *c, const src_line *line, int indent)
{
    lv_parser *ps = c->ps;
    ps->p = line->text;
    ps->line_end = line->end;
    ps->line = line->number;
    if (line->indent != indent)
        lv_fail(ps, "indentation of %d spaces where %d were expected", line->indent, indent);
    lv_advance(c);
}

static void
expect_end(cursor *c)
{
    if (c->cur.kind != TK_EOL)
        lv_fail(c->ps, "more on the line than understood");
}

static int32_t
new_stmt(lv_parser *ps, int kind, int32_t target, int32_t expr, int32_t cond)
{
    RESERVE(ps, stmts, cap_stmts, ps->n_stmts + 1);
    lv_stmt *s = &ps->stmts[ps->n_stmts];
    s->kind = (uint8_t)kind;
    s->line = ps->line;
    s->target = target;
    s->expr = expr;
    s->cond = cond;
    return (int32_t)ps->n_stmts++;
}

/* `name = expr`: a new value, bound to the name from here on. */
static void
define(cursor *c, const char *name, int len)
{
    lv_parser *ps = c->ps;
    for (size_t i = 0; i < sizeof RESERVED / sizeof RESERVED[0]; i++) {
        if (RESERVED[i][0] == name[0] && strlen(RESERVED[i]) == (size_t)len &&
            memcmp(RESERVED[i], name, (size_t)len) == 0)
            lv_fail(ps, "an assignment to %.*s", len, name);
    }
    const int32_t expr = lv_parse_expr(c);
    expect_end(c);
    const lv_node *e = &NODE(expr);
    if (!(e->kind == NK_XCALL && e->type == TY_U64))
        lv_need_value(ps, expr, 0, "a local");
    RESERVE(ps, values, cap_values, ps->n_values + 1);
    const int32_t value = (int32_t)ps->n_values++;
    ps->values[value] = (lv_value){.last_use = -1, .row = -1, .next = -1, .type = e->type};
    size_t slot;
    uint64_t hash;
    const int32_t entry = lv_local_entry(ps, name, len, &slot, &hash);
    if (entry >= 0) {
        ps->local_names[3 * entry + 2] = value;
    } else {
        RESERVE(ps, local_names, cap_locals, 3 * (ps->n_locals + 1));
        int32_t *names = ps->local_names + 3 * ps->n_locals;
        names[0] = (int32_t)(name - ps->src);
        names[1] = len;
        names[2] = value;
        lv_table_put(ps, &ps->local_table, slot, hash, (int32_t)ps->n_locals++);
    }
    new_stmt(ps, ST_DEF, value, expr, -1);
}

/* `V['s'] = expr` or `H[n] = expr` (a masked write when expr is where(mask, x, the same
 * place)) after the target; storage holds uint64 only, so what later blocks read from it is
 * uint64 whichever executor ran this one. */
static void
write_storage(cursor *c, int32_t ext)
{
    lv_parser *ps = c->ps;
    lv_expect_op(c, '=', "'='");
    const int32_t expr = lv_parse_expr(c);
    expect_end(c);
    const lv_node *e = &NODE(expr);
    if (e->kind == NK_OP && e->op == OP_WHERE && NODE(e->c).kind == NK_EXT &&
        NODE(e->c).a == ext) {
        new_stmt(ps, ST_MERGE, ext, e->b, e->a);
        return;
    }
    lv_need_value(ps, expr, TY_U64, "a storage write");
    new_stmt(ps, ST_WRITE, ext, expr, -1);
}

/* `LB[mask] = N`: the constant N written to the lanes of the mask. */
static void
write_block_numbers(cursor *c)
{
    lv_parser *ps = c->ps;
    const int32_t lb = lv_external(ps, EXT_LB, 0, 0, 0);
    lv_expect_op(c, '[', "'['");
    const int32_t mask = lv_parse_expr(c);
    lv_need_value(ps, mask, TY_BOOL, "LB's index");
    lv_expect_op(c, ']', "']'");
    lv_expect_op(c, '=', "'='");
    const int32_t number = lv_parse_expr(c);
    expect_end(c);
    if (NODE(number).kind != NK_LIT || NODE(number).type != TY_LIT ||
        (uint64_t)NODE(number).imm >> 63)
        lv_fail(ps, "LB takes an int64 literal");
    new_stmt(ps, ST_MERGE, lb, lv_as_row(ps, number), mask);
}

static int
nodes_equal(const lv_parser *ps, int32_t x, int32_t y)
{
    if (x < 0 || y < 0)
        return x == y;
    const lv_node *a = &NODE(x), *b = &NODE(y);
    if (a->kind != b->kind || a->type != b->type || a->op != b->op || a->imm != b->imm)
        return 0;
    switch (a->kind) {
    case NK_EXT:
    case NK_LOCAL:
        return a->a == b->a;
    case NK_OP:
    case NK_FVIEW:
        return nodes_equal(ps, a->a, b->a) && nodes_equal(ps, a->b, b->b) &&
               nodes_equal(ps, a->c, b->c);
    default:
        return 0;
    }
}

/* `V['s'] = x` after the indentation: the external and the value node. */
static int32_t
commit_line(cursor *c, int32_t *expr)
{
    lv_parser *ps = c->ps;
    if (!lv_is_name(c, "V"))
        lv_fail(ps, "a commit line not understood");
    lv_advance(c);
    const int32_t ext = lv_parse_subscript(c, EXT_V);
    lv_expect_op(c, '=', "'='");
    *expr = lv_parse_expr(c);
    expect_end(c);
    return ext;
}

/* The SSA commit after `if unmasked:`: `V['s'] = t` lines, `else:`, then the same pairs as
 * `V['s'] = where(act, t, V['s'])`. Returns 1 with *line the next line, 0 at the end. */
static int
parse_commit(cursor *c, size_t *pos, src_line *line)
{
    lv_parser *ps = c->ps;
    const int32_t first = (int32_t)ps->n_stmts;
    int more;
    while ((more = read_line(ps, pos, line)) && line->indent == 8) {
        begin_line(c, line, 8);
        ps->current = (int32_t)ps->n_stmts;
        int32_t expr;
        const int32_t ext = commit_line(c, &expr);
        lv_need_value(ps, expr, TY_U64, "a commit");
        new_stmt(ps, ST_COMMIT, ext, expr, -1);
    }
    const int32_t pairs = (int32_t)ps->n_stmts - first;
    if (!more || pairs == 0)
        lv_fail(ps, "`if unmasked:` without its commits and else");
    begin_line(c, line, 4);
    if (!lv_is_name(c, "else"))
        lv_fail(ps, "`else:` expected");
    lv_advance(c);
    lv_expect_op(c, ':', "':'");
    expect_end(c);
    const int32_t act = lv_external(ps, EXT_ACT, 0, 0, 0);
    for (int32_t k = 0; k < pairs; k++) {
        if (!read_line(ps, pos, line))
            lv_fail(ps, "the else branch ends early");
        begin_line(c, line, 8);
        const lv_stmt *pair = &ps->stmts[first + k];
        ps->current = first + k;
        int32_t expr;
        const int32_t ext = commit_line(c, &expr);
        const lv_node *e = &NODE(expr);
        if (ext != pair->target || e->kind != NK_OP || e->op != OP_WHERE ||
            NODE(e->a).kind != NK_EXT || NODE(e->a).a != act || NODE(e->c).kind != NK_EXT ||
            NODE(e->c).a != ext || !nodes_equal(ps, e->b, pair->expr))
            lv_fail(ps, "an else line that is not the masked form of its commit");
    }
    more = read_line(ps, pos, line);
    if (more && line->indent != 4)
        lv_fail(ps, "the else branch is longer than its commits");
    return more;
}

/* `X.export(slot, value, act)` as two masked writes, O[slot] = where(act, value, O[slot])
 * and W[slot] = where(act, 1, W[slot]), instead of a call: an export then costs the
 * executor no stop, and the driver hands the O and W rows to the lanes' state once, at the
 * end of the run (oracles/interp/vm.py `VMFunction.hand_outputs`), which is what
 * `Lanes.export` does call by call. Only with the block's own `act` as the mask and a
 * small slot, as the emitters write it; anything else stays a call. Returns 1 if taken. */
static int
export_in_rows(lv_parser *ps, int32_t call)
{
    const lv_node n = NODE(call);
    if (n.op != XM_EXPORT)
        return 0;
    const int32_t slot = ps->args[n.a], value = ps->args[n.a + 1], mask = ps->args[n.a + 2];
    if (NODE(mask).kind != NK_EXT || ps->exts[NODE(mask).a].kind != EXT_ACT ||
        NODE(slot).imm < 0 || NODE(slot).imm >= 1 << 16)
        return 0;
    const uint64_t key = (uint64_t)NODE(slot).imm;
    const int32_t one = lv_ext_node(ps, lv_external(ps, EXT_C, 0, 0, 1));
    new_stmt(ps, ST_MERGE, lv_external(ps, EXT_O, 0, 0, key), value, mask);
    new_stmt(ps, ST_MERGE, lv_external(ps, EXT_W, 0, 0, key), one, mask);
    return 1;
}

/* `if cond.any(): X.method(...)` after the if. */
static void
parse_call_if(cursor *c)
{
    lv_parser *ps = c->ps;
    const int32_t cond = lv_parse_expr(c);
    if (NODE(cond).kind != NK_ANY)
        lv_fail(ps, "an if not understood");
    lv_expect_op(c, ':', "':'");
    if (!lv_is_name(c, "X"))
        lv_fail(ps, "an if body other than a call of X");
    const int32_t call = lv_parse_expr(c);
    expect_end(c);
    if (NODE(call).kind != NK_XCALL)
        lv_fail(ps, "an if body other than a call of X");
    new_stmt(ps, ST_CALLIF, -1, call, NODE(cond).a);
}

static void
parse_return(cursor *c)
{
    lv_parser *ps = c->ps;
    int32_t expr = -1;
    if (lv_is_name(c, "None")) {
        lv_advance(c);
    } else {
        expr = lv_parse_expr(c);
        lv_need_value(ps, expr, 0, "return");
    }
    expect_end(c);
    new_stmt(ps, ST_RETURN, -1, expr, -1);
    ps->returned = 1;
}

/* One statement at the body's indentation (the commit reads lines of its own). Returns 1
 * with *line the next line, 0 at the end. */
static int
parse_statement(cursor *c, size_t *pos, src_line *line)
{
    lv_parser *ps = c->ps;
    if (ps->returned)
        lv_fail(ps, "a statement after return");
    begin_line(c, line, 4);
    ps->current = (int32_t)ps->n_stmts;
    if (c->cur.kind != TK_NAME)
        lv_fail(ps, "a statement not understood");
    const char *name = c->cur.start;
    const int len = c->cur.len;
#define IS(word) ((size_t)len == sizeof(word) - 1 && memcmp(name, word, sizeof(word) - 1) == 0)
    if (IS("return")) {
        lv_advance(c);
        parse_return(c);
    } else if (IS("if")) {
        lv_advance(c);
        if (lv_is_name(c, "unmasked") && !ps->wave) {
            lv_advance(c);
            lv_expect_op(c, ':', "':'");
            expect_end(c);
            return parse_commit(c, pos, line);
        }
        parse_call_if(c);
    } else if (IS("X")) {
        const int32_t call = lv_parse_expr(c);
        expect_end(c);
        if (NODE(call).kind != NK_XCALL)
            lv_fail(ps, "an expression statement other than a call of X");
        if (!export_in_rows(ps, call))
            new_stmt(ps, ST_CALL, -1, call, -1);
    } else if (IS("LB") && ps->wave) {
        lv_advance(c);
        write_block_numbers(c);
    } else if (IS("V") || (IS("H") && ps->wave)) {
        lv_advance(c);
        write_storage(c, lv_parse_subscript(c, name[0] == 'V' ? EXT_V : EXT_H));
    } else {
        lv_advance(c);
        if (!lv_is_op(c, '='))
            lv_fail(ps, "a statement not understood");
        lv_advance(c);
        if (IS("act")) {
            const int32_t expr = lv_parse_expr(c);
            expect_end(c);
            lv_need_value(ps, expr, TY_BOOL, "act");
            new_stmt(ps, ST_WRITE, lv_external(ps, EXT_ACT, 0, 0, 0), expr, -1);
        } else {
            define(c, name, len);
        }
    }
#undef IS
    return read_line(ps, pos, line);
}

int
lv_parse(lv_parser *ps, const char *src, size_t len)
{
    ps->src = src;
    ps->len = len;
    if (setjmp(ps->fail))
        return -1;
    lv_table_init(ps, &ps->local_table, 64);
    lv_table_init(ps, &ps->ext_table, 64);
    const char *newline = memchr(src, '\n', len);
    const size_t first = newline ? (size_t)(newline - src) : len;
    if (first == sizeof SSA_HEADER - 1 && memcmp(src, SSA_HEADER, first) == 0)
        ps->wave = 0;
    else if (first == sizeof WAVE_HEADER - 1 && memcmp(src, WAVE_HEADER, first) == 0)
        ps->wave = 1;
    else
        lv_fail(ps, "line 1: not a block header the compiler knows");
    size_t pos = first + (newline != NULL);
    ps->line_count = 1;
    cursor c = {.ps = ps};
    src_line line;
    int more = read_line(ps, &pos, &line);
    if (!more)
        lv_fail(ps, "a block without a body");
    while (more)
        more = parse_statement(&c, &pos, &line);
    return 0;
}

void
lv_free(lv_parser *ps)
{
    free(ps->nodes);
    free(ps->stmts);
    free(ps->values);
    free(ps->exts);
    free(ps->args);
    free(ps->strings);
    free(ps->local_names);
    free(ps->local_table.slots);
    free(ps->local_table.hashes);
    free(ps->ext_table.slots);
    free(ps->ext_table.hashes);
}
