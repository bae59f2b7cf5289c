a = 'a'
rules = [
    (('iadd', a, 0), a)
    (('imul', a, 1) a),
]
