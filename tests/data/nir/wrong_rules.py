# Rules with known counterexamples, written for agxfuzz's tests (not from Mesa).
a = 'a'
b = 'b'

wrong = [
    # Off by one: a + 1 is never a.
    (('iadd', a, 1), a),
    # Wraps at the top of the range: a + 1 < a when a is all ones.
    (('ult', ('iadd', a, 1), a), False),
    # Right only at 8 bits: the mask drops the high bits of wider values.
    (('iand', a, 0xff), a),
    # Shifting out bits is not undone by shifting back.
    (('ushr', ('ishl', 'a@32', 4), 4), a),
    # Truncation is not undone by zero-extension.
    (('u2u32', ('u2u16', 'a@32')), a),
    # The amul promise does not survive dropping to imul on the other side.
    (('imul', a, b), ('amul', a, b)),
]
