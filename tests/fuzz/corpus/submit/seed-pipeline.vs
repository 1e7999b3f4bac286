# pipeline.vs - a chain of dependent items, a wait in the middle, ops by number.
buffer x 16 words 0x10 0x20 0x30 0x40
buffer y 16
buffer z 16
buffer m 4
item FILL 0 y 3
item MUL x y 3             # y = x * 3 (reads x, writes y: FILL's result is overwritten)
item XOR y z 0xff          # z = y ^ 0xff
wait                       # print the three CQEs so far
item 7 z m                 # op 7 is MAX: m = max of z
item COPY z x id=1000      # CQE user_data 1000 instead of this line's number
item NOP 0 0 nodedupe
print x hex
print m
