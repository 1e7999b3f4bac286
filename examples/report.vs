# report.vs - which pattern matched where (docs/design.md 6.8). DFA_REPORT
# writes a record (id, start, end) per match, ordered by end then id, after a
# header (total, kept, overflow); the CQE's result is the total.
# Ids are chosen per pattern; 2/i is caseless, so "sHE" matches it.
dfa t 1:"he" 2/i:"SHE" 3:"hers"
buffer log 24 text "ushers, sHE has hers"
buffer all 160
buffer one 40                             # room for one record: the first, "overflow"
item DFA_REPORT log all t
item DFA_REPORT log one t
print all report
print one report
# The same text as a stream cut into three counted items (cut inside "she",
# "he" and "hers", and inside "sHE"): each match is reported once, by the
# item holding its last byte, with offsets from the start of the stream.
buffer a 8 counted "ush"
buffer b 12 counted "ers, sH"
buffer c 16 counted "E has hers"
buffer st 16                              # the stream's state; zeros: a new stream
buffer ra 112
buffer rb 112
buffer rc 112
item DFA_REPORT_COUNTED a ra t stream=st
item DFA_REPORT_COUNTED b rb t stream=st
item DFA_REPORT_COUNTED c rc t stream=st
print ra report
print rb report
print rc report
