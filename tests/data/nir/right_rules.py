# Rules agxfuzz's own tests expect to be verified: written for the project in the
# nir_algebraic format (every syntax feature the loader must handle), not copied from Mesa.
import nir_algebraic  # the loader provides a stand-in; nothing is rendered

a = 'a'
b = 'b'
c = 'c'

# Plain variables, literal numbers, a free size (instantiated at 8, 16, 32 and 64 bits).
identities = [
    (('iadd', a, 0), a),
    (('imul', a, 1), a),
    (('ineg', ('ineg', a)), a),
    (('inot', ('inot', a)), a),
    (('ixor', a, a), 0),
    (('isub', a, a), 0),
    (('iand', a, ~0), a),
]

# Explicit sizes on variables and on opcodes, sized conversions, packing.
sized = [
    (('u2u32', ('u2u16', 'a@32')), ('iand', a, 0xffff)),
    (('unpack_64_2x32_split_x', ('pack_64_2x32_split', a, b)), a),
    (('unpack_64_2x32_split_y', ('pack_64_2x32_split', a, b)), b),
    (('extract_u16', 'a@32', 1), ('ushr', a, 16)),
    (('iadd@32', a, a), ('ishl', a, 1)),
    (('ishl', 'a@16', 16), a),  # NIR masks the count: 16 & 15 == 0
]

# Constants-only variables (#), value predicates as assumptions, op predicates with no
# meaning, a condition string, inexact and exact markers.
constants = [
    (('iand', '#a(is_unsigned_multiple_of_4)', 3), 0),
    (('iand', '#a(is_upper_half_zero)', ~0), a),
    (('imul', a, '#b(is_pos_power_of_two)'), ('ishl', a, ('find_lsb', b)), '!options->lower_bitops'),
    (('iadd', ('imul(is_used_once)', a, b), ('imul(is_used_once)', a, c)),
     ('imul', a, ('iadd', b, c))),
    (('~iadd', a, 0), ('!mov', a)),
]

# Booleans: 1-bit variables, True/False, compares and selects, b2i/b2b.
booleans = [
    (('bcsel', 'a@1', True, False), a),
    (('iand', 'a@1', ('inot', a)), False),
    (('b2i32', ('ieq', a, a)), 1),
    (('b2b32', 'a@1'), ('bcsel', a, -1, 0)),
    (('ilt', a, a), False),
    (('bcsel', ('ior', 'a@1', 'b@1'), c, 0), ('bcsel', a, c, ('bcsel', b, c, 0))),
]

# Rules built in a loop and through a helper function, as Mesa's files do.
def shl_by(x, s):
    return ('ishl', x, s)

generated = []
for s in range(1, 4):
    generated += [
        (('imul', 'a@32', 1 << s), shl_by(a, s)),
        (('ushr', shl_by('a@32', s), s), ('iand', a, 0xffffffff >> s)),
    ]

# The AGX pseudo-opcodes with their promises.
agx = [
    (('amul', 'a@32', ('ishl', 'b@32', 2)), ('amul', a, ('imul', b, 4))),
    (('ulea_agx', a, b, 2), ('iadd', a, ('ishl', ('u2u64', b), 2))),
    (('imadshl_agx', a, 1, b, 2), ('iadd', a, ('ishl', b, 2))),
    (('extr_agx', a, b, 8, 0), ('ior', ('ushr', a, 8), ('ishl', b, 24))),
]

sizes_used = [16, 32]  # not a rule list: ignored by the loader


def main():
    raise SystemExit("main() must not be called by the loader")


if __name__ == '__main__':
    main()
