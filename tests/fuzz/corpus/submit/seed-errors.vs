# errors.vs - items vyred must reject with E_INVAL, changing nothing; vyre-submit
# prints their CQEs and exits 1.
buffer a 16 fill 7
buffer empty 0
buffer junk 16 words 5     # not a DFA table: 5 states need far more than 16 bytes
item 42 0 0                # unknown op
item COPY a @4294967295    # unknown handle
item SUM a empty           # output too short for a result
item DFA_SCAN a a junk     # malformed table (and a would not change)
item NOP a 0               # NOP takes no buffers
item FILL 0 a 1 fence      # this one succeeds
print a
