buffer a 4
item FILL 0 @1 5 nodedupe
item NOP
wait
