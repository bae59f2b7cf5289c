a = 'a'
rules = [(('iadd', a, 0), a)]
rules += undefined_name_here
