/* lanevm_compile (vm.h): one block's emitted source -> (program, externals, callbacks,
 * result, temps). parse.c/stmt.c parse and type it; this file generates the program and
 * builds the Python result.
 *
 * Rows: externals first (0..E-1), then temporaries. A local holding a plain read of storage
 * (`x = V['s']`, `x = H[3]`) aliases that storage row instead of copying it; numpy binds the
 * array at the read, so when the row is written later in the block while such a local is
 * still to be read after the write, the row is copied into a temporary just before the
 * write. Temporaries are reference counted: an intermediate result is freed as soon as its
 * parent op has read it, a local when its last reader has (a statement's result may take
 * the row of an operand that dies there: ops read all their operands before writing).
 */
#include "vm.h"
#include "parse.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t method, dest, first_arg, n_args;
} callback;

typedef struct {
    int64_t kind, value, len;  /* ARG_*, then a row, an int or a string's offset */
} callback_arg;

enum { ARG_ROW, ARG_BOOL, ARG_INT, ARG_STR };

typedef struct {
    lv_parser *ps;
    vm_op *ops;
    size_t n_ops, cap_ops;
    int32_t *refs;  /* per temporary: the values and intermediates holding it */
    size_t cap_refs;
    int32_t *free_rows;
    size_t n_free, cap_free;
    int32_t n_temps, base;
    int32_t *dying, *dying_start;  /* per statement, the values it reads last */
    callback *callbacks;
    size_t n_callbacks, cap_callbacks;
    callback_arg *args;
    size_t n_args, cap_args;
    int32_t stmt;
    int dying_released;
} codegen;

#define RESERVE(g, field, count, need) \
    lv_reserve((g)->ps, (void **)&(g)->field, &(g)->count, (need), sizeof *(g)->field)

static void
emit(codegen *g, int op, int32_t d, int32_t a, int32_t b, int32_t c, int64_t imm)
{
    RESERVE(g, ops, cap_ops, g->n_ops + 1);
    /* An operand an op does not read still names a valid row (the glue relocates all). */
    g->ops[g->n_ops++] = (vm_op){op, d < 0 ? 0 : d, a < 0 ? 0 : a, b < 0 ? 0 : b,
                                 c < 0 ? 0 : c, imm};
}

static int32_t
new_temp(codegen *g)
{
    int32_t row;
    if (g->n_free) {
        row = g->free_rows[--g->n_free];
    } else {
        RESERVE(g, refs, cap_refs, (size_t)g->n_temps + 1);
        row = g->base + g->n_temps++;
    }
    g->refs[row - g->base] = 1;
    return row;
}

static void
release_row(codegen *g, int32_t row)
{
    if (row < g->base || --g->refs[row - g->base] > 0)
        return;
    RESERVE(g, free_rows, cap_free, g->n_free + 1);
    g->free_rows[g->n_free++] = row;
}

static void
release_dying(codegen *g)
{
    if (g->dying_released)
        return;
    g->dying_released = 1;
    for (int32_t i = g->dying_start[g->stmt]; i < g->dying_start[g->stmt + 1]; i++)
        release_row(g, g->ps->values[g->dying[i]].row);
}

static int
is_storage(int kind)
{
    return kind == EXT_V || kind == EXT_H || kind == EXT_ACT || kind == EXT_LB;
}

/* Value v now lives in `row` (a storage row: aliased, to be protected before writes). */
static void
bind(codegen *g, int32_t v, int32_t row)
{
    lv_parser *ps = g->ps;
    ps->values[v].row = row;
    if (row >= g->base) {
        g->refs[row - g->base]++;
    } else if (is_storage(ps->exts[row].kind)) {
        ps->values[v].next = ps->exts[row].aliases;
        ps->exts[row].aliases = v;
    }
}

/* Before storage row `ext` is written: the locals aliasing it that are read after this
 * statement move to one temporary holding the row's value before the write. */
static void
protect(codegen *g, int32_t ext)
{
    lv_parser *ps = g->ps;
    int32_t copy = -1;
    for (int32_t v = ps->exts[ext].aliases; v >= 0; v = ps->values[v].next) {
        lv_value *value = &ps->values[v];
        if (value->row != ext || value->last_use <= g->stmt)
            continue;
        if (copy < 0) {
            copy = new_temp(g);
            emit(g, OP_MOVE, copy, ext, -1, -1, 0);
        } else {
            g->refs[copy - g->base]++;
        }
        value->row = copy;
    }
    ps->exts[ext].aliases = -1;
}

/* The row holding node's value. `dest` >= 0: the value must end there. Otherwise an op's
 * result goes to a new temporary the caller then holds (*owned); `root`: the statement's
 * last op, which may take the row of a value dying in this statement. */
static int32_t
gen(codegen *g, int32_t node, int *owned, int32_t dest, int root)
{
    const lv_node n = g->ps->nodes[node];
    *owned = 0;
    if (n.kind == NK_EXT || n.kind == NK_LOCAL) {
        const int32_t row = n.kind == NK_EXT ? n.a : g->ps->values[n.a].row;
        if (dest >= 0 && dest != row)
            emit(g, OP_MOVE, dest, row, -1, -1, 0);
        return dest >= 0 ? dest : row;
    }
    if (n.kind != NK_OP)
        lv_fail(g->ps, "an expression the code generator does not know");
    int32_t rows[3] = {-1, -1, -1};
    int held[3] = {0, 0, 0};
    const int32_t children[3] = {n.a, n.b, n.c};
    for (int i = 0; i < 3; i++) {
        if (children[i] >= 0)
            rows[i] = gen(g, children[i], &held[i], -1, 0);
    }
    for (int i = 0; i < 3; i++) {
        if (held[i])
            release_row(g, rows[i]);
    }
    if (dest < 0) {
        if (root)
            release_dying(g);
        dest = new_temp(g);
        *owned = 1;
    }
    emit(g, n.op, dest, rows[0], rows[1], rows[2], n.imm);
    return dest;
}

/* X.method(args) as OP_CALL, or OP_CALLIF on `cond_row`; its result to `dest` (or -1). */
static void
gen_call(codegen *g, int32_t call, int32_t cond_row, int32_t dest)
{
    lv_parser *ps = g->ps;
    const lv_node n = ps->nodes[call];
    int32_t held[4];
    int n_held = 0;
    RESERVE(g, args, cap_args, g->n_args + (size_t)n.b);
    const size_t first = g->n_args;
    for (int32_t i = 0; i < n.b; i++) {
        const int32_t arg = ps->args[n.a + i];
        const lv_node a = ps->nodes[arg];
        callback_arg *out = &g->args[g->n_args++];
        if (a.kind == NK_LIT) {
            *out = (callback_arg){ARG_INT, a.imm, 0};
        } else if (a.kind == NK_STR) {
            *out = (callback_arg){ARG_STR, a.a, a.b};
        } else {
            int owned;
            const int32_t row = gen(g, arg, &owned, -1, 0);
            if (owned)
                held[n_held++] = row;
            *out = (callback_arg){a.type == TY_BOOL ? ARG_BOOL : ARG_ROW, row, 0};
        }
    }
    RESERVE(g, callbacks, cap_callbacks, g->n_callbacks + 1);
    g->callbacks[g->n_callbacks] = (callback){n.op, dest, (int64_t)first, n.b};
    if (cond_row >= 0)
        emit(g, OP_CALLIF, -1, cond_row, -1, -1, (int64_t)g->n_callbacks);
    else
        emit(g, OP_CALL, -1, -1, -1, -1, (int64_t)g->n_callbacks);
    g->n_callbacks++;
    for (int i = 0; i < n_held; i++)
        release_row(g, held[i]);
}

/* Generates every statement; the result's (kind, row) into result[0..1]. */
static void
generate(codegen *g, int64_t *result)
{
    lv_parser *ps = g->ps;
    result[0] = 0;  /* none */
    result[1] = 0;
    for (g->stmt = 0; g->stmt < (int32_t)ps->n_stmts; g->stmt++) {
        const lv_stmt s = ps->stmts[g->stmt];
        ps->line = s.line;
        g->dying_released = 0;
        int owned, held;
        int32_t row, mask;
        switch (s.kind) {
        case ST_DEF: {
            const lv_node e = ps->nodes[s.expr];
            const int used = ps->values[s.target].last_use >= 0;
            if (e.kind == NK_XCALL) {
                const int32_t dest = used ? new_temp(g) : -1;
                gen_call(g, s.expr, -1, dest);
                ps->values[s.target].row = dest;
            } else if (!used) {
                /* Never read and without effects: nothing to run. */
            } else if (e.kind == NK_EXT || e.kind == NK_LOCAL) {
                bind(g, s.target, gen(g, s.expr, &owned, -1, 0));
            } else {
                ps->values[s.target].row = gen(g, s.expr, &owned, -1, 1);
            }
            break;
        }
        case ST_WRITE:
            protect(g, s.target);
            gen(g, s.expr, &owned, s.target, 1);
            break;
        case ST_MERGE:
        case ST_COMMIT:
            protect(g, s.target);
            row = gen(g, s.expr, &owned, -1, 0);
            mask = s.kind == ST_MERGE ? gen(g, s.cond, &held, -1, 0)
                                      : lv_external(ps, EXT_ACT, 0, 0, 0);
            emit(g, s.kind == ST_MERGE ? OP_MERGE : OP_COMMIT, s.target, row, mask, -1, 0);
            if (owned)
                release_row(g, row);
            if (s.kind == ST_MERGE && held)
                release_row(g, mask);
            break;
        case ST_CALL:
            gen_call(g, s.expr, -1, -1);
            break;
        case ST_CALLIF:
            row = gen(g, s.cond, &owned, -1, 0);
            gen_call(g, s.expr, row, -1);
            if (owned)
                release_row(g, row);
            break;
        case ST_RETURN:
            if (s.expr >= 0) {
                result[1] = gen(g, s.expr, &owned, -1, 0);
                result[0] = ps->nodes[s.expr].type == TY_BOOL ? 1 : 2;
            }
            break;
        }
        release_dying(g);
    }
    emit(g, OP_END, -1, -1, -1, -1, 0);
}

/* Per statement, the values it is the last to read (a counting sort by last_use). */
static void
find_dying(codegen *g)
{
    lv_parser *ps = g->ps;
    const size_t n = ps->n_stmts;
    size_t cap = 0;
    lv_reserve(ps, (void **)&g->dying_start, &cap, n + 2, sizeof *g->dying_start);
    memset(g->dying_start, 0, (n + 2) * sizeof *g->dying_start);
    for (size_t v = 0; v < ps->n_values; v++) {
        if (ps->values[v].last_use >= 0)
            g->dying_start[ps->values[v].last_use + 2]++;
    }
    for (size_t s = 2; s < n + 2; s++)
        g->dying_start[s] += g->dying_start[s - 1];
    cap = 0;
    lv_reserve(ps, (void **)&g->dying, &cap, (size_t)g->dying_start[n + 1] + 1, sizeof *g->dying);
    for (size_t v = 0; v < ps->n_values; v++) {
        if (ps->values[v].last_use >= 0)
            g->dying[g->dying_start[ps->values[v].last_use + 1]++] = (int32_t)v;
    }
}

/* --- the Python result ------------------------------------------------------------------ */
static const char *const EXT_KINDS[EXT_KIND_COUNT] = {"act", "here", "cf", "LB", "TID", "V", "U",
                                                     "H", "C", "O", "W"};
static const char *const METHOD_NAMES[] = {"load", "store", "export", "ballot", "undefined"};
static const char *const ARG_KINDS[] = {"row", "bool", "int", "str"};
static const char *const RESULT_KINDS[] = {"none", "bool", "row"};

static PyObject *ext_kinds[EXT_KIND_COUNT], *method_names[XM_COUNT], *arg_kinds[4], *result_kinds[3];

static int
intern_all(PyObject **objects, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (objects[i] == NULL && (objects[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return -1;
    }
    return 0;
}

static PyObject *
string_at(const lv_parser *ps, int64_t offset, int64_t len)
{
    return PyUnicode_DecodeUTF8(ps->strings + offset, (Py_ssize_t)len, "strict");
}

static PyObject *
externals_tuple(const lv_parser *ps)
{
    PyObject *tuple = PyTuple_New((Py_ssize_t)ps->n_exts);
    for (size_t i = 0; tuple != NULL && i < ps->n_exts; i++) {
        const lv_ext *e = &ps->exts[i];
        PyObject *key = e->kind == EXT_V || e->kind == EXT_U ? string_at(ps, e->str, e->len)
                      : e->kind >= EXT_H                     ? PyLong_FromUnsignedLongLong(e->key)
                                                             : Py_NewRef(Py_None);
        PyObject *pair = key ? PyTuple_Pack(2, ext_kinds[e->kind], key) : NULL;
        Py_XDECREF(key);
        if (pair == NULL)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, pair);
    }
    return tuple;
}

static PyObject *
callbacks_tuple(const codegen *g)
{
    PyObject *tuple = PyTuple_New((Py_ssize_t)g->n_callbacks);
    for (size_t i = 0; tuple != NULL && i < g->n_callbacks; i++) {
        const callback *cb = &g->callbacks[i];
        PyObject *args = PyTuple_New((Py_ssize_t)cb->n_args);
        for (int64_t k = 0; args != NULL && k < cb->n_args; k++) {
            const callback_arg *a = &g->args[cb->first_arg + k];
            PyObject *value = a->kind == ARG_STR ? string_at(g->ps, a->value, a->len)
                            : a->kind == ARG_INT ? PyLong_FromUnsignedLongLong((uint64_t)a->value)
                                                 : PyLong_FromLongLong(a->value);
            PyObject *pair = value ? PyTuple_Pack(2, arg_kinds[a->kind], value) : NULL;
            Py_XDECREF(value);
            if (pair == NULL)
                Py_CLEAR(args);
            else
                PyTuple_SET_ITEM(args, (Py_ssize_t)k, pair);
        }
        PyObject *entry = args ? Py_BuildValue("(OLO)", method_names[cb->method],
                                               (long long)cb->dest, args) : NULL;
        Py_XDECREF(args);
        if (entry == NULL)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, entry);
    }
    return tuple;
}

static void
free_codegen(codegen *g)
{
    free(g->ops);
    free(g->refs);
    free(g->free_rows);
    free(g->dying);
    free(g->dying_start);
    free(g->callbacks);
    free(g->args);
}

PyObject *
lanevm_compile(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 1 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "compile(source): source must be a str");
        return NULL;
    }
    if (intern_all(ext_kinds, EXT_KINDS, EXT_KIND_COUNT) < 0 ||
        intern_all(method_names, METHOD_NAMES, XM_COUNT) < 0 ||
        intern_all(arg_kinds, ARG_KINDS, 4) < 0 || intern_all(result_kinds, RESULT_KINDS, 3) < 0)
        return NULL;
    Py_ssize_t len;
    const char *src = PyUnicode_AsUTF8AndSize(args[0], &len);
    if (src == NULL)
        return NULL;
    lv_parser ps;
    memset(&ps, 0, sizeof ps);
    codegen g;
    memset(&g, 0, sizeof g);
    g.ps = &ps;
    PyObject *out = NULL;
    int64_t result[2];
    if (lv_parse(&ps, src, (size_t)len) == 0) {
        if (setjmp(ps.fail) == 0) {
            g.base = (int32_t)ps.n_exts;
            find_dying(&g);
            generate(&g, result);
        }
    }
    if (ps.message[0]) {
        if (strcmp(ps.message, "out of memory") == 0)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, ps.message);
    } else {
        PyObject *program = PyBytes_FromStringAndSize((const char *)g.ops,
                                                      (Py_ssize_t)(g.n_ops * sizeof(vm_op)));
        PyObject *externals = externals_tuple(&ps);
        PyObject *callbacks = callbacks_tuple(&g);
        PyObject *returned = result[0] == 0 ? PyTuple_Pack(1, result_kinds[0])
                                            : Py_BuildValue("(OL)", result_kinds[result[0]],
                                                            (long long)result[1]);
        PyObject *temps = PyLong_FromLong(g.n_temps);
        if (program && externals && callbacks && returned && temps)
            out = PyTuple_Pack(5, program, externals, callbacks, returned, temps);
        Py_XDECREF(temps);
        Py_XDECREF(program);
        Py_XDECREF(externals);
        Py_XDECREF(callbacks);
        Py_XDECREF(returned);
    }
    free_codegen(&g);
    lv_free(&ps);
    return out;
}
