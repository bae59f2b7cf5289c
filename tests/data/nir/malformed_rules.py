# Rules the loader must report one by one, for agxfuzz's tests.
a = 'a'

malformed = [
    (('iadd', a, 0), a),                      # fine
    (('iadd', a), a),                         # wrong number of sources
    (('iadd', a, 0), 'b'),                    # replacement variable not in the search
    (('iadd', 'a@32', ('u2u16', 'a@8')), a),  # a is 32 and 8 bits at once
    (('no_such_opcode', a), a),               # unknown opcode: unsupported, named
]
