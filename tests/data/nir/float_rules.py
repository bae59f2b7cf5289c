# Float rules decided with z3's floating point, for agxfuzz's tests (not from Mesa).
a = 'a'
b = 'b'

right = [
    (('fneg', ('fneg', 'a@32')), a),
    (('fabs', ('fneg', 'a@16')), ('fabs', a)),
    (('fge', 'a@16', b), ('inot', ('fltu', a, b))),
]

wrong = [
    (('fadd', 'a@16', 0.0), a),  # -0.0 + 0.0 is +0.0
]

inexact = [
    (('~fadd', 'a@16', 0.0), a),  # the same, marked inexact: '~' is not modelled
]
