/* The block compiler's front half (parse.c): one block's emitted numpy source parsed into
 * typed expression trees and statements, with its externals and its locals' lifetimes;
 * compile.c turns them into a program of vm.h's ops. Nothing here touches Python objects,
 * so a rejected source costs no cleanup beyond free(). Everything outside the language the
 * emitters write (oracles/interp/emit.py, runner.py, oracles/machine/wave.py) is refused
 * with the line and what was not understood: the caller then runs the block by numpy.
 */
#ifndef AGXFUZZ_LANEVM_PARSE_H
#define AGXFUZZ_LANEVM_PARSE_H

#include <setjmp.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* A value's type, as numpy would hold it: the VM keeps every value in a uint64 row, so a
 * type only decides which op an operator means (`~`) and which combinations are refused
 * because numpy would compute them differently (bool + bool, int64 against uint64). */
enum lv_type {
    TY_U64 = 1,  /* uint64 lanes */
    TY_BOOL,     /* bool lanes, held as 0/1 */
    TY_I64,      /* int64 lanes (cf, LB): only `== literal` is understood */
    TY_LIT,      /* a bare Python int; becomes a constant row where a row is needed */
    TY_STR,      /* a string literal: a callback argument only */
    TY_F32,      /* f32(x) / f16(x): only inside isnan, bitsN and float comparisons */
    TY_F16,
    TY_FSUM32,   /* f32(a) + f32(b) (or *): only inside bits32 */
    TY_FSUM16,
    TY_NONE,     /* a callback that returns nothing */
};

/* The kinds of external rows, in the order of their names in compile.c. */
/* O and W are a run's outputs (one row per export slot: the value, whether written), which
 * `X.export(slot, value, act)` writes in place of a call (stmt.c, oracles/interp/vm.py). */
enum lv_ext_kind { EXT_ACT, EXT_HERE, EXT_CF, EXT_LB, EXT_TID, EXT_V, EXT_U, EXT_H, EXT_C, EXT_O,
                   EXT_W, EXT_KIND_COUNT };

enum lv_node_kind {
    NK_EXT,    /* a = external index */
    NK_LOCAL,  /* a = value index */
    NK_LIT,    /* imm = the integer */
    NK_STR,    /* a = offset in strings, b = length */
    NK_OP,     /* op = vm opcode; a, b, c = child nodes (-1: none); imm */
    NK_FVIEW,  /* f32(x) / f16(x): a = child, imm = width */
    NK_XCALL,  /* X.method(...): op = method, a = first argument in args, b = count */
    NK_ANY,    /* x.any(): a = child */
};

enum lv_method { XM_LOAD, XM_STORE, XM_EXPORT, XM_BALLOT, XM_UNDEFINED, XM_COUNT };

typedef struct {
    uint8_t kind, type;
    int16_t op;
    int32_t a, b, c;
    int64_t imm;
} lv_node;

enum lv_stmt_kind {
    ST_DEF,     /* target = value index; expr */
    ST_WRITE,   /* target = external; expr */
    ST_MERGE,   /* target = external; expr = the value, cond = the mask */
    ST_COMMIT,  /* target = external (V); expr = the value; the act row is the mask */
    ST_CALL,    /* expr = NK_XCALL */
    ST_CALLIF,  /* expr = NK_XCALL, cond = the rows tested by .any() */
    ST_RETURN,  /* expr = the result, or -1 for None */
};

typedef struct {
    uint8_t kind;
    int32_t line, target, expr, cond;
} lv_stmt;

typedef struct {
    int32_t last_use;  /* the last statement reading it; -1: never read */
    int32_t row;       /* compile.c: the row holding it */
    int32_t next;      /* compile.c: the next value aliasing the same external row */
    uint8_t type;
} lv_value;

typedef struct {
    uint8_t kind;
    uint8_t type;
    int32_t str, len;  /* V and U: the name, in strings */
    uint64_t key;      /* H and C: the number */
    int32_t aliases;   /* compile.c: the first value bound to this row (-1: none) */
} lv_ext;

/* An open-addressing table from (tag, bytes or number) to an index. */
typedef struct {
    int32_t *slots;  /* entry index + 1; 0 empty */
    uint64_t *hashes;
    size_t mask, used;
} lv_table;

typedef struct {
    const char *src;
    size_t len;
    int wave;  /* the wave header (H, here, LB), else the SSA one (cf, unmasked) */

    lv_node *nodes;
    size_t n_nodes, cap_nodes;
    lv_stmt *stmts;
    size_t n_stmts, cap_stmts;
    lv_value *values;
    size_t n_values, cap_values;
    lv_ext *exts;
    size_t n_exts, cap_exts;
    int32_t *args;  /* NK_XCALL arguments (node indices) */
    size_t n_args, cap_args;
    char *strings;
    size_t n_strings, cap_strings;

    /* Locals: name -> the value the name is bound to now (entries: start, len, value). */
    lv_table local_table;
    int32_t *local_names;  /* per entry: offset in src, length, value */
    size_t n_locals, cap_locals;
    lv_table ext_table;

    int returned;
    int line_count;   /* lines read so far */
    int32_t current;  /* the statement being parsed (what a read's last_use becomes) */
    int depth;        /* nested expressions now: refused past Python's own limit */

    /* The lexer's position and the line being parsed. */
    const char *p, *line_end;
    int line;

    jmp_buf fail;
    char message[240];
} lv_parser;

/* --- lex.c ------------------------------------------------------------------------------ */
/* Multi-character operators, as a token's `op` (single characters stand for themselves). */
enum { OPT_SHL = 256, OPT_SHR, OPT_EQ, OPT_LE, OPT_GE, OPT_NE, OPT_POW, OPT_FLOORDIV };
enum { TK_EOL, TK_NAME, TK_NUM, TK_STR, TK_OP };

typedef struct {
    int kind, op;
    const char *start;
    int len;
    uint64_t num;  /* TK_NUM: the value; TK_STR: the offset in strings (len: its length) */
} token;

/* The parser's one-token lookahead over the current line. */
typedef struct {
    lv_parser *ps;
    token cur;
} cursor;

void lv_advance(cursor *c);
void lv_expect_op(cursor *c, int op, const char *what);

/* Inline: the parser asks these several times per token. */
static inline int
lv_is_op(const cursor *c, int op)
{
    return c->cur.kind == TK_OP && c->cur.op == op;
}

static inline int
lv_is_name(const cursor *c, const char *name)
{
    const size_t len = strlen(name);
    return c->cur.kind == TK_NAME && (size_t)c->cur.len == len &&
           memcmp(c->cur.start, name, len) == 0;
}

void lv_table_init(lv_parser *ps, lv_table *table, size_t size);
void lv_table_put(lv_parser *ps, lv_table *table, size_t slot, uint64_t hash, int32_t entry);
/* The external row (kind, name or number), added on first mention; a name is `len` bytes
 * at offset `str` of strings. */
int32_t lv_external(lv_parser *ps, int kind, int32_t str, int32_t len, uint64_t key);
/* The local name's entry in local_names, or -1 with *slot and *hash saying where it goes. */
int32_t lv_local_entry(lv_parser *ps, const char *name, int len, size_t *slot, uint64_t *hash);

/* --- parse.c: expressions ---------------------------------------------------------------- */
int32_t lv_parse_expr(cursor *c);
/* `[key]` after V, U, H or C: the external it names. */
int32_t lv_parse_subscript(cursor *c, int kind);
int32_t lv_ext_node(lv_parser *ps, int32_t ext);
/* A bare int where a row is needed: the node of its constant row (else the node itself). */
int32_t lv_as_row(lv_parser *ps, int32_t node);
/* A uint64 or bool value a row op can read: not a call, an .any(), a literal, a float view. */
int lv_is_value(const lv_parser *ps, int32_t node);
/* Fails unless lv_is_value (and of `type`, when nonzero). */
void lv_need_value(lv_parser *ps, int32_t node, int type, const char *where);

/* --- stmt.c: statements ------------------------------------------------------------------- */
/* Parses `src`; 0 on success, -1 with `message` set. lv_free releases either way. */
int lv_parse(lv_parser *ps, const char *src, size_t len);
void lv_free(lv_parser *ps);
/* --- either ---------------------------------------------------------------------------- */
/* Longjmps out of lv_parse or compile.c's code generation with a message. */
void lv_fail(lv_parser *ps, const char *format, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
/* Grows *array (of `size`-byte items) so that it holds at least `need` items. */
void lv_reserve(lv_parser *ps, void **array, size_t *cap, size_t need, size_t size);

#endif
