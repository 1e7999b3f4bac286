# decode.vs - counted bytes (docs/design.md 6.1): a base64 log line decoded,
# case-folded through a byte map and scanned; a hex string decoded in place.
dfa alerts error fail
buffer lower 256 map "ABCDEFGHIJKLMNOPQRSTUVWXYZ" "abcdefghijklmnopqrstuvwxyz"
buffer log 64 counted "RVJST1I6IGRpc2sgRkFJTEVEOyBFcnJvcnM6IDI7IGZhaWwtb3ZlciBvawo="
buffer plain 48
buffer folded 48
buffer raw_hits 4
buffer hits 4
item BASE64_DECODE log plain             # plain = the 44 decoded bytes, counted
item DFA_SCAN_COUNTED plain raw_hits alerts
item BYTEMAP plain folded lower          # folded = plain in lower case
item DFA_SCAN_COUNTED folded hits alerts
print plain counted
print folded counted
print raw_hits
print hits
buffer greeting 16 counted "48656C6c6f21"
item HEX_DECODE greeting greeting        # in place: "Hello!" over its own digits
print greeting counted
print greeting hex
