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
buffer b64 8 counted "Zh=="  # not canonical base64: 'h' leaves pad bits set
buffer digits 8 counted "abc"  # an odd number of hex digits
buffer tiny 4
item BASE64_DECODE b64 b64     # malformed input: nothing changes
item HEX_DECODE digits a
item BYTEMAP a a tiny          # a byte map table shorter than 256 bytes
print b64 counted
print a
