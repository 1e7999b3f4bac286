dfa d ""
buffer x 4 text "ab"
buffer r 4
item DFA_SCAN x r d
print r
