# Rules that hold only under an assumption the prover makes, each with a twin that drops
# the assumption and has a counterexample. Written for agxfuzz's tests, not from Mesa.
a = 'a'
b = 'b'

assumed = [
    # A NIR boolean wider than one bit is 0 or ~0, so b2i32 gives 1 exactly for ~0 = -1.
    (('ineg', ('b2i32', 'a@32')), a),
    # Only the low 8 bits of the sum are used: masking an addend to them changes nothing.
    (('iadd(only_lower_8_bits_used)', ('iand', a, 0xff), b), ('iadd', a, b)),
    # Range analysis in an int slot: a signed compare with zero.
    (('ige', 'a(is_not_negative)', 'b(is_not_positive)'), True),
    (('iabs', 'a(is_not_negative)'), a),
    # Range analysis in a uint slot: gt_zero is only "nonzero" there, which still suffices.
    (('ult', 0, 'a(is_gt_zero)'), True),
    # Constant tests.
    (('bfi', '#a(is_odd)', b, b), b),
    (('umin', '#a(is_ult_32)', 31), ('iand', a, 31)),
    (('ine', ('iand', '#a(is_5lsb_not_zero)', 31), 0), True),
]

unassumed = [
    # A 32-bit value that need not be 0 or ~0 (here made a 1-bit boolean by a compare).
    (('ineg', ('b2i32', ('ine', 'a@32', 0))), a),
    (('iadd', ('iand', a, 0xff), b), ('iadd', a, b)),
    (('ige', a, b), True),
    (('iabs', a), a),
    # In a uint slot is_not_negative says nothing: 0x80000000 is a gt_zero uint constant.
    (('uge', 'a@32(is_not_negative)', 0x80000000), False),
    (('bfi', '#a', b, b), b),
    (('umin', '#a', 31), ('iand', a, 31)),
    (('ine', ('iand', '#a', 31), 0), True),
]
