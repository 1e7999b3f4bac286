buffer h 8 hex 00ff10ab
buffer o 8
item XOR h o 0xffffffff
wait
