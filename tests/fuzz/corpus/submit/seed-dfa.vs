# dfa.vs - count the bytes of a log after which "error", "warn" or "fail" ends.
dfa alerts error warn fail
buffer log 64 text "warn: disk almost full; error: io; retry failed; errors: 2\n"
buffer hits 4
item DFA_SCAN log hits alerts
print hits
print log text
