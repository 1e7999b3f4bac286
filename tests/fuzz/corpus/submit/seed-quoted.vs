buffer t 16 text "a\x00b\"c\n"
print t hex
