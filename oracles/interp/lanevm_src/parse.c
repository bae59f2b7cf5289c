/* The block compiler's parser (parse.h): recursive descent over the lines of one block's
 * source, with Python's operator precedence, typing every expression as numpy would hold it
 * and refusing every combination numpy would compute differently from the VM's rows
 * (bool + bool, int64 against uint64, a bare int beside a bool, floats outside the float
 * forms). A rejection is always safe (the block runs by numpy); a wrong acceptance is not.
 */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "vm.h"

static const char *const METHODS[XM_COUNT] = {"load", "store", "export", "ballot", "undefined"};
/* Each method's arguments: v a value row, i an int, s a string. */
static const char *const SIGNATURES[XM_COUNT] = {"viv", "vviv", "ivv", "vv", "vs"};

#define NODE(i) (ps->nodes[i])
#define RESERVE(ps, field, count, need) \
    lv_reserve((ps), (void **)&(ps)->field, &(ps)->count, (need), sizeof *(ps)->field)

static int32_t
new_node(lv_parser *ps, int kind, int type, int op, int32_t a, int32_t b, int32_t c,
         int64_t imm)
{
    RESERVE(ps, nodes, cap_nodes, ps->n_nodes + 1);
    lv_node *n = &ps->nodes[ps->n_nodes];
    n->kind = (uint8_t)kind;
    n->type = (uint8_t)type;
    n->op = (int16_t)op;
    n->a = a;
    n->b = b;
    n->c = c;
    n->imm = imm;
    return (int32_t)ps->n_nodes++;
}

int32_t
lv_ext_node(lv_parser *ps, int32_t ext)
{
    return new_node(ps, NK_EXT, ps->exts[ext].type, 0, ext, -1, -1, 0);
}

static int32_t
named_ext(lv_parser *ps, int kind)
{
    return lv_ext_node(ps, lv_external(ps, kind, 0, 0, 0));
}

/* A bare int where a row is needed: the constant row of its value. */
int32_t
lv_as_row(lv_parser *ps, int32_t node)
{
    if (NODE(node).kind != NK_LIT)
        return node;
    return lv_ext_node(ps, lv_external(ps, EXT_C, 0, 0, (uint64_t)NODE(node).imm));
}

/* A uint64 or bool value a row op can read: not a call, an .any(), a literal or a float view. */
int
lv_is_value(const lv_parser *ps, int32_t node)
{
    const lv_node *n = &NODE(node);
    return (n->type == TY_U64 || n->type == TY_BOOL) && n->kind != NK_XCALL &&
           n->kind != NK_ANY && n->kind != NK_LIT;
}

void
lv_need_value(lv_parser *ps, int32_t node, int type, const char *where)
{
    if (!lv_is_value(ps, node) || (type && NODE(node).type != type))
        lv_fail(ps, "%s takes a %s value here", where,
                type == TY_BOOL ? "bool" : type == TY_U64 ? "uint64" : "uint64 or bool");
}

static int64_t
need_literal(lv_parser *ps, int32_t node, int64_t low, int64_t high, const char *what)
{
    const lv_node *n = &NODE(node);
    if (n->kind != NK_LIT || n->type != TY_LIT || (uint64_t)n->imm < (uint64_t)low ||
        (uint64_t)n->imm > (uint64_t)high)
        lv_fail(ps, "%s must be an integer literal in %lld..%lld", what, (long long)low,
                (long long)high);
    return n->imm;
}

/* --- expression nodes, typed -------------------------------------------------------------- */
static int32_t
make_compare(lv_parser *ps, int op, int32_t a, int32_t b)
{
    const lv_node *x = &NODE(a), *y = &NODE(b);
    if (x->kind == NK_FVIEW && y->kind == NK_FVIEW) {
        if (x->imm != y->imm)
            lv_fail(ps, "a comparison of f16 with f32");
        int fop = op == OP_EQ ? OP_FEQ : op == OP_LT ? OP_FLT : OP_FLE;
        return new_node(ps, NK_OP, TY_BOOL, fop, x->a, y->a, -1, x->imm);
    }
    int tx = x->kind == NK_XCALL || x->kind == NK_ANY ? 0 : x->type;
    int ty = y->kind == NK_XCALL || y->kind == NK_ANY ? 0 : y->type;
    if (tx == TY_I64 || ty == TY_I64) {
        /* int64 against a uint64 row compares as float64 in numpy: only `== literal`. */
        const lv_node *lit = tx == TY_I64 ? y : x;
        if (op != OP_EQ || lit->type != TY_LIT || (uint64_t)lit->imm >> 63)
            lv_fail(ps, "an int64 row compared other than == a literal");
    } else if (tx == TY_LIT || ty == TY_LIT) {
        if ((tx == TY_LIT ? ty : tx) != TY_U64)
            lv_fail(ps, "a literal compared with something not uint64");
    } else if (!lv_is_value(ps, a) || !lv_is_value(ps, b)) {
        lv_fail(ps, "a comparison of values not understood");
    }
    a = lv_as_row(ps, a);
    b = lv_as_row(ps, b);
    return new_node(ps, NK_OP, TY_BOOL, op, a, b, -1, 0);
}

static int32_t
make_binary(lv_parser *ps, int op, int32_t a, int32_t b)
{
    const lv_node *x = &NODE(a), *y = &NODE(b);
    if (x->kind == NK_FVIEW && y->kind == NK_FVIEW && (op == OP_ADD || op == OP_MUL)) {
        if (x->imm != y->imm)
            lv_fail(ps, "f16 and f32 in one operation");
        return new_node(ps, NK_OP, x->imm == 32 ? TY_FSUM32 : TY_FSUM16,
                        op == OP_ADD ? OP_FADD : OP_FMUL, x->a, y->a, -1, x->imm);
    }
    const int lx = x->kind == NK_LIT && x->type == TY_LIT;
    const int ly = y->kind == NK_LIT && y->type == TY_LIT;
    if ((!lx && !lv_is_value(ps, a)) || (!ly && !lv_is_value(ps, b)) || (lx && ly))
        lv_fail(ps, "an operation on values not understood");
    int type = TY_U64;
    if (lx || ly) {
        /* numpy takes a bare int as the other side's type: only uint64 keeps its meaning. */
        if ((lx ? y : x)->type != TY_U64)
            lv_fail(ps, "a literal in an operation on a bool");
    } else if (x->type == TY_BOOL && y->type == TY_BOOL) {
        if (op != OP_AND && op != OP_OR && op != OP_XOR)
            lv_fail(ps, "arithmetic on two bools");
        type = TY_BOOL;
    }
    a = lv_as_row(ps, a);
    b = lv_as_row(ps, b);
    return new_node(ps, NK_OP, type, op, a, b, -1, 0);
}

static int32_t
make_invert(lv_parser *ps, int32_t a)
{
    lv_need_value(ps, a, 0, "~");
    const int type = NODE(a).type;
    return new_node(ps, NK_OP, type, type == TY_BOOL ? OP_LNOT : OP_NOT, a, -1, -1, 0);
}

static int32_t
make_where(lv_parser *ps, int32_t cond, int32_t a, int32_t b)
{
    lv_need_value(ps, cond, 0, "where's condition");
    lv_need_value(ps, a, 0, "where");
    lv_need_value(ps, b, 0, "where");
    const int type = NODE(a).type == TY_BOOL && NODE(b).type == TY_BOOL ? TY_BOOL : TY_U64;
    return new_node(ps, NK_OP, type, OP_WHERE, cond, a, b, 0);
}

/* --- expressions -------------------------------------------------------------------------- */

/* Comma-separated arguments up to ')'; returns how many. */
static int
parse_args(cursor *c, int32_t *args, int most)
{
    int count = 0;
    lv_expect_op(c, '(', "'('");
    while (!lv_is_op(c, ')')) {
        if (count == most)
            lv_fail(c->ps, "too many arguments");
        if (count)
            lv_expect_op(c, ',', "',' or ')'");
        if (c->cur.kind == TK_NAME && (lv_is_name(c, "True") || lv_is_name(c, "False"))) {
            /* A flag of int_to_float/float_to_int: typed so that no operator takes it. */
            args[count++] = new_node(c->ps, NK_LIT, TY_NONE, 0, -1, -1, -1, lv_is_name(c, "True"));
            lv_advance(c);
            continue;
        }
        args[count++] = lv_parse_expr(c);
    }
    lv_advance(c);
    return count;
}

static int
need_flag(lv_parser *ps, int32_t node)
{
    if (NODE(node).kind != NK_LIT || NODE(node).type != TY_NONE)
        lv_fail(ps, "expected True or False");
    return (int)NODE(node).imm;
}

static int32_t
parse_helper(cursor *c, const char *name, int len)
{
    lv_parser *ps = c->ps;
    int32_t arg[4];
    const int count = parse_args(c, arg, 4);
#define IS(word) ((size_t)len == sizeof(word) - 1 && memcmp(name, word, sizeof(word) - 1) == 0)
#define ARITY(n)                                                   \
    if (count != (n))                                              \
        lv_fail(ps, "%.*s takes %d arguments", len, name, (n))
    if (IS("where")) {
        ARITY(3);
        return make_where(ps, arg[0], arg[1], arg[2]);
    }
    if (IS("f32") || IS("f16")) {
        ARITY(1);
        lv_need_value(ps, arg[0], TY_U64, "a float view");
        const int width = name[1] == '3' ? 32 : 16;
        return new_node(ps, NK_FVIEW, width == 32 ? TY_F32 : TY_F16, 0, arg[0], -1, -1, width);
    }
    if (IS("isnan")) {
        ARITY(1);
        if (NODE(arg[0]).kind != NK_FVIEW)
            lv_fail(ps, "isnan of something not f32(x) or f16(x)");
        return new_node(ps, NK_OP, TY_BOOL, OP_FISNAN, NODE(arg[0]).a, -1, -1,
                        NODE(arg[0]).imm);
    }
    if (IS("bits32") || IS("bits16")) {
        ARITY(1);
        const int want = name[4] == '3' ? TY_FSUM32 : TY_FSUM16;
        if (NODE(arg[0]).kind != NK_OP || NODE(arg[0]).type != want)
            lv_fail(ps, "%.*s of something not a sum or product of its width", len, name);
        NODE(arg[0]).type = TY_U64;
        return arg[0];
    }
    if (IS("ffma")) {
        ARITY(4);
        for (int i = 0; i < 3; i++)
            lv_need_value(ps, arg[i], TY_U64, "ffma");
        const int64_t width = need_literal(ps, arg[3], 16, 32, "ffma's width");
        if (width != 16 && width != 32)
            lv_fail(ps, "ffma's width must be 16 or 32");
        return new_node(ps, NK_OP, TY_U64, OP_FFMA, arg[0], arg[1], arg[2], width);
    }
    if (IS("fconvert")) {
        ARITY(3);
        lv_need_value(ps, arg[0], TY_U64, "fconvert");
        const int64_t from = need_literal(ps, arg[1], 16, 32, "fconvert's widths");
        const int64_t to = need_literal(ps, arg[2], 16, 32, "fconvert's widths");
        if ((from != 16 && from != 32) || (to != 16 && to != 32))
            lv_fail(ps, "fconvert's widths must be 16 or 32");
        return new_node(ps, NK_OP, TY_U64, OP_FCONVERT, arg[0], -1, -1, from | to << 8);
    }
    if (IS("int_to_float") || IS("float_to_int")) {
        ARITY(4);
        const int to_float = name[0] == 'i';
        lv_need_value(ps, arg[0], TY_U64, to_float ? "int_to_float" : "float_to_int");
        const int64_t first = need_literal(ps, arg[1], 1, 64, "a width");
        const int64_t second = need_literal(ps, arg[2], 1, 64, "a width");
        const int64_t fw = to_float ? second : first;
        if (fw != 16 && fw != 32)
            lv_fail(ps, "a float width must be 16 or 32");
        const int64_t flag = need_flag(ps, arg[3]);
        return new_node(ps, NK_OP, TY_U64, to_float ? OP_I2F : OP_F2I, arg[0], -1, -1,
                        first | second << 8 | flag << 16);
    }
    if (IS("ashr")) {
        ARITY(3);
        lv_need_value(ps, arg[0], TY_U64, "ashr");
        lv_need_value(ps, arg[1], TY_U64, "ashr");
        const int64_t width = need_literal(ps, arg[2], 1, 64, "ashr's width");
        return new_node(ps, NK_OP, TY_U64, OP_ASHR, arg[0], arg[1], -1, width);
    }
#undef ARITY
#undef IS
    lv_fail(ps, "a call of %.*s", len, name);
}

/* X.method(arguments), after the X. */
static int32_t
parse_xcall(cursor *c)
{
    lv_parser *ps = c->ps;
    lv_expect_op(c, '.', "'.' after X");
    int method = 0;
    while (method < XM_COUNT && !lv_is_name(c, METHODS[method]))
        method++;
    if (c->cur.kind != TK_NAME || method == XM_COUNT)
        lv_fail(ps, "a method of X not understood");
    lv_advance(c);
    int32_t arg[4];
    const int count = parse_args(c, arg, 4);
    const char *signature = SIGNATURES[method];
    if ((size_t)count != strlen(signature))
        lv_fail(ps, "X.%s takes %zu arguments", METHODS[method], strlen(signature));
    RESERVE(ps, args, cap_args, ps->n_args + (size_t)count);
    const int32_t first = (int32_t)ps->n_args;
    for (int i = 0; i < count; i++) {
        const lv_node *n = &NODE(arg[i]);
        const int fits = signature[i] == 'v'   ? lv_is_value(ps, arg[i])
                         : signature[i] == 'i' ? n->kind == NK_LIT && n->type == TY_LIT
                                               : n->kind == NK_STR;
        if (!fits)
            lv_fail(ps, "argument %d of X.%s not understood", i + 1, METHODS[method]);
        ps->args[ps->n_args++] = arg[i];
    }
    const int type = method == XM_LOAD || method == XM_BALLOT ? TY_U64 : TY_NONE;
    return new_node(ps, NK_XCALL, type, method, first, count, -1, 0);
}

int32_t
lv_parse_subscript(cursor *c, int kind)
{
    lv_parser *ps = c->ps;
    lv_expect_op(c, '[', "'['");
    int32_t ext;
    if (kind == EXT_V || kind == EXT_U) {
        if (c->cur.kind != TK_STR)
            lv_fail(ps, "V and U take a string key");
        ext = lv_external(ps, kind, (int32_t)c->cur.num, c->cur.len, 0);
    } else {
        if (c->cur.kind != TK_NUM || (kind == EXT_H && c->cur.num >> 31))
            lv_fail(ps, "H and C take an integer key");
        ext = lv_external(ps, kind, 0, 0, c->cur.num);
    }
    lv_advance(c);
    lv_expect_op(c, ']', "']'");
    return ext;
}

static int32_t
parse_name(cursor *c)
{
    lv_parser *ps = c->ps;
    const char *name = c->cur.start;
    const int len = c->cur.len;
    lv_advance(c);
    if (lv_is_op(c, '('))
        return parse_helper(c, name, len);
#define IS(word) ((size_t)len == sizeof(word) - 1 && memcmp(name, word, sizeof(word) - 1) == 0)
    /* Most names are locals (t12, v_5, u_u0): those skip the parameters' comparisons. */
    if (!strchr("XVUCHaThLc", name[0]))
        goto local;
    if (IS("X"))
        return parse_xcall(c);
    if (IS("V") || IS("U") || IS("C") || (IS("H") && ps->wave)) {
        const int kind = name[0] == 'V' ? EXT_V : name[0] == 'U' ? EXT_U
                       : name[0] == 'C' ? EXT_C : EXT_H;
        return lv_ext_node(ps, lv_parse_subscript(c, kind));
    }
    if (IS("act"))
        return named_ext(ps, EXT_ACT);
    if (IS("TID"))
        return named_ext(ps, EXT_TID);
    if (ps->wave && IS("here"))
        return named_ext(ps, EXT_HERE);
    if (ps->wave && IS("LB"))
        return named_ext(ps, EXT_LB);
    if (!ps->wave && IS("cf"))
        return named_ext(ps, EXT_CF);
#undef IS
local:;
    size_t slot;
    uint64_t hash;
    const int32_t entry = lv_local_entry(ps, name, len, &slot, &hash);
    if (entry < 0)
        lv_fail(ps, "an unknown name %.*s", len, name);
    const int32_t value = ps->local_names[3 * entry + 2];
    lv_value *v = &ps->values[value];
    if (v->last_use < ps->current)
        v->last_use = ps->current;
    return new_node(ps, NK_LOCAL, v->type, 0, value, -1, -1, 0);
}

static int32_t
parse_primary(cursor *c)
{
    lv_parser *ps = c->ps;
    int32_t node;
    if (c->cur.kind == TK_NUM) {
        node = new_node(ps, NK_LIT, TY_LIT, 0, -1, -1, -1, (int64_t)c->cur.num);
        lv_advance(c);
    } else if (c->cur.kind == TK_STR) {
        node = new_node(ps, NK_STR, TY_STR, 0, (int32_t)c->cur.num, c->cur.len, -1, 0);
        lv_advance(c);
    } else if (lv_is_op(c, '(')) {
        lv_advance(c);
        node = lv_parse_expr(c);
        lv_expect_op(c, ')', "')'");
    } else if (c->cur.kind == TK_NAME) {
        node = parse_name(c);
    } else {
        lv_fail(ps, "an expression expected");
    }
    if (lv_is_op(c, '.')) {
        lv_advance(c);
        if (!lv_is_name(c, "any"))
            lv_fail(ps, "an attribute not understood");
        lv_advance(c);
        lv_expect_op(c, '(', "'(' after any");
        lv_expect_op(c, ')', "')' after any(");
        lv_need_value(ps, node, 0, ".any()");
        node = new_node(ps, NK_ANY, TY_NONE, 0, node, -1, -1, 0);
    }
    if (lv_is_op(c, '(') || lv_is_op(c, '[') || lv_is_op(c, '.') || lv_is_op(c, OPT_POW))
        lv_fail(ps, "a call, subscript or power not understood");
    return node;
}

/* Python refuses more than 200 nested parentheses; the recursion here stays shallow too. */
#define MOST_NESTED 200

static int32_t
parse_unary(cursor *c)
{
    if (lv_is_op(c, '~')) {
        lv_advance(c);
        if (++c->ps->depth > MOST_NESTED)
            lv_fail(c->ps, "expressions nested too deeply");
        const int32_t inverted = make_invert(c->ps, parse_unary(c));
        c->ps->depth--;
        return inverted;
    }
    if (lv_is_op(c, '-') || lv_is_op(c, '+'))
        lv_fail(c->ps, "a unary sign");
    return parse_primary(c);
}

static int32_t
parse_term(cursor *c)
{
    int32_t left = parse_unary(c);
    for (;;) {
        if (lv_is_op(c, '*')) {
            lv_advance(c);
            left = make_binary(c->ps, OP_MUL, left, parse_unary(c));
        } else if (lv_is_op(c, '/') || lv_is_op(c, OPT_FLOORDIV) || lv_is_op(c, '%') || lv_is_op(c, '@')) {
            lv_fail(c->ps, "a division, modulo or matrix product");
        } else {
            return left;
        }
    }
}

/* One left-associative level: `below` parses its operands, ops/codes its operators. */
static int32_t
parse_level(cursor *c, int32_t (*below)(cursor *), const int *ops, const int *codes, int n)
{
    int32_t left = below(c);
    for (;;) {
        int i = 0;
        while (i < n && !lv_is_op(c, ops[i]))
            i++;
        if (i == n)
            return left;
        lv_advance(c);
        left = make_binary(c->ps, codes[i], left, below(c));
    }
}

static int32_t
parse_arith(cursor *c)
{
    static const int ops[] = {'+', '-'}, codes[] = {OP_ADD, OP_SUB};
    return parse_level(c, parse_term, ops, codes, 2);
}

static int32_t
parse_shift(cursor *c)
{
    static const int ops[] = {OPT_SHL, OPT_SHR}, codes[] = {OP_SHL, OP_SHR};
    return parse_level(c, parse_arith, ops, codes, 2);
}

static int32_t
parse_and(cursor *c)
{
    static const int ops[] = {'&'}, codes[] = {OP_AND};
    return parse_level(c, parse_shift, ops, codes, 1);
}

static int32_t
parse_xor(cursor *c)
{
    static const int ops[] = {'^'}, codes[] = {OP_XOR};
    return parse_level(c, parse_and, ops, codes, 1);
}

static int32_t
parse_or(cursor *c)
{
    static const int ops[] = {'|'}, codes[] = {OP_OR};
    return parse_level(c, parse_xor, ops, codes, 1);
}

static int
comparison_ahead(const cursor *c)
{
    return lv_is_op(c, OPT_EQ) || lv_is_op(c, '<') || lv_is_op(c, OPT_LE) || lv_is_op(c, '>') ||
           lv_is_op(c, OPT_GE) || lv_is_op(c, OPT_NE) || lv_is_name(c, "in") || lv_is_name(c, "not") ||
           lv_is_name(c, "is");
}

int32_t
lv_parse_expr(cursor *c)
{
    if (++c->ps->depth > MOST_NESTED)
        lv_fail(c->ps, "expressions nested too deeply");
    int32_t left = parse_or(c);
    if (!comparison_ahead(c)) {
        c->ps->depth--;
        return left;
    }
    const int op = lv_is_op(c, OPT_EQ) ? OP_EQ : lv_is_op(c, '<') ? OP_LT : lv_is_op(c, OPT_LE) ? OP_LE : -1;
    if (op < 0)
        lv_fail(c->ps, "a comparison operator not understood");
    lv_advance(c);
    left = make_compare(c->ps, op, left, parse_or(c));
    if (comparison_ahead(c))
        lv_fail(c->ps, "a chained comparison");
    c->ps->depth--;
    return left;
}
