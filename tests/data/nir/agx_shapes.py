# Rules in the shapes of AGX backend fusions, written for agxfuzz's tests (not from Mesa):
# each has a counterexample under NIR's semantics that docs/nir-audit.md explains.
a = 'a'
b = 'b'
c = 'c'
d = 'd'

# An offset (#b + c*#d), both multiples of 4, zero-extended and added to a 64-bit base, as a
# lea with the multiples divided out. Right only while the 32-bit offset stays below 2**31
# (an API bound on buffer sizes that NIR cannot state): ishr of a "negative" b differs.
relaxed_lea = [
    (('iadd', 'a@64', ('u2u64', ('iadd', '#b(is_unsigned_multiple_of_4)',
                                 ('amul', 'c@32', '#d(is_unsigned_multiple_of_4)')))),
     ('ulea_agx', a, ('iadd', ('ishr', b, 2), ('amul', c, ('ishr', d, 2))), 2)),
]

# A shift and a mask as a bitfield extract: NIR leaves ubitfield_extract undefined when
# offset + bits > 32 (or the offset is not below 32), where the shift and mask are defined.
shift_mask = [
    (('iand', ('ushr', 'a@32', b), 0xff), ('ubitfield_extract', a, b, 8)),
]

# A funnel shift as extr_agx: right for a start of 8; at a start of 0 the left shift is by
# 32, which NIR masks to 0, so the search is a | b and not a.
funnel = [
    (('ior', ('ushr', 'a@32', 8), ('ishl', 'b@32', 24)), ('extr_agx', a, b, 8, 0)),
    (('ior', ('ushr', 'a@32', 0), ('ishl', 'b@32', 32)), ('extr_agx', a, b, 0, 0)),
]
