# basic.vs - declare buffers, run items, print what they produced.
#   vyre-submit examples/basic.vs            (against a running vyred)
#   vyre-submit --local examples/basic.vs    (the in-process oracle)
buffer a 32 words 1 2 3 4 5 6 7 8
buffer b 32
buffer total 4
item ADD a b 10            # b[i] = a[i] + 10
item SUM b total fence     # total = sum of b; fence: its CQE comes after the ADD's
print b
print total
