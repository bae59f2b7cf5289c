# Rules agxfuzz cannot prove, for its tests: an opcode without semantics, a size without
# semantics, and a counterexample that only an unmodelled predicate might rule out.
a = 'a'
b = 'b'

unsupported = [
    (('fsin', ('fneg', a)), ('fneg', ('fsin', a))),
    (('fadd@64', a, 0.0), a),
    (('iadd', 'a(is_made_up_predicate)', 1), a),
]
