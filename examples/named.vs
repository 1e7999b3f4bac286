# Named buffers (docs/design.md 5): `named` gives a buffer its name in the
# domain, `open` finds a buffer by name (one another client made, with -d),
# `names` lists the domain's names. Run alone, the domain is private.
buffer counts 16 words 1 2 3 4 named
buffer table 256 device named
buffer sum 4 named
open counts as seen                 # the same buffer, found by its name
item ADD seen seen 10               # counts[i] += 10, through the opened handle
item SUM counts sum fence
open sum as total
print total
print counts
names
