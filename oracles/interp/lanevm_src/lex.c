/* The block compiler's lexer and tables (parse.h): the tokens of one source line, the
 * externals a block mentions and its locals' names, and the error exit every stage of the
 * compiler takes (a longjmp with the line and what was not understood).
 */
#include "parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"



/* --- errors and memory ------------------------------------------------------------------ */
void
lv_fail(lv_parser *ps, const char *format, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    if (ps->line > 0) {
        const char *start = ps->p, *end = ps->line_end;
        while (start > ps->src && start[-1] != '\n')
            start--;
        while (start < end && *start == ' ')
            start++;
        snprintf(ps->message, sizeof ps->message, "line %d: %s: %.*s", ps->line, what,
                 (int)(end - start > 60 ? 60 : end - start), start);
    } else {
        snprintf(ps->message, sizeof ps->message, "%s", what);
    }
    longjmp(ps->fail, 1);
}

void
lv_reserve(lv_parser *ps, void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t grown = *cap ? *cap * 2 : 64;
    while (grown < need)
        grown *= 2;
    void *bigger = realloc(*array, grown * size);
    if (bigger == NULL) {
        ps->line = 0;
        lv_fail(ps, "out of memory");
    }
    *array = bigger;
    *cap = grown;
}

#define RESERVE(ps, field, count, need) \
    lv_reserve((ps), (void **)&(ps)->field, &(ps)->count, (need), sizeof *(ps)->field)

/* --- tables ------------------------------------------------------------------------------- */
static uint64_t
hash_bytes(uint64_t tag, const char *bytes, size_t len, uint64_t number)
{
    uint64_t h = 1469598103934665603ULL ^ (tag * 0x9E3779B97F4A7C15ULL) ^ number;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)bytes[i]) * 1099511628211ULL;
    return (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;
}

/* The slot of `hash` for which `same(entry)` holds, else the empty slot where it goes. */
#define TABLE_PROBE(table, hash, same, slot)                                          \
    do {                                                                               \
        size_t i_ = (size_t)(hash) & (table)->mask;                                    \
        while ((table)->slots[i_] &&                                                   \
               !((table)->hashes[i_] == (hash) && same((table)->slots[i_] - 1)))       \
            i_ = (i_ + 1) & (table)->mask;                                             \
        (slot) = i_;                                                                   \
    } while (0)

void
lv_table_init(lv_parser *ps, lv_table *table, size_t size)
{
    table->slots = calloc(size, sizeof *table->slots);
    table->hashes = calloc(size, sizeof *table->hashes);
    table->mask = size - 1;
    table->used = 0;
    if (table->slots == NULL || table->hashes == NULL)
        lv_fail(ps, "out of memory");
}

static void
table_grow(lv_parser *ps, lv_table *table)
{
    lv_table old = *table;
    lv_table_init(ps, table, (old.mask + 1) * 2);
    for (size_t i = 0; i <= old.mask; i++) {
        if (!old.slots[i])
            continue;
        size_t j = old.hashes[i] & table->mask;
        while (table->slots[j])
            j = (j + 1) & table->mask;
        table->slots[j] = old.slots[i];
        table->hashes[j] = old.hashes[i];
    }
    table->used = old.used;
    free(old.slots);
    free(old.hashes);
}

void
lv_table_put(lv_parser *ps, lv_table *table, size_t slot, uint64_t hash, int32_t entry)
{
    table->slots[slot] = entry + 1;
    table->hashes[slot] = hash;
    if (++table->used * 2 > table->mask)
        table_grow(ps, table);
}

int32_t
lv_external(lv_parser *ps, int kind, int32_t str, int32_t len, uint64_t key)
{
    const char *name = ps->strings + str;
    uint64_t hash = hash_bytes((uint64_t)kind + 1, name, (size_t)len, key);
    size_t slot;
#define SAME_EXT(e)                                                                    \
    (ps->exts[e].kind == kind && ps->exts[e].key == key && ps->exts[e].len == len &&   \
     memcmp(ps->strings + ps->exts[e].str, name, (size_t)len) == 0)
    TABLE_PROBE(&ps->ext_table, hash, SAME_EXT, slot);
    if (ps->ext_table.slots[slot])
        return ps->ext_table.slots[slot] - 1;
    RESERVE(ps, exts, cap_exts, ps->n_exts + 1);
    lv_ext *ext = &ps->exts[ps->n_exts];
    ext->kind = (uint8_t)kind;
    ext->type = kind == EXT_ACT || kind == EXT_HERE ? TY_BOOL
              : kind == EXT_CF || kind == EXT_LB    ? TY_I64
                                                    : TY_U64;
    ext->key = key;
    ext->str = str;
    ext->len = len;
    ext->aliases = -1;
    lv_table_put(ps, &ps->ext_table, slot, hash, (int32_t)ps->n_exts);
    return (int32_t)ps->n_exts++;
}

int32_t
lv_local_entry(lv_parser *ps, const char *name, int len, size_t *slot, uint64_t *hash)
{
    *hash = hash_bytes(0, name, (size_t)len, 0);
#define SAME_LOCAL(e)                                                                  \
    (ps->local_names[3 * (e) + 1] == len &&                                            \
     memcmp(ps->src + ps->local_names[3 * (e)], name, (size_t)len) == 0)
    TABLE_PROBE(&ps->local_table, *hash, SAME_LOCAL, *slot);
    return ps->local_table.slots[*slot] ? ps->local_table.slots[*slot] - 1 : -1;
}

/* --- the lexer ------------------------------------------------------------------------------ */
static int
is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (ch >= '0' && ch <= '9');
}

static void
lex_number(lv_parser *ps, token *t)
{
    const char *p = ps->p, *end = ps->line_end;
    uint64_t value = 0;
    if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        const char *digits = p;
        for (; p < end; p++) {
            int digit = *p >= '0' && *p <= '9' ? *p - '0'
                      : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                      : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                               : -1;
            if (digit < 0)
                break;
            if (value >> 60)
                lv_fail(ps, "an integer wider than 64 bits");
            value = value << 4 | (uint64_t)digit;
        }
        if (p == digits)
            lv_fail(ps, "a hex literal without digits");
    } else {
        if (p[0] == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9')
            lv_fail(ps, "an integer with a leading zero");
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            uint64_t digit = (uint64_t)(*p - '0');
            if (value > (UINT64_MAX - digit) / 10)
                lv_fail(ps, "an integer wider than 64 bits");
            value = value * 10 + digit;
        }
    }
    if (p < end && (is_name_char(*p) || *p == '.'))
        lv_fail(ps, "a number form not understood");
    t->kind = TK_NUM;
    t->num = value;
    ps->p = p;
}

/* A string literal, decoded into strings (\\, \' and \" only: repr() of the names and
 * reasons the emitters write). */
static void
lex_string(lv_parser *ps, token *t)
{
    const char quote = *ps->p;
    const char *p = ps->p + 1, *end = ps->line_end;
    RESERVE(ps, strings, cap_strings, ps->n_strings + (size_t)(end - p));
    char *out = ps->strings + ps->n_strings;
    int len = 0;
    for (;; p++) {
        if (p >= end)
            lv_fail(ps, "an unterminated string");
        if (*p == quote)
            break;
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            lv_fail(ps, "a control character in a string");
        if (*p == '\\') {
            p++;
            if (p >= end || (*p != '\\' && *p != '\'' && *p != '"'))
                lv_fail(ps, "a string escape not understood");
        }
        out[len++] = *p;
    }
    t->kind = TK_STR;
    t->num = ps->n_strings;
    t->len = len;
    ps->n_strings += (size_t)len;
    ps->p = p + 1;
}

static int
is_operator_char(char ch)
{
    switch (ch) {
    case '(': case ')': case '[': case ']': case ',': case ':': case '.': case '=': case '~':
    case '+': case '-': case '*': case '/': case '%': case '&': case '|': case '^': case '<':
    case '>': case '@':
        return 1;
    default:
        return 0;
    }
}

/* The next token of the line into *t. */
static void
lex(lv_parser *ps, token *t)
{
    while (ps->p < ps->line_end && *ps->p == ' ')
        ps->p++;
    t->start = ps->p;
    if (ps->p >= ps->line_end) {
        t->kind = TK_EOL;
        t->len = 0;
        return;
    }
    const char ch = *ps->p;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_') {
        const char *p = ps->p;
        while (p < ps->line_end && is_name_char(*p))
            p++;
        t->kind = TK_NAME;
        t->len = (int)(p - ps->p);
        ps->p = p;
        return;
    }
    if (ch >= '0' && ch <= '9') {
        lex_number(ps, t);
        t->len = (int)(ps->p - t->start);
        return;
    }
    if (ch == '\'' || ch == '"') {
        lex_string(ps, t);
        return;
    }
    static const struct { char first, second; int op; } pairs[] = {
        {'<', '<', OPT_SHL}, {'>', '>', OPT_SHR}, {'=', '=', OPT_EQ}, {'<', '=', OPT_LE},
        {'>', '=', OPT_GE}, {'!', '=', OPT_NE}, {'*', '*', OPT_POW}, {'/', '/', OPT_FLOORDIV},
    };
    t->kind = TK_OP;
    t->op = (unsigned char)ch;
    t->len = 1;
    if (ps->p + 1 < ps->line_end) {
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            if (pairs[i].first == ch && pairs[i].second == ps->p[1]) {
                t->op = pairs[i].op;
                t->len = 2;
                break;
            }
        }
    }
    if (t->len == 1 && !is_operator_char(ch))
        lv_fail(ps, "a character not understood ('%c')", ch);
    ps->p += t->len;
}

void
lv_advance(cursor *c)
{
    lex(c->ps, &c->cur);
}

void
lv_expect_op(cursor *c, int op, const char *what)
{
    if (!lv_is_op(c, op))
        lv_fail(c->ps, "expected %s", what);
    lv_advance(c);
}
