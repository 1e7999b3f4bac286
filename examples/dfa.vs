# dfa.vs - count the bytes of a log after which "error", "warn" or "fail" ends.
dfa alerts error warn fail
buffer log 64 text "warn: disk almost full; error: io; retry failed; errors: 2\n"
buffer hits 4
item DFA_SCAN log hits alerts
print hits
print log text
# Patterns with ids and flags (ID/FLAGS:"..."; i: caseless) and any byte (\xHH):
# "Warn" and "warn" end (caseless), "ERROR" does not; ids matter to DFA_REPORT only.
dfa rules 10:"error" 11/i:"WARN" 12:"\x00\xffMZ"
buffer log2 32 text "Warn ERROR error\x00\xffMZ warn"
buffer hits2 4
item DFA_SCAN log2 hits2 rules
print hits2
